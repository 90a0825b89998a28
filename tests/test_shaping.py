"""The shaping pack: overlong and repetition penalties, cosine and length against a correctness reward, exactly."""

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


# -- cosine and length: shaped by a correctness reward the shaping reward runs itself ----------------------------------

COSINE_GRID = [(length, right, max_len) for max_len in (1000, 64) for right in (True, False)
               for length in (0, 1, 16, 250, 500, 999, 1000, 1001, 5000)]


@pytest.mark.parametrize("max_len", [1000, 64])
def test_cosine_equals_trls_port_of_open_r1s_formula_on_a_grid(max_len):
    """TRL's get_cosine_scaled_reward is open-r1's (src/open_r1/rewards.py, get_cosine_scaled_reward, at commit
    1416fa0: the same five parameters and min + 0.5 * (max - min) * (1 + cos(progress * pi))) in tokens, with the
    progress clamped at 1; both judge correctness with math-verify on these boxed answers."""
    from trl.rewards import get_cosine_scaled_reward

    params = {"max_len": max_len, "min_value_wrong": -2.0, "max_value_wrong": -0.25, "min_value_correct": 0.1,
              "max_value_correct": 3.0}
    theirs = get_cosine_scaled_reward(**params)
    ours = get_reward("cosine").bind(params)
    lengths = [length for length, _, m in COSINE_GRID if m == max_len]
    for answer in (r"\boxed{\frac{1}{3}}", r"\boxed{\frac{1}{2}}"):
        ids = [[7] * length for length in lengths]
        expected = theirs([[{"content": answer}]] * len(ids), [r"\frac{1}{3}"] * len(ids), ids)
        got = [ours.score_one(answer, None, answer=r"\frac{1}{3}", completion_ids=i) for i in ids]
        assert got == pytest.approx(expected, abs=1e-12), answer


def test_cosine_open_r1_defaults_and_its_none_cases():
    cosine = get_reward("cosine")
    assert cosine.score_one(r"\boxed{4}", answer="4", completion_ids=[0] * 500) == pytest.approx(0.75)
    assert cosine.score_one(r"\boxed{5}", answer="4", completion_ids=[0] * 500) == pytest.approx(-0.75)
    assert cosine.score_one(r"\boxed{5}", answer="4", completion_ids=[]) == -1.0
    assert cosine.score_one(r"\boxed{4}", answer="4") is None  # tokens, but no completion_ids: offline text
    assert cosine.score_one(r"\boxed{4}", answer="\\frac{") is None  # a gold that does not parse: no verdict
    chars = cosine.bind({"unit": "chars", "max_len": 9})
    assert chars.score_one(r"\boxed{4}", answer="4") == pytest.approx(0.5)  # 9 characters: the end of the cosine


def test_the_correctness_reward_is_any_registered_one_with_its_params():
    exact = get_reward("cosine").bind({"correctness": "accuracy", "max_len": 10})
    assert exact.score_one("<answer>4</answer>", answer="4", completion_ids=[0] * 5) == pytest.approx(0.75)
    assert exact.score_one("<answer> 4.0</answer>", answer="4", completion_ids=[0] * 5) == pytest.approx(-0.75)
    half = get_reward("cosine").bind({"correctness": "repetition", "correct_at": -0.5, "max_len": 10})
    assert half.score_one("a b a b a b", completion_ids=[0] * 10) == 0.5  # repetition -0.25 >= -0.5: "correct"


def test_bad_correctness_is_refused_when_the_spec_is_read():
    with pytest.raises(ValueError, match="itself a length-shaped reward"):
        get_reward("cosine").bind({"correctness": "cosine"})
    with pytest.raises(ValueError, match="math_answer"):
        get_reward("length").bind({"correctness": "math_answer"})
    with pytest.raises(ValueError, match="bad parameters for reward 'math'"):
        get_reward("cosine").bind({"correctness_params": {"no_such_param": 1}})


def test_cosine_in_an_ensemble_runs_its_correctness_reward_in_the_worker():
    from grpo_host import Ensemble

    rows = [{"completion": r"\boxed{4}", "answer": "4"}, {"completion": r"\boxed{5}", "answer": "4"}]
    with Ensemble.from_spec("math:0, cosine(max_len=4)") as ensemble:
        result = ensemble.score_rows(rows, completion_ids=[[1, 2], [1, 2]])
    assert result.values == {"math": [1.0, 0.0], "cosine": [pytest.approx(0.75), pytest.approx(-0.75)]}
    assert result.total == [pytest.approx(0.75), pytest.approx(-0.75)]


def test_length_is_kimis_rule_within_each_prompts_group():
    length = get_reward("length")
    right, wrong = r"\boxed{4}", r"\boxed{5}"
    completions = [right, right, wrong, wrong, right, right]
    prompts = ["a", "a", "a", "a", "b", "b"]
    ids = [[0] * n for n in (10, 30, 20, 50, 7, 7)]  # group a: min 10, max 50; group b: equal lengths
    values = [s.value for s in length.score_items(completions, prompts, {"answer": ["4"] * 6, "completion_ids": ids})]
    assert values == pytest.approx([0.5, 0.0, 0.0, -0.5, 0.0, 0.0])  # lambda(20) = 0.25, but it is wrong: min(0, .)
    golds = ["4", "\\frac{", "4", "4", "4", "4"]  # row 1's gold does not parse: no verdict, no value, not in the group
    values = [s.value for s in length.score_items(completions, prompts, {"answer": golds, "completion_ids": ids})]
    assert values[1] is None and values[:4] == [pytest.approx(0.5), None, pytest.approx(0.0), pytest.approx(-0.5)]
    # tokens unknown
    assert [s.value for s in length.score_items(completions, prompts, {"answer": ["4"] * 6})] == [None] * 6
