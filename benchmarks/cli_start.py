"""Wall time of `grpo-host rewards list` beside the floors under it.

Floors: `python -c pass`, and a one-command typer app that prints a rich table
(the least any typer + rich CLI costs). `rewards list` is timed twice: as it
runs every time after the first (the catalog read from the cache), and cold
(an empty cache folder per run, as on the first listing after an install).
Run: python benchmarks/cli_start.py [--runs 20]
Commands run round-robin. Prints, per command, the median and best wall time,
the ratio of medians to `python -c pass`, and the median CPU (user + system) time.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run_once(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, capture_output=True, check=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(commands: dict[str, tuple[list[str], bool]], runs: int) -> dict[str, list[tuple[float, float]]]:
    """Round-robin: run i of every command back to back, so a busy moment on the machine hits all of them alike.

    A command marked cold gets an empty grpo-host cache folder on every run.
    """
    for cmd, _ in commands.values():  # warm the page cache, .pyc files and the catalog
        subprocess.run(cmd, capture_output=True, check=True)
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    with tempfile.TemporaryDirectory() as root:
        for i in range(runs):
            for name, (cmd, cold) in commands.items():
                cache = os.path.join(root, f"{i}-{len(results[name])}")
                env = {**os.environ, "GRPO_HOST_CACHE": cache} if cold else None
                results[name].append(run_once(cmd, env))
    return results


HELLO_TYPER = """
import typer
from rich.console import Console
from rich.table import Table
app = typer.Typer()
@app.command()
def hello(json: bool = False):
    table = Table("name", "value")
    table.add_row("hello", "world")
    Console().print(table)
app()
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    cli = shutil.which("grpo-host") or str(Path(sys.executable).with_name("grpo-host"))
    commands = {
        "python -c pass": ([sys.executable, "-c", "pass"], False),
        "typer + rich table app": ([sys.executable, "-c", HELLO_TYPER], False),
        "grpo-host rewards list": ([cli, "rewards", "list"], False),
        "grpo-host rewards list --json": ([cli, "rewards", "list", "--json"], False),
        "grpo-host rewards list (cold)": ([cli, "rewards", "list"], True),
        "grpo-host plugins list": ([cli, "plugins", "list"], False),
    }
    results = measure(commands, args.runs)
    base = statistics.median(wall for wall, _ in results["python -c pass"])
    print(f"{'command':32} {'median s':>9} {'best s':>7} {'x python':>9} {'CPU s':>6}")
    for name, times in results.items():
        walls = [wall for wall, _ in times]
        med = statistics.median(walls)
        cpu = statistics.median(c for _, c in times)
        print(f"{name:32} {med:9.3f} {min(walls):7.3f} {med / base:9.1f} {cpu:6.3f}")


if __name__ == "__main__":
    main()
