"""What the default monitors add to ``grpo-host score`` on 10,000 math rows, side by side with ``--monitors none``.

The rows are generated here (seeded): a GSM8K-style prompt, its gold and an R1-format completion of 2-8
reasoning sentences, 60 % right.  Each round scores the whole file through the code ``grpo-host score``
runs (:func:`grpo_host.batches.score_file_batches`, batches of 256, reward ``math``) once with every
installed monitor and once with none, in alternating order; the figures are each setting's best round, so
a busy machine's noise does not land on one side only.  Each round is timed in CPU seconds (this process and the
math workers, from /proc), which other jobs on a shared machine do not change; the monitors' own CPU time
(``MonitorSet.cpu_seconds``) and its share of the round's scoring CPU are printed too, from the same round.
``--cli`` times the command itself instead (``grpo-host score FILE --rewards math --out
OUT --monitors none|all`` in a subprocess, start-up, reading, writing ``--out`` and the rollout record
included: what a user waits for, and what the issue's 4.8 s against 8.7-9.6 s measured).

    python benchmarks/monitors_score.py --rows 10000 --rounds 3 [--cli]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def rows(n: int) -> list[tuple[str, dict]]:
    rng = random.Random(0)
    out = []
    for i in range(n):
        a, b = rng.randint(1, 999), rng.randint(1, 999)
        answer = a + b if rng.random() < 0.6 else a + b + rng.randint(1, 9)
        steps = " ".join(f"Step {k}: we add the partial sums carefully and check the carry digit."
                         for k in range(rng.randint(2, 8)))
        completion = f"<think>\nWe need {a} + {b}. {steps}\n</think>\n<answer>\n{answer}\n</answer>"
        out.append((f"line {i + 1}", {"prompt": f"What is {a} + {b}? Think step by step.", "answer": str(a + b),
                                      "completion": completion}))
    return out


def _worker_cpu(pids: list[int]) -> float:
    """CPU seconds the worker processes used so far (Linux /proc; 0 elsewhere)."""
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def score(data: list[tuple[str, dict]], monitors: str) -> tuple[float, float]:
    """(CPU seconds of the whole scoring loop, of which in the monitors)."""
    from grpo_host import Ensemble
    from grpo_host.batches import score_file_batches
    from grpo_host.discovery.plugins import default_plugins
    from grpo_host.kinds.monitor import MonitorSet, choose
    from grpo_host.scoring.stats import Tally

    with Ensemble.from_spec("math") as ensemble:
        watch = MonitorSet(choose(monitors, default_plugins().registry, action="log"), quiet=1 << 30)
        tally = Tally(ensemble.names)
        ensemble.score(["\\boxed{1}"], answer=["1"])  # start the workers: their start-up is not scoring
        start = time.process_time() + _worker_cpu(ensemble.worker_pids)
        for _ in score_file_batches(iter(data), ensemble, tally, sinks=[watch]):
            pass
        return time.process_time() + _worker_cpu(ensemble.worker_pids) - start, watch.cpu_seconds


def score_cli(data: list[tuple[str, dict]], monitors: str, folder: Path) -> tuple[float, float]:
    source, out = folder / "rows.jsonl", folder / f"scores-{monitors}.jsonl"
    if not source.exists():
        source.write_text("".join(json.dumps(row) + "\n" for _, row in data))
    out.unlink(missing_ok=True)
    shutil.rmtree(f"{out}.rollouts", ignore_errors=True)
    grpo_host = Path(sys.executable).with_name("grpo-host")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([str(grpo_host), "score", str(source), "--rewards", "math", "--monitors", monitors, "--out",
                    str(out)], check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the command and its workers, which it waits for
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cli", action="store_true", help="time the grpo-host score command in a subprocess")
    args = parser.parse_args()
    data = rows(args.rows)
    folder = Path(tempfile.mkdtemp(prefix="monitors-score-"))
    run = (lambda setting: score_cli(data, setting, folder)) if args.cli else (lambda setting: score(data, setting))
    score(data[:512], "all")  # warm: imports, math's parser caches, the page cache
    load = os.getloadavg()[0]
    best = {"none": (float("inf"), 0.0), "all": (float("inf"), 0.0)}
    shares = []
    for round_ in range(args.rounds):
        for setting in (("none", "all") if round_ % 2 == 0 else ("all", "none")):
            cpu, inside = run(setting)
            best[setting] = min(best[setting], (cpu, inside))
            if setting == "all" and not args.cli:
                shares.append(inside / (cpu - inside))
    shutil.rmtree(folder, ignore_errors=True)
    none, every = best["none"][0], best["all"][0]
    print(json.dumps({
        "machine": f"{platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}, "
                   f"load {load:.1f} to {os.getloadavg()[0]:.1f}",
        "rows": args.rows, "rounds": args.rounds, "timed": "grpo-host score (subprocess)" if args.cli else
        "score_file_batches (in process)",
        "cpu_seconds_monitors_none": round(none, 3), "cpu_seconds_default_monitors": round(every, 3),
        "monitor_cpu_seconds_inside": round(best["all"][1], 3), "overhead_best_rounds": round(every / none - 1, 4),
        "monitors_share_of_scoring_per_round": [round(x, 4) for x in shares],
    }, indent=2))


if __name__ == "__main__":
    main()
