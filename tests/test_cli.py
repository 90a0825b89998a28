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
    assert {"name", "plugin", "version", "requires", "params", "description"} <= set(acc)
    assert acc["requires"] == {"answer": "str"} and acc["plugin"] == "grpo-host"
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


def test_brackets_are_printed_not_taken_for_style_tags():
    assert "tests: list[reward_plugins.code.reward.IOCase]" in run_cli("rewards", "list").stdout
    assert "columns: tests (list[reward_plugins.code.reward.IOCase] | str)" in run_cli("rewards", "show", "code").stdout
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
        {"completion": "x", "answer": "1"},  # no prompt
    ])
    out = tmp_path / "out.jsonl"
    proc = run_cli("score", str(data), "--rewards", "accuracy", "--out", str(out))
    assert proc.returncode == 1
    assert "line 2: no 'completion' to score" in proc.stderr
    assert "line 3: reward 'accuracy' needs column 'answer': missing" in proc.stderr
    assert "line 4: no prompt" in proc.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [("error" in line) for line in lines] == [False, True, True, True]


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
        "for args in (['rewards', 'list', '--json'], ['plugins', 'list']):  # the catalog built, not read back\n"
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
