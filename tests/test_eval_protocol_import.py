"""The ``eval_protocol`` reward (``reward_plugins/eval_protocol_import``) with eval-protocol 0.3.33 itself: its own
``@reward_function`` functions (``format_reward``, ``accuracy_reward``) and one of this test's, named by import path
in a spec and scored on ``grpo-host score``'s path (``tests/peer_scripts/eval_protocol_import.py``, in a venv holding
eval-protocol: ``tests/peers.py`` says why it is not installed here)."""

from __future__ import annotations

from pathlib import Path

import pytest
from peers import peer_python, run_in

SCRIPT = Path(__file__).parent / "peer_scripts" / "eval_protocol_import.py"

pytestmark = pytest.mark.slow  # a venv of its own, and eval-protocol's import (litellm, openai) in a subprocess


@pytest.fixture(scope="module")
def found() -> dict:
    return run_in(peer_python("eval-protocol==0.3.33"), SCRIPT, "cases")


def test_the_score_is_the_functions_own(found):
    assert found["format"]["rewards"] == {"eval_protocol": 1.0, "r1_strict_format": 1.0}
    assert found["accuracy"]["rewards"]["eval_protocol"] == found["accuracy_own"][0]  # eval-protocol's own call
    assert found["mine"]["rewards"] == {"eval_protocol": 1.0}


def test_a_declined_row_is_none_never_zero(found):
    """is_score_valid false: None, and the rest of the spec still scores the row."""
    assert found["format_empty"]["rewards"] == {"eval_protocol": None, "r1_strict_format": 0.0}
    assert found["mine_declined"]["rewards"] == {"eval_protocol": None} and found["mine_declined"]["total"] is None


def test_the_columns_it_reads_are_checked_before_any_call(found):
    """``answer`` (the function's ground_truth has no default) and the declared ``unit``: a row lacking one is
    refused by the data check, naming the reward and column, and the function never sees it."""
    assert found["mine_requires"] == [["answer"], ["unit"]]
    assert found["mine_no_unit"] == {"row": "row 1", "error": "reward 'eval_protocol' needs column 'unit': missing"}
    assert found["accuracy_no_gold"]["error"] == "reward 'eval_protocol' needs column 'answer': missing"
    assert len(found["calls"]) == 2  # the scored row and the declined one; never the row without a unit


def test_the_conversation_is_the_prompt_then_the_completion(found):
    assert found["calls"][0] == {"roles": ["system", "user", "assistant"], "ground_truth": "4", "unit": "km"}
    assert found["calls"][1]["roles"] == ["user", "assistant"]


def test_metrics_are_counters_beside_the_mean(found):
    """Valid metrics are summed over the rows (``has_unit`` on two rows; ``skipped`` is never valid); ``invalid``
    counts the rows the function declined."""
    assert found["summary"]["counts"] == {"has_unit": 2.0, "invalid": 1.0}
    assert found["summary"]["mean"] == 0.5 and found["summary"]["errors"] == 0
