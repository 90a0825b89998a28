"""Every verdict the `math` reward gives on the project's truth sets, written down or compared row for row.

Run:  python benchmarks/math_verdicts.py --write before.json      (on the code before a change)
      python benchmarks/math_verdicts.py --compare before.json    (after it: exit 1 on any changed verdict)
      python benchmarks/math_verdicts.py --compare before.json --workers   (the throughput sets through the workers)

A speed change must not change a verdict, so this scores, with the reward itself in this process
(``score_one``, the parameters each set is scored with in ``tests/test_math_truth.py``):

* ``tests/data/math/reasoning_gym_truth.jsonl``, ``real_completions.jsonl`` and ``math_verify_cases.jsonl``;
* the hand-written lists of ``tests/test_math_truth.py`` (pitfalls, the number target, plain-text answers);
* the two throughput sets of ``math_throughput.py`` (10,000 generated pairs, 10,000 reasoning-gym pairs).

The property tests (``tests/test_math_forms.py``, ``tests/test_math_classes.py``) draw their cases afresh each run
and assert the right verdict of each, so they are run as tests, not listed here.  To record the verdicts of an older
tree, put its ``reward_plugins`` first on ``PYTHONPATH``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "math"


def _rows(name: str) -> list[dict]:
    return [json.loads(line) for line in (DATA / name).read_text().splitlines()]


def _module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cases(pairs: int) -> Iterator[tuple[str, str, str, dict]]:
    """(set, completion, gold, params) for every row of every set, in a fixed order."""
    truth = _module(ROOT / "tests" / "test_math_truth.py", "_math_truth")
    throughput = _module(ROOT / "benchmarks" / "math_throughput.py", "_math_throughput")
    for row in _rows("reasoning_gym_truth.jsonl"):
        yield "reasoning-gym", row["completion"], row["gold"], {}
    for row in _rows("real_completions.jsonl"):
        yield "real-completions", row["completion"], row["gold"], {}
    for row in _rows("math_verify_cases.jsonl"):
        yield "math-verify", row["pred"], row["gold"], truth._math_verify_params(row)
    for gold, completion, _ in truth.PITFALLS + truth.PLAIN_TEXT:
        yield "pitfalls", completion, gold, {}
    for gold, completion, _ in truth.NUMBER_TARGET:
        yield "pitfalls", completion, gold, {"extract": ["number"]}
    for gold, completion in throughput.make_pairs(pairs, 0):
        yield "generated", completion, gold, {}
    for gold, completion, _ in throughput.generator_pairs(pairs, 0):
        yield "reasoning-gym pairs", completion, gold, {}


THROUGHPUT_SETS = ("generated", "reasoning-gym pairs")


def verdicts(pairs: int, workers: bool = False) -> list[dict]:
    """Every case's verdict; with ``workers``, the throughput sets' through ``Ensemble.score`` (worker processes,
    batches of 256, as ``math_throughput.py`` and ``grpo-host score`` call it) instead of in this process."""
    from reward_plugins.math import rewards

    bound: dict[str, object] = {}
    out: list[dict[str, Any]] = []
    for kind, completion, gold, params in cases(pairs):
        key = json.dumps(params, sort_keys=True)
        reward = bound.setdefault(key, rewards.math_answer.bind(params))
        verdict = None if workers and kind in THROUGHPUT_SETS else reward.score_one(  # type: ignore[attr-defined]
            completion, answer=gold)
        out.append({"set": kind, "gold": gold, "completion": completion, "params": params, "verdict": verdict})
    if workers:
        from grpo_host import Ensemble

        rows = [row for row in out if row["set"] in THROUGHPUT_SETS]
        with Ensemble.from_spec("math") as ensemble:
            for start in range(0, len(rows), 256):
                batch = rows[start : start + 256]
                values = ensemble.score([r["completion"] for r in batch], answer=[r["gold"] for r in batch])
                for row, value in zip(batch, values.values["math"], strict=True):
                    row["verdict"] = value
    for row in out:
        row["completion"] = row["completion"][-120:]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--write", type=Path, help="write the verdicts to this JSON file")
    parser.add_argument("--compare", type=Path, help="compare with the verdicts in this file; exit 1 on a change")
    parser.add_argument("--pairs", type=int, default=10_000, help="pairs per throughput set")
    parser.add_argument("--workers", action="store_true",
                        help="score the throughput sets through Ensemble.score's worker processes")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    start, cpu = time.perf_counter(), time.process_time()
    now = verdicts(args.pairs, args.workers)
    print(f"{len(now)} verdicts in {time.perf_counter() - start:.1f} s ({time.process_time() - cpu:.1f} CPU-s)",
          file=sys.stderr)
    if args.write:
        args.write.write_text(json.dumps(now))
    if args.compare:
        before = json.loads(args.compare.read_text())
        if len(before) != len(now):
            sys.exit(f"{len(before)} rows before, {len(now)} now: not the same sets")
        changed = [(i, b, n) for i, (b, n) in enumerate(zip(before, now, strict=True))
                   if (b["set"], b["gold"], b["completion"]) != (n["set"], n["gold"], n["completion"])
                   or b["verdict"] != n["verdict"]]
        counts: dict[str, int] = {}
        for row in now:
            counts[row["set"]] = counts.get(row["set"], 0) + 1
        print(json.dumps({"rows": len(now), "per_set": counts, "changed": len(changed)}, indent=2))
        for i, b, n in changed[:20]:
            print(f"row {i} ({n['set']}): gold {n['gold']!r}, ...{n['completion'][-60:]!r}: "
                  f"{b['verdict']} before, {n['verdict']} now")
        if changed:
            sys.exit(1)


if __name__ == "__main__":
    main()
