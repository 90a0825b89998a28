"""Comparing two read values under the rule (``rewards.RULE``): numbers, units, percent, decimals, sets, expressions.

Two plain numbers are compared here as :class:`Fraction`\\ s; anything else
goes through math-verify's structural ``verify`` (sets, intervals, tuples,
relations, matrices, ``x = 2`` against ``2``) with its numeric step replaced
by the same rule (:func:`_sympy_close`): exact sides compare exactly; a
decimal equals an exact value only when it is that value rounded at its
written digits and within a relative ``tolerance``; two decimals agree to the
tolerance and to half a unit of the less precise one's last digit.  Units are
compared when both sides carry one (converted by :mod:`sympy.physics.units`),
degrees against radians when the other side is written with pi; an equation
of two numbers (``2 = 8``) is a false statement unless both sides agree.
Pairs that clearly differ skip ``simplify`` (:func:`_clearly_unequal`).
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Any

from reward_plugins.math.read import Number, Parsed, Unit, as_number, mv, own_timeout

VERDICT_CACHE_SIZE = 16384


def _close(a: Fraction, a_ulp: Fraction | None, b: Fraction, b_ulp: Fraction | None, tolerance: float) -> bool:
    """The comparison rule (see RULE) for two exact values, each possibly a written decimal with its last digit's unit.

    A decimal against an exact value must be that value rounded at the
    decimal's last digit (0.6666667 is 2/3, 0.6666672 is not, and the gold
    2.0000001 is not 2), or the same binary double (0.6666666666666666, as
    Python prints 2/3); two decimals must agree to half a unit of the less
    precise one's last digit; in all cases also to the relative tolerance.
    """
    if a_ulp is None and b_ulp is None:
        return a == b
    gap = abs(a - b)
    if gap > Fraction(str(tolerance)) * max(abs(a), abs(b)):  # str: 1e-6 exactly, not the binary float below it
        return False
    if gap <= max(u for u in (a_ulp, b_ulp) if u is not None) / 2:
        return True
    return (a_ulp is None) != (b_ulp is None) and float(a) == float(b)  # Python's repr: 0.6666666666666666 is 2/3


def numbers_equal(gold: Number, pred: Number, tolerance: float) -> bool:
    """Two plain numbers under the rule; a percent on one side only is read as Number.readings says."""
    if gold.percent and pred.percent:
        return _close(gold.value, gold.ulp, pred.value, pred.ulp, tolerance)
    return any(_close(a, au, b, bu, tolerance) for a, au in gold.readings() for b, bu in pred.readings())



@lru_cache(maxsize=1)
def verifier() -> Any:
    """math-verify with its LaTeX parser adapted (:func:`read.mv`) and its numeric step replaced by the rule."""
    math_verify = mv()
    _adapt_math_verify()
    return math_verify


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
    """RULE on two sympy values: matrices entry by entry, percents as for plain numbers, decimals as :func:`_close`.

    A decimal's written digits are read back from its Float (trailing zeros
    lost: inside a set or an expression ``2.50`` counts as ``2.5``).

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
            return all(_sympy_close(x, y, tolerance, numeric_precision)
                       for x, y in zip(a.flat(), b.flat(), strict=False))
        return False

    def readings(e: Any) -> list:
        if isinstance(e, Mul) and len(e.args) == 2 and e.args[1] == UnevaluatedExpr(Rational(1, 100)):
            p = e.args[0]
            return [p / 100] if p.is_number and abs(p) < 1 else [p / 100, p]
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
            if not bool(gap <= tolerance * scale):
                continue
            if not (x.is_Float or y.is_Float):  # decimals inside an expression: 0.6666672\pi is not 2\pi/3
                if _within_rounding(x, y):
                    return True
                continue
            ulps = [u for u in (_written_ulp(x), _written_ulp(y)) if u is not None]
            if not ulps or bool(gap <= Rational(max(ulps)) / 2):
                return True
            if len(ulps) == 1 and x.is_number and y.is_number and complex(x) == complex(y):
                return True  # the same binary double: Python's repr of the exact value
        except (TypeError, ValueError, ArithmeticError, AttributeError):
            continue
    return False


def _written_ulp(x: Any) -> Fraction | None:
    """The unit of a bare decimal's last written digit, read back from its Float; None for anything else."""
    written = _written(x) if getattr(x, "is_Float", False) else None
    return written[1] if written else None


def _written(x: Any) -> tuple[Fraction, Fraction]:
    """A Float as its decimal was written (read back from its digits: trailing zeros lost) and its last digit's unit."""
    from decimal import Decimal

    from mpmath.libmp import prec_to_dps, to_str

    text = to_str(x._mpf_, prec_to_dps(x._prec), strip_zeros=True).replace(".0e", "e")
    text = text[:-2] if text.endswith(".0") else text
    exact = Fraction(Decimal(text))
    exponent = Decimal(text).as_tuple().exponent
    assert isinstance(exponent, int)  # "n", "N", "F" are a NaN's or an infinity's, which Fraction refused above
    return exact, Fraction(10) ** exponent


MAX_ROUNDED = 4
"""Most decimals an expression may hold for :func:`_within_rounding` to try every rounding (2**4 corners)."""


def _within_rounding(x: Any, y: Any) -> bool:
    """Whether ``x - y`` can be 0 when each decimal in them is anywhere within half a unit of its last written
    digit: the RULE for decimals in expressions, so ``0.6666667\\pi`` is ``2\\pi/3`` and ``0.6666672\\pi`` is not.

    Each decimal is moved to both ends of its rounding interval (every
    combination, at most MAX_ROUNDED decimals; more are not equal); the
    difference's real and imaginary parts must each reach 0 or change sign
    over those corners.
    """
    from itertools import product

    from sympy import Float, Rational

    floats = sorted(x.atoms(Float) | y.atoms(Float), key=str)
    if not floats or len(floats) > MAX_ROUNDED:
        return False
    written = [_written(f) for f in floats]
    reals, imaginaries = [], []
    for corner in product((-1, 1), repeat=len(floats)):
        at = {f: Rational(v.numerator, v.denominator) + s * Rational(u.numerator, 2 * u.denominator)
              for f, (v, u), s in zip(floats, written, corner, strict=False)}
        value = complex((x.xreplace(at) - y.xreplace(at)).evalf(30))  # x - y would merge the decimals first
        reals.append(value.real)
        imaginaries.append(value.imag)
    return min(reals) <= 0 <= max(reals) and min(imaginaries) <= 0 <= max(imaginaries)


def _expands_to_zero(x: Any, y: Any) -> bool:
    """An exact proof cheaper than ``simplify``: ``x - y`` expands to 0 (``(x+1)^2`` and ``x^2+2x+1``), with ``i``
    into real and imaginary parts (``\\sqrt{2}e^{i\\pi/4}`` and ``1+i``, which ``simplify`` leaves apart)."""
    from sympy import Expr, I, expand, expand_complex

    if not (isinstance(x, Expr) and isinstance(y, Expr)):
        return False
    try:
        difference = expand(x - y)
        return difference == 0 or difference.has(I) and expand_complex(difference) == 0
    except Exception:  # sympy raises anything on odd trees; simplify still gets its turn
        return False


def _doit(e: Any) -> Any:
    try:
        return e.doit()
    except Exception:  # sympy raises anything from doit on odd trees; the value is then compared as it is
        return e


def equal(gold: Parsed, pred: Parsed, tolerance: float, set_relations: bool = False) -> bool:
    """The rule (RULE) on two parsed sides: plain numbers directly, anything else through math-verify's ``verify``.

    Units first (:func:`_in_same_units`), then an equation of two numbers
    in the answer (:func:`_false_equations`), then pairs that clearly differ
    (:func:`_clearly_unequal`, no cache: cheaper than a key).  ``verify``'s
    verdicts are cached per worker by the exact sympy structure of both
    sides (``srepr``: types, assumptions and Float precision included), so
    answers written differently but read alike run sympy's comparison once
    (the same text is not even read again: ``rewards._pays_text``).
    """
    sides = _in_same_units(gold, pred)
    if sides is None:
        return False
    gold, pred = sides
    if gold.number is not None and pred.number is not None:
        return numbers_equal(gold.number, pred.number, tolerance)
    known = gold.number or pred.number
    if known and known.ulp is not None:  # a decimal and \pi
        exact = as_number(pred if gold.number else gold)
        if exact is not None:
            return numbers_equal(gold.number or exact, pred.number or exact, tolerance)
    golds, stated = gold.expressions(), _false_equations(pred.expressions(), tolerance)
    if stated is None:
        return False
    preds = stated
    plain = _integer_sets_equal(golds, preds)
    if plain is not None:
        return plain
    if _clearly_unequal(golds, preds, tolerance):
        return False
    from sympy import srepr

    key = (tuple(map(srepr, golds)), tuple(map(srepr, preds)), tolerance, set_relations)
    verdict = _VERDICTS.get(key)
    if verdict is None:
        verdict = verifier().verify(
            golds,
            preds,
            float_rounding=tolerance,  # read by _sympy_close, the replaced numeric step
            allow_set_relation_comp=set_relations,
            timeout_seconds=own_timeout(),
        )
        if len(_VERDICTS) >= VERDICT_CACHE_SIZE:
            _VERDICTS.clear()
        _VERDICTS[key] = verdict
    return verdict


def _integer_sets_equal(golds: list, preds: list) -> bool | None:
    """``verify``'s verdict, without it, when each side is one interval of two integers, or each one set of integers
    (besides math-verify's string fallbacks): the same interval (ends and openness), the same elements, or the same
    text.  None for anything else.  (``verify`` reaches that verdict through sympy's ``symmetric_difference``, about
    10 ms a pair; exact integers leave it nothing else to find.)"""
    from sympy import FiniteSet, Interval

    values = [[e for e in side if not isinstance(e, str)] for side in (golds, preds)]
    if len(values[0]) != 1 or len(values[1]) != 1:
        return None
    (a,), (b,) = values
    if isinstance(a, Interval) and isinstance(b, Interval):
        if not all(getattr(x, "is_Integer", False) for x in (a.start, a.end, b.start, b.end)):
            return None
        same = (a.start, a.end, bool(a.left_open), bool(a.right_open)) == (b.start, b.end, bool(b.left_open),
                                                                            bool(b.right_open))
    elif isinstance(a, FiniteSet) and isinstance(b, FiniteSet):
        if not all(getattr(x, "is_Integer", False) for x in (*a.args, *b.args)):
            return None
        same = set(a.args) == set(b.args)
    else:
        return None
    texts = [[e.strip() for e in side if isinstance(e, str) and e.strip()] for side in (golds, preds)]
    return same or any(t in texts[1] for t in texts[0])


def _false_equations(preds: list, tolerance: float) -> list | None:
    """An answer ``2 = 8`` (an equation of two numbers) states nothing unless its sides agree; then it is their value.

    ``e = 30`` or ``i = 2`` (a lone letter latex2sympy reads as a constant) names a variable: its right side counts.
    In a chain (``x = 2 = 8``, read as ``Eq(x, 2) & Eq(2, 8)``) every link between two numbers must hold.

    None when some such equation is false (the answer is not paid); else the
    answers with each true numeric equation replaced by its right side.
    """
    from sympy import And, Eq

    out = []
    for p in preds:
        if isinstance(p, And):  # a chain, x = 2 = 8: every link between two numbers must hold
            links = [a for a in p.args if isinstance(a, Eq) and not a.free_symbols]
            if _false_equations(links, tolerance) is None:
                return None
        if isinstance(p, Eq) and not p.free_symbols and not (p.lhs.is_Atom and not p.lhs.is_Number):
            lhs, rhs = p.lhs, p.rhs  # (a lone constant on the left, e = 30, is a name: latex2sympy's e is Euler's)
            if not (_sympy_close(lhs, rhs, tolerance, 0) or _expands_to_zero(_doit(lhs), _doit(rhs))):
                return None
            p = rhs
        out.append(p)
    return out


DEGREE: Unit = (("degree", 1),)


def _in_same_units(gold: Parsed, pred: Parsed) -> tuple[Parsed, Parsed] | None:
    """Both sides in one unit, or None when their units are of different kinds (7 m against 7 kg).

    Units count only when both sides carry one: the gold is then converted
    into the answer's unit (3 m against 300 cm is 300 against 300); a side
    without a unit is compared by its value alone (the gold 5 pays 5 cm).
    The exception is an angle: degrees on one side against a value written
    with pi on the other are converted to radians (135° is 3π/4).
    """
    if gold.unit is not None and pred.unit is not None:
        if gold.unit == pred.unit:
            return gold, pred
        if any(name in _SCALES for name, _ in (*gold.unit, *pred.unit)):
            return _temperature(gold, pred)
        ratio = unit_ratio(gold.unit, pred.unit)
        return None if ratio is None else (_scaled(gold, ratio), pred)
    if (gold.unit == DEGREE) != (pred.unit == DEGREE):
        angle, other = (gold, pred) if gold.unit == DEGREE else (pred, gold)
        from sympy import pi

        if any(getattr(e, "has", lambda *_: False)(pi) for e in other.expressions()):
            radians = _scaled(angle, pi / 180)
            return (radians, pred) if angle is gold else (gold, radians)
    return gold, pred


def _scaled(side: Parsed, factor: Any) -> Parsed:
    """``side`` times ``factor`` (a Fraction keeps a plain number plain), without its unit."""
    if side.number is not None and isinstance(factor, Fraction):
        n = side.number
        number = Number(n.value * factor, n.ulp * factor if n.ulp is not None else None, n.percent)
        return Parsed(number=number)
    # a string fallback is the text as written, which scaling does not change: dropped, or 1 km would match 1 m
    return Parsed(sympy=tuple(_times(e, factor) for e in side.expressions() if not isinstance(e, str)))


def _times(e: Any, factor: Any) -> Any:
    """A read value times ``factor``: each number of a set, tuple or interval, each numeric side of a relation
    (``x = 45^\\circ``: the name stays)."""
    from sympy import Expr, FiniteSet, Interval, Tuple, Union
    from sympy.core.relational import Relational

    if isinstance(e, Expr):
        return e * factor
    if isinstance(e, Relational):
        return e.func(*(_times(a, factor) if a.is_number else a for a in e.args))
    if isinstance(e, Interval):
        return Interval(e.start * factor, e.end * factor, e.left_open, e.right_open)
    if isinstance(e, FiniteSet | Tuple | Union):
        return e.func(*(_times(a, factor) for a in e.args))
    return e


@lru_cache(maxsize=256)
def unit_ratio(a: Unit, b: Unit) -> Fraction | Any | None:
    """How many ``b`` one ``a`` is (km against m: 1000), or None when they measure different kinds of thing.

    Conversions are :mod:`sympy.physics.units`'; a prefixed name
    (``"1e-9 meter"``, ``"2^30 byte"``) is that power times the unit; an angle is a
    number of radians (a degree is pi/180); currencies are their own symbols
    (a dollar is a hundred cents, never euros); a temperature scale is never
    a ratio of another (see :func:`_temperature`).
    """
    from sympy import Rational, Symbol, pi
    from sympy.physics import units
    from sympy.physics.units import Quantity, convert_to

    extra = {"week": 7 * units.day, "ounce": units.pound / 16, "kilohertz": 1000 * units.hertz,
             "kilowatt": 1000 * units.watt, "kilojoule": 1000 * units.joule, "mph": units.mile / units.hour,
             "calorie": Rational(4184, 1000) * units.joule, "watthour": units.watt * units.hour,
             "degree": pi / 180, "radian": Rational(1),
             "USD": Symbol("USD"), "cent": Symbol("USD") / 100, "EUR": Symbol("EUR"), "GBP": Symbol("GBP")}
    if any(name in _SCALES for name, _ in (*a, *b)):
        return None

    def one(name: str) -> Any:
        scale, _, base = name.rpartition(" ")
        value = extra.get(base)
        if value is None:
            value = getattr(units, base, None)
            if not isinstance(value, Quantity):
                raise KeyError(name)
        if not scale:
            return value
        return value * Rational(2 if scale.startswith("2^") else 10) ** int(scale[2:])  # "1e9", "2^30"

    def quantity(unit: Unit) -> Any:
        value = Rational(1)
        for name, power in unit:
            value *= one(name) ** power
        return value

    base = [units.meter, units.kilogram, units.second, units.ampere, units.kelvin, units.mole, units.candela]
    try:
        ratio = convert_to(quantity(a) / quantity(b), base).simplify()
    except KeyError:
        return None
    if ratio.free_symbols or ratio.has(Quantity) or not ratio.is_number:
        return None
    return Fraction(int(ratio.p), int(ratio.q)) if ratio.is_Rational else ratio


TEMPERATURE_SCALES = {"celsius": (Fraction(1), Fraction(27315, 100)),
                      "fahrenheit": (Fraction(5, 9), Fraction(45967, 180)), "kelvin": (Fraction(1), Fraction(0))}
"""Each scale as (its degree in kelvins, its zero in kelvins): ``t`` on it is ``degree * t + zero`` kelvins."""
_SCALES = ("celsius", "fahrenheit")
"""The scales whose zero is not absolute: a conversion to or from them is not a ratio."""


def _temperature(gold: Parsed, pred: Parsed) -> tuple[Parsed, Parsed] | None:
    """Two temperatures on different scales (25 °C against 77 °F or 298.15 K), the gold converted to the answer's
    scale; None when either is not a plain number on a scale (a temperature is not a ratio of another unit)."""
    scales = [TEMPERATURE_SCALES.get(u[0][0]) if u and len(u) == 1 and u[0][1] == 1 else None
              for u in (gold.unit, pred.unit)]
    gold_scale, pred_scale = scales
    if gold_scale is None or pred_scale is None or gold.number is None or pred.number is None:
        return None
    (gs, go), (ps, po) = gold_scale, pred_scale
    n = gold.number
    value = ((gs * n.value + go) - po) / ps
    ulp = n.ulp * gs / ps if n.ulp is not None else None
    return Parsed(number=Number(value, ulp, n.percent)), Parsed(number=pred.number)


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
    mv = verifier()
    try:
        return bool(mv.utils.timeout(own_timeout())(_all_pairs_differ)(golds, preds, tolerance))
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