"""The R1 pack's exact scoring."""

import pytest

from grpo_host import get_reward

STRICT = "<think>\nsteps\n</think>\n<answer>\n4\n</answer>\n"


def score(name, completion, params=None, **columns):
    return get_reward(name).bind(params).score_one(completion, None, **columns)


@pytest.mark.parametrize(("completion", "answer", "expected"), [
    ("<think>x</think><answer> 4 </answer>", "4", 1.0),
    ("<answer>3</answer> then <answer>4</answer>", "4", 1.0),  # the last block counts
    ("<answer>4", "4", 1.0),  # unclosed at the end
    ("4", "4", 0.0),  # no answer block
    ("<answer>5</answer>", "4", 0.0),
    ("<answer>4</answer>", "  ", None),  # no gold: not applicable
])
def test_accuracy(completion, answer, expected):
    assert score("accuracy", completion, answer=answer) == expected


@pytest.mark.parametrize(("completion", "expected"), [
    ("<answer>-12</answer>", 1.0), ("<answer>+7</answer>", 1.0), ("<answer>1.5</answer>", 0.0), ("12", 0.0)])
def test_int(completion, expected):
    assert score("r1_int", completion) == expected


def test_strict_and_soft_format():
    assert score("r1_strict_format", STRICT) == 1.0
    assert score("r1_strict_format", STRICT.rstrip("\n")) == 1.0
    assert score("r1_strict_format", "<think>steps</think><answer>4</answer>") == 0.0
    assert score("r1_strict_format", "Sure! " + STRICT) == 0.0
    assert score("r1_soft_format", "<think>steps</think>  <answer>4</answer>") == 1.0
    assert score("r1_soft_format", "<answer>4</answer>") == 0.0
    reasoning = STRICT.replace("think>", "reasoning>")
    assert score("r1_strict_format", reasoning, {"reasoning_tag": "reasoning"}) == 1.0
    assert score("r1_strict_format", reasoning) == 0.0
    with pytest.raises(ValueError, match="reasoning_tag"):
        get_reward("r1_soft_format").bind({"reasoning_tag": "a|b"})


def test_xmlcount_partial_credit_and_trailing_penalty():
    assert score("r1_xmlcount", STRICT) == 1.0
    assert score("r1_xmlcount", "<think>\nsteps\n</think>\n") == 0.5
    assert score("r1_xmlcount", STRICT.rstrip("\n") + "\nabc") == pytest.approx(1.0 - 2 * 3 * 0.002)


@pytest.mark.parametrize(("completion", "prefilled", "expected"), [
    ("<think>\nreason\n</think>\nanswer", "auto", 1.0),
    ("reason\n</think>\nanswer", "auto", 1.0),  # the chat template opened the block
    ("reason\n</think>\nanswer", "no", 0.0),
    ("<think>reason</think>answer", "yes", 0.0),
    ("<think> </think>answer", "auto", 0.0),  # empty reasoning
    ("<think>a</think>b<think>c</think>", "auto", 0.0),  # a second block
    ("<think>a<think>b</think>c", "auto", 0.0),  # nested open
    ("no tags", "auto", 0.0),
])
def test_think_format(completion, prefilled, expected):
    assert score("think_format", completion, {"prefilled": prefilled}) == expected


@pytest.mark.parametrize("completion", [
    STRICT + "<think>\nmore\n</think>\n<answer>\n5\n</answer>\n",  # two of each
    "<think>\na\n</think>\nextra\n</think>\n<answer>\n4\n</answer>\n",  # text and a second close between them
    "<think>\na\n</think>\n<think>\nb\n</think>\n<answer>\n4\n</answer>\n",  # two think blocks
    "<think>\na\n</think>\n<answer>\n3\n</answer>\n<answer>\n4\n</answer>\n",  # two answer blocks
    "<think>\na <answer>3</answer>\n</think>\n<answer>\n4\n</answer>\n",  # an answer inside the reasoning
    "<think>\na\n</think>\nso\n<answer>\n4\n</answer>\n",  # text between the blocks
    STRICT + "trailing",
    "<think>\na </THINK>\n</think>\n<answer>\n4\n</answer>\n",  # a tag in another case inside a block
    "<think>\na\n</think>\n<answer>\n3 < /answer> <Answer >4\n</answer>\n",  # ... or with spaces
    STRICT + "<|im_end|>more",  # text after the end marker
])
def test_format_rewards_pay_exactly_one_think_block_then_one_answer_block(completion):
    assert score("r1_strict_format", completion) == 0.0
    soft = completion.replace("\n", " ")
    assert score("r1_soft_format", soft) == 0.0


@pytest.mark.parametrize("end", ["<|im_end|>", "</s>", "<|im_end|>\n<|endoftext|><|endoftext|>", "<|eot_id|>"])
def test_format_rewards_ignore_end_of_turn_markers_at_the_very_end(end):
    assert score("r1_strict_format", STRICT + end) == 1.0
    assert score("r1_soft_format", STRICT.replace("\n", " ") + end) == 1.0


def test_format_rewards_are_linear_on_many_unclosed_tags():
    """Tempered bodies scan each position a bounded number of times: 200k tags are no backtracking bomb."""
    for name in ("r1_strict_format", "r1_soft_format"):
        assert score(name, "<think>\n" + "<think>" * 200_000) == 0.0
        assert score(name, "<think>\na\n</think>\n<answer>\n" + "x" * 500_000) == 0.0
