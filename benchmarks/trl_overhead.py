"""Seconds per step: ``grpo-host train`` versus a plain ``trl.GRPOTrainer`` script, same tiny run.

Both sides train ``builtin:tiny`` on the letters example (examples/letters.yaml)
with the same GRPOConfig values, the same seed and the same two rewards.
The host side is the real CLI in a subprocess (config, data check, plugin
loading, the ensemble behind per-member reward functions, our metrics); the
plain side is the script a TRL user would write: rows in a Dataset, two
plain reward functions, ``GRPOTrainer(...).train()``.

Three measurements:

* **CPU seconds per step** (the figure for a shared machine): each side is
  run for a short and a long number of steps; the difference in the
  process's CPU time (user + system, from ``wait4``) divided by the
  difference in steps is the CPU cost of one step, with start-up (imports,
  model loading) cancelled out.  CPU time is far less sensitive than wall
  time to other processes competing for the cores.
* **wall seconds per step**: TRL's own ``step_time`` (generation, reward
  scoring and the update) of every step, median over all runs.  Only
  meaningful on an otherwise idle machine.
* **reward path**: the part the host changes, timed directly.  One batch
  of the run's shape (``batch_size x group_size`` completions) goes through
  the host's per-member reward functions (ensemble, executors, metrics,
  row lookup) and through the plain functions.

    python benchmarks/trl_overhead.py --short 5 --long 25 --repeats 2
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "letters.yaml"

PLAIN = r'''
import json, sys
from datasets import Dataset
from transformers import AutoTokenizer
from trl import GRPOConfig, GRPOTrainer
from grpo_host.training.config import load_config
from grpo_host.training.backends.trl import grpo_config_kwargs
from grpo_host.training.builtin_model import resolve_model
sys.path.insert(0, sys.argv[3])
from trl_overhead import plain_rewards

config = load_config(sys.argv[1], sys.argv[4:])
model = resolve_model(config.model)
rows = [json.loads(line) for line in open(config.data.train)]
# the same GRPOConfig values the host passes (so only the host's own work differs)
args = GRPOConfig(**grpo_config_kwargs(config, [1.0, 0.5]))
tokenizer = AutoTokenizer.from_pretrained(model)
trainer = GRPOTrainer(model=model, reward_funcs=list(plain_rewards()), args=args,
                      train_dataset=Dataset.from_list(rows), processing_class=tokenizer)
trainer.train()
json.dump([r for r in trainer.state.log_history if "step_time" in r], open(sys.argv[2], "w"))
'''


def plain_rewards():
    """The example's two rewards as a TRL user writes them: plain functions over the batch."""

    def letter_share(completions, answer, **kwargs):
        out = []
        for completion, gold in zip(completions, answer, strict=False):
            text = completion[-1]["content"]
            out.append(text.count(gold) / len(text) if text else 0.0)
        return out

    def lowercase_share(completions, **kwargs):
        out = []
        for completion in completions:
            text = completion[-1]["content"]
            out.append(sum("a" <= ch <= "z" for ch in text) / len(text) if text else 0.0)
        return out

    return letter_share, lowercase_share


def _run(cmd: list[str], env: dict[str, str]) -> float:
    """Run ``cmd`` to completion; its CPU seconds (user + system)."""
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode:
            log.seek(0)
            raise RuntimeError(f"{cmd[:3]} failed: {log.read().decode()[-2000:]}")
    return usage.ru_utime + usage.ru_stime


def host_run(steps: int, out: Path, env: dict[str, str]) -> tuple[float, list[float]]:
    cmd = [str(Path(sys.executable).with_name("grpo-host")), "train", str(EXAMPLE), "--set", f"max_steps={steps}",
           "--set", f"save_every={steps}", "--set", f"output_dir={out}"]
    cpu = _run(cmd, env)
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    return cpu, [r["step_time"] for r in records if "step_time" in r]


def plain_run(steps: int, out: Path, env: dict[str, str]) -> tuple[float, list[float]]:
    script, result = out.with_suffix(".py"), out.with_suffix(".json")
    script.write_text(PLAIN)
    cmd = [sys.executable, str(script), str(EXAMPLE), str(result), str(Path(__file__).parent),
           f"max_steps={steps}", f"save_every={steps}", f"output_dir={out}"]
    cpu = _run(cmd, env)
    return cpu, [r["step_time"] for r in json.loads(result.read_text())]


def reward_path(rounds: int) -> dict[str, float]:
    """Seconds per batch through the host's reward functions and through the plain ones (best of ``rounds``)."""
    from grpo_host.training.backends.reward_funcs import ROW_ID, EnsembleRewardFuncs
    from grpo_host.training.config import load_config
    from grpo_host.training.train import prepare

    config = load_config(EXAMPLE)
    with tempfile.TemporaryDirectory() as tmp:
        job = prepare(config.model_copy(update={"output_dir": tmp}), echo=False)
    n = config.batch_size * config.group_size
    rng = random.Random(0)
    ids = [i for i in rng.sample(range(len(job.rows)), config.batch_size) for _ in range(config.group_size)]
    completions = [[{"role": "assistant", "content": "".join(rng.choice("abcde?!x ")
                                                             for _ in range(config.max_completion_length))}]
                   for _ in range(n)]
    prompts = [job.rows[i].data["prompt"] for i in ids]
    answers = [job.rows[i].data["answer"] for i in ids]
    host = EnsembleRewardFuncs(job.ensemble, job.rows)
    metrics: list[tuple[str, float]] = []

    def host_batch():
        completions_copy = list(completions)  # a new batch object, as TRL passes each step
        for func in host.funcs:
            func(prompts=prompts, completions=completions_copy, completion_ids=None, **{ROW_ID: ids},
                 log_metric=lambda k, v: metrics.append((k, v)))

    def plain_batch():
        for func in plain_rewards():
            func(prompts=prompts, completions=completions, completion_ids=None, answer=answers)

    def best(fn) -> float:
        times = []
        for _ in range(rounds):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        return min(times)

    host_batch()  # warm up the inline runner thread
    out = {"completions_per_batch": n, "host_s_per_batch": best(host_batch), "plain_s_per_batch": best(plain_batch)}
    job.ensemble.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--short", type=int, default=5, help="steps of the short runs")
    parser.add_argument("--long", type=int, default=25, help="steps of the long runs")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=200, help="batches timed on the reward path")
    opts = parser.parse_args()
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    cpu: dict[str, list[float]] = {"host": [], "plain": []}
    wall: dict[str, list[float]] = {"host": [], "plain": []}
    runs = {"host": host_run, "plain": plain_run}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(opts.repeats):
            for side, run in runs.items():  # alternate sides so machine noise spreads over both
                short_cpu, short_wall = run(opts.short, Path(tmp) / f"{side}{i}s", env)
                long_cpu, long_wall = run(opts.long, Path(tmp) / f"{side}{i}l", env)
                cpu[side].append((long_cpu - short_cpu) / (opts.long - opts.short))
                wall[side] += short_wall + long_wall
                print(f"repeat {i + 1} {side}: {cpu[side][-1]:.4f} CPU s/step, "
                      f"median wall step {statistics.median(short_wall + long_wall):.4f} s", flush=True)
    path = reward_path(opts.rounds)
    h_cpu, p_cpu = statistics.median(cpu["host"]), statistics.median(cpu["plain"])
    h_wall, p_wall = statistics.median(wall["host"]), statistics.median(wall["plain"])
    extra = path["host_s_per_batch"] - path["plain_s_per_batch"]
    result = {
        "short_steps": opts.short, "long_steps": opts.long, "repeats": opts.repeats,
        "cpu_s_per_step": {"host": cpu["host"], "plain": cpu["plain"],
                           "overhead_percent": 100 * (h_cpu / p_cpu - 1)},
        "wall_step_time_median_s": {"host": h_wall, "plain": p_wall, "overhead_percent": 100 * (h_wall / p_wall - 1)},
        "reward_path": {**path, "host_extra_s_per_step": extra,
                        "overhead_percent_of_plain_cpu_step": 100 * extra / p_cpu},
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
