"""Monitors during training, on both hosts: a stop alert checkpoints and ends the run; resume continues it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from train_helpers import GRPO_HOST, QUICK, ROOT, read_metrics

EXAMPLE = ROOT / "examples" / "letters.yaml"
PACK = Path(__file__).with_name("hackable_rewards.py")
STOP = "monitors=[{name: zero_advantage, params: {window: 1}, action: stop}, {name: echo, action: log}]"


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["trl", "mlx"])
def test_a_stop_alert_saves_a_checkpoint_ends_the_run_and_resume_continues(env, tmp_path, backend):
    out = tmp_path / "hacked"
    args = [str(EXAMPLE), "--backend", backend, *QUICK, "--set", f"plugins=[{PACK}]", "--set", "rewards=one_char:1",
            "--set", "max_steps=4", "--set", "save_every=100", "--set", f"output_dir={out}"]
    stopped = subprocess.run([GRPO_HOST, "train", *args, "--set", STOP], capture_output=True, text=True, env=env,
                             cwd=ROOT, timeout=600)
    assert stopped.returncode == 3, stopped.stdout + stopped.stderr
    assert "critical: monitor zero_advantage at batch 0: no learning signal: 100% of groups" in stopped.stderr
    assert "stopped: monitor zero_advantage stopped the run at step 1" in stopped.stderr
    assert (out / "checkpoint-1" / "trainer_state.json").is_file()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["steps"] == 1 and summary["stopped_by"]["monitor"] == "zero_advantage"
    assert [a["monitor"] for a in summary["alerts"]] == ["zero_advantage"]
    record = next(r for r in read_metrics(out) if "monitors/zero_advantage/share" in r)
    assert record["monitors/zero_advantage/share"] == 1.0 and "monitors/echo/share" in record

    resumed = subprocess.run([GRPO_HOST, "train", *args, "--set", "monitors=[]", "--set", "resume=true"],
                             capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "resuming from" in resumed.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert summary["steps"] == 4 and summary["resumed_from"] == 1 and summary["stopped_by"] is None
