"""Every installed reward scores its documented examples as stated (TRL's docstring examples state their output).

The examples are what ``grpo-host rewards show`` prints as the reward's documentation; one parametrized
test over every installed reward keeps them true.  The built-in packs state a score for every example.
"""

from __future__ import annotations

import pytest

from grpo_host import list_rewards
from grpo_host.testing import check_examples

REWARDS = [r for r in list_rewards() if r.examples]


@pytest.mark.parametrize("reward", REWARDS, ids=[r.name for r in REWARDS])
def test_the_reward_scores_its_examples_as_documented(reward):
    checked = check_examples(reward)
    if reward.pack == "grpo-host":
        assert checked == len(reward.examples), f"{reward.name}: every built-in example states its score"


def test_a_wrong_documented_score_is_caught_naming_the_example():
    from dataclasses import replace

    accuracy = next(r for r in list_rewards() if r.name == "accuracy")
    wrong = replace(accuracy, examples=({"completion": "<answer>4</answer>", "answer": "4", "score": 0.0},))
    with pytest.raises(AssertionError, match=r"example 0 \('<answer>4</answer>'\): documented 0.0, scored 1.0"):
        check_examples(wrong)
