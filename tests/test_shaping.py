"""Overlong and repetition penalties: the exact formulas."""

import pytest

from grpo_host import get_reward


def overlong(length, **params):
    return get_reward("overlong").bind(params).score_one("x" * length, None, completion_ids=list(range(length)))


@pytest.mark.parametrize(("length", "expected"), [(0, 0.0), (768, 0.0), (769, -1 / 256), (896, -0.5), (1024, -1.0),
                                                  (5000, -1.0)])
def test_overlong_ramp(length, expected):
    assert overlong(length) == pytest.approx(expected)


def test_overlong_units_and_validation():
    chars = get_reward("overlong").bind({"unit": "chars", "max_length": 10, "cache": 5})
    assert chars.score_one("x" * 8) == pytest.approx(-0.6)
    assert get_reward("overlong").score_one("text without ids") is None  # tokens unknown offline
    with pytest.raises(ValueError, match=r"cache \(20\) must not exceed max_length \(10\)"):
        get_reward("overlong").bind({"max_length": 10, "cache": 20})


def test_overlong_gets_completion_ids_from_trl():
    reward = get_reward("overlong").bind({"max_length": 4, "cache": 2})
    assert reward(prompts=["p", "p"], completions=["a", "b"], completion_ids=[[1, 2], [1, 2, 3]]) == [0.0, -0.5]


def test_repetition():
    rep = get_reward("repetition")
    assert rep.score_one("the cat sat on the mat") == 0.0
    assert rep.score_one("a b c a b c") == pytest.approx(-(1 - 3 / 4))
    assert rep.score_one("too short") == 0.0
    assert rep.bind({"ngram_size": 1, "max_penalty": -2}).score_one("a a a a") == pytest.approx(-1.5)
