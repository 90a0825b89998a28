"""Every command that writes refuses, before anything is written, to write over what it reads or over a run's own
files (issue 43, "outputs written over inputs"): ``report -o``, ``score --out``, ``train``'s ``output_dir`` and
``new-plugin --dir``, each through the real CLI; links (symbolic and hard) are the file they point at."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import run_cli, write_jsonl

ROWS = [{"prompt": "say 1", "answer": "1", "completion": c} for c in ("1", "2", "<answer>1</answer>", "x")]


def _text(proc: subprocess.CompletedProcess) -> str:
    text = proc.stdout + proc.stderr
    assert "Traceback" not in text, text
    return " ".join(text.split())


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def made(tmp_path: Path) -> Path:
    """``in.jsonl``; ``scores.jsonl`` scored from it, with its record; ``run/``, a run folder holding a record, its
    ``config.yaml``, ``packs.json``, ``metrics.jsonl`` and ``summary.json``."""
    write_jsonl(tmp_path / "in.jsonl", ROWS)
    proc = run_cli("score", str(tmp_path / "in.jsonl"), "-r", "accuracy", "--monitors", "none",
                   "--out", str(tmp_path / "scores.jsonl"))
    assert proc.returncode == 0, proc.stderr
    run = tmp_path / "run"
    shutil.copytree(tmp_path / "scores.jsonl.rollouts", run / "rollouts")
    (run / "config.yaml").write_text(yaml.safe_dump({"model": "builtin:tiny", "rewards": "accuracy",
                                                     "data": str(tmp_path / "in.jsonl"), "output_dir": str(run)}))
    (run / "packs.json").write_text("[]\n")
    (run / "metrics.jsonl").write_text('{"step": 1, "reward": 0.5}\n')
    (run / "summary.json").write_text('{"steps": 1, "alerts": []}\n')
    return tmp_path


def _part(made: Path) -> Path:
    return next((made / "run" / "rollouts").glob("*.parquet"))


# what report -o is pointed at -> (the report's input, the words the refusal names it with)
REPORT_TARGETS = {
    "the scores file it reads": ("scores.jsonl", "scores.jsonl", "is the score output"),
    "a hard link to the scores file": ("scores.jsonl", "hardlink", "is the score output"),
    "the run's config.yaml": ("run", "run/config.yaml", "is the run's config.yaml"),
    "a symlink to the run's config.yaml": ("run", "symlink", "is the run's config.yaml"),
    "the run's metrics.jsonl": ("run", "run/metrics.jsonl", "is the run's metrics.jsonl"),
    "a part of the record": ("run", "PART", "is a part of the rollout record"),
    "another run's summary.json": ("scores.jsonl", "run/summary.json", "is the summary.json of the run"),
    "another score's progress record": ("run", "scores.jsonl.progress", "is the progress record of the score output"),
    "the record folder": ("run", "run/rollouts", "is a folder"),
}


@pytest.mark.parametrize("case", list(REPORT_TARGETS))
def test_report_refuses_to_write_over_what_it_reads_or_a_runs_own_files(made, case):
    source, target, words = REPORT_TARGETS[case]
    (made / "scores.jsonl.progress").write_text('{"rows": 0}')  # (as an interrupted score leaves it)
    if target == "hardlink":
        os.link(made / "scores.jsonl", made / "scores-link.jsonl")
        target = "scores-link.jsonl"
    elif target == "symlink":
        (made / "config-link.yaml").symlink_to(made / "run" / "config.yaml")
        target = "config-link.yaml"
    elif target == "PART":
        target = str(_part(made).relative_to(made))
    before = _snapshot(made)
    proc = run_cli("report", str(made / source), "-o", str(made / target))
    text = _text(proc)
    assert proc.returncode == 2 and f"report -o {made / target}: {words}" in text, text
    assert _snapshot(made) == before  # nothing written over, nothing written at all


def test_report_writes_beside_what_it_reads(made):
    proc = run_cli("report", str(made / "run"), "-o", str(made / "run" / "page.html"))
    assert proc.returncode == 0, proc.stderr
    assert (made / "run" / "page.html").read_text().startswith("<!DOCTYPE html>")


# what score --out is pointed at -> the words the refusal names it with
SCORE_TARGETS = {
    "a hard link to the input": ("in-link.jsonl", "is the input"),
    "a run's config.yaml": ("run/config.yaml", "is the config.yaml of the run"),
    "a run's metrics.jsonl": ("run/metrics.jsonl", "is the metrics.jsonl of the run"),
    "a part of a run's record": ("PART", "is in the rollout record of the run"),
    "a file in a score's record": ("scores.jsonl.rollouts/x.jsonl", "is in the rollout record of the score output"),
    "a score's progress record": ("scores.jsonl.progress", "is the progress record of the score output"),
}


@pytest.mark.parametrize("case", list(SCORE_TARGETS))
def test_score_refuses_to_write_over_its_input_or_a_runs_own_files(made, case):
    target, words = SCORE_TARGETS[case]
    os.link(made / "in.jsonl", made / "in-link.jsonl")
    (made / "scores.jsonl.progress").write_text('{"rows": 0}')
    if target == "PART":
        target = str(_part(made).relative_to(made))
    before = _snapshot(made)
    proc = run_cli("score", str(made / "in.jsonl"), "-r", "accuracy", "--monitors", "none",
                   "--out", str(made / target))
    text = _text(proc)
    assert proc.returncode == 2 and f"--out {made / target}: {words}" in text, text
    assert _snapshot(made) == before


def test_score_writes_over_its_own_earlier_output(made):
    proc = run_cli("score", str(made / "in.jsonl"), "-r", "accuracy", "--monitors", "none",
                   "--out", str(made / "scores.jsonl"))
    assert proc.returncode == 0, proc.stderr  # a score output is started again, as before


@pytest.mark.parametrize("command", ["score", "report"])
def test_an_output_ending_in_a_slash_is_a_folder_not_a_file(made, command):
    target = f"{made / 'new'}/"
    if command == "score":
        proc = run_cli("score", str(made / "in.jsonl"), "-r", "accuracy", "--out", target)
        option = "--out"
    else:
        proc = run_cli("report", str(made / "scores.jsonl"), "-o", target)
        option = "report -o"
    text = _text(proc)
    assert proc.returncode == 2 and f"{option} {target}: names a folder (it ends in '/')" in text, text
    assert not (made / "new").exists()


def _train_config(made: Path, path: Path, **overrides) -> Path:
    config = {"model": "builtin:tiny", "data": str(made / "in.jsonl"), "rewards": "accuracy", "group_size": 2,
              "batch_size": 2, "max_steps": 1, "max_completion_length": 4, "output_dir": str(made / "run"),
              "monitors": [], "audit": "off", **overrides}
    path.write_text(yaml.safe_dump(config))
    return path


def test_train_refuses_to_write_its_records_over_its_own_config(made):
    config = _train_config(made, made / "run" / "config.yaml")
    before = _snapshot(made)
    proc = run_cli("train", str(config), env={"PYTHONWARNINGS": "ignore"}, timeout=600)
    text = _text(proc)
    assert proc.returncode == 2 and (
        f"config key 'output_dir' ('{made / 'run'}'): {made / 'run'} would write its config.yaml over the run "
        f"configuration {config}") in text, text
    assert _snapshot(made) == before


@pytest.mark.parametrize("case", ["the model folder", "data in the record", "a run's record folder"])
def test_train_refuses_an_output_dir_over_what_it_reads_or_another_runs_files(made, case):
    run = made / "run"
    if case == "the model folder":
        overrides, words = {"model": str(run)}, f"{run} is the model the run loads {run}"
    elif case == "data in the record":
        shutil.copy(made / "in.jsonl", run / "rollouts" / "rows.jsonl")
        overrides = {"data": str(run / "rollouts" / "rows.jsonl")}
        words = f"{run} would write its rollouts over the training data {run / 'rollouts' / 'rows.jsonl'}"
    else:
        overrides = {"output_dir": str(run / "rollouts")}
        words = f"{run / 'rollouts'} is the rollout record of the run {run}"
    config = _train_config(made, made / "train.yaml", **overrides)
    before = _snapshot(made)
    proc = run_cli("train", str(config), env={"PYTHONWARNINGS": "ignore"}, timeout=600)
    text = _text(proc)
    assert proc.returncode == 2 and words in text, text
    assert _snapshot(made) == before


def test_new_plugin_refuses_a_folder_in_a_runs_record(made):
    target = made / "run" / "rollouts" / "pack"
    proc = run_cli("new-plugin", "grpo-rewards-x", "--no-input", "--dir", str(target))
    text = _text(proc)
    assert proc.returncode == 2 and f"new-plugin --dir {target}: is in the rollout record of the run" in text, text
    assert not target.exists()
