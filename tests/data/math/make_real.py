"""Build ``real_completions.jsonl``: completions written by language models, labelled right or wrong by their source.

Run:  python tests/data/math/make_real.py GSM_GIT MR_GIT PRMBENCH_GIT
      (bare clones of openai/grade-school-math, dvlab-research/MR-GSM8K and ssmisya/PRMBench)

Each row: ``source``, ``id`` (where it is in the source), ``gold``, ``completion`` (the model's text as the source
stores it; step lists joined by newlines), ``correct`` (the final-answer label as the source gives it),
``label_by`` (who gave it), ``adjudicated`` (empty, or why the source's label was changed by hand; see
ADJUDICATED).  No label comes from this project's reward, math-verify or TRL.

* ``gsm8k-openai`` (MIT): ``grade_school_math/data/example_model_solutions.jsonl``, the GPT-3 6B/175B
  finetuned and verifier-selected solutions to GSM8K's test questions, each with OpenAI's ``is_correct``;
  the gold is the test set's ``#### `` answer.  The first GSM_QUESTIONS questions, all four solutions.
* ``mr-gsm8k`` (MIT): the solutions graded in ``eval_results/gpt4-grading/*.json`` (GSM8K questions and their
  reversed variants, solved by MetaMath-style models; the GPT-4 file is left out, too big for the snapshot),
  ``model_output_answer_correctness`` as the label, the
  gold ``ground_truth_answer``; code (POT) solutions and rows whose gold is not a plain number are left out.
* ``prmbench`` (Apache-2.0): MATH test problems (PRM800K's test split) from ``prm_test_p12_multi_solutions``:
  the PRM800K solution that PRMBench kept as fully correct (human step labels, label True) and QwQ's solution
  with its human annotation (``prm_testp12_qwq_annotations.jsonl``: correct true/false); the gold is the row's
  MATH ``ground_truth``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
GSM_QUESTIONS = 200
ADJUDICATED: dict[str, tuple[bool, str]] = {
    "mr-gsm8k:8df91126-490d-47d1-850f-22642d38ba19": (True, "the final answer 4 is the gold 4; the source's automatic "
                                                       "answer check marked it wrong"),
    "mr-gsm8k:b183157e-5399-4d90-a4e3-b23bb4ba940e": (False, "the final answer 8 is not the gold 20"),
    "prmbench:prm_test_p1_52/prm800k": (False, "the final answer 585000 is not the gold 58,500"),
    "prmbench:prm_test_p2_997/prm800k": (False, "the solution stops before it states a final answer"),
    "prmbench:prm_test_p2_1058/prm800k": (False, "the final answer 9 is not the gold 10"),
    "prmbench:prm_test_p2_1888/prm800k": (False, "the stored answer is corrupted ('11bytes:\\xe2\\x88bytes:\\x9a2' for "
                                                 "11√2): as stored it states no value"),
    "prmbench:prm_test_p2_2562/prm800k": (False, "0.0286 is neither the gold 448/15625 = 0.028672 nor its rounding"),
    "prmbench:prm_test_p2_2576/prm800k": (False, "the final answer -10 is not the gold 10 (the area decreases by 10 %)"),
}
"""Rows whose source label was changed by hand after reading the completion: source:id -> (label, why)."""


def _git(git_dir: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", git_dir, *args], check=True, text=True, capture_output=True).stdout


def _row(source: str, commit: str, ident: str, gold: str, completion: str, correct: bool, by: str) -> dict:
    label, why = ADJUDICATED.get(f"{source}:{ident}", (correct, ""))
    return {"source": source, "id": f"{commit[:12]}:{ident}", "gold": gold, "completion": completion,
            "correct": label, "label_by": by, "adjudicated": why}


def gsm8k_openai(git_dir: str) -> list[dict]:
    commit = _git(git_dir, "rev-parse", "HEAD").strip()
    tests = [json.loads(line) for line in _git(git_dir, "show", "HEAD:grade_school_math/data/test.jsonl").splitlines()]
    solutions = _git(git_dir, "show", "HEAD:grade_school_math/data/example_model_solutions.jsonl").splitlines()
    rows = []
    for n, (test, line) in enumerate(zip(tests[:GSM_QUESTIONS], solutions, strict=False)):
        item = json.loads(line)
        assert item["question"] == test["question"]
        gold = test["answer"].rsplit("####", 1)[1].strip().replace(",", "")
        for model in ("6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification"):
            rows.append(_row("gsm8k-openai", commit, f"{n}/{model}", gold, item[model]["solution"],
                             item[model]["is_correct"], "OpenAI is_correct"))
    return rows


def mr_gsm8k(git_dir: str) -> list[dict]:
    commit = _git(git_dir, "rev-parse", "HEAD").strip()
    files = ["Claude", "GPT3_5", "llama2_70b", "mammoth_70B", "metamath_70B", "wizardmath_70B"]  # GPT4's: too big
    seen: dict[str, dict] = {}
    for name in files:
        for item in json.loads(_git(git_dir, "show", f"HEAD:eval_results/gpt4-grading/{name}_eval_results.json")):
            seen.setdefault(item["uuid"], item)
    rows = []
    for uuid, item in sorted(seen.items()):
        gold = str(item["ground_truth_answer"]).strip()
        if item["question_type"] == "POT" or not re.fullmatch(r"-?\d[\d,]*(?:\.\d+)?", gold):
            continue
        rows.append(_row("mr-gsm8k", commit, uuid, gold.replace(",", ""), "\n".join(item["model_output_steps"]),
                         item["model_output_answer_correctness"] == "correct", "MR-GSM8K answer correctness"))
    return rows


def prmbench(git_dir: str) -> list[dict]:
    commit = _git(git_dir, "rev-parse", "HEAD").strip()
    kept = [json.loads(line) for line in _git(
        git_dir, "show", "HEAD:mr_eval/tasks/prmtest_classified/data/prm_test_p12_multi_solutions.jsonl").splitlines()]
    annotated = [json.loads(line) for line in _git(
        git_dir, "show", "HEAD:mr_annotate/annotation/data/multi_solutions/prm_testp12_qwq_annotations.jsonl",
    ).splitlines()]
    gold_of = {item["idx"]: str(item["ground_truth"]) for item in kept}
    rows = []
    for item in kept:
        steps = item["original_process"]
        rows.append(_row("prmbench", commit, f"{item['idx']}/prm800k", gold_of[item["idx"]],
                         "\n".join(steps if isinstance(steps, list) else json.loads(steps)), True,
                         "PRM800K human step labels (kept as correct by PRMBench)"))
    for item in annotated:
        custom = item["custom"]
        rows.append(_row("prmbench", commit, f"{custom['idx']}/qwq", str(custom["ground_truth"]),
                         custom["original_response"],
                         item["evaluation"]["conversation_evaluation"]["correct"] == "true",
                         "PRMBench human annotation"))
    return rows


def main(gsm: str, mr: str, prm: str) -> None:
    rows = gsm8k_openai(gsm) + mr_gsm8k(mr) + prmbench(prm)
    with open(HERE / "real_completions.jsonl", "w") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(len(rows), "rows")


if __name__ == "__main__":
    main(*sys.argv[1:4])
