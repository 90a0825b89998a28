"""The contest judge against a suite of public problems whose submissions say what verdict they earn.

``tests/data/contest/``: Kattis problemtools' examples (a custom output
validator, an interactive problem, a memory hog, IOI-style subtasks) and
three problems of our own built on testlib's interactor and checkers
(``suite.json`` gives each problem's limits).  Every submission in a language
the judge supports must get its folder's verdict, its first failing test's
verdict as Kattis reports it (ICPC-style: judging stops there).  Real
sandboxes, real compilers; skipped, naming why, where the sandbox or a
toolchain is missing.
"""

from __future__ import annotations

import time

import pytest
from contest_suites import DATA as SUITE
from contest_suites import MANIFEST
from contest_suites import suite_problem as load

from reward_plugins.contest.judge import Program, judge
from reward_plugins.contest.languages import LANGUAGES, missing
from reward_plugins.sandbox.bwrap import isolation

EXTENSIONS = {".c": "c", ".cc": "cpp", ".cpp": "cpp", ".java": "java", ".js": "javascript", ".py": "python",
              ".rs": "rust", ".go": "go"}
FOLDERS = {"accepted": "AC", "wrong_answer": "WA", "time_limit_exceeded": "TLE", "memory_limit_exceeded": "MLE",
           "run_time_error": "RE", "partially_accepted": None}
QUICK = {"kattis/hello/submissions/accepted/hello.cc", "kattis/different/submissions/wrong_answer/different_int.cc"}

pytestmark = pytest.mark.skipif(isolation().mode != "root", reason=f"the contest judge needs the code sandbox in "
                                f"root mode: {isolation().mode} ({isolation().reason or 'not root'})")


def submissions() -> list[tuple[str, str, str, object]]:
    found = []
    for name, spec in MANIFEST.items():
        for path in sorted((SUITE / name / "submissions").glob("*/*")):
            language = EXTENSIONS.get(path.suffix)
            if language is None or path.stem.endswith("_py2") or path.parent.name not in FOLDERS:
                continue  # Python 2, languages the judge does not run, slow_accepted (a margin, not a verdict)
            relative = str(path.relative_to(SUITE / name))
            expected = spec.get("expect", {}).get(relative, FOLDERS[path.parent.name])
            found.append((name, relative, language, expected))
    return found


CASES = submissions()


def _marks(name: str, relative: str) -> list:
    return [] if f"{name}/{relative}" in QUICK else [pytest.mark.slow]


@pytest.mark.parametrize(("name", "relative", "language", "expected"), [
    pytest.param(*case, id=f"{case[0]}/{case[1]}", marks=_marks(case[0], case[1])) for case in CASES])
def test_submission_gets_its_verdict(name, relative, language, expected):
    if problem := missing(LANGUAGES[language]):
        pytest.skip(problem)
    source = (SUITE / name / relative).read_text()
    report = judge(Program(LANGUAGES[language], source), load(name), deadline=time.monotonic() + 300,
                   stop_on_failure=True)
    detail = f"verdicts {report.verdicts}, log {report.compile_log[-300:]!r}, details {report.details}"
    if isinstance(expected, float):
        assert report.score == expected, detail
    else:
        first = next((v for v in report.verdicts if v not in ("AC", "SKIP")), "AC")
        assert first == expected, detail


def test_suite_covers_what_the_issue_asks():
    """Accepted, wrong, TLE and MLE submissions in C++ and in Python; a special judge, an interactive problem and
    subtasks among the problems."""
    kinds = {(language, expected) for _, _, language, expected in CASES}
    for language in ("cpp", "python"):
        for verdict in ("AC", "WA", "TLE", "MLE"):
            assert (language, verdict) in kinds, (language, verdict)
    assert any("checker" in spec for spec in MANIFEST.values())
    assert any("interactor" in spec for spec in MANIFEST.values())
    assert any(spec.get("subtasks") for spec in MANIFEST.values())
