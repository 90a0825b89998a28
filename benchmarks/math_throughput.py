"""Throughput of the `math` reward against the two usual ways of calling math-verify.

Run:  python benchmarks/math_throughput.py [--pairs 10000] [--batch 256] [--workers N] [--sets ...] [--json]
      python benchmarks/math_throughput.py --profile [--pairs 4000]   (where the reward's CPU goes, by area)

Two sets of (gold, completion) pairs, GRPO-shaped (8 completions per gold,
scored in batches of ``--batch``), ``--pairs`` each:

* ``generated``: golds and answers made up here (:func:`make_pairs`): integers,
  decimals, fractions, surds, pi, intervals, sets and polynomials in LaTeX;
* ``reasoning-gym``: drawn from ``tests/data/math/reasoning_gym_truth.jsonl``
  (reasoning-gym items with a dataset answer, an equal rewrite and a perturbed
  answer each: Python-syntax polynomials and integrals, scientific notation,
  thousands separators, complex numbers, root lists, ``<answer>`` tags...),
  so every pair's right verdict is known and each scorer's agreement with it
  is reported beside its speed.

Each set is scored three ways:

* ``grpo-host math``: ``Ensemble.score`` with the installed ``math`` reward
  (worker processes, per-worker gold cache, sympy-free plain numbers).
* ``trl accuracy_reward``: ``trl.rewards.accuracy_reward`` itself, called the
  way GRPOTrainer calls it (conversational completions, ``solution`` column).
* ``open-r1 accuracy_reward``: open-r1's calling pattern, re-implemented below
  from ``src/open_r1/rewards.py`` (huggingface/open-r1, Apache-2.0): the gold
  parsed with ``extraction_mode="first_match"``, the completion with a
  LatexExtractionConfig (boxed first, no unanchored LaTeX,
  ``NormalizationConfig(nits=False, malformed_operators=False,
  basic_latex=True, equations=True, boxed="all", units=True)``),
  ``verify(gold, answer)``, None when the gold does not parse or verify raises.

Each scorer first scores a small warm-up set with other golds (imports, worker
start-up), reported separately; the timed run is the 10,000 pairs, batch by
batch with the scorers taking turns, so a change in machine load (a shared box)
hits all of them alike.  Wall-clock throughput is the target figure; CPU
seconds (this process plus, for the ensemble, its workers from /proc) are
reported too, because on a shared box other jobs decide how much of the
cores the workers get.  Verdicts are compared pair by pair.  Timings depend on the machine and its load; the figures
are for documentation, never a test.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import random
import time
from collections import Counter
from pathlib import Path

FILLER = [
    "Let me work through this carefully.",
    "First we simplify the expression $a_1 = 3$ and note that $a_2 = a_1 + 4$.",
    "Substituting gives $y = 2x + 1$, so the slope is two.",
    "We check the boundary cases separately: when $n = 0$ nothing changes.",
    "Multiplying both sides by $k$ keeps the inequality since $k > 0$.",
    "The sum telescopes, leaving only the first and last terms.",
    "By symmetry the two halves contribute equally.",
    "Hence the remaining factor is $\\frac{m}{2}$ for even $m$.",
]


def _kinds(rng: random.Random):
    """(gold, equivalent forms, wrong forms) for one problem, in the shapes math datasets use."""
    pick = rng.random()
    if pick < 0.40:
        g = rng.randrange(-50, 5000)
        return str(g), [str(g), f"{g}.0", f"\\frac{{{2 * g}}}{{2}}"], [str(g + 1), str(g - 7)]
    if pick < 0.50:
        n = rng.randrange(1, 400)
        value = n / 4 + 0.5 * (n % 2 == 0)
        text = f"{value:.2f}"
        right = [text, f"{value:.3f}", f"\\frac{{{round(value * 4)}}}{{4}}"]
        return text, right, [f"{value + 0.1:.2f}", f"{value:.1f}9"]
    if pick < 0.65:
        a, b = rng.randrange(1, 30), rng.randrange(31, 60)
        return (f"\\frac{{{a}}}{{{b}}}", [f"\\frac{{{2 * a}}}{{{2 * b}}}", f"{a}/{b}", f"\\dfrac{{{a}}}{{{b}}}"],
                [f"\\frac{{{b}}}{{{a}}}", f"\\frac{{{a + 1}}}{{{b}}}"])
    if pick < 0.75:
        k, r = rng.randrange(2, 9), rng.choice([2, 3, 5, 7])
        return (f"${k}\\sqrt{{{r}}}$", [f"\\sqrt{{{k * k * r}}}", f"{k}\\sqrt{{{r}}}"],
                [f"{k + 1}\\sqrt{{{r}}}", f"\\sqrt{{{k * r}}}"])
    if pick < 0.80:
        d = rng.choice([2, 3, 4, 6])
        return f"$\\frac{{\\pi}}{{{d}}}$", [f"\\frac{{\\pi}}{{{d}}}", f"\\pi/{d}"], [f"\\frac{{\\pi}}{{{d * 2}}}"]
    if pick < 0.90:
        a = rng.randrange(-5, 5)
        b = a + rng.randrange(1, 6)
        return f"$({a}, {b}]$", [f"({a},{b}]", f"({a}, {b}]"], [f"[{a},{b}]", f"({a},{b})"]
    if pick < 0.95:
        items = sorted(rng.sample(range(1, 12), 3))
        shuffled = items[:]
        rng.shuffle(shuffled)
        return ("$\\{" + ", ".join(map(str, items)) + "\\}$", ["\\{" + ", ".join(map(str, shuffled)) + "\\}"],
                ["\\{" + ", ".join(map(str, items[:2])) + "\\}"])
    c = rng.randrange(1, 6)
    return (f"$(x+{c})^2$", [f"x^2 + {2 * c}x + {c * c}", f"(x+{c})^2"], [f"x^2 + {c * c}", f"(x-{c})^2"])


def make_pairs(n: int, seed: int, group: int = 8) -> list[tuple[str, str]]:
    """``n`` (gold, completion) pairs, ``group`` completions per gold: right, wrong and missing answers."""
    rng = random.Random(seed)
    pairs = []
    while len(pairs) < n:
        gold, right, wrong = _kinds(rng)
        for _ in range(group):
            reasoning = " ".join(rng.choices(FILLER, k=rng.randrange(3, 12)))
            roll = rng.random()
            if roll < 0.1:
                completion = f"{reasoning} I could not finish the computation."
            else:
                form = rng.choice(right if roll < 0.6 else wrong)
                box = f"\\boxed{{{form}}}"
                completion = f"{reasoning} Therefore the result is {box if rng.random() < 0.5 else f'${box}$'}."
            pairs.append((gold, completion))
    return pairs[:n]


TRUTH = Path(__file__).resolve().parent.parent / "tests" / "data" / "math" / "reasoning_gym_truth.jsonl"


def generator_pairs(n: int, seed: int, group: int = 8) -> list[tuple[str, str, int]]:
    """``n`` (gold, completion, truth) triples from the reasoning-gym truth set, ``group`` completions per gold.

    Each completion is one of its item's three answers (dataset, equal rewrite,
    perturbed: the truth set's own wording around it) after a few sentences of
    reasoning, or, one time in ten, no answer at all.
    """
    rows = [json.loads(line) for line in TRUTH.read_text().splitlines()]
    items: dict[str, list[dict]] = {}
    for row in rows:
        items.setdefault(f"{row['task']}|{row['gold']}", []).append(row)
    golds = sorted(items)
    rng, triples = random.Random(seed), []
    while len(triples) < n:
        answers = items[rng.choice(golds)]
        for _ in range(group):
            reasoning = " ".join(rng.choices(FILLER, k=rng.randrange(3, 12)))
            if rng.random() < 0.1:
                triples.append((answers[0]["gold"], f"{reasoning} I could not finish the computation.", 0))
            else:
                row = rng.choice(answers)
                triples.append((row["gold"], f"{reasoning} {row['completion']}", row["expected"]))
    return triples[:n]


def open_r1_accuracy_reward(completions, solution, **kwargs):
    """open-r1's accuracy_reward calling pattern (src/open_r1/rewards.py, huggingface/open-r1, Apache-2.0)."""
    from latex2sympy2_extended import NormalizationConfig
    from math_verify import LatexExtractionConfig, parse, verify

    contents = [completion[0]["content"] for completion in completions]
    rewards = []
    for content, sol in zip(contents, solution, strict=False):
        gold_parsed = parse(sol, extraction_mode="first_match")
        if len(gold_parsed) != 0:
            answer_parsed = parse(
                content,
                extraction_config=[
                    LatexExtractionConfig(
                        normalization_config=NormalizationConfig(
                            nits=False, malformed_operators=False, basic_latex=True, equations=True, boxed="all",
                            units=True,
                        ),
                        boxed_match_priority=0,
                        try_extract_without_anchor=False,
                    )
                ],
                extraction_mode="first_match",
            )
            try:
                reward = float(verify(gold_parsed, answer_parsed))
            except Exception:
                reward = None
        else:
            reward = None
        rewards.append(reward)
    return rewards


def _batches(pairs, size):
    for start in range(0, len(pairs), size):
        yield pairs[start : start + size]


def trl_style(fn):
    """Call a TRL-contract reward function on one batch as GRPOTrainer does (chat completions, ``solution``)."""

    def call(chunk):
        completions = [[{"role": "assistant", "content": c}] for _, c in chunk]
        return fn(completions=completions, solution=[g for g, _ in chunk]), {}

    return call


def _worker_cpu(ensemble) -> float:
    """CPU seconds used so far by the ensemble's worker processes (Linux /proc; 0 elsewhere)."""
    total = 0.0
    for pid in ensemble.worker_pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def ensemble_style(ensemble):
    def call(chunk):
        before = _worker_cpu(ensemble)
        result = ensemble.score([c for _, c in chunk], answer=[g for g, _ in chunk])
        metrics = result.metrics["math"]
        return result.values["math"], {"timeouts": metrics.timeouts, "errors": metrics.errors,
                                        "worker_cpu_seconds": _worker_cpu(ensemble) - before}

    return call


def run_interleaved(scorers, pairs, batch):
    """Score batch by batch, each scorer in turn, so a change in machine load hits every scorer alike."""
    values = {name: [] for name in scorers}
    seconds = dict.fromkeys(scorers, 0.0)
    counts = {name: Counter() for name in scorers}
    for chunk in _batches(pairs, batch):
        for name, call in scorers.items():
            start, cpu = time.perf_counter(), time.process_time()
            out, extra = call(chunk)
            seconds[name] += time.perf_counter() - start
            counts[name]["cpu_seconds"] += time.process_time() - cpu + extra.pop("worker_cpu_seconds", 0.0)
            values[name] += out
            counts[name].update(extra)
    return values, seconds, counts


def measure(scorers, name: str, pairs: list[tuple], warmup: list[tuple], batch: int, ours: str) -> dict:
    """One set: warm-up (imports, worker start-up, excluded), then the timed interleaved run, as a report."""
    truth = [p[2] for p in pairs] if len(pairs[0]) > 2 else None
    pairs = [p[:2] for p in pairs]
    _, warmup_seconds, _ = run_interleaved(scorers, [p[:2] for p in warmup], batch)
    load_before = os.getloadavg()
    values, seconds, counts = run_interleaved(scorers, pairs, batch)
    ours_rate = len(pairs) / seconds[ours]
    ours_per_cpu = len(pairs) / counts[ours]["cpu_seconds"]
    report = {
        "set": name,
        "pairs": len(pairs),
        "load_average_before_after": [round(load_before[0], 2), round(os.getloadavg()[0], 2)],
        "verdicts_ours": dict(Counter(map(str, values[ours]))),
        "scorers": {},
    }
    for scorer in scorers:
        differ = [i for i, (a, b) in enumerate(zip(values[scorer], values[ours], strict=False)) if a != b]
        row = {
            "seconds": round(seconds[scorer], 2),
            "items_per_s": round(len(pairs) / seconds[scorer], 1),
            "speedup_of_ours": round(ours_rate / (len(pairs) / seconds[scorer]), 2),
            "items_per_cpu_s": round(len(pairs) / counts[scorer]["cpu_seconds"], 1),
            "cpu_efficiency_of_ours": round(ours_per_cpu / (len(pairs) / counts[scorer]["cpu_seconds"]), 2),
            "warmup_seconds": round(warmup_seconds[scorer], 2),
            "same_verdicts": len(pairs) - len(differ),
            "differing_examples": [{"gold": pairs[i][0], "completion": pairs[i][1][-80:], "theirs": values[scorer][i],
                                    "ours": values[ours][i]} for i in differ[:5]],
            **{k: round(v, 2) for k, v in counts[scorer].items()},
        }
        if truth is not None:  # 1.0 is "right", anything else (0.0, None) is "not right"
            row["agrees_with_truth"] = sum((v == 1.0) == bool(t) for v, t in zip(values[scorer], truth, strict=False))
            row["false_positives"] = sum(v == 1.0 and not t for v, t in zip(values[scorer], truth, strict=False))
        report["scorers"][scorer] = row
    return report


AREAS = [  # (area, what a profiled function's file path contains), first match wins
    ("LaTeX grammar (antlr4, latex2sympy2)", ("antlr4", "latex2sympy2")),
    ("math-verify (extraction, verify)", ("math_verify",)),
    ("sympy", ("sympy", "mpmath")),
    ("finding answers (find.py)", ("math/find.py",)),
    ("reading values (read.py)", ("math/read.py",)),
    ("comparing (compare.py)", ("math/compare.py",)),
    ("the reward (rewards.py)", ("math/rewards.py",)),
]


def profile(name: str, pairs: list[tuple], warmup: list[tuple]) -> None:
    """The reward's own CPU on one set, in this process (no workers), by area (AREAS) and its top functions.

    The function itself is called, as a worker calls it, after a warm-up on other golds; the profiler's clock is
    CPU time.  Regular expressions and other builtins count in the area of the code that calls them.
    """
    import cProfile
    import pstats

    from reward_plugins.math.rewards import MathParams, math_answer

    params = MathParams()
    for gold, completion, *_ in warmup:
        math_answer.fn(completion, answer=gold, params=params)
    profiler = cProfile.Profile(time.process_time)
    cpu = time.process_time()
    profiler.enable()
    for gold, completion, *_ in pairs:
        math_answer.fn(completion, answer=gold, params=params)
    profiler.disable()
    cpu = time.process_time() - cpu
    stats = pstats.Stats(profiler)
    by_area: Counter = Counter()
    for (path, _, _), (_, _, tottime, _, callers) in stats.stats.items():  # type: ignore[attr-defined]
        where = path
        if path == "~":  # a builtin (re, str methods): the area of its first caller
            where = next(iter(callers))[0] if callers else "~"
        area = next((a for a, marks in AREAS if any(m in where for m in marks)), "other (Python, stdlib)")
        by_area[area] += tottime
    total = sum(by_area.values())
    print(f"\nprofile of {name}: {len(pairs)} pairs, {cpu:.2f} CPU-s with the profiler "
          f"({1e6 * cpu / len(pairs):.0f} us a pair)")
    for area, seconds in by_area.most_common():
        print(f"  {area:40} {100 * seconds / total:5.1f} %")
    stats.sort_stats("tottime").print_stats(12)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=10_000, help="pairs per set")
    parser.add_argument("--batch", type=int, default=256, help="items per reward call (a GRPO step's completions)")
    parser.add_argument("--workers", type=int, default=None, help="worker processes (default: one per core)")
    parser.add_argument("--sets", nargs="+", default=["generated", "reasoning-gym"],
                        choices=["generated", "reasoning-gym"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--profile", action="store_true", help="profile the reward in this process instead")
    args = parser.parse_args()
    logging.disable(logging.WARNING)  # math-verify warns per timeout-less call
    makers = {"generated": make_pairs, "reasoning-gym": generator_pairs}
    if args.profile:
        for name in args.sets:
            profile(name, makers[name](args.pairs, args.seed), makers[name](args.pairs // 2, args.seed + 1))
        return

    from trl.rewards import accuracy_reward

    from grpo_host import Ensemble

    ensemble = Ensemble.from_spec("math", workers=args.workers)
    ours = "grpo-host math (Ensemble.score)"
    scorers = {
        ours: ensemble_style(ensemble),
        "trl accuracy_reward": trl_style(accuracy_reward),
        "open-r1 accuracy_reward": trl_style(open_r1_accuracy_reward),
    }
    reports = [measure(scorers, name, makers[name](args.pairs, args.seed), makers[name](64, args.seed + 1),
                       args.batch, ours) for name in args.sets]
    ensemble.close()
    meta = {"batch": args.batch, "cores": os.cpu_count(), "python": platform.python_version(), "sets": reports}
    if args.json:
        print(json.dumps(meta, indent=2))
        return
    for report in reports:
        n = report["pairs"]
        print(f"\nset {report['set']}: {n} pairs, batches of {args.batch}, {os.cpu_count()} cores, "
              f"load average {report['load_average_before_after']}")
        print(f"{'scorer':36} {'items/s':>9} {'seconds':>8} {'ours is':>8} {'items/cpu-s':>12} {'ours is':>8} "
              f"{'same verdicts':>14} {'truth':>12} {'false +':>8}")
        for name, row in report["scorers"].items():
            truth = (f"{row['agrees_with_truth']:>7}/{n} {row['false_positives']:>8}"
                     if "agrees_with_truth" in row else "")
            print(f"{name:36} {row['items_per_s']:9.1f} {row['seconds']:8.2f} {row['speedup_of_ours']:7.2f}x "
                  f"{row['items_per_cpu_s']:12.1f} {row['cpu_efficiency_of_ours']:7.2f}x "
                  f"{row['same_verdicts']:>8}/{n} {truth}")
        for name, row in report["scorers"].items():
            for ex in row["differing_examples"][:3]:
                print(f"  differs from {name}: {ex}")


if __name__ == "__main__":
    main()
