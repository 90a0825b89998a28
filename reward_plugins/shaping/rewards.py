"""Shaping rewards the GRPO recipes add beside correctness: overlong, repetition, and length against correctness.

* ``overlong`` is DAPO's soft overlong punishment (TRL ships it as
  ``get_soft_overlong_punishment``): no penalty up to ``max_length - cache``,
  then a linear ramp to -1 at ``max_length``.
* ``repetition`` is the n-gram repetition penalty of open-r1 (after Yeo et
  al., "Demystifying Long Chain-of-Thought Reasoning"): the share of repeated
  word n-grams, scaled to ``max_penalty``.
* ``cosine`` is open-r1's cosine-scaled reward (``get_cosine_scaled_reward``
  in open-r1's ``src/open_r1/rewards.py``; Yeo et al., appendix C.1): a
  correct completion earns from ``max_value_correct`` (short) down to
  ``min_value_correct`` (at ``max_len``) along a half cosine, a wrong one from
  ``min_value_wrong`` (short) up to ``max_value_wrong`` (long).
* ``length`` is Kimi 1.5's length reward (open-r1's ``len_reward``): within
  a group of completions of one prompt, ``lambda = 0.5 - (L - min) / (max - min)``,
  paid as it is to a correct completion and as ``min(0, lambda)`` to a wrong one.

The last two need to know whether the completion is correct.  The ensemble
scores its members independently (no member reads another's value), so
each takes the *name* of the correctness reward (``correctness``, default
``math``, with its own ``correctness_params``) and runs that reward itself,
from the registry, on the same row: ``"math:0, cosine(correctness=math)"``
logs the correctness next to the shaped reward, and lets ``data check`` see
the columns the correctness reward needs.  A correctness value of None (a
gold that does not parse) makes the shaped value None too, where open-r1
pays 1.0.  ``cosine`` runs in a worker process, so a correctness reward such
as ``math`` keeps its hard per-item timeout; ``length`` sees a whole batch
and scores correctness through an ensemble of its own, with the same
executors and timeouts.

Lengths are completion tokens (``completion_ids``, which the trainers pass)
unless ``unit=chars``; with tokens and no ids (offline text), the value is
None: not applicable.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from grpo_host import hookimpl, reward, uninterrupted


class OverlongParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_length: int = Field(1024, gt=0, description="the hard limit L_max: set it to the run's max_completion_length")
    cache: int = Field(256, ge=0, description="the soft band L_cache before max_length where the penalty ramps up")
    unit: Literal["tokens", "chars"] = Field(
        "tokens", description="count completion tokens (completion_ids, passed by the trainers) or characters"
    )

    @model_validator(mode="after")
    def _cache_fits(self) -> OverlongParams:
        if self.cache > self.max_length:
            raise ValueError(f"cache ({self.cache}) must not exceed max_length ({self.max_length})")
        return self


@reward(
    name="overlong",
    params=OverlongParams,
    examples=[
        {"completion": "x" * 700, "completion_ids": list(range(700)), "score": 0.0},
        {"completion": "x" * 900, "completion_ids": list(range(900)), "score": -0.515625},
        {"completion": "x" * 1100, "completion_ids": list(range(1100)), "score": -1.0},
    ],
)
def overlong(completion: str, *, params: OverlongParams, completion_ids=None, **_) -> float | None:
    """DAPO soft overlong punishment on the completion length L (tokens by default): 0.0 when
    L <= max_length - cache; (max_length - cache - L) / cache when max_length - cache < L <= max_length
    (a ramp from 0 down to -1); -1.0 when L > max_length.  With unit=tokens and no completion_ids
    (offline scoring of text), None: not applicable."""
    if params.unit == "tokens":
        if completion_ids is None:
            return None
        length = len(completion_ids)
    else:
        length = len(completion)
    free = params.max_length - params.cache
    if length <= free:
        return 0.0
    if length <= params.max_length:
        return (free - length) / params.cache
    return -1.0


class RepetitionParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ngram_size: int = Field(3, ge=1, description="words per n-gram")
    max_penalty: float = Field(-1.0, le=0, description="the penalty when every n-gram is a repeat (<= 0)")


@reward(
    name="repetition",
    params=RepetitionParams,
    examples=[
        {"completion": "the cat sat on the mat", "score": 0.0},
        {"completion": "I think so. I think so. I think so. I think so.", "score": -0.7},
    ],
)
def repetition(completion: str, *, params: RepetitionParams, **_) -> float:
    """max_penalty * (1 - distinct / total) over the completion's word n-grams (lower-cased, split on
    whitespace); 0.0 when the completion has fewer words than ngram_size."""
    words = completion.lower().split()
    n = params.ngram_size
    total = len(words) - n + 1
    if total <= 0:
        return 0.0
    distinct = len({tuple(words[i : i + n]) for i in range(total)})
    return params.max_penalty * (1 - distinct / total) + 0.0  # + 0.0: no "-0.0" for a clean completion


Unit = Literal["tokens", "chars"]
SHAPED = frozenset({"cosine", "length"})
"""The rewards here that run a correctness reward: none of them can be one."""


def _length(completion: str, completion_ids: Any, unit: str) -> int | None:
    """The completion's length in tokens (None without ``completion_ids``) or characters."""
    if unit == "chars":
        return len(completion)
    return None if completion_ids is None else len(completion_ids)


class CorrectnessParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    correctness: str = Field("math", description="the reward that decides whether a completion is correct, run by "
                                                 "this one on the same row (its value >= correct_at)")
    correctness_params: dict[str, Any] = Field(default_factory=dict, description="parameters of that reward")
    correct_at: float = Field(1.0, description="the correctness value from which a completion counts as correct")
    unit: Unit = Field("tokens", description="count completion tokens (completion_ids) or characters")

    @field_validator("correctness")
    @classmethod
    def _not_shaped(cls, name: str) -> str:
        if name in SHAPED:
            raise ValueError(f"correctness={name!r} is itself a length-shaped reward; name the reward that decides "
                             "correctness, such as math or accuracy")
        return name

    @model_validator(mode="after")
    def _resolves(self) -> CorrectnessParams:
        try:  # an unknown name or bad parameters are found when the spec is read, not on the first row
            correctness_reward(self.correctness, _key(self.correctness_params))
        except KeyError as exc:  # the registry's unknown-name error, which lists the names there are
            raise ValueError(str(exc)) from None
        return self


def _key(params: Mapping[str, Any]) -> str:
    return json.dumps(params, sort_keys=True, default=str)


@functools.cache
def correctness_reward(name: str, params: str) -> Any:
    """The registered reward ``name`` bound to ``params`` (JSON), looked up once per process."""
    from grpo_host import get_reward

    with uninterrupted():  # in a worker, the first look-up loads every pack: an alarm must not cut that short
        return get_reward(name).bind(json.loads(params))


class CosineParams(CorrectnessParams):
    min_value_wrong: float = Field(-1.0, description="a wrong completion's reward at length 0")
    max_value_wrong: float = Field(-0.5, description="a wrong completion's reward at max_len and beyond")
    min_value_correct: float = Field(0.5, description="a correct completion's reward at max_len and beyond")
    max_value_correct: float = Field(1.0, description="a correct completion's reward at length 0")
    max_len: int = Field(1000, gt=0, description="the length L_max where the half cosine ends")


def cosine_value(length: int, correct: bool, params: CosineParams) -> float:
    """open-r1's formula, with progress clamped at 1 as TRL's port clamps it (cos is periodic: unclamped, a
    completion of twice max_len would earn as much as an empty one)."""
    progress = min(length / params.max_len, 1.0)
    if correct:
        low, high = params.min_value_correct, params.max_value_correct
    else:  # the bounds swap: a short wrong completion is penalised most
        low, high = params.max_value_wrong, params.min_value_wrong
    return low + 0.5 * (high - low) * (1.0 + math.cos(progress * math.pi))


@reward(
    name="cosine",
    params=CosineParams,
    executor="process",
    examples=[
        {"completion": "\\boxed{4}", "answer": "4", "completion_ids": [0] * 250, "score": 0.5 + 0.25 * (1 + 2**-0.5)},
        {"completion": "\\boxed{5}", "answer": "4", "completion_ids": [0] * 250, "score": -0.5 - 0.25 * (1 + 2**-0.5)},
        {"completion": "\\boxed{4}", "answer": "4", "completion_ids": [0] * 4000, "score": 0.5},
        {"completion": "\\boxed{4}", "answer": "4", "score": None},
    ],
)
def cosine(completion: str, *, params: CosineParams, prompt: Any = None, completion_ids: Any = None,
           **columns: Any) -> float | None:
    """open-r1's cosine-scaled reward: with p = min(L / max_len, 1) (L in tokens, or chars with unit=chars), a
    correct completion (the correctness reward's value >= correct_at) earns min_value_correct + (max_value_correct -
    min_value_correct) * (1 + cos(p * pi)) / 2, a wrong one max_value_wrong + (min_value_wrong - max_value_wrong) *
    (1 + cos(p * pi)) / 2.  None when the correctness reward gives None, or unit=tokens without completion_ids."""
    length = _length(completion, completion_ids, params.unit)
    if length is None:
        return None
    judge = correctness_reward(params.correctness, _key(params.correctness_params))
    extra = {} if completion_ids is None else {"completion_ids": completion_ids}
    verdict = judge.score_one(completion, prompt, **columns, **extra)
    return None if verdict is None else cosine_value(length, verdict >= params.correct_at, params)


class LengthParams(CorrectnessParams):
    timeout: float = Field(30.0, gt=0, description="seconds per item for the correctness reward")


@functools.cache
def _judging(name: str, params: str, timeout: float) -> Any:
    """An ensemble of the correctness reward alone, kept per process: its executors and timeouts apply."""
    from grpo_host import Ensemble

    return Ensemble.from_spec([{"name": name, "params": json.loads(params), "on_error": "skip",
                                "timeout": timeout}])


def kimi_lengths(lengths: Sequence[int], correct: Sequence[bool]) -> list[float]:
    """Kimi 1.5's length reward over one group: 0.0 for all when every length is the same."""
    short, long = min(lengths), max(lengths)
    if short == long:
        return [0.0] * len(lengths)
    out = []
    for length, right in zip(lengths, correct, strict=False):
        lam = 0.5 - (length - short) / (long - short)
        out.append(lam if right else min(0.0, lam))
    return out


@reward(
    name="length",
    params=LengthParams,
    batch=True,
    examples=[
        {"completion": "\\boxed{4}", "answer": "4", "completion_ids": [0] * 100, "score": 0.0},
    ],
)
def length(completions: list[str], *, params: LengthParams, prompts: list[Any], completion_ids: Any = None,
           **columns: Any) -> list[float | None]:
    """Kimi 1.5's length reward within each group (the completions of one prompt in the batch): lambda = 0.5 -
    (L - min L) / (max L - min L), paid to a correct completion (the correctness reward's value >= correct_at) as it
    is and to a wrong one as min(0, lambda); 0.0 for a group whose lengths are all equal.  A completion whose
    correctness is None, or every completion when unit=tokens and there are no completion_ids, gets None."""
    n = len(completions)
    ids = completion_ids if completion_ids is not None else [None] * n
    measured = [_length(c, i, params.unit) for c, i in zip(completions, ids, strict=False)]
    lengths = [length for length in measured if length is not None]
    if len(lengths) < n:
        return [None] * n
    rows = [{"completion": c, "prompt": p, **{k: v[i] for k, v in columns.items()}}
            for i, (c, p) in enumerate(zip(completions, prompts, strict=False))]
    judge = _judging(params.correctness, _key(params.correctness_params), params.timeout)
    verdicts = judge.score_rows(rows, completion_ids=completion_ids).values[params.correctness]
    groups: dict[str, list[int]] = {}
    for i, prompt in enumerate(prompts):
        groups.setdefault(json.dumps(prompt, sort_keys=True, default=str), []).append(i)
    out: list[float | None] = [None] * n
    for members in groups.values():
        judged = [i for i in members if verdicts[i] is not None]
        if judged:
            values = kimi_lengths([lengths[i] for i in judged], [verdicts[i] >= params.correct_at for i in judged])
            for i, value in zip(judged, values, strict=False):
                out[i] = value
    return out


@hookimpl
def register_rewards(register):
    register(overlong)
    register(repetition)
    register(cosine)
    register(length)
