"""The language reward: its detector on labelled sentences, the share rule, where the expected language comes from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import data_check_problems, write_jsonl

from grpo_host import get_reward

LABELLED = Path(__file__).parent / "data" / "language" / "lingua_testdata_20x100.jsonl"


def language(completion: str, prompt=None, **kw) -> float | None:
    params = {k: kw.pop(k) for k in ("part", "min_letters") if k in kw}
    if "expected" in kw:
        params["language"] = kw.pop("expected")
    return get_reward("language").bind(params).score_one(completion, prompt, **kw)


def test_labelled_sentences_in_20_languages_score_as_their_language():
    """Lingua's Wortschatz test sentences (20 languages, 50 each): benchmarks/language.py measured 98.3 %."""
    rows = [json.loads(line) for line in LABELLED.read_text(encoding="utf-8").splitlines()]
    sentences = [r for r in rows if r["kind"] == "sentence"]
    scores = [language(r["text"], language=r["language"]) for r in sentences]
    assert sum(s == 1.0 for s in scores) / len(sentences) >= 0.97


def test_the_share_is_by_letters_of_sentences_in_the_expected_language():
    english = "This sentence is clearly written in English."  # 37 letters
    chinese = "这个句子是用中文写的，没有别的语言。"  # 16 letters (CJK characters are letters)
    assert language(f"{english}\n{chinese}", language="en") == pytest.approx(37 / 53)
    assert language(f"{english}\n{chinese}", language="zh") == pytest.approx(16 / 53)
    assert language(f"<think>{english}</think>{chinese}", language="zh", part="answer") == 1.0
    assert language(f"<think>{english}</think>{chinese}", language="zh", part="reasoning") == 0.0


def test_short_sentences_weigh_nothing_unless_all_are_short():
    text = "Das ist ein ganz normaler deutscher Satz über das Wetter. OK."
    assert language(text, language="de") == 1.0  # "OK." has 2 letters: not judged
    assert language("Bonjour à tous. Merci.", language="fr", min_letters=20) == 1.0  # all short: judged whole
    assert language("42 + 17 = 59", language="en") is None  # no letters: nothing to judge


def test_the_expected_language_comes_from_the_parameter_the_column_or_the_prompt():
    spanish = "La respuesta correcta es cuarenta y dos, sin ninguna duda."
    assert language(spanish, language="es-MX") == 1.0
    assert language(spanish, expected="es", language="fr") == 1.0  # the parameter wins over the column
    chat = [{"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "¿Cuál es la respuesta a la gran pregunta de la vida?"}]
    assert language(spanish, chat) == 1.0
    assert language(spanish, "What is the answer to the great question of life?") == 0.0
    assert language(spanish) is None  # no prompt, no column, no parameter: not applicable


def test_bad_codes_are_refused_naming_the_row_or_the_parameter(tmp_path):
    with pytest.raises(ValueError, match="not one the detector knows"):
        get_reward("language").bind({"language": "qq"})
    rows = [{"prompt": "p", "language": "fr"}, {"prompt": "p", "language": "French"}, {"prompt": "p"},
            {"prompt": "p", "language": "qq"}]
    problems = data_check_problems(write_jsonl(tmp_path / "rows.jsonl", rows), "language")
    assert sorted(problems) == ["line 2", "line 4"]
    assert "ISO 639 code" in problems["line 2"] and "not one the detector knows" in problems["line 4"]


def test_hostile_text_scores_in_range_or_none():
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    reward = get_reward("language")

    @settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.text(max_size=300), st.sampled_from(["all", "reasoning", "answer"]))
    def check(text, part):
        value = reward.bind({"part": part, "language": "en"}).score_one(text)
        assert value is None or 0.0 <= value <= 1.0

    check()
