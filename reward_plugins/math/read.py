"""math: is the completion's final answer mathematically equal to the gold answer?

The reward a reasoning run trains on, so it must never pay a wrong answer
and should pay every right one.  Three parts:

* **Reading** (:func:`read_answer`).  The final answer is the content of the
  last ``<answer>`` block, else of the last ``\\boxed{}`` (or the last run of
  boxes joined by commas or "and"), else a LaTeX span that an answer phrase
  introduces or that ends the text.  Its text (and a gold's) is read, in order, as a plain
  number (integers, decimals, ``.4``, scientific notation ``1.37e-3`` and
  ``1.37 \\times 10^{-3}``, thousands separators ``1,000`` ``1\\,000``
  ``1{,}000``, fractions, percent, currency and unit words), as a
  Python/sympy-style expression (``-896*x**5 + 3*x**2``, ``sqrt(2)/2``: an
  :mod:`ast` translator over a whitelist of node types, see
  :func:`read_python`), as polynomial-style LaTeX without a grammar
  (:func:`read_simple_latex`, the same values in a fraction of the time), or
  as LaTeX (latex2sympy2-extended's grammar through math-verify's parser and
  normaliser).
* **Comparing** (:func:`numbers_equal` for two plain numbers, otherwise
  math-verify's structural ``verify``: sets, intervals, tuples, relations,
  matrices, ``x = 2`` against ``2``) under one rule: exact sides compare
  exactly; where a side is a decimal the values must agree to a relative
  ``tolerance``, and two decimals also to half a unit of the less precise
  one's last digit.  math-verify's own numeric step (rounding both sides to
  6 places, then an absolute ``chop``: ``1/2004!`` equals ``1/2006!``) is
  replaced by that rule (see :func:`_adapt_math_verify`).
* **Safety and speed.**  Completion text never reaches ``sympify``,
  ``parse_expr`` or ``eval``: math-verify's ``ExprExtractionConfig`` (which
  calls ``parse_expr``) is not used, the LaTeX parser's number reading is
  replaced by an eval-free one (:func:`_adapt_latex2sympy`), Python syntax is
  only ever ``ast.parse``\\ d and translated node by node, and plain numbers
  are read by :class:`fractions.Fraction`.  Input is capped (``max_chars``)
  and expressions are size-bounded.  Each item runs in a worker process
  (``executor="process"``) whose timer interrupts a runaway sympy call and
  which is killed from outside when it does not come back, so
  ``\\boxed{9^{9^{9^{9}}}}`` costs one timeout, not the run.  Plain numbers
  never touch sympy; parsed golds, answers and sympy verdicts are cached per
  worker; the LaTeX parser tries ANTLR's cheap SLL prediction before its full
  LL one; pairs that clearly differ skip ``simplify`` (:func:`_clearly_unequal`).
"""

from __future__ import annotations

import ast
import logging
import re
import signal
import threading
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from grpo_host import hookimpl, reward
from reward_plugins.r1 import extract_answer

Target = Literal["answer_tag", "boxed", "latex", "number"]

MATH_VERIFY_TIMEOUT = 5
"""Seconds math-verify may spend per parse or comparison when it is the one keeping time (main thread, no timer)."""
MAX_DIGITS = 400
"""Longest digit string a plain number or a Python literal may have (bounds Fraction and sympy work)."""
MAX_EXPONENT = 10_000
"""Largest power of ten a plain number may carry (``1e-500`` is read; ``1e99999999`` is not a number here)."""
MAX_PYTHON_NODES = 400
MAX_POWER_DIGITS = 10_000
"""A numeric power whose value would have more digits than this is not read (``9**9**9``)."""
GOLD_CACHE_SIZE = 4096
VERDICT_CACHE_SIZE = 16384

RULE = (
    "Exact values (integers, fractions, surds, pi, symbolic expressions with exact numbers) compare exactly. "
    "Where a side is a decimal (written with a point or an exponent: 0.5, .4, 2.0, 1.37e-3, 1.37 \\times 10^{-3}), "
    "the two values must agree to a relative `tolerance`: |a - b| <= tolerance * max(|a|, |b|) (1e-6: 1.41421356 "
    "equals \\sqrt{2}, 0.3333333 equals 1/3, 0.333 does not, and 1e-7 never equals 2e-7); when both sides are "
    "plain decimals they must also agree to half a unit of the less precise one's last digit (3.14159 is not "
    "3.14158); an expression with both symbols and decimals is equal only when the difference simplifies to "
    "exactly 0 (0.5x equals x/2). A percent p% equals p%, p and p/100. Units, currency signs and thousands "
    "separators are ignored."
)


class MathParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    tolerance: float = Field(
        1e-6,
        ge=0,
        le=0.01,
        description="relative tolerance, applied only where a side is a decimal: |a - b| <= tolerance * max(|a|, "
        "|b|); exact values (integers, fractions, surds) always compare exactly, and two plain decimals must also "
        "agree to half a unit of the less precise one's last digit. 0 makes decimals exact too",
    )
    set_relations: bool = Field(
        False,
        description="also accept a relation for a set or interval gold (x > 1 for (1, oo)); a set answer for a "
        "relation gold is always accepted (math-verify allow_set_relation_comp)",
    )
    extract: tuple[Target, ...] = Field(
        ("answer_tag", "boxed", "latex"),
        min_length=1,
        description="where the final answer is looked for, in this order: answer_tag (the last <answer>...</answer>),"
        " boxed (the last \\boxed{} or \\fbox{}, alone: earlier boxes are ignored), latex (a $...$, $$...$$, \\(...\\) "
        "or \\[...\\] span after an answer phrase such as 'final answer is $x$' (math-verify's anchors), else the last "
        "span when it ends the completion: at most 40 characters after it; a span the text goes on from is reasoning, "
        "not an answer), number "
        "(the last plain number in the text such as 42, -3.5, .4, 1,234.5, 1 234, 1.5e-3, 3/4 or 28%, a unit after "
        "it allowed: 2.5kg, but 2x is no number; taken before latex when it comes after every math span, otherwise "
        "when the others find nothing)",
    )
    max_chars: int = Field(
        20_000,
        ge=64,
        le=1_000_000,
        description="completions longer than this are read from their last max_chars characters; a longer gold "
        "is not applicable",
    )


# -- plain numbers, read without sympy ---------------------------------------------------------------------------

_SEP = r"(?:,|\{,\}|\\,|\\ |\\;|\\!|\s|\u2009|\u202f|')"
_UNIT_WORDS = (
    "mm|cm|dm|km|m|kg|mg|g|lb|lbs|oz|ml|mL|L|s|sec|secs|min|mins|h|hr|hrs|ms|ns|kHz|Hz|kW|W|kJ|J|N|Pa|V|A|mol|K"
    "|ft|feet|foot|in|inch|inches|yd|yards|mi|miles|mph|meters|metres|meter|metre|kilometers|kilograms|grams|"
    "pounds|ounces|liters|litres|seconds|second|minutes|minute|hours|hour|days|day|weeks|week|months|years|year|"
    "dollars|dollar|cents|cent|euros|units|unit|degrees|degree|deg|people|persons|students|apples|items|ways|"
    "times|points|sq|square|cubic|USD|EUR|GBP|usd"
)
_NUMBER = re.compile(
    r"(?P<sign>[-+−]?)\s*(?:\\\$|\$|\\euro|€|£)?\s*(?:"
    r"(?P<rep_int>\d*)\.(?P<rep_fix>\d*)\\overline\s*\{\s*(?P<rep>\d+)\s*\}"
    r"|(?P<mant>(?:\d{1,3}(?:" + _SEP + r"\d{3})+|\d+)(?:\.\d*)?|\.\d+)"
    r"(?:[eE](?P<exp>[-+]?\d+)|\s*(?:\\times|\\cdot|×|·|\*)\s*10\s*\^\s*(?:\{\s*(?P<exp2>[-+−]?\d+)\s*\}|(?P<exp3>[-+−]?\d+)))?"
    r"|\\[dt]?frac\s*\{\s*(?P<num>[-+]?\d+)\s*\}\s*\{\s*(?P<den>\d+)\s*\}"
    r"|\\[dt]?frac(?P<num1>\d)(?P<den1>\d)"
    r"|(?P<snum>\d+)\s*/\s*(?P<sden>\d+)"
    r")\s*(?P<pct>(?:\\,|\\ |~)?\s*(?:\\%|%)|\\text\{\s*\\?%\s*\}|\s*percent\b|\s*pct\b)?"
    r"\s*(?:(?:\\(?:text|mathrm|textrm|mbox|textbf|operatorname)\s*\{\s*[A-Za-z°²³ .$/~]*\}"
    r"|\^\s*\{?\s*(?:\\circ|[23])\s*\}?|°|€|£|\\\$|\\,|\\ |~|\s)*(?:(?<![A-Za-z])(?:" + _UNIT_WORDS + r")(?![A-Za-z])[²³]?(?:\^\{?[23]\}?)?"
    r"(?:\s*/\s*(?:" + _UNIT_WORDS + r")(?![A-Za-z])[²³]?(?:\^\{?[23]\}?)?)?)?\s*\.?\s*)*"
)
_SEPARATORS = re.compile(_SEP)


@dataclass(frozen=True)
class Number:
    """A plain number: its exact value; for a decimal, its last written digit's unit (None: an exact number)."""

    value: Fraction
    ulp: Fraction | None = None
    percent: bool = False

    def readings(self) -> list[tuple[Fraction, Fraction | None]]:
        """The values it may stand for: a percent p% is p (the sign dropped, as in '28 (%)') or p/100."""
        if not self.percent:
            return [(self.value, self.ulp)]
        return [(self.value, self.ulp), (self.value / 100, self.ulp / 100 if self.ulp else None)]


def read_number(text: str) -> Number | None:
    """``text`` as a :class:`Number` when it is one plain number (with optional unit, percent, currency); else None.

    ``1,000`` is a thousand (math-verify's reading too) and ``0,5``-style
    decimal commas are left to the LaTeX reader; ``2x`` or ``5\\pi`` are not
    plain numbers (only known unit words may follow the digits).
    """
    m = _NUMBER.fullmatch(text.strip())
    if m is None or sum(c.isdigit() for c in text) > MAX_DIGITS:
        return None
    sign = -1 if m["sign"] in ("-", "−") else 1
    percent = m["pct"] is not None
    if m["rep"] is not None:  # 0.1\overline{6}: exact, 1/6
        fixed, repeating = m["rep_fix"], m["rep"]
        value = Fraction(int(m["rep_int"] or "0")) + Fraction(int(fixed or "0"), 10 ** len(fixed)) + Fraction(
            int(repeating), (10 ** len(repeating) - 1) * 10 ** len(fixed))
        return Number(sign * value, None, percent)
    if m["mant"] is not None:
        mant = _SEPARATORS.sub("", m["mant"])
        exp_text = m["exp"] or m["exp2"] or m["exp3"]
        exponent = int(exp_text.replace("−", "-")) if exp_text else 0
        if abs(exponent) > MAX_EXPONENT:
            return None
        whole, _, frac = mant.partition(".")
        value = Fraction(int(whole or "0") * 10 ** len(frac) + int(frac or "0"), 10 ** len(frac)) * Fraction(10) ** exponent
        decimal = "." in mant or m["exp"] is not None
        ulp = Fraction(10) ** (exponent - len(frac)) if decimal else None
        return Number(sign * value, ulp, percent)
    num, den = (m["num"], m["den"]) if m["num"] is not None else (
        (m["num1"], m["den1"]) if m["num1"] is not None else (m["snum"], m["sden"]))
    if int(den) == 0:
        return None
    return Number(sign * Fraction(int(num), int(den)), None, percent)


def _close(a: Fraction, a_ulp: Fraction | None, b: Fraction, b_ulp: Fraction | None, tolerance: float) -> bool:
    """The comparison rule (see RULE) for two exact values, each possibly a written decimal with its last digit's unit."""
    if a_ulp is None and b_ulp is None:
        return a == b
    gap = abs(a - b)
    if gap > Fraction(str(tolerance)) * max(abs(a), abs(b)):  # str: 1e-6 exactly, not the binary float below it
        return False
    return a_ulp is None or b_ulp is None or gap <= max(a_ulp, b_ulp) / 2


def numbers_equal(gold: Number, pred: Number, tolerance: float) -> bool:
    """Two plain numbers under the rule; a percent on only one side may be read either way (28% is 28 or 0.28)."""
    if gold.percent and pred.percent:
        return _close(gold.value, gold.ulp, pred.value, pred.ulp, tolerance)
    return any(_close(a, au, b, bu, tolerance) for a, au in gold.readings() for b, bu in pred.readings())


# -- Python/sympy-style expressions, read without eval -----------------------------------------------------------

_PYTHON_HINT = re.compile(r"\*|\b(?:sqrt|exp|log|ln|sin|cos|tan|cot|sec|csc|asin|acos|atan|sinh|cosh|tanh|Abs|abs|"
                          r"factorial|Rational|Integral|pi|oo|E|I)\b")


def _python_functions() -> dict[str, Any]:
    import sympy

    return {
        "sqrt": sympy.sqrt, "cbrt": sympy.cbrt, "exp": sympy.exp, "log": sympy.log, "ln": sympy.log,
        "sin": sympy.sin, "cos": sympy.cos, "tan": sympy.tan, "cot": sympy.cot, "sec": sympy.sec, "csc": sympy.csc,
        "asin": sympy.asin, "acos": sympy.acos, "atan": sympy.atan, "sinh": sympy.sinh, "cosh": sympy.cosh,
        "tanh": sympy.tanh, "Abs": sympy.Abs, "abs": sympy.Abs, "factorial": sympy.factorial,
    }


def read_python(text: str) -> Any | None:
    """A Python/sympy-style expression (``-896*x**5 + 3*x**2 - 7``, ``sqrt(2)/2``, ``E**x``) as sympy; else None.

    Only ``ast.parse`` sees the text (it parses, it never runs anything);
    the tree is then translated node by node over a whitelist: numbers,
    names (one symbol each, lower-cased and real as latex2sympy makes them;
    ``pi``, ``E`` and ``oo`` are the constants, as in sympy, and ``I`` is the
    ``i`` the LaTeX reader makes of ``3+2i``), ``+ - * / **``,
    unary signs, calls of a few named functions and ``Rational(p, q)``.
    Anything else, a tree over MAX_PYTHON_NODES nodes, or a numeric power
    with over MAX_POWER_DIGITS digits is not read.
    """
    if "\\" in text or "{" in text or "^" in text or not _PYTHON_HINT.search(text):
        return None
    return _python_expression(text)


def _python_expression(text: str) -> Any | None:
    """:func:`read_python` without its "does this look like Python" gate (see there)."""
    import sympy

    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    if sum(1 for _ in ast.walk(tree)) > MAX_PYTHON_NODES:
        return None
    functions = _python_functions()
    # I is the symbol i, as the LaTeX reader reads 3+2i: the same answer in either syntax is the same value
    constants = {"pi": sympy.pi, "E": sympy.E, "I": sympy.Symbol("i", real=True), "oo": sympy.oo}
    binary = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
              ast.Div: lambda a, b: a / b}

    def power(base: Any, exponent: Any) -> Any:
        if base.is_Number and exponent.is_Number:
            size = abs(float(exponent)) * max(1.0, float(sympy.log(abs(base) + 1, 10))) if base != 0 else 0.0
            if size > MAX_POWER_DIGITS:
                raise ValueError("power too large")
        return base**exponent

    def convert(node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return convert(node.body)
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            literal = ast.get_source_segment(text.strip(), node) or repr(node.value)
            if len(literal) > MAX_DIGITS:
                raise ValueError("literal too long")
            if isinstance(node.value, int):
                return sympy.Integer(node.value)
            digits = sum(c.isdigit() for c in literal.lower().partition("e")[0])
            return sympy.Float(literal.replace("_", ""), max(15, digits))
        if isinstance(node, ast.Name):
            if node.id in constants:
                return constants[node.id]
            return sympy.Symbol(node.id.lower(), real=True)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            value = convert(node.operand)
            return -value if isinstance(node.op, ast.USub) else value
        if isinstance(node, ast.BinOp) and type(node.op) in binary:
            return binary[type(node.op)](convert(node.left), convert(node.right))
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            return power(convert(node.left), convert(node.right))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            args = [convert(a) for a in node.args]
            if node.func.id == "Rational" and len(args) == 2 and all(a.is_Integer for a in args):
                return sympy.Rational(args[0], args[1])
            if node.func.id == "Integral" and len(args) == 2 and args[1].is_Symbol:  # unevaluated, as written
                return sympy.Integral(args[0], args[1])
            if node.func.id in functions and len(args) == 1:
                return functions[node.func.id](args[0])
        raise ValueError(f"not read: {type(node).__name__}")

    try:
        value = convert(tree)
    except (ValueError, TypeError, ArithmeticError, RecursionError):
        return None
    if not isinstance(value, sympy.Basic) or value.has(sympy.zoo, sympy.nan):
        return None
    return value


# -- simple LaTeX, read without the ANTLR grammar ----------------------------------------------------------------

_SIMPLE_TOKEN = re.compile(
    r"\s+|\\[,;! ]|\\left\(|\\right\)|\\[dt]?frac|\\sqrt|\\cdot|\\times|\\pi(?![A-Za-z])"
    r"|\\(?:sin|cos|tan|ln|exp|arcsin|arccos|arctan|sinh|cosh|tanh)(?![A-Za-z])|\d+(?:\.\d+)?|[A-Za-z]|[-+(){}^]"
)
_SIMPLE_FUNCTIONS = {"\\sin": "sin", "\\cos": "cos", "\\tan": "tan", "\\ln": "log", "\\exp": "exp",
                     "\\arcsin": "asin", "\\arccos": "acos", "\\arctan": "atan", "\\sinh": "sinh",
                     "\\cosh": "cosh", "\\tanh": "tanh"}


def read_simple_latex(text: str) -> Any | None:
    """Polynomial-style LaTeX (``- 35574 x^{6} + \\frac{3 x}{4} + C``, ``2\\sqrt{3}``) as sympy, or None.

    What sympy's LaTeX printer and most models write for a polynomial or a
    plain expression is a small language: numbers, one-letter variables
    side by side (a product), ``+ -``, ``\\cdot``, ``\\times``, ``^{...}``,
    ``\\frac{..}{..}``, ``\\sqrt{..}``, parentheses and a few named functions
    with a parenthesised argument (letters written together, ``cm`` or
    ``percentage``, may be a word, so they are not read here).  ANTLR's LaTeX grammar spends tens of
    milliseconds on a long one; this reads it in a fraction of one, by
    translating it to Python syntax for :func:`_python_expression` (the same
    whitelist).  It reads what latex2sympy reads: ``e`` is Euler's number,
    other letters are lower-cased real symbols.  Anything outside the
    language (``=``, commas, ``\\int``, ``f(x)``, ``E``, ``I``, ``\\log``...) is
    None, left to the grammar.
    """
    tokens, pos = [], 0
    while pos < len(text):
        m = _SIMPLE_TOKEN.match(text, pos)
        if m is None:
            return None
        if m[0].isalpha() and text[pos - 1 : pos].isalpha():
            return None  # a word (cm, percentage, units): math-verify's normaliser knows what it means
        pos = m.end()
        token = m[0]
        if token.isspace() or token in ("\\,", "\\;", "\\!", "\\ "):
            continue
        tokens.append({"\\left(": "(", "\\right)": ")"}.get(token, token))
    if not tokens or len(tokens) > MAX_PYTHON_NODES:
        return None
    out: list[str] = []
    index = 0

    def enclosed(close: str) -> bool:
        """What follows an opening bracket, up to ``close``, in parentheses."""
        nonlocal index
        out.append("(")
        if not expression(close):
            return False
        index += 1
        out.append(")")
        return True

    def group() -> bool:
        """``{...}`` as ``(...)``."""
        nonlocal index
        if index >= len(tokens) or tokens[index] != "{":
            return False
        index += 1
        return enclosed("}")

    def factor() -> bool:
        nonlocal index
        token = tokens[index]
        index += 1
        if token[0].isdigit():
            out.append(token)
        elif len(token) == 1 and token.isalpha():
            if token in "EI" or (index < len(tokens) and tokens[index] == "("):
                return False  # E and I mean other things to latex2sympy; x(...) may be a function
            out.append("E" if token == "e" else token)
        elif token == "\\pi":
            out.append("pi")
        elif token in ("\\frac", "\\dfrac", "\\tfrac"):
            out.append("(")
            if not group():
                return False
            out.append("/")
            if not group():
                return False
            out.append(")")
        elif token == "\\sqrt":
            out.append("sqrt")
            if not group():
                return False
        elif token in _SIMPLE_FUNCTIONS:
            power: list[str] = []
            if index < len(tokens) and tokens[index] == "^":  # \cos^{3}(x) is cos(x)**3
                index += 1
                mark = len(out)
                if index < len(tokens) and tokens[index] == "{":
                    if not group():
                        return False
                elif index < len(tokens) and len(tokens[index]) == 1 and tokens[index].isdigit():
                    out.append(tokens[index])
                    index += 1
                else:
                    return False
                power = ["**", *out[mark:]]
                del out[mark:]
                if "-" in power:
                    return False  # \sin^{-1} is the inverse function, not a power
            out.append(_SIMPLE_FUNCTIONS[token])
            if index < len(tokens) and tokens[index] == "{":  # \sin{\left(x \right)}
                if not group():
                    return False
            elif index < len(tokens) and tokens[index] == "(":
                index += 1
                if not enclosed(")"):
                    return False
            else:
                return False
            out.extend(power)
            if power and index < len(tokens) and tokens[index] == "^":
                return False
        elif token == "(":
            if not enclosed(")"):
                return False
        else:
            return False
        if index < len(tokens) and tokens[index] == "^":
            index += 1
            out.append("**")
            if index < len(tokens) and tokens[index] == "{":
                return group()
            if index < len(tokens) and (tokens[index].isdigit() and len(tokens[index]) == 1 or
                                        len(tokens[index]) == 1 and tokens[index].isalpha() and tokens[index] not in "EI"):
                out.append("E" if tokens[index] == "e" else tokens[index])
                index += 1
                return True
            return False
        return True

    def expression(close: str | None) -> bool:
        """Terms joined by + and -, each a product of factors side by side, up to ``close`` (or the end)."""
        nonlocal index
        first = True
        while True:
            while index < len(tokens) and tokens[index] in "+-":
                out.append(tokens[index])
                index += 1
            product = 0
            while index < len(tokens) and tokens[index] not in ("+", "-", close):
                if tokens[index] in ("\\cdot", "\\times"):
                    if not product:
                        return False
                    index += 1
                    continue
                if product:
                    out.append("*")
                if not factor():
                    return False
                product += 1
            if not product and not first:
                return False
            first = False
            if index >= len(tokens) or tokens[index] == close:
                return close is None or index < len(tokens)
    try:
        if not expression(None):
            return None
    except IndexError:
        return None
    return _python_expression("".join(out))


# -- math-verify, imported on first use ---------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _mv() -> Any:
    """Import math-verify (and sympy) lazily: listing rewards must not pay for sympy."""
    import math_verify

    _adapt_latex2sympy()
    _adapt_math_verify()
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
      from the digits (spaces and thousands commas dropped, as ``sympify``
      would: ``28 \\%`` reaches it as ``'28 '``) and reject anything else.
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
        text = text.strip()
        if text.isdigit():
            return sympy.Integer(int(text))
        if _DECIMAL_TOKEN.fullmatch(text):
            return sympy.Float(text)
        raise ValueError(f"not a number: {text[:40]!r}")

    def parse_number(self, text: str):
        return number(text.replace(",", "").replace(" ", ""))

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


def _adapt_math_verify() -> None:
    """Replace math-verify's numeric step with the reward's rule (RULE); its structural comparison stays.

    ``verify`` walks sets, intervals, tuples, relations and matrices and, for
    two plain values, calls ``grader.sympy_numeric_eq`` then a symbolic
    ``simplify(a - b) == 0``.  Upstream's numeric step rounds both sides to
    ``float_rounding`` places when either is a Float (so 1e-7 equals 2e-7)
    and otherwise tests ``(a - b).evalf(chop=True) == 0`` (so 1/2004! equals
    1/2006!).  The replacement, :func:`_sympy_close`, is looked up by
    ``sympy_expr_eq`` at call time; ``verify``'s ``float_rounding`` argument
    carries the relative tolerance to it (no other code reads it).
    """
    from math_verify import grader

    if not hasattr(grader, "sympy_numeric_eq") or not hasattr(grader, "sympy_expr_eq"):
        raise RuntimeError("math: unsupported math-verify (its grader layout changed)")
    grader.sympy_numeric_eq = _sympy_close


def _sympy_close(a: Any, b: Any, tolerance: float, numeric_precision: int) -> bool:
    """RULE on two sympy values: matrices entry by entry, percents read both ways, decimals within ``tolerance``.

    Two exact values are equal here only when they are the same tree once
    evaluated (``doit``; ``9\\%`` read as 9 is ``Integer(9)``) or their
    difference expands to 0; every other exact pair is left to math-verify's
    symbolic step, which proves the difference zero or not.  (An unevaluated
    integral is not evaluated here: the symbolic step does that when it must.)
    """
    from sympy import Float, Integral, MatrixBase, Mul, Rational, UnevaluatedExpr
    from sympy.matrices.expressions import MatrixExpr

    if isinstance(a, MatrixBase | MatrixExpr) or isinstance(b, MatrixBase | MatrixExpr):
        a, b = _doit(a), _doit(b)
        if isinstance(a, MatrixBase) and isinstance(b, MatrixBase) and a.shape == b.shape:
            return all(_sympy_close(x, y, tolerance, numeric_precision) for x, y in zip(a.flat(), b.flat()))
        return False

    def readings(e: Any) -> list:
        if isinstance(e, Mul) and len(e.args) == 2 and e.args[1] == UnevaluatedExpr(Rational(1, 100)):
            return [e.args[0], e.args[0] / 100]
        return [e]

    pairs = [(x, y) for x in readings(a) for y in readings(b)]
    if len(pairs) == 4:  # a percent on both sides: compare the percentages
        pairs = pairs[:1]
    for x, y in pairs:
        if not (x.has(Float) or y.has(Float)):
            if not (x.has(Integral) or y.has(Integral)):
                x, y = _doit(x), _doit(y)
            if x == y or _expands_to_zero(x, y):
                return True
            continue
        x, y = _doit(x), _doit(y)
        if x.free_symbols or y.free_symbols:
            continue
        try:
            gap = abs((x - y).evalf(30))
            scale = max(abs(x.evalf(30)), abs(y.evalf(30)))
            if bool(gap <= tolerance * scale):
                return True
        except (TypeError, ValueError, ArithmeticError, AttributeError):
            continue
    return False


def _expands_to_zero(x: Any, y: Any) -> bool:
    """An exact proof cheaper than ``simplify``: ``x - y`` expands to 0 (``(x+1)^2`` and ``x^2+2x+1``)."""
    from sympy import Expr, expand

    if not (isinstance(x, Expr) and isinstance(y, Expr)):
        return False
    try:
        return expand(x - y) == 0
    except Exception:  # sympy raises anything on odd trees; simplify still gets its turn
        return False


def _doit(e: Any) -> Any:
    try:
        return e.doit()
    except Exception:  # sympy raises anything from doit on odd trees; the value is then compared as it is
        return e


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


_LATEX_SPELLED = {  # spellings latex2sympy does not know (sympy's own LaTeX printer writes the operatorname ones)
    **{f"\\operatorname{{{f}}}": f"\\arc{f[1:]}" for f in ("asin", "acos", "atan", "acot", "asec", "acsc")},
    "\\mathrm{e}": "e", "\\mathrm{i}": "i", "\\operatorname{e}": "e",
}
_LATEX_SPELLINGS = re.compile("|".join(map(re.escape, _LATEX_SPELLED)))
_SCI = re.compile(r"(?<![\w\\.])(\d+\.?\d*|\.\d+)[eE]([-+]?\d+)(?![\w.])")


def _respell(latex: str) -> str:
    """LaTeX as latex2sympy reads it: 1.37e-3 as 1.37 \\times 10^{-3} (not 1.37 Euler - 3), oo as \\infty, and
    the spellings in _LATEX_SPELLED."""
    latex = _SCI.sub(lambda m: f"{m[1]} \\times 10^{{{m[2]}}}", latex)
    latex = re.sub(r"(?<![\w\\])oo(?!\w)", r"\\infty", latex)
    return _LATEX_SPELLINGS.sub(lambda m: _LATEX_SPELLED[m[0]], latex)


@lru_cache(maxsize=2)
def _latex_config(anywhere: bool) -> Any:
    """Answer-anchored LaTeX spans first, then (``anywhere``) any; boxes are found before math-verify is asked."""
    return _mv().LatexExtractionConfig(boxed_match_priority=-1, try_extract_without_anchor=anywhere)


def _parse_latex(text: str, anywhere: bool = True) -> list:
    """math-verify's parse with LaTeX targets only (never its sympy-``eval`` expression target)."""
    found = _mv().parse(
        _respell(text),
        extraction_config=[_latex_config(anywhere)],
        extraction_mode="first_match",
        parsing_timeout=_own_timeout(),
    )
    return [_real_symbols(x) for x in found]


def _real_symbols(expr: Any) -> Any:
    """Every symbol real, as latex2sympy makes them unless it guesses complex input (``5\\,i``): one ``i`` is one ``i``.

    Sets are left alone (rebuilding one would lose the written order that
    math-verify keeps for comparing tuples).
    """
    from sympy import Basic, FiniteSet, Symbol

    if not isinstance(expr, Basic) or expr.has(FiniteSet):
        return expr
    odd = {s: Symbol(s.name, real=True) for s in expr.free_symbols if isinstance(s, Symbol) and not s.is_real}
    return expr.xreplace(odd) if odd else expr


_DELIMITERS = ("$", "\\(", "\\[")
_SPAN = re.compile(r"\$\$(?P<a>[^$]*)\$\$|\$(?P<b>[^$\n]*)\$|\\\((?P<c>[^\n]*?)\\\)|\\\[(?P<d>.*?)\\\]", re.S)
"""A math span; inline ones ($...$, \\(...\\)) stay on one line, as math-verify reads them."""


def _has_delimiters(text: str) -> bool:
    text = text.replace("\\$", "")
    return any(d in text for d in _DELIMITERS)


_BOX = re.compile(r"\\(?:boxed|fbox)\s*\{")
_BOX_JOINER = re.compile(r"(?:\s|,|;|\$|\\[()\[\],;! ]|\\q?quad|\band\b|\\text\{\s*(?:and|,)?\s*\})*")


def last_boxed(text: str) -> str | None:
    """The final answer in boxes: the last ``\\boxed{}`` (or ``\\fbox{}``) whose braces close; None without one.

    Boxes in one run, separated only by commas, "and", spaces, ``\\quad`` or
    math delimiters (``\\boxed{2} and \\boxed{3}``, one answer per box), are
    the list of their contents, joined by commas; a box after any other text
    (``\\boxed{3}, but correcting: \\boxed{5}``) stands alone.
    """
    boxes: list[tuple[int, int]] = []  # (start of \boxed, end of its closing brace), in text order
    for m in _BOX.finditer(text):
        depth = 1
        for i in range(m.end(), len(text)):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                boxes.append((m.start(), i + 1))
                break
    boxes = [b for k, b in enumerate(boxes) if not (k and b[0] < boxes[k - 1][1])]  # a box inside a box is its content
    if not boxes:
        return None
    run = [boxes[-1]]
    for box in reversed(boxes[:-1]):
        if not _BOX_JOINER.fullmatch(text, box[1], run[0][0]):
            break
        run.insert(0, box)
    return ", ".join(text[text.index("{", start) + 1 : end - 1] for start, end in run)


# -- gold and prediction ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Parsed:
    """A side of the comparison: a plain :class:`Number`, or sympy values (and math-verify's string fallbacks)."""

    number: Number | None = None
    sympy: tuple = ()

    def expressions(self) -> list:
        if self.number is not None:
            return list(_number_expressions(self.number))
        return list(self.sympy)


@lru_cache(maxsize=GOLD_CACHE_SIZE)
def _number_expressions(number: Number) -> tuple:
    """A plain number as sympy, for comparing it with a value that is not a plain number.

    A decimal becomes a Float with enough digits to hold what was written; a
    percent becomes latex2sympy's ``p * UnevaluatedExpr(1/100)``.
    """
    from sympy import Float, Rational, UnevaluatedExpr

    v = number.value
    if number.ulp is None:
        value = Rational(v.numerator, v.denominator)
    else:
        digits = max(15, len(str(abs(v.numerator))) + len(str(v.denominator)))
        value = Float(Rational(v.numerator, v.denominator), digits)
    return (value * UnevaluatedExpr(Rational(1, 100)),) if number.percent else (value,)


@lru_cache(maxsize=GOLD_CACHE_SIZE)
def read_answer(text: str) -> Parsed | None:
    """An answer's own text (a raw gold, a box's or an answer tag's content): a number, Python syntax, or LaTeX.

    Cached per worker: the completions of one group repeat each other's answers.
    """
    text = text.strip()
    if not text:
        return None
    number = read_number(text)
    if number is not None:
        return Parsed(number=number)
    expression = read_python(text)
    if expression is None:
        expression = read_simple_latex(text)
    if expression is not None:
        return Parsed(sympy=(expression,))
    span = _SPAN.fullmatch(text)
    inner = next((g for g in span.groups() if g is not None), "") if span else text.replace("\\$", "")
    if span:
        number = read_number(inner)
        if number is not None:
            return Parsed(number=number)
    found = _parse_latex(f"${inner}$")
    return Parsed(sympy=tuple(found)) if any(not isinstance(x, str) for x in found) else None


@lru_cache(maxsize=GOLD_CACHE_SIZE)
def parse_gold(gold: str, max_chars: int = 20_000) -> Parsed | None:
    """The gold answer, parsed once per worker and cached; None when it is empty, too long or does not parse.

    A gold with a ``\\boxed{}`` is its last box; a gold that is one math span
    (``$\\frac{1}{2}$``) or has no math delimiters at all (``2\\sqrt{3}``,
    ``-896*x**5 + 3*x**2``, ``5.02e-18``, ``\\$12.50``) is read by
    :func:`read_answer`; a gold in prose with math spans goes to
    math-verify's extraction.  It parses when it yields a number or at
    least one sympy value (a string fallback alone does not count).
    """
    gold = gold.strip()
    if not gold or len(gold) > max_chars:
        return None
    boxed = last_boxed(gold)
    if boxed is not None:
        return read_answer(boxed)
    if not _has_delimiters(gold) or _SPAN.fullmatch(gold):
        return read_answer(gold)
    found = _parse_latex(gold)
    return Parsed(sympy=tuple(found)) if any(not isinstance(x, str) for x in found) else None


_PLAIN_NUMBER = re.compile(
    r"(?<![\w.{^_\\])[-+−]?(?:\\?\$)?(?>(?:\d{1,3}(?:,\d{3})+|\d{1,3}(?: \d{3})+|\d+)(?:\.\d+)?|\.\d+)(?![.,]?\d|[}^_])"
    r"(?:[eE][-+]?\d+)?(?:/\d+)?(?P<pct>\s*(?:\\?%|percent\b))?(?P<unit>[A-Za-z]+[²³]?)?"
)
_MATH_END = re.compile(r"(?<!\\)\$|\\\)|\\\]")


def last_plain_number(text: str) -> tuple[Number, int] | None:
    """The last plain number in prose and where it starts: ``2.5kg`` is 2.5, ``3 hours`` is 3, ``2x`` is none.

    Letters right after the digits must be a unit word (``kg``, ``m``, ``cm``);
    anything else (``2x``, ``3a``) makes it an expression, not a number.
    """
    for m in reversed(list(_PLAIN_NUMBER.finditer(text))):
        number = read_number(m[0].replace(",", "").replace("\\$", "").replace("$", "").replace("−", "-"))
        if number is not None:
            return number, m.start()
    return None


def parse_prediction(completion: str, params: MathParams) -> Parsed | None:
    """The completion's final answer by the ``extract`` targets, or None when there is none."""
    text, targets = completion[-params.max_chars :], params.extract
    if "answer_tag" in targets:
        inner = extract_answer(text)
        if inner is not None:
            if not inner:
                return None
            if last_boxed(inner) is None and not _has_delimiters(inner):
                return read_answer(inner)
            text = inner
    if "boxed" in targets:
        boxed = last_boxed(text)
        if boxed is not None:
            return read_answer(boxed)
    plain = last_plain_number(text) if "number" in targets else None
    if plain is not None and "latex" in targets:
        spans_end = max((m.end() for m in _MATH_END.finditer(text)), default=0)
        if plain[1] >= spans_end:  # "... so $x = 3$, and the total is 42": the later answer wins
            return Parsed(number=plain[0])
    if "latex" in targets:
        # text without a math span is bare LaTeX (\frac{10}{9}); with spans, a span is an answer only when an
        # answer phrase introduces it or it ends the text
        found = _parse_latex(text, anywhere=not _has_delimiters(text))
        if found:
            return Parsed(sympy=tuple(found))
        final = _final_span(text)
        if final is not None:
            return final
    return Parsed(number=plain[0]) if plain is not None else None


MAX_FINAL_TAIL = 40
"""Characters that may follow the last math span for it to count as the final answer without an answer phrase."""


def _final_span(text: str) -> Parsed | None:
    """The last ``$...$`` / ``$$...$$`` / ``\\(...\\)`` / ``\\[...\\]`` span, read, when it ends the text.

    A span the completion goes on from ("when $n = 0$ nothing changes. ... I
    could not finish") is part of the reasoning, not an answer; a span
    followed by at most MAX_FINAL_TAIL characters ("... is $\\{1, 2\\}$.") is.
    """
    last = None
    for last in _SPAN.finditer(text):
        pass
    if last is None or len(text[last.end() :].strip()) > MAX_FINAL_TAIL:
        return None
    inner = next(g for g in last.groups() if g is not None)
    return read_answer(inner) or Parsed(sympy=(inner,))  # unreadable: compared as text, as math-verify does


def equal(gold: Parsed, pred: Parsed, params: MathParams) -> bool:
    """The rule (RULE) on two parsed sides: plain numbers directly, anything else through math-verify's ``verify``.

    Verdicts are cached per worker by the exact sympy structure of both
    sides (``srepr``: types, assumptions and Float precision included), so a
    group whose completions agree on an answer runs sympy's comparison once.
    """
    if gold.number is not None and pred.number is not None:
        return numbers_equal(gold.number, pred.number, params.tolerance)
    from sympy import srepr

    golds, preds = gold.expressions(), pred.expressions()
    key = (tuple(map(srepr, golds)), tuple(map(srepr, preds)), params.tolerance, params.set_relations)
    verdict = _VERDICTS.get(key)
    if verdict is None and _clearly_unequal(golds, preds, params.tolerance):
        verdict = False
    if verdict is None:
        verdict = _mv().verify(
            golds,
            preds,
            float_rounding=params.tolerance,  # read by _sympy_close, the replaced numeric step
            allow_set_relation_comp=params.set_relations,
            timeout_seconds=_own_timeout(),
        )
        if len(_VERDICTS) >= VERDICT_CACHE_SIZE:
            _VERDICTS.clear()
        _VERDICTS[key] = verdict
    return verdict


_VERDICTS: dict[tuple, bool] = {}


def _clearly_unequal(golds: list, preds: list, tolerance: float) -> bool:
    """True when ``verify`` would surely say "not equal" without needing sympy's ``simplify``.

    ``verify`` compares every gold with every prediction.  For two plain
    expressions (no sets, relations, matrices, percents, bare symbols or
    undefined functions: ``2\\sqrt{3}`` against ``3\\sqrt{2}``, ``(x+1)^2``
    against ``x^2+1``, ``1712`` against ``2x+1``) the symbolic step
    (``simplify``, often tens of milliseconds) cannot prove zero a difference
    that evaluates clearly away from zero at some point, and the rule's
    tolerance (decimals, no symbols) cannot accept a gap over twice its
    bound; an unevaluated integral (reasoning-gym writes some golds so) has
    no value at a point, but if the difference's derivative is not 0 there,
    the difference is not 0 either.  So when every pair is either two different strings, a plain gold
    against an inequality, or two such expressions (an equation's right side
    standing for it, as in ``verify``) whose difference, with
    each symbol set to a fixed value in (0, 1), is more than a relative 1e-9
    (and the tolerance) from zero, the verdict is False and ``verify`` is
    skipped.  Anything else is left to ``verify``.
    """
    mv = _mv()
    try:
        return bool(mv.utils.timeout(_own_timeout())(_all_pairs_differ)(golds, preds, tolerance))
    except mv.errors.TimeoutException:
        return False


def _clearly_nonzero(a: Any, b: Any, point: dict) -> bool:
    """Whether ``a - b`` at ``point`` is more than a relative 1e-9 from 0 (False when it cannot be evaluated)."""
    from sympy import Integral

    if a.has(Integral) or b.has(Integral):
        return False
    try:
        gap = abs(complex((a - b).evalf(15, subs=point, chop=True)))
        scale = max(abs(complex(a.evalf(15, subs=point))), abs(complex(b.evalf(15, subs=point))))
    except (TypeError, ValueError, ArithmeticError):
        return False
    return gap > 1e-9 * (1 + scale)


def _all_pairs_differ(golds: list, preds: list, tolerance: float) -> bool:
    from sympy import Eq, Expr, Float, Integral, Rational, UnevaluatedExpr, diff
    from sympy.core.function import AppliedUndef
    from sympy.core.relational import Relational
    from sympy.matrices.expressions import MatrixExpr

    def plain(e: Any) -> bool:
        return (isinstance(e, Expr) and not isinstance(e, MatrixExpr) and not e.is_Symbol
                and not e.has(UnevaluatedExpr) and not e.atoms(AppliedUndef))

    for g in golds:
        for p in preds:
            if isinstance(g, str) and isinstance(p, str):
                if g.strip() and g.strip() == p.strip():
                    return False
                continue
            if isinstance(g, str) or isinstance(p, str):
                continue  # math-verify never matches a string with an expression
            if plain(g) and isinstance(p, Eq):
                p = p.rhs  # verify compares a value with an equation's right side (n = 0 against 2005)
            elif plain(g) and isinstance(p, Relational):
                continue  # a value is never an inequality
            if not (plain(g) and plain(p)):
                return False
            symbols = sorted(g.free_symbols | p.free_symbols, key=str)
            point = {s: Rational(7 + 3 * i, 13 + 4 * i) for i, s in enumerate(symbols)}
            if g.has(Integral) or p.has(Integral):  # no value to evaluate: a derivative that is not 0 will do
                if not any(_clearly_nonzero(diff(g, s), diff(p, s), point) for s in symbols):
                    return False
                continue
            try:
                gap = abs(complex((g - p).evalf(15, subs=point, chop=True)))
                scale = max(abs(complex(g.evalf(15, subs=point))), abs(complex(p.evalf(15, subs=point))))
            except (TypeError, ValueError, ArithmeticError):
                return False
            bound = 1e-9 * (1 + scale)
            if not symbols and (g.has(Float) or p.has(Float)):
                bound = max(bound, 2 * tolerance * scale)
            if not gap > bound:
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


DESCRIPTION = (
    "1.0 when the completion's final answer is mathematically equal to the gold `answer`, else 0.0; None (not "
    "applicable) when the gold is empty, longer than max_chars or does not parse (`data check` lists such rows). "
    "The final answer is the content of the last <answer>...</answer> block, else of the last \\boxed{} (earlier "
    "boxes do not count), else an answer-anchored or final LaTeX math span (see `extract`); no answer found scores "
    "0.0. Golds and "
    "answers may be plain numbers (42, -3.5, .4, 1,000, 1\\,000, 28 \\%, \\$12.50, 2.5 kg), scientific notation "
    "(5.02e-18, 1.37 \\times 10^{-3}), LaTeX (2\\sqrt{3} is 2*sqrt(3), not 2), or Python/sympy syntax "
    "(-896*x**5 + 3*x**2 - 7, sqrt(2)/2). Equal means: the same number, the same set in any order, the same "
    "interval, an equivalent equation or expression (x = 2 equals 2). " + RULE + " Completion text is never "
    "evaluated: only a LaTeX grammar and Python's ast parser read it. Each item runs in a worker process under the "
    "timeout (default 10 s); a timed-out item scores None and is counted as a timeout."
)


@reward(
    name="math",
    description=DESCRIPTION,
    requires={"answer": str | int | float},
    params=MathParams,
    executor="process",
    timeout=10.0,
    check_row=check_gold,
    examples=[
        {"completion": "... so the answer is $\\boxed{\\sqrt{12}}$.", "answer": "2\\sqrt{3}", "score": 1.0},
        {"completion": "<think>2/4 = 1/2</think><answer>0.5</answer>", "answer": "\\frac{1}{2}", "score": 1.0},
        {"completion": "First \\boxed{3}, but correcting: \\boxed{5}", "answer": "5", "score": 1.0},
        {"completion": "The roots satisfy $x \\in [1, 3)$. Final: \\boxed{[1,3)}", "answer": "[1, 3)", "score": 1.0},
        {"completion": "\\boxed{-896x^{5} + 3x^{2} - 7}", "answer": "-896*x**5 + 3*x**2 - 7", "score": 1.0},
        {"completion": "\\boxed{1.37 \\times 10^{-3}}", "answer": "1.37e-3", "score": 1.0},
        {"completion": "\\boxed{0.3333333}", "answer": "1/3", "score": 1.0},
        {"completion": "\\boxed{0.333}", "answer": "1/3", "score": 0.0},
        {"completion": "\\boxed{\\frac{1}{2^{98}}}", "answer": "\\frac{1}{2^{99}}", "score": 0.0},
        {"completion": "no final answer here", "answer": "42", "score": 0.0},
        {"completion": "\\boxed{5}", "answer": "\\frac{1}{", "score": None},
    ],
)
def math_answer(completion: str, *, answer: Any, params: MathParams, **_) -> float | None:
    """The reward: None for an unreadable gold (never a free 1.0), 0.0 for no answer, else the rule's verdict."""
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
