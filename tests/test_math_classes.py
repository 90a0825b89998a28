"""The `math` reward and the R1 format rewards, one generated property per class of issue 22's second check.

Each test draws cases of its class (values, spellings, joiners, prefixes, scales) rather than fixed strings, and
checks the reward itself (`score_one`), so a class is closed only when every member of it is.  The strings of the
issue and of tests/test_properties.py are not reused.
"""

from __future__ import annotations

from fractions import Fraction

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grpo_host import get_reward

CASES = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
VALUES = st.integers(-500, 500)


def _math(completion: str, gold: str) -> float | None:
    return get_reward("math").bind(None).score_one(completion, answer=gold)


def _format(name: str, completion: str) -> float:
    return get_reward(name).bind(None).score_one(completion)


# -- hedges: no spelling of "a, or else b" pays either value --------------------------------------------------------

HEDGED = [
    r"\boxed{{{a} \text{{ (or }} {b} \text{{)}}}}", r"\boxed{{{a} \text{{ or possibly }} {b}}}",
    r"\boxed{{{a}}}\;\mathrm{{or}}\;\boxed{{{b}}}", r"\boxed{{{a} \text{{ if }} x > 0, {b} \text{{ otherwise}}}}",
    r"\boxed{{{a} \lor {b}}}", r"\boxed{{{a}}}. Wait, or is it \boxed{{{b}}}?", "Answer: {a}? {b}?",
    r"\boxed{{{a}}}. Hmm, actually it might be \boxed{{{b}}}.", r"\boxed{{{a} \approx {b}}}",
    r"<answer>{a}</answer> Hence \boxed{{{b}}}.", "The answer is {a}.\n\n#### {b}", r"Either \({a}\) or \({b}\).",
    r"\fbox{{{a}}} \text{{ or }} \boxed{{{b}}}", "Final answer: {a} or {b}",
]


@CASES
@given(VALUES, VALUES, st.sampled_from(HEDGED))
def test_no_hedge_pays_either_alternative(a, b, template):
    if a == b:
        return
    completion = template.format(a=a, b=b)
    assert (_math(completion, str(a)), _math(completion, str(b))) == (0.0, 0.0), completion


@CASES
@given(VALUES, st.integers(1, 500))
def test_plus_minus_pays_only_a_gold_that_is_both(a, k):
    completion = rf"\boxed{{{a} \pm {k}}}"
    assert _math(completion, str(a + k)) == 0.0 and _math(completion, str(a - k)) == 0.0
    assert _math(completion, f"{a - k}, {a + k}") == 1.0


@CASES
@given(VALUES, VALUES, st.sampled_from(["<think>I get \\boxed{{{a}}}.</think>\nThe answer is {b}.",
                                        "reasoning, so \\boxed{{{a}}}</think>\n<answer>{b}</answer>",
                                        "<think>\\boxed{{{a}}}</think>\\boxed{{{b}}}"]))
def test_reasoning_inside_think_is_no_answer(a, b, template):
    if a == b:
        return
    completion = template.format(a=a, b=b)
    assert (_math(completion, str(b)), _math(completion, str(a))) == (1.0, 0.0), completion
    assert _math(f"<think>so \\boxed{{{a}}}", str(a)) == 0.0  # the reasoning never closed: no answer


@CASES
@given(VALUES, VALUES, st.sampled_from([
    "\\boxed{{{a}}}. Wait, that was an arithmetic error; redoing it gives \\boxed{{{b}}}.",
    "<answer>{a}</answer>\nOops, wrong sign. Correct: <answer>{b}</answer>",
    "The answer is {a}. Scratch that, I misread: the answer is {b}.",
    "#### {a}\nThat is incorrect; recomputing.\n#### {b}",
    "\\boxed{{{a}}}. Hold on, let me reconsider the second step. It gives \\boxed{{{b}}}.",
    "So \\boxed{{{a}}}. Hmm, that can't be right. Let me double-check: \\boxed{{{b}}}",
]))
def test_a_withdrawn_answer_gives_way_to_its_correction(a, b, template):
    if a == b:
        return
    completion = template.format(a=a, b=b)
    assert (_math(completion, str(b)), _math(completion, str(a))) == (1.0, 0.0), completion


# -- units: every SI prefix, temperatures on three scales -----------------------------------------------------------

PREFIX = {"G": 9, "M": 6, "k": 3, "": 0, "c": -2, "m": -3, r"\mu ": -6, "n": -9}
BASES = ["m", "g", "s", "Hz", "W", "J", "Pa", "V", "A", "mol", "Wh", "eV", "N"]


@CASES
@given(st.integers(1, 999), st.sampled_from(sorted(PREFIX)), st.sampled_from(sorted(PREFIX)), st.sampled_from(BASES),
       st.sampled_from([r"{v} \text{{ {u}}}", r"{v}\,\mathrm{{{u}}}", "{v} {u}"]))
def test_units_with_any_si_prefix_convert_and_other_prefixes_differ(value, big, small, base, form):
    if PREFIX[big] <= PREFIX[small] or big.startswith("\\") and form == "{v} {u}":
        return
    factor = 10 ** (PREFIX[big] - PREFIX[small])
    gold = form.format(v=value, u=big + base)
    assert _math(rf"\boxed{{{form.format(v=value * factor, u=small + base)}}}", gold) == 1.0
    assert _math(rf"\boxed{{{form.format(v=value, u=small + base)}}}", gold) == 0.0
    assert _math(rf"\boxed{{{value}}}", gold) == 1.0  # a side without a unit: its number


@CASES
@given(st.integers(1, 999), st.sampled_from([("Ki", "k", 10), ("Mi", "M", 20), ("Gi", "G", 30)]))
def test_binary_prefixes_are_powers_of_two(n, prefixes):
    binary, decimal, power = prefixes
    gold = rf"{n} \text{{ {binary}B}}"
    assert _math(rf"\boxed{{{n * 2**power * 8} \text{{ bit}}}}", gold) == 1.0
    assert _math(rf"\boxed{{{n} \text{{ {decimal}B}}}}", gold) == 0.0


TEMPERATURE_FORMS = [r"{t}^\circ \text{{{s}}}", "{t} °{s}", r"{t}\,^{{\circ}}\mathrm{{{s}}}"]


@CASES
@given(st.integers(-60, 200), st.sampled_from(TEMPERATURE_FORMS))
def test_temperatures_convert_between_scales(celsius, form):
    fahrenheit = Fraction(9, 5) * celsius + 32
    if fahrenheit.denominator != 1:
        return
    gold = form.format(t=celsius, s="C")
    assert _math(rf"\boxed{{{form.format(t=fahrenheit, s='F')}}}", gold) == 1.0
    assert _math(rf"\boxed{{{form.format(t=celsius, s='F')}}}", gold) == (1.0 if celsius == -40 else 0.0)
    from decimal import Decimal

    kelvin = Decimal(celsius) + Decimal("273.15")
    assert _math(rf"\boxed{{{kelvin} \text{{ K}}}}", gold) == 1.0
    assert _math(rf"\boxed{{{kelvin + 1} \text{{ K}}}}", gold) == 0.0


@CASES
@given(st.integers(1, 99), st.sampled_from(["x", r"\pi", r"\sqrt{2}", "ab"]), st.sampled_from(["m", "g", "s"]))
def test_a_unit_after_an_expression_is_compared(k, symbol, unit):
    gold = rf"{k}{symbol} \text{{ k{unit}}}"
    assert _math(rf"\boxed{{{k}{symbol} \text{{ {unit}}}}}", gold) == 0.0
    assert _math(rf"\boxed{{{k * 1000}{symbol} \text{{ {unit}}}}}", gold) == 1.0


# -- percent, spelled out ----------------------------------------------------------------------------------------------

@CASES
@given(st.integers(1, 999), st.sampled_from([r"{p} \text{{ percent}}", r"{p}\text{{\%}}", "{p} percent", r"{p}\,\%",
                                           "{p} per cent", r"{p} \text{{ pct}}"]))
def test_a_percent_in_words_is_a_percent(tenths, form):
    p = Fraction(tenths, 10)
    text = f"{tenths // 10}.{tenths % 10}"
    hundredth = p / 100
    assert _math(rf"\boxed{{{form.format(p=text)}}}", f"{hundredth.numerator}/{hundredth.denominator}") == 1.0
    assert _math(rf"\boxed{{{form.format(p=text)}}}", text) == (1.0 if p >= 1 else 0.0)


# -- decimals inside expressions and repeating decimals ------------------------------------------------------------

@CASES
@given(st.integers(1, 60), st.integers(3, 61), st.integers(6, 9), st.sampled_from([r"\pi", r"\sqrt{3}", "e"]))
def test_a_decimal_inside_an_expression_pays_only_as_its_rounding(num, den, digits, constant):
    from decimal import Decimal, localcontext

    value = Fraction(num, den)
    if value.denominator in (1, 2, 4, 5, 8, 10, 16, 20, 25, 40, 50):
        return
    with localcontext() as ctx:
        ctx.prec = 40
        step = Decimal(1).scaleb(-digits)
        rounded = (Decimal(value.numerator) / Decimal(value.denominator)).quantize(step)
    gold = rf"\frac{{{value.numerator}{constant}}}{{{value.denominator}}}"
    gap = abs(Fraction(rounded) - value)
    if gap == Fraction(1, 10**6) * value:
        return  # at the tolerance exactly (3/13 at 6 digits): sympy's floating bound may fall either side
    within = gap < Fraction(1, 10**6) * value
    assert _math(rf"\boxed{{{rounded} {constant}}}", gold) == (1.0 if within else 0.0)
    for wrong in (rounded + 3 * step, rounded - 3 * step):
        if str(wrong).endswith("0"):
            continue  # inside an expression a decimal's trailing zeros are not counted (RULE)
        assert _math(rf"\boxed{{{wrong} {constant}}}", gold) == 0.0, wrong


@CASES
@given(st.integers(1, 500), st.integers(3, 97), st.integers(7, 10))
def test_a_truncation_that_is_not_the_rounding_is_not_paid(num, den, digits):
    from decimal import ROUND_DOWN, ROUND_HALF_EVEN, Decimal, localcontext

    with localcontext() as ctx:
        ctx.prec = 50
        exact = Decimal(num) / Decimal(den)
        step = Decimal(1).scaleb(-digits)
        truncated, rounded = exact.quantize(step, ROUND_DOWN), exact.quantize(step, ROUND_HALF_EVEN)
    if truncated == rounded:
        return
    assert _math(rf"\boxed{{{truncated}}}", f"{num}/{den}") == 0.0, truncated
    assert _math(rf"\boxed{{{rounded}}}", f"{num}/{den}") == (1.0 if abs(rounded - exact) <= exact / 10**6 else 0.0)


@CASES
@given(st.integers(0, 99), st.integers(1, 999), st.integers(1, 3),
       st.sampled_from([r"{w}.{f}\overline{{{r}}}", "{w}.{f}({r})", "{w}.{f}{r}{r}...", r"{w}.{f}{r}{r}\ldots"]))
def test_repeating_decimals_are_exact(fixed, period, width, form):
    r = f"{period:0{width}d}"[-width:]
    if len(set(r)) == 1 and width > 1 or r == "9" * width or r == "0" * width:
        return  # 0.(11) is 0.(1); 0.(9) and 0.(0) are terminating values written the long way
    f = str(fixed) if fixed else ""
    text = form.format(w=0, f=f, r=r)
    value = Fraction(int(f or "0"), 10 ** len(f)) + Fraction(int(r), (10**width - 1) * 10 ** len(f))
    assert _math(rf"\boxed{{{text}}}", f"{value.numerator}/{value.denominator}") == 1.0, text
    assert _math(rf"\boxed{{{text}}}", f"{value.numerator + 1}/{value.denominator}") == 0.0, text


# -- complex numbers in polar form, angles inside functions ---------------------------------------------------------

POLAR = [(r"\frac{{\pi}}{{2}}", (0, 1)), (r"\pi", (-1, 0)), (r"\frac{{3\pi}}{{2}}", (0, -1)),
         (r"\frac{{\pi}}{{4}}", "sqrt2"), (r"2\pi", (1, 0))]


@CASES
@given(st.integers(1, 20), st.sampled_from(POLAR),
       st.sampled_from(["{r}e^{{i{t}}}", r"{r}\left(\cos {t} + i \sin {t}\right)"]))
def test_polar_forms_equal_their_cartesian_values(r, polar, form):
    angle, value = polar
    if value == "sqrt2":  # r sqrt2 e^{i pi/4} is r + r i
        text, (re_part, im_part) = form.format(r=f"{r}\\sqrt{{2}}", t=angle.format()), (r, r)
    else:
        text, (re_part, im_part) = form.format(r=r, t=angle.format()), (r * value[0], r * value[1])
    assert _math(rf"\boxed{{{text}}}", f"{re_part} + {im_part}i") == 1.0, text
    assert _math(rf"\boxed{{{text}}}", f"{re_part} + {im_part + 1}i") == 0.0, text


@CASES
@given(st.integers(-20, 20), st.integers(1, 20), st.sampled_from(["{a} + {b}j", "{a}+{b}j", "({a} + {b}j)"]))
def test_j_after_a_number_is_the_imaginary_unit_when_no_i_is_written(a, b, form):
    text = form.format(a=a, b=b)
    assert _math(rf"\boxed{{{text}}}", f"{a} + {b}i") == 1.0, text
    assert _math(rf"\boxed{{{a} + {b}i}}", text) == 1.0, text
    assert _math(rf"\boxed{{{text}}}", f"{a} - {b}i") == 0.0, text
    assert _math(rf"\boxed{{x_j + {b}}}", f"x_i + {b}") == 0.0  # an index j is a variable


TRIG = {("sin", 30): "1/2", ("cos", 60): "1/2", ("tan", 45): "1", ("sin", 90): "1", ("cos", 180): "-1",
        ("sin", 150): "1/2", ("tan", 135): "-1", ("cos", 0): "1"}


@CASES
@given(st.sampled_from(sorted(TRIG)), st.sampled_from([r"\{f} {d}^\circ", r"\{f}({d}^{{\circ}})", r"\{f} {d}°"]))
def test_degrees_inside_a_trigonometric_function_are_radians(key, form):
    function, degrees = key
    text = form.format(f=function, d=degrees)
    assert _math(rf"\boxed{{{text}}}", TRIG[key]) == 1.0, text
    assert _math(rf"\boxed{{{text}}}", f"{TRIG[key]} + 1") == 0.0, text


@CASES
@given(st.integers(1, 11), st.sampled_from([r"x = {d}^\circ", r"\{{{d}^\circ, {e}^\circ\}}", r"\theta = {d}°"]))
def test_degrees_inside_equations_and_sets_convert(k, form):
    d, e = 15 * k, 15 * k + 180
    a, b = Fraction(d, 180), Fraction(e, 180)
    text = form.format(d=d, e=e)
    gold = (rf"\{{\frac{{{a.numerator}\pi}}{{{a.denominator}}}, \frac{{{b.numerator}\pi}}{{{b.denominator}}}\}}"
            if "," in text else rf"\frac{{{a.numerator}\pi}}{{{a.denominator}}}")
    assert _math(rf"\boxed{{{text}}}", gold) == 1.0, (text, gold)


# -- plain-text final answers ---------------------------------------------------------------------------------------

PLAIN = ["**Final answer**: {n}", "__Answer:__ {n}", "Answer:\n{n}", "# Answer\n\n{n}", "Final answer — {n}",
         "It takes a few steps.\n\n**{n}**", "Adding them up.\n{n}", "The answer is {n} cookies.",
         "The final answer is: ${n}$", "{n}<|im_end|>", "So the answer is {n}.<|endoftext|>"]


@CASES
@given(st.integers(-10**5, 10**5), st.sampled_from(PLAIN))
def test_plain_text_final_answers_pay(n, template):
    completion = template.format(n=n)
    assert (_math(completion, str(n)), _math(completion, str(n + 1))) == (1.0, 0.0), completion


@CASES
@given(st.integers(1, 999), st.integers(1, 999), st.sampled_from(["So", "Thus,", "Therefore", "Hence", "In total,"]),
       st.sampled_from(["the total is {n} dollars.", "{a} + {b} = {n}.", "she has {n} cookies left.", "we get {n}"]))
def test_a_concluding_sentence_with_one_result_pays_it(a, b, opener, body):
    n = a + b
    completion = f"First we add the two amounts.\n{opener} {body.format(a=a, b=b, n=n)}"
    assert (_math(completion, str(n)), _math(completion, str(a)), _math(completion, str(n + 1))) == (1.0, 0.0, 0.0)
    assert _math(f"{opener} maybe {n}.", str(n)) == 0.0  # a guess
    assert _math(f"{opener} it is {a} or {n}.", str(n)) == 0.0 and _math(f"{opener} we need {n} more.", str(n)) == 0.0


@CASES
@given(st.integers(2, 10**4), st.sampled_from(["squared", "cubed", "million", "thousand", "more", "less", "factorial"]))
def test_a_number_and_a_word_that_changes_it_is_not_that_number(n, word):
    assert _math(f"The answer is {n} {word}.", str(n)) == 0.0


# -- the strict format -------------------------------------------------------------------------------------------------

TAGS = st.sampled_from(["<THINK>", "</Think>", "<answer >", "< /answer>", "</ANSWER>", "<think >"])


@CASES
@given(st.text("ab \n", min_size=1, max_size=12).filter(str.strip), TAGS,
       st.sampled_from(["", "<|im_end|>", "</s>", "<|im_end|>\n<|endoftext|><|endoftext|>"]))
def test_strict_format_is_one_think_block_then_one_answer_block(body, tag, end):
    ok = f"<think>\n{body}\n</think>\n<answer>\n{body}\n</answer>\n"
    assert _format("r1_strict_format", ok + end) == 1.0
    assert _format("r1_strict_format", ok.replace(f"\n{body}\n</think>", f"\n{body}{tag}\n</think>")) == 0.0
    assert _format("r1_strict_format", ok.replace(f"\n{body}\n</answer>", f"\n{tag}{body}\n</answer>")) == 0.0
    assert _format("r1_strict_format", ok + end + "x") == 0.0
    soft = ok.replace("\n", " ")
    assert _format("r1_soft_format", soft + end) == 1.0
    assert _format("r1_soft_format", soft.replace("</think>", f"{tag}</think>")) == 0.0
