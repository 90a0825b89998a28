"""The ifeval reward: agreement with google-research's reference verdicts, strict and loose, and its data checks.

``tests/data/ifeval/reference_verdicts.jsonl`` holds what the reference
implementation (google-research's instruction_following_eval, run by
benchmarks/ifeval.py) decided for every instruction of IFEval's published
GPT-4 responses; the reward's own checkers must decide the same.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import data_check_problems, write_jsonl

from grpo_host import Ensemble, get_reward

DATA = Path(__file__).parent / "data" / "ifeval"


def published_rows() -> list[dict]:
    inputs = [json.loads(line) for line in (DATA / "input_data.jsonl").read_text().splitlines()]
    responses = dict(json.loads(line).values() for line in
                     (DATA / "input_response_data_gpt4_20231107_145030.jsonl").read_text().splitlines())
    return [{**row, "completion": responses[row["prompt"]]} for row in inputs]


@pytest.mark.slow
def test_every_verdict_agrees_with_the_reference_on_the_published_responses():
    from reward_plugins.ifeval.rewards import build_checkers, follows

    reference = {v["key"]: v for v in map(json.loads, (DATA / "reference_verdicts.jsonl").read_text().splitlines())}
    rows = [row for row in published_rows() if row["key"] in reference]
    assert len(rows) == 539  # 541 prompts, less IFEval's two rows whose "letter" the reference replaces at random
    for mode in ("strict", "loose"):
        ours = {row["key"]: follows(build_checkers(row["instruction_id_list"], row["kwargs"]), row["completion"], mode)
                for row in rows}
        assert ours == {key: reference[key][mode] for key in ours}, mode


def ifeval(completion: str, ids: list[str], kwargs: list[dict], **params) -> float | None:
    return get_reward("ifeval").bind(params).score_one(completion, instruction_id_list=ids, kwargs=kwargs)


def test_share_all_strict_loose_and_reasoning():
    ids, kwargs = ["change_case:english_lowercase", "punctuation:no_comma", "startend:quotation"], [{}, {}, {}]
    assert ifeval('"all lowercase, with a comma"', ids, kwargs) == pytest.approx(2 / 3)
    assert ifeval('"all lowercase, with a comma"', ids, kwargs, aggregate="all") == 0.0
    assert ifeval('**"quoted"**', ["startend:quotation"], [{}]) == 0.0
    assert ifeval('**"quoted"**', ["startend:quotation"], [{}], mode="loose") == 1.0
    assert ifeval('Sure:\n"quoted"', ["startend:quotation"], [{}], mode="loose") == 1.0  # first line dropped
    thinking = "<think>Should I, or not?</think>no commas"
    assert ifeval(thinking, ["punctuation:no_comma"], [{}]) == 1.0
    assert ifeval(thinking, ["punctuation:no_comma"], [{}], strip_reasoning=False) == 0.0
    assert ifeval("<think>never finished, no answer", ["punctuation:no_comma"], [{}]) == 0.0  # nothing answered
    assert ifeval("   ", ["punctuation:no_comma"], [{}], mode="loose") == 0.0  # an empty answer follows nothing


def test_google_ifeval_rows_with_null_arguments_score():
    """The google/IFEval dataset gives every argument of every instruction, unused ones as null."""
    nulls = dict.fromkeys(["num_words", "relation", "keywords", "letter", "language", "end_phrase"])
    kwargs = [{**nulls, "relation": "at least", "num_words": 3}, nulls]
    assert ifeval("one two three", ["length_constraints:number_words", "punctuation:no_comma"], kwargs) == 1.0


def test_language_checks_are_deterministic():
    """langdetect samples; with its seed fixed one ambiguous text always gets one verdict."""
    scores = {ifeval("casa mia", ["language:response_language"], [{"language": "pt"}]) for _ in range(20)}
    assert len(scores) == 1


BAD_ROWS = [  # (instruction_id_list, kwargs, what data check says)
    (["punctuation:no_commas"], [{}], "instruction 0 ('punctuation:no_commas'): unknown instruction id"),
    (["length_constraints:number_words"], [{"num_words": 5}], "missing arguments ['relation']"),
    (["punctuation:no_comma"], [{"num_words": 5}], "unknown arguments ['num_words']"),
    (["length_constraints:number_words"], [{"num_words": "five", "relation": "at least"}],
     "argument 'num_words' must be a whole number"),
    (["keywords:existence"], [{"keywords": "cat"}], "argument 'keywords' must be a list of strings"),
    (["keywords:existence"], [{"keywords": ["(a+)+$"]}], "must be plain text"),
    (["keywords:letter_frequency"], [{"letter": "#", "let_frequency": 4, "let_relation": "at least"}],
     "the reference replaces it with a random draw"),
    (["detectable_format:number_bullet_lists"], [{"num_bullets": -1}], "the reference replaces it with a random draw"),
    (["length_constraints:number_words"], [{"num_words": 5, "relation": "about"}], "the checker refuses its arguments"),
    (["language:response_language"], [{"language": "xx"}], "the checker refuses its arguments"),
    (["punctuation:no_comma", "startend:quotation"], [{}], "kwargs must be a list of 2 argument objects"),
    (["punctuation:no_comma"], [[]], "its kwargs must be an object"),
]


def test_data_check_names_the_row_and_instruction_of_every_bad_row(tmp_path):
    good = {"prompt": "p", "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}
    rows = [good] + [{"prompt": "p", "instruction_id_list": ids, "kwargs": kw} for ids, kw, _ in BAD_ROWS] + [good]
    problems = data_check_problems(write_jsonl(tmp_path / "rows.jsonl", rows), "ifeval")
    assert sorted(problems) == sorted(f"line {i}" for i in range(2, len(BAD_ROWS) + 2))
    for i, (_, _, needle) in enumerate(BAD_ROWS, 2):
        assert needle in problems[f"line {i}"], (i, problems[f"line {i}"])


@pytest.mark.slow
def test_in_an_ensemble_a_bad_row_is_an_error_naming_it_and_the_rest_score():
    rows = [{"completion": "no commas", "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]},
            {"completion": "x", "instruction_id_list": ["punctuation:no_commas"], "kwargs": [{}]},
            {"completion": "a, b", "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}]
    with Ensemble.from_spec("ifeval") as ensemble:  # executor="process": the checkers run in a worker
        result = ensemble.score_rows(rows)
    assert result.values["ifeval"] == [1.0, None, 0.0]
    assert result.row_errors.keys() == {1}
    assert "row 1" in result.row_errors[1][0] and "unknown instruction id" in result.row_errors[1][0]
    assert result.metrics["ifeval"].counts == {"instructions": 2.0, "followed": 1.0}


@pytest.mark.slow
def test_a_completion_that_makes_a_checker_quadratic_is_a_counted_timeout():
    """The placeholder checker's `\\[.*?\\]` is quadratic in a line of `[`: the worker's hard timeout ends it."""
    rows = [{"completion": "[" * 300_000, "instruction_id_list": ["detectable_content:number_placeholders"],
             "kwargs": [{"num_placeholders": 1}]},
            {"completion": "[a] and [b]", "instruction_id_list": ["detectable_content:number_placeholders"],
             "kwargs": [{"num_placeholders": 2}]}]
    with Ensemble.from_spec("ifeval [timeout=3]") as ensemble:  # the hostile line alone would take minutes
        ensemble.score_rows([rows[1]] * 8)  # every worker warm: the checkers' first import is not the item's time
        result = ensemble.score_rows(rows)
    assert result.values["ifeval"] == [None, 1.0]
    assert result.metrics["ifeval"].timeouts == 1


@pytest.mark.slow
def test_a_timeout_during_the_first_import_leaves_the_worker_usable():
    """Under a timeout shorter than importing the checkers, items time out, and never fail with a module the alarm
    left half-imported (which would fail every later item in that worker)."""
    row = {"completion": "[a]", "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}
    with Ensemble.from_spec("ifeval [timeout=0.05]") as ensemble:
        for _ in range(2):
            result = ensemble.score_rows([row, row])
            assert result.errors == [], result.errors


EVERY_INSTRUCTION = {  # one valid argument set per IFEval instruction type
    "change_case:capital_word_frequency": {"capital_frequency": 2, "capital_relation": "at least"},
    "change_case:english_capital": {}, "change_case:english_lowercase": {},
    "combination:repeat_prompt": {"prompt_to_repeat": "Say hi."}, "combination:two_responses": {},
    "detectable_content:number_placeholders": {"num_placeholders": 1},
    "detectable_content:postscript": {"postscript_marker": "P.S."},
    "detectable_format:constrained_response": {}, "detectable_format:json_format": {},
    "detectable_format:multiple_sections": {"section_spliter": "Section", "num_sections": 2},
    "detectable_format:number_bullet_lists": {"num_bullets": 2},
    "detectable_format:number_highlighted_sections": {"num_highlights": 1}, "detectable_format:title": {},
    "keywords:existence": {"keywords": ["cat"]}, "keywords:forbidden_words": {"forbidden_words": ["dog"]},
    "keywords:frequency": {"keyword": "cat", "frequency": 2, "relation": "less than"},
    "keywords:letter_frequency": {"letter": "a", "let_frequency": 3, "let_relation": "at least"},
    "language:response_language": {"language": "en"},
    "length_constraints:nth_paragraph_first_word": {"num_paragraphs": 2, "nth_paragraph": 1, "first_word": "hi"},
    "length_constraints:number_paragraphs": {"num_paragraphs": 2},
    "length_constraints:number_sentences": {"num_sentences": 3, "relation": "less than"},
    "length_constraints:number_words": {"num_words": 10, "relation": "at least"},
    "punctuation:no_comma": {}, "startend:end_checker": {"end_phrase": "Bye."}, "startend:quotation": {},
}


@pytest.mark.slow
def test_every_instruction_type_is_covered_and_hostile_text_scores_in_range():
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from reward_plugins.ifeval.rewards import _library

    assert set(EVERY_INSTRUCTION) == set(_library()[0])
    ids, kwargs = list(EVERY_INSTRUCTION), list(EVERY_INSTRUCTION.values())
    reward = get_reward("ifeval")
    pieces = st.sampled_from(["<think>", "</think>", "\n", "\n\n", "***", "*", "**", "[x]", "<<t>>", "P.S.", '"', "{",
                              "}", ",", "Section 1", "* item", "******", "cat", "ÄÖ", "\u202e", "\x00", "Bye."])

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.one_of(st.text(max_size=200), st.lists(pieces, max_size=40).map("".join)))
    def check(text):
        for mode in ("strict", "loose"):
            value = reward.bind({"mode": mode}).score_one(text, instruction_id_list=ids, kwargs=kwargs)
            assert 0.0 <= value <= 1.0

    check()
