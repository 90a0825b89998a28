"""Shared fixtures: the CLI in a subprocess, and real test packs installed with pip.

The test packs under ``tests/packs/`` are real distributions with real
``grpo_host`` entry points.  Each is installed with ``pip install --target``
into a directory of its own, so a test chooses which packs the host sees by
putting those directories on ``PYTHONPATH`` (subprocesses) or ``sys.path``
(in-process), and the broken ones never leak into other tests.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
PACKS = ("good", "broken", "dup", "typo", "raising", "asyncpack")
BIN = Path(sys.executable).parent
GRPO_HOST = str(BIN / "grpo-host")
CLI_ENV: dict[str, str] = {}  # what every CLI run gets: the session's cache folder, never the user's


def clean_env(*prefixes: str, **extra: str) -> dict[str, str]:
    """This process's environment without the ``GRPO_HOST_*`` settings (and ``prefixes``), plus ``extra``:
    what a subprocess under test starts from, so the developer's own settings never leak into a test."""
    drop = ("GRPO_HOST_", *prefixes)
    return {**{k: v for k, v in os.environ.items() if not k.startswith(drop)}, **extra}


@pytest.fixture(scope="session", autouse=True)
def cli_cache(tmp_path_factory) -> Path:
    """One grpo-host cache folder for the session's CLI runs (the reward catalog lands there)."""
    cache = tmp_path_factory.mktemp("cli-cache")
    CLI_ENV["GRPO_HOST_CACHE"] = str(cache)
    return cache


def run_cli(*args: str, env: dict[str, str] | None = None, pythonpath: list[Path] = (), timeout: float = 120,
            input: str | None = None) -> subprocess.CompletedProcess:
    """Run ``grpo-host ARGS`` the way a user does, with only the chosen packs on the path."""
    full_env = clean_env(**{"PYTHONPATH": os.pathsep.join(str(p) for p in pythonpath), "COLUMNS": "200", **CLI_ENV,
                            **(env or {})})
    return subprocess.run([GRPO_HOST, *args], capture_output=True, text=True, env=full_env, timeout=timeout,
                          input=input)


def cli_json(*args: str, **kw):
    proc = run_cli(*args, "--json", **kw)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="session")
def packs(tmp_path_factory) -> dict[str, Path]:
    """Install every test pack with pip, each into its own target directory."""
    root = tmp_path_factory.mktemp("packs")
    dirs = {}
    for name in PACKS:
        target = root / name
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
             "--target", str(target), str(HERE / "packs" / name)],
            check=True, capture_output=True, timeout=300,
        )
        dirs[name] = target
    return dirs


@pytest.fixture(scope="session")
def env(tmp_path_factory) -> dict[str, str]:
    """The environment for training runs in subprocesses: no inherited GRPO_HOST_* settings, one tiny-model cache."""
    cache = tmp_path_factory.mktemp("tiny-cache")
    return clean_env(GRPO_HOST_CACHE=str(cache), COLUMNS="200", PYTHONWARNINGS="ignore")


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path
