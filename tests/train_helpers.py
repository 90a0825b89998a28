"""What both training hosts' tests share: a run whose rewards check per-row metadata, and a run killed and resumed."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import yaml
from conftest import GRPO_HOST, write_jsonl

ROOT = Path(__file__).resolve().parents[1]
PACK = Path(__file__).with_name("meta_rewards.py")

def read_metrics(output_dir: str | Path) -> list[dict]:
    """The records of a run's ``metrics.jsonl``."""
    path = Path(output_dir) / "metrics.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def tenths(records: list[dict], key: str = "reward") -> tuple[float, float]:
    """Mean of ``key`` over the first and the last tenth of the logged training steps."""
    values = [r[key] for r in records if isinstance(r.get(key), int | float)]
    assert values, f"no {key!r} in the metrics"
    n = max(1, len(values) // 10)
    return sum(values[:n]) / n, sum(values[-n:]) / n


QUICK = ["--set", "max_completion_length=6", "--set", "group_size=4", "--set", "batch_size=2"]
"""Overrides that make an example run take seconds."""

ROWS = [  # metadata dicts with different keys (Arrow would merge them), and a column whose type varies
    {"prompt": "a", "meta": {"a": 1}, "mixed": 1},
    {"prompt": "b", "meta": {"b": [1, 2], "c": None}, "mixed": "one"},
    {"prompt": "c", "meta": {"nested": {"d": 1.5}, "a": "x"}, "mixed": [1]},
    {"prompt": "d", "meta": {"e": True}},
]

EXPECTED_SEEN = sorted([json.dumps({"meta": r["meta"], "mixed": r.get("mixed")}, sort_keys=True) for r in ROWS] * 2)
"""What meta_intact records for 4 rows x 2 completions, sorted: compare with the sorted seen lines."""


def meta_config(tmp_path: Path, **overrides) -> Path:
    """Write the rows and a run config into ``tmp_path``; return the config's path."""
    write_jsonl(tmp_path / "rows.jsonl", [{**row, "expect": json.dumps(row["meta"])} for row in ROWS])
    config = {"model": "builtin:tiny", "data": "rows.jsonl", "plugins": [str(PACK)], "rewards": "meta_intact",
              "group_size": 2, "batch_size": 4, "max_steps": 1, "max_completion_length": 4, "output_dir": "out",
              "audit": "off",  # meta_intact records every call it gets: the audit before training would call it too
              **overrides}
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(config))
    return tmp_path / "run.yaml"


def kill_when(cmd: list[str], ready: Callable[[], bool], what: str, **popen) -> None:
    """Start ``cmd`` and SIGKILL it as soon as ``ready()`` says so (``what``: the awaited state, for the message
    if the command ends first).  The deadline guards against a hang; it measures nothing."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **popen)
    try:
        deadline = time.monotonic() + 300
        while not ready():
            assert proc.poll() is None and time.monotonic() < deadline, f"no {what} before the command ended"
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL


def kill_after_checkpoint(cmd: list[str], checkpoint: Path, **popen) -> None:
    """Start a training run and SIGKILL it as soon as ``checkpoint`` is complete on disk."""
    kill_when(cmd, (checkpoint / "trainer_state.json").exists, "checkpoint", **popen)


def kill_and_resume(env: dict[str, str], args: list[str], out: Path, steps: int) -> dict:
    """``grpo-host train ARGS`` killed once ``checkpoint-2`` is on disk, then resumed: it must end at ``steps``.

    Returns the resumed run's summary.
    """
    kill_after_checkpoint([GRPO_HOST, "train", *args], out / "checkpoint-2", env=env, cwd=ROOT)
    assert not (out / "summary.json").exists()  # it really was cut short

    again = subprocess.run([GRPO_HOST, "train", *args, "--set", "resume=true"], capture_output=True, text=True,
                           env=env, cwd=ROOT, timeout=300)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "resuming from" in again.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert summary["steps"] == steps and summary["resumed_from"] >= 2
    state = json.loads((out / f"checkpoint-{steps}" / "trainer_state.json").read_text())
    assert state["global_step"] == steps
    records = [r["step"] for r in read_metrics(out) if "reward" in r]
    # the killed run's records after its checkpoint were dropped, none twice
    assert records == list(range(1, steps + 1))
    return summary
