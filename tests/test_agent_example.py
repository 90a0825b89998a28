"""examples/agent_python.yaml does what its comments say: trains on the TRL host and on the MLX host.

Each run is the example itself, shortened with ``--set`` (one step, small
groups): ``builtin:tiny-tools`` built locally, the built-in ``python``
environment wired into TRL's ``environment_factory`` or the MLX agent loop, the rows' ``tools``
checked by the data check, the rewards and the ``tool_use`` figures logged.
The untrained model rarely calls the tool, so no call is asserted here
(tests/test_train_agents.py warms a model up to call one).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import GRPO_HOST
from train_helpers import read_metrics

from reward_plugins.code.sandbox import isolation

ROOT = Path(__file__).parent.parent
CONFIG = "examples/agent_python.yaml"


def train(*args: str, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run([GRPO_HOST, "train", CONFIG, *args], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=timeout)


@pytest.mark.slow
@pytest.mark.skipif(not isolation().isolated,
                    reason=f"no bubblewrap sandbox here ({isolation().reason}): the python environment refuses to run")
@pytest.mark.parametrize("backend", ["trl", "mlx"])
def test_the_agent_example_trains_on_both_hosts(env, tmp_path, backend):
    if backend == "mlx":
        pytest.importorskip("mlx_lm_lora", reason="the mlx extra is not installed")
    out = tmp_path / "out"
    proc = train("--backend", backend, "--set", "max_steps=1", "--set", "group_size=2", "--set", "batch_size=2",
                 "--set", "max_completion_length=32", "--set", f"output_dir={out}",
                 env={**env, "TRL_EXPERIMENTAL_SILENCE": "1"}, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["backend"] == backend and summary["steps"] == 1
    assert {"math", "tool_call_format"} <= set(summary["rewards"])
    [record] = [r for r in read_metrics(out) if "reward" in r]
    assert "tools/call_frequency" in record  # the rollouts ran with the environment's tools
