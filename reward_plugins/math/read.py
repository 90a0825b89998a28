"""Reading an answer's text (a gold, a box's content, an answer block) as a value, without ``eval``.

Readers are tried cheapest first: a plain number (integers, decimals, ``.4``,
scientific notation ``1.37e-3`` and ``1.37 \\times 10^{-3}``, thousands
separators ``1,000`` ``1\\,000`` ``1{,}000``, fractions, mixed numbers
``3\\frac{1}{4}``, percent, currency and units) as exact :class:`Fraction`\\ s;
a Python/sympy-style expression (``-896*x**5 + 3*x**2``, ``sqrt(2)/2``: an
:mod:`ast` translator over a whitelist, :func:`read_python`); polynomial-style
LaTeX without a grammar (:func:`read_simple_latex`, the same values in a
fraction of the time); and last LaTeX through latex2sympy2-extended's grammar
as math-verify drives it (:func:`parse_latex`).

Completion text never reaches ``sympify``, ``parse_expr`` or ``eval``: the
LaTeX parser's number reading is replaced by an eval-free one
(:func:`_adapt_latex2sympy`), Python syntax is only ever ``ast.parse``\\ d,
and plain numbers are read by :class:`fractions.Fraction`.  A unit after a
value is kept beside it (:func:`split_unit`, :data:`UNIT_NAMES`) for the
comparison to use (any SI or binary prefix, temperature scales); ``i`` is the
imaginary unit (and ``j`` after a number when no ``i`` is written).
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
from typing import Any

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

# -- units -------------------------------------------------------------------------------------------------------

UNIT_NAMES = {
    **dict.fromkeys(("mm", "millimeter", "millimeters", "millimetre", "millimetres"), "millimeter"),
    **dict.fromkeys(("cm", "centimeter", "centimeters", "centimetre", "centimetres"), "centimeter"),
    **dict.fromkeys(("dm", "decimeter", "decimeters"), "decimeter"),
    **dict.fromkeys(("km", "kilometer", "kilometers", "kilometre", "kilometres"), "kilometer"),
    **dict.fromkeys(("m", "meter", "meters", "metre", "metres"), "meter"),
    **dict.fromkeys(("kg", "kilogram", "kilograms"), "kilogram"),
    **dict.fromkeys(("g", "gram", "grams"), "gram"),
    **dict.fromkeys(("mg", "milligram", "milligrams"), "milligram"),
    **dict.fromkeys(("lb", "lbs", "pound", "pounds"), "pound"),
    **dict.fromkeys(("oz", "ounce", "ounces"), "ounce"),
    **dict.fromkeys(("ml", "mL", "milliliter", "milliliters", "millilitre", "millilitres"), "milliliter"),
    **dict.fromkeys(("L", "l", "liter", "liters", "litre", "litres"), "liter"),
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), "second"),
    **dict.fromkeys(("ms", "millisecond", "milliseconds"), "millisecond"),
    **dict.fromkeys(("ns", "nanosecond", "nanoseconds"), "nanosecond"),
    **dict.fromkeys(("min", "mins", "minute", "minutes"), "minute"),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), "hour"),
    **dict.fromkeys(("day", "days"), "day"),
    **dict.fromkeys(("week", "weeks"), "week"),
    **dict.fromkeys(("Hz", "hertz"), "hertz"), "kHz": "kilohertz",
    **dict.fromkeys(("W", "watt", "watts"), "watt"), "kW": "kilowatt",
    **dict.fromkeys(("J", "joule", "joules"), "joule"), "kJ": "kilojoule",
    **dict.fromkeys(("N", "newton", "newtons"), "newton"), "Pa": "pascal", "V": "volt", "A": "ampere",
    "mol": "mole", "K": "kelvin",
    **dict.fromkeys(("ft", "foot", "feet"), "foot"),
    **dict.fromkeys(("in", "inch", "inches"), "inch"),
    **dict.fromkeys(("yd", "yard", "yards"), "yard"),
    **dict.fromkeys(("mi", "mile", "miles"), "mile"), "mph": "mph",
    **dict.fromkeys(("rad", "radian", "radians"), "radian"),
    **dict.fromkeys(("°", "deg", "degree", "degrees", "circ"), "degree"),
    **dict.fromkeys(("$", "dollar", "dollars", "USD", "usd"), "USD"), **dict.fromkeys(("cent", "cents"), "cent"),
    **dict.fromkeys(("€", "euro", "euros", "EUR"), "EUR"), **dict.fromkeys(("£", "GBP"), "GBP"),
}
"""Spellings of the units compared (values are the names :mod:`reward_plugins.math.compare` converts)."""
SI_SYMBOLS = {"m": "meter", "g": "gram", "s": "second", "Hz": "hertz", "W": "watt", "J": "joule", "N": "newton",
              "Pa": "pascal", "V": "volt", "A": "ampere", "mol": "mole", "L": "liter", "l": "liter",
              "eV": "electronvolt", "C": "coulomb", "F": "farad", "T": "tesla", "Ω": "ohm", "K": "kelvin",
              "cal": "calorie", "B": "byte", "bit": "bit", "Wh": "watthour"}
"""Unit symbols an SI prefix may precede (``nm``, ``GHz``, ``kPa``, ``μF``, ``MB``): :func:`unit_name` reads the
prefixed ones.  Alone, the one-letter C, F, T and B are not read as units (25 C is more often Celsius, B a choice)."""
SI_WORDS = {**{w: w for w in ["meter", "gram", "second", "watt", "joule", "hertz", "volt", "ampere", "newton",
                             "pascal", "liter", "mole", "electronvolt", "coulomb", "farad", "tesla", "ohm", "kelvin",
                             "calorie", "byte", "bit"]},
            "metre": "meter", "litre": "liter", "amp": "ampere"}
PREFIXES = {"Y": 24, "Z": 21, "E": 18, "P": 15, "T": 12, "G": 9, "M": 6, "k": 3, "h": 2, "da": 1, "d": -1, "c": -2,
            "m": -3, "μ": -6, "µ": -6, "u": -6, "n": -9, "p": -12, "f": -15}
BINARY_PREFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50}
PREFIX_WORDS = {"yotta": 24, "zetta": 21, "exa": 18, "peta": 15, "tera": 12, "giga": 9, "mega": 6, "kilo": 3,
                "hecto": 2, "deca": 1, "deka": 1, "deci": -1, "centi": -2, "milli": -3, "micro": -6, "nano": -9,
                "pico": -12, "femto": -15}
TEMPERATURES = {"C": "celsius", "F": "fahrenheit", "celsius": "celsius", "fahrenheit": "fahrenheit",
                "Celsius": "celsius", "Fahrenheit": "fahrenheit", "℃": "celsius", "℉": "fahrenheit"}
"""Temperature scales: C and F only after a degree sign (``25^\\circ C``, ``25 °F``); the rest anywhere."""
COUNT_WORDS = frozenset(["units", "unit", "people", "persons", "students", "apples", "items", "ways", "times",
                        "points", "square-units", "sq-units"])
"""Words after a number that name what is counted, not a unit: ignored (5 apples is 5)."""
_POWER_WORDS = {"sq": 2, "square": 2, "cubic": 3}
Unit = tuple[tuple[str, int], ...]
"""A unit as (name, power) pairs in :data:`UNIT_NAMES`' names (a prefixed one as ``"1e-9 meter"`` or ``"2^30 byte"``):
``(("meter", 1), ("second", -1))`` is m/s."""


def unit_name(word: str) -> str | None:
    """The unit a word names: a spelling in :data:`UNIT_NAMES`, or an SI prefix on a unit symbol (``nm``, ``GHz``,
    ``MB``; bytes and bits only from kilo up, so ``dB`` is none) or on a unit word (``megawatts``)."""
    name = UNIT_NAMES.get(word) or (UNIT_NAMES.get(word.lower()) if len(word) > 2 else None)
    if name is not None:
        return name
    if len(word) > 1 and word in SI_SYMBOLS and word not in PREFIXES:
        return SI_SYMBOLS[word]  # eV, cal, bit, Ω
    if word[:2] in BINARY_PREFIXES and word[2:] in ("B", "bit"):
        return f"2^{BINARY_PREFIXES[word[:2]]} {SI_SYMBOLS[word[2:]]}"  # GiB: 2^30 bytes, not 10^9
    for prefix in (word[:2], word[:1]):
        base = SI_SYMBOLS.get(word[len(prefix) :]) if prefix in PREFIXES and len(word) > len(prefix) else None
        if base is not None and (PREFIXES[prefix] >= 3 or base not in ("byte", "bit")):
            return f"1e{PREFIXES[prefix]} {base}"
    lower = word.lower()
    for prefix, exponent in PREFIX_WORDS.items():
        rest = lower[len(prefix) :] if lower.startswith(prefix) else ""
        rest = rest[:-1] if rest[:-1] in SI_WORDS and rest.endswith("s") else rest
        if rest in SI_WORDS:
            return f"1e{exponent} {SI_WORDS[rest]}"
    return None


def _known_word(word: str) -> bool:
    """Whether a word after a number is a unit, a counted thing or a power word (else the number is no number)."""
    return (unit_name(word) is not None or word in TEMPERATURES or word in _POWER_WORDS or word in ("μ", "µ")
            or word in COUNT_WORDS or word.lower() in COUNT_WORDS)


_TEXT_GROUP = re.compile(r"\\(?:text|mathrm|textrm|mbox|textbf|operatorname)\s*\{((?:[^{}]|\{[^{}]*\})*)\}")
_UNIT_PIECE = re.compile(r"[A-Za-zμµΩ]+|°|℃|℉|\\circ|\$|€|£|/|\^\s*\{?\s*-?\d\s*\}?|[²³]")


def read_unit(text: str) -> Unit | None:
    """The unit that ``text`` (what follows a value: ``\\text{ km}``, ``m/s^2``, ``^\\circ``, ``sq ft``,
    ``\\mathrm{m\\,s^{-1}}``, ``\\mu\\mathrm{m}``, ``^{\\circ}\\mathrm{C}``) names.

    None when it names none, only counted things (``apples``), or anything
    :func:`unit_name` does not know: only units this reward can convert are
    compared, the rest is ignored as before.
    """
    text = _TEXT_GROUP.sub(r" \1 ", text).replace("\\mu", " μ").replace("\\Omega", "Ω")
    powers: dict[str, int] = {}
    sign, pending, prefix, last, found = 1, 1, "", None, False
    name: str | None
    for piece in _UNIT_PIECE.findall(text):
        if piece == "/":
            sign = -1
            continue
        if piece[0] in "^²³":
            digits = re.sub(r"[^\d-]", "", piece) or ("2" if piece == "²" else "3")
            if last is None:
                return None
            powers[last] += (int(digits) - 1) * (1 if powers[last] > 0 else -1)
            continue
        word = piece.lstrip("\\")
        if word in _POWER_WORDS:
            pending = _POWER_WORDS[word]
            continue
        if word in ("μ", "µ"):
            prefix = "μ"  # \mu\mathrm{m}: the prefix written apart from its unit
            continue
        if word in COUNT_WORDS or word.lower() in COUNT_WORDS:
            continue
        if word in TEMPERATURES and (last == "degree" or word not in ("C", "F")):
            if last == "degree":  # 25^\circ C: the degree sign names the scale's degree, not an angle
                powers["degree"] -= sign * 1
            name = TEMPERATURES[word]
        else:
            name = unit_name(prefix + word)
        if name is None:
            return None
        powers[name] = powers.get(name, 0) + sign * pending
        last, pending, prefix, found = name, 1, "", True
    unit = tuple(sorted((n, p) for n, p in powers.items() if p))
    return unit if found and unit else None


_TEXT_UNIT = r"(?:\\mu\s*)?\\(?:text|mathrm|textrm|mbox)\s*\{(?:[^{}]|\{[^{}]*\})*\}"
_DEGREE = (r"(?:(?:\^\s*\{?\s*\\circ\s*\}?|°)(?:\s*(?:\\(?:text|mathrm|textrm)\s*\{\s*[CF]\s*\}|[CF](?![A-Za-z])))?"
           r"|℃|℉)")
_UNIT_TAIL = re.compile(
    r"(?P<value>.*?[\w}).])(?P<unit>(?:\s|\\[,;: ]|~)*"
    r"(?:" + _TEXT_UNIT + "|" + _DEGREE + r")"
    r"(?:\s*(?:/|\^)\s*(?:" + _TEXT_UNIT + r"|\{?\s*-?\d\s*\}?))*)\s*\.?\s*",
    re.S,
)


_J_NUMBER = re.compile(r"(?<![\w\\.])(\d+(?:\.\d+)?)\s*j(?![\w{])|(?<=[-+])(\s*)j(?![\w{])")
_LONE_I = re.compile(r"(?<![\w\\])i(?![\w{])")


def _imaginary_j(text: str) -> str:
    """``3-4j``, ``3 + j`` (Python's and engineering's imaginary unit: a number's suffix, or a signed term) as
    ``3-4i`` when the text has no ``i`` of its own; a j anywhere else (``x_j``, ``\\sum_j``, ``a+bj``, ``2j + i``)
    stays a variable."""
    if "j" not in text or _LONE_I.search(text):
        return text
    return _J_NUMBER.sub(lambda m: f"{m[1] or m[2]}i", text)


_DEGREE_MARK = re.compile(r"(?<=\d)\s*(?:\^\s*\{\s*\\circ\s*\}|\^\s*\\circ|°)(?![CF])")
_NUMERAL = re.compile(r"(?<![\d.])\d+(?:\.\d+)?")


def _angles(text: str) -> tuple[str, Unit | None]:
    """A list, set or tuple whose every number carries a degree sign (``\\{15^\\circ, 195^\\circ\\}``): the
    numbers, in degrees; else ``text`` as it is."""
    marks = len(_DEGREE_MARK.findall(text))
    if marks < 2 or marks != len(_NUMERAL.findall(text)):
        return text, None
    return _DEGREE_MARK.sub("", text), (("degree", 1),)


def split_unit(text: str) -> tuple[str, Unit | None]:
    """``text`` without a trailing ``\\text{...}`` unit or degree sign, and that unit (for the readers other than
    :func:`read_number`, which reads its own units): ``2x \\text{ km}`` is ``2x`` in kilometers."""
    m = _UNIT_TAIL.fullmatch(text)
    if m is None:
        return text, None
    unit = read_unit(m["unit"])
    return (m["value"], unit) if unit is not None else (text, None)


_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{3,}")
_MATH_WORDS = frozenset(["and", "sqrt", "cbrt", "exp", "log", "sin", "cos", "tan", "cot", "sec", "csc", "asin",
                        "acos", "atan", "sinh", "cosh", "tanh", "Abs", "abs", "factorial", "Rational", "Integral"])
_TEXT = re.compile(r"\\(?:text|mathrm|textrm|mbox|operatorname|begin|end)\s*\{[^{}]*\}")


def has_words(text: str) -> bool:
    """Whether ``text`` holds words of prose: a run of three or more letters, outside LaTeX commands, ``\\text{}``
    and ``\\begin{}``, that is not ``and`` or a function name (``sqrt(2)``, ``Integral``); unit words are a plain
    number's to read."""
    return any(w not in _MATH_WORDS for w in _WORD.findall(_TEXT.sub(" ", text)))


# -- plain numbers, read without sympy ---------------------------------------------------------------------------

_SEP = r"(?:,|\{,\}|\\,|\\ |\\;|\\!|\s|\u2009|\u202f|')"
_UNIT_TOKEN = (r"(?:\\(?:text|mathrm|textrm|mbox|textbf|operatorname)\s*\{(?:[^{}]|\{[^{}]*\})*\}"
               r"|(?<![A-Za-z\\])[A-Za-zμµΩ]+(?![A-Za-z])[²³]?|\\mu(?![A-Za-z])|\\Omega(?![A-Za-z])|℃|℉)"
               r"(?:\s*\^\s*\{?\s*-?\d\s*\}?)?")
"""A unit after a number: any word here, which :func:`read_number` then checks with :func:`_known_word`."""
_NUMBER = re.compile(
    r"(?P<sign>[-+−]?)\s*(?P<cur>\\\$|\$|\\textdollar|\\euro|€|£)?\s*(?:"
    r"(?P<rep_int>\d*)\.(?P<rep_fix>\d*)(?:\\overline\s*\{\s*(?P<rep>\d+)\s*\}|\((?P<rep_p>\d+)\)"
    r"|\\dot\s*\{?\s*(?P<rep_d>\d)\s*\}?)"
    r"|(?P<ell_int>\d*)\.(?P<ell>\d+)\s*(?:\\[lc]?dots|\.\.\.|…)"
    r"|(?P<whole>\d+)\s*(?:\\[dt]?frac\s*\{\s*(?P<mnum>\d+)\s*\}\s*\{\s*(?P<mden>\d+)\s*\}"
    r"|\\[dt]?frac(?P<mnum1>\d)(?P<mden1>\d))"
    r"|(?P<pwhole>\d+)[ \t]+(?P<pnum>\d+)\s*/\s*(?P<pden>\d+)"
    r"|(?P<mant>(?:\d{1,3}(?:" + _SEP + r"\d{3})+|\d+)(?:\.\d*)?|\.\d+)"
    r"(?:[eE](?P<exp>[-+]?\d+)|\s*(?:\\times|\\cdot|×|·|\*)\s*10\s*\^\s*(?:\{\s*(?P<exp2>[-+−]?\d+)\s*\}|(?P<exp3>[-+−]?\d+)))?"
    r"|\\[dt]?frac\s*\{\s*(?P<num>[-+]?\d+)\s*\}\s*\{\s*(?P<den>\d+)\s*\}"
    r"|\\[dt]?frac(?P<num1>\d)(?P<den1>\d)"
    r"|(?P<snum>\d+)\s*/\s*(?P<sden>\d+)"
    r")\s*(?P<pct>(?:\\,|\\ |~)?\s*(?:\\%|%)|\\text\s*\{\s*(?:\\?%|per\s*cent|pct)\s*\}|\s*per\s*cent\b|\s*pct\b)?"
    r"(?P<tail>(?:" + _UNIT_TOKEN + r"|\s*/\s*|\^\s*\{?\s*\\circ\s*\}?|°|€|£|\\\$|\\,|\\ |~|\s)*+)\.?\s*"
)
_SEPARATORS = re.compile(_SEP)
_BARE_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-zμµΩ]+")
_CURRENCY = {"\\$": "$", "$": "$", "\\textdollar": "$", "\\euro": "€", "€": "€", "£": "£"}


@dataclass(frozen=True)
class Number:
    """A plain number: its exact value; for a decimal, its last written digit's unit (None: an exact number)."""

    value: Fraction
    ulp: Fraction | None = None
    percent: bool = False
    unit: Unit | None = None

    def readings(self) -> list[tuple[Fraction, Fraction | None]]:
        """The values it may stand for (see RULE): p% is p/100, and also p itself when |p| >= 1 (45 for 45%)."""
        if not self.percent:
            return [(self.value, self.ulp)]
        fraction = (self.value / 100, self.ulp / 100 if self.ulp else None)
        return [fraction, (self.value, self.ulp)] if abs(self.value) >= 1 else [fraction]


def read_number(text: str) -> Number | None:
    """``text`` as a :class:`Number` when it is one plain number (with optional unit, percent, currency); else None.

    ``1,000`` is a thousand (math-verify's reading too) and ``0,5``-style
    decimal commas are left to the LaTeX reader; ``2x``, ``5\\pi`` or ``5^2``
    are not plain numbers (only known unit words may follow the digits, a
    power only a unit).  ``3\\frac{1}{4}`` is the mixed number 13/4, as
    latex2sympy reads it, and so is ``3 1/4``.  A repeating decimal is exact
    (``0.\\overline{3}``, ``0.(3)``, ``0.\\dot{3}``, and ``0.333...`` whose
    last digits are a period written twice); one with an ellipsis and no such
    period is truncated (``3.14159...`` lies in [3.14159, 3.14160)).
    """
    m = _NUMBER.fullmatch(text.strip())
    if m is None or sum(c.isdigit() for c in text) > MAX_DIGITS:
        return None
    sign = -1 if m["sign"] in ("-", "−") else 1
    percent = m["pct"] is not None
    if not all(map(_known_word, _BARE_WORD.findall(_TEXT_GROUP.sub(" ", m["tail"])))):
        return None  # 2x, 3 apples and oranges: words after the digits that are no unit make it no number
    unit = read_unit(_CURRENCY.get(m["cur"] or "", "") + " " + m["tail"])
    repeating = m["rep"] or m["rep_p"] or m["rep_d"]
    if repeating is not None:  # 0.1\overline{6}, 0.1(6), 0.1\dot{6}: exact, 1/6
        return Number(sign * _repeating(m["rep_int"], m["rep_fix"], repeating), None, percent, unit)
    if m["ell"] is not None:
        digits = m["ell"]
        start, period = _period(digits)
        if period:  # 0.333..., 0.1666\ldots, 0.255255...: the period written twice repeats
            return Number(sign * _repeating(m["ell_int"], digits[:start], digits[start : start + period]), None,
                          percent, unit)
        ulp = Fraction(1, 10 ** len(digits))  # 3.14159...: truncated, so anywhere in [3.14159, 3.14160)
        value = int(m["ell_int"] or "0") + Fraction(int(digits), 10 ** len(digits)) + ulp / 2
        return Number(sign * value, ulp, percent, unit)
    if m["pwhole"] is not None:  # 3 1/4, as GSM8K-style text writes a mixed number
        part, whole_of = int(m["pnum"]), int(m["pden"])
        if not 0 < part < whole_of:
            return None
        return Number(sign * (int(m["pwhole"]) + Fraction(part, whole_of)), None, percent, unit)
    if m["whole"] is not None:
        num, den = (m["mnum"], m["mden"]) if m["mnum"] is not None else (m["mnum1"], m["mden1"])
        if int(den) == 0:
            return None
        return Number(sign * (int(m["whole"]) + Fraction(int(num), int(den))), None, percent, unit)
    if m["mant"] is not None:
        mant = _SEPARATORS.sub("", m["mant"])
        exp_text = m["exp"] or m["exp2"] or m["exp3"]
        exponent = int(exp_text.replace("−", "-")) if exp_text else 0
        if abs(exponent) > MAX_EXPONENT:
            return None
        whole, _, frac = mant.partition(".")
        scaled = (Fraction(int(whole or "0") * 10 ** len(frac) + int(frac or "0"), 10 ** len(frac))
                  * Fraction(10) ** exponent)
        decimal = "." in mant or m["exp"] is not None
        return Number(sign * scaled, Fraction(10) ** (exponent - len(frac)) if decimal else None, percent, unit)
    num, den = (m["num"], m["den"]) if m["num"] is not None else (
        (m["num1"], m["den1"]) if m["num1"] is not None else (m["snum"], m["sden"]))
    if int(den) == 0:
        return None
    return Number(sign * Fraction(int(num), int(den)), None, percent, unit)


def _period(digits: str) -> tuple[int, int]:
    """Where the repeating part of ``digits`` starts and its period: the period whose repetition at the end covers
    the most digits, at least two full periods (the shorter on a tie: 0.255255 is 255 repeating, 0.2555 is 5);
    (0, 0) when nothing repeats."""
    best = (0, 0, 0)  # (digits covered, -period, start)
    for p in range(1, len(digits) // 2 + 1):
        start = len(digits) - p
        while start > 0 and digits[start - 1] == digits[start - 1 + p]:
            start -= 1
        if len(digits) - start >= 2 * p:
            best = max(best, (len(digits) - start, -p, start))
    return best[2], -best[1]


def _repeating(whole: str, fixed: str, period: str) -> Fraction:
    """``whole.fixed`` followed by ``period`` repeated for ever, exactly (0.1 then 6 repeating is 1/6)."""
    return (int(whole or "0") + Fraction(int(fixed or "0"), 10 ** len(fixed))
            + Fraction(int(period), (10 ** len(period) - 1) * 10 ** len(fixed)))


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
    ``pi``, ``E`` and ``oo`` are the constants, as in sympy, and ``I`` and
    ``i`` the imaginary unit, as the LaTeX reader reads ``3+2i``), ``+ - * / **``,
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
    constants = {"pi": sympy.pi, "E": sympy.E, "I": sympy.I, "i": sympy.I, "oo": sympy.oo}
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
            if index < len(tokens) and tokens[index] in ("\\frac", "\\dfrac", "\\tfrac"):
                return False  # 3\frac{1}{4} is a mixed number to latex2sympy (13/4), not a product
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
            one = index < len(tokens) and len(tokens[index]) == 1
            if one and (tokens[index].isdigit() or tokens[index].isalpha() and tokens[index] not in "EI"):
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
def mv() -> Any:
    """Import math-verify (and sympy) lazily, its LaTeX parser adapted: listing rewards must not pay for sympy."""
    import math_verify

    _adapt_latex2sympy()
    # Its "timeout is disabled" warning is expected here: the worker keeps time (see own_timeout).
    for name in ("math_verify.parser", "math_verify.grader"):
        logging.getLogger(name).setLevel(logging.ERROR)
    return math_verify


_DECIMAL_TOKEN = re.compile(r"(?>\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


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
    if (converter is None or not all(hasattr(converter, n) for n in needed)
            or not hasattr(latex2sympy2, "convert_number")):
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


def own_timeout() -> int | None:
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
    "\\mathrm{e}": "e", "\\mathrm{i}": "i", "\\operatorname{e}": "e", "\\text{i}": "i", "\\imath": "i",
    "\\varnothing": "\\emptyset",
}
_LATEX_SPELLINGS = re.compile("|".join(map(re.escape, _LATEX_SPELLED)))
_SCI = re.compile(r"(?<![\w\\.])((?>\d+(?:\.\d*)?|\.\d+))[eE]([-+]?\d+)(?![\w.])")  # atomic: linear on long digits


_TRIG_DEGREES = re.compile(r"(\\(?:sin|cos|tan|cot|sec|csc)\s*(?:\\left\s*)?\(?\s*)(\d+(?:\.\d+)?)\s*"
                           r"(?:\^\s*\{?\s*\\circ\s*\}?|°)")


def trig_degrees(latex: str) -> str:
    """An angle in degrees as a trigonometric function's argument, in radians: ``\\sin 30^\\circ`` is 1/2, not
    sin(30) (nor sin(30) in the unit degree)."""
    return _TRIG_DEGREES.sub(lambda m: f"{m[1]}\\frac{{{m[2]}\\pi}}{{180}}", latex) if "\\" in latex else latex


_PLAIN_NAMES = re.compile(r"(?<![\w\\])(pi|sin|cos|tan|cot|sec|csc|ln|log)(?![\w])(?=\s*[\w(\\{]|\s*$)")
"""Names written as plain text (``12 pi``, ``cot x``), which latex2sympy would read as products of letters."""


def _respell(latex: str) -> str:
    """LaTeX as latex2sympy reads it: 1.37e-3 as 1.37 \\times 10^{-3} (not 1.37 Euler - 3), oo and infinity as
    \\infty, pi and function names in plain text as commands, degrees in a trigonometric function as radians, and
    the spellings in _LATEX_SPELLED."""
    latex = trig_degrees(_SCI.sub(lambda m: f"{m[1]} \\times 10^{{{m[2]}}}", latex))
    latex = re.sub(r"(?<![\w\\])(?:oo|infinity)(?!\w)", r"\\infty", latex)
    latex = _PLAIN_NAMES.sub(r"\\\1", latex)
    return _LATEX_SPELLINGS.sub(lambda m: _LATEX_SPELLED[m[0]], latex)


@lru_cache(maxsize=2)
def _latex_config(anywhere: bool) -> Any:
    """Answer-anchored LaTeX spans first, then (``anywhere``) any; boxes are found before math-verify is asked."""
    return mv().LatexExtractionConfig(boxed_match_priority=-1, try_extract_without_anchor=anywhere)


def parse_latex(text: str, anywhere: bool = True) -> list:
    """math-verify's parse with LaTeX targets only (never its sympy-``eval`` expression target)."""
    found = mv().parse(
        _respell(text),
        extraction_config=[_latex_config(anywhere)],
        extraction_mode="first_match",
        parsing_timeout=own_timeout(),
    )
    return [_symbols(x) for x in found]


def _symbols(expr: Any) -> Any:
    """``i`` the imaginary unit and every other symbol real, as latex2sympy makes them unless it guesses complex input.

    ``(1-i)^2`` is then ``-2i`` and ``|5+12i|`` is 13.  Sets are left alone
    (rebuilding one would lose the written order that math-verify keeps for
    comparing tuples).
    """
    from sympy import Basic, FiniteSet, I, Interval, Symbol, Tuple

    if not isinstance(expr, Basic) or expr.has(FiniteSet):
        return expr
    odd = {s: I if s.name == "i" else Symbol(s.name, real=True) for s in expr.free_symbols
           if isinstance(s, Symbol) and (s.name == "i" or not s.is_real)}
    if not odd:
        return expr
    try:
        return expr.xreplace(odd)
    except (ValueError, TypeError):  # (2+3i, 2-3i) was read as an interval: with complex ends it is a pair
        pairs = expr.replace(lambda e: isinstance(e, Interval) and e.left_open and e.right_open,
                             lambda e: Tuple(e.start, e.end))
        try:
            return pairs.xreplace(odd)
        except (ValueError, TypeError):
            return expr


_DELIMITERS = ("$", "\\(", "\\[")
SPAN = re.compile(r"\$\$(?P<a>[^$]*)\$\$|\$(?P<b>[^$\n]*)\$|\\\((?P<c>(?:(?!\\[()]|\n).)*)\\\)"
                  r"|\\\[(?P<d>(?:(?!\\[\[\]]).)*)\\\]", re.S)
"""A math span; inline ones ($...$, \\(...\\)) stay on one line, as math-verify reads them.  No span holds an
opening delimiter of its own kind, so finding them all is linear in the text (an unclosed ``\\[`` costs one scan)."""


_SIGN_OUTSIDE = re.compile(r"([-+−])[ \t]*(\$(?!\$)|\\\(|\\\[)")


def sign_inside(text: str) -> str:
    """A sign written just outside math delimiters moved inside them: ``-$5$`` and ``- \\(5\\)`` are -5, not 5.
    A sign after a value or a closing delimiter (``$3$ - $5$``, ``2-$x$``) is an operator and stays."""
    if "$" not in text and "\\(" not in text and "\\[" not in text:
        return text

    def move(m: re.Match) -> str:
        before = text[: m.start()].rstrip()[-1:]
        if before and (before.isdigit() or before in "$)]}"):
            return m[0]
        return m[2] + ("-" if m[1] == "−" else m[1])

    return _SIGN_OUTSIDE.sub(move, text)


def has_delimiters(text: str) -> bool:
    text = text.replace("\\$", "")
    return any(d in text for d in _DELIMITERS)


@dataclass(frozen=True)
class Parsed:
    """A side of the comparison: a plain :class:`Number`, or sympy values (and math-verify's string fallbacks)."""

    number: Number | None = None
    sympy: tuple = ()
    unit: Unit | None = None

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


_JUXTAPOSED = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:\s|~|\\[,;:! ]|\\q?quad\b)++\d")
"""Two numbers with only spacing between them (``7 9``, ``7\\ 9``, ``7 \\quad 9``), once :func:`read_number` has
declined them as one number with thousands separators."""


@lru_cache(maxsize=GOLD_CACHE_SIZE)
def read_answer(text: str) -> Parsed | None:
    """An answer's own text (a raw gold, a box's or an answer tag's content): a number, Python syntax, or LaTeX.

    Cached per worker: the completions of one group repeat each other's answers.
    """
    text = sign_inside(text.strip())
    if not text:
        return None
    number = read_number(text)
    if number is not None:
        return Parsed(number=number, unit=number.unit)
    if text.count("\\approx") == 1:
        return _approximately(*text.split("\\approx"))
    if _JUXTAPOSED.search(text):
        return None  # 7 9 is 63 to one reader and 16 to the grammar: two numbers side by side are no value
    text, unit = split_unit(trig_degrees(_imaginary_j(text)))
    if unit is None:
        text, unit = _angles(text)
    parsed = _read_value(text)
    return Parsed(parsed.number, parsed.sympy, unit) if parsed is not None and unit is not None else parsed


def as_number(side: Parsed) -> Number | None:
    """A side that is one real number as a :class:`Number`: a plain one as it is, an exact constant
    (``\\pi``, ``\\sqrt{2}``) as its value to 50 digits (exact for any comparison with a written decimal); None
    for anything else (symbols, sets, complex values, sympy Floats)."""
    if side.number is not None:
        return side.number
    values = [e for e in side.sympy if not isinstance(e, str)]
    if len(values) != 1:
        return None
    from sympy import Expr, Float

    value = values[0]
    if not isinstance(value, Expr) or not value.is_number or value.has(Float) or value.is_real is not True:
        return None
    try:
        return Number(Fraction(str(value.evalf(50))))
    except (ValueError, TypeError, ArithmeticError):
        return None


def _approximately(left: str, right: str) -> Parsed | None:
    """``a \\approx b``: the exact side when the other is its rounding (``\\frac{2}{3} \\approx 0.667`` is 2/3), the
    value when the left names it (``x \\approx 0.67``), else no value (``4 \\approx 5`` states nothing true)."""
    a, b = read_answer(left), read_answer(right)
    if a is None or b is None:
        return None
    x, y = as_number(a), as_number(b)
    if x is None:
        return b if any(getattr(e, "free_symbols", None) for e in a.sympy) else None
    if y is None:
        return None
    ulps = [u for u in (x.ulp, y.ulp) if u is not None]
    if abs(x.value - y.value) > (max(ulps) / 2 if ulps else 0):
        return None
    return a if x.ulp is None or y.ulp is not None and x.ulp < y.ulp else b


_INT = r"\s*(0|-?[1-9]\d{0,17})\s*"
_INTEGER_INTERVAL = re.compile(r"\s*([(\[])" + _INT + "," + _INT + r"([)\]])\s*")
_INTEGER_SET = re.compile(r"\s*\\\{" + _INT + r"((?:," + _INT + r")*)\\\}\s*")


def read_integer_set(text: str) -> list | None:
    """An interval of two integers (``(-3, 2]``, the first below the second) or a set of integers (``\\{1, 5, 9\\}``)
    as the LaTeX grammar reads it, without it: the same sympy value (a set keeps its written order, as latex2sympy's
    does) and math-verify's string fallback, the text stripped.  None for anything else (``(5, 2)`` is a tuple there,
    ``[2, 2]`` a set of one: left to the grammar).  The most common set-valued answers, read in microseconds instead
    of the grammar's milliseconds; ``tests/test_math_reward.py`` holds it to the grammar's result."""
    interval = _INTEGER_INTERVAL.fullmatch(text)
    if interval is not None:
        left, a, b, right = interval.groups()
        if int(a) >= int(b):
            return None
        from sympy import Integer, Interval

        return [Interval(Integer(int(a)), Integer(int(b)), left == "(", right == ")"), text.strip()]
    numbers = _INTEGER_SET.fullmatch(text)
    if numbers is None:
        return None
    from latex2sympy2_extended.sets import FiniteSet  # sympy's, keeping the written order as the grammar's does
    from sympy import Integer

    rest = [n.strip() for n in numbers[2].split(",")[1:]]
    return [FiniteSet(*(Integer(int(n)) for n in [numbers[1], *rest])), text.strip()]


def _read_value(text: str) -> Parsed | None:
    """:func:`read_answer` after the unit is split off."""
    expression = read_python(text)
    text = _PLAIN_NAMES.sub(r"\\\1", text) if expression is None else text
    if expression is None:
        expression = read_simple_latex(text)
    if expression is not None:
        return Parsed(sympy=(_symbols(expression),))
    span = SPAN.fullmatch(text)
    inner = next((g for g in span.groups() if g is not None), "") if span else text.replace("\\$", "")
    if span:
        number = read_number(inner)
        if number is not None:
            return Parsed(number=number, unit=number.unit)
    found = read_integer_set(inner) or parse_latex(f"${inner}$")
    return Parsed(sympy=tuple(found)) if any(not isinstance(x, str) for x in found) else None
