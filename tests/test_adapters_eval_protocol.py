"""``grpo_host.integrations.eval_protocol`` run with eval-protocol 0.3.33 itself: its ``@reward_function`` wrapper
(message coercion, result validation) and its ``EvaluateResult`` (``tests/peer_scripts/eval_protocol_rows.py``, in a
venv holding eval-protocol: ``tests/peers.py`` says why it is not installed here)."""

from __future__ import annotations

from pathlib import Path

import pytest
from peers import peer_python, run_in

SCRIPT = Path(__file__).parent / "peer_scripts" / "eval_protocol_rows.py"


@pytest.fixture(scope="module")
def results() -> dict:
    return run_in(peer_python("eval-protocol==0.3.33"), SCRIPT)


def test_score_is_the_weighted_total_and_each_reward_a_metric(results):
    out = results["dicts"]
    assert out["score"] == 1.5 and out["is_score_valid"]
    assert {k: (m["score"], m["is_score_valid"], m["data"]["weight"]) for k, m in out["metrics"].items()} == {
        "accuracy": (1.0, True, 1.0), "r1_strict_format": (1.0, True, 0.5), "r1_xmlcount": (0.92, True, 0.0)}
    assert results["models"] == out  # eval-protocol's Message models read as the dicts are


def test_a_tool_using_conversation_scores_as_its_final_text(results):
    assert results["tools"]["score"] == 1.5 and results["tools"]["metrics"] == results["dicts"]["metrics"]


def test_an_unscored_row_is_not_a_valid_score_and_says_why(results):
    for case, why in (("no_gold", "reward 'accuracy' needs column 'answer': missing"),
                      ("no_reply", "no 'completion' to score")):
        out = results[case]
        assert not out["is_score_valid"] and out["score"] == 0.0
        assert out["error"] == out["reason"] == f"eval-protocol row: {why}"
