"""``grpo_host.integrations.verifiers`` run by verifiers 0.4.0 itself: a task whose reward is a grpo-host spec,
plugged by path and scored by verifiers' own ``Task.score`` (``tests/peer_scripts/verifiers_task.py``, run in a
venv holding verifiers: ``tests/peers.py`` says why it is not installed here)."""

from __future__ import annotations

from pathlib import Path

import pytest
from peers import peer_python, run_in

SCRIPT = Path(__file__).parent / "peer_scripts" / "verifiers_task.py"


@pytest.fixture(scope="module")
def traces() -> dict:
    return run_in(peer_python("verifiers==0.4.0"), SCRIPT)


def test_each_reward_is_recorded_weighted_and_summed_into_the_traces_reward(traces):
    """math:2 and r1_strict_format:0.5 as verifiers rewards (weight x value; verifiers' own weight 1), their sum
    verifiers' ``trace.reward``; the weight-0 r1_xmlcount a metric, not paid."""
    assert traces["text"]["rewards"] == {"math": [2.0, 1.0], "r1_strict_format": [0.5, 1.0]}
    assert traces["text"]["reward"] == 2.5 and traces["text"]["ok"]
    assert set(traces["text"]["metrics"]) == {"r1_xmlcount"}
    assert traces["wrong"]["reward"] == 0.5  # a wrong answer keeps its format reward


def test_a_tool_using_trajectory_scores_as_its_final_text(traces):
    """The tool call, its result and the reasoning verifiers keeps in ``reasoning_content``: text rewards score the
    final answer with its reasoning restored, exactly as the same text written without tools."""
    assert traces["tools"] == traces["text"]


def test_a_row_no_reward_scored_is_unscored_not_zero(traces):
    """An unparseable gold gives math None: the function returns no keys, and verifiers' trace holds no reward
    (verifiers reads an empty ``rewards`` as unscored), rather than a 0."""
    assert traces["unparsed_gold"]["rewards"] == {} and traces["unparsed_gold"]["ok"]


def test_a_row_that_fails_the_data_check_fails_its_trace_naming_row_reward_and_column(traces):
    assert not traces["no_gold"]["ok"]
    assert "verifiers task 7: reward 'math' needs column 'answer': empty" in traces["no_gold"]["errors"][0]
    assert "no 'completion' to score" in traces["no_reply"]["errors"][0]
    assert traces["no_gold"]["rewards"] == {"grpo_host": None}  # verifiers' own mark: "scoring didn't run"
