"""Where the CPU of ``Ensemble.score`` with ``math`` goes: the calling process and each worker process, by area.

Run:  python benchmarks/math_profile_workers.py [--pairs 2000] [--sets generated] [--out DIR]

``math_throughput.py --profile`` profiles the reward alone in this process; this profiles it as it runs, through
the worker pool: the scoring loop of ``math_throughput.py`` (batches of 256, after 64 warm-up pairs) under cProfile
on the CPU clock in this process, and in each worker through a ``sitecustomize`` module put first on the workers'
path (a worker's ``PYTHONPATH`` is its parent's ``sys.path``), which starts its profiler on SIGUSR2 (after the
warm-up) and writes its stats on SIGUSR1.  The figures carry the profiler's overhead (most on the LaTeX grammar's
many small calls), so compare areas and runs, not absolute times.  For documentation, never a test.
"""

from __future__ import annotations

import argparse
import cProfile
import logging
import os
import pstats
import signal
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import math_throughput as mt  # beside this script: its directory is first on sys.path

HOOK = '''
import os, sys
if os.environ.get("MATH_PROFILE_DIR") and "grpo_host.scoring.executors" in " ".join(getattr(sys, "orig_argv", [])):
    import cProfile, signal, time
    _profile = cProfile.Profile(time.process_time)
    def _dump(signum, frame):
        _profile.disable()
        _profile.dump_stats(os.path.join(os.environ["MATH_PROFILE_DIR"], f"worker-{os.getpid()}.prof"))
    signal.signal(signal.SIGUSR2, lambda signum, frame: _profile.enable())
    signal.signal(signal.SIGUSR1, _dump)
'''

AREAS = [*mt.AREAS,  # the reward's areas, as math_throughput.py --profile names them, then the host's
    ("pipes and pickling (executors, multiprocessing)", ("scoring/executors.py", "multiprocessing", "selectors",
                                                         "pickle", "copyreg")),
    ("item timers and clocks (calls, clocks, worker)", ("scoring/calls.py", "scoring/clocks.py", "scoring/worker.py",
                                                        "contextlib")),
    ("the host's scoring (contract, ensemble, policy, stats)", ("scoring/", "pydantic")),
]


def by_area(path: Path) -> tuple[float, Counter]:
    """A stats file's CPU seconds, in all and by AREAS (a builtin counts in the area of its first caller)."""
    stats = pstats.Stats(str(path))
    areas: Counter = Counter()
    for (where, _, _), (_, _, tottime, _, callers) in stats.stats.items():  # type: ignore[attr-defined]
        if where == "~":
            where = next(iter(callers))[0] if callers else "~"
        areas[next((a for a, marks in AREAS if any(m in where for m in marks)), "other (stdlib, builtins)")] += tottime
    return sum(areas.values()), areas


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--sets", nargs="+", default=["generated"], choices=["generated", "reasoning-gym"])
    parser.add_argument("--out", type=Path, default=None, help="keep the .prof files here")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    hook = Path(tempfile.mkdtemp(prefix="math-profile-"))
    (hook / "sitecustomize.py").write_text(HOOK)
    sys.path.insert(0, str(hook))  # the workers' PYTHONPATH is this sys.path
    from grpo_host import Ensemble

    for name in args.sets:
        out = args.out or hook
        out.mkdir(parents=True, exist_ok=True)
        os.environ["MATH_PROFILE_DIR"] = str(out)
        makers: dict[str, Callable[[int, int], list[tuple]]] = {"generated": mt.make_pairs,
                                                                "reasoning-gym": mt.generator_pairs}
        maker = makers[name]
        with Ensemble.from_spec("math") as ensemble:
            call = mt.ensemble_style(ensemble)
            warmup = [p[:2] for p in maker(64, 1)]
            call(warmup)
            for pid in ensemble.worker_pids:
                os.kill(pid, signal.SIGUSR2)
            time.sleep(0.5)
            profile = cProfile.Profile(time.process_time)
            profile.enable()
            pairs = [p[:2] for p in maker(args.pairs, 0)]
            for start in range(0, len(pairs), 256):
                call(pairs[start : start + 256])
            profile.disable()
            profile.dump_stats(str(out / "host.prof"))
            pids = ensemble.worker_pids
            for pid in pids:
                os.kill(pid, signal.SIGUSR1)
            time.sleep(2)
        files = [out / "host.prof"] + [out / f"worker-{pid}.prof" for pid in pids]
        print(f"\n{name}: {args.pairs} pairs through Ensemble.score, batches of 256")
        grand = 0.0
        for path in files:
            total, areas = by_area(path)
            grand += total
            print(f"  {path.stem}: {total:.2f} CPU-s (profiled)")
            for area, seconds in areas.most_common():
                print(f"    {area:56} {seconds:6.2f} s {100 * seconds / total:5.1f} %")
        print(f"  all processes: {grand:.2f} CPU-s, {1e6 * grand / args.pairs:.0f} us a pair (profiled)")


if __name__ == "__main__":
    main()
