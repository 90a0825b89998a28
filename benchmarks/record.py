"""What writing the rollout record costs per step, as a share of a TRL step on the embedded default.

One short run of ``examples/letters.yaml`` (builtin:tiny on the CPU, ``record: all``, the default).  The
record times each batch it writes (``record/seconds`` in ``metrics.jsonl``: building the Arrow table and
writing the Parquet part, rename included), so the share is that time per step over the run's step time,
both from the same run.

    python benchmarks/record.py --steps 20
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    os.chdir(ROOT)
    from grpo_host.runs.record import read_record
    from grpo_host.training.config import load_config
    from grpo_host.training.train import train

    with tempfile.TemporaryDirectory() as out:
        overrides = [f"max_steps={args.steps}", f"output_dir={out}", "save_every=1000"]
        summary = train(load_config(ROOT / "examples" / "letters.yaml", overrides), echo=False).as_dict()
        records = [json.loads(line) for line in (Path(out) / "metrics.jsonl").read_text().splitlines()]
        writes = [r["record/seconds"] for r in records if "record/seconds" in r]
        rollouts = read_record(out).num_rows
        size = sum(p.stat().st_size for p in (Path(out) / "rollouts").glob("*.parquet"))
    step = summary["seconds"] / summary["steps"]
    per_step = sum(writes) / len(writes)
    print(json.dumps({
        "machine": f"{platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}",
        "steps": summary["steps"],
        "rollouts_recorded": rollouts,
        "record_bytes": size,
        "step_seconds": round(step, 4),
        "record_seconds_per_step": round(per_step, 6),
        "record_share_of_step": round(per_step / step, 5),
    }, indent=2))


if __name__ == "__main__":
    main()
