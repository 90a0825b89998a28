"""A SkyRL-Gym environment from a grpo-host spec: grpo-host rewards in SkyRL's own rollout loop.

SkyRL makes one environment per rollout from its registry,
``skyrl_gym.make(env_class, env_config=..., extras=row)`` (``extras``: the
dataset row's fields besides ``prompt`` and ``env_class``), starts it with
``init(prompt)`` and calls ``step(text)`` with the model's reply, reading
``{observations, reward, done, metadata}``.  :func:`register` adds
:class:`GrpoHostEnv` to that registry::

    from grpo_host.integrations.skyrl import register

    register("math:2, r1_strict_format:0.5")  # as "grpo_host"; call it where SkyRL's workers import your code

and the dataset names it per row (``"env_class": "grpo_host"``); the spec
may instead come from SkyRL's config (``environment.skyrl_gym.grpo_host.rewards``),
which reaches the environment as its ``env_config``.

The row: ``reward_spec.ground_truth`` (SkyRL's gold) is the ``answer``
column (JSON text when it is not a string), the fields of ``extra_info``
and the row's other fields are columns, ``init``'s prompt is the ``prompt``
and the reply is the ``completion``.  ``init`` checks the row against every
reward's ``requires`` (:func:`grpo_host.check_rows`) before the first
``step``: a row that lacks what a reward needs raises
:class:`grpo_host.UserError` naming the row, the reward and the column.
``step`` scores the reply as ``grpo-host score`` does
(:mod:`grpo_host.integrations.scorer`: concurrent rollouts share
micro-batches) and ends the episode.

SkyRL's ``reward`` is a float, turned into a tensor, with no way to leave a
rollout out; so a reply that no reward scored gets 0.0 there, never
silently: ``metadata["grpo_host"]`` holds each reward's value (None where
it did not apply), ``scored`` false and the ``error``, a warning names the
row and the reason, and ``get_metrics`` reports ``grpo_host/scored`` (0.0),
which SkyRL averages into its logged environment metrics.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput

from . import scorer

__all__ = ["NAME", "GrpoHostEnv", "register", "row_of"]

NAME = "grpo_host"
"""The environment's id in SkyRL-Gym's registry (the dataset's ``env_class``)."""

_log = logging.getLogger(__name__)


class GrpoHostEnv(BaseTextEnv):
    """One rollout of one row, scored by a grpo-host spec in a single step (see the module docstring).

    ``rewards`` (from :func:`register`) or ``env_config["rewards"]`` is the spec; a bad spec raises here.
    """

    def __init__(self, env_config: Mapping[str, Any] | None = None, extras: Mapping[str, Any] | None = None,
                 rewards: str | None = None) -> None:
        super().__init__()
        spec = rewards or (env_config or {}).get("rewards")
        if not spec:
            raise ValueError("grpo-host: the SkyRL environment needs a reward spec: register(\"math:2, ...\"), or "
                             "environment.skyrl_gym.grpo_host.rewards in SkyRL's config")
        self.rewards = str(spec)  # not ``self.spec``: skyrl_gym.make sets that to the registry's EnvSpec
        self.names = list(scorer.weights(self.rewards))
        self.where, self.row = row_of(extras or {})
        self.last: dict[str, Any] = {}

    def init(self, prompt: Any) -> tuple[Any, dict[str, Any]]:
        from grpo_host import UserError, check_rows

        row = {**self.row, "prompt": prompt}
        report = check_rows([(self.where, row)], scorer.ensemble(self.rewards).rewards)
        if not report.ok:
            problem = report.problems[0]  # one row: one line, its first problem (a row rarely has two)
            raise UserError(f"grpo-host: {self.where} cannot be scored with {self.rewards!r}: reward "
                            f"{problem.reward!r}, column {problem.column!r}: {problem.problem}")
        self.row = row
        return prompt, {}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        if "prompt" not in self.row:
            raise RuntimeError("call init(prompt) first: it checks the row before any reply is scored")
        line = scorer.score(self.rewards, [(self.where, {**self.row, "completion": action})])[0]
        values = line.get("rewards")
        total = line.get("total")
        error = None
        if "error" in line:
            error = line["error"] if values is not None else f"{line['row']}: {line['error']}"
        elif total is None:
            error = f"{line['row']}: no reward of the spec applied"
        if error is not None:
            _log.warning("grpo-host: %s", error)
        self.last = {"rewards": values or dict.fromkeys(self.names), "total": total, "scored": total is not None,
                     "error": error}
        return BaseTextEnvStepOutput(observations=[], reward=0.0 if total is None else total, done=True,
                                     metadata={"grpo_host": self.last})

    def get_metrics(self) -> dict[str, Any]:
        """``grpo_host/scored`` and each reward's value for this episode (SkyRL drops the None of one that did
        not apply when it averages them)."""
        if not self.last:
            return {}
        return {"grpo_host/scored": float(self.last["scored"]),
                **{f"grpo_host/{name}": value for name, value in self.last["rewards"].items()}}


def row_of(extras: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """``(where, row)`` from SkyRL's ``extras``: the gold as ``answer``, ``extra_info``'s fields and the others as
    columns; ``where`` names the row by ``extra_info``'s ``index`` (or ``uid``) when it has one."""
    row: dict[str, Any] = {k: v for k, v in extras.items() if k not in ("reward_spec", "extra_info", "max_turns")}
    info = extras.get("extra_info")
    if isinstance(info, Mapping):
        row.update({k: v for k, v in info.items() if k not in row})
    spec = extras.get("reward_spec")
    gold = spec.get("ground_truth") if isinstance(spec, Mapping) else None
    if gold is not None:
        row["answer"] = gold if isinstance(gold, str) else json.dumps(gold, default=str)
    index = row.get("index", row.get("uid"))
    return (f"skyrl row {index}" if index is not None else "skyrl row"), row


def register(rewards: str | None = None, id: str = NAME) -> None:
    """Register :class:`GrpoHostEnv` in SkyRL-Gym's registry as ``id``, scoring by ``rewards`` (else by the
    ``rewards`` of each environment's ``env_config``).  Registering the same id again replaces it."""
    from skyrl_gym.envs.registration import register as skyrl_register
    from skyrl_gym.envs.registration import registry

    registry.pop(id, None)
    skyrl_register(id=id, entry_point=f"{__name__}:GrpoHostEnv", kwargs={"rewards": rewards} if rewards else {})
