"""math: is the completion's final answer mathematically equal to the gold answer?

Equivalence is math-verify's (latex2sympy2-extended parses LaTeX with a
grammar, sympy compares), wrapped for the way a GRPO run uses it:

* Model output is untrusted.  Completion text only ever reaches the LaTeX
  grammar, never ``sympify``/``parse_expr`` (they ``eval``): math-verify's
  ``ExprExtractionConfig`` (which does call ``parse_expr``) is not used, the
  LaTeX parser's own number reading is replaced by an eval-free one (see
  :func:`_adapt_latex2sympy`), and plain numbers are read by Python's
  :class:`fractions.Fraction`.  Input is
  capped (``max_chars``).  Each item runs in a worker process
  (``executor="process"``) whose timer interrupts a runaway sympy call and
  which is killed from outside when it does not come back, so
  ``\\boxed{9^{9^{9^{9}}}}`` costs one timeout, not the run.
* math-verify's own timeouts use ``signal.alarm``: they would cancel the
  worker's timer and raise off the main thread, so they are switched off
  whenever a timer is already armed or the call is not on the main thread.
* A raw gold such as ``2\\sqrt{3}`` is wrapped in ``$...$`` before parsing
  (math-verify otherwise reads the plain number ``2``); a gold that does not
  parse is not applicable (None), never a free 1.0, and ``data check``
  reports it per row.
* Fast: each worker keeps parsed golds in an LRU cache, so a group of
  completions for one prompt parses its gold once per worker; plain
  integers, decimals and fractions on both sides are compared with
  :class:`~fractions.Fraction` without touching sympy, with math-verify's
  verdicts (see :func:`compare_numbers`; the few cases where sympy's binary
  Floats decide go to sympy); sympy verdicts are cached per worker, so a
  group that agrees on an answer is compared once; and the LaTeX parser
  tries ANTLR's cheap SLL prediction before its full LL one.
"""

from __future__ import annotations

import logging
import math
import re
import signal
import threading
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from grpo_host import hookimpl, reward
from reward_plugins.r1 import extract_answer

Target = Literal["answer_tag", "boxed", "latex", "number"]

MATH_VERIFY_TIMEOUT = 5
"""Seconds math-verify may spend per parse or comparison when it is the one keeping time (main thread, no timer)."""
MAX_FAST_DIGITS = 100
"""Longer numbers go through sympy (bounded by the timeout) rather than Fraction."""
MAX_FLOAT_DIGITS = 15
"""sympy reads decimals as 15-digit Floats; longer ones go through sympy so rounding stays identical."""
GOLD_CACHE_SIZE = 4096
VERDICT_CACHE_SIZE = 16384


class MathParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    tolerance: float = Field(
        1e-6,
        description="10^-k: when either side is a decimal number both sides are rounded to k decimal places "
        "before comparing (1e-6: 0.333333 equals 1/3); integers, fractions and surds compare exactly",
    )
    set_relations: bool = Field(
        False,
        description="also accept a relation for a set or interval gold (x > 1 for (1, oo)); a set answer for a "
        "relation gold is always accepted (math-verify allow_set_relation_comp)",
    )
    extract: tuple[Target, ...] = Field(
        ("answer_tag", "boxed", "latex"),
        min_length=1,
        description="where the final answer is looked for: answer_tag (the last <answer>...</answer>, searched "
        "first), boxed (the last \\boxed{}), latex (the last $...$, $$...$$ or \\(...\\) math span; answer-anchored "
        "spans such as 'final answer is $x$' count even without it), number (the last plain number such as 42, -3.5, "
        "1,234 or 3/4, tried only when the others find nothing)",
    )
    max_chars: int = Field(
        20_000,
        ge=64,
        le=1_000_000,
        description="completions longer than this are read from their last max_chars characters; a longer gold "
        "is not applicable",
    )

    @field_validator("tolerance")
    @classmethod
    def _power_of_ten(cls, value: float) -> float:
        digits = -math.log10(value) if value > 0 else -1
        if not (0 <= digits <= 15 and abs(digits - round(digits)) < 1e-9):
            raise ValueError("tolerance must be a power of ten between 1 and 1e-15, such as 1e-6")
        return value

    @property
    def float_rounding(self) -> int:
        return round(-math.log10(self.tolerance))


# -- plain numbers, read without sympy ---------------------------------------------------------------------------

_NUMBER = re.compile(
    r"\s*(?P<sign>-?)\s*(?:"
    r"(?P<int>\d+)(?:\.(?P<frac>\d+))?"
    r"|\\[dt]?frac\{\s*(?P<num>\d+)\s*\}\{\s*(?P<den>\d+)\s*\}"
    r"|(?P<snum>\d+)\s*/\s*(?P<sden>\d+)"
    r")\s*"
)
_LAST_BOXED = re.compile(
    r"(?P<before>.?)(?P<open>\$?)\\boxed\{(?P<body>(?:[^{}]|\{[^{}]*\})*)\}(?P<close>\$?)(?P<tail>[^\\$\[\]{}%]*)$", re.S
)
_PERCENT_WORD = re.compile(r"\s*(?:[Pp]ercent|[Pp]ct)")
_PLAIN_NUMBERS = re.compile(r"(?<![\w.,/])-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:/\d+)?(?![\w/])")
_DELIMITERS = ("$", "\\(", "\\[", "\\boxed", "\\fbox")


@dataclass(frozen=True)
class Number:
    """A plain number: its exact value, whether sympy reads it as a Float, and its LaTeX (for the slow path)."""

    value: Fraction
    decimal: bool
    latex: str


def read_number(text: str) -> Number | None:
    """``text`` as a :class:`Number` when it is a plain integer, decimal or fraction; None otherwise.

    Mirrors how math-verify reads these: ``0.5`` becomes the fraction 1/2
    (its ``nits`` normalisation), other decimals are Floats.
    """
    m = _NUMBER.fullmatch(text)
    if m is None or sum(len(g or "") for g in m.group("int", "frac", "num", "den", "snum", "sden")) > MAX_FAST_DIGITS:
        return None
    sign = -1 if m["sign"] else 1
    if m["int"] is not None:
        digits, frac = m["int"], m["frac"]
        if frac is None:
            return Number(sign * Fraction(int(digits)), False, text.strip())
        if len(digits.lstrip("0")) + len(frac) > MAX_FLOAT_DIGITS:
            return None
        decimal = not (text.strip() == "0.5")
        return Number(sign * Fraction(f"{digits}.{frac}"), decimal, text.strip())
    num, den = (m["num"], m["den"]) if m["num"] is not None else (m["snum"], m["sden"])
    if int(den) == 0:
        return None
    return Number(sign * Fraction(int(num), int(den)), False, text.strip())


def _binary_exact(number: Number) -> bool:
    """Whether sympy's Float holds this decimal exactly (its denominator is a power of two)."""
    den = number.value.denominator
    return den & (den - 1) == 0


def compare_numbers(gold: Number, pred: Number, places: int) -> bool | None:
    """math-verify's verdict on two plain numbers, or None when only sympy can tell.

    Exact values (integers, fractions) compare exactly, as sympy does.  A
    decimal is a binary Float in sympy, and its rounding to ``places``
    carries binary noise (sympy says 2.0000002 rounded is not 2, while
    1.5000001 rounded is 1.5), so the fast path answers only what that noise
    cannot change: equal decimals, a decimal equal to an exact value it
    represents exactly (2.0 = 2, 0.25 = 1/4), and values more than two units
    of the last place apart.  The rest (0.3333333 against 1/3) goes to sympy.
    """
    a, b = gold.value, pred.value
    if not (gold.decimal or pred.decimal):
        return a == b
    if a == b and ((gold.decimal and pred.decimal) or _binary_exact(gold if gold.decimal else pred)):
        return True
    if abs(a - b) > Fraction(2, 10**places):
        return False
    return None


# -- math-verify, imported on first use ---------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _mv() -> Any:
    """Import math-verify (and sympy) lazily: listing rewards must not pay for sympy."""
    import math_verify

    _adapt_latex2sympy()
    # Its "timeout is disabled" warning is expected here: the worker keeps time (see _own_timeout).
    for name in ("math_verify.parser", "math_verify.grader"):
        logging.getLogger(name).setLevel(logging.ERROR)
    return math_verify


_DECIMAL_TOKEN = re.compile(r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def _adapt_latex2sympy() -> None:
    """Two changes to latex2sympy2-extended's parser, made once per process; same results, safer and faster.

    * No ``eval``: its ``parse_number`` (number tokens) and ``convert_number``
      (a whole input like ``1,000``) hand completion text to ``sympy.Number``,
      which calls ``sympify`` -> ``parse_expr`` -> ``eval``.  The grammar only
      lets digits through, but the rule here is that completion text never
      reaches ``eval``: the replacements build the same ``Integer``/``Float``
      from the digits and reject anything else.
    * Two-stage parsing: ANTLR parses first in SLL prediction mode, which
      either returns the tree LL mode would or fails; only then LL (the
      expensive full-context prediction) runs.  About 3x faster per parse.

    Fails closed when the parser's layout changed, rather than run unadapted.
    """
    import sympy
    from antlr4.atn.PredictionMode import PredictionMode
    from latex2sympy2_extended import latex2sympy2

    converter = getattr(latex2sympy2, "_Latex2Sympy", None)
    needed = ("parse_number", "create_parser", "parse")
    if converter is None or not all(hasattr(converter, n) for n in needed) or not hasattr(latex2sympy2, "convert_number"):
        raise RuntimeError("math: unsupported latex2sympy2_extended (its parser layout changed)")
    if getattr(converter, "_grpo_host_adapted", False):
        return
    create_parser, parse_ll = converter.create_parser, converter.parse

    def number(text: str):
        if text.isdigit():
            return sympy.Integer(int(text))
        if _DECIMAL_TOKEN.fullmatch(text):
            return sympy.Float(text)
        raise ValueError(f"not a number: {text[:40]!r}")

    def parse_number(self, text: str):
        return number(text.replace(",", ""))

    def convert_number(text: str):  # upstream's comma rules: 0,111 is a decimal, 1,000 a thousand
        if "," in text and text.startswith("0"):
            text = text.replace(",", ".")
        return number(text.translate(str.maketrans("", "", ", ")).lstrip("0") or "0")

    def create_sll_parser(self, latex: str):
        parser = create_parser(self, latex)
        if getattr(self, "_sll", False):
            parser._interp.predictionMode = PredictionMode.SLL
        return parser

    def parse_two_stage(self, latex: str):
        self._sll = True
        try:
            return parse_ll(self, latex)
        except Exception:  # a syntax error in SLL (or a conversion error, which LL repeats): parse with LL
            self._sll = False
            return parse_ll(self, latex)

    converter.parse_number = parse_number
    converter.create_parser = create_sll_parser
    converter.parse = parse_two_stage
    converter._grpo_host_adapted = True
    latex2sympy2.convert_number = convert_number


def _own_timeout() -> int | None:
    """The timeout to hand math-verify, whose ``signal.alarm`` would cancel a timer that is already running.

    In a worker the item's timer is armed (``ITIMER_REAL``) and bounds the
    whole item, so math-verify's must stay off; off the main thread
    ``signal`` cannot be used at all (the inline runner abandons the call
    instead); otherwise (``data check``, ``rewards show``) math-verify keeps
    time itself.
    """
    if threading.current_thread() is not threading.main_thread():
        return None
    if signal.getitimer(signal.ITIMER_REAL)[0] > 0:
        return None
    return MATH_VERIFY_TIMEOUT


@lru_cache(maxsize=8)
def _latex_config(boxed: bool, anywhere: bool) -> Any:
    mv = _mv()
    return mv.LatexExtractionConfig(boxed_match_priority=0 if boxed else -1, try_extract_without_anchor=anywhere)


def _parse_latex(text: str, *, boxed: bool = True, anywhere: bool = True) -> list:
    """math-verify's parse with LaTeX targets only (never its sympy-``eval`` expression target)."""
    return _mv().parse(
        text,
        extraction_config=[_latex_config(boxed, anywhere)],
        extraction_mode="first_match",
        parsing_timeout=_own_timeout(),
    )


def _has_delimiters(text: str) -> bool:
    return any(d in text for d in _DELIMITERS)


# -- gold and prediction ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Parsed:
    """A side of the comparison: a plain :class:`Number`, or math-verify's parse (sympy values and strings)."""

    number: Number | None = None
    sympy: tuple = ()

    def expressions(self) -> list:
        if self.number is not None:
            return list(_number_expressions(self.number.latex))
        return list(self.sympy)


@lru_cache(maxsize=GOLD_CACHE_SIZE)
def _number_expressions(latex: str) -> tuple:
    """A plain number as math-verify reads it, for comparing it with a value that is not a plain number."""
    return tuple(_parse_latex(f"${latex}$"))


@lru_cache(maxsize=GOLD_CACHE_SIZE)
def parse_gold(gold: str, max_chars: int = 20_000) -> Parsed | None:
    """The gold answer, parsed once per worker and cached; None when it is empty, too long or does not parse.

    A gold with no math delimiters is raw LaTeX (``2\\sqrt{3}``, ``\\frac12``)
    and is wrapped in ``$...$``.  It parses when math-verify turns it into at
    least one sympy value (a string fallback alone does not count).
    """
    gold = gold.strip()
    if not gold or len(gold) > max_chars:
        return None
    if not _has_delimiters(gold):
        number = read_number(gold)
        if number is not None:
            return Parsed(number=number)
        gold = f"${gold}$"
    found = _parse_latex(gold)
    if not any(not isinstance(x, str) for x in found):
        return None
    return Parsed(sympy=tuple(found))


def parse_prediction(completion: str, params: MathParams) -> Parsed | None:
    """The completion's final answer by the ``extract`` targets, or None when there is none."""
    text, targets = completion[-params.max_chars :], params.extract
    if "answer_tag" in targets:
        inner = extract_answer(text)
        if inner is not None:
            if not inner:
                return None
            if not _has_delimiters(inner):  # raw content, read like a raw gold
                number = read_number(inner)
                return Parsed(number=number) if number is not None else _parsed(_parse_latex(f"${inner}$"))
            text = inner
    boxed, anywhere = "boxed" in targets, "latex" in targets
    if boxed:
        number = _lone_boxed_number(text)
        if number is not None:
            return Parsed(number=number)
    if boxed or anywhere:
        found = _parsed(_parse_latex(text, boxed=boxed, anywhere=anywhere))
        if found is not None:
            return found
    if "number" in targets:
        numbers = _PLAIN_NUMBERS.findall(text)
        number = read_number(numbers[-1].replace(",", "")) if numbers else None
        if number is not None:
            return Parsed(number=number)
    return None


def _lone_boxed_number(text: str) -> Number | None:
    """The plain number in the text's only ``\\boxed{}`` when math-verify's extraction surely picks that box.

    That holds when nothing after the box can start or close another
    candidate (no ``$``, ``\\``, brackets, braces or percent sign), the box
    optionally wrapped in one ``$...$`` with no percent word after it; in
    every other case math-verify extracts.
    """
    if text.count("\\boxed") != 1 or "\\fbox" in text:
        return None
    m = _LAST_BOXED.search(text)
    if m is None:
        return None
    if m["close"] and (not m["open"] or m["before"] == "$" or _PERCENT_WORD.match(m["tail"])):
        return None
    return read_number(m["body"])


def _parsed(found: list) -> Parsed | None:
    return Parsed(sympy=tuple(found)) if found else None


def equal(gold: Parsed, pred: Parsed, params: MathParams) -> bool:
    """math-verify's ``verify(gold, pred)`` with the parameters, skipping sympy for two plain numbers.

    Verdicts are cached per worker by the exact sympy structure of both
    sides (``srepr``: types, assumptions and Float precision included), so a
    group whose completions agree on an answer runs sympy's comparison once.
    """
    if gold.number is not None and pred.number is not None:
        verdict = compare_numbers(gold.number, pred.number, params.float_rounding)
        if verdict is not None:
            return verdict
    from sympy import srepr

    golds, preds = gold.expressions(), pred.expressions()
    key = (tuple(map(srepr, golds)), tuple(map(srepr, preds)), params.float_rounding, params.set_relations)
    verdict = _VERDICTS.get(key)
    if verdict is None and _clearly_unequal(golds, preds, params.float_rounding):
        verdict = False
    if verdict is None:
        verdict = _mv().verify(
            golds,
            preds,
            float_rounding=params.float_rounding,
            allow_set_relation_comp=params.set_relations,
            timeout_seconds=_own_timeout(),
        )
        if len(_VERDICTS) >= VERDICT_CACHE_SIZE:
            _VERDICTS.clear()
        _VERDICTS[key] = verdict
    return verdict


_VERDICTS: dict[tuple, bool] = {}


def _clearly_unequal(golds: list, preds: list, places: int) -> bool:
    """True when math-verify would surely say "not equal" without needing sympy's ``simplify``.

    ``verify`` compares every gold with every prediction; for two plain
    expressions (no sets, relations, matrices, Floats, percents, bare symbols
    or undefined functions: ``2\\sqrt{3}`` against ``3\\sqrt{2}``, ``(x+1)^2``
    against ``x^2+1``) it tries structural, numeric and then symbolic equality,
    and the symbolic step (``simplify``, often tens of milliseconds) cannot
    prove zero a difference that evaluates clearly away from zero at some
    point.  So when every pair is either two different strings or two such
    expressions whose difference, with each symbol set to a fixed value in
    (0, 1), is more than a relative 1e-9 (and more than the rounding
    tolerance) from zero, the verdict is False and ``verify`` is skipped.
    Anything else is left to ``verify``.
    """
    mv = _mv()
    try:
        return bool(mv.utils.timeout(_own_timeout())(_all_pairs_differ)(golds, preds, places))
    except mv.errors.TimeoutException:
        return False


def _all_pairs_differ(golds: list, preds: list, places: int) -> bool:
    from sympy import Expr, Float, Rational, UnevaluatedExpr
    from sympy.core.function import AppliedUndef
    from sympy.matrices.expressions import MatrixExpr

    def plain(e: Any) -> bool:
        return (isinstance(e, Expr) and not isinstance(e, MatrixExpr) and not e.is_Number and not e.is_Symbol
                and not e.has(Float, UnevaluatedExpr) and not e.atoms(AppliedUndef))

    for g in golds:
        for p in preds:
            if isinstance(g, str) and isinstance(p, str):
                if g.strip() and g.strip() == p.strip():
                    return False
                continue
            if isinstance(g, str) or isinstance(p, str):
                continue  # math-verify never matches a string with an expression
            if not (plain(g) and plain(p)):
                return False
            symbols = sorted(g.free_symbols | p.free_symbols, key=str)
            point = {s: Rational(7 + 3 * i, 13 + 4 * i) for i, s in enumerate(symbols)}
            try:
                gap = abs(complex((g - p).evalf(15, subs=point, chop=True)))
                scale = abs(complex(g.evalf(15, subs=point)))
            except (TypeError, ValueError, ArithmeticError):
                return False
            if not gap > max(1e-9 * (1 + scale), 2 * 10.0**-places):
                return False
    return True


# -- the reward ---------------------------------------------------------------------------------------------------


def check_gold(row: dict) -> str | None:
    """Row check for ``data check``: the gold answer must parse (with the default parameters)."""
    answer = row.get("answer")
    if isinstance(answer, bool) or not isinstance(answer, str | int | float) or not str(answer).strip():
        return None  # the column check reports missing, empty or mistyped golds
    if parse_gold(str(answer)) is None:
        return "gold answer does not parse as math (an unparseable gold scores None)"
    return None


@reward(
    name="math",
    requires={"answer": str | int | float},
    params=MathParams,
    executor="process",
    timeout=10.0,
    check_row=check_gold,
    examples=[
        {"completion": "... so the answer is $\\boxed{\\sqrt{12}}$.", "answer": "2\\sqrt{3}"},
        {"completion": "<think>2/4 = 1/2</think><answer>0.5</answer>", "answer": "\\frac{1}{2}"},
        {"completion": "The roots satisfy $x \\in [1, 3)$. Final: \\boxed{[1,3)}", "answer": "[1, 3)"},
        {"completion": "I think it is $\\{3, 1, 2\\}$", "answer": "$\\{1,2,3\\}$"},
        {"completion": "\\boxed{0.3333333}", "answer": "1/3"},
        {"completion": "\\boxed{7}", "answer": "8"},
        {"completion": "no final answer here", "answer": "42"},
        {"completion": "\\boxed{5}", "answer": "\\frac{1}{"},
    ],
)
def math_answer(completion: str, *, answer: Any, params: MathParams, **_) -> float | None:
    """1.0 when the completion's final answer is mathematically equal to the gold `answer`, else 0.0; None
    (not applicable) when the gold is empty, longer than max_chars or does not parse.  The final answer is
    looked for in the last <answer>...</answer> block first (its raw content is read as LaTeX), then the last
    \\boxed{}, then the last $...$ / $$...$$ / \\(...\\) math span (see `extract`); no answer found scores 0.0.  A gold
    without $ or \\boxed is read as raw LaTeX (2\\sqrt{3} is 2*sqrt(3), not 2).  Equality is math-verify's:
    the same number, fraction or surd (2\\sqrt{3} = \\sqrt{12}, 0.5 = 1/2), the same set in any order, the same
    interval, an equivalent equation or expression; decimals count as equal after rounding both sides to the
    decimal places of `tolerance` (0.3333333 = 1/3 at 1e-6).  Completion text is never evaluated: it goes
    through a LaTeX grammar only.  Each item runs in a worker process under the timeout (default 10 s); a
    timed-out item scores None and is counted as a timeout."""
    gold = parse_gold(str(answer), params.max_chars)
    if gold is None:
        return None
    pred = parse_prediction(completion, params)
    if pred is None:
        return 0.0
    return float(equal(gold, pred, params))


@hookimpl
def register_rewards(register):
    register(math_answer)
