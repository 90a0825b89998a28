"""Build the `math` reward's truth sets (tests/data/math/*.jsonl) from sources nobody here wrote.

Run:  python tests/data/math/make_truth.py math-verify GIT_DIR   (a clone of huggingface/Math-Verify)
      python tests/data/math/make_truth.py reasoning-gym          (needs the `reasoning-gym` package)

* ``math_verify_cases.jsonl``: every literal (gold, prediction, expected)
  case of math-verify's own parametrized tests, read from the test files with
  :mod:`ast` (nothing of theirs is imported or run), with the file, the test
  and the options the test passes (extraction targets, ``float_rounding``,
  ``allow_set_relation_comp``).  math-verify is Apache-2.0 (LICENCE in its
  repository, copied beside the data as MATH_VERIFY_LICENCE); the cases are
  its authors' work, vendored unchanged.
* ``reasoning_gym_truth.jsonl``: items of reasoning-gym's numeric and
  symbolic tasks, each with its dataset answer, a rewrite of that answer that
  is mathematically equal (another notation: LaTeX for Python syntax,
  scientific notation, thousands separators, a reordered set...) and a
  perturbed answer that is not, so the truth of every row is known by
  construction, not by any verifier.
"""

from __future__ import annotations

import ast
import json
import os
import random
import re
import subprocess
import sys
from decimal import Context, Decimal
from fractions import Fraction
from pathlib import Path

HERE = Path(__file__).parent
MV_TESTS = ["tests/test_all.py", "tests/test_numina_cases.py", "tests/test_open_thoughts.py",
            "tests/test_yujianll.py", "tests/test_boxed.py"]


def _git_show(git_dir: str, path: str) -> str:
    return subprocess.run(["git", "--git-dir", git_dir, "show", f"HEAD:{path}"], check=True, text=True,
                          capture_output=True).stdout


def math_verify_cases(git_dir: str) -> list[dict]:
    """The literal cases of every ``@pytest.mark.parametrize("gold, pred, expected"...)`` test in MV_TESTS."""
    commit = subprocess.run(["git", "--git-dir", git_dir, "rev-parse", "HEAD"], check=True, text=True,
                            capture_output=True).stdout.strip()
    rows = []
    for path in MV_TESTS:
        tree = ast.parse(_git_show(git_dir, path))
        for fn in (n for n in tree.body if isinstance(n, ast.FunctionDef)):
            body = ast.unparse(fn)
            targets = ["latex"] if 'match_types=["latex"]' in body.replace("'", '"') else ["latex", "expr"]
            if 'match_types=["expr"]' in body.replace("'", '"'):
                targets = ["expr"]
            precision = re.search(r"precision=(\d+)", body)
            for deco in fn.decorator_list:
                if not (isinstance(deco, ast.Call) and ast.unparse(deco.func).endswith("parametrize")):
                    continue
                names = [s.strip() for s in ast.literal_eval(deco.args[0]).split(",")]
                if names[:2] != ["gold", "pred"]:
                    continue
                for element in deco.args[1].elts:
                    try:
                        values = dict(zip(names, ast.literal_eval(element), strict=True))
                    except ValueError:  # not a literal (built with f-strings and calls): left out
                        continue
                    rows.append({
                        "source": f"huggingface/Math-Verify@{commit[:12]}:{path}::{fn.name}",
                        "gold": values["gold"],
                        "pred": values["pred"],
                        "expected": int(values.get("expected", values.get("result"))),
                        "targets": targets,
                        "float_rounding": int(values.get("precision", precision.group(1) if precision else 6)),
                        "allow_set_relation_comp": bool(values.get("allow_set_relation_comp", False)),
                    })
    return rows


# -- reasoning-gym ---------------------------------------------------------------------------------------------------

def _py_to_latex(expr: str) -> str:
    """Python/sympy syntax to LaTeX through sympy (dataset text, trusted here): the equal rewrite of a gold."""
    import sympy

    # natural log as \ln and inverse trig as \arctan: LaTeX's \log is base 10 to latex2sympy, as in school books
    return sympy.latex(sympy.parse_expr(expr.replace("^", "**")), ln_notation=True, inv_trig_style="full")


def _sci(value: str, rng: random.Random) -> str:
    """The same decimal in scientific notation, digit for digit (``Decimal`` shifts it exactly)."""
    d = Decimal(value)
    exponent = d.adjusted()
    mantissa = format(d.scaleb(-exponent, Context(prec=200)), "f")  # reasoning-gym lowers the global precision
    return rng.choice([f"{mantissa}e{exponent}", f"{mantissa} \\times 10^{{{exponent}}}", f"{mantissa}E{exponent:+03d}"])


def _perturb_decimal(text: str, rng: random.Random) -> str:
    """A different decimal: one significant digit changed (the last or a leading one), or the sign flipped."""
    body = text.lstrip("-")
    sign = "-" if text.startswith("-") else ""
    positions = [i for i, c in enumerate(body) if c.isdigit() and (c != "0" or i > 0)]
    if not positions or rng.random() < 0.15:
        return body if sign else f"-{body}" if Fraction(body) != 0 else "1"
    i = rng.choice([positions[-1], positions[0], rng.choice(positions)])
    digit = str((int(body[i]) + rng.randrange(1, 9)) % 10)
    return sign + body[:i] + digit + body[i + 1:]


def _thousands(n: int, rng: random.Random) -> str:
    text = f"{abs(n):,}"
    sep = rng.choice([",", "{,}", "\\,", "\\ "])
    return ("-" if n < 0 else "") + text.replace(",", sep)


def _integer(answer: str, rng: random.Random, var: str | None = None) -> tuple[str, str]:
    n = int(answer)
    forms = [f"\\frac{{{2 * n}}}{{2}}", f"{n}.0", f"{n}.00"]
    if abs(n) >= 1000:
        forms += [_thousands(n, rng)] * 3
    if var:
        forms += [f"{var} = {n}"] * 3
    wrong = rng.choice([n + 1, n - 1, n + 10, -n if n else 7, n * 10, int(str(abs(n))[::-1] or 0) + (n == 0)])
    if wrong == n:
        wrong = n + 2
    return rng.choice(forms), (f"{var} = {wrong}" if var and rng.random() < 0.3 else str(wrong))


def _fraction(answer: str, rng: random.Random) -> tuple[str, str]:
    num, den = (int(x) for x in re.findall(r"\d+", answer))
    k = rng.randrange(2, 6)
    value = Fraction(num, den)
    forms = [f"\\frac{{{num}}}{{{den}}}", f"\\dfrac{{{k * num}}}{{{k * den}}}", f"{k * num}/{k * den}",
             f"\\frac{{{num}}}{{{den}}}"]
    if den in (1, 2, 4, 5, 8, 10, 16, 20, 25, 40, 50, 100):
        forms.append(str(num / den))
    wrong = rng.choice([f"\\frac{{{num + 1}}}{{{den}}}", f"\\frac{{{den}}}{{{num}}}" if num != den else "2",
                        f"{num}/{den + 1}", f"{float(value) * 1.01:.3f}"])
    return rng.choice(forms), wrong


def _decimal(answer: str, rng: random.Random) -> tuple[str, str]:
    forms = [_sci(answer, rng), _sci(answer, rng)]
    if "e" not in answer.lower():
        forms += [answer + ("0" if "." in answer else ".0"), answer + ("00" if "." in answer else ".00")]
    if "." in answer and abs(Fraction(answer)) >= 1000:
        whole, frac = answer.split(".")
        forms.append(_thousands(int(whole), rng) + "." + frac)
    return rng.choice(forms), _perturb_decimal(answer, rng)


def _complex(answer: str, rng: random.Random) -> tuple[str, str]:
    m = re.fullmatch(r"(-?[\d.]+) ([+-]) ([\d.]+)i", answer.strip())
    if m is None:  # a purely real or imaginary answer
        return answer, answer + " + 1"
    re_, sign, im = Fraction(m[1]), m[2], Fraction(m[3])
    fmt = lambda q: str(int(q)) if q.denominator == 1 else str(float(q))  # noqa: E731
    forms = [f"{fmt(re_)} {sign} {fmt(im)}i", f"{sign if sign == '-' else ''}{fmt(im)}i + {fmt(re_)}".replace("+ -", "- "),
             f"{fmt(re_)}{sign}{fmt(im)}\\,i"]
    wrong = rng.choice([f"{fmt(re_)} {'+' if sign == '-' else '-'} {fmt(im)}i", f"{fmt(-re_)} {sign} {fmt(im)}i",
                        f"{fmt(re_ + 1)} {sign} {fmt(im)}i", f"{fmt(re_)} {sign} {fmt(im + 1)}i"])
    return rng.choice(forms), wrong


def _roots(answer: str, rng: random.Random) -> tuple[str, str]:
    roots = [r.strip() for r in answer.split(",")]
    shuffled = roots[:]
    rng.shuffle(shuffled)
    equal = ", ".join(shuffled)
    wrong = roots[:]
    i = rng.randrange(len(wrong))
    wrong[i] = _perturb_decimal(wrong[i], rng) if rng.random() < 0.7 or len(wrong) == 1 else ""
    return equal, ", ".join(w for w in wrong if w)


def _expression(answer: str, rng: random.Random) -> tuple[str, str]:
    """An expression in Python syntax: the same in LaTeX (or reordered), and one with a coefficient changed."""
    import sympy

    expr = sympy.parse_expr(answer)
    equal = rng.choice([_py_to_latex(answer), _py_to_latex(answer), str(sympy.expand(expr)), str(sympy.factor(expr))])
    numbers = [m for m in re.finditer(r"\d+", answer)]
    m = rng.choice(numbers) if numbers else None
    wrong = answer + " + x" if m is None else answer[: m.start()] + str(int(m.group()) + rng.randrange(1, 4)) + answer[m.end():]
    if sympy.simplify(sympy.parse_expr(wrong) - expr) == 0:
        wrong = answer + " + 1"
    return equal, rng.choice([wrong, _py_to_latex(wrong)])


TASKS = {  # reasoning-gym task -> (how its answers are rewritten, the variable name, if the answer is an assignment)
    "basic_arithmetic": _integer, "chain_sum": _integer, "gcd": _integer, "lcm": _integer, "products": _integer,
    "count_bits": _integer, "leg_counting": _integer, "simple_equations": _integer,
    "fraction_simplification": _fraction, "dice": _fraction,
    "decimal_arithmetic": _decimal, "decimal_chain_sum": _decimal, "power_function": _decimal,
    "number_format": _decimal,
    "complex_arithmetic": _complex, "polynomial_equations": _roots,
    "polynomial_multiplication": _expression, "simple_integration": _expression,
    "intermediate_integration": _expression,
}
WRAPPERS = ["The answer is \\boxed{%s}.", "So the result is $\\boxed{%s}$", "<think>...</think><answer>%s</answer>",
            "Final answer: \\boxed{%s}", "Let me check again: the value is $%s$. Therefore \\boxed{%s}"]


def reasoning_gym_rows(per_task: int, seed: int) -> list[dict]:
    import reasoning_gym

    rng, rows = random.Random(seed), []
    for task, rewrite in TASKS.items():
        for item in reasoning_gym.create_dataset(task, size=per_task, seed=seed):
            answer = str(item["answer"])
            if task == "simple_equations":
                var = item["metadata"].get("variable") or re.search(r"(?:for|of) ([a-z])\b", item["question"])[1]
                equal, wrong = _integer(answer, rng, var)
            else:
                equal, wrong = rewrite(answer, rng)
            for kind, text, truth in [("dataset answer", answer.strip("$"), 1), ("equal rewrite", equal, 1),
                                      ("perturbed", wrong, 0)]:
                wrapper = rng.choice(WRAPPERS)
                completion = wrapper.replace("%s", text)
                rows.append({"task": task, "kind": kind, "gold": answer, "completion": completion, "expected": truth})
    return rows


def main() -> None:
    if os.environ.get("PYTHONHASHSEED") != "0":  # some reasoning-gym tasks iterate over sets: same items every run
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "PYTHONHASHSEED": "0"})
    if sys.argv[1:2] == ["math-verify"]:
        rows = math_verify_cases(sys.argv[2])
        out = HERE / "math_verify_cases.jsonl"
        (HERE / "MATH_VERIFY_LICENCE").write_text(_git_show(sys.argv[2], "LICENCE"))
    elif sys.argv[1:2] == ["reasoning-gym"]:
        import importlib.metadata

        rows = reasoning_gym_rows(per_task=40, seed=2026)
        for row in rows:
            row["source"] = f"reasoning-gym {importlib.metadata.version('reasoning-gym')}, seed 2026"
        out = HERE / "reasoning_gym_truth.jsonl"
    else:
        raise SystemExit(__doc__)
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    print(f"{len(rows)} rows -> {out}")


if __name__ == "__main__":
    main()
