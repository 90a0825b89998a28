"""The `math` reward against truth nobody here wrote, and its comparison rule at the edges.

* reasoning-gym items (a dataset answer, an equal rewrite and a perturbed answer each): >= 99 % agreement;
* math-verify's own test cases: >= 98 % agreement, except the listed conventions this reward does not follow;
* hand-written pitfalls, one group per failure class of issues 12 and 22 (tiny values, the last box, hedges, scientific
  notation, Python-syntax golds, percent, thousands separators, the number target, escaped dollars), and the
  rule's edges (tiny and huge values, exact against approximate, intervals and tuples, sets, units, x = 2);
* never a false positive anywhere.

The data files and the script that builds them are in tests/data/math/.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from reward_plugins.math import find, read, rewards

DATA = Path(__file__).parent / "data" / "math"


def _rows(name: str) -> list[dict]:
    return [json.loads(line) for line in (DATA / name).read_text().splitlines()]


def _tally(results: list[tuple[dict, float | None, int]]) -> tuple[float, list, list]:
    """(agreement, disagreeing rows, false positives) over (row, score, expected) triples."""
    wrong = [(row, got) for row, got, expected in results if (got == 1.0) != bool(expected)]
    false_positives = [(row, got) for row, got, expected in results if got == 1.0 and not expected]
    return 1 - len(wrong) / len(results), wrong, false_positives


def _score(completion: str, gold: str, **params) -> float | None:
    return rewards.math_answer.bind(params).score_one(completion, answer=gold)


@pytest.mark.slow  # over 2 s: a whole truth set
def test_agrees_with_reasoning_gym_truth_and_pays_no_wrong_answer():
    rows = _rows("reasoning_gym_truth.jsonl")
    tasks = {row["task"] for row in rows}
    assert len(rows) >= 2000 and len(tasks) >= 15
    agreement, wrong, false_positives = _tally([(r, _score(r["completion"], r["gold"]), r["expected"]) for r in rows])
    assert false_positives == []
    assert agreement >= 0.99, wrong[:10]
    for task in tasks:  # no task is carried by the others
        mine = [r for r in rows if r["task"] == task]
        misses = [w for w in wrong if w[0]["task"] == task]
        assert len(misses) <= 0.05 * len(mine), (task, misses[:3])


@pytest.mark.slow  # over 2 s: a whole truth set
def test_agrees_with_real_completions_labelled_by_their_sources():
    """benchmarks/math.md's "math on real completions": 1,588 of 1,591 (99.8 %), no false accept; the three misses
    are right answers written as ``x^8 + \\cdots + 1``, ``(5, infinity)`` and a ``pmatrix`` with ``\\[8pt]``."""
    rows = _rows("real_completions.jsonl")
    assert len(rows) >= 1000 and len({r["source"] for r in rows}) >= 3
    agreement, wrong, false_positives = _tally([(r, _score(r["completion"], r["gold"]), r["correct"]) for r in rows])
    assert false_positives == []
    assert agreement >= 1588 / 1591, [(w[0]["id"], w[1]) for w in wrong]


# math-verify labels that are conventions of its own, which this reward does not follow (row: why).
CONVENTIONS_NOT_FOLLOWED = {
    ("1000.99", "1000,99"): "decimal comma: 1000,99 is read as the list 1000, 99 (or a thousands comma), never 1000.99",
    ("1,22", "1.22"): "decimal comma",
    ("2.74", "Soucis : 2,74 $ a.."): "decimal comma",
    ("0,111", "0.111"): "decimal comma",
    ("$\\\\boxed{35 cm} ++++++ \\\\boxed{4}$", "${35 cm,4}$"):
        "boxes separated by other text are not merged: the last box is the answer",
    ("$$(3, 3), (1, 1)$$", "$$\\boxed{(3, 3)} \\text{ for part (a) and } \\boxed{(1, 1)}$$"):
        "the last box is the answer",
    ("\\boxed{1} papers and \\boxed{2} bins", "$\\boxed{1,2}$"): "the last box is the answer",
    ("$y_{1}=-2 x^{2}+4 x+3, y_{2}=3 x^{2}+12 x+10$",
     "\\($y_1 = \\boxed{-2(x - 1)^2 + 5} \\) and \\( y_2 = \\boxed{3(x + 2)^2 - 2} \\) "): "the last box is the answer",
    ("$1 - \\frac{1}{\\mathrm{e}}$", "$1 + \\frac{1}{\\mathrm{e}}$"):
        "labelled equal upstream, but 1 - 1/e and 1 + 1/e differ: paying it would be a false positive",
    ("$10/9$", "Answer $ \\frac{1}{2} \\$ = \\frac{10}{9} $"):
        "an equation of two different numbers (1/2 = 10/9) is a false statement, not an answer (issue 22: 2 = 8)",
    ('$x = 1/3$', '$x = 5+5+1 = 1/3 \\approx 11$'):
        "a chain with a false link between numbers (5+5+1 = 7) is a false statement, as 2 = 8 is (issue 22)",
    ('$x = 11$', '$x = 5+5+1 = 7 =11$'):
        "a chain with a false link between numbers (5+5+1 = 7) is a false statement, as 2 = 8 is (issue 22)",
    ('$z = 1 + 1 = 2$', '$z = 3+3 = 2$'):
        "a chain with a false link between numbers (5+5+1 = 7) is a false statement, as 2 = 8 is (issue 22)",
}


def _math_verify_params(row: dict) -> dict:
    """A math-verify test's options as this reward's: its expression target is `number`, its places a tolerance."""
    params = {"tolerance": 10.0 ** -row["float_rounding"], "set_relations": row["allow_set_relation_comp"]}
    if "expr" in row["targets"]:
        params["extract"] = ["answer_tag", "boxed", "latex", "number"]
    return params


@pytest.mark.slow  # over 2 s: a whole truth set
def test_agrees_with_math_verify_test_suite_except_listed_conventions():
    rows = _rows("math_verify_cases.jsonl")
    assert len(rows) >= 250
    keys = {(r["gold"], r["pred"]) for r in rows}
    assert set(CONVENTIONS_NOT_FOLLOWED) <= keys  # every listed convention is a real upstream case
    results = [(r, _score(r["pred"], r["gold"], **_math_verify_params(r)), r["expected"]) for r in rows]
    kept = [t for t in results if (t[0]["gold"], t[0]["pred"]) not in CONVENTIONS_NOT_FOLLOWED]
    agreement, wrong, false_positives = _tally(kept)
    assert false_positives == []
    assert agreement >= 0.98, [(w[0]["gold"], w[0]["pred"], w[1]) for w in wrong]
    assert _tally(results)[2] == []  # not even among the conventions


# (gold, completion, expected): one group per failure class; the strings are new, not the issue's.
PITFALLS = [
    # tiny and huge exact values never compare equal when they differ
    (r"\frac{1}{3^{50}}", r"\boxed{\frac{1}{3^{51}}}", 0),
    (r"\frac{1}{100!}", r"\boxed{\frac{1}{101!}}", 0),
    (r"-\frac{1}{2^{60}}", r"\boxed{-\frac{1}{2^{61}}}", 0),
    ("0.00000003", r"\boxed{0.00000004}", 0),
    ("3e-12", r"\boxed{4e-12}", 0),
    (r"10^{-9}", r"\boxed{2 \times 10^{-9}}", 0),
    (r"2^{200}", r"\boxed{2^{200}+1}", 0),
    ("123456789012345678901234567890", r"\boxed{123456789012345678901234567891}", 0),
    ("1.0000001", r"\boxed{1.0000002}", 0),
    (r"\frac{1}{2^{60}}", r"\boxed{8.67e-19}", 0),
    (r"\frac{1}{2^{60}}", r"\boxed{8.673617379884035e-19}", 1),
    (r"\frac{1}{3^{50}}", r"\boxed{\frac{1}{3^{50}}}", 1),
    (r"\{\frac{1}{2^{99}}, 1\}", r"\boxed{\{\frac{1}{2^{98}}, 1\}}", 0),
    # exact against approximate: a relative tolerance
    (r"\sqrt{3}", r"\boxed{1.7320508}", 1),
    (r"\sqrt{3}", r"\boxed{1.732}", 0),
    (r"\pi", r"\boxed{3.14159265}", 1),
    (r"\pi", r"\boxed{3.1416}", 0),
    (r"\frac{2}{3}", r"\boxed{0.6666667}", 1),
    (r"\frac{2}{3}", r"\boxed{0.667}", 0),
    ("1/7", r"\boxed{0.142857142857}", 1),
    (r"2\sqrt{2}", r"\boxed{2.8284271247}", 1),
    (r"\{\frac{1}{2}, \frac{1}{3}\}", r"\boxed{\{0.5, 0.3333333\}}", 1),
    (r"\{\frac{1}{2}, \frac{1}{3}\}", r"\boxed{\{0.5, 0.333\}}", 0),
    # the last box (and the last answer tag) is the answer
    ("9", r"I first thought \boxed{7}. Wait, that's wrong; it is \boxed{9}.", 1),
    ("7", r"I first thought \boxed{7}. Wait, that's wrong; it is \boxed{9}.", 0),
    ("6", "<answer>4</answer> on second thought <answer>6</answer>", 1),
    ("4", "<answer>4</answer> on second thought <answer>6</answer>", 0),
    ("2, 3", r"The roots are \boxed{2} and \boxed{3}.", 1),
    (r"\{2, 3\}", r"Maybe \boxed{2}; then again the total gives \boxed{3}", 0),
    ("3", r"\boxed{3} or \boxed{5}", 0),
    ("3", r"\boxed{3}, \boxed{5}", 0),  # a hedge is a list, and a list is not the number
    # without a box, a math span is the answer only after an answer phrase or at the very end
    ("0", "We check the case $n = 0$ separately. The sum telescopes. I could not finish the computation.", 0),
    ("0", "We check the case $n = 0$ separately, so the answer is $3$.", 0),
    ("3", "We check the case $n = 0$ separately, so the answer is $3$, as the table shows for every $n$.", 1),
    ("2", "Solving, we get $x = 2$.", 1),
    # scientific notation: e is an exponent after a mantissa, Euler's number elsewhere
    ("6.022e23", r"\boxed{6.022 \times 10^{23}}", 1),
    ("6.022e23", r"\boxed{6.022\cdot10^{23}}", 1),
    ("6.022E+23", r"\boxed{602200000000000000000000}", 1),
    ("4.2e-7", r"\boxed{0.00000042}", 1),
    ("4.2e-7", r"\boxed{4.2e-6}", 0),
    ("-1.5e-10", r"\boxed{-1.5 \times 10^{-10}}", 1),
    ("-1.5e-10", r"\boxed{1.5 \times 10^{-10}}", 0),
    ("3e2", r"\boxed{300}", 1),
    ("7.38905609893065", r"\boxed{e^{2}}", 1),
    (r"e^{2}", r"\boxed{e^2}", 1),
    ("2e", r"\boxed{5.436563656918}", 1),
    ("9.109383701528e-31", "The mass is 9.109383701528e-31 kg, so \\boxed{9.109383701528e-31}", 1),
    ("9.109383701528e-31", r"\boxed{9.109383701529e-31}", 0),
    ("0.00137", "the answer is $1.37e-3$", 1),  # in a math span too
    ("0.00137", "so $y = 1.37e-3$ is the estimate, and the exact one is $1.38e-3$", 0),
    ("0.00137", r"\boxed{1.37*10^-3}", 1),
    ("1e-500", r"\boxed{\frac{1}{10^{500}}}", 1),
    ("1e-500", r"\boxed{2e-500}", 0),
    ("1/3", r"\boxed{0.\overline{3}}", 1),
    ("1/6", r"\boxed{0.1\overline{6}}", 1),
    ("1/6", r"\boxed{0.1\overline{7}}", 0),
    # golds in Python/sympy syntax
    ("3*x**2 - 2*x + 1", r"\boxed{3x^2 - 2x + 1}", 1),
    ("3*x**2 - 2*x + 1", r"\boxed{1 - 2x + 3x^{2}}", 1),
    ("3*x**2 - 2*x + 1", r"\boxed{3*x**2 - 2*x + 1}", 1),
    ("3*x**2 - 2*x + 1", r"\boxed{3x^2 + 2x + 1}", 0),
    ("sqrt(2)/2", r"\boxed{\frac{\sqrt{2}}{2}}", 1),
    ("sqrt(2)/2", r"\boxed{\frac{1}{\sqrt{2}}}", 1),
    ("sqrt(2)/2", r"\boxed{0.70710678}", 1),
    ("sqrt(2)/2", r"\boxed{\sqrt{2}}", 0),
    ("pi/4", r"\boxed{\frac{\pi}{4}}", 1),
    ("exp(2*x)", r"\boxed{e^{2x}}", 1),
    ("Rational(3, 8)", r"\boxed{0.375}", 1),
    ("x**3 - 1", r"\boxed{(x-1)(x^2+x+1)}", 1),
    ("x**3 - 1", r"\boxed{(x-1)^3}", 0),
    ("-5*X**4/4 + C", r"\boxed{C - \frac{5x^{4}}{4}}", 1),
    ("2*log(x) + C", r"\boxed{2\ln(x) + C}", 1),
    ("3 + 2*I", r"\boxed{3+2i}", 1),
    ("-oo", r"\boxed{-\infty}", 1),
    ("(0, oo)", r"\boxed{(0, \infty)}", 1),
    ("(x - 2)**2", r"\boxed{x^2 - 4x + 4}", 1),
    ("(x - 2)**2", r"\boxed{x^2 - 4x - 4}", 0),
    # percent, with and without a space
    (r"45 \%", r"\boxed{45\%}", 1),
    (r"45 \%", r"\boxed{45}", 1),
    (r"45 \%", r"\boxed{0.45}", 1),
    (r"45 \%", r"\boxed{46 \%}", 0),
    ("45%", r"\boxed{45 percent}", 1),
    (r"12.5\%", r"\boxed{12.5 \%}", 1),
    ("0.45", r"\boxed{45 \%}", 1),
    ("0.45", r"\boxed{4.5 \%}", 0),
    # thousands separators
    ("2500000", r"\boxed{2\,500\,000}", 1),
    ("2500000", r"\boxed{2{,}500{,}000}", 1),
    ("2500000", r"\boxed{2,500,000}", 1),
    ("2500000", r"\boxed{2\ 500\ 000}", 1),
    ("2500000", r"\boxed{2,500,001}", 0),
    ("1,234.5", r"\boxed{1234.5}", 1),
    (r"12{,}345", r"\boxed{12345}", 1),
    # units are not part of the value
    ("5", r"\boxed{5\text{ cm}}", 1),
    ("5", r"\boxed{5 cm}", 1),
    ("5", r"\boxed{5\,\text{kg}}", 1),
    (r"5 \text{ cm}", r"\boxed{5}", 1),
    (r"45^\circ", r"\boxed{45}", 1),
    ("5", r"\boxed{5x}", 0),
    ("5", r"\boxed{5 m/s}", 1),
    ("5", r"\boxed{5 \text{ m}/\text{s}}", 1),
    ("1500", r"\boxed{1.5 · 10^{3}}", 1),
    ("28%", r"\boxed{28\,\%}", 1),
    ("12.5", r"\boxed{12.50 USD}", 1),
    ("5", r"\boxed{5\pi}", 0),
    # escaped dollars
    (r"\$7.25", r"\boxed{7.25}", 1),
    (r"\$1,200", r"\boxed{1200}", 1),
    (r"\$1,200", r"\boxed{\$1{,}200}", 1),
    (r"\$7.25", r"\boxed{7.52}", 0),
    # x = 2 against 2, intervals against tuples, sets
    ("2", r"\boxed{x = 2}", 1),
    ("x = 2", r"\boxed{2}", 1),
    ("x = 2", r"\boxed{y = 2}", 0),
    ("x = 2", r"\boxed{x = 3}", 0),
    ("[1, 3)", r"\boxed{[1,3)}", 1),
    ("[1, 3)", r"\boxed{[1,3]}", 0),
    ("(1, 3)", r"\boxed{1, 3}", 1),
    ("(1, 3)", r"\boxed{(3, 1)}", 0),
    ("(1, 3)", r"\boxed{[1, 3]}", 0),
    (r"\{1, 2, 3\}", r"\boxed{\{3, 2, 1\}}", 1),
    (r"\{1, 2, 3\}", r"\boxed{\{1, 2\}}", 0),
    (r"\{1, 2, 3\}", r"\boxed{\{1, 2, 3, 4\}}", 0),
    # issue 22: an answer that offers alternatives is not paid, a withdrawn one stops counting
    ("11", r"So it must be either $10$ or $11$.", 0),
    ("12", r"\boxed{12} or \boxed{21}", 0),
    ("-3", "$t = -3$ or $t = 5$", 0),
    ("21", r"\boxed{12} \quad\text{or}\quad \boxed{21}", 0),
    ("21", r"\boxed{12 = 21}", 0),
    ("21", r"\boxed{3 \cdot 7 = 21}", 1),  # a true equation of numbers is its value
    ("21", r"\boxed{n = 12 = 21}", 0),
    ("21", r"\boxed{n = 3 \cdot 7 = 21}", 1),
    ("21", r"\boxed{3\ 7}", 0),  # side by side: neither 3*7 nor 3+7 nor 37
    ("10", r"\boxed{3 \quad 7}", 0),
    ("21", "<answer>21</answer> hence \\boxed{12}", 0),
    ("21", r"I had \boxed{12}; that was a mistake, it is \boxed{21}", 1),
    ("21", r"I had \boxed{12}. Wait, perhaps \boxed{21}", 0),
    # issue 22: mixed numbers, units, percent below one, decimals that are not the exact value's rounding
    (r"2\frac{3}{5}", r"\boxed{\frac{13}{5}}", 1),
    (r"\frac{6}{5}", r"\boxed{2\frac{3}{5}}", 0),
    ("29/8", r"\boxed{3 5/8}", 1),
    ("15/8", r"\boxed{3 5/8}", 0),
    (r"4 \text{ km}", r"\boxed{4 \text{ m}}", 0),
    (r"4 \text{ km}", r"\boxed{4000 \text{ m}}", 1),
    ("2.5 hours", r"\boxed{150 \text{ min}}", 1),
    ("0.25", r"\boxed{0.25\%}", 0),
    (r"\frac{5}{7}", r"\boxed{0.7142862}", 0),
    (r"\frac{5}{7}", r"\boxed{0.7142857}", 1),
    ("3.0000002", r"\boxed{3}", 0),
    # issue 22: i is the imaginary unit, degrees against radians
    ("2i", r"\boxed{(1+i)^2}", 1),
    ("1-i", r"\boxed{\frac{2}{1+i}}", 1),
    ("5", r"\boxed{|3-4i|}", 1),
    (r"\frac{5\pi}{6}", r"\boxed{150^\circ}", 1),
    (r"\frac{5\pi}{6}", r"\boxed{120^\circ}", 0),
    # complex numbers written by hand
    ("-15.0 + 3.0i", r"\boxed{3i - 15}", 1),
    ("-4.0 - 9.0i", r"\boxed{-4-9\,i}", 1),
    ("-4.0 - 9.0i", r"\boxed{-4+9i}", 0),
]
NUMBER_TARGET = [  # extract=["number"]: the last plain number in prose
    ("3.75", "The package weighs 3.75kg", 1),
    ("3", "The package weighs 3.75kg", 0),
    ("2048.5", "Total area: 2,048.5m²", 1),
    ("2048", "Total area: 2,048.5m²", 0),
    ("0.25", "it is about .25", 1),
    ("25", "it is about .25", 0),
    ("2", "so the answer is 2x", 0),
    ("14.99", "it costs $14.99 in total", 1),
    ("1500", "The plant produces 1.5e3 units a day", 1),
    ("40", "The answer: 40%", 1),
]


def test_pitfalls_of_every_failure_class():
    results = [((g, c), _score(c, g), e) for g, c, e in PITFALLS]
    results += [((g, c), _score(c, g, extract=["number"]), e) for g, c, e in NUMBER_TARGET]
    agreement, wrong, false_positives = _tally(results)
    assert false_positives == []
    assert wrong == []


PLAIN_TEXT = [  # (gold, completion, label): final answers without a box
    ("$3.25$", "Final Answer: The final answer is 3.25. I hope it is correct.", 1),
    ("$3.25$", "Final Answer: The final answer is 3.26. I hope it is correct.", 0),
    ("12", "So the answer is 12.", 1),
    ("12", "So the answer is 13.", 0),
    ("$\\frac{1}{2}$", "Therefore the answer is 0.5.", 1),
    ("$\\frac{3}{4}$", "Therefore, the final answer is 3/4.", 1),
    ("$\\frac{3}{4}$", "Therefore, the final answer is 4/3.", 0),
    ("72", "She sold 48 + 24 = 72 clips.\nFinal Answer: 72", 1),
    ("$-7$", "Hence the answer is -7.", 1),
    ("$-7$", "Hence the answer is 7.", 0),
    ("$1000$", "The answer is 1,000.", 1),
    ("$\\sqrt{2}$", "The final answer is $\\sqrt{2}$. I hope it is correct.", 1),
    ("$\\sqrt{2}$", "The final answer is $\\sqrt{3}$. I hope it is correct.", 0),
    ("18", "Janet makes 9 * 2 = 18 dollars.\n#### 18", 1),
    ("18", "Janet makes 9 * 2 = 18 dollars.\n#### 19", 0),
]
_PLAIN_MATH_VERIFY = """
import json, sys
from math_verify import parse, verify
print(json.dumps([bool(verify(parse(g), parse(p))) for g, p in json.load(sys.stdin)]))
"""


def test_plain_text_answers_agree_with_plain_math_verify():
    """Without a box, plain math-verify (its default extraction, which evaluates plain text, so it runs in its own
    process here) reads "The final answer is 3.25." and "So the answer is 12."; so must this reward, without eval."""
    import subprocess
    import sys

    pairs = [(g, c) for g, c, _ in PLAIN_TEXT]
    plain = subprocess.run([sys.executable, "-c", _PLAIN_MATH_VERIFY], input=json.dumps(pairs), text=True,
                           capture_output=True, check=True, timeout=120)
    reference = json.loads(plain.stdout)
    assert reference == [bool(label) for _, _, label in PLAIN_TEXT]
    assert [_score(c, g) == 1.0 for g, c, _ in PLAIN_TEXT] == reference


@pytest.mark.parametrize(
    "gold",
    ["-896*x**5 + 3*x**2 - 7", "5.02823971358051e-18", r"28 \%", r"\$12.50", "1,000", r"1\,000", r"1{,}000", ".4",
     "sqrt(2)/2", "Rational(1, 3)", "E**x + pi", "-Integral(x**2*sin(x), x) + C", r"x \in [1, 3)", "7"],
)
def test_every_gold_format_parses(gold):
    assert find.parse_gold(gold) is not None
    assert rewards.check_gold({"answer": gold}) is None


@pytest.mark.parametrize(
    "text",
    ["9**9**9", "(lambda: 1)()", "x.__class__", "__import__('os')", "[x for x in y]", "f(x=1) * 2", "x**2 if y else 1",
     "sqrt(2)[0]", "*".join(["x"] * 500)],
)
def test_python_reader_reads_only_its_whitelist(text):
    start = time.process_time()  # CPU seconds: the work, whatever else the machine does
    assert read.read_python(text) is None
    assert time.process_time() - start < 1


def test_tolerance_is_relative_and_applies_only_to_decimals():
    def eq(gold, pred, **params):
        return _score(rf"\boxed{{{pred}}}", gold, **params) == 1.0

    assert eq(r"\frac{1}{3}", "0.333", tolerance=1e-2) and not eq(r"\frac{1}{3}", "0.333")
    assert not eq("1/3", "0.3333333", tolerance=0)  # 0: decimals must be exact too
    assert eq("0.25", r"\frac{1}{4}", tolerance=0)
    assert eq("1e-30", r"10^{-30}") and not eq("1e-30", "1.1e-30", tolerance=1e-2)
    assert eq("6.0e30", "6000000000000000000000000000001.0") and not eq("6.0e30", "6.1e30")
    assert not eq("1000000", "1000001")  # exact: a relative 1e-6 never makes integers equal
    assert not eq(r"\frac{1000000}{3}", r"\frac{1000001}{3}")
    assert eq("3.14159265", "3.141592653589793")  # the more precise decimal rounds to the less precise one
    assert not eq("3.14159", "3.14158")


def test_rewards_show_states_the_rule():
    description = rewards.math_answer.description
    assert rewards.RULE in description
    assert rewards.HEDGE_RULE in description and "Python/sympy syntax" in description
    fields = rewards.MathParams.model_fields
    assert "relative" in fields["tolerance"].description and "exactly" in fields["tolerance"].description
