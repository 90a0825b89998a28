"""An Atropos ``RewardFunction`` from a grpo-host spec, registered in Atropos's reward registry.

Atropos environments build their rewards from its registry by name and
call ``reward(completions, **context)`` for a group::

    from atroposlib.envs.reward_fns import registry
    from grpo_host.integrations.atropos import register

    register()  # adds "grpo_host" to Atropos's registry (nothing is registered at import)
    reward = registry.create({"type": "grpo_host", "rewards": "math:2, r1_strict_format:0.5"})
    scores = reward(completions, ground_truth=["4", "7"])

A completion is a string, a message or a list of messages (Atropos's shapes;
messages are read as a :class:`grpo_host.Trajectory`).  Context keywords are
columns: a list with one entry per completion is per completion, anything
else is the same for every completion; ``ground_truth`` and ``solution``
(Atropos's names for the gold) are the ``answer`` column.  The group is
checked and scored in one call as ``grpo-host score`` does it
(:mod:`grpo_host.integrations.scorer`).

Atropos's contract is a list of floats: a completion that no reward scored,
or whose row lacks what a reward needs, gets NaN there (never 0.0), with a
warning naming the row, the reward and the column; an environment drops
such a rollout with ``math.isnan``.  ``last_values`` keeps each reward's
values for the last group (None where a reward did not apply).
"""

from __future__ import annotations

import logging
import math
from typing import Any

from atroposlib.envs.reward_fns.reward_function import RewardFunction

from . import scorer

__all__ = ["GrpoHostReward", "register"]

NAME = "grpo_host"
GOLD = ("ground_truth", "solution")
"""Atropos's names for the gold answer: grpo-host's ``answer`` column."""

_log = logging.getLogger(__name__)


class GrpoHostReward(RewardFunction):
    """The weighted total of a grpo-host spec's rewards for each completion (NaN: unscored)."""

    def __init__(self, rewards: str, weight: float = 1.0, name: str | None = None, **kwargs: Any) -> None:
        super().__init__(weight=weight, name=name or NAME, **kwargs)
        self.spec = rewards
        self.last_values: dict[str, list[float | None]] = {n: [] for n in scorer.weights(rewards)}

    def compute(self, completions: list[Any], **kwargs: Any) -> list[float]:
        n = len(completions)
        columns = {("answer" if key in GOLD else key): value for key, value in kwargs.items()}
        rows = [(f"completion {i}", {**{k: v[i] if isinstance(v, list) and len(v) == n else v
                                        for k, v in columns.items()}, "completion": _completion(c)})
                for i, c in enumerate(completions)]
        lines = scorer.score(self.spec, rows)
        self.last_values = {name: [(line.get("rewards") or {}).get(name) for line in lines]
                            for name in self.last_values}
        scores = []
        for line in lines:
            if "error" in line:
                _log.warning("grpo-host: %s%s", "" if "rewards" in line else f"{line['row']}: ", line["error"])
            scores.append(math.nan if line.get("total") is None else line["total"])
        return scores


def _completion(completion: Any) -> Any:
    """Atropos's completion shapes as grpo-host's: text, or a message list."""
    if isinstance(completion, dict):
        message = completion.get("message", completion)
        return [message] if isinstance(message, dict) else completion
    return completion


def register(registry: Any = None) -> None:
    """Register :class:`GrpoHostReward` as ``"grpo_host"`` in Atropos's reward registry (or in ``registry``)."""
    from atroposlib.envs.reward_fns import registry as atropos_registry

    (atropos_registry if registry is None else registry).register(GrpoHostReward, name=NAME)
