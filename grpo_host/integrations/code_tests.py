"""Code-task ground truths as trainers ship them, read as the ``code`` reward's ``tests``.

verl's code datasets (and the OpenRLHF recipes built on the same data) put
a problem's tests in the ground truth as prime_code JSON: ``{"inputs":
[...], "outputs": [...]}``, with ``"fn_name"`` for call-based problems.  The
``code`` reward reads a ``tests`` column, so the adapters turn such a ground
truth into that column when a chosen reward needs it and the row has none.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["prime_code_tests"]


def prime_code_tests(ground_truth: Any) -> Any:
    """The ``code`` reward's ``tests`` for a prime_code ground truth, or None when it is not one.

    ``{"inputs": [...], "outputs": [...]}`` is stdin/stdout cases (an input
    given as a list of lines is joined with newlines); with ``"fn_name"`` the
    cases are calls, written as asserts with literal arguments, which the
    code reward judges outside the program.
    """
    truth = ground_truth
    if isinstance(truth, str):
        try:
            truth = json.loads(truth)
        except ValueError:
            return None
    if not isinstance(truth, dict) or not isinstance(truth.get("inputs"), list) or \
            not isinstance(truth.get("outputs"), list) or len(truth["inputs"]) != len(truth["outputs"]):
        return None
    fn = truth.get("fn_name")
    if isinstance(fn, str) and fn.isidentifier():
        lines = []
        for args, want in zip(truth["inputs"], truth["outputs"]):
            args = args if isinstance(args, list) else [args]
            lines.append(f"assert {fn}({', '.join(repr(a) for a in args)}) == {want!r}")
        return "\n".join(lines)

    def text(value: Any) -> str:
        return "\n".join(map(str, value)) if isinstance(value, list) else str(value)

    return [{"input": text(i), "output": text(o)} for i, o in zip(truth["inputs"], truth["outputs"])]
