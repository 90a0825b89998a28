"""How `score`, `rescore` and `report` grow with the work: time and peak memory at 10k, 100k and 1M rows.

Run: python benchmarks/scale.py [--rows 10000 100000 1000000] [--spec "accuracy, r1_strict_format"]
         [--report-rows 100000]

Generates GSM8K-shaped completions (a short reasoning, an ``<answer>`` block:
right, wrong or missing) with their ``answer`` column, then runs, each as a
user runs it (the CLI in a fresh process):

* ``grpo-host score FILE -r SPEC --out scores.jsonl`` for every size (it
  writes the scores and the rollout record beside them);
* ``grpo-host rescore scores.jsonl`` and ``grpo-host report scores.jsonl -o
  page.html`` on the record of ``--report-rows`` rows.

Per command: wall seconds, CPU seconds of the command and everything it
waited for (its worker processes), microseconds of CPU per row, and the peak
resident memory of the largest process (``wait4``'s ``ru_maxrss``: the
command's, or a worker's if larger). Growth is read from the per-row figures
(flat = linear) and the peak memory (flat = streaming).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def generate(path: Path, rows: int) -> None:
    rng = random.Random(0)
    with path.open("w") as f:
        for _ in range(rows):
            a, b = rng.randint(1, 999), rng.randint(1, 999)
            said = rng.choice((a + b, a + b, a + b + rng.randint(1, 9), None))
            end = f"<answer>{said}</answer>" if said is not None else "so that is it."
            f.write(json.dumps({
                "prompt": f"Tom has {a} apples and buys {b} more. How many apples does he have now?",
                "completion": f"<think>{a} plus {b} is the total.</think>\n{end}",
                "answer": str(a + b)}) + "\n")


def run(cmd: list[str]) -> tuple[float, float, int, int]:
    """Wall seconds, CPU seconds (the command and its waited-for descendants), peak RSS in MiB of the largest
    process, exit code."""
    start = time.perf_counter()
    with open(os.devnull, "wb") as null:
        proc = subprocess.Popen(cmd, stdout=null, stderr=subprocess.PIPE)
        assert proc.stderr is not None
        err = proc.stderr.read()
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):  # 1: some verdicts missing or changed, which is a result here, not a failure
        sys.exit(f"{' '.join(cmd)} exited {code}: {err.decode()[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss // 1024, code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--spec", default="accuracy, r1_strict_format")
    parser.add_argument("--report-rows", type=int, default=100_000)
    args = parser.parse_args()
    cli = shutil.which("grpo-host") or str(Path(sys.executable).with_name("grpo-host"))
    print(f"{'command':34} {'rows':>9} {'wall s':>8} {'CPU s':>8} {'CPU us/row':>10} {'peak MiB':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for rows in sorted(set(args.rows) | {args.report_rows}):
            folder = Path(tmp) / str(rows)
            folder.mkdir()
            data, out = folder / "rows.jsonl", folder / "scores.jsonl"
            generate(data, rows)
            commands = [("score", [cli, "score", str(data), "-r", args.spec, "--out", str(out)])]
            if rows == args.report_rows:
                commands += [("rescore", [cli, "rescore", str(out), "-r", args.spec]),
                             ("report", [cli, "report", str(out), "-o", str(folder / "page.html")])]
            for name, cmd in commands:
                wall, cpu, peak, _ = run(cmd)
                print(f"{name:34} {rows:9d} {wall:8.1f} {cpu:8.1f} {cpu / rows * 1e6:10.1f} {peak:9d}", flush=True)
            shutil.rmtree(folder)


if __name__ == "__main__":
    main()
