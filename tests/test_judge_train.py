"""A judge in two-step training runs on both hosts: the letters example with the judge added to its rewards.

The judge server is the tests' :class:`test_judge.ScriptedJudge`, listening
on 127.0.0.1 in this process; the run is a real ``grpo-host train``
subprocess whose ensemble awaits the judge beside the example's synchronous
rewards.  The tiny model's completions script nothing, so the judge gives
each its default 2/10, which makes the logged mean checkable.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_judge import ScriptedJudge
from train_helpers import QUICK, read_metrics

ROOT = Path(__file__).resolve().parents[1]
GRPO_HOST = str(Path(sys.executable).with_name("grpo-host"))


@pytest.fixture
def server():
    s = ScriptedJudge().start()
    yield s
    s.stop()


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["trl", "mlx"])
def test_two_training_steps_with_a_judge(env, server, tmp_path, backend):
    out = tmp_path / "run"
    rewards = ('[{name: letter_share, weight: 1}, {name: judge, weight: 0.5, params: '
               f'{{base_url: "{server.base_url}", model: m, max_tokens: 64}}}}]')
    proc = subprocess.run(
        [GRPO_HOST, "train", "examples/letters.yaml", "--backend", backend, "--set", "max_steps=2", *QUICK,
         "--set", f"rewards={rewards}", "--set", f"output_dir={out}",
         "--set", "audit=off"],  # every request the server gets is counted below: the audit's would be too
        check=False, capture_output=True, text=True, env={**env, "GRPO_HOST_CACHE": str(tmp_path / "cache")}, cwd=ROOT,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    records = [r for r in read_metrics(out) if "rewards/judge/mean" in r]
    assert [r["step"] for r in records] == [1, 2]
    for r in records:
        assert r["rewards/judge/mean"] == pytest.approx(0.2) and r["rewards/judge/coverage"] == 1.0
        assert r["rewards/judge/failures"] == 0 and r["rewards/judge/unparseable"] == 0
    completions = 2 * 2 * 4  # steps x prompts per step x group size
    calls = sum(r["rewards/judge/calls"] + r["rewards/judge/cache_hits"] for r in records)
    assert calls == completions and len(server.requests) == sum(r["rewards/judge/calls"] for r in records)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["counts"]["judge"]["tokens"] == 30 * len(server.requests)
