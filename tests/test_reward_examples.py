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


@pytest.mark.parametrize(("name", "index", "wrong", "message"), [
    # the judge's reply is served for real: a score read off the reply without averaging the two orders is wrong
    ("judge_group", 1, [0.9, 0.3], r"example 0 \(\['7', '9'\]\): documented \[0.9, 0.3\], scored \[0.6, 0.6\]"),
    ("judge_group", 2, [0.8, 0.5], r"documented \[0.8, 0.5\], scored \[None, None\]"),
    # the shipped tiny model really scores the group: swapping the order the model gives is caught
    ("reward_model", 0, [-(2 ** -0.5), 2 ** -0.5], r"example 0 \(\['Paris.', 'Paris'\]\): documented \[-0.707"),
    ("reward_model", 3, [0.0, 0.0], r"documented \[0.0, 0.0\], scored \[0.0, None\]"),
])
def test_a_wrong_documented_group_score_is_caught_naming_the_example(name, index, wrong, message):
    from dataclasses import replace

    reward = next(r for r in list_rewards() if r.name == name)
    example = {**reward.examples[index], "scores": wrong}
    with pytest.raises(AssertionError, match=message):
        check_examples(replace(reward, examples=(example,)))


def test_a_judge_reply_is_served_over_http_in_the_openai_chat_format():
    """check_examples's judge is a real server: each order of the group is one chat-completions request to it."""
    from grpo_host.testing import chat_server, score_example

    judge_group = next(r for r in list_rewards() if r.name == "judge_group")
    with chat_server("<scores>\nResponse 1: 4\nResponse 2: 4\n</scores>") as server:
        scores = judge_group.bind({"base_url": server.base_url, "model": server.model, "cache": False}).score_items(
            ["7", "9"], ["Name a prime number."] * 2, {})
    assert [s.value for s in scores] == [0.4, 0.4]
    assert len(server.requests) == 2 and all(r["model"] == server.model for r in server.requests)
    assert score_example(judge_group, {"prompt": "p", "completions": ["a"], "judge_reply": "no verdict"}) == [None]


@pytest.mark.parametrize(("example", "message"), [
    ({"completions": ["a", "b"], "score": 1.0}, r"example 0: an example gives .* not completions, score"),
    ({"completion": "a", "scores": [1.0]}, r"not completion, scores"),
    ({"completions": ["a", "b"], "scores": [1.0]}, r"example 0: an example states 1 scores for 2 completions"),
])
def test_a_malformed_example_is_named(example, message):
    from dataclasses import replace

    length = next(r for r in list_rewards() if r.name == "length")
    with pytest.raises(AssertionError, match=message):
        check_examples(replace(length, examples=(example,)))
