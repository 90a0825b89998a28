"""What the run monitors cost per step, as a share of a TRL step on the embedded default.

Two short runs of ``examples/letters.yaml`` (builtin:tiny on the CPU), one with every installed monitor
(the default) and one with none, in one process one after the other.  The monitors time themselves
(``summary.json``'s ``monitor_seconds``: the time spent in ``MonitorSet.observe`` over the run), so the
share is that time per step over the run's step time; the wall-clock difference between the two runs is
printed too, but on a 2-core machine it is within noise.

    python benchmarks/monitors.py --steps 20
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(steps: int, monitors: str | None) -> dict:
    from grpo_host.training.config import load_config
    from grpo_host.training.train import train

    with tempfile.TemporaryDirectory() as out:
        overrides = [f"max_steps={steps}", f"output_dir={out}", "save_every=1000"]
        if monitors is not None:
            overrides.append(f"monitors={monitors}")
        summary = train(load_config(ROOT / "examples" / "letters.yaml", overrides), echo=False)
    return summary.as_dict()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    os.chdir(ROOT)
    none = run(args.steps, "[]")
    every = run(args.steps, None)
    step = every["seconds"] / every["steps"]
    per_step = every["monitor_seconds"] / every["steps"]
    result = {
        "machine": f"{platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}",
        "steps": every["steps"],
        "step_seconds_with_monitors": round(step, 4),
        "step_seconds_without": round(none["seconds"] / none["steps"], 4),
        "monitor_seconds_per_step": round(per_step, 6),
        "monitor_share_of_step": round(per_step / step, 5),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
