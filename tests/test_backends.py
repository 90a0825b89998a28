"""One config, both backends: the same reward ensemble and dataset train on TRL and on MLX.

A config written for one backend must run on the other with only
``--backend`` changed, and both must report the same rewards under the
same metric names, so runs can be compared side by side.
"""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import pytest
from conftest import GRPO_HOST, clean_env
from train_helpers import read_metrics

pytestmark = pytest.mark.slow  # left out of the fast lane (-m "not slow"): two training runs

pytest.importorskip("trl", reason="the trl extra is not installed")
pytest.importorskip("mlx_lm_lora", reason="the mlx extra is not installed")

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "letters.yaml"
SMALL = ["--set", "max_steps=2", "--set", "max_completion_length=6", "--set", "group_size=4", "--set", "batch_size=2",
         "--set", "rewards=letter_share:1, lowercase_share:0.5, r1_soft_format:0"]  # a weight-0 member is logged too
PER_REWARD = ("mean", "std", "coverage", "errors", "timeouts", "seconds")


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("backends")
    env = clean_env(GRPO_HOST_CACHE=str(root / "cache"), PYTHONWARNINGS="ignore")
    out = {}
    for backend in ("trl", "mlx"):
        out[backend] = root / backend
        proc = subprocess.run([GRPO_HOST, "train", str(EXAMPLE), "--backend", backend, *SMALL,
                               "--set", f"output_dir={out[backend]}"],
                              capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
        assert proc.returncode == 0, f"{backend}:\n{proc.stdout}\n{proc.stderr}"
    return out


def _reward_keys(records: list[dict]) -> set[str]:
    return {k for r in records for k in r if k.startswith("rewards/") or k in ("reward", "reward_std", "unscored")}


def test_both_backends_complete_with_the_same_reward_names(runs):
    summaries = {b: json.loads((path / "summary.json").read_text()) for b, path in runs.items()}
    assert {b: s["backend"] for b, s in summaries.items()} == {"trl": "trl", "mlx": "mlx"}
    assert summaries["trl"]["steps"] == summaries["mlx"]["steps"] == 2
    names = {"reward", "letter_share", "lowercase_share", "r1_soft_format"}
    assert set(summaries["trl"]["rewards"]) == set(summaries["mlx"]["rewards"]) == names


def test_both_backends_log_the_same_per_reward_metrics(runs):
    records = {b: [r for r in read_metrics(path) if "reward" in r] for b, path in runs.items()}
    assert [r["step"] for r in records["trl"]] == [r["step"] for r in records["mlx"]] == [1, 2]
    expected = {f"rewards/{n}/{k}" for n in ("letter_share", "lowercase_share", "r1_soft_format") for k in PER_REWARD}
    for backend, recs in records.items():
        assert expected <= _reward_keys(recs), (backend, expected - _reward_keys(recs))
        for r in recs:
            for key in expected | {"reward"}:
                assert isinstance(r[key], float) and math.isfinite(r[key]), (backend, key, r)
            assert r["rewards/letter_share/coverage"] == 1.0 and r["unscored"] == 0.0
    assert _reward_keys(records["trl"]) == _reward_keys(records["mlx"])
