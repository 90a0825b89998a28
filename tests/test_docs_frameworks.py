"""docs/frameworks.md says what runs: each of its Python blocks is run as a script, by the interpreter that holds
its framework (verifiers and eval-protocol in a venv of their own, ``tests/peers.py``), and must end without an
error (each block asserts what it shows).  The TOML block plugs the function the page defines."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from peers import peer_python

PAGE = Path(__file__).parent.parent / "docs" / "frameworks.md"
PEERS = {"verifiers": "verifiers==0.4.0", "eval_protocol": "eval-protocol==0.3.33"}
"""A block importing one of these runs in that peer's venv; any other block here."""


def blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```$", PAGE.read_text(), flags=re.S | re.M)


def interpreter(block: str) -> Path:
    for module, requirement in PEERS.items():
        if re.search(rf"^(from|import) (grpo_host\.integrations\.)?{module}\b", block, flags=re.M):
            return peer_python(requirement)
    return Path(sys.executable)


@pytest.mark.parametrize("block", blocks("python"), ids=lambda b: b.splitlines()[-1][:40])
def test_each_python_block_runs(block, tmp_path):
    script = tmp_path / "example.py"
    script.write_text(block)
    proc = subprocess.run([interpreter(block), str(script)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, env={"PATH": "/usr/bin:/bin", "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
    assert proc.returncode == 0, f"{PAGE.name}: this block fails:\n{block}\n{proc.stderr[-3000:]}"


def test_the_toml_plugs_the_function_the_page_defines():
    (toml,) = blocks("toml")
    plugged = tomllib.loads(toml)["env"]["taskset"]["task"]["rewards"]["grpo_host"]["fn"]
    module, name = plugged.split(":")
    assert any(b.startswith(f"# {module}.py\n") and f"\n{name} = reward_function(" in b for b in blocks("python"))
