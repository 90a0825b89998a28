"""Partial credit per test, and subtask scores that follow the judge's aggregation.

Each protocol's way for a checker to award part of a test's worth, run in the sandbox as the judge runs it:
testlib's ``quitp`` (exit 7, ``points <value>`` on stderr), a Kattis output validator's ``feedback/score.txt``
beside exit 42 (problemtools ``judge/validate.py``), a CMS checker's outcome on the first line of its stdout
(``cms/grading/steps/trusted.py``).  Then the groups: CMS ``GroupMin``, ``GroupMul`` and ``Sum``, Kattis ``min``
and ``sum``; and what a submission cannot do about its score (print a score, write ``score.txt``).  Real sandboxes,
real compilers; skipped, naming why, where the sandbox or g++ is missing.
"""

from __future__ import annotations

import time

import pytest

from grpo_host import get_reward
from reward_plugins.contest.judge import Case, Checker, Group, Problem, Program, judge
from reward_plugins.contest.languages import LANGUAGES, missing
from reward_plugins.contest.rows import RowProblem, problem_from_row
from reward_plugins.sandbox.bwrap import isolation

pytestmark = [
    pytest.mark.skipif(isolation().mode != "root", reason=f"the contest judge needs the code sandbox in root mode: "
                       f"{isolation().mode} ({isolation().reason or 'not root'})"),
    pytest.mark.skipif(bool(missing(LANGUAGES["cpp"])), reason=str(missing(LANGUAGES["cpp"]))),
]

TESTLIB_POINTS = r"""#include "testlib.h"
int main(int argc, char* argv[]) {
    registerTestlibCmd(argc, argv);
    int want = ans.readInt(), got = ouf.readInt();
    if (got == want) quitf(_ok, "exact");
    if (got < 0 || got > want) quitf(_wa, "%d is out of range", got);
    quitp(10.0 * got / want, "%d of %d", got, want);  // points out of 10
}
"""
KATTIS_SCORE = r"""#include <cstdio>
#include <fstream>
#include <string>
int main(int argc, char* argv[]) {
    std::ifstream answer(argv[2]);
    long want, got;
    answer >> want;
    if (scanf("%ld", &got) != 1) return 43;
    if (got == 999) { std::ofstream(std::string(argv[3]) + "score.txt") << "5"; return 43; }  // a validator's bug
    if (got < 0 || got > want) return 43;
    std::ofstream(std::string(argv[3]) + "score.txt") << 10.0 * got / want;
    return 42;
}
"""
CMS_OUTCOME = r"""#include <cstdio>
int main(int argc, char* argv[]) {
    FILE *correct = fopen(argv[2], "r"), *output = fopen(argv[3], "r");
    double want, got;
    fscanf(correct, "%lf", &want);
    if (fscanf(output, "%lf", &got) != 1) { puts("0.0"); fputs("no number\n", stderr); return 0; }
    if (got == 999) { puts("half"); return 0; }  // a checker's bug: not a number
    if (got == 1000) { puts("2.5"); return 0; }  // a checker's bug: more than the test's worth
    printf("%g\n", got / want);
    fputs(got == want ? "translate:success\n" : "translate:partial\n", stderr);
}
"""
ECHO_SECOND = "a, b = input().split()\nprint(b)\n"  # prints what the test's input says, so each test's share is set


def _judge(source: str, problem: Problem) -> object:
    return judge(Program(LANGUAGES["python"], source), problem, deadline=time.monotonic() + 120)


def _tests(*got: int, want: int = 4) -> tuple[Case, ...]:
    return tuple(Case(f"{want} {g}\n", f"{want}\n") for g in got)


@pytest.mark.slow  # compiles a checker with testlib.h: about 10 s on one core
def test_testlib_quitp_awards_points_of_a_test():
    problem = Problem(_tests(4, 2, 1, 0, 9), checker=Checker((("main.cpp", TESTLIB_POINTS),), "testlib"),
                      score_max=10)
    report = _judge(ECHO_SECOND, problem)
    assert report.verdicts == ["AC", "PC", "PC", "WA", "WA"], report.details
    assert report.scores == pytest.approx([1, 0.5, 0.25, 0, 0]) and report.score == pytest.approx(0.35)
    over = Problem(_tests(2), checker=problem.checker)  # 5 points of a test worth 1: more than it can earn
    failed = _judge(ECHO_SECOND, over)
    assert failed.verdicts == ["JE"] and "outside [0, 1]" in failed.details[0], failed.details


def test_kattis_score_txt_is_an_accepted_tests_score():
    problem = Problem(_tests(4, 2, 0, 5, 999), checker=Checker((("validate.cpp", KATTIS_SCORE),), "kattis"),
                      score_max=10)
    report = _judge(ECHO_SECOND, problem)
    # Kattis: accepted whatever the score (0 included); a rejection is WA; score.txt beside a rejection is JE
    assert report.verdicts == ["AC", "AC", "AC", "WA", "JE"], report.details
    assert report.scores == pytest.approx([1, 0.5, 0, 0, 0]) and "beside a rejection" in report.details[4]


def test_cms_checker_outcome_is_the_tests_fraction():
    problem = Problem(_tests(4, 1, 0, 999, 1000), checker=Checker((("checker.cpp", CMS_OUTCOME),), "cms"))
    report = _judge(ECHO_SECOND, problem)
    assert report.verdicts == ["AC", "PC", "WA", "JE", "JE"], report.details
    assert report.scores == pytest.approx([1, 0.25, 0, 0, 0])
    assert "'half' is not a number" in report.details[3] and "outside" in report.details[4]


def test_groups_follow_the_judges_aggregation():
    """CMS GroupMin, GroupMul and Sum (Kattis min and sum) over the same partial scores; a min group stops at its
    first test that scores 0, a sum group runs every test."""
    shares = (4, 2, 1, 0, 3, 4)  # 1, 0.5, 0.25, 0, 0.75, 1
    groups = (Group(30, (0, 1, 2), "min"), Group(20, (0, 1, 2), "mul"), Group(30, (1, 3, 4), "sum"),
              Group(20, (3, 5), "min"))
    problem = Problem(_tests(*shares), checker=Checker((("checker.cpp", CMS_OUTCOME),), "cms"), groups=groups)
    report = _judge(ECHO_SECOND, problem)
    assert report.verdicts == ["AC", "PC", "PC", "WA", "PC", "SKIP"], report.details
    assert report.group_scores == pytest.approx([30 * 0.25, 20 * 0.125, 30 * 1.25 / 3, 0])
    assert report.score == pytest.approx(22.5 / 100)


@pytest.mark.slow  # compiles a checker with testlib.h (as above) beside two others
def test_a_submission_cannot_award_itself_points():
    """What the checker reads is the program's output: its ``1`` (a CMS checker's full outcome, were the judge to
    read the program's stdout as one), ``points 10`` on its stderr (testlib's points line) and a ``score.txt`` it
    writes wherever it can are no score of its own.  Each checker gives ``1`` of ``40`` its 1/40 share."""
    spoof = ("import os, sys\nprint('1')\nprint('points 10', file=sys.stderr)\n"
             "for d in ('.', '/tmp', '/tmp/work', '/tmp/work/judge/feedback', os.environ.get('HOME', '.')):\n"
             "    try:\n        open(os.path.join(d, 'score.txt'), 'w').write('10')\n    except OSError:\n"
             "        pass\n")
    for name, source, protocol in (("main.cpp", TESTLIB_POINTS, "testlib"), ("v.cpp", KATTIS_SCORE, "kattis"),
                                   ("c.cpp", CMS_OUTCOME, "cms")):
        problem = Problem(_tests(4, want=40), checker=Checker(((name, source),), protocol),
                          score_max=1 if protocol == "cms" else 10)
        report = _judge(spoof, problem)
        assert report.score == pytest.approx(1 / 40), (protocol, report.verdicts, report.details)


def test_rows_name_aggregates_score_max_and_the_cms_protocol():
    base = {"tests": [{"input": "1\n", "output": "1\n"}] * 2}
    defaults = {"time_limit": 1.0, "memory_mb": 64, "output_mb": 1, "compare": "token", "float_tolerance": 1e-6}
    problem = problem_from_row({**base, "checker": CMS_OUTCOME, "checker_protocol": "cms", "score_max": 100,
                                "subtasks": [{"points": 5, "tests": [0, 1], "aggregate": "mul"}]}, **defaults)
    assert problem.checker.protocol == "cms" and problem.score_max == 100
    assert problem.groups == (Group(5.0, (0, 1), "mul"),)
    bad = [({"subtasks": [{"points": 5, "tests": [0], "aggregate": "max"}]}, "'max' is not one of min, mul, sum"),
           ({"score_max": 0}, "column 'score_max'"), ({"score_max": True}, "column 'score_max'"),
           ({"interactor": "x", "checker_protocol": "cms"},
            "'cms' is not one of testlib, kattis, default, coci for the interactor"),
           ({"subtasks": [{"points": float("nan"), "tests": [0]}]}, "points are not a non-negative number")]
    for extra, message in bad:
        with pytest.raises(RowProblem, match=message.replace("(", r"\(")):
            problem_from_row({**base, **extra}, **defaults)


def test_the_reward_counts_partial_credit_and_pass_fail_wants_full_worth():
    reward = get_reward("contest")
    row = {"tests": [{"input": f"4 {g}\n", "output": "4\n"} for g in (4, 2)], "checker": CMS_OUTCOME,
           "checker_protocol": "cms"}
    completion = f"```python\n{ECHO_SECOND}```"
    scored = reward.fn(completion, params=reward.params(), **row)
    assert scored.value == pytest.approx(0.75) and scored.counts["pc"] == 1 and scored.counts["ac"] == 1
    strict = reward.fn(completion, params=reward.params(pass_fail=True), **row)
    assert strict.value == 0.0


def test_an_interactors_score_is_the_tests_score():
    """A Kattis interactor's ``score.txt`` counts as a validator's: the program says how sure it is, the
    interactor (Python, ours) awards that share and accepts."""
    interactor = ("import sys\nprint(open(sys.argv[1]).read().strip(), flush=True)\n"
                  "said = sys.stdin.readline().strip()\n"
                  "open(sys.argv[3] + 'score.txt', 'w').write(said)\nsys.exit(42)\n")
    problem = Problem(_tests(4, 2, 0), interactor=Checker((("interactor.py", interactor),), "kattis"), score_max=4)
    report = _judge("a, b = input().split()\nprint(b, flush=True)\n", problem)
    assert report.verdicts == ["AC", "AC", "AC"] and report.scores == pytest.approx([1, 0.5, 0]), report.details
