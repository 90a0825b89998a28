"""Seconds per step: ``grpo-host train`` versus a plain ``trl.GRPOTrainer`` script, same tiny run.

Both sides train ``builtin:tiny`` on the letters example (examples/letters.yaml)
with the same GRPOConfig values and the same two rewards.  The host side is
the real CLI in a subprocess (config, data check, plugin loading, the
ensemble behind per-member reward functions, metrics); the plain side is
the script a TRL user would write: a list of rows, two plain reward
functions, ``GRPOTrainer(...).train()``.  Each side's time is TRL's own
``train_runtime`` divided by the steps, so start-up (imports, model
building) counts on neither side.  Runs alternate host/plain to spread
machine noise; the figure is the median over repeats.

    python benchmarks/trl_overhead.py --steps 30 --repeats 3
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

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "letters.yaml"

PLAIN = r'''
import json, sys
from datasets import Dataset
from transformers import AutoTokenizer
from trl import GRPOConfig, GRPOTrainer
from grpo_host.config import load_config
from grpo_host.hosts.trl import grpo_config_kwargs
from grpo_host.tiny import resolve_model

config = load_config(sys.argv[1], sys.argv[3:])
model = resolve_model(config.model)
rows = [json.loads(line) for line in open(config.data.train)]

def letter_share(completions, answer, **kwargs):
    out = []
    for completion, gold in zip(completions, answer):
        text = completion[-1]["content"]
        out.append(text.count(gold) / len(text) if text else 0.0)
    return out

def lowercase_share(completions, **kwargs):
    out = []
    for completion in completions:
        text = completion[-1]["content"]
        out.append(sum("a" <= ch <= "z" for ch in text) / len(text) if text else 0.0)
    return out

# the same GRPOConfig values the host passes (so only the host's own work differs)
args = GRPOConfig(**grpo_config_kwargs(config, [1.0, 0.5]))
tokenizer = AutoTokenizer.from_pretrained(model)
trainer = GRPOTrainer(model=model, reward_funcs=[letter_share, lowercase_share], args=args,
                      train_dataset=Dataset.from_list(rows), processing_class=tokenizer)
result = trainer.train()
json.dump({"train_runtime": result.metrics["train_runtime"], "steps": trainer.state.global_step}, open(sys.argv[2], "w"))
'''


def host_run(steps: int, out: Path, env: dict[str, str]) -> float:
    cmd = [str(Path(sys.executable).with_name("grpo-host")), "train", str(EXAMPLE), "--set", f"max_steps={steps}",
           "--set", f"save_every={steps}", "--set", f"output_dir={out}"]
    subprocess.run(cmd, check=True, env=env, cwd=ROOT, capture_output=True)
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    runtime = next(r["train_runtime"] for r in records if "train_runtime" in r)
    return runtime / steps


def plain_run(steps: int, out: Path, env: dict[str, str]) -> float:
    script = out.with_suffix(".py")
    script.write_text(PLAIN)
    result = out.with_suffix(".json")
    cmd = [sys.executable, str(script), str(EXAMPLE), str(result), f"max_steps={steps}", f"save_every={steps}",
           f"output_dir={out}"]
    subprocess.run(cmd, check=True, env=env, cwd=ROOT, capture_output=True)
    data = json.loads(result.read_text())
    return data["train_runtime"] / data["steps"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=3)
    opts = parser.parse_args()
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    host, plain = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(opts.repeats):
            host.append(host_run(opts.steps, Path(tmp) / f"host{i}", env))
            plain.append(plain_run(opts.steps, Path(tmp) / f"plain{i}", env))
            print(f"repeat {i + 1}: grpo-host {host[-1]:.4f} s/step, plain TRL {plain[-1]:.4f} s/step", flush=True)
    h, p = statistics.median(host), statistics.median(plain)
    print(json.dumps({"steps": opts.steps, "repeats": opts.repeats, "host_s_per_step": host,
                      "plain_s_per_step": plain, "host_median": h, "plain_median": p,
                      "overhead_percent": 100 * (h - p) / p}, indent=2))


if __name__ == "__main__":
    main()
