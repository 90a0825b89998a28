"""Conversations scored per CPU-second by the `reward_model` reward, beside transformers' text-classification
pipeline on the same model and the same conversations, at batch sizes 1, 8 and 32.

Run: python benchmarks/reward_model_throughput.py [--rows 64] [--hidden-size 256] [--layers 4] [--seconds 3]
                                                 [--threads 1]

Builds a tiny local reward model (reward_plugins.prm.tiny_prm's sequence-classification Llama, one token per
character) and gives its tokenizer a chat template that writes the BOS itself, as Llama 3's does; generates
chat conversations (a system and a user turn, then answers of 100-600 characters); loads the model once before
timing, as training does.  Both sides do the same work per row: render the chat template, tokenize, run the
model.  The peer is `transformers.pipeline("text-classification", function_to_apply="none")` given the rendered
texts with `add_special_tokens=False` (without it the pipeline adds a second BOS and scores another input);
its scores are compared with the reward's.  Rows per CPU-second count this process's CPU time only, the steadier
figure on a shared machine; wall-clock rows/s are printed beside them.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

BATCH_SIZES = (1, 8, 32)
TEMPLATE = "{{ bos_token }}{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
WORDS = ["the", "answer", "is", "because", "we", "add", "two", "and", "three", "so", "total", "equals", "five",
         "first", "then", "check", "again"]


def conversations(n: int, seed: int = 0) -> tuple[list[list[dict]], list[str]]:
    rng = random.Random(seed)
    prompts, answers = [], []
    for _ in range(n):
        prompts.append([{"role": "system", "content": "Answer briefly."},
                        {"role": "user", "content": f"What is {rng.randint(1, 99)} plus {rng.randint(1, 99)}?"}])
        answers.append(" ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 110)))[:600])
    return prompts, answers


def timed(run: Callable[[], list[float]], seconds: float) -> tuple[float, float, list[float]]:
    """(wall seconds, CPU seconds) per call of ``run``, repeated for at least ``seconds``; its last output."""
    run()  # warm up
    runs, start, cpu_start = 0, time.perf_counter(), time.process_time()
    while runs == 0 or time.perf_counter() - start < seconds:
        out = run()
        runs += 1
    return (time.perf_counter() - start) / runs, (time.process_time() - cpu_start) / runs, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=64)
    parser.add_argument("--hidden-size", type=int, default=256)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=3.0, help="minimum timed seconds per measurement")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    args = parser.parse_args()

    import torch
    import transformers

    torch.set_num_threads(args.threads)
    transformers.utils.logging.disable_progress_bar()
    from grpo_host import get_reward
    from reward_plugins.prm.tiny_prm import build_tiny_prm

    prompts, answers = conversations(args.rows)
    with tempfile.TemporaryDirectory() as tmp:
        path = build_tiny_prm(Path(tmp) / "rm", "sequence_classification", step_tag=None,
                              hidden_size=args.hidden_size, num_layers=args.layers)
        tokenizer = transformers.AutoTokenizer.from_pretrained(path)
        tokenizer.chat_template = TEMPLATE
        tokenizer.save_pretrained(path)
        chats = [[*p, {"role": "assistant", "content": a}] for p, a in zip(prompts, answers, strict=True)]
        tokens = sum(len(tokenizer.apply_chat_template(c, return_dict=True)["input_ids"]) for c in chats) / len(chats)
        print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cpus, torch {torch.__version__} "
              f"({torch.get_num_threads()} threads), transformers {transformers.__version__}; {len(chats)} "
              f"conversations, {tokens:.0f} tokens each on average; model hidden {args.hidden_size}, "
              f"{args.layers} layers")
        print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print("| scorer | batch size | rows per CPU-second | rows/s | max abs difference from the reward |")
        print("|---|---:|---:|---:|---:|")
        pipe = transformers.pipeline("text-classification", model=str(path), device="cpu")
        for batch_size in BATCH_SIZES:
            reward = get_reward("reward_model").bind({"model": str(path), "device": "cpu", "batch_size": batch_size})
            seconds, cpu, ours = timed(lambda r=reward: r(prompts=prompts, completions=answers), args.seconds)
            print(f"| reward_model | {batch_size} | {len(chats) / cpu:,.1f} | {len(chats) / seconds:,.1f} | |",
                  flush=True)

            def peer(size: int = batch_size) -> list[float]:
                texts = [tokenizer.apply_chat_template(c, tokenize=False) for c in chats]
                found = pipe(texts, batch_size=size, function_to_apply="none", add_special_tokens=False)
                return [x["score"] for x in found]

            seconds, cpu, theirs = timed(peer, args.seconds)
            gap = max(abs(a - b) for a, b in zip(ours, theirs, strict=True))
            print(f"| transformers pipeline | {batch_size} | {len(chats) / cpu:,.1f} | {len(chats) / seconds:,.1f} | "
                  f"{gap:.1e} |", flush=True)


if __name__ == "__main__":
    main()
