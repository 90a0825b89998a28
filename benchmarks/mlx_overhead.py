"""Seconds per GRPO iteration: `grpo-host train --backend mlx` beside a plain mlx-lm-lora `train_grpo` script.

Both train the same tiny run (examples/letters.yaml: builtin:tiny, 4 prompts
x 8 completions, 12 tokens, full fine-tune, the same seed, optimizer and
sampling settings), each in a fresh process, alternating (and alternating
which goes first), ``--repeats`` times.  The plain script is what a user of mlx-lm-lora writes by hand: the
model from ``mlx_lm.load``, 4-tuples for the dataset, two plain reward
functions.  The host adds the data check, the ensemble (timeouts, metrics,
unscored-row policy), row ids as ``types`` and its metrics log.

With the same seed both make the same completions, so the per-step mean
rewards must agree: the script checks that, so the figures compare equal
work.  Seconds are the wall time of ``train_grpo`` (the host's
``summary.json`` ``seconds``), divided by the steps.

It then profiles one more host run and reports the time spent in the host's
own code inside ``train_grpo`` (reward functions, fill-in, callback, batch
wrapper) as a share of ``train_grpo``: a figure that machine load does not move.

Run: python benchmarks/mlx_overhead.py [--steps 40] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "letters.yaml"
GRPO_HOST = str(Path(sys.executable).with_name("grpo-host"))


def plain(steps: int, out: Path) -> None:
    """The hand-written run: mlx_lm.load, train_grpo, plain reward functions (no grpo-host code at all)."""
    import mlx.core as mx
    import mlx.optimizers as optim
    import numpy as np
    import yaml
    from mlx_lm import load
    from mlx_lm_lora.trainer.grpo_trainer import GRPOTrainingArgs, train_grpo

    config = yaml.safe_load(EXAMPLE.read_text())
    rows = [json.loads(line) for line in (ROOT / config["data"]).read_text().splitlines() if line.strip()]
    model_dir = os.environ["TINY_MODEL_DIR"]

    def letter_share(prompts, completions, answer, types=None):
        return [c.count(a) / len(c) if c else 0.0 for c, a in zip(completions, answer, strict=False)]

    def lowercase_share(prompts, completions, answer, types=None):
        return [sum("a" <= ch <= "z" for ch in c) / len(c) if c else 0.0 for c in completions]

    class ClippedAdamW(optim.AdamW):  # TRL's optimizer settings, as the host uses them
        def apply_gradients(self, gradients, parameters):
            return super().apply_gradients(optim.clip_grad_norm(gradients, 1.0)[0], parameters)

    mx.random.seed(config["seed"])
    np.random.seed(config["seed"])
    model, tokenizer = load(model_dir)
    dataset = []
    for row in rows:
        text = tokenizer.apply_chat_template(row["prompt"], add_generation_prompt=True, tokenize=False)
        dataset.append((tokenizer.encode(text, add_special_tokens=False), [], text, row["answer"]))
    lr = config["learning_rate"]
    optimizer = ClippedAdamW(learning_rate=optim.linear_schedule(lr, lr, 1), weight_decay=0.0, bias_correction=True)
    rewards: list[float] = []

    class Log:
        def on_train_loss_report(self, info):
            rewards.append(info["train_total_rewards_mean"])

        def on_val_loss_report(self, info):
            pass

    args = GRPOTrainingArgs(
        batch_size=config["batch_size"], iters=steps, gradient_accumulation_steps=1, steps_per_report=1,
        steps_per_eval=100, steps_per_save=100, max_seq_length=max(len(d[0]) for d in dataset),
        adapter_file=str(out.with_suffix(".safetensors")), group_size=config["group_size"], beta=0.0, epsilon=0.2,
        epsilon_high=0.2, max_completion_length=config["max_completion_length"], temperature=1.0, top_p=1.0,
        top_k=0, min_p=0.0, grpo_loss_type="bnpo", reward_weights=[1.0, 0.5], importance_sampling_level="token",
    )
    start = time.perf_counter()
    train_grpo(model=model, ref_model=None, tokenizer=tokenizer, optimizer=optimizer, train_dataset=dataset,
               reward_funcs=[letter_share, lowercase_share], args=args, training_callback=Log(), end_answer_token="")
    seconds = time.perf_counter() - start
    out.write_text(json.dumps({"seconds": seconds, "rewards": rewards}))


def run_host(steps: int, out: Path, env: dict[str, str]) -> tuple[float, list[float]]:
    subprocess.run([GRPO_HOST, "train", str(EXAMPLE), "--backend", "mlx", "--set", f"max_steps={steps}",
                    "--set", "save_every=100000", "--set", f"output_dir={out}"],
                   check=True, capture_output=True, env=env, cwd=ROOT)
    summary = json.loads((out / "summary.json").read_text())
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    return summary["seconds"], [r["reward"] for r in records if "reward" in r]


def run_plain(steps: int, out: Path, env: dict[str, str]) -> tuple[float, list[float]]:
    subprocess.run([sys.executable, __file__, "--plain", "--steps", str(steps), "--out", str(out)],
                   check=True, capture_output=True, env=env, cwd=ROOT)
    result = json.loads(out.read_text())
    return result["seconds"], result["rewards"]


HOST_HOOKS = {"__call__", "on_train_loss_report", "on_val_loss_report", "iterate"}
"""What the host runs inside ``train_grpo``: its reward functions (ensemble scoring, the unscored fill-in), its
training callback and its batch-iterator wrapper (grpo_host/training/backends/mlx.py)."""


def profiled_share(steps: int, out: Path, env: dict[str, str]) -> tuple[float, float]:
    """Seconds of the host's own code inside ``train_grpo`` and of ``train_grpo`` itself, under cProfile.

    Wall-clock figures on a busy machine move by more than the overhead being measured; this one counts the
    work the host adds (cProfile inflates Python code more than mlx's C++, so it is an upper bound).
    """
    import pstats

    prof = out.with_suffix(".prof")
    subprocess.run([sys.executable, "-m", "cProfile", "-o", str(prof), GRPO_HOST, "train", str(EXAMPLE),
                    "--backend", "mlx", "--set", f"max_steps={steps}", "--set", "save_every=100000",
                    "--set", f"output_dir={out}"], check=True, capture_output=True, env=env, cwd=ROOT)
    stats = pstats.Stats(str(prof)).stats  # type: ignore[attr-defined]
    host = sum(ct for (file, _, name), (_, _, _, ct, _) in stats.items()
               if file.endswith(os.path.join("backends", "mlx.py")) and name in HOST_HOOKS)
    total = sum(ct for (file, _, name), (_, _, _, ct, _) in stats.items()
                if name == "train_grpo" and file.endswith("grpo_trainer.py"))
    return host, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--plain", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.plain:
        plain(args.steps, args.out)
        return

    from grpo_host.training.builtin_model import tiny_model_dir

    env = {**os.environ, "TINY_MODEL_DIR": str(tiny_model_dir()), "PYTHONWARNINGS": "ignore"}
    times: dict[str, list[float]] = {"grpo-host train --backend mlx": [], "plain train_grpo script": []}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeats):  # alternate which goes first, so drifting machine load favours neither
            if i % 2:
                plain_s, plain_r = run_plain(args.steps, Path(tmp) / f"plain{i}.json", env)
            host_s, host_r = run_host(args.steps, Path(tmp) / f"host{i}", env)
            if not i % 2:
                plain_s, plain_r = run_plain(args.steps, Path(tmp) / f"plain{i}.json", env)
            same = len(host_r) == len(plain_r) and all(abs(a - b) < 1e-5 for a, b in zip(host_r, plain_r, strict=False))
            print(f"repeat {i + 1}: host {host_s / args.steps:.4f} s/it, plain {plain_s / args.steps:.4f} s/it, "
                  f"same completions (per-step rewards equal): {same}", flush=True)
            times["grpo-host train --backend mlx"].append(host_s / args.steps)
            times["plain train_grpo script"].append(plain_s / args.steps)
    print(f"\n{'run':32} {'median s/it':>12} {'best s/it':>10}")
    for name, values in times.items():
        print(f"{name:32} {statistics.median(values):12.4f} {min(values):10.4f}")
    host, base = (statistics.median(v) for v in times.values())
    print(f"\nhost overhead (medians): {100 * (host / base - 1):+.2f} %  ({args.steps} steps x {args.repeats} repeats)")
    with tempfile.TemporaryDirectory() as tmp:
        own, total = profiled_share(args.steps, Path(tmp) / "profiled", env)
    print(f"host code inside train_grpo (cProfile): {own:.3f} s of {total:.3f} s = {100 * own / total:.2f} %")


if __name__ == "__main__":
    main()
