"""Agreement of `math`, plain math-verify and TRL's `accuracy_reward` with real model completions' labels.

Run:  python benchmarks/math_real.py [--json] [--misses SCORER]

The rows are ``tests/data/math/real_completions.jsonl`` (built by ``tests/data/math/make_real.py``): completions
written by language models for GSM8K and MATH problems, each labelled right or wrong by its source (OpenAI's
``is_correct``, MR-GSM8K's answer correctness, PRM800K's and PRMBench's human labels).  Each scorer runs in its own
fresh process, because the reward adapts math-verify's grader in the process that imports it:

* ``math``: the reward itself, ``score_one`` with the default parameters;
* ``math-verify``: ``verify(parse(gold), parse(completion))``, as its README shows;
* ``trl accuracy_reward``: ``trl.rewards.accuracy_reward`` as GRPOTrainer calls it (None, a gold it cannot parse,
  counts as 0).

A score of 1.0 is an accept; agreement is accept == label; a false accept is 1.0 for a row labelled wrong.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
from collections import Counter
from pathlib import Path

ROWS = Path(__file__).resolve().parents[1] / "tests" / "data" / "math" / "real_completions.jsonl"
SCORERS = ("math", "math-verify", "trl accuracy_reward")


def load_rows() -> list[dict]:
    return [json.loads(line) for line in ROWS.read_text().splitlines()]


def accepts(scorer: str, rows: list[dict]) -> list[bool]:
    """Whether ``scorer`` pays each row (run in a process of its own: see the module)."""
    if scorer == "math":
        from reward_plugins.math.rewards import math_answer

        bound = math_answer.bind({})
        return [bound.score_one(r["completion"], answer=r["gold"]) == 1.0 for r in rows]
    if scorer == "math-verify":
        from math_verify import parse, verify

        return [bool(verify(parse(r["gold"]), parse(r["completion"]))) for r in rows]
    from trl.rewards import accuracy_reward

    return [accuracy_reward([[{"role": "assistant", "content": r["completion"]}]], [r["gold"]])[0] == 1.0
            for r in rows]


def table(rows: list[dict], verdicts: dict[str, list[bool]]) -> list[dict]:
    """Per source and in all: rows, labelled right, and each scorer's agreement and false accepts."""
    out = []
    for source in [*sorted({r["source"] for r in rows}), "all"]:
        picked = [i for i, r in enumerate(rows) if source in ("all", r["source"])]
        line: dict = {"source": source, "rows": len(picked), "right": sum(rows[i]["correct"] for i in picked),
                      "adjudicated": sum(bool(rows[i]["adjudicated"]) for i in picked)}
        for scorer, got in verdicts.items():
            agree = sum(got[i] == rows[i]["correct"] for i in picked)
            line[scorer] = {"agree": agree, "share": agree / len(picked),
                            "false_accepts": sum(got[i] and not rows[i]["correct"] for i in picked)}
        out.append(line)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--misses", choices=SCORERS, help="print the rows where this scorer disagrees")
    args = parser.parse_args()
    rows = load_rows()
    context = multiprocessing.get_context("spawn")
    verdicts = {}
    for scorer in SCORERS:
        with context.Pool(1) as pool:
            verdicts[scorer] = pool.apply(accepts, (scorer, rows))
    result = table(rows, verdicts)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print("| source | rows | labelled right | " + " | ".join(f"{s} agrees | {s} false accepts" for s in SCORERS)
              + " |")
        print("| --- | ---: | ---: | " + " | ".join("---: | ---:" for _ in SCORERS) + " |")
        for line in result:
            cells = [f"{line[s]['agree']:,} ({100 * line[s]['share']:.1f} %) | {line[s]['false_accepts']}"
                     for s in SCORERS]
            print(f"| {line['source']} | {line['rows']:,} | {line['right']:,} | " + " | ".join(cells) + " |")
    if args.misses:
        got = verdicts[args.misses]
        print(Counter(r["source"] for r, g in zip(rows, got, strict=True) if g != r["correct"]))
        for r, g in zip(rows, got, strict=True):
            if g != r["correct"]:
                print(f"--- {r['id']} gold={r['gold']!r} label={r['correct']} got={g}\n{r['completion'][-300:]}")


if __name__ == "__main__":
    main()
