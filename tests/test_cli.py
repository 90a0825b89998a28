"""The CLI as a user runs it: listing, showing, scoring; and a start that stays light."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import cli_json, run_cli, write_jsonl

EXAMPLE = Path(__file__).parents[1] / "examples" / "r1_completions.jsonl"


def test_rewards_list_json_has_the_documented_keys():
    rewards = {r["name"]: r for r in cli_json("rewards", "list")}
    acc = rewards["accuracy"]
    assert {"name", "pack", "version", "requires", "params", "description"} <= set(acc)
    assert acc["requires"] == {"answer": "str"} and acc["pack"] == "grpo-host"
    assert rewards["think_format"]["params"]["properties"]["prefilled"]["enum"] == ["auto", "yes", "no"]


def test_rewards_list_table_and_show():
    proc = run_cli("rewards", "list")
    assert proc.returncode == 0 and "r1_strict_format" in proc.stdout and "grpo-host" in proc.stdout
    show = run_cli("rewards", "show", "r1_xmlcount")
    assert show.returncode == 0
    assert "+0.25 for each of" in show.stdout and "reasoning_tag" in show.stdout
    assert "0.948" in show.stdout  # the scored example: 13 trailing characters cost 2 * 13 * 0.002
    missing = run_cli("rewards", "show", "acuracy")
    assert missing.returncode == 2 and "available: accuracy" in missing.stderr


def test_rewards_show_scores_group_examples_against_their_judge_reply():
    """A group example prints each member's score, got from the stated judge reply served on 127.0.0.1."""
    show = run_cli("rewards", "show", "judge_group")
    assert show.returncode == 0, show.stderr
    assert "[0.6, 0.6]" in show.stdout and "[None, None]" in show.stdout and "error" not in show.stdout


def test_brackets_are_printed_not_taken_for_style_tags():
    assert "columns: tests (list[reward_plugins.code.rewards.IOCase] | str)" in run_cli(
        "rewards", "show", "code").stdout
    missing = run_cli("rewards", "show", "accuracy[x]")
    assert missing.returncode == 2 and "'accuracy[x]'" in missing.stderr


def test_plugins_list_shows_status_source_and_hooks():
    records = {r["name"]: r for r in cli_json("plugins", "list")}
    assert records["r1"]["status"] == "loaded" and records["r1"]["source"] == "built-in"
    assert records["r1"]["hooks"] == ["register_rewards"]
    assert run_cli("plugins", "list").returncode == 0


def test_score_writes_one_line_per_row_and_a_summary(tmp_path):
    out = tmp_path / "scores.jsonl"
    proc = run_cli("score", str(EXAMPLE), "--rewards", "accuracy:2, r1_strict_format:0.5", "--out", str(out), "--json")
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 6
    assert lines[0] == {"row": "line 1", "rewards": {"accuracy": 1.0, "r1_strict_format": 1.0}, "total": 2.5}
    assert lines[4]["rewards"]["accuracy"] == 0.0  # 46 is not 48
    assert lines[5]["rewards"]["accuracy"] == 1.0  # a chat-message completion
    summary = json.loads(proc.stdout)
    assert summary["scored"] == 6 and summary["bad_rows"] == 0
    assert summary["rewards"]["accuracy"]["mean"] == 4 / 6
    assert summary["rewards"]["accuracy"]["coverage"] == 1.0
    table = run_cli("score", str(EXAMPLE), "--rewards", "accuracy:2, r1_strict_format:0.5")
    assert table.returncode == 0 and "accuracy" in table.stdout and "coverage" in table.stdout


def test_score_reports_bad_rows_and_scores_the_rest(tmp_path):
    data = write_jsonl(tmp_path / "mixed.jsonl", [
        {"prompt": "p", "completion": "<answer>1</answer>", "answer": "1"},
        {"prompt": "p", "answer": "1"},  # no completion
        {"prompt": "p", "completion": "<answer>1</answer>"},  # no answer for accuracy
        {"completion": "<answer>1</answer>", "answer": "1"},  # no prompt, and accuracy reads none: scored
        {"prompt": "p", "completion": "", "answer": "1"},  # EOS at once: an empty completion is scored
    ])
    out = tmp_path / "out.jsonl"
    proc = run_cli("score", str(data), "--rewards", "accuracy", "--out", str(out))
    assert proc.returncode == 1
    assert "line 2: no 'completion' to score" in proc.stderr
    assert "line 3: reward 'accuracy' needs column 'answer': missing" in proc.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [("error" in line) for line in lines] == [False, True, True, False, False]
    assert [line.get("total") for line in lines] == [1.0, None, None, 1.0, 0.0]


def test_score_needs_a_prompt_only_for_rewards_that_read_one(tmp_path, packs):
    data = write_jsonl(tmp_path / "d.jsonl", [{"completion": "x"}, {"prompt": "p", "completion": "q"}])
    proc = run_cli("score", str(data), "--rewards", "good_no_echo", "--out", "-", pythonpath=[packs["good"]])
    assert proc.returncode == 1
    first, second = (json.loads(line) for line in proc.stdout.splitlines())
    assert first["row"] == "line 1" and first["error"].startswith("no prompt")
    assert second == {"row": "line 2", "rewards": {"good_no_echo": 1.0}, "total": 1.0}


def test_a_reward_failing_on_some_rows_costs_those_rows_only(tmp_path, packs):
    data = write_jsonl(tmp_path / "d.jsonl", [{"completion": c} for c in ("1", "one", "3")])
    out = tmp_path / "out.jsonl"
    proc = run_cli("score", str(data), "--rewards", "good_int, good_length(target=1):0", "--out", str(out), "--json",
                   pythonpath=[packs["good"]])
    assert proc.returncode == 1, proc.stderr  # rows failed
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["rewards"]["good_int"] for line in lines] == [1.0, None, 3.0]
    assert [line["rewards"]["good_length"] for line in lines] == [1.0, 0.0, 1.0]  # the other reward still scored it
    assert "error" not in lines[0] and "error" not in lines[2]
    assert lines[1]["error"].startswith("reward 'good_int' (pack grpo-test-good 1.2.3) failed on row line 2: "
                                        "ValueError: invalid literal for int()")
    summary = json.loads(proc.stdout)
    assert (summary["failed_rows"], summary["rewards"]["good_int"]["errors"]) == (1, 1)
    assert "Traceback" not in proc.stderr and "failed: reward 'good_int'" in proc.stderr


def test_on_error_in_the_spec_string_and_a_broken_reward_stopping(tmp_path, packs):
    from grpo_host.scoring.ensemble import BUG_STREAK

    data = write_jsonl(tmp_path / "d.jsonl", [{"completion": "one"}] * (BUG_STREAK + 2))
    stopped = run_cli("score", str(data), "--rewards", "good_int", pythonpath=[packs["good"]])
    assert stopped.returncode == 2 and "Traceback" not in stopped.stderr
    assert f"failed on {BUG_STREAK} rows in a row, so it is broken" in stopped.stderr
    assert "grpo-test-good 1.2.3" in stopped.stderr
    skipped = run_cli("score", str(data), "--rewards", "good_int [on_error=skip]", "--json", pythonpath=[packs["good"]])
    assert skipped.returncode == 1 and json.loads(skipped.stdout)["rewards"]["good_int"]["errors"] == BUG_STREAK + 2
    raised = run_cli("score", str(data), "--rewards", "good_int [on_error=raise, timeout=5]",
                     pythonpath=[packs["good"]])
    assert raised.returncode == 2 and "failed on row line 1" in raised.stderr and "Traceback" not in raised.stderr
    typo = run_cli("score", str(data), "--rewards", "good_int [on_eror=skip]", pythonpath=[packs["good"]])
    assert typo.returncode == 2 and "unknown policy 'on_eror'" in typo.stderr


def test_a_worker_that_cannot_start_is_a_clean_error(tmp_path):
    """An environment in which the worker interpreter dies at start-up (here: a sitecustomize that exits
    whenever Python runs a module with -m, as the worker is started) is one message, not a traceback."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import os, sys\nif sys.argv[:1] == ['-m']:\n    os._exit(3)\n")
    data = write_jsonl(tmp_path / "d.jsonl", [{"prompt": "p", "completion": "\\\\boxed{1}", "answer": "1"}])
    proc = run_cli("score", str(data), "--rewards", "math", pythonpath=[site])
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "a grpo-host worker process failed to start (exit code 3)" in proc.stderr


def test_score_stdout_rows_and_reward_errors(tmp_path):
    data = write_jsonl(tmp_path / "d.jsonl", [{"prompt": "p", "completion": "<answer>1</answer>", "answer": "1"}])
    proc = run_cli("score", str(data), "--rewards", "accuracy", "--out", "-")
    assert proc.returncode == 0 and json.loads(proc.stdout.splitlines()[0])["total"] == 1.0
    bad = run_cli("score", str(data), "--rewards", "accuracy(strict=true)")
    assert bad.returncode == 2 and "takes no parameters" in bad.stderr


def test_cli_start_and_listing_import_no_heavy_frameworks(tmp_path):
    code = (
        "import sys\n"
        "from grpo_host.cli import app\n"
        "for args in (['rewards', 'list', '--json'], ['plugins', 'list'], ['environments', 'list']):  # built\n"
        "    try:\n"
        "        app(args)\n"
        "    except SystemExit as exc:\n"
        "        assert exc.code in (0, None), exc.code\n"
        "heavy = sorted(m for m in ('torch', 'transformers', 'mlx', 'sympy', 'trl', 'datasets') if m in sys.modules)\n"
        "print('HEAVY', heavy, file=sys.stderr)\n"
    )
    env = {**os.environ, "GRPO_HOST_CACHE": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "HEAVY []" in proc.stderr, proc.stderr
