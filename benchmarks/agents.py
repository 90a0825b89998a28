"""The cost of one tool round trip through the ``python`` environment, beside a plain subprocess with rlimits.

What an agent run pays per tool call of the ``python`` tool
(:mod:`reward_plugins.code.environments`), timed one call after another (a single
stream, as TRL calls synchronous tools), N calls per program, in one run:

* ``python tool (Session)``: the environment exactly as the host drives it,
  ``Environment.session_class()(...).python(code=...)``: the guard (argument
  check, a thread per call, output cap) and the module's driver thread in
  front of the ``code`` pack's warm bubblewrap sandbox;
* ``sandbox.run``: :class:`reward_plugins.code.sandbox.Sandbox` alone, the
  same warm sandbox without the environment around it;
* ``subprocess + rlimits`` (the baseline): ``python -I -c PROGRAM`` per call
  with the same address-space, process, file-size and CPU rlimits set in
  the child, ``subprocess.run`` with a timeout: a fresh interpreter each
  time, no namespaces, no seccomp, no cgroup.

Programs: ``print(1 + 1)`` (the round trip itself), and a tool-integrated
math step, ``from fractions import Fraction`` and a sum of 200 fractions.
The runners take turns call by call (the machine is shared: a change in
its load falls on all of them alike).  The warm-up calls (5 per runner, and
the sandbox's start, reported on its own line) are not counted.  Reported:
median and p90 wall milliseconds per call.

Usage: ``python benchmarks/agents.py [--n 200] [--json]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PROGRAMS = {
    "print(1 + 1)": "print(1 + 1)",
    "fractions sum": "from fractions import Fraction\nprint(sum(Fraction(1, k * (k + 1)) for k in range(1, 201)))",
}
WARMUP = 5


def timed(calls: dict[str, object], n: int) -> dict[str, list[float]]:
    """Wall milliseconds per call of each runner, the runners taking turns call by call, so a change in the
    machine's load (it is shared) falls on all of them alike."""
    for call in calls.values():
        for _ in range(WARMUP):
            call()
    out: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(n):
        for name, call in calls.items():
            start = time.perf_counter()
            call()
            out[name].append((time.perf_counter() - start) * 1000)
    return out


def summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {"median_ms": statistics.median(ordered), "p90_ms": ordered[int(0.9 * (len(ordered) - 1))]}


def plain_subprocess(code: str, limits) -> str:
    """The baseline: a fresh interpreter per call with the sandbox's per-process rlimits, nothing else."""

    def bound() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory, limits.memory))
        resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes, limits.processes))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_size, limits.file_size))
        cpu = int(limits.timeout) + 1
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))

    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=limits.timeout,
                          preexec_fn=bound, env={"PATH": "/usr/bin:/bin"})
    return done.stdout


def machine() -> str:
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.processor())
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    bwrap = subprocess.run(["bwrap", "--version"], capture_output=True, text=True).stdout.strip() or "no bwrap"
    return (f"{os.cpu_count()} cpus ({model}), {memory:.0f} GiB, Linux {platform.release()}, "
            f"Python {platform.python_version()}, {bwrap}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=200, help="timed calls per program and runner")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from grpo_host.discovery.plugins import load_plugins
    from reward_plugins.code.sandbox import Sandbox, isolation

    if not isolation().isolated:
        sys.exit(f"no sandbox here ({isolation().reason}): the python tool refuses to run")
    env = load_plugins(env={"GRPO_HOST_LOAD_PLUGINS": "python_tool"}).registry.environment("python")
    session = env.session_class()()
    session.reset()
    limits = session.instance.limits
    load_before = os.getloadavg()[0]

    start = time.perf_counter()
    assert session.python(code="print(1)") == "1"
    first_call = (time.perf_counter() - start) * 1000  # starts the tool's sandbox

    results = {}
    with Sandbox() as sandbox:
        sandbox.start()
        for label, code in PROGRAMS.items():
            expected = plain_subprocess(code, limits).strip()
            assert session.python(code=code) == expected and sandbox.run(code, limits=limits).stdout.strip() == expected
            samples = timed({
                "python tool (Session)": lambda c=code: session.python(code=c),
                "sandbox.run": lambda c=code: sandbox.run(c, limits=limits),
                "subprocess + rlimits": lambda c=code: plain_subprocess(c, limits),
            }, args.n)
            results[label] = {runner: summary(times) for runner, times in samples.items()}
    report = {"machine": machine(), "n": args.n, "first_call_ms": first_call, "load_average": [load_before,
              os.getloadavg()[0]], "mode": isolation().mode, "results": results}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"# {report['machine']}; sandbox mode {report['mode']}; load average {load_before:.1f} before, "
          f"{os.getloadavg()[0]:.1f} after; {args.n} calls per cell")
    print(f"first call (starts the sandbox): {first_call:.0f} ms")
    print("| program | runner | median ms | p90 ms |\n|---|---|---|---|")
    for label, runners in results.items():
        for runner, cell in runners.items():
            print(f"| `{label}` | {runner} | {cell['median_ms']:.1f} | {cell['p90_ms']:.1f} |")


if __name__ == "__main__":
    main()
