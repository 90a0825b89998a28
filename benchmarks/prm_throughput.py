"""Steps scored per second by the `prm` reward on CPU, per PRM kind, at batch sizes 1, 8 and 32.

Run: python benchmarks/prm_throughput.py [--completions 64] [--hidden-size 32] [--layers 2] [--seconds 3]
                                         [--threads N] [--same-length]

Builds the tiny local PRMs of each kind (reward_plugins.prm.tiny_prm: a Llama
with a character-level tokenizer, so one token per character), generates
GSM8K-like completions of 3-8 steps of 40-120 characters each, then times the
bound `prm` reward (the same object `grpo-host score` and the TRL host call)
on the whole set, repeated for at least `--seconds`; wall-clock steps/s and
steps per CPU-second of this process (less sensitive to other load) are both
reported.  Loading is done once,
before timing, as in training where the model stays cached.  A step is one
scored reasoning step; the token kinds run one sequence per completion, the
sequence-classification kind one sequence per step prefix, so its sequences
are as many as its steps.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import tempfile
import time
from pathlib import Path

KINDS = ("token_classification", "math_shepherd", "sequence_classification")
BATCH_SIZES = (1, 8, 32)
WORDS = ["we", "add", "the", "two", "numbers", "then", "multiply", "by", "three", "so", "the", "total", "is", "and",
         "carry", "the", "remainder"]


def completions(n: int, seed: int = 0) -> tuple[list[str], list[str], int]:
    rng = random.Random(seed)
    texts, steps = [], 0
    for _ in range(n):
        k = rng.randint(3, 8)
        parts = []
        for i in range(k):
            sentence = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 24)))[:120]
            parts.append(f"Step {i + 1}: {sentence} = {rng.randint(1, 999)}.")
        texts.append("\n\n".join(parts))
        steps += k
    prompts = [f"Tom has {rng.randint(1, 99)} apples and buys {rng.randint(1, 99)} more. How many now?"] * n
    return texts, prompts, steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--completions", type=int, default=64)
    parser.add_argument("--hidden-size", type=int, default=32)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=3.0, help="minimum timed seconds per measurement")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    parser.add_argument("--same-length", action="store_true", help="one completion repeated: batches need no padding")
    args = parser.parse_args()

    import torch

    if args.threads:
        torch.set_num_threads(args.threads)

    from grpo_host import get_reward
    from reward_plugins.prm.tiny_prm import build_tiny_prm

    texts, prompts, steps = completions(args.completions)
    if args.same_length:
        texts, prompts = texts[:1] * len(texts), prompts[:1] * len(texts)
        steps = len(texts) * len(texts[0].split("\n\n"))
    chars = sum(map(len, texts)) / len(texts)
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cpus, torch {torch.__version__} "
          f"({torch.get_num_threads()} threads); {len(texts)} completions, {steps} steps, "
          f"{chars:.0f} characters (= tokens) per completion; model hidden {args.hidden_size}, {args.layers} layers")
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("| kind | batch size | steps/s | steps per CPU-second | sequences/s | ms per completion | load s |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for kind in KINDS:
            path = build_tiny_prm(Path(tmp) / kind, kind, hidden_size=args.hidden_size, num_layers=args.layers)
            for batch_size in BATCH_SIZES:
                reward = get_reward("prm").bind(
                    {"model": str(path), "kind": kind, "device": "cpu", "batch_size": batch_size}
                )
                start = time.perf_counter()
                reward(prompts=prompts[:1], completions=texts[:1])  # load (cached per process) and warm up
                load = time.perf_counter() - start
                runs, start, cpu_start = 0, time.perf_counter(), time.process_time()
                while runs == 0 or time.perf_counter() - start < args.seconds:
                    scores = reward(prompts=prompts, completions=texts)
                    runs += 1
                seconds = (time.perf_counter() - start) / runs
                cpu_seconds = (time.process_time() - cpu_start) / runs
                assert all(s is not None and 0 <= s <= 1 for s in scores)
                sequences = steps if kind == "sequence_classification" else len(texts)
                print(f"| {kind} | {batch_size} | {steps / seconds:,.0f} | {steps / cpu_seconds:,.0f} | "
                      f"{sequences / seconds:,.0f} | "
                      f"{1000 * seconds / len(texts):.1f} | {load:.2f} |", flush=True)


if __name__ == "__main__":
    main()
