"""Interactive verdicts follow Kattis problemtools' rules and come out the same every run (issue 37).

problemtools' runner (``support/interactive/interactive.cc``) holds every pipe end until the process at its
other end has been reaped, so which of the two ended first is cause, not timing; its verdict logic
(``problemtools/judge/execute.py``) then takes the validator's rejection when the validator ended first, else the
program's own failure (TLE, then RE), else the validator's verdict.  Each class below is judged on ten tests in
one sandbox (the spinning ones on three: each runs to its time limit) and every test must get the verdict
problemtools gives, which ``docs/contest.md`` lists and which was checked against problemtools' own runner:

* the program ends on its own first (crashes at once, or closes its output and then crashes or runs over its
  limit): its own failure, though the validator reads the end of its input and rejects;
* the validator rejects first and the program then dies of it (a crash on end of input, a spin): WA;
* the validator accepts and the program then writes more, crashes, or spins: AC (no broken pipe: the validator's
  input stays open), RE, TLE.

Half of the ten tests use a validator that closes its output as it rejects and then writes its feedback for a
while: a program that reads end of input then (before the validator has ended) must still be second.  The
timing-dependent classes failed here before the fix, some every run (a program that closes its output and then
crashes got WA; a program that writes after the validator accepted got RE), some now and then.
"""

from __future__ import annotations

import time

import pytest

from reward_plugins.contest.judge import Case, Checker, Problem, Program, judge
from reward_plugins.contest.languages import LANGUAGES, missing
from reward_plugins.sandbox.bwrap import isolation

pytestmark = pytest.mark.skipif(isolation().mode != "root", reason=f"the contest judge needs the code sandbox in "
                                f"root mode: {isolation().mode} ({isolation().reason or 'not root'})")

VALIDATOR = r"""
// Kattis output validator (validator input answer feedback_dir < program's output > program's input): sends the
// input's number, accepts its double without reading on, rejects anything else.  On "slow" input a rejection
// closes the validator's output first and then takes a while over its feedback.
#include <cstdio>
#include <string>
#include <unistd.h>
int main(int argc, char **argv) {
    FILE *in = fopen(argv[1], "r");
    long n = 0, got = 0;
    char mode[16] = "";
    if (!in || fscanf(in, "%ld %15s", &n, mode) < 1) return 1;
    printf("%ld\n", n);
    fflush(stdout);
    if (scanf("%ld", &got) == 1 && got == 2 * n) return 42;
    if (std::string(mode) == "slow") {
        fclose(stdout);
        usleep(300000);
    }
    FILE *feedback = fopen((std::string(argv[3]) + "judgemessage.txt").c_str(), "w");
    if (feedback) fprintf(feedback, "expected %ld\n", 2 * n), fclose(feedback);
    return 43;
}
"""

READ = "#include <stdio.h>\n#include <stdlib.h>\n#include <unistd.h>\n"
SPIN = "for (volatile unsigned long i = 0;; ++i) {}"
ANSWER = 'long n; if (scanf("%ld", &n) != 1) return 0; printf("%ld\\n", 2 * n); fflush(stdout);'
WRONG = 'long n; if (scanf("%ld", &n) != 1) return 0; printf("%ld\\n", 2 * n + 1); fflush(stdout);'
UNTIL_END = "while (getchar() != EOF) {}"

CLASSES = {
    # the program ends on its own, first: its own verdict
    "crashes_at_once": ("c", "int main(void) { return 3; }", "RE"),  # Kattis guess_rte.c
    "closes_output_then_crashes": ("c", READ + "int main(void) { fclose(stdout); usleep(300000); return 3; }",
                                   "RE"),
    "closes_output_then_spins": ("c", READ + f"int main(void) {{ fclose(stdout); {SPIN} }}", "TLE"),
    # the validator rejects first; the program's end is its consequence
    "wrong_then_crashes_on_end_of_input": (
        "c", READ + f'int main(void) {{ {WRONG} if (scanf("%ld", &n) != 1) abort(); return 0; }}', "WA"),
    "wrong_then_raises_on_end_of_input": (  # DOMjudge boolfind-test-double.py, Kattis GuessCrash.java
        "python", "n = int(input())\nprint(2 * n + 1, flush=True)\nn = int(input())\n", "WA"),
    "wrong_then_spins": ("c", READ + f"int main(void) {{ {WRONG} {SPIN} }}", "WA"),  # Kattis guess_tle.cc
    # the validator accepts first; what the program does next counts
    "right_then_writes_after_accept": (
        "c", READ + f'int main(void) {{ {ANSWER} {UNTIL_END} printf("bye\\n"); fflush(stdout); return 0; }}', "AC"),
    "right_then_crashes": ("c", READ + f"int main(void) {{ {ANSWER} {UNTIL_END} return 3; }}", "RE"),
    "right_then_spins": ("c", READ + f"int main(void) {{ {ANSWER} {UNTIL_END} {SPIN} }}", "TLE"),
}
SPINNING = {"closes_output_then_spins", "wrong_then_spins", "right_then_spins"}


def _problem(runs: int) -> Problem:
    tests = tuple(Case(f"21 {'slow' if i % 2 else 'plain'}\n", "42\n") for i in range(runs))
    return Problem(tests, time_limit=0.5, interactor=Checker((("validate.cpp", VALIDATOR),), "kattis"))


@pytest.mark.parametrize("name", [pytest.param(name, marks=[pytest.mark.slow] if name in SPINNING else [])
                                  for name in CLASSES])
def test_interactive_verdict_is_problemtools_every_run(name):
    language, source, expected = CLASSES[name]
    if why := missing(LANGUAGES[language]) or missing(LANGUAGES["cpp"]):
        pytest.skip(why)
    runs = 3 if name in SPINNING else 10
    report = judge(Program(LANGUAGES[language], source), _problem(runs), deadline=time.monotonic() + 600)
    assert report.verdicts == [expected] * runs, (report.verdicts, report.details, report.compile_log[-300:])
