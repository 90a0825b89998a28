"""``grpo_host.integrations.atropos`` in atroposlib 0.4.0's own reward registry: created by name from a config, called
as Atropos calls a reward (weighted by its ``__call__``), and combined with Atropos's own rewards by its
``CombinedReward``."""

from __future__ import annotations

import logging
import math

import pytest
from atroposlib.envs.reward_fns import registry

from grpo_host.integrations.atropos import register

GOOD = "<think>\nadd\n</think>\n<answer>\n4\n</answer>"


@pytest.fixture(scope="module", autouse=True)
def registered():
    register()


def test_created_from_atropos_registry_and_weighted_by_its_call():
    reward = registry.create({"type": "grpo_host", "rewards": "math:2, r1_strict_format:0.5", "weight": 2.0})
    assert reward.name == "grpo_host"
    assert reward([GOOD, GOOD.replace("4", "5")], ground_truth=["4", "4"]) == [5.0, 1.0]  # Atropos applies weight 2
    assert reward.last_values == {"math": [1.0, 0.0], "r1_strict_format": [1.0, 1.0]}


def test_atropos_completion_shapes_and_a_tool_using_trajectory_score_alike():
    reward = registry.create({"type": "grpo_host", "rewards": "math:2, r1_strict_format:0.5"})
    trajectory = [{"role": "assistant", "content": "", "tool_calls": [
                      {"id": "c1", "type": "function", "function": {"name": "python", "arguments": "{}"}}]},
                  {"role": "tool", "tool_call_id": "c1", "content": "4"},
                  {"role": "assistant", "content": "<answer>\n4\n</answer>", "reasoning_content": "add"}]
    shapes = [GOOD, {"role": "assistant", "content": GOOD}, {"message": {"role": "assistant", "content": GOOD}},
              trajectory]
    assert reward(shapes, solution="4") == [2.5] * 4  # one gold for the group, under Atropos's other name


def test_an_unscored_completion_is_nan_not_zero_with_a_warning(caplog):
    reward = registry.create({"type": "grpo_host", "rewards": "math"})
    with caplog.at_level(logging.WARNING, logger="grpo_host.integrations.atropos"):
        scores = reward([GOOD, GOOD], ground_truth=["4", None])
    assert scores[0] == 1.0 and math.isnan(scores[1])
    assert "completion 1: reward 'math' needs column 'answer': empty" in caplog.text


def test_combined_with_atroposs_own_rewards():
    combined = registry.create({"type": "combined", "rewards": [
        {"type": "grpo_host", "rewards": "r1_strict_format"}, {"type": "format"}]})
    assert combined([GOOD, "plain"]) == [2.0, 0.0]  # CombinedReward sums compute(): 1.0 from each for GOOD
