"""C++ programs judged per CPU-second, and the compile cache on GRPO groups: the contest judge against a plain
subprocess with rlimits.

Workloads, each R GRPO groups of 8 C++ programs (a streaming sum of the
input's numbers, correct, including ``bits/stdc++.h`` as contest solutions
do), every program judged on the same 5 tests (10 to 100,000 numbers each):

* ``identical``: the 8 programs of a group are one source (a group whose
  samples agree), so a content-addressed cache compiles it once;
* ``different``: the 8 differ (by a comment: the same work, another hash),
  so every program compiles;
* ``judging``: one program, compiled before the clock starts, judged 8 x R
  times: the cost of judging alone (both runners reuse the binary).

Runners:

* ``grpo-host judge``: :func:`reward_plugins.contest.judge.judge`, what the
  ``contest`` reward calls: one warm bubblewrap sandbox (namespaces, seccomp,
  cgroup, unprivileged uid), compile in it under limits, the cache, every
  test a fork and exec of the server inside it, CPU time and peak memory
  from ``wait4``, token checker; ``bits/stdc++.h`` and ``iostream``
  precompiled once per sandbox (the warm-up program, compiled before the
  clock starts, pays for their build, about 4.5 CPU seconds);
* ``subprocess + rlimits``: what one writes without a judge: per program a
  temporary folder, ``g++`` with the same flags under RLIMIT_CPU/AS, each
  test a ``subprocess.Popen`` of the binary with RLIMIT_CPU, AS, FSIZE,
  NPROC, rusage from ``wait4``, the same token comparison; no isolation, no
  cache;
* ``DMOJ judge`` (``--dmoj PATH``, the ``dmoj-cli`` of a ``pip install dmoj``
  in a virtual environment of its own: it needs ``libseccomp-dev``): DMOJ's
  open-source judge (ptrace and seccomp sandbox, its own compile cache), one
  ``dmoj-cli`` fed every submission on its standard input; its start and a
  warm-up submission are measured alone and subtracted.

Each runner runs in a child process placed in a fresh cpuacct cgroup (the
code benchmark's :class:`CpuMeter`; needs root), so the CPU time of every
process it starts (bwrap, the server, compilers, programs) is counted.

Usage (as root): ``python benchmarks/contest.py [--groups 5] [--json]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from code_exec import Clock, CpuMeter  # noqa: E402  (the code benchmark's CPU accounting)

SUM = ("#include <bits/stdc++.h>\n// program {tag}\nint main(){{int n;long long s=0,x;if(scanf(\"%d\",&n)!=1)return 1;"
       "for(int i=0;i<n;i++){{scanf(\"%lld\",&x);s+=x;}}printf(\"%lld\\n\",s);}}\n")
SIZES = (10, 1000, 10_000, 100_000, 100_000)
FLAGS = ["-std=gnu++17", "-O2", "-pipe", "-DONLINE_JUDGE"]
TIME_LIMIT, MEMORY = 2.0, 256 << 20


def tests() -> list[tuple[str, str]]:
    out = []
    for k, n in enumerate(SIZES):
        numbers = [(i * 7919 + k) % 1_000_000_007 for i in range(n)]
        out.append((f"{n}\n" + " ".join(map(str, numbers)) + "\n", f"{sum(numbers)}\n"))
    return out


WARM_UP = SUM.format(tag="warm-up")
WORKLOADS = ("identical", "different", "judging")


def programs(workload: str, groups: int) -> list[str]:
    if workload == "judging":
        return [WARM_UP] * 8 * groups
    if workload == "identical":
        return [SUM.format(tag=f"group {g}") for g in range(groups) for _ in range(8)]
    return [SUM.format(tag=f"group {g} sample {i}") for g in range(groups) for i in range(8)]


def run_judge(sources: list[str], cases: list[tuple[str, str]], clock: Clock) -> tuple[int, int]:
    from reward_plugins.contest.judge import Case, Problem, Program, jail_for, judge
    from reward_plugins.contest.languages import LANGUAGES

    problem = Problem(tuple(Case(i, o) for i, o in cases), TIME_LIMIT, MEMORY)
    judge(Program(LANGUAGES["cpp"], WARM_UP), problem, deadline=time.monotonic() + 120)
    jail = jail_for(frozenset({"cpp"}))
    compiles = jail.compiles
    clock.start()
    passed = sum(v == "AC" for s in sources
                 for v in judge(Program(LANGUAGES["cpp"], s), problem, deadline=time.monotonic() + 120).verdicts)
    return passed, jail.compiles - compiles


def _limits(cpu: float, memory: int, fsize: int, nproc: int):
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (int(cpu) + 1, int(cpu) + 2))
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    return apply


def run_subprocess(sources: list[str], cases: list[tuple[str, str]], clock: Clock) -> tuple[int, int]:
    """Per program a folder, g++ and the tests; the warm-up's binary is kept (the ``judging`` workload's)."""
    compiler, kept = "/usr/bin/g++", tempfile.mkdtemp()
    compiles = 0

    def one(source: str) -> int:
        nonlocal compiles
        with tempfile.TemporaryDirectory() as fresh:
            work = kept if source == WARM_UP else fresh
            if not Path(work, "main").exists():
                Path(work, "main.cpp").write_text(source)
                compiles += 1
                built = subprocess.run([compiler, *FLAGS, "-o", "main", "main.cpp"], cwd=work, capture_output=True,
                                       timeout=60, preexec_fn=_limits(30, 2 << 30, 64 << 20, 4096))
                if built.returncode != 0:
                    return 0
            passed = 0
            for data, answer in cases:
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                done = subprocess.run(["./main"], cwd=work, input=data.encode(), capture_output=True,
                                      timeout=TIME_LIMIT * 2 + 1,
                                      preexec_fn=_limits(TIME_LIMIT, MEMORY + (16 << 20), 16 << 20, 4096))
                after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the test's CPU time: it was reaped
                cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
                passed += done.returncode == 0 and cpu <= TIME_LIMIT and done.stdout.decode().split() == answer.split()
            return passed

    one(WARM_UP)
    clock.start()
    compiles = 0
    passed = sum(one(s) for s in sources)
    shutil.rmtree(kept)
    return passed, compiles


def run_dmoj(sources: list[str], cases: list[tuple[str, str]], clock: Clock) -> tuple[int, int | None]:
    """One ``dmoj-cli`` with every submission on its stdin, less one with only the warm-up (its start)."""
    with tempfile.TemporaryDirectory() as work:
        root = Path(work)
        (root / "problems" / "sum").mkdir(parents=True)
        for k, (data, answer) in enumerate(cases):
            (root / "problems" / "sum" / f"{k}.in").write_text(data)
            (root / "problems" / "sum" / f"{k}.out").write_text(answer)
        (root / "problems" / "sum" / "init.yml").write_text(
            "test_cases:\n" + "".join(f"- {{in: {k}.in, out: {k}.out, points: 1}}\n" for k in range(len(cases))))
        (root / "config.yml").write_text(f"problem_storage_globs:\n  - {root}/problems/*\nruntime:\n"
                                         "  g++: /usr/bin/g++\n  g++17: /usr/bin/g++\n")
        paths = []
        for k, source in enumerate([WARM_UP, *sources]):
            paths.append(root / f"s{k}.cpp")
            paths[-1].write_text(source)

        def session(files: list[Path]) -> str:
            commands = "".join(f"submit -tl {TIME_LIMIT} -ml {MEMORY >> 10} sum CPP17 {f}\n" for f in files)
            return subprocess.run([DMOJ, "-c", str(root / "config.yml"), "--no-ansi", "-e", "CPP17",
                                   "--skip-self-test", "--history", str(root / "history")],
                                  input=commands + "quit\n", capture_output=True, text=True, timeout=3600).stdout

        before_cpu, before_wall = clock.meter.seconds(), time.perf_counter()
        session(paths[:1])
        start_cpu, start_wall = clock.meter.seconds() - before_cpu, time.perf_counter() - before_wall
        clock.start()
        out = session(paths)
        clock.cpu0 += start_cpu  # the session's own start and warm-up, measured alone above
        clock.t0 += start_wall
        return out.count(" AC [") - len(cases), None


DMOJ: str | None = None
RUNNERS = {"grpo-host judge": run_judge, "subprocess + rlimits": run_subprocess, "DMOJ judge": run_dmoj}


def child(runner: str, workload: str, groups: int) -> dict:
    meter = CpuMeter(runner.split()[0].replace("-", "_"))
    clock = Clock(meter)
    sources, cases = programs(workload, groups), tests()
    passed, compiles = RUNNERS[runner](sources, cases, clock)
    wall, cpu = clock.stop()
    meter.close()
    n = len(sources)
    return {"workload": workload, "runner": runner, "programs": n, "tests": n * len(cases), "passed": passed,
            "compiles": compiles, "wall_s": round(wall, 2), "cpu_s": None if cpu is None else round(cpu, 2),
            "programs_per_cpu_s": None if not cpu else round(n / cpu, 2),
            "tests_per_cpu_s": None if not cpu else round(n * len(cases) / cpu, 1)}


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    memory = int(Path("/proc/meminfo").read_text().split()[1]) // (1 << 20)
    gxx = subprocess.run(["g++", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    return (f"{os.cpu_count()} x {cpu}, {memory} GiB, Linux {platform.release()}, Python {platform.python_version()}, "
            f"{gxx}; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} at the start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--groups", type=int, default=5, help="GRPO groups of 8 programs per workload")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--dmoj", help="DMOJ's dmoj-cli, to measure it too")
    parser.add_argument("--child", nargs=2, metavar=("RUNNER", "WORKLOAD"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    global DMOJ
    DMOJ = args.dmoj
    if args.child:
        print(json.dumps(child(*args.child, args.groups)))
        return
    about = machine()
    rows = []
    runners = [r for r in RUNNERS if r != "DMOJ judge" or DMOJ]
    for workload in WORKLOADS:
        for runner in runners:
            extra = ["--dmoj", DMOJ] if DMOJ else []
            done = subprocess.run([sys.executable, __file__, "--groups", str(args.groups), *extra, "--child", runner,
                                   workload], capture_output=True, text=True, check=True)
            rows.append(json.loads(done.stdout.splitlines()[-1]))
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    if args.json:
        print(json.dumps({"machine": about, "load_after": load, "rows": rows}, indent=2))
        return
    print(f"machine: {about}; load average {load} at the end")
    print("| workload | runner | programs | tests | passed | compiles | wall s | CPU s | programs per CPU s "
          "| tests per CPU s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        compiles = "n/a" if r["compiles"] is None else r["compiles"]
        print(f"| {r['workload']} | {r['runner']} | {r['programs']} | {r['tests']} | {r['passed']} | {compiles} "
              f"| {r['wall_s']} | {r['cpu_s']} | {r['programs_per_cpu_s']} | {r['tests_per_cpu_s']} |")
    for workload in WORKLOADS:
        ours = next(r for r in rows if r["workload"] == workload and r["runner"] == "grpo-host judge")
        for other in runners[1:]:
            theirs = next(r for r in rows if r["workload"] == workload and r["runner"] == other)
            if ours["cpu_s"] and theirs["cpu_s"]:
                print(f"{workload}: grpo-host judge / {other}, programs per CPU-second: "
                      f"{ours['programs_per_cpu_s'] / theirs['programs_per_cpu_s']:.2f}x")


if __name__ == "__main__":
    main()
