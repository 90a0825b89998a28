"""OpenEnv rubrics and environments from a grpo-host spec: grpo-host rewards behind OpenEnv's own server.

* :class:`SpecRubric`: an OpenEnv ``Rubric`` whose ``forward(action,
  observation)`` is the spec's weighted total for one completion, the action,
  against one row, the observation (a mapping of columns, or a model whose
  fields are the columns).  Each reward of the spec is a child rubric whose
  ``last_score`` is its value for the last row, so ``named_rubrics()`` shows
  them as OpenEnv's own composite rubrics do.
* :class:`SpecEnvironment`: a single-step OpenEnv ``Environment`` over a
  dataset: ``reset`` gives a row's prompt, ``step`` scores the action's
  completion against that row and ends the episode.
* :func:`app`: the rows checked once, then the environment behind OpenEnv's
  HTTP/WebSocket server (``openenv.core.env_server.create_app``)::

      # server.py; run with: uvicorn server:app
      from grpo_host.integrations.openenv import app

      app = app("math:2, r1_strict_format:0.5", "train.jsonl")

  and stepped by OpenEnv's own clients (``GenericEnvClient``, or
  ``EnvClient`` with :class:`CompletionAction`).

grpo-host's rules hold: the rows are checked against every reward's
``requires`` (:func:`grpo_host.check_rows`) before the server starts, a bad
dataset raising :class:`grpo_host.UserError` with the check's report (row,
reward and column); each completion goes through ``grpo-host score``'s path
(:mod:`grpo_host.integrations.scorer`, micro-batched across sessions, off the
event loop); OpenEnv's ``reward`` may be None, and a completion no reward
scored gets None there (never 0.0), with the reason in the observation's
``error``.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State
from openenv.core.rubrics import Rubric
from pydantic import Field

from . import scorer

__all__ = ["CompletionAction", "PromptObservation", "RewardPart", "SpecEnvironment", "SpecRubric", "app",
           "environment_factory"]

Completion = str | list[dict[str, Any]]


class CompletionAction(Action):
    """The model's reply: text, or the chat messages of a (multi-turn, tool-using) rollout."""

    completion: Completion = Field(description="The completion: a string, or a list of chat messages")


class PromptObservation(Observation):
    """What the agent sees: the row's prompt after ``reset``; after ``step``, each reward's value too."""

    prompt: Completion | None = Field(default=None, description="The row's prompt (text or chat messages)")
    rewards: dict[str, float | None] = Field(default_factory=dict,
                                             description="Each reward's value (None: it did not apply)")
    error: str | None = Field(default=None, description="Why a reward, or the whole completion, was not scored")


class RewardPart(Rubric):
    """One reward of a :class:`SpecRubric`: its ``last_score`` is that reward's value for the parent's last row
    (None where it did not apply).  Scored only by its parent, with the spec's other rewards in one call."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name

    def forward(self, action: Any, observation: Any) -> float | None:
        return self.last_score


class SpecRubric(Rubric):
    """The spec's ensemble as an OpenEnv rubric (see the module docstring); a bad spec raises here."""

    def __init__(self, spec: str) -> None:
        super().__init__()
        self.spec = spec
        self.last_error: str | None = None
        """Why the last row, or a reward on it, was not scored (row and reward named); None when all went well."""
        self.last_values: dict[str, float | None] = {}
        for name in scorer.weights(spec):
            setattr(self, name, RewardPart(name))

    def forward(self, action: Any, observation: Any) -> float | None:
        return self.score(action, observation)

    def score(self, action: Any, observation: Any, where: str = "openenv action") -> float | None:
        """:meth:`forward`, with the label that errors name the row by."""
        return self._record(scorer.score(self.spec, [_row(action, observation, where)])[0])

    async def ascore(self, action: Any, observation: Any, where: str = "openenv action") -> float | None:
        """:meth:`score` for a coroutine: the row is scored on the scorer's thread, not on the event loop."""
        return self._record((await scorer.ascore(self.spec, [_row(action, observation, where)]))[0])

    def _record(self, line: Mapping[str, Any]) -> float | None:
        """Keep a result line's values on the children, its error and total on the rubric; return the total."""
        self.last_values = dict(line.get("rewards") or dict.fromkeys(self._rubric_children))
        for name, part in self._rubric_children.items():
            part.last_score = self.last_values[name]
        self.last_error = line.get("error") if "rewards" in line else f"{line['row']}: {line['error']}"
        self.last_score = line.get("total")
        return self.last_score


def _row(action: Any, observation: Any, where: str) -> tuple[str, dict[str, Any]]:
    """``(where, row)`` for a rubric call: the observation's columns and the action's completion."""
    if isinstance(observation, Mapping):
        columns = dict(observation)
    else:
        columns = observation.model_dump(exclude={"done", "reward", "metadata"})
    completion = action.completion if isinstance(action, CompletionAction) else action
    return where, {**columns, "completion": completion}


class SpecEnvironment(Environment):
    """One episode per row: ``reset(seed=i)`` shows row ``i``'s prompt (without ``seed``: the next row in turn),
    ``step(action)`` scores the completion against that row and ends the episode (``done``).

    Sessions are independent (one instance per WebSocket session), so OpenEnv may run them concurrently; their
    completions share the spec's micro-batches.
    """

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, spec: str, rows: list[tuple[str, dict[str, Any]]]) -> None:
        self.spec_rubric = SpecRubric(spec)
        super().__init__(rubric=self.spec_rubric)
        self.rows = rows
        self._order = itertools.cycle(range(len(rows)))
        self._row: tuple[str, dict[str, Any]] | None = None
        self._state = State(episode_id=None, step_count=0)

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> PromptObservation:
        index = seed % len(self.rows) if seed is not None else next(self._order)
        self._row = self.rows[index]
        self._state = State(episode_id=episode_id or uuid.uuid4().hex, step_count=0, row=self._row[0])
        return PromptObservation(prompt=self._row[1]["prompt"], done=False, reward=None)

    def step(self, action: CompletionAction, timeout_s: float | None = None, **kwargs: Any) -> PromptObservation:
        where, row = self._begin()
        return self._observation(self.spec_rubric.score(action, _columns(row), where))

    async def step_async(self, action: CompletionAction, timeout_s: float | None = None,
                         **kwargs: Any) -> PromptObservation:
        where, row = self._begin()
        return self._observation(await self.spec_rubric.ascore(action, _columns(row), where))

    def _begin(self) -> tuple[str, dict[str, Any]]:
        if self._row is None or self._state.step_count:
            raise RuntimeError("call reset() first: an episode is one step, the completion for one row's prompt")
        self._state.step_count += 1
        return self._row

    def _observation(self, total: float | None) -> PromptObservation:
        rubric = self.spec_rubric
        return PromptObservation(prompt=self._row[1]["prompt"] if self._row else None, rewards=rubric.last_values,
                                 error=rubric.last_error, done=True, reward=total)

    @property
    def state(self) -> State:
        return self._state


def _columns(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k != "completion"}


def environment_factory(spec: str, rows: str | Path | Iterable[Mapping[str, Any]]) -> Callable[[], SpecEnvironment]:
    """Check ``rows`` (a data file, or mappings) for ``spec``'s rewards once; return what makes an environment.

    Raises :class:`grpo_host.UserError` with the check's report when a row lacks what a reward needs.
    """
    from grpo_host import UserError, check_rows, read_rows

    found = read_rows(rows) if isinstance(rows, str | Path) else (
        (f"row {i}", dict(row)) for i, row in enumerate(rows, 1))
    kept: list[tuple[str, dict[str, Any]]] = []
    report = check_rows(found, scorer.ensemble(spec).rewards, keep=kept)
    if not report.ok:
        raise UserError(f"grpo-host: the data check failed, so these rows cannot be served with {spec!r}:\n{report}")
    if not kept:
        raise UserError("grpo-host: no rows to serve")
    return lambda: SpecEnvironment(spec, kept)


def app(spec: str, rows: str | Path | Iterable[Mapping[str, Any]], **options: Any) -> Any:
    """OpenEnv's FastAPI app (``create_app``) serving :class:`SpecEnvironment` over ``rows``; ``options`` go to
    ``create_app`` (``max_concurrent_envs=...``)."""
    from openenv.core.env_server.http_server import create_app

    return create_app(environment_factory(spec, rows), CompletionAction, PromptObservation,
                      env_name="grpo-host", **options)
