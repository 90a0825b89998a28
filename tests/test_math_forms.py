"""The final-answer forms real completions use (issue 37), each drawn many ways: the right value pays, a wrong one
in the same form does not.

Each test draws a value, a wrong value (never equal to it) and the form's free parts (labels, filler reasoning,
indentation, wording), and scores both with the reward itself.
"""

from __future__ import annotations

import re
from fractions import Fraction
from math import factorial

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reward_plugins.math import rewards

FORMS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SCORE = rewards.math_answer.bind({}).score_one

values = st.integers(-10**6, 10**6)
positive = st.integers(1, 10**6)
offsets = st.integers(1, 1000)
reasoning = st.sampled_from(["", "She has 3 + 4 = <<3+4=7>>7 apples.\n", "We add them up: 12 + 18.\n\n",
                             "Step 1: read the question.\nStep 2: compute.\n", "Thus the total follows.\n"])
indent = st.sampled_from(["", "  ", "        ", "\t"])


def pays(completion: str, gold: str) -> bool:
    return SCORE(completion, answer=gold) == 1.0


@FORMS
@given(values, offsets, reasoning, indent,
       st.sampled_from(["A: {}", "A:{}", "Ans: {}", "**A:** {}", "Final answer {}", "Final answer: {}",
                        "**Answer**: {}", "Answer: {}", "#### {}", "**Final Answer:** {}"]))
def test_a_short_label_at_the_start_of_the_last_line(value, offset, before, pad, label):
    assert pays(f"{before}{pad}{label.format(value)}", str(value))
    assert not pays(f"{before}{pad}{label.format(value + offset)}", str(value))


@FORMS
@given(st.sampled_from(["blue", "Yes", "no", "East", "Tuesday", "odd", "even", "circle"]), reasoning, indent,
       st.sampled_from(["# Answer\n\n{}", "## Final Answer\n{}", "# Answer\n\n**{}**", "\\boxed{{{}}}"]),
       st.sampled_from([str.lower, str.upper, str.capitalize]))
def test_a_word_under_an_answer_heading_or_in_a_box_against_a_text_gold(word, before, pad, form, case):
    other = {"blue": "red", "yes": "no", "no": "yes", "east": "west", "tuesday": "friday", "odd": "even",
             "even": "odd", "circle": "square"}[word.lower()]
    gold = f"\\text{{{case(word)}}}"
    assert pays(f"{before}{pad}{form.format(word)}", gold)
    assert not pays(f"{before}{pad}{form.format(other)}", gold)


@FORMS
@given(positive, offsets, reasoning,
       st.sampled_from(["The answer is -${}$.", "The answer is - \\({}\\).", "so $x$ = -${}$", "Answer: −${}$",
                        "Thus we get -\\[{}\\]", "# Answer\n\n-${}$"]))
def test_a_sign_written_outside_the_math_delimiters(value, offset, before, form):
    assert pays(before + form.format(value), str(-value))
    assert not pays(before + form.format(value), str(value))  # the sign counts: -5 is not 5
    assert not pays(before + form.format(value + offset), str(-value))


@FORMS
@given(st.integers(2, 10**5), offsets, reasoning, indent,
       st.sampled_from(["The answer is that there are {} apples.", "There are {} apples in the basket.",
                        "She will have {} dollars left.", "The total number of ways is {}.",
                        "In all, {} students passed."]))
def test_a_sentence_under_the_answer_heading_that_states_the_value(value, offset, before, pad, sentence):
    assert pays(f"{before}# Answer\n\n{pad}{sentence.format(value)}", str(value))
    assert not pays(f"{before}# Answer\n\n{pad}{sentence.format(value + offset)}", str(value))
    assert not pays(f"{before}# Answer\n\n{pad}Maybe {sentence.format(value)[0].lower()}{sentence.format(value)[1:]}",
                    str(value))  # hedged: a guess


@FORMS
@given(st.integers(1, 9), st.integers(1, 7), st.integers(2, 9), reasoning,
       st.sampled_from(["The answer is {}.", "# Answer\n\n{}", "A: {}", "Final Answer: {}"]),
       st.sampled_from(["{a}*{b}!", "{a} * {b}!", "{b}! * {a}", "{b}!*{a}", "({a}+{b})!/({a}!*{b}!)",
                        "{a}*{b}!/{c}"]))
def test_a_plain_text_expression_with_stars_and_factorials(a, b, c, before, form, expression):
    text = expression.format(a=a, b=b, c=c)
    value = _value(text)
    gold = str(value) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"
    assert pays(before + form.format(text), gold)
    first_factor = Fraction(a if text.startswith(str(a)) else factorial(b))
    if first_factor != value:
        assert not pays(before + form.format(text), str(first_factor))  # never its first factor


@FORMS
@given(values, offsets, reasoning,
       st.sampled_from(["\\boxed{{{} \\text{{ apples, since we add them}}}}",
                        "\\boxed{{{}. This is because the sum is even}}",
                        "\\boxed{{{}, since both counts are known}}",
                        "\\boxed{{{} \\text{{, which is the total}}}}",
                        "$\\boxed{{{}. We add the two parts}}$"]))
def test_prose_inside_a_box_after_the_answer(value, offset, before, form):
    assert pays(before + form.format(value), str(value))
    assert not pays(before + form.format(value + offset), str(value))


def _value(text: str) -> Fraction:
    """The exact value of a drawn factorial expression, computed apart from the reward (no eval)."""
    tokens = re.findall(r"\d+!|\d+|[-+*/()!]", text)

    def atom(i):
        if tokens[i] == "(":
            v, i = expr(i + 1)
            i += 1  # ")"
        else:
            v, i = Fraction(int(tokens[i].rstrip("!"))), i + 1
            if tokens[i - 1].endswith("!"):
                v = Fraction(factorial(int(v)))
        if i < len(tokens) and tokens[i] == "!":
            v, i = Fraction(factorial(int(v))), i + 1
        return v, i

    def term(i):
        v, i = atom(i)
        while i < len(tokens) and tokens[i] in "*/":
            w, j = atom(i + 1)
            v, i = (v * w if tokens[i] == "*" else v / w), j
        return v, i

    def expr(i):
        v, i = term(i)
        while i < len(tokens) and tokens[i] in "+-":
            w, j = term(i + 1)
            v, i = (v + w if tokens[i] == "+" else v - w), j
        return v, i

    return expr(0)[0]
