"""Where a HumanEval row's CPU goes in the `code` sandbox: per process, from /proc and a cpuacct cgroup.

Runs the 164 HumanEval canonical solutions (``code_exec.py``'s real
workload, planned as the reward plans them) through one warm sandbox, after
a warm-up, and reads before and after the rounds:

* the cgroup's CPU seconds (every process, as ``code_exec.py`` counts them);
* this process's own CPU (the host side: the request, the reply's checks);
* per process of the sandbox (``/proc/<pid>/stat``): the server's own CPU
  and page faults, what it reaped (the programs, script cases' judges,
  cleanup forks: their CPU and faults), the collector's, bwrap's and init's.

Page faults are the steadier measure on a shared machine: most of a fork's
cost is copying the pages each side writes after it.

Usage: ``python benchmarks/code_profile.py [--rounds 3] [--literal-only]`` (as root, like ``code_exec.py``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from code_exec import TIMEOUT, CpuMeter, workload  # noqa: E402  (benchmarks/ is not a package)

TICKS = os.sysconf("SC_CLK_TCK")


def counters(pid: int) -> tuple[float, float, int, int]:
    """(own CPU s, reaped children's CPU s, own minor faults, reaped children's minor faults) of ``pid``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return ((int(fields[11]) + int(fields[12])) / TICKS, (int(fields[13]) + int(fields[14])) / TICKS,
            int(fields[7]), int(fields[8]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--literal-only", action="store_true", help="only the literal-call rows (158 of 164)")
    args = parser.parse_args()
    from reward_plugins.code import shapes
    from reward_plugins.code.sandbox import Limits, Sandbox

    limits = Limits(timeout=TIMEOUT)
    rows = [(source, shapes.plan(tests)) for source, tests in workload("real", 0)]
    if args.literal_only:
        rows = [(source, plan) for source, plan in rows if isinstance(plan, shapes.Calls)]

    def run(source, plan) -> bool:
        if isinstance(plan, shapes.Calls):
            return all(sandbox.run(source, calls=plan, limits=limits).cases)
        return all(sandbox.run(source, tests=case, names=plan.names, limits=limits).passed_asserts
                   for case in plan.cases)

    meter = CpuMeter("profile")
    try:
        with Sandbox() as sandbox:
            sandbox.start()
            for source, plan in rows[:5]:
                run(source, plan)
            inside = sorted(sandbox.processes())  # init, the server, the collector
            assert sandbox.process is not None
            names = {sandbox.process.pid: "bwrap (or the cgroup keeper)", inside[0]: "init (bwrap)",
                     inside[1]: "server", inside[2]: "collector"}
            before = {pid: counters(pid) for pid in names}
            host0, cpu0, wall0 = os.times(), meter.seconds(), time.perf_counter()
            passed = sum(run(source, plan) for _ in range(args.rounds) for source, plan in rows)
            after = {pid: counters(pid) for pid in names}
            host1, cpu1, wall1 = os.times(), meter.seconds(), time.perf_counter()
    finally:
        meter.close()
    n = len(rows) * args.rounds
    ms = lambda seconds: f"{1e3 * seconds / n:.2f} ms"  # noqa: E731
    print(f"# {n} rows ({args.rounds} rounds), {passed} passed, {wall1 - wall0:.2f} s wall, "
          f"load {os.getloadavg()[0]:.1f}")
    if cpu0 is not None and cpu1 is not None:
        print(f"all processes (cgroup): {ms(cpu1 - cpu0)} of CPU per row, {n / (cpu1 - cpu0):.1f} rows per CPU-second")
    host = host1.user + host1.system - host0.user - host0.system
    print(f"host (this process): {ms(host)} per row")
    print("| process | own CPU per row | minor faults per row | reaped: CPU per row | reaped: faults per row |")
    print("|---|---|---|---|---|")
    for pid, name in names.items():
        d = [b - a for a, b in zip(before[pid], after[pid], strict=True)]
        print(f"| {name} | {ms(d[0])} | {d[2] / n:.0f} | {ms(d[1])} | {d[3] / n:.0f} |")


if __name__ == "__main__":
    main()
