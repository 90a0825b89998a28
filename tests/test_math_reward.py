"""The `math` reward: reading, the comparison rule's plumbing, safety on hostile completions, cheap plain numbers.

Agreement with outside truth (math-verify's cases, reasoning-gym items, hand-written pitfalls) and the rule's
edges are in tests/test_math_truth.py.
"""

from __future__ import annotations

import json
import random
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from conftest import run_cli

from grpo_host import Ensemble, get_reward
from grpo_host.testing import assert_discovered, assert_listing_is_light, check_examples, data_check, load_pack
from reward_plugins.math import compare, find, read, rewards

TOWER = r"The answer is \boxed{9^{9^{9^{9}}}}"


@pytest.fixture(scope="module")
def math_reward():
    return load_pack("math").registry.reward("math")


def score(reward, completion, answer, **params):
    return reward.bind(params).score_one(completion, answer=answer)


def test_installed_pack_registers_math_and_listing_stays_light():
    record = assert_discovered("math", ["math"])
    assert record.dist == "grpo-host"
    assert_listing_is_light("math", ("sympy", "math_verify", "latex2sympy2_extended", "torch"))


@pytest.mark.parametrize(
    ("completion", "answer", "expected"),
    [
        (r"so $\boxed{\frac{2}{4}}$", r"\frac{1}{2}", 1.0),
        (r"so \boxed{0.5}", "1/2", 1.0),
        (r"\boxed{\sqrt{12}}", r"2\sqrt{3}", 1.0),  # a raw gold is wrapped: not read as 2
        (r"\boxed{2}", r"2\sqrt{3}", 0.0),
        (r"\boxed{[1, 3)}", "[1,3)", 1.0),
        (r"\boxed{(1, 3)}", "[1,3)", 0.0),
        (r"the set is $\{3, 1, 2\}$", r"\{1,2,3\}", 1.0),
        (r"the set is $\{3, 1\}$", r"\{1,2,3\}", 0.0),
        (r"$x^2 + 2x + 1$ ... final: \boxed{(x+1)^2}", "x^2+2x+1", 1.0),
        ("<think>steps</think><answer>\\frac{3}{4}</answer>", "0.75", 1.0),
        ("<answer>42</answer> and later \\boxed{41}", "42", 0.0),  # an answer block and a box that disagree
        ("<answer>42</answer> and later \\boxed{42}", "42", 1.0),
        ("<answer></answer>", "42", 0.0),
        (r"\boxed{0.3333333}", "1/3", 1.0),
        (r"\boxed{0.333}", "1/3", 0.0),
        (r"\boxed{-7}", "-7", 1.0),
        (r"\boxed{7}", 7, 1.0),  # a numeric gold column
        ("I give up", "42", 0.0),
    ],
)
def test_equivalences(math_reward, completion, answer, expected):
    assert score(math_reward, completion, answer) == expected


def test_parameters_change_the_verdict(math_reward):
    assert score(math_reward, r"\boxed{0.3333}", "1/3", tolerance=1e-4) == 1.0
    assert score(math_reward, r"\boxed{0.3333}", "1/3", tolerance=1e-6) == 0.0
    relation, interval = r"\boxed{x > 1}", r"(1, \infty)"
    assert score(math_reward, relation, interval) == 0.0
    assert score(math_reward, relation, interval, set_relations=True) == 1.0
    assert score(math_reward, "The total is 1,234 apples.", "1234") == 0.0
    assert score(math_reward, "The total is 1,234 apples.", "1234", extract=["boxed", "number"]) == 1.0
    assert score(math_reward, "<answer>5</answer> \\boxed{6}", "6", extract=["boxed"]) == 1.0
    with pytest.raises(ValueError, match="tolerance"):
        math_reward.bind({"tolerance": 0.5})
    with pytest.raises(ValueError, match="extract"):
        math_reward.bind({"extract": ["everything"]})


@pytest.mark.parametrize("gold", ["", "   ", r"\frac{1}{", r"\sqrt{", "$$", "x" * 30_000])
def test_unparseable_gold_is_not_applicable(math_reward, gold):
    assert score(math_reward, r"\boxed{1}", gold) is None
    # the row check reports what does not parse; an empty gold is the column check's to report
    assert (rewards.check_gold({"answer": gold}) is None) == (not gold.strip())


def test_answers_are_found_anywhere_in_a_long_completion(math_reward):
    long = "blah " * 200_000 + r"\boxed{42}"
    assert score(math_reward, long, "42") == 1.0
    assert score(math_reward, r"\boxed{42}" + " blah" * 10_000, "42", max_chars=1000) == 1.0  # long text after it
    assert score(math_reward, r"\boxed{4" + " " * 2000 + "}", "4", max_chars=1000) == 0.0  # too long to be read


def _numbers(rng: random.Random):
    """Plain numbers written the ways models write them, some equal to each other."""
    while True:
        value = Fraction(rng.randrange(-60, 200), rng.choice([1, 1, 2, 3, 4, 7, 8])) / rng.choice([1, 1, 10**9])
        forms = [
            str(round(value)),
            f"{float(value):.{rng.randrange(1, 12)}f}",
            f"{float(value):.{rng.randrange(1, 12)}e}",
            ("-" if value < 0 else "") + rf"\frac{{{abs(value.numerator)}}}{{{value.denominator}}}",
            f"{value.numerator}/{value.denominator}",
            rng.choice(["0.5", "-0.5", "3.0", "2.50", "0.3333333", "2.0000002", "1.5000001", "007", "0.25", "45\\%"]),
            f"{float(value) * rng.choice([1, 1.0000001, 1.001]):.{rng.randrange(0, 10)}f}",
        ]
        yield rng.choice(forms), forms


def test_plain_numbers_get_the_same_verdict_with_or_without_sympy():
    """Two plain numbers skip sympy; the verdict must be the one the sympy path (verify + the rule) gives.

    The paths share the rule but not the code: Fractions here, sympy values through math-verify's verify and
    the replaced numeric step there.  Pairs of two decimals are left out: only the fast path knows how many
    digits each was written with (the half-unit clause of the rule).
    """
    rng, gen = random.Random(7), _numbers(random.Random(8))
    params, compared = rewards.MathParams(), 0
    for _ in range(400):
        gold_text, forms = next(gen)
        pred_text = rng.choice(forms) if rng.random() < 0.5 else next(gen)[0]
        gold = find.parse_gold(gold_text)
        pred = read.read_answer(pred_text)
        assert gold.number is not None and pred.number is not None, (gold_text, pred_text)
        if gold.number.ulp is not None and pred.number.ulp is not None:
            continue
        a, b = gold.number.value, pred.number.value
        if a != b and abs(abs(a - b) / max(abs(a), abs(b)) - Fraction("1e-6")) < Fraction("1e-12"):
            continue  # exactly on the tolerance (0.142857 against 1/7): sympy's binary Floats decide that one
        slow = compare.equal(read.Parsed(sympy=tuple(gold.expressions())),
                            read.Parsed(sympy=tuple(pred.expressions())), params.tolerance)
        assert compare.equal(gold, pred, params.tolerance) == slow, (gold_text, pred_text)
        compared += 1
    assert compared > 200


CONSTANT_GOLDS = [r"2\sqrt{3}", r"\frac{\pi}{3}", "9", r"\sqrt{2}+1", "e^2", r"\ln 2", r"9\%", "(x+1)^2", r"\sqrt{x^2}",
                  r"\frac{x^2-1}{x-1}", "f(x)", "a+b", "x"]
CONSTANT_PREDS = [
    r"\sqrt{12}", r"3\sqrt{2}", "3.4641016", r"9\%", "9", r"\pi/3", "1.0471976", r"\frac{\pi}{6}", r"1+\sqrt{2}",
    "2.4142136", r"\sqrt{2}+2", "x", r"\{1,2\}", "e^{2}", "7.3890561", r"\log 2", r"\sqrt{3} \cdot 2", r"\infty",
    "x^2+2x+1", "x^2+1", "x+1", "|x|", "f(x)", "b+a", "a+b+0.0000001", "(x-1)^2", "y",
]


@pytest.mark.parametrize("gold_text", CONSTANT_GOLDS)
def test_clearly_different_shortcut_gives_verify_verdicts(gold_text):
    """Expressions that clearly differ skip sympy's simplify; verdicts must equal verify's on every pair."""
    mv, params = compare.verifier(), rewards.MathParams()
    gold = find.parse_gold(gold_text)
    for pred_text in CONSTANT_PREDS:
        pred = read.read_answer(pred_text)
        golds, preds = gold.expressions(), pred.expressions()
        reference = mv.verify(golds, preds, float_rounding=params.tolerance, timeout_seconds=None)
        assert compare.equal(gold, pred, params.tolerance) == reference, pred_text


LATEX_SAMPLES = [
    r"\sqrt{12}", r"2\sqrt{3}", "(1,3]", r"\{5, 1, 2\}", "x^2 + 4x + 4", r"\frac{\pi}{3}", r"\pi/3", "(x+2)^2",
    r"\frac{6}{8}", "[1,3]", "x = 2", r"\frac{1}{2}+\frac{1}{3}", "1,000", "0,111", "1.5e3", r"50\%", "007",
    r"\begin{pmatrix}1&2\end{pmatrix}", "3+2i", r"x \in [1, 2)", r"\frac{1}{", "x^", r"\sin^2 x + \cos^2 x",
    r"28 \%", r"\{10 \%, 2\}",
]
_PARSE_ALL = """
import json, sys
from latex2sympy2_extended import latex2sympy
out = []
for text in json.load(sys.stdin):
    try:
        out.append(repr(latex2sympy(text)))
    except Exception as exc:
        out.append(type(exc).__name__)
print(json.dumps(out))
"""


def test_adapted_latex_parser_gives_the_same_values():
    """Number tokens built without eval and SLL-then-LL parsing must not change a single parse."""
    import subprocess

    plain = subprocess.run([sys.executable, "-c", _PARSE_ALL], input=json.dumps(LATEX_SAMPLES), text=True,
                           capture_output=True, check=True, timeout=120)
    adapted = subprocess.run([sys.executable, "-c", "from reward_plugins.math.read import mv; mv()\n" + _PARSE_ALL],
                             input=json.dumps(LATEX_SAMPLES), text=True, capture_output=True, check=True, timeout=120)
    assert json.loads(adapted.stdout) == json.loads(plain.stdout)
    assert "Exception" in json.loads(plain.stdout)  # the samples include inputs that do not parse


SIMPLE_LATEX = [
    r"- 35574 x^{6} + 22506 x^{5} - 107136 x", r"C - \frac{7 X^{9}}{9} + \frac{2 X^{6}}{7} - X^{5}",
    r"C + \frac{4 \left(4 - 5 x\right)^{\frac{3}{2}}}{3}", r"C + \left(- 6 x^{4} + 2 x^{3}\right) e^{x}",
    r"3 x^{3} \sin{\left(x \right)} - x^{3} \cos{\left(x \right)}", r"2\sqrt{3}", "x^2y", "-x^2", r"e^{2x}",
    r"2 \cdot 3 \times 4", "3 + 2i", r"\ln{\left(x^{2} + 1 \right)}", "0.5x", "12", r"\pi r^2", r"\frac{x}{2}y",
    r"\cos^{3}{\left(7 x - 7 \right)}", r"\sin^2(x) + \cos^2(x)", r"\tan(x)^2", r"2^{10}", r"(x+1)(x-1)",
    r"\arctan(x) - x", "a - b + c",
]
NOT_SIMPLE = [r"\frac12", "f(x)", r"x \left(x+1\right)", "E + 1", "I", r"\sin^{-1}(x)", r"\cos^3 x", "x = 2", "1, 2",
              "28 percentage", "5 cm", r"\log(x)", r"\int x dx", "a-", "(x+1", "x^{2", r"x_1", r"\{1\}", "|x|"]


@pytest.mark.parametrize("latex", SIMPLE_LATEX)
def test_simple_latex_reader_gives_latex2sympy_values(latex):
    """The grammar-free reader of polynomial-style LaTeX must give the value latex2sympy gives."""
    import sympy
    from latex2sympy2_extended import latex2sympy

    mine = read.read_simple_latex(latex)
    theirs = latex2sympy(latex)
    theirs = theirs.xreplace({s: sympy.I if s.name == "i" else sympy.Symbol(s.name, real=True)
                              for s in theirs.free_symbols})  # i is the imaginary unit, as the reward reads it
    assert mine is not None and sympy.simplify(mine - theirs) == 0, (mine, theirs)


@pytest.mark.parametrize("latex", NOT_SIMPLE)
def test_simple_latex_reader_leaves_the_rest_to_the_grammar(latex):
    assert read.read_simple_latex(latex) is None


def _integer_sets(rng: random.Random, n: int) -> list[str]:
    """Intervals and sets of integers as answers write them (spacing, signs, zeros, repeats, long numbers), and the
    edge cases the grammar reads otherwise (a reversed interval is a tuple, [2, 2] a set, an empty or open set)."""
    cases = ["(5,2)", "[2,2]", "(-0, 3)", "[007, 9)", r"\{\}", r"\{1,\}", "(1,2,3)", r"\{1,1,2\}", "[-5,-3)"]
    for _ in range(n):
        nums = [str(rng.choice([0, rng.randrange(-60, 60), rng.randrange(-10**12, 10**12)]))
                for _ in range(rng.randrange(1, 6))]
        pad = lambda: rng.choice(["", " ", "  "])  # noqa: E731
        if rng.random() < 0.5:
            cases.append(f"{pad()}{rng.choice('([')}{pad()}{nums[0]}{pad()},{pad()}{nums[-1]}{pad()}{rng.choice(')]')}")
        else:
            cases.append(pad() + "\\{" + f"{pad()},{pad()}".join(nums) + "\\}" + pad())
    return cases


def test_integer_intervals_and_sets_are_read_as_the_grammar_reads_them():
    """The grammar-free reader of integer intervals and sets gives the grammar's values exactly: the same sympy
    tree, the written order a set keeps for math-verify, the same string fallback; the rest it leaves alone."""
    from sympy import srepr

    read_fast = 0
    for text in _integer_sets(random.Random(39), 300):
        fast = read.read_integer_set(text)
        if fast is None:
            continue
        read_fast += 1
        slow = read.parse_latex(f"${text}$")
        assert [type(x) for x in fast] == [type(x) for x in slow], text
        assert fast[1] == slow[1] and srepr(fast[0]) == srepr(slow[0]), text
        assert getattr(fast[0], "_unsorted_args", None) == getattr(slow[0], "_unsorted_args", None), text
    assert read_fast > 150
    assert [read.read_integer_set(t) for t in ("(5,2)", "[2,2]", r"\{\}", "(1,2,3)", "[007, 9)")] == [None] * 5


@pytest.mark.slow  # over 2 s: verify on 361 pairs, each set pair through sympy's symmetric_difference (~10 ms)
def test_integer_intervals_and_sets_get_verify_verdicts():
    """Two integer intervals, or two integer sets, are decided without ``verify``; the verdict must be verify's on
    every pair (small numbers, so that many pairs are equal: reordered, repeated, respaced)."""
    mv, params = compare.verifier(), rewards.MathParams()
    rng = random.Random(7)
    texts = ["(1, 3]", "(1,3]", "[1, 3]", "(1, 3)", "[-2, 0)", r"\{1, 2\}", r"\{2,1\}", r"\{1, 2, 2\}", r"\{1\}"]
    texts += [rng.choice("([") + f"{a}, {a + rng.randrange(1, 3)}" + rng.choice(")]") for a in range(-2, 2)]
    texts += ["\\{" + ", ".join(str(rng.randrange(0, 3)) for _ in range(rng.randrange(1, 4))) + "\\}" for _ in range(6)]
    decided = 0
    for gold_text in texts:
        gold = find.parse_gold(gold_text)
        for pred_text in texts:
            pred = read.read_answer(pred_text)
            golds, preds = gold.expressions(), pred.expressions()
            decided += compare._integer_sets_equal(golds, preds) is not None
            reference = mv.verify(golds, preds, float_rounding=params.tolerance, timeout_seconds=None)
            assert compare.equal(gold, pred, params.tolerance) == reference, (gold_text, pred_text)
    assert decided > len(texts) ** 2 / 3


def test_integrals_that_differ_skip_integration():
    """reasoning-gym writes some golds as unevaluated integrals; a different integrand is told without integrating."""
    mv, params = compare.verifier(), rewards.MathParams()
    gold = find.parse_gold("-3*Integral(x**3*cos(2*x), x) + C")
    for completion, expected in [(r"\boxed{-3*Integral(x**5*cos(2*x), x) + C}", False),
                                 (r"\boxed{C - 3*Integral(x**3*cos(2*x), x)}", True)]:
        pred = read.read_answer(find.last_boxed(completion))
        assert compare._clearly_unequal(gold.expressions(), pred.expressions(), params.tolerance) == (not expected)
        assert compare.equal(gold, pred, params.tolerance) == expected
        assert mv.verify(gold.expressions(), pred.expressions(), float_rounding=params.tolerance,
                         timeout_seconds=None) == expected


def test_gold_is_parsed_once_per_group_and_each_repeated_answer_judged_once(math_reward):
    find.parse_gold.cache_clear()
    rewards._pays_text.cache_clear()
    gold = r"$\frac{\pi}{3}$"
    for completion in [r"\boxed{\pi/3}", r"\boxed{60}", r"\boxed{\frac{\pi}{3}}", "no idea"] * 4:
        score(math_reward, completion, gold)
    assert find.parse_gold.cache_info().misses == 1
    info = rewards._pays_text.cache_info()  # three boxed answers, four times each ("no idea" is prose: not kept)
    assert (info.misses, info.hits) == (3, 9)


def test_completion_text_never_reaches_sympify_or_parse_expr(math_reward):
    """A profiler hook sees every Python call: none may hand completion text to sympy's eval-based parsers."""
    import sympy
    from sympy.parsing import sympy_parser

    watched = {sympy_parser.parse_expr.__code__, sympy_parser.eval_expr.__code__, sympy.sympify.__code__}
    seen: list[str] = []

    def spy(frame, event, arg):
        if event == "call" and frame.f_code in watched:
            first = frame.f_locals.get("a", frame.f_locals.get("s", frame.f_locals.get("code")))
            if isinstance(first, str):
                seen.append(first)
        elif event == "c_call" and arg is eval:
            seen.append("eval()")

    def watch(fn):
        seen.clear()
        sys.setprofile(spy)
        try:
            fn()
        finally:
            sys.setprofile(None)
        return list(seen)

    mv = compare.verifier()
    # the spy works: math-verify's expression target does eval plain text
    assert watch(lambda: mv.parse("The answer is 1/2 + 3", [mv.ExprExtractionConfig()]))
    hostile = [
        "The answer is 1/2 + 3",
        "__import__('os').system('echo pwned')",
        r"\boxed{x**2 + 1}",
        "The final answer is 2*3 I hope",
        "<answer>1/2+3</answer>",
        r"$\boxed{\frac{1}{2}}$ and 17",
        r"<answer>\sqrt{2}*(3+4)</answer>",
        r"\boxed{1,000}",
        r"the result is $1.5e3$",
        r"\boxed{0.25} \boxed{3}",
        r"\boxed{sqrt(2)*3 + Rational(1, 3)}",  # Python syntax: ast-parsed and translated, never run
        r"<answer>__import__('os').system('echo pwned') * 2</answer>",
        r"\boxed{(lambda: 1)() * x}",
        r"\boxed{1.37e-3} and \boxed{6.02 \times 10^{23}}",
        r"\boxed{28 \%}",
        r"\boxed{\$1{,}000}",
    ]
    for completion in hostile:  # first pass: let sympy finish its lazy imports (they sympify constant names)
        score(math_reward, completion, "7")
        score(math_reward, completion, "7", extract=["number"])
    for completion in hostile:
        assert watch(lambda completion=completion: score(math_reward, completion, "7")) == [], completion
        assert watch(lambda completion=completion: score(math_reward, completion, "7",
                                                         extract=["number"])) == [], completion


@pytest.mark.slow  # waits out a timeout and a replacement worker's start
def test_hostile_tower_is_bounded_through_the_ensemble():
    """`\\boxed{9^{9^{9^{9}}}}` hangs sympy; in the ensemble it costs one counted timeout, and scoring goes on."""
    # 6 s: long enough for a replacement worker (the stuck one is killed) to import sympy within its first item
    with Ensemble.from_spec([{"name": "math", "timeout": 6}], workers=2) as ensemble:
        ensemble.score([r"\boxed{1}"], answer=["1"])  # warm the workers: the bound is on the item, not on startup
        result = ensemble.score([TOWER, r"\boxed{\frac{1}{2}}", r"\boxed{3}"], answer=["5", "0.5", "4"])
        assert result.values["math"] == [None, 1.0, 0.0]
        metrics = result.metrics["math"]
        assert (metrics.timeouts, metrics.errors) == (1, 0)
        assert result.failures == {0: {"math": "timeout"}}  # stopped by its CPU seconds: it computes
        again = ensemble.score([r"\boxed{2\sqrt{3}}"], answer=[r"\sqrt{12}"])
        assert again.values["math"] == [1.0]


def test_data_check_reports_unparseable_golds_by_row(tmp_path):
    rows = [
        {"prompt": "1+1?", "answer": "2"},
        {"prompt": "half?", "answer": r"\frac{1}{"},
        {"prompt": "root?", "answer": r"2\sqrt{3}"},
        {"prompt": "empty?", "answer": ""},
    ]
    path = tmp_path / "golds.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))

    report = data_check("math", path)
    assert not report.ok
    by_problem = {(p.column, p.problem): p.rows for p in report.problems}
    assert by_problem[("(row check)", "gold answer does not parse as math (an unparseable gold scores None)")] == [
        "line 2"
    ]
    assert by_problem[("answer", "empty")] == ["line 4"]

    proc = run_cli("data", "check", str(path), "--rewards", "math")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "line 2" in proc.stdout and "does not parse as math" in proc.stdout
    good = tmp_path / "good.jsonl"
    good.write_text("".join(json.dumps(r) + "\n" for r in rows[:1] + rows[2:3]))
    assert run_cli("data", "check", str(good), "--rewards", "math").returncode == 0


def test_rewards_show_documents_scoring_with_scored_examples():
    proc = run_cli("rewards", "show", "math")
    assert proc.returncode == 0, proc.stderr
    assert "not applicable" in proc.stdout and "tolerance" in proc.stdout and "extract" in proc.stdout
    assert "error" not in proc.stdout.lower()
    assert check_examples(get_reward("math")) == 17  # the shown examples score as they state


def test_a_repeated_answer_is_judged_once_per_worker_with_the_verdict_it_had_uncached():
    """The verdict kept by text (rewards._pays_text) is the one reading and comparing give: on real completions and
    reasoning-gym answers, and a group's repeated answer is then a cache hit, not a second read."""
    params = rewards.MathParams()
    data = Path(__file__).parent / "data" / "math"
    rows = [json.loads(line) for name in ("reasoning_gym_truth.jsonl", "real_completions.jsonl")
            for line in (data / name).read_text().splitlines()[::9]]
    checked = 0
    for row in rows:
        gold = find.parse_gold(row["gold"])
        found = find.find_answers(row["completion"], params.extract, params.max_chars)
        for stated in found.answers:
            if gold is None or not rewards._cacheable(stated):
                continue
            assert rewards._pays_text(row["gold"], stated.text, stated.parts, params) == rewards.pays(gold, stated,
                                                                                                       params), row
            checked += 1
    assert checked > 300
    completion = r"So the total is \boxed{\frac{3\sqrt{2}}{4}}."
    rewards.math_answer.fn(completion, answer=r"\frac{3}{4}\sqrt{2}", params=params)
    hits = rewards._pays_text.cache_info().hits
    assert rewards.math_answer.fn("Another way: " + completion, answer=r"\frac{3}{4}\sqrt{2}", params=params) == 1.0
    assert rewards._pays_text.cache_info().hits == hits + 1


def test_text_without_the_phrase_hint_has_no_answer_phrase():
    """find._PHRASE_HINT is what every answer phrase holds, so skipping text without it skips no phrase."""
    pieces = ["answer", "Answer", "ANSWER", "A", "a", "ans", "Ans", ":", " ", "\t", "\n", "*", "_", "#", "final ",
              "is ", "=", "12", "x", "-", "the ", "ſ", "K", "\u212a", "swer", "an"]
    rng = random.Random(39)
    matched = 0
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 12)))
        if find._PHRASE.search(text):
            matched += 1
            assert find._PHRASE_HINT.search(text), text
    assert matched > 500
