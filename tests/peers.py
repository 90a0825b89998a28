"""The peers' own packages for the adapter tests, where installing one here would change what other tests use.

verifiers 0.4.0 pins openai 2.x (this environment has 3.x, which
``transformers serve`` in the judge tests runs on); eval-protocol pins
antlr4 4.9, which breaks the ``math`` reward's LaTeX parser.  Such a peer is
installed by pip, from the registry, into a venv of its own layered over
this one: the venv's site-packages come first and this environment's
(grpo-host, torch, ...) after, so the peer gets the versions it pins and this
environment stays as it is.  The venv is built once per machine (under
``~/.cache/grpo-host-tests``, keyed by this interpreter and the
requirement), behind a file lock so that xdist workers build it once; a
machine where pip cannot install it skips the test, saying why.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "grpo-host-tests" / "peers"


def peer_python(requirement: str) -> Path:
    """An interpreter that imports ``requirement`` (with what it pins) and everything this environment has."""
    key = hashlib.sha256(f"{sys.prefix}\n{requirement}".encode()).hexdigest()[:12]
    venv = ROOT / f"{requirement.replace('=', '').replace(' ', '')}-{key}"
    python = venv / "bin" / "python"
    ROOT.mkdir(parents=True, exist_ok=True)
    with open(ROOT / f"{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (venv / "ready").exists():
            subprocess.run([sys.executable, "-m", "venv", "--clear", "--without-pip", str(venv)], check=True)
            site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  capture_output=True, text=True, check=True).stdout.strip()
            parent = sysconfig.get_paths()["purelib"]  # addsitedir: its .pth files (the editable grpo-host) count
            (Path(site) / "_parent.pth").write_text(f"import site; site.addsitedir({parent!r})\n")
            # pip (this environment's, seen through the .pth) installs into the venv; it leaves the packages it
            # replaces in this environment alone ("outside environment")
            proc = subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", requirement],
                                  capture_output=True, text=True, timeout=900)
            if proc.returncode != 0:
                pytest.skip(f"{requirement} could not be installed from the registry here: {proc.stderr[-500:]}")
            (venv / "ready").write_text(requirement)
    return python


def run_in(python: Path, script: Path, *args: str, timeout: float = 300) -> Any:
    """Run ``script`` under ``python`` and return the JSON its last line of output holds."""
    proc = subprocess.run([python, str(script), *args], capture_output=True, text=True, timeout=timeout,
                          env={**{k: v for k, v in os.environ.items() if not k.startswith("GRPO_HOST_")},
                               "LITELLM_LOCAL_MODEL_COST_MAP": "True"})  # eval-protocol imports litellm: no fetch
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])
