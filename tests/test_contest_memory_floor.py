"""Memory limits below 16 MiB, which the judges allow (CMS, Kattis, DOMjudge and DMOJ take any positive limit).

A program's ``ru_maxrss`` keeps the peak of the server image it was forked from (about 12 MiB), so below the old
16 MiB floor the sandbox cgroup's growth decides, with the runtime's RSS allowance and a MiB of the server's own;
where the cgroup's peak cannot be measured such a limit is a judge error, never an unmeasured pass.  Real
sandboxes, real compilers; skipped, naming why, where the sandbox or gcc is missing.
"""

from __future__ import annotations

import time

import pytest

from reward_plugins.contest.judge import MIB, Case, Problem, Program, jail_for, judge
from reward_plugins.contest.languages import LANGUAGES, missing
from reward_plugins.contest.rows import RowProblem, problem_from_row
from reward_plugins.sandbox.bwrap import isolation

pytestmark = [
    pytest.mark.skipif(isolation().mode != "root", reason=f"the contest judge needs the code sandbox in root mode: "
                       f"{isolation().mode} ({isolation().reason or 'not root'})"),
    pytest.mark.skipif(bool(missing(LANGUAGES["c"])), reason=str(missing(LANGUAGES["c"]))),
]


def _touching(mib: float) -> str:
    """A C program that allocates and touches ``mib`` MiB (volatile: the compiler may not elide it)."""
    n = int(mib * MIB)
    return (f"#include <stdio.h>\n#include <stdlib.h>\nint main(void) {{ volatile char *p = malloc({n}); "
            f"if (!p) return 3; long s = 0; for (long i = 0; i < {n}; i += 4096) p[i] = 1; "
            f"for (long i = 0; i < {n}; i += 4096) s += p[i]; printf(\"%d\\n\", s > 0); return 0; }}\n")


def _verdict(mib: float, limit_mib: int) -> str:
    problem = Problem((Case("", "1\n"),), 1.0, limit_mib * MIB)
    report = judge(Program(LANGUAGES["c"], _touching(mib)), problem, deadline=time.monotonic() + 60)
    cgroup = jail_for(frozenset({"c"})).cgroup
    if report.verdicts == ["JE"] and (cgroup is None or not cgroup.mark()):
        pytest.skip("the sandbox's cgroup peak cannot be reset here (cgroup v2 before Linux 6.12): limits below "
                    "16 MiB are judge errors")
    return report.verdicts[0]


def test_a_program_within_a_small_limit_passes_and_one_over_it_is_mle():
    assert _verdict(1, 2) == "AC"
    assert _verdict(8, 2) == "MLE"  # under RLIMIT_AS (the limit + 16 MiB), over the limit: the cgroup decides
    assert _verdict(3, 4) == "AC"
    assert _verdict(6, 4) == "MLE"


def test_rows_take_limits_down_to_a_mib():
    defaults = {"time_limit": 1.0, "memory_mb": 256, "output_mb": 1, "compare": "token", "float_tolerance": 1e-6}
    tests = [{"input": "", "output": "1\n"}]
    assert problem_from_row({"tests": tests, "memory_limit": 2}, **defaults).memory == 2 * MIB
    assert problem_from_row({"tests": tests, "memory_limit_bytes": 1 << 20}, **defaults).memory == MIB
    with pytest.raises(RowProblem, match=r"0.5 MiB is outside \[1, 16384\]"):
        problem_from_row({"tests": tests, "memory_limit": 0.5}, **defaults)
    with pytest.raises(RowProblem, match="not with an interactor"):
        problem_from_row({"tests": tests, "memory_limit": 8, "interactor": "int main() {}"}, **defaults)
