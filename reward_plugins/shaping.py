"""Shaping penalties the GRPO recipes add beside correctness: overlong and repetition.

* ``overlong`` is DAPO's soft overlong punishment (TRL ships it as
  ``get_soft_overlong_punishment``): no penalty up to ``max_length - cache``,
  then a linear ramp to -1 at ``max_length``.
* ``repetition`` is the n-gram repetition penalty of open-r1 (after Yeo et
  al., "Demystifying Long Chain-of-Thought Reasoning"): the share of repeated
  word n-grams, scaled to ``max_penalty``.

Both are pure arithmetic on the completion, so they run inline.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from grpo_host import hookimpl, reward


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


@hookimpl
def register_rewards(register):
    register(overlong)
    register(repetition)
