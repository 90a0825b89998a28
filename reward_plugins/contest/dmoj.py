"""DMOJ's checker kinds: its bridged contrib modules, its Python ``check()`` checkers, its other built-in checkers.

Read at DMOJ judge-server ``3ea44acaf9cd`` (AGPL-3.0); written here from its semantics, none of its code copied:

* **Contrib modules** (``dmoj/contrib/*.py``), the ``type`` of a bridged checker or interactor, beside ``testlib``:
  ``default`` (exit 0 AC, 1 WA, anything else an internal error), ``coci`` (testlib's codes, and exit 7 with a
  line ``partial <a>/<b>`` on stderr: a/b of the points, a fraction outside [0, 1] or no such line an internal
  error) and ``peg`` (exit 0 AC or 1 WA, unless two consecutive lines of its stdout are numbers whose ratio is
  above 0: that share of the points, passed).  Their arguments (:data:`CHECKER_ARGS`, :data:`INTERACTOR_ARGS`)
  are the jail's to lay out (:func:`reward_plugins.contest.jail.judge_argv`).
* **Python ``check()`` checkers** (protocol ``dmoj``): DMOJ imports the module into its own process and calls
  ``check(process_output, judge_output, **kwargs)``; here the module is task data, so it runs as the judge's uid
  in the sandbox under the checker's limits, imported by :data:`RUNNER`, which reports ``{"passed", "points"}``
  on the stdout it kept for itself (the module's own prints go to stderr).
* **Built-in checkers** ``easy``, ``linecount``, ``sorted``, ``unordered``, ``rstripped``, ``identical``
  (:data:`COMPARES`), run on the host as the reward's other built-in compares are: they only compare bytes.

A result DMOJ calls passed with part of the points is PC here (the same score); passed with none is WA (score 0,
as testlib's ``quitp`` at 0 points already is); failed with points keeps them (DMOJ's ``linecount``), WA.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .judge import Verdict

__all__ = ["CHECKER_ARGS", "COMPARES", "INTERACTOR_ARGS", "LANGS", "PROTOCOLS", "RUNNER", "compare", "verdict"]

PROTOCOLS = ("default", "coci", "peg", "dmoj")
CHECKER_ARGS = {"default": ("input", "output", "answer"), "coci": ("input", "output", "answer"),
                "peg": ("answer", "output", "input"), "dmoj": ("input", "answer", "output")}
"""A checker's arguments by protocol (``get_checker_args_format_string``; ``coci`` inherits ``default``'s;
``dmoj``: :data:`RUNNER`'s)."""
INTERACTOR_ARGS = {"default": ("input", "answer"), "coci": ("input", "answer")}
"""An interactor's arguments by protocol (``get_interactor_args_format_string``); ``peg`` has none (DMOJ raises)."""
LANGS = {"C": "c", "C11": "c", "CPP03": "cpp", "CPP11": "cpp", "CPP14": "cpp", "CPP17": "cpp", "CPP20": "cpp",
         "PY3": "python", "RUST": "rust"}
"""DMOJ's bridged ``lang`` names, by the language the judge program is built as here (C++ is always C++17)."""
_COCI_PARTIAL = re.compile(rb"^partial ((\d+)/(\d*[1-9]\d*))$", re.MULTILINE)
COMPARES = ("easy", "linecount", "sorted", "unordered", "rstripped", "identical")

RUNNER = r"""
import importlib.util, json, os, sys, types
entry, point_value, input_file, answer_file, output_file = sys.argv[1:6]
result_fd = os.dup(1)
os.dup2(2, 1)
sys.stdout = sys.stderr

class CheckerResult:
    def __init__(self, passed, points, feedback=None, extended_feedback=None):
        assert isinstance(passed, bool)
        assert isinstance(points, (int, float))
        assert feedback is None or isinstance(feedback, str)
        assert extended_feedback is None or isinstance(extended_feedback, str)
        self.passed, self.points, self.feedback, self.extended_feedback = passed, points, feedback, extended_feedback

def utf8bytes(value):
    return value if isinstance(value, bytes) or value is None else value.encode('utf-8')

def utf8text(value, errors='strict'):
    return value if isinstance(value, str) or value is None else value.decode('utf-8', errors)

shim = {name: types.ModuleType(name) for name in ('dmoj', 'dmoj.result', 'dmoj.utils', 'dmoj.utils.unicode')}
shim['dmoj.result'].CheckerResult = CheckerResult
shim['dmoj.utils.unicode'].utf8bytes, shim['dmoj.utils.unicode'].utf8text = utf8bytes, utf8text
shim['dmoj'].result, shim['dmoj'].utils, shim['dmoj.utils'].unicode = (
    shim['dmoj.result'], shim['dmoj.utils'], shim['dmoj.utils.unicode'])
sys.modules.update(shim)
sys.path.insert(0, os.path.dirname(entry))
spec = importlib.util.spec_from_file_location('checker', entry)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
def read(name):
    with open(name, 'rb') as f:
        return f.read()
points = float(point_value)
source = os.path.join(os.path.dirname(input_file), 'source')
extra = {'submission_source': read(source)} if os.path.isfile(source) else {}
try:
    got = module.check(read(output_file), read(answer_file), judge_input=read(input_file), point_value=points,
                       case_position=0, batch=None, binary_data=False, **extra)
except UnicodeDecodeError:
    got = CheckerResult(False, 0, 'invalid unicode')
if isinstance(got, CheckerResult):
    said = {'passed': got.passed, 'points': float(got.points)}
elif isinstance(got, bool):
    said = {'passed': got, 'points': points if got else 0.0}
else:
    sys.exit('check() returned %s, neither a bool nor a CheckerResult' % type(got).__name__)
os.write(result_fd, (json.dumps(said) + '\n').encode())
"""
"""The ``dmoj`` protocol's judge, ``python -c RUNNER <module> <point value> <input> <answer> <output>``: the module
imported with a stand-in for the parts of DMOJ's package checkers import (``dmoj.result.CheckerResult``,
``dmoj.utils.unicode``), ``check()`` called with the keyword arguments DMOJ's standard grader passes that exist
here (``judge_input``, ``point_value``, ``case_position``, ``batch``, ``binary_data``, ``submission_source``; not
``execution_time``, ``submission_language``, ``problem_id``, ``case``, ``result``: a module that needs one fails,
a judge error), its answer written as one JSON line to the stdout it kept."""


def _scored(passed: bool, fraction: float, why: str = "") -> tuple[Verdict, float, str]:
    """A DMOJ result as a verdict: passed at full points AC, passed with part PC, otherwise WA (with its points)."""
    if not 0.0 <= fraction <= 1.0:
        return "JE", 0.0, f"the checker's points are {fraction:g} of the case's, outside [0, 1]"
    if passed and fraction > 0.0:
        return ("AC" if fraction == 1.0 else "PC"), fraction, why
    return "WA", fraction if not passed else 0.0, why


def verdict(result: dict, protocol: str, score_max: float) -> tuple[Verdict, float, str]:
    """A DMOJ contrib module's (or a ``check()`` module's) word on one test from the judge's exit code, stderr
    (``message``) and stdout, as ``parse_return_code`` reads them; an internal error of DMOJ's is JE."""
    code: int = result["exit"]
    stderr = str(result.get("message", "")).encode("utf-8", "surrogateescape")
    stdout = str(result.get("stdout", ""))
    if protocol == "default":
        if code in (0, 1):
            return ("AC", 1.0, "") if code == 0 else ("WA", 0.0, "")
        return "JE", 0.0, f"the checker exited {code}"
    if protocol == "coci":
        if code == 7:
            found = _COCI_PARTIAL.search(stderr)
            if found is None:
                return "JE", 0.0, "exit 7 without a 'partial <a>/<b>' line on stderr"
            return _scored(True, int(found[2]) / int(found[3]))
        if code in (0, 1, 2):  # testlib's ok, wrong answer, presentation error
            return ("AC", 1.0, "") if code == 0 else ("WA", 0.0, "")
        return "JE", 0.0, f"the checker exited {code}"
    if protocol == "peg":
        if code not in (0, 1):
            return "JE", 0.0, f"the checker exited {code}"
        lines = stdout.split("\n")
        for above, below in zip(lines, lines[1:], strict=False):
            try:
                share = float(above) / float(below)
            except (ValueError, ZeroDivisionError):
                continue
            if share > 0:
                return _scored(True, share)
        return ("AC", 1.0, "") if code == 0 else ("WA", 0.0, "")
    if code != 0:
        return "JE", 0.0, f"check() failed (exit {code})"
    try:
        said = json.loads(stdout.split("\n", 1)[0])
        passed, points = said["passed"], said["points"]
    except (ValueError, KeyError, TypeError):
        return "JE", 0.0, "check() gave no result"
    if not isinstance(passed, bool) or not isinstance(points, int | float):
        return "JE", 0.0, "check() gave no result"
    return _scored(passed, points / score_max)


def _lines(data: bytes) -> list[bytes]:
    return [line for line in re.split(rb"[\r\n]", data) if line]


def compare(name: str, output: bytes, answer: bytes) -> tuple[bool, float]:
    """DMOJ's built-in checker ``name`` on one test: (passed, the share of the points)."""
    if name == "easy":  # the same characters, whitespace dropped, in any order and any case
        strip = re.compile(rb"\s+")
        same = Counter(strip.sub(b"", output).lower()) == Counter(strip.sub(b"", answer).lower())
        return same, float(same)
    if name == "linecount":  # a point share per answer line matched (stripped), no more lines than the answer's
        got, want = _lines(output), _lines(answer)
        if len(got) > len(want):
            return False, 0.0
        if not want:
            return True, 1.0
        count = sum(g.strip() == w.strip() for g, w in zip(got, want, strict=False))
        return count == len(want), count / len(want)
    if name in ("sorted", "unordered"):  # the same lines (each as its tokens) or tokens, in any order
        if name == "sorted":
            got_items: list = sorted(line.split() for line in _lines(output))
            want_items: list = sorted(line.split() for line in _lines(answer))
        else:
            got_items = sorted(t for t in re.split(rb"\s", output) if t)
            want_items = sorted(t for t in re.split(rb"\s", answer) if t)
        same = got_items == want_items
        return same, float(same)
    if name == "rstripped":  # line by line, trailing whitespace ignored (blank lines count)
        got_all, want_all = re.split(rb"[\r\n]", output), re.split(rb"[\r\n]", answer)
        same = len(got_all) == len(want_all) and all(g.rstrip() == w.rstrip()
                                                     for g, w in zip(got_all, want_all, strict=False))
        return same, float(same)
    if name == "identical":  # byte for byte
        return output == answer, float(output == answer)
    raise ValueError(f"{name!r} is not one of DMOJ's built-in checkers here ({', '.join(COMPARES)})")
