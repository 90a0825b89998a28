"""The ifbench reward against IFBench's own published verdicts on its sample responses.

AllenAI's IFBench repository publishes, beside its test prompts
(``data/IFBench_test.jsonl``), a model's responses (``data/sample_output.jsonl``)
and the verdicts its reference evaluation gave them
(``eval/eval_results_strict.jsonl``, ``eval/eval_results_loose.jsonl``).
``tests/data/ifbench/published.jsonl`` holds those, one line per evaluated
prompt (its key, instruction ids, non-null arguments, the response and the
reference's strict and loose verdicts); ``--write-data --ifbench DIR`` writes
it again from a checkout of allenai/IFBench.  This script scores every
response with the reward's own checkers, strict and loose, and reports the
agreement per instruction and per prompt (all followed), the instructions
the reward refuses (and why), and the seconds per pass.

    python benchmarks/ifeval_ifbench.py [--write-data --ifbench /path/to/IFBench]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

PUBLISHED = Path(__file__).resolve().parent.parent / "tests" / "data" / "ifbench" / "published.jsonl"
REPEATS = 3
"""Timed passes over the responses; the first (imports, NLTK's data) is not timed."""


def write_data(root: Path) -> None:
    """Pair IFBench's test rows, sample responses and published verdicts (matched by prompt, as its evaluation
    matches them: exactly, else without surrounding white space) into :data:`PUBLISHED`."""
    def lines(name: str) -> list[dict]:
        return [json.loads(line) for line in (root / name).read_text().splitlines() if line.strip()]

    tests = {row["prompt"].strip(): row for row in lines("data/IFBench_test.jsonl")}
    responses = {row["prompt"]: row["response"] for row in lines("data/sample_output.jsonl")}
    loose = {row["prompt"]: row for row in lines("eval/eval_results_loose.jsonl")}
    kept = skipped = 0
    with PUBLISHED.open("w") as out:
        for strict in lines("eval/eval_results_strict.jsonl"):
            row = tests.get(strict["prompt"].strip())
            if row is None or strict["prompt"] not in responses:  # a published line whose prompt is no test prompt
                skipped += 1
                continue
            out.write(json.dumps({
                "key": row["key"], "instruction_id_list": row["instruction_id_list"],
                "kwargs": [{k: v for k, v in kw.items() if v is not None} for kw in row["kwargs"]],
                "response": responses[strict["prompt"]],
                "strict": strict["follow_instruction_list"],
                "loose": loose[strict["prompt"]]["follow_instruction_list"]}) + "\n")
            kept += 1
    print(f"wrote {kept} rows to {PUBLISHED} ({skipped} published lines matched no test prompt)", file=sys.stderr)


def one_pass(rows: list[dict]) -> tuple[dict[str, dict[str, list[bool]]], dict[str, str]]:
    """Our strict and loose verdicts per row key (refused rows left out), and the refusals."""
    from reward_plugins.ifeval.rewards import InstructionProblem, build_checkers, follows

    ours, refused = {}, {}
    for row in rows:
        try:
            checkers = build_checkers(row["instruction_id_list"], row["kwargs"], "ifbench")
        except InstructionProblem as exc:
            refused[row["key"]] = str(exc)
            continue
        ours[row["key"]] = {mode: follows(checkers, row["response"], mode, "ifbench") for mode in ("strict", "loose")}
    return ours, refused


def compare(rows: list[dict], ours: dict, refused: dict[str, str]) -> dict:
    """Agreement over the rows the reward judges; the refused rows' instructions are listed apart."""
    judged = [row for row in rows if row["key"] in ours]
    count = sum(len(r["instruction_id_list"]) for r in judged)
    report: dict = {"rows": len(rows), "instructions": sum(len(r["instruction_id_list"]) for r in rows),
                    "judged_rows": len(judged), "judged_instructions": count,
                    "refused": {key: {"ids": next(r["instruction_id_list"] for r in rows if r["key"] == key),
                                      "why": why} for key, why in refused.items()}}
    for mode in ("strict", "loose"):
        pairs = [(row, i, a, b) for row in judged
                 for i, (a, b) in enumerate(zip(row[mode], ours[row["key"]][mode], strict=True))]
        prompts = sum(all(row[mode]) == all(ours[row["key"]][mode]) for row in judged)
        report[mode] = {
            "instruction_agreement": f"{sum(a == b for _, _, a, b in pairs)} / {count}",
            "prompt_agreement": f"{prompts} / {len(judged)}",
            "reference_instruction_accuracy": sum(a for _, _, a, _ in pairs) / count,
            "disagreements": [{"key": row["key"], "instruction": row["instruction_id_list"][i], "reference": a,
                               "ours": b} for row, i, a, b in pairs if a != b],
        }
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ifbench", type=Path, help="a checkout of allenai/IFBench (for --write-data)")
    parser.add_argument("--write-data", action="store_true", help="write tests/data/ifbench/published.jsonl anew")
    args = parser.parse_args()
    if args.write_data:
        if args.ifbench is None:
            parser.error("--write-data needs --ifbench DIR")
        write_data(args.ifbench)
    rows = [json.loads(line) for line in PUBLISHED.read_text().splitlines()]
    best = float("inf")
    for round_ in range(REPEATS + 1):
        start = time.process_time()
        ours, refused = one_pass(rows)
        if round_:
            best = min(best, time.process_time() - start)
    report = compare(rows, ours, refused)
    report["cpu_seconds_per_pass"] = round(best, 3)
    report["machine"] = f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, Python {sys.version.split()[0]}"
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
