"""Hostile and arbitrary input never breaks the contract (hypothesis).

* The spec parser returns items or raises :class:`SpecError`, nothing else.
* The row loader yields a row or a :class:`DataError` in its place for any bytes, and ``normalize``
  returns a row or raises :class:`DataError` for any JSON value.
* Every built-in reward, on any completion text (and, for ``math`` and ``code``, through the ensemble
  with its timeout, as a run scores), returns a float in its documented range or None, never raises,
  and never takes longer than its timeout.
* ``math`` pays no answer that offers alternatives and pays a documented correction; reads mixed numbers,
  units, percents, decimals against exact values, ``i`` and degrees as its rule says; pays plain-text,
  GSM8K and long-tailed answers; reads a megabyte of hostile text to a verdict.  json_schema has its own properties
  (tests/test_json_schema_properties.py).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grpo_host import Ensemble, get_reward
from grpo_host.data import normalize, read_rows
from grpo_host.errors import DataError, SpecError
from grpo_host.scoring.spec import parse_spec

FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])

SPEC_PIECES = st.sampled_from(["accuracy", "math", "r1_int", "(", ")", "[", "]", ":", ",", "=", "'", '"', "2",
                               "-1e9", "on_error", "timeout", "skip", " ", "x", "\\", "{", "}", "nan", "1" * 5000])
SPEC_TEXT = st.one_of(st.text(max_size=200), st.lists(SPEC_PIECES, max_size=40).map("".join))


@FAST
@given(SPEC_TEXT)
def test_the_spec_parser_returns_items_or_raises_spec_error(text):
    try:
        items = parse_spec(text)
    except SpecError:
        return
    assert items and all(item.name for item in items)


@pytest.mark.parametrize("text", ["math(x=" + "[" * 5000 + "]" * 5000 + ")", "math:nan", "math:1e999",
                                  "math [timeout=-1]", "math [timeout=nan]", "math [timeout=1e999]"])
def test_deep_and_invalid_spec_values_are_spec_errors(text):
    with pytest.raises(SpecError):
        parse_spec(text)


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                    max_leaves=20)
ROWISH = st.dictionaries(st.sampled_from(["prompt", "messages", "instruction", "input", "output", "question",
                                          "answer", "completion", "x"]), JSON, max_size=6)


@FAST
@given(st.one_of(JSON, ROWISH))
def test_normalize_returns_a_row_or_raises_data_error(raw):
    try:
        row = normalize(raw, "row 1")
    except DataError as exc:
        assert str(exc).startswith("row 1: ")
        return
    assert isinstance(row, dict) and row["prompt"]


@FAST
@given(st.binary(max_size=400), st.sampled_from([".jsonl", ".json", ".csv"]))
def test_the_row_loader_never_raises_mid_file(tmp_path_factory, data, suffix):
    path = tmp_path_factory.mktemp("rows") / f"rows{suffix}"
    path.write_bytes(data)
    try:
        rows = list(read_rows(path))
    except DataError as exc:  # a whole-file problem (.json that is not a list), named by the file
        assert str(exc).startswith(str(path))
        return
    except UnicodeDecodeError:
        pytest.fail("a CSV that is not UTF-8 must be a DataError naming the file")
    for where, row in rows:
        assert where.startswith(("line ", "row ")) and (isinstance(row, DataError) or row is not None)


HOSTILE = st.one_of(
    st.text(max_size=300),
    st.lists(st.sampled_from(["<think>", "</think>", "<answer>", "</answer>", "\n", "\\boxed{", "}", "{", "```",
                              "```python\n", "9^{9^{9}}", "x" * 1000, "\x00", "\u202e", "0.5", "-", "e"]),
             max_size=30).map("".join),
)
RANGES = {  # documented ranges of the inline built-ins (None is always allowed)
    "accuracy": (0.0, 1.0), "r1_int": (0.0, 1.0), "r1_strict_format": (0.0, 1.0), "r1_soft_format": (0.0, 1.0),
    "think_format": (0.0, 1.0), "r1_xmlcount": (-math.inf, 1.0), "repetition": (-1.0, 0.0), "overlong": (-1.0, 0.0),
}


@FAST
@given(HOSTILE, st.text(max_size=20))
@pytest.mark.parametrize("name", sorted(RANGES))
def test_inline_built_ins_return_a_float_in_range_or_none(name, completion, answer):
    reward = get_reward(name)
    value = reward.score_one(completion, None, answer=answer or "4", completion_ids=list(range(len(completion))))
    low, high = RANGES[name]
    assert value is None or (math.isfinite(value) and low <= value <= high)


@pytest.fixture(scope="module")
def worker_ensemble():
    spec = "math [timeout=8], code(timeout=1) [timeout=20]"
    with Ensemble.from_spec(spec, workers=1) as ensemble:
        yield ensemble


@SLOW
@given(HOSTILE, st.sampled_from(["4", "\\frac{1}{2}", "x**2 + 1", "1.5e-3", "[1, 2)"]))
def test_math_and_code_through_the_ensemble_return_in_range_within_their_timeouts(worker_ensemble, completion, gold):
    result = worker_ensemble.score([completion], [None], answer=[gold], tests=[[{"input": "", "output": "1"}]])
    assert result.row_errors == {}, result.row_errors  # a counted timeout is allowed; an error out of a reward not
    for name in ("math", "code"):
        value = result.values[name][0]
        assert value is None or 0.0 <= value <= 1.0



# -- math: one property per class of issue 22 (hedges, readings, right answers), through the reward itself ---------

MATH = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
INTS = st.integers(-999, 999)


def _math(completion, gold, **params):
    return get_reward("math").bind(params or None).score_one(completion, answer=gold)


HEDGES = [
    r"\boxed{{{a}}} or \boxed{{{b}}}", r"It is either ${a}$ or ${b}$.", r"$y = {a}$ or $y = {b}$",
    r"\boxed{{{a}}} \quad\text{{or}}\quad \boxed{{{b}}}", r"<answer>{a}</answer> so \boxed{{{b}}}",
    r"\boxed{{{a} = {b}}}", r"Perhaps \boxed{{{a}}}. Perhaps \boxed{{{b}}}.", "The answer is {a} or {b}.",
    r"\boxed{{x = {a} \text{{ or }} x = {b}}}", "So the answer is {a}.\n#### {b}",
    r"\boxed{{{a}}}. Wait, maybe \boxed{{{b}}}",
]


@MATH
@given(INTS, INTS, st.sampled_from(HEDGES))
def test_math_never_pays_an_answer_that_offers_alternatives(a, b, template):
    if a == b:
        return
    completion = template.format(a=a, b=b)
    assert _math(completion, str(a)) == 0.0 and _math(completion, str(b)) == 0.0, completion


@MATH
@given(INTS, INTS, st.sampled_from(["I first got \\boxed{{{a}}}; correcting that, \\boxed{{{b}}}",
                                    "<answer>{a}</answer> Wait, that is wrong. <answer>{b}</answer>",
                                    "The answer is {a}. Actually I made a mistake: the answer is {b}."]))
def test_math_pays_a_withdrawn_answer_s_correction(a, b, template):
    if a == b:
        return
    completion = template.format(a=a, b=b)
    assert (_math(completion, str(b)), _math(completion, str(a))) == (1.0, 0.0), completion


@MATH
@given(st.integers(-50, 50), st.integers(1, 30), st.integers(2, 31))
def test_math_reads_mixed_numbers_as_the_grammar_does(whole, num, den):
    if num >= den or whole == 0:
        return
    from fractions import Fraction

    from latex2sympy2_extended import latex2sympy

    from reward_plugins.math.read import read_number

    text = rf"{whole}\frac{{{num}}}{{{den}}}"
    value = read_number(text).value
    assert value == (1 if whole > 0 else -1) * (abs(whole) + Fraction(num, den))
    assert value == Fraction(str(latex2sympy(text)))
    assert _math(rf"\boxed{{{text}}}", f"{value.numerator}/{value.denominator}") == 1.0
    assert _math(rf"\boxed{{{text}}}", f"{whole * num}/{den}") == 0.0  # the product it is not


UNITS = [("m", "cm", 100), ("km", "m", 1000), ("kg", "g", 1000), ("h", "min", 60), ("ft", "in", 12),
         ("L", "mL", 1000)]


@MATH
@given(st.integers(1, 10_000), st.sampled_from(UNITS), st.sampled_from([r"{v} \text{{ {u}}}", "{v} {u}", "{v}{u}"]))
def test_math_compares_units_when_both_sides_have_one(value, units, form):
    big, small, factor = units
    gold = form.format(v=value, u=big)
    assert _math(rf"\boxed{{{form.format(v=value * factor, u=small)}}}", gold) == 1.0
    assert _math(rf"\boxed{{{form.format(v=value, u=small)}}}", gold) == 0.0
    assert _math(rf"\boxed{{{value} \text{{ s}}}}", rf"{value} \text{{ kg}}") == 0.0
    assert _math(rf"\boxed{{{value}}}", gold) == 1.0  # no unit on one side: the number alone


@MATH
@given(st.integers(1, 99), st.integers(1, 9))
def test_math_reads_a_percent_below_one_only_as_a_fraction(digits, places):
    p = f"0.{digits:0{places}d}" if len(str(digits)) <= places else f"0.{digits}"
    from fractions import Fraction

    assert _math(rf"\boxed{{{p}\%}}", p) == 0.0
    hundredth = Fraction(p) / 100
    assert _math(rf"\boxed{{{p}\%}}", f"{hundredth.numerator}/{hundredth.denominator}") == 1.0


@MATH
@given(st.integers(1, 500), st.integers(3, 97), st.integers(7, 12))
def test_math_pays_a_decimal_only_as_the_exact_value_s_rounding(num, den, digits):
    from decimal import ROUND_HALF_EVEN, Decimal, localcontext
    from fractions import Fraction

    value = Fraction(num, den)
    if value.denominator in (1, 2, 4, 5, 8, 10, 16, 20, 25):  # terminating: every rounding is exact
        return
    with localcontext() as ctx:
        ctx.prec = 60
        exact = Decimal(value.numerator) / Decimal(value.denominator)
    step = Decimal(1).scaleb(-digits)
    rounded = exact.quantize(step, rounding=ROUND_HALF_EVEN)
    gold = rf"\frac{{{num}}}{{{den}}}"
    assert _math(rf"\boxed{{{rounded}}}", gold) == (1.0 if abs(rounded - exact) <= Decimal("1e-6") * exact else 0.0)
    for wrong in (rounded + step, rounded - step):
        assert _math(rf"\boxed{{{wrong}}}", gold) == 0.0, wrong
    assert _math(rf"\boxed{{{float(value)!r}}}", gold) == 1.0  # Python's repr: the same binary double
    n = num // den
    assert _math(rf"\boxed{{{n}}}", f"{n}.{'0' * (digits - 1)}1") == 0.0  # a finer decimal gold is not its integer


@MATH
@given(st.integers(-9, 9), st.integers(-9, 9))
def test_math_reads_i_as_the_imaginary_unit(a, b):
    if b == 0:
        return
    re_part, im_part = a * a - b * b, 2 * a * b
    gold = f"{re_part} + {im_part}i" if im_part >= 0 else f"{re_part} - {-im_part}i"
    assert _math(rf"\boxed{{({a} + {b}i)^2}}", gold) == 1.0
    assert _math(rf"\boxed{{({a} + {b}i)^2}}", f"{re_part + 1} + {im_part}i") == 0.0


@MATH
@given(st.integers(1, 23))
def test_math_pays_degrees_for_radians_written_with_pi(k):
    from fractions import Fraction

    angle = Fraction(15 * k, 180)
    gold = rf"\frac{{{angle.numerator}\pi}}{{{angle.denominator}}}"
    assert _math(rf"\boxed{{{15 * k}^\circ}}", gold) == 1.0
    assert _math(rf"\boxed{{{15 * k + 15}^\circ}}", gold) == 0.0
    assert _math(rf"\boxed{{{15 * k}^\circ}}", str(15 * k)) == 1.0  # against a number, the number


@MATH
@given(st.integers(-10**6, 10**6), st.sampled_from([
    "So the answer is {n}.", "Final Answer: The final answer is {n}. I hope it is correct.",
    "She pays {n} in all.\n#### {n}",
    "The answer: {n}", r"\boxed{{{n}}}" + " and then some more text" * 2000]))
def test_math_pays_plain_text_gsm8k_and_long_tailed_answers(n, template):
    completion = template.format(n=n)
    assert (_math(completion, str(n)), _math(completion, str(n + 1))) == (1.0, 0.0), completion[:80]


@pytest.mark.slow  # 12 megabytes read, about 0.1-0.5 s each
@pytest.mark.parametrize("pattern", ["\\boxed{", "\\fbox{{", "\\[ x ", "\\( x ", "$ 1 ", "<answer> ", "#### 12\n",
                                     "the answer is 12 and ", "1234567890", "{}", "\\boxed{\\boxed{", "3 or ", "{",
                                     "</think>", "Answer: 4? ", "# Answer\n\n", "\\boxed{1} wait ",
                                     "\\boxed{0.333...} ", "\\boxed{\\sin 30^\\circ} "])
def test_math_reads_a_megabyte_of_hostile_text(pattern):
    """A megabyte of an adversarial pattern is read to a verdict (benchmarks/math_reading.py times it)."""
    text = (pattern * (1_000_000 // len(pattern) + 1))[:1_000_000]
    assert _math(text, "7") == 0.0


@pytest.mark.slow  # megabyte gaps, about 0.1 s each
@pytest.mark.parametrize(("gap", "spans", "boxes"), [(" ", 1.0, 0.0), ("\\text{ ", 1.0, 0.0), (", or", 1.0, 0.0),
                                               ("wait ", 1.0, 1.0)])
def test_math_reads_answers_a_megabyte_apart(gap, spans, boxes):
    """A megabyte between two answers: spaces (a run of boxes, one list), open braces, hedges, corrections.

    A final span is looked for in the last max_chars characters only, so the first span is out of reach there."""
    filler = gap * (1_000_000 // len(gap))
    assert _math(f"$6$ {filler} $7$", "7") == spans
    assert _math(f"\\boxed{{6}}{filler}\\boxed{{7}}", "7") == boxes
