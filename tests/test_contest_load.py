"""The contest judge's verdicts do not depend on what else the machine is doing (issue 43).

A completion's budget counts the CPU seconds of its work (compiles, runs, checks), and a completion stopped by it
(or by the host's wall-clock backstop for the item) scores None, counted as ``contest/budget``: the tests it left
unrun are not failures of its program's.

A program's wall-clock bound (twice its time limit and a second), a compiler's (twice its CPU limit) and a
checker's count wall time less the time the processes spent runnable but waiting for a CPU: here the judge's
sandbox and a dozen busy processes share one core, so every program gets a small share of it, and one that
needs 0.4 CPU seconds under a 1 s limit is still accepted, a starved compile still compiles, while a program
that sleeps past its limit is still stopped (TLE).  Before, the plain wall clock made both of the first TLE and CE.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest
from conftest import cores

from grpo_host import get_reward
from grpo_host.scoring.worker import item_deadline
from reward_plugins.contest.judge import Case, Compile, Problem, Program, jail_for, judge
from reward_plugins.contest.languages import LANGUAGES, missing
from reward_plugins.contest.rewards import BUDGET_MARGIN
from reward_plugins.sandbox.bwrap import isolation

pytestmark = [
    pytest.mark.skipif(isolation().mode != "root", reason="the contest judge needs the code sandbox in root mode: "
                                                          f"{isolation().reason or 'not root'}"),
    pytest.mark.skipif(bool(missing(LANGUAGES["c"])), reason=str(missing(LANGUAGES["c"]))),
    pytest.mark.timeout(300),
]
slow = pytest.mark.slow  # several seconds each: the program gets a thirteenth of a core

HOGS = 12
SPIN = """#include <stdio.h>
#include <time.h>
/* NONCE */
int main(void) {
    volatile unsigned long n = 0;
    while (clock() < 0.4 * CLOCKS_PER_SEC) n++;  /* 0.4 s of this process's CPU time, however long it waits */
    puts("done");
    return 0;
}
"""
PRINT = "#include <stdio.h>\n/* NONCE */\nint main(void) { puts(\"done\"); return 0; }\n"
SLEEP = "#include <unistd.h>\n/* NONCE */\nint main(void) { sleep(30); return 0; }\n"
ONE = Problem((Case("", "done\n"),), time_limit=1.0)


@pytest.fixture
def starved(start_hogs) -> Iterator[None]:
    """The judge's sandbox (started afresh from this process, so it inherits its CPU) and :data:`HOGS` busy processes
    on one core; the sandbox is closed after, so no other test gets it pinned."""
    cpu, before = min(cores()), os.sched_getaffinity(0)
    jail = jail_for(frozenset({"c"}))
    jail.close()
    os.sched_setaffinity(0, {cpu})
    try:
        start_hogs(HOGS, cpu=cpu, sessions=True)
        time.sleep(0.2)  # the hogs are spinning before the sandbox starts
        yield
    finally:
        jail.close()
        os.sched_setaffinity(0, before)


def _judge(source: str, compile_limits: Compile | None = None) -> list[str]:
    program = Program(LANGUAGES["c"], source.replace("NONCE", f"{time.time_ns()}"))
    return judge(program, ONE, deadline=time.monotonic() + 120, compile_limits=compile_limits or Compile()).verdicts


@slow
def test_a_starved_program_that_works_within_its_limit_is_accepted(starved):
    """0.4 CPU seconds at a thirteenth of a core: about 5 s by the wall clock, past the 3 s bound (TLE before)."""
    assert _judge(SPIN) == ["AC"]


@slow
def test_a_program_that_sleeps_past_its_limit_is_stopped_under_load(starved):
    assert _judge(SLEEP) == ["TLE"]


@slow
def test_a_starved_compile_is_not_a_compile_error(starved):
    """A fifth of a CPU second of compiling allowed (a wall bound of 0.4 s): gcc's few hundredths of a CPU second
    take longer than that by the wall clock at a thirteenth of a core, all of it waiting for the CPU (CE before)."""
    assert _judge(PRINT, Compile(seconds=0.2)) == ["AC"]


def test_the_budget_counts_the_cpu_seconds_of_the_work():
    """0.4 CPU seconds a test against a budget of 0.6: the second test spends it, the third is not run (the
    program is built first, so its compile, from the cache, spends nothing)."""
    program = Program(LANGUAGES["c"], SPIN.replace("NONCE", f"{time.time_ns()}"))
    assert judge(program, ONE, deadline=time.monotonic() + 120).verdicts == ["AC"]
    report = judge(program, Problem((Case("", "done\n"),) * 3, time_limit=1.0), deadline=time.monotonic() + 120,
                   cpu_budget=0.6)
    assert (report.verdicts, report.stopped) == (["AC", "AC", "SKIP"], True)


def test_a_completion_stopped_by_its_budget_scores_none_and_is_counted():
    """The host's backstop leaves no more than the margin: no test runs, and the completion is not scored as
    failing them (before: the worker's ITIMER_REAL, unset here, gave a full budget; or the unrun tests scored 0)."""
    contest = get_reward("contest")
    completion = "```c\n" + PRINT.replace("NONCE", f"{time.time_ns()}") + "```"
    with item_deadline(BUDGET_MARGIN):
        scored = contest.fn(completion, params=contest.params(), tests=[{"input": "", "output": "done\n"}] * 2)
    assert scored.value is None and scored.counts["budget"] == 1 and scored.counts["skip"] == 2, scored
    assert contest.fn(completion, params=contest.params(), tests=[{"input": "", "output": "done\n"}]).value == 1.0
