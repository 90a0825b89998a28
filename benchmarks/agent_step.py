"""The reward path's share of a multi-turn TRL step on CPU: an agent run as a user starts it.

``builtin:tiny-tools``, warmed up to open with a tool call (the same SFT
warm-up as ``tests/test_train_agents.py``), trains with the ``notes``
environment of the test pack ``agentpack`` through ``grpo-host train``:
TRL generates, parses the tool call, runs the guarded tool, generates
again, and the ensemble scores whole trajectories.  From ``metrics.jsonl``:
TRL's own ``step_time`` per step, the host's ``rewards/<name>/seconds``
(the ensemble's time per batch, every member), TRL's tool-call rate.

    python benchmarks/agent_step.py --steps 6
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from conftest import lay_out_pack  # noqa: E402
from test_train_agents import ROWS, warm_up  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=6)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        pack = root / "site"
        lay_out_pack(ROOT / "tests" / "packs" / "agentpack", pack)
        model = warm_up(root / "warm", pack)
        (root / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
        config = {"model": str(model), "data": "rows.jsonl", "rewards": "seen_tools:1, r1_strict_format:0",
                  "environment": "notes", "max_tool_calls": 2, "group_size": 4, "batch_size": 2,
                  "max_steps": args.steps, "max_completion_length": 120, "temperature": 0.3, "audit": "off",
                  "output_dir": "out"}
        (root / "run.yaml").write_text(yaml.safe_dump(config))
        env = {**os.environ, "PYTHONPATH": str(pack), "TRL_EXPERIMENTAL_SILENCE": "1",
               "GRPO_HOST_CACHE": str(root / "cache")}
        subprocess.run([str(Path(sys.executable).with_name("grpo-host")), "train", "run.yaml"], cwd=root, env=env,
                       check=True, capture_output=True)
        records = [r for r in map(json.loads, (root / "out" / "metrics.jsonl").read_text().splitlines())
                   if "step_time" in r]
    steps = [r["step_time"] for r in records]
    rewards = [sum(v for k, v in r.items() if k.startswith("rewards/") and k.endswith("/seconds")) for r in records]
    calls = [r.get("tools/call_frequency", 0.0) for r in records]
    print(json.dumps({
        "steps": len(records), "step_seconds_median": statistics.median(steps),
        "reward_seconds_median": statistics.median(rewards),
        "reward_share_of_step": sum(rewards) / sum(steps),
        "tool_calls_per_rollout_mean": statistics.mean(calls),
        "load": os.getloadavg()[0], "cpus": os.cpu_count(),
    }, indent=2))


if __name__ == "__main__":
    main()
