"""Wall time of `grpo-host rewards list` beside two floors: `python -c pass`, and a one-command typer app.

The typer app is the floor of any typer CLI: typer (0.29) imports click, rich
and pydantic when a command runs. Run: python benchmarks/cli_start.py [--runs 20]
Prints the median and best of each, and the ratio of medians to `python -c pass`.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path


def timed(cmd: list[str], runs: int) -> list[float]:
    subprocess.run(cmd, capture_output=True, check=True)  # warm the page cache and .pyc files
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    return times


HELLO_TYPER = """
import typer
app = typer.Typer()
@app.command()
def hello(json: bool = False):
    print("hello")
app()
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    cli = shutil.which("grpo-host") or str(Path(sys.executable).with_name("grpo-host"))
    rows = {
        "python -c pass": timed([sys.executable, "-c", "pass"], args.runs),
        "hello-world typer app": timed([sys.executable, "-c", HELLO_TYPER], args.runs),
        "grpo-host rewards list": timed([cli, "rewards", "list"], args.runs),
        "grpo-host rewards list --json": timed([cli, "rewards", "list", "--json"], args.runs),
        "grpo-host plugins list": timed([cli, "plugins", "list"], args.runs),
    }
    base = statistics.median(rows["python -c pass"])
    print(f"{'command':34} {'median s':>9} {'best s':>8} {'x python':>9}")
    for name, times in rows.items():
        med = statistics.median(times)
        print(f"{name:34} {med:9.3f} {min(times):8.3f} {med / base:9.1f}")


if __name__ == "__main__":
    main()
