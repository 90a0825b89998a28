"""Checkers, output validators and interactors written in Python, run in the sandbox as the compiled ones are.

Kattis lets a problem's output validator be a Python program, CMS's checkers are often Python scripts (the CMS
suite's own comparator, ``tests/test_contest_cms.py``).  Here: Kattis problemtools' ``different`` judged by a
Python output validator and ``guess`` by a Python interactor (ours, written to the problems' statements and
their C++ validators; the problems, tests and submissions are the vendored ones), each with the verdicts its
submissions' folders say; a Python checker under testlib's protocol; and a Python judge that does not build.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from reward_plugins.contest.judge import Case, Checker, Problem, Program, judge
from reward_plugins.contest.languages import LANGUAGES, missing
from reward_plugins.sandbox.bwrap import isolation

KATTIS = Path(__file__).parent / "data" / "contest" / "kattis"

pytestmark = [
    pytest.mark.skipif(isolation().mode != "root", reason=f"the contest judge needs the code sandbox in root mode: "
                       f"{isolation().mode} ({isolation().reason or 'not root'})"),
    pytest.mark.skipif(bool(missing(LANGUAGES["cpp"])), reason=str(missing(LANGUAGES["cpp"]))),
]

DIFFERENT = """import sys
answer = open(sys.argv[2]).read().split()
output = sys.stdin.read().split()
if len(output) != len(answer):
    open(sys.argv[3] + 'judgemessage.txt', 'w').write('%d tokens, expected %d' % (len(output), len(answer)))
    sys.exit(43)
for got, want in zip(output, answer):
    try:
        if int(got) != int(want):
            sys.exit(43)
    except ValueError:
        sys.exit(43)
sys.exit(42)
"""
GUESS = """import sys
value = int(open(sys.argv[1]).read().split()[1])  # 'fixed <n>'
feedback = open(sys.argv[3] + 'judgemessage.txt', 'w')
for _ in range(10):
    line = sys.stdin.readline().split()
    if len(line) != 1 or not line[0].lstrip('-').isdigit() or not 1 <= int(line[0]) <= 1000:
        feedback.write('bad guess %r' % line)
        sys.exit(43)
    guess = int(line[0])
    print('correct' if guess == value else 'lower' if guess > value else 'higher', flush=True)
    if guess == value:
        sys.exit(43 if sys.stdin.read().split() else 42)
feedback.write('no correct answer in 10 guesses')
sys.exit(43)
"""


def _pairs(folder: Path) -> tuple[Case, ...]:
    return tuple(Case(i.read_text(), i.with_suffix(".ans").read_text()) for i in sorted(folder.glob("*.in")))


def _first_failure(language: str, path: Path, problem: Problem) -> str:
    if problem_text := missing(LANGUAGES[language]):
        pytest.skip(problem_text)
    report = judge(Program(LANGUAGES[language], path.read_text()), problem, deadline=time.monotonic() + 120,
                   stop_on_failure=True)
    return next((v for v in report.verdicts if v not in ("AC", "SKIP")), "AC")


@pytest.mark.slow  # five programs compiled and run on every test in the sandbox
def test_a_python_output_validator_judges_kattis_different():
    root = KATTIS / "different"
    problem = Problem(_pairs(root / "data" / "sample") + _pairs(root / "data" / "secret"), 1.0,
                      checker=Checker((("validate.py", DIFFERENT),), "kattis"))
    assert problem.checker is not None and problem.checker.language == "python"
    for path, language, expected in (("accepted/different.cc", "cpp", "AC"), ("accepted/different_py3.py", "python",
                                     "AC"), ("wrong_answer/different_int.cc", "cpp", "WA"),
                                     ("wrong_answer/different_no_abs.cc", "cpp", "WA")):
        assert _first_failure(language, root / "submissions" / path, problem) == expected, path


@pytest.mark.slow  # three programs, each interacting with the Python interactor on three tests
def test_a_python_interactor_judges_kattis_guess():
    root = KATTIS / "guess"
    fixed = tuple(case for case in _pairs(root / "data" / "secret") if case.input.startswith("fixed"))
    problem = Problem(fixed, 1.0, interactor=Checker((("interactor.py", GUESS),), "kattis"))
    for path, language, expected in (("accepted/guess.cc", "cpp", "AC"), ("wrong_answer/guess_0.cc", "cpp", "WA"),
                                     ("wrong_answer/guess.py", "python", "WA")):
        assert _first_failure(language, root / "submissions" / path, problem) == expected, path


def test_a_python_checker_speaks_testlibs_protocol_and_one_that_does_not_build_is_a_judge_error():
    checker = ("#!/usr/bin/env python3\nimport sys\n_, _, output, answer = sys.argv\n"
               "sys.exit(0 if open(output).read().split() == open(answer).read().split() else 1)\n")
    tests = (Case("1 2\n", "3\n"), Case("2 2\n", "5\n"))
    add = Program(LANGUAGES["python"], "a, b = map(int, input().split())\nprint(a + b)\n")
    report = judge(add, Problem(tests, checker=Checker((("checker", checker),), "testlib")),
                   deadline=time.monotonic() + 60)
    assert report.verdicts == ["AC", "WA"], report.details
    beside = Checker((("notes.txt", "not a program"), ("check.py", checker)), "testlib")  # data beside the entry
    assert beside.language == "python" and beside.run_argv()[-1] == "{bin}/check.py"
    assert judge(add, Problem(tests, checker=beside), deadline=time.monotonic() + 60).verdicts == ["AC", "WA"]
    broken = Checker((("checker.py", "def check(:\n"),), "testlib")
    report = judge(add, Problem(tests, checker=broken), deadline=time.monotonic() + 60)
    assert report.verdicts == ["JE", "JE"] and "checker" in report.compile_log
