"""Faults and hostile input across the commands, run as a user runs them: exit code, a message naming the thing,
nothing already written lost, and never a traceback.

``test_no_traceback_on_bad_input`` is the table: every kind of bad input a
command can get, each asserted to end in one message (exit 1 or 2) naming
what was wrong.  The other tests follow one class each through to what must
not be lost: an output that is the input, a score run killed at a random
point and continued, a full disk, rows the scorer cannot read, a finished or
torn training run.
"""

from __future__ import annotations

import json
import os
import random
import re
import resource
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from conftest import CLI_ENV, GRPO_HOST, clean_env, run_cli, write_jsonl

from grpo_host.data import read_rows

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "r1_completions.jsonl"


def no_traceback(proc: subprocess.CompletedProcess) -> str:
    """stdout and stderr together, after asserting that no traceback reached them."""
    text = proc.stdout + proc.stderr
    assert "Traceback" not in text, text
    return text


# ---------------------------------------------------------------------------------------------- the table

def _train_config(tmp: Path, **overrides) -> Path:
    write_jsonl(tmp / "rows.jsonl", [{"prompt": "a", "answer": "1"}, {"prompt": "b", "answer": "2"}])
    config = {"model": "builtin:tiny", "data": str(tmp / "rows.jsonl"), "rewards": "accuracy", "group_size": 2,
              "batch_size": 2, "max_steps": 1, "max_completion_length": 4, "output_dir": str(tmp / "run"),
              "monitors": [], **overrides}
    (tmp / "run.yaml").write_text(yaml.safe_dump(config))
    return tmp / "run.yaml"


def _setup(kind: str, tmp: Path) -> list[str]:
    """The command line for one bad input, with whatever files it needs made in ``tmp``."""
    rows = tmp / "in.jsonl"
    rows.write_bytes(EXAMPLE.read_bytes())
    score = ["score", str(rows), "--rewards", "accuracy", "--monitors", "none"]
    if kind == "hard link":
        os.link(rows, tmp / "link.jsonl")
        return [*score, "--out", str(tmp / "link.jsonl")]
    if kind == "symlink":
        (tmp / "sym.jsonl").symlink_to(rows)
        return [*score, "--out", str(tmp / "sym.jsonl")]
    if kind == "csv quote":
        (tmp / "q.csv").write_text('prompt,completion,answer\n"p,<answer>1</answer>,1\n' + "p,x,1\n" * 8)
        return ["score", str(tmp / "q.csv"), "--rewards", "accuracy"]
    if kind == "csv quote, data check":
        (tmp / "q.csv").write_text('prompt,answer\np,1\np,"1\np,2\n')
        return ["data", "check", str(tmp / "q.csv"), "--rewards", "accuracy"]
    if kind == "binary config":
        (tmp / "run.yaml").write_bytes(b"\x00\x9f\xff\xfe" * 64)
        return ["train", str(tmp / "run.yaml")]
    if kind == "syntax error plugin":
        (tmp / "broken_syntax.py").write_text("def reward(:\n")
        return ["train", str(_train_config(tmp, plugins=[str(tmp / "broken_syntax.py")]))]
    if kind == "raising plugin":
        (tmp / "raises_on_import.py").write_text("raise RuntimeError('the pack is broken')\n")
        return ["train", str(_train_config(tmp, plugins=[str(tmp / "raises_on_import.py")]))]
    if kind == "output_dir file":
        (tmp / "taken").write_text("x")
        return ["train", str(_train_config(tmp, output_dir=str(tmp / "taken")))]
    if kind == "output_dir under a file":
        (tmp / "taken").write_text("x")
        return ["train", str(_train_config(tmp, output_dir=str(tmp / "taken" / "run")))]
    if kind.startswith("train "):  # ("~": a space inside one argument)
        args = [arg.replace("~", " ").replace("TMP", str(tmp)) for arg in kind.removeprefix("train ").split(" ")]
        return ["train", str(_train_config(tmp)), *args]
    return [part.replace("IN", str(rows)).replace("TMP", str(tmp)) for part in kind.split(" ")]


TABLE = [  # (bad input, expected exit code, text the message must hold)
    ("score IN --rewards accuracy --out IN", 2, "is the input"),
    ("hard link", 2, "through a link"),
    ("symlink", 2, "is the input"),
    ("score IN --rewards accuracy --out TMP", 2, "is a folder"),
    ("score IN --rewards accuracy --out TMP/nowhere/out.jsonl", 2, "does not exist"),
    ("score IN --rewards accuracy --out /dev/full", 2, "No space left on device"),
    ("score IN --rewards accuracy --resume", 2, "name that file with --out"),
    ("score IN --rewards accuracy --out TMP/new.jsonl --resume", 2, "no interrupted run"),
    ("score IN --rewards math(tolerance=1e-3,tolerance=1e-4)", 2, "'tolerance' of 'math' is given twice"),
    ("score IN --rewards math:1e308,accuracy:1e308", 2, "weights add up past the largest float"),
    ("csv quote", 2, "row 1 (from line 2): a quoted cell opens there"),
    ("csv quote, data check", 2, "row 2 (from line 3)"),
    ("binary config", 2, "run.yaml: not a text file"),
    ("train --set max_steps=" + "9" * 5000, 2, "--set max_steps: the value (5000 characters)"),
    ("train --set learning_rate=.inf", 2, "'learning_rate': Input should be a finite number"),
    ("train --set beta=.inf", 2, "'beta': Input should be a finite number"),
    ("train --set temperature=.inf", 2, "'temperature': Input should be a finite number"),
    ("train --set max_steps=true", 2, "'max_steps': expected a number, got the boolean true"),
    ("train --set trl={max_grad_norm:~.inf}", 2, "trl.max_grad_norm is inf"),
    ("train --set lora={r:~1,~r:~2}", 2, "key 'r' appears twice in one mapping"),
    ("syntax error plugin", 2, "broken_syntax.py line 1"),
    ("raising plugin", 2, "raised RuntimeError: the pack is broken"),
    ("train --set model=./nosuch-dir/", 2, "no such folder './nosuch-dir/'"),
    ("train --set model=TMP", 2, "holds no config.json"),
    ("train --set model=builtin:huge", 2, "unknown built-in model 'builtin:huge'"),
    ("output_dir file", 2, "is a file; name a folder"),
    ("output_dir under a file", 2, "which is a file"),
    ("new-plugin " + "a" * 300 + " --no-input --dir TMP/pack", 2, "300 characters is too long"),
]


@pytest.mark.slow  # one CLI run per case
@pytest.mark.parametrize(("kind", "code", "message"), TABLE, ids=[t[0][:48] for t in TABLE])
def test_no_traceback_on_bad_input(tmp_path, kind, code, message):
    proc = run_cli(*_setup(kind, tmp_path), env={"HF_HUB_OFFLINE": "1"})
    text = no_traceback(proc)
    assert proc.returncode == code, text
    assert message in " ".join(text.split()), text


@pytest.mark.slow
def test_an_unknown_hub_id_fails_fast_offline_and_unreachable(tmp_path):
    config = str(_train_config(tmp_path, model="nobody-grpo-host/no-such-model"))
    offline = run_cli("train", config, env={"HF_HUB_OFFLINE": "1"})
    assert offline.returncode == 2 and "HF_HUB_OFFLINE is set" in no_traceback(offline)
    unreachable = run_cli("train", config, env={"HF_ENDPOINT": "http://127.0.0.1:9", "HF_HUB_OFFLINE": ""})
    assert unreachable.returncode == 2 and "the hub cannot be reached (127.0.0.1:9" in no_traceback(unreachable)
    assert not (tmp_path / "run").exists()  # refused before anything was written


# ------------------------------------------------------------------------------------ score: data kept

def test_an_output_that_is_the_input_leaves_the_input_whole(tmp_path):
    rows = tmp_path / "self.jsonl"
    rows.write_bytes(EXAMPLE.read_bytes())
    (tmp_path / "alias.jsonl").symlink_to(rows)
    for out in (rows, tmp_path / "alias.jsonl"):
        proc = run_cli("score", str(rows), "--rewards", "accuracy", "--out", str(out))
        assert proc.returncode == 2 and f"--out {out}: is the input" in no_traceback(proc)
        assert rows.read_bytes() == EXAMPLE.read_bytes()


def _score_rows(n: int) -> list[dict]:
    return [{"prompt": f"p{i % 3}", "completion": "x" * (i % 7), "answer": str(i)} for i in range(n)]


def _scores(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _lines_in(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def _batches_kept(progress: Path) -> int:
    """The batches a ``score --out`` progress file counts as done (0 before it is first written)."""
    try:
        return json.loads(progress.read_text())["batches"]
    except (FileNotFoundError, json.JSONDecodeError):
        return 0


@pytest.mark.slow  # three runs of a reward that awaits 0.5 s per batch
def test_score_killed_at_a_random_point_continues_to_the_uninterrupted_file(tmp_path, packs):
    data = write_jsonl(tmp_path / "rows.jsonl", _score_rows(16))
    args = ["score", str(data), "--rewards", "awaited_length, accuracy:2", "--batch-size", "2", "--monitors", "none"]
    whole = run_cli(*args, "--out", str(tmp_path / "whole.jsonl"), pythonpath=[packs["asyncpack"]])
    assert whole.returncode == 0, whole.stderr
    out = tmp_path / "out.jsonl"
    env = clean_env(PYTHONPATH=str(packs["asyncpack"]), **CLI_ENV)
    rng = random.Random()
    for sig, resume, last in ((signal.SIGTERM, [], 4), (signal.SIGKILL, ["--resume"], 7)):
        # 8 batches that each await 0.5 s: a signal sent once the chosen batch is on disk lands mid-run
        after = 2 * rng.randint(_lines_in(out) // 2 + 1, last)
        proc = subprocess.Popen([GRPO_HOST, *args, "--out", str(out), *resume], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        while _lines_in(out) < after and proc.poll() is None:
            time.sleep(0.01)
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=60)
        assert proc.returncode == (130 if sig == signal.SIGTERM else -signal.SIGKILL), stderr
        assert "Traceback" not in stderr
        if sig == signal.SIGTERM:
            assert "--resume continues it" in stderr
        assert out.read_bytes().endswith(b"\n") and 0 < len(_scores(out)) < 16  # whole lines only, none lost
    rerun = run_cli(*args, "--out", str(out), pythonpath=[packs["asyncpack"]])
    assert rerun.returncode == 2 and "add --resume to continue it" in no_traceback(rerun)  # never truncated
    done = run_cli(*args, "--out", str(out), "--resume", pythonpath=[packs["asyncpack"]])
    assert done.returncode == 0, done.stderr
    assert out.read_text() == (tmp_path / "whole.jsonl").read_text()  # row for row, byte for byte
    assert not (tmp_path / "out.jsonl.progress").exists()
    again = run_cli(*args, "--out", str(out), "--resume", pythonpath=[packs["asyncpack"]])
    assert again.returncode == 2 and "no interrupted run" in no_traceback(again)


def test_resume_refuses_an_output_scored_from_other_input(tmp_path):
    data = write_jsonl(tmp_path / "rows.jsonl", _score_rows(10))
    out = tmp_path / "out.jsonl"
    first = run_limited(300, "score", str(data), "--rewards", "accuracy", "--out", str(out), "--batch-size", "2",
                        "--record", "none")
    assert first.returncode == 2, first.stderr  # stopped by the size limit after two whole batches
    kept = out.read_bytes()
    assert len(_scores(out)) == 4
    write_jsonl(data, [{**row, "answer": "changed"} for row in _score_rows(10)])
    proc = run_cli("score", str(data), "--rewards", "accuracy", "--out", str(out), "--resume")
    assert proc.returncode == 2 and "were scored from other input" in no_traceback(proc)
    assert out.read_bytes() == kept


def test_resume_refuses_other_rewards_or_turn_rule_and_continues_under_the_same(tmp_path):
    """The scores a continued output already holds were made by its ``--rewards`` and ``--turn-reward``: a resume
    under others would mix two scorings in one file, so it is refused, naming both, and nothing is written."""
    data = write_jsonl(tmp_path / "rows.jsonl", _score_rows(10))
    out = tmp_path / "out.jsonl"
    first = run_limited(300, "score", str(data), "--rewards", "accuracy", "--turn-reward", "sum", "--out", str(out),
                        "--batch-size", "2", "--record", "none")
    assert first.returncode == 2, first.stderr
    kept = out.read_bytes()
    for other in (["--rewards", "accuracy:2", "--turn-reward", "sum"], ["--rewards", "accuracy"]):
        proc = run_cli("score", str(data), *other, "--out", str(out), "--resume")
        assert proc.returncode == 2 and "was scored with --rewards 'accuracy' --turn-reward 'sum'" in no_traceback(
            proc), proc.stderr
        assert out.read_bytes() == kept
    same = run_cli("score", str(data), "--rewards", "accuracy", "--turn-reward", "sum", "--out", str(out), "--resume",
                   "--record", "none")
    assert same.returncode == 0, same.stderr
    assert len(_scores(out)) == 10


def run_limited(size: int, *args: str) -> subprocess.CompletedProcess:
    """``grpo-host ARGS`` with files capped at ``size`` bytes (RLIMIT_FSIZE): past it a write fails with EFBIG,
    as on a full disk (Python ignores SIGXFSZ, so the write returns the error instead of a signal ending it)."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    return subprocess.run([GRPO_HOST, *args], capture_output=True, text=True, timeout=120, preexec_fn=limit,
                          env=clean_env(COLUMNS="200", **CLI_ENV))


@pytest.mark.slow  # four CLI runs
def test_a_full_disk_leaves_whole_lines_and_the_run_continues(tmp_path):
    data = write_jsonl(tmp_path / "rows.jsonl", _score_rows(40))
    out = tmp_path / "out.jsonl"
    recorded = run_limited(1000, "score", str(data), "--rewards", "accuracy", "--out", str(tmp_path / "rec.jsonl"))
    assert recorded.returncode == 2 and "the rollout record" in no_traceback(recorded)  # its Parquet parts too
    args = ["score", str(data), "--rewards", "accuracy", "--out", str(out), "--batch-size", "3", "--record", "none"]
    proc = run_limited(1000, *args)
    text = no_traceback(proc)
    assert proc.returncode == 2 and f"--out {out}: writing failed (File too large)" in " ".join(text.split())
    kept = out.read_bytes()
    assert kept.endswith(b"\n") and len(kept) <= 1000  # cut back to the last whole line: no torn row
    lines = _scores(out)
    assert lines and [line["row"] for line in lines] == [f"line {i}" for i in range(1, len(lines) + 1)]
    done = run_cli(*args, "--resume")
    assert done.returncode == 0, done.stderr
    whole = run_cli("score", str(data), "--rewards", "accuracy", "--out", str(tmp_path / "whole.jsonl"))
    assert whole.returncode == 0 and out.read_text() == (tmp_path / "whole.jsonl").read_text()


def test_completions_that_are_not_text_are_bad_rows_and_the_rest_is_scored(tmp_path):
    good = {"prompt": "p", "completion": "<answer>1</answer>", "answer": "1"}
    data = write_jsonl(tmp_path / "rows.jsonl", [
        good, {**good, "completion": 42}, {**good, "completion": True}, {**good, "completion": {"role": "assistant"}},
        {**good, "completion": [{"role": "assistant", "content": 5}]}, {**good, "completion": [{"content": "x"}]},
        good])
    proc = run_cli("score", str(data), "--rewards", "accuracy", "--out", str(tmp_path / "out.jsonl"), "--json")
    text = no_traceback(proc)
    assert proc.returncode == 1
    assert "line 2: 'completion' must be text or a list of chat messages, got int" in text
    assert "line 4: 'completion' must be text or a list of chat messages, got dict" in text
    assert "line 5: 'completion' message 0 has content that is not text" in text
    assert json.loads(proc.stdout)["bad_rows"] == 5
    assert [line.get("total") for line in _scores(tmp_path / "out.jsonl")] == [1.0, None, None, None, None, None, 1.0]


@pytest.mark.slow  # two CLI runs of math
def test_integers_beyond_64_bits_keep_their_value(tmp_path):
    gold = 123456789012345678901234567890
    rows = [{"prompt": "p", "completion": f"\\boxed{{{gold + d}}}", "answer": gold} for d in (0, 1, 10**15)]
    (tmp_path / "rows.json").write_text(json.dumps(rows))
    for path in (write_jsonl(tmp_path / "rows.jsonl", rows), tmp_path / "rows.json"):
        assert [raw["answer"] for _, raw in read_rows(path)] == [gold] * 3
        proc = run_cli("score", str(path), "--rewards", "math", "--out", "-", "--monitors", "none")
        assert [line["total"] for line in map(json.loads, proc.stdout.splitlines())] == [1.0, 0.0, 0.0], proc.stderr


def test_a_long_csv_field_is_read(tmp_path):
    field = "y" * 200_000
    (tmp_path / "rows.csv").write_text(f"prompt,completion,answer\np,<answer>{field}</answer>,{field}\np,x,1\n")
    proc = run_cli("score", str(tmp_path / "rows.csv"), "--rewards", "accuracy", "--out", "-")
    assert proc.returncode == 0, no_traceback(proc)
    assert [json.loads(line)["total"] for line in proc.stdout.splitlines()] == [1.0, 0.0]


def test_an_overflowing_total_is_written_as_null_with_the_cause(tmp_path, packs):
    data = write_jsonl(tmp_path / "rows.jsonl", [{"completion": "2"}, {"completion": "0"}])
    proc = run_cli("score", str(data), "--rewards", "good_int:1e308", "--out", str(tmp_path / "out.jsonl"),
                   pythonpath=[packs["good"]])
    no_traceback(proc)
    first, second = _scores(tmp_path / "out.jsonl")  # strict JSON: no Infinity
    assert first["total"] is None and "overflowed" in first["error"] and second["total"] == 0.0


def test_rows_a_reward_cannot_judge_are_counted_and_named_with_why(tmp_path):
    """contest rows whose tests are broken score null: only ``data check`` named them; ``score`` said nothing.
    Now one line per reward counts them and names the first three (label, id column, the reward's own reason)."""
    broken = [{"id": f"p{i}", "prompt": "p", "completion": "```python\nprint(3)\n```", "tests": "broken"}
              for i in range(1, 6)]
    no_code = {"id": "p6", "prompt": "p", "completion": "no code here", "tests": [{"input": "", "output": "3"}]}
    data = write_jsonl(tmp_path / "rows.jsonl", [*broken, no_code])
    proc = run_cli("score", str(data), "--rewards", "contest", "--out", str(tmp_path / "out.jsonl"))
    text = no_traceback(proc)
    assert proc.returncode == 0, text
    assert [line["total"] for line in _scores(tmp_path / "out.jsonl")] == [None] * 5 + [0.0]
    why = "column 'tests': expected a list of"
    line = " ".join(next(x for x in proc.stderr.split("note: ")[1:] if x.startswith("contest")).split())
    assert line.startswith("contest gave no value (null) on 5 of 6 rows: line 1 (id 'p1'): " + why), line
    assert "line 2 (id 'p2')" in line and "line 3 (id 'p3')" in line and line.endswith("; and 2 more"), line
    assert "line 4" not in line and "p6" not in line


# ------------------------------------------------------------------------------------------ train

def _train(tmp: Path, config: Path, *args: str) -> subprocess.CompletedProcess:
    return run_cli("train", str(config), *args, env={"PYTHONWARNINGS": "ignore"}, timeout=600)


@pytest.mark.slow  # real training runs of the built-in tiny model
def test_a_finished_run_is_neither_rewritten_nor_trained_past_its_end(tmp_path):
    config = _train_config(tmp_path, max_steps=2, save_every=1)
    run = tmp_path / "run"
    assert _train(tmp_path, config).returncode == 0
    before = {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()}
    again = _train(tmp_path, config, "--set", "resume=true")
    assert again.returncode == 0 and "holds a finished run (2 of 2 steps): nothing to resume" in no_traceback(again)
    other = _train(tmp_path, config, "--set", "learning_rate=1e-5")
    assert other.returncode == 2 and "already holds checkpoint-2" in no_traceback(other)
    assert {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()} == before  # config.yaml too
    assert sorted(p.name for p in run.glob("checkpoint-*")) == ["checkpoint-1", "checkpoint-2"]
    # no state in the last checkpoint (a save cut short) and a torn metrics line: named, and the run continues
    # from checkpoint-1 (the missing state was passed over without a word)
    (run / "checkpoint-2" / "trainer_state.json").unlink()
    torn = len((run / "metrics.jsonl").read_text().splitlines()) + 1
    with (run / "metrics.jsonl").open("a") as f:
        f.write('{"step": 3, "rew')
    resumed = _train(tmp_path, config, "--set", "resume=true", "--set", "max_steps=3")
    text = no_traceback(resumed)
    assert resumed.returncode == 0, text
    assert "checkpoint-2 is passed over: its trainer_state.json is missing" in text
    assert f"metrics.jsonl line {torn} is not" in text
    assert "resuming from" in text and "checkpoint-1 (step 1)" in text
    summary = json.loads((run / "summary.json").read_text())
    assert (summary["steps"], summary["resumed_from"]) == (3, 1)
    steps = [r["step"] for r in map(json.loads, (run / "metrics.jsonl").read_text().splitlines())]
    assert steps[0] == 1 and steps[-1] == 3 and steps == sorted(steps)  # whole records, kept up to the checkpoint
    # a summary cut short (a field missing) does not say the run finished: named, and the run resumes, no traceback
    (run / "summary.json").write_text('{"steps": 3}')
    cut = _train(tmp_path, config, "--set", "resume=true", "--set", "max_steps=3")
    text = no_traceback(cut)
    assert cut.returncode == 0 and "summary.json does not read as a run summary" in text, text


def test_resuming_a_run_whose_every_checkpoint_was_cut_short_is_refused_and_trains_nothing(tmp_path):
    """Every checkpoint's state missing or torn: there is nothing to resume from, and training from the start would
    write over the run (it did: it trained from nothing).  Refused before anything is read or written."""
    config = _train_config(tmp_path, max_steps=4)
    run = tmp_path / "run"
    for name, state in (("checkpoint-2", ""), ("checkpoint-4", None), ("checkpoint-10", '{"global_step": "x"}')):
        (run / name).mkdir(parents=True)
        if state is not None:
            (run / name / "trainer_state.json").write_text(state)
    (run / "config.yaml").write_text("kept: true\n")
    (run / "packs.json").write_text("[]\n")
    proc = _train(tmp_path, config, "--set", "resume=true")
    text = no_traceback(proc)
    assert proc.returncode == 2, text
    assert "no checkpoint in" in text and text.index("checkpoint-10 is passed over") < text.index("checkpoint-4")
    assert "checkpoint-4 is passed over: its trainer_state.json is missing" in text
    assert "checkpoint-2 is passed over: its trainer_state.json is incomplete (JSONDecodeError" in text
    assert "global_step is 'x'" in text and (run / "config.yaml").read_text() == "kept: true\n"
    assert sorted(p.name for p in run.iterdir()) == ["checkpoint-10", "checkpoint-2", "checkpoint-4", "config.yaml",
                                                     "packs.json"]


def test_a_folder_that_is_not_a_run_is_not_written_over(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    files = {"README.md": "# my project\n", "config.yaml": "mine: true\n", "summary.json": "{}\n"}
    for name, text in files.items():
        (project / name).write_text(text)
    proc = _train(tmp_path, _train_config(tmp_path, output_dir=str(project)))
    assert proc.returncode == 2 and "is not a grpo-host run (README.md, config.yaml, summary.json)" in (
        " ".join(no_traceback(proc).split()))
    assert {p.name: p.read_text() for p in project.iterdir()} == files


# --------------------------------------------------------------------- the rollout record and rescore

def _record_rows(path: Path) -> list[tuple]:
    """A ``score --out`` file's record as comparable rows: step, batch, row, totals and advantage (part names,
    which carry a random tag, left out)."""
    from grpo_host.runs.record import read_record

    table = read_record(path)
    keys = ["step", "batch", "row", "completion", "total", "advantage",
            *(c for c in table.column_names if c.startswith("reward/"))]
    return sorted(tuple(r[k] for k in keys) for r in table.select(keys).to_pylist())


@pytest.mark.slow  # four CLI runs of a reward that awaits 0.5 s per batch
def test_a_killed_and_resumed_score_records_each_step_once(tmp_path, packs):
    data = write_jsonl(tmp_path / "rows.jsonl", _score_rows(16))
    args = ["score", str(data), "--rewards", "awaited_length, accuracy:2", "--batch-size", "2", "--monitors", "none"]
    whole = run_cli(*args, "--out", str(tmp_path / "whole.jsonl"), pythonpath=[packs["asyncpack"]])
    assert whole.returncode == 0, whole.stderr
    out = tmp_path / "out.jsonl"
    proc = subprocess.Popen([GRPO_HOST, *args, "--out", str(out)], env=clean_env(PYTHONPATH=str(packs["asyncpack"]),
                            **CLI_ENV), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    progress = tmp_path / "out.jsonl.progress"
    while _batches_kept(progress) < 3 and proc.poll() is None:  # three of eight batches done (their lines reach
        time.sleep(0.01)                                         # --out before the progress file counts them)
    proc.kill()
    proc.communicate(timeout=60)
    folder = tmp_path / "out.jsonl.rollouts"
    kept = _batches_kept(progress)
    assert 3 <= kept < 8
    # the window a kill can land in: a batch's part written, its lines not yet in --out (it is scored again)
    last = sorted(folder.glob(f"step-{kept:08d}-*.parquet"))[0]
    (folder / last.name.replace(f"step-{kept:08d}", f"step-{kept + 1:08d}")).write_bytes(last.read_bytes())
    done = run_cli(*args, "--out", str(out), "--resume", pythonpath=[packs["asyncpack"]])
    assert done.returncode == 0, done.stderr
    assert out.read_text() == (tmp_path / "whole.jsonl").read_text()
    record, uninterrupted = _record_rows(out), _record_rows(tmp_path / "whole.jsonl")
    assert [r[0] for r in record] == [s for s in range(1, 9) for _ in range(2)]  # steps 1-8, two rollouts each
    assert record == uninterrupted  # the same steps, batches, rows and values: nothing twice
    same = run_cli("rescore", str(out), "--rewards", "awaited_length, accuracy:2", "--json",
                   pythonpath=[packs["asyncpack"]])
    assert same.returncode == 0, same.stdout + same.stderr
    found = json.loads(same.stdout)
    assert found["advantage_sign_changed"] == 0 and [s["rollouts"] for s in found["steps"]] == [2] * 8


_PACK = '''
import os
import time
from pathlib import Path

from grpo_host import hookimpl, reward


@reward(name="flaky", executor="process", timeout=1.0)
def flaky(completion, **_):
    """The completion's length; with FLAKY=broken it hangs on completions holding 8 and raises on ones holding 3;
    with FLAKY=slow it notes its pid in SLOW_MARK and waits a minute."""
    mode = os.environ.get("FLAKY", "")
    if mode == "slow":
        Path(os.environ["SLOW_MARK"], str(os.getpid())).write_text("")
        end = time.monotonic() + 60
        while time.monotonic() < end:
            time.sleep(0.05)
    if mode == "broken" and "8" in completion:
        end = time.monotonic() + 30
        while time.monotonic() < end:  # busy: a timeout by any clock
            pass
    if mode == "broken" and "3" in completion:
        raise ValueError(f"cannot read {completion!r}")
    return float(len(completion))


@hookimpl
def register_rewards(register):
    register.add_reward(flaky)
'''


def _flaky_pack(tmp: Path) -> Path:
    """A pack (its module and ``.dist-info``, as an installer lays them out) with the reward ``flaky``."""
    target = tmp / "flaky-pack"
    (target / "grpo_test_flaky-1.0.dist-info").mkdir(parents=True)
    (target / "grpo_test_flaky.py").write_text(_PACK)
    (target / "grpo_test_flaky-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: grpo-test-flaky\nVersion: 1.0\n")
    (target / "grpo_test_flaky-1.0.dist-info" / "entry_points.txt").write_text(
        "[grpo_host]\nflaky = grpo_test_flaky\n")
    return target


def _flaky_scores(tmp: Path, completions: list[str]) -> tuple[Path, Path]:
    """A ``score --out`` file (and its record) of ``flaky`` as it works, and the pack's folder."""
    pack = _flaky_pack(tmp)
    rows = [{"prompt": f"p{i % 2}", "completion": c} for i, c in enumerate(completions)]
    data = write_jsonl(tmp / "rows.jsonl", rows)
    scored = run_cli("score", str(data), "--rewards", "flaky", "--out", str(tmp / "scores.jsonl"), "--monitors",
                     "none", pythonpath=[pack])
    assert scored.returncode == 0, scored.stdout + scored.stderr
    return tmp / "scores.jsonl", pack


def test_rescore_shows_the_timeouts_and_errors_of_each_reward_now(tmp_path):
    out, pack = _flaky_scores(tmp_path, ["12", "38", "45", "3", "67", "80"])
    proc = run_cli("rescore", str(out), "--rewards", "flaky", pythonpath=[pack], env={"FLAKY": "broken"})
    text = no_traceback(proc)
    assert proc.returncode == 1, text
    assert re.search(r"reward +changed +of +errors now +timeouts now", proc.stdout), text
    assert re.search(r"flaky +3 +6 +1 +2", proc.stdout), text  # 38 and 80 time out, 3 raises
    assert "flaky now times out on 2 of 6 rollouts" in proc.stdout
    assert "failed: " in proc.stderr and "cannot read '3'" in proc.stderr, text
    found = json.loads(run_cli("rescore", str(out), "--rewards", "flaky", "--json", pythonpath=[pack],
                               env={"FLAKY": "broken"}).stdout)
    assert found["rewards"]["flaky"] == {"compared": 6, "changed": 3, "errors": 1, "timeouts": 2}
    assert len(found["failures"]) == 1 and "cannot read '3'" in found["failures"][0]


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _ctrl_c_reaches() -> None:
    """SIGINT back to its default in the child, as a terminal's foreground command has it: a test suite started in
    the background (``.ci/run &``, nohup) inherits SIGINT ignored, and Python then never raises KeyboardInterrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.slow  # three rescores stopped mid-batch
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL], ids=["TERM", "INT", "KILL"])
def test_an_interrupted_rescore_says_so_and_leaves_no_worker(tmp_path, sig):
    out, pack = _flaky_scores(tmp_path, ["1", "22", "333"])
    marks = tmp_path / "marks"
    marks.mkdir()
    proc = subprocess.Popen([GRPO_HOST, "rescore", str(out), "--rewards", "flaky", "--workers", "2"],
                            env=clean_env(PYTHONPATH=str(pack), FLAKY="slow", SLOW_MARK=str(marks), COLUMNS="200",
                                          **CLI_ENV), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_ctrl_c_reaches)
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while len(workers) < 2 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
            workers = [int(p.name) for p in marks.iterdir()]
        assert len(workers) == 2, proc.stderr.read() if proc.poll() is not None else "no worker started"
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=20)  # the workers hold stderr open: it ends only with them
        if sig == signal.SIGKILL:
            assert proc.returncode == -signal.SIGKILL
            deadline = time.monotonic() + 5
            while any(map(_alive, workers)) and time.monotonic() < deadline:
                time.sleep(0.05)
        else:
            assert proc.returncode == 130, stdout + stderr
            assert [line for line in stderr.splitlines() if line.strip()] == [
                f"interrupted: rescore of {out} stopped; it writes nothing, so run it again to re-score the record"]
        assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr
        assert not [pid for pid in workers if _alive(pid)]  # no orphaned worker
    finally:
        proc.kill()
        for pid in workers:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
