"""Rows per second and peak memory of `grpo-host data check` on a generated JSONL file.

Run: python benchmarks/data_check.py [--rows 1000000]
Generates GSM8K-shaped rows (prompt, answer; one in 1000 broken), then times,
in fresh processes, (a) `grpo-host data check FILE --rewards accuracy,r1_int`
and (b) what a user does without it: `datasets.load_dataset("json", ...)`
(which converts the file to Arrow; its cache is put in a temporary folder so
every run is cold), then a Python loop over the rows checking `answer`.
Reports seconds, rows/s, peak RSS of each, and the ratio.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DATASETS_WAY = """
import sys, tempfile
from datasets import load_dataset
ds = load_dataset("json", data_files=sys.argv[1], split="train", cache_dir=tempfile.mkdtemp())
bad = sum(1 for a in ds["answer"] if not isinstance(a, str) or not a)
print(bad)
"""


def generate(path: Path, rows: int) -> None:
    rng = random.Random(0)
    with path.open("w") as f:
        for i in range(rows):
            a, b = rng.randint(1, 999), rng.randint(1, 999)
            row = {"prompt": f"Tom has {a} apples and buys {b} more. How many apples does he have now?",
                   "answer": str(a + b)}
            if i % 1000 == 999:
                del row["answer"]
            f.write(json.dumps(row) + "\n")


def run(cmd: list[str]) -> tuple[float, int]:
    """Seconds and peak RSS (MiB) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    subprocess.run(cmd, capture_output=True)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return seconds, max(peak, before) // 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    cli = shutil.which("grpo-host") or str(Path(sys.executable).with_name("grpo-host"))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "rows.jsonl"
        generate(path, args.rows)
        size = path.stat().st_size / 2**20
        # RUSAGE_CHILDREN's peak is the max over all children so far: run the smaller-memory one first
        ours = run([cli, "data", "check", str(path), "--rewards", "accuracy, r1_int"])
        theirs = run([sys.executable, "-c", DATASETS_WAY, str(path)])
    print(f"{args.rows} rows, {size:.0f} MiB JSONL")
    print(f"{'method':40} {'seconds':>8} {'rows/s':>10} {'peak MiB':>9}")
    for name, (sec, mib) in (("grpo-host data check", ours), ("datasets.load_dataset + loop", theirs)):
        print(f"{name:40} {sec:8.2f} {args.rows / sec:10.0f} {mib:9d}")
    print(f"speed ratio (datasets / grpo-host): {theirs[0] / ours[0]:.2f}x")


if __name__ == "__main__":
    main()
