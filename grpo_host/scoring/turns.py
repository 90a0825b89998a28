"""Per-turn reward values, and the one rule that makes a number per rollout of them.

A reward declared ``per_turn`` (and an environment whose ``reward`` is)
scores each assistant turn of a rollout: a turn is an assistant message
with the tool results that answer it, as :attr:`Trajectory.by_turn
<grpo_host.scoring.trajectory.Trajectory.by_turn>` cuts a trajectory.  Its
**episode value** is the value it gives beside its turns
(``Scored(value, turns=...)``), else the sum of its turn values.

TRL's ``GRPOTrainer`` (``_calculate_rewards``: one column per reward
function, one float per completion) and mlx-lm-lora's GRPO trainer both
take one reward per completion and spread its advantage over every token,
so neither can be handed per-turn values.  For them a run's
``turn_reward`` (:class:`TurnRule`) names how the turns make one number;
the ensemble applies it to every per-turn member and the environment
session to its own reward, so both backends train on the same number:

* ``episode`` (the default): the reward's episode value: what a reward
  without turns gives today, and, for one that gives only turns, their sum;
* ``sum``: the sum of the turn values (turns without a value left out);
* ``discounted:GAMMA``: the discounted return from the first turn,
  ``sum(GAMMA**t * r_t)`` over turns ``t = 0, 1, ...`` (0 < GAMMA <= 1), which
  pays a sub-goal reached early more than the same one reached late.

This follows verl's multi-turn interactions, whose per-turn scores reach the
sequence's reward function, which reduces them to the one score placed on
the response's last token; verifiers' rubrics score a whole rollout's
state the same way.  A rollout none of whose turns has a value gets none
(None), as any reward that does not apply.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["TurnRule"]


@dataclass(frozen=True)
class TurnRule:
    """How a per-turn reward's values become the one number a trainer takes (see the module docstring)."""

    kind: Literal["episode", "sum", "discounted"] = "episode"
    gamma: float = 1.0

    @classmethod
    def parse(cls, text: str | TurnRule) -> TurnRule:
        """``episode``, ``sum`` or ``discounted:GAMMA``; a :class:`ValueError` says what is accepted."""
        if isinstance(text, TurnRule):
            return text
        if text == "episode":
            return cls()
        if text == "sum":
            return cls("sum")
        head, sep, tail = str(text).partition(":")
        if head == "discounted" and sep:
            try:
                gamma = float(tail)
            except ValueError:
                gamma = math.nan
            if 0 < gamma <= 1:
                return cls("discounted", gamma)
        raise ValueError(f"turn_reward must be episode, sum or discounted:GAMMA with 0 < GAMMA <= 1, not {text!r}")

    def __str__(self) -> str:
        return f"discounted:{self.gamma:g}" if self.kind == "discounted" else self.kind

    def combine(self, episode: float | None, turns: Sequence[float | None] | None) -> float | None:
        """The value trained on: ``episode`` for a reward without turns (``turns`` None), else by the rule."""
        if turns is None or self.kind == "episode":
            return episode
        weighted = [(self.gamma ** t if self.kind == "discounted" else 1.0) * v
                    for t, v in enumerate(turns) if v is not None]
        return math.fsum(weighted) if weighted else None
