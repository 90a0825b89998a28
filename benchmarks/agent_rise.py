"""Does the reward of an MLX agent run rise?  Per-step curves over seeds, and how many groups taught nothing.

``builtin:tiny-tools`` warmed up as the agent tests warm it up (``plain``:
open with the ``read`` call; ``undecided``: open with the call or with a
plain answer, half and half; ``tests/agent_helpers.py``), then trained with
the test pack's ``notes`` environment through ``grpo-host train --backend
mlx``, once per seed.  For each run: the mean of ``--reward`` per step, the
first and last three steps' means, and the groups whose members all scored
alike (their advantages are 0: GRPO learns nothing from them).

    python benchmarks/agent_rise.py --warm-up undecided --seeds 1 2 3
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from agent_helpers import ROWS, warm_up  # noqa: E402
from conftest import lay_out_pack  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--warm-up", choices=("plain", "undecided"), default="undecided")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--learning-rate", type=float, default=1e-4)
    parser.add_argument("--reward", default="seen_tools")
    parser.add_argument("--max-tool-calls", type=int, default=1)
    args = parser.parse_args()
    from grpo_host.runs.record import read_record

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        pack = root / "site"
        lay_out_pack(ROOT / "tests" / "packs" / "agentpack", pack)
        model = warm_up(root / "warm" / "model", pack, undecided=args.warm_up == "undecided")
        (root / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
        env = {**os.environ, "PYTHONPATH": str(pack), "GRPO_HOST_CACHE": str(root / "cache")}
        for seed in args.seeds:
            config = {"model": str(model), "data": "rows.jsonl", "rewards": f"{args.reward}:1", "environment": "notes",
                      "max_tool_calls": args.max_tool_calls, "group_size": 4, "batch_size": 2,
                      "max_steps": args.steps, "max_completion_length": 120, "temperature": args.temperature,
                      "learning_rate": args.learning_rate, "seed": seed, "audit": "off", "backend": "mlx",
                      "output_dir": f"out-{seed}"}
            (root / "run.yaml").write_text(yaml.safe_dump(config))
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "grpo_host", "train", "run.yaml"], cwd=root, env=env, check=True,
                           capture_output=True)
            seconds = time.perf_counter() - start
            out = root / f"out-{seed}"
            curve = [r[f"rewards/{args.reward}/mean"] for r in map(json.loads, (out / "metrics.jsonl").read_text()
                                                                   .splitlines()) if "reward" in r]
            groups: dict[tuple[int, str], set[float]] = {}
            for row in read_record(out / "rollouts").to_pylist():
                groups.setdefault((row["step"], row["group"]), set()).add(row["total"])
            print(json.dumps({"seed": seed, "curve": [round(v, 3) for v in curve],
                              "first3": round(sum(curve[:3]) / 3, 3), "last3": round(sum(curve[-3:]) / 3, 3),
                              "flat_groups": sum(len(v) == 1 for v in groups.values()), "groups": len(groups),
                              "seconds": round(seconds), "load": round(os.getloadavg()[0], 1)}), flush=True)


if __name__ == "__main__":
    main()
