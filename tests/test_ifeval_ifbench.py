"""The ifbench reward: agreement with IFBench's published verdicts, offline NLTK data, and its data checks.

``tests/data/ifbench/published.jsonl`` holds IFBench's sample responses with the
verdicts AllenAI's reference evaluation published for them (see its README); the
reward's checkers must decide the same on every instruction it judges.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import data_check_problems, write_jsonl

from grpo_host import Ensemble, get_reward

PUBLISHED = Path(__file__).parent / "data" / "ifbench" / "published.jsonl"


def ifbench(completion: str, ids: list[str], kwargs: list[dict], **params) -> float | None:
    return get_reward("ifbench").bind(params).score_one(completion, instruction_id_list=ids, kwargs=kwargs)


@pytest.mark.slow
def test_every_judged_verdict_agrees_with_ifbenchs_published_verdicts():
    from reward_plugins.ifeval.rewards import InstructionProblem, build_checkers, follows

    rows = [json.loads(line) for line in PUBLISHED.read_text().splitlines()]
    judged = refused = 0
    for row in rows:
        try:
            checkers = build_checkers(row["instruction_id_list"], row["kwargs"], "ifbench")
        except InstructionProblem as exc:
            assert "words:start_verb" in row["instruction_id_list"] or "'n_start' = 0" in str(exc), str(exc)
            refused += 1
            continue
        for mode in ("strict", "loose"):
            assert follows(checkers, row["response"], mode, "ifbench") == row[mode], (row["key"], mode)
        judged += len(checkers)
    assert (len(rows), refused, judged) == (293, 7, 326)


def test_the_checkers_load_offline_with_the_vendored_stop_words(tmp_path):
    """Importing IFBench's registry asks NLTK for four data packages and downloads those it lacks: with the pack
    nothing is fetched (no socket is opened, watched by an audit hook) and the stop word checker counts."""
    code = """
import sys
opened = []
sys.addaudithook(lambda event, args: opened.append(event) if event.startswith(("socket.", "urllib.")) else None)
from reward_plugins.ifeval.rewards import build_checkers, follows
[checker] = build_checkers(["ratio:stop_words"], [{"percentage": 50}], "ifbench")
print(follows([checker], "the cat and the dog", "strict", "ifbench"),
      follows([checker], "purple elephants dance quietly", "strict", "ifbench"), opened)
"""
    env = {"HOME": str(tmp_path), "GRPO_HOST_CACHE": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["[False]", "[True]", "[]"]  # 60 % stop words is over 50; 0 % is not
    assert not (tmp_path / "nltk_data").exists()


def test_strict_loose_share_and_reasoning():
    ids, kwargs = ["count:numbers", "format:no_whitespace"], [{"N": 2}, {}]
    assert ifbench("I have 2 cats and 3 dogs.", ids, kwargs) == 0.5
    assert ifbench("I have 2 cats and 3 dogs.", ids, kwargs, aggregate="all") == 0.0
    assert ifbench("Sure:\nNoSpacesAt4And5", ["format:no_whitespace"], [{}]) == 0.0
    assert ifbench("Sure:\nNoSpacesAt4And5", ["format:no_whitespace"], [{}], mode="loose") == 1.0  # first line off
    assert ifbench("<think>1 2 3 4</think>just 7", ["count:numbers"], [{"N": 1}]) == 1.0
    assert ifbench("   ", ["format:no_whitespace"], [{}], mode="loose") == 0.0  # an empty answer follows nothing


BAD_ROWS = [
    (["words:start_verb"], [{}], "instruction 0 ('words:start_verb'): cannot be judged offline"),
    (["count:numbers", "words:start_verb"], [{"N": 2}, {}], "instruction 1 ('words:start_verb')"),
    (["count:number"], [{"N": 2}], "did you mean 'count:numbers'?"),
    (["count:numbers"], [{}], "missing arguments ['N']"),
    (["count:numbers"], [{"N": 2.5}], "argument 'N' must be a whole number"),
    (["ratio:stop_words"], [{"percentage": "half"}], "argument 'percentage' must be a number"),
    (["repeat:repeat_span"], [{"prompt_to_repeat": "a b c d", "n_start": 0, "n_end": 2}],
     "'n_start' = 0 is a value the checker does not accept"),
    (["punctuation:no_comma"], [{}], "unknown instruction id"),  # an IFEval id is not an IFBench one
]


def test_data_check_names_the_row_and_the_instruction_it_refuses(tmp_path):
    good = {"prompt": "p", "instruction_id_list": ["count:numbers"], "kwargs": [{"N": 2}]}
    rows = [good] + [{"prompt": "p", "instruction_id_list": ids, "kwargs": kw} for ids, kw, _ in BAD_ROWS] + [good]
    problems = data_check_problems(write_jsonl(tmp_path / "rows.jsonl", rows), "ifbench")
    assert sorted(problems) == sorted(f"line {i}" for i in range(2, len(BAD_ROWS) + 2))
    for i, (_, _, needle) in enumerate(BAD_ROWS, 2):
        assert needle in problems[f"line {i}"], (i, problems[f"line {i}"])


def test_an_argument_the_reference_replaces_is_refused_whatever_the_random_state():
    """IFBench's repeat_span takes n_start=0 for "draw one": a draw from 0..2 for a four-word span, so one build
    can keep the 0 by chance; the row is refused under every random state, and that state is left as it was."""
    import random

    from reward_plugins.ifeval.rewards import InstructionProblem, build_checkers

    for seed in range(12):
        random.seed(seed)
        expected = random.random()
        random.seed(seed)
        with pytest.raises(InstructionProblem, match="'n_start' = 0 is a value the checker does not accept"):
            build_checkers(["repeat:repeat_span"], [{"prompt_to_repeat": "a b c d", "n_start": 0, "n_end": 2}],
                           "ifbench")
        assert random.random() == expected


@pytest.mark.slow
def test_in_an_ensemble_a_refused_row_is_an_error_naming_it_and_the_rest_score():
    rows = [{"completion": "I have 2 cats.", "instruction_id_list": ["count:numbers"], "kwargs": [{"N": 1}]},
            {"completion": "Run home now.", "instruction_id_list": ["words:start_verb"], "kwargs": [{}]},
            {"completion": "no numbers", "instruction_id_list": ["count:numbers"], "kwargs": [{"N": 1}]}]
    with Ensemble.from_spec("ifbench") as ensemble:
        result = ensemble.score_rows(rows)
    assert result.values["ifbench"] == [1.0, None, 0.0]
    assert result.row_errors.keys() == {1}
    assert "row 1" in result.row_errors[1][0] and "words:start_verb" in result.row_errors[1][0]
    assert result.metrics["ifbench"].counts == {"instructions": 2.0, "followed": 1.0}
