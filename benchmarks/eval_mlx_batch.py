"""Samples per second of ``grpo-host eval --backend mlx``: one sample at a time (what eval did before issue 40)
against the batch of prompts × k through mlx-lm's ``batch_generate`` (what it does now).

Both on the built-in tiny model with ``mlx[cpu]``, in one process, alternating
``--repeats`` times after one warm-up each: the before side is mlx-lm's
``stream_generate`` called once per sample as the old sampler did; the after
side is eval's own sampler (:func:`grpo_host.training.evaluate.mlx_generator`)
called on ``--batch-size`` prompts at a time.  Sampling at temperature 1,
``--tokens`` new tokens at most.  Figures only: a timing is never a test.

Run: python benchmarks/eval_mlx_batch.py [--prompts 16] [-k 4] [--batch-size 8] [--tokens 32] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import mlx.core as mx
from mlx_lm import load, stream_generate

from grpo_host.training.builtin_model import resolve_model
from grpo_host.training.evaluate import EvalSettings, _render, load_mlx, mlx_generator

LETTERS = Path(__file__).resolve().parents[1] / "examples" / "letters.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=16)
    parser.add_argument("-k", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    a = parser.parse_args()
    prompts = [json.loads(line)["prompt"] for line in LETTERS.read_text().splitlines()][: a.prompts]
    path = resolve_model("builtin:tiny")
    s = EvalSettings(model="builtin:tiny", data="", temperature=1.0, top_p=1.0, top_k=0, min_p=0.0,
                     max_completion_length=a.tokens, seed=42, backend="mlx", batch_size=a.batch_size)
    batched = mlx_generator(path, s)
    model, tokenizer = load(path)
    sampler = load_mlx(path, s)[2]

    def before() -> None:
        mx.random.seed(42)
        for prompt in prompts:
            ids = tokenizer.encode(_render(tokenizer, prompt), add_special_tokens=False)
            for _ in range(a.k):
                for _step in stream_generate(model, tokenizer, ids, max_tokens=a.tokens, sampler=sampler):
                    pass

    def after() -> None:
        for first in range(0, len(prompts), a.batch_size):
            batched(prompts[first:first + a.batch_size], a.k, 42 + first * a.k)

    seconds: dict[str, list[float]] = {"one at a time": [], "batched": []}
    for run in (before, after):
        run()  # warm-up
    for _ in range(a.repeats):
        for name, run in (("one at a time", before), ("batched", after)):
            start = time.perf_counter()
            run()
            seconds[name].append(time.perf_counter() - start)
    n = len(prompts) * a.k
    busy = os.getloadavg()[0]
    print(f"{len(prompts)} prompts x k={a.k}, batch {a.batch_size}, <= {a.tokens} tokens, load {busy:.1f}")
    for name, got in seconds.items():
        print(f"{name:>14}: median {statistics.median(got):.3f} s, {n / statistics.median(got):.1f} samples/s")
    print(f"speed-up: {statistics.median(seconds['one at a time']) / statistics.median(seconds['batched']):.2f}x")


if __name__ == "__main__":
    main()
