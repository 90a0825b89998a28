"""The contest judge's verdicts do not depend on what else the machine is doing (issue 43).

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

from reward_plugins.contest.judge import Case, Compile, Problem, Program, jail_for, judge
from reward_plugins.contest.languages import LANGUAGES, missing
from reward_plugins.sandbox.bwrap import isolation

pytestmark = [
    pytest.mark.skipif(isolation().mode != "root", reason="the contest judge needs the code sandbox in root mode: "
                                                          f"{isolation().reason or 'not root'}"),
    pytest.mark.skipif(bool(missing(LANGUAGES["c"])), reason=str(missing(LANGUAGES["c"]))),
    pytest.mark.slow,  # several seconds each: the program gets a thirteenth of a core
    pytest.mark.timeout(300),
]

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


def test_a_starved_program_that_works_within_its_limit_is_accepted(starved):
    """0.4 CPU seconds at a thirteenth of a core: about 5 s by the wall clock, past the 3 s bound (TLE before)."""
    assert _judge(SPIN) == ["AC"]


def test_a_program_that_sleeps_past_its_limit_is_stopped_under_load(starved):
    assert _judge(SLEEP) == ["TLE"]


def test_a_starved_compile_is_not_a_compile_error(starved):
    """A fifth of a CPU second of compiling allowed (a wall bound of 0.4 s): gcc's few hundredths of a CPU second
    take longer than that by the wall clock at a thirteenth of a core, all of it waiting for the CPU (CE before)."""
    assert _judge(PRINT, Compile(seconds=0.2)) == ["AC"]
