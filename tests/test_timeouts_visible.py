"""Timeouts are visible (issue 43): ``grpo-host score`` counts and names the rows whose every reward timed out,
says how often each reward timed out (and how often at the wall-clock backstop), and exits 1 when a verdict is
missing because of time; ``--strict`` makes those rows an error.  Before, such rows were ``null`` in the output and
the run exited 0.

The rewards are the test pack ``hostile``'s (tests/packs/hostile): ``hostile_hang`` never returns, sleeping (so it
uses no CPU and is stopped at the backstop, 10 x its 0.5 s timeout); the pack ``good``'s ``contains_expected`` scores
every row.
"""

from __future__ import annotations

import json

import pytest
from conftest import run_cli, write_jsonl

pytestmark = pytest.mark.slow  # over 2 s: waits out backstops of 5 s

ENV = {"GRPO_HOST_LOAD_PLUGINS": "hostile"}


@pytest.fixture
def rows(tmp_path):
    return write_jsonl(tmp_path / "rows.jsonl", [{"prompt": "p", "completion": str(n), "answer": str(n)}
                                                  for n in range(2)])


@pytest.mark.timeout(600)
def test_score_names_the_rows_every_reward_timed_out_on_and_exits_1(packs, rows):
    proc = run_cli("score", str(rows), "-r", "hostile_hang", "--json", pythonpath=[packs["hostile"]], env=ENV,
                   timeout=300)
    assert proc.returncode == 1, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["timed_out_rows"] == 2 and summary["unscored"] == 2
    figures = summary["rewards"]["hostile_hang"]
    assert (figures["timeouts"], figures["backstops"]) == (2, 2)
    assert "timed out: reward 'hostile_hang' timed out on 2 of 2 rows (2 at the wall-clock backstop" in proc.stderr
    assert "timed out: 2 rows have no verdict: every reward timed out on them (line 1, line 2)" in proc.stderr


@pytest.mark.timeout(600)
def test_a_row_another_reward_scored_is_not_counted_as_timed_out_but_the_timeout_still_fails_the_run(packs, rows):
    proc = run_cli("score", str(rows), "-r", "hostile_hang, contains_expected", "--json",
                   pythonpath=[packs["hostile"], packs["good"]], env={"GRPO_HOST_LOAD_PLUGINS": "hostile,good"},
                   timeout=300)
    assert proc.returncode == 1, proc.stderr  # hostile_hang's verdicts are missing
    summary = json.loads(proc.stdout)
    assert summary["timed_out_rows"] == 0 and summary["rewards"]["hostile_hang"]["timeouts"] == 2
    assert summary["rewards"]["contains_expected"]["mean"] == 1.0
    assert "rows have no verdict" not in proc.stderr


@pytest.mark.timeout(600)
def test_strict_makes_a_row_every_reward_timed_out_on_an_error(packs, rows):
    proc = run_cli("score", str(rows), "-r", "hostile_hang", "--strict", pythonpath=[packs["hostile"]], env=ENV,
                   timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert "2 rows were scored by no reward (strict)" in proc.stderr
    assert "every reward timed out on 2 of them" in proc.stderr
