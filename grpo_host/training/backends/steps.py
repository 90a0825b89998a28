"""The steps every training backend takes the same way, written once.

A backend resumes from ``checkpoint-<step>`` folders in ``output_dir``, refuses
to write over a run it was not asked to resume, refuses a prompt longer
than ``max_prompt_length`` (TRL no longer truncates prompts, and
mlx-lm-lora would cut it silently), and finds each row's environment:
these rules are the run configuration's, not the engine's, so every backend
calls them from here.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ...errors import ConfigError, DataRefused, DuplicateNameError, UnknownNameError
from ..preflight import checkpoint_folders

if TYPE_CHECKING:
    from ...discovery.plugins import Plugins
    from ...scoring.turns import TurnRule
    from ..config import EnvironmentSettings
    from ..train import Job, Row

__all__ = ["check_prompt_length", "environment_factories", "refuse_unasked_overwrite", "rollout_environments"]


def refuse_unasked_overwrite(job: Job) -> None:
    """A ``ConfigError`` when ``output_dir`` already holds a checkpoint (even a partial one) and ``resume`` is off."""
    existing = checkpoint_folders(job.output_dir)
    if existing and not job.config.resume:
        raise ConfigError(f"output_dir {str(job.output_dir)!r} already holds {existing[0].name}: "
                          "set resume: true to continue it, or choose another output_dir")


def check_prompt_length(job: Job, where: str, tokens: int) -> None:
    """A :class:`DataRefused` naming the row when its prompt has more than ``max_prompt_length`` tokens (or none)."""
    limit = job.config.max_prompt_length
    if tokens == 0:
        raise DataRefused(where, "the prompt has no tokens")
    if limit is not None and tokens > limit:
        raise DataRefused(where, f"the prompt has {tokens} tokens, over max_prompt_length={limit}; "
                               "shorten or drop the row, or raise max_prompt_length")


def rollout_environments(job: Job) -> tuple[dict[str | None, Callable[[], Any]], list[str | None]]:
    """The run's environments as session factories, and each row's choice: :func:`environment_factories` for the
    job's config and rows."""
    return environment_factories(job.config.environment, job.rows, job.plugins, turn_reward=job.config.turn_reward)


def environment_factories(
    default: EnvironmentSettings | None, rows: Sequence[Row], plugins: Plugins, *,
    turn_reward: str | TurnRule = "episode",
) -> tuple[dict[str | None, Callable[[], Any]], list[str | None]]:
    """Environments as session factories, and each row's choice (None: the default one, or none at all); shared by
    the training backends and ``grpo-host eval``.

    A row picks an environment by name in its ``environment`` column; the
    others use the config's ``environment``.  Names and parameters are
    checked here, before any model is loaded: an unknown name is a
    :class:`ConfigError` naming the key (or a :class:`DataError` naming the
    row), bad parameters a :class:`ConfigError` naming the environment, and
    a row missing a column its own environment reads a :class:`DataError`
    naming the row (the run's environment's columns are checked with the
    data, before this).
    Empty when the run has no environment.
    """
    choices: list[str | None] = []
    for row in rows:
        name = row.data.get("environment")
        if name is not None and not isinstance(name, str):
            raise DataRefused(row.where, f"column 'environment' must name an environment, not {type(name).__name__}")
        choices.append(name)
    named = {c for c in choices if c is not None}
    if default is None and not named:
        return {}, choices
    if default is None:
        unnamed = (row.where for row, c in zip(rows, choices, strict=True) if c is None)
        where = next(unnamed) if None in choices else None
        if where is not None:
            raise DataRefused(where, "this row names no environment (column 'environment') and the config sets none")
    factories: dict[str | None, Callable[[], Any]] = {}
    for name in sorted(named | ({default.name} if default else set())):
        try:
            env = plugins.registry.environment(name)
        except (UnknownNameError, DuplicateNameError) as exc:
            if default is not None and name == default.name:
                raise ConfigError(f"config key 'environment': {exc}") from None
            where = next(row.where for row, c in zip(rows, choices, strict=True) if c == name)
            raise DataRefused(where, f"column 'environment': {exc}") from None
        # the run's own environment's columns were checked with the data
        for row, choice in zip(rows, choices, strict=True):
            if choice == name and not (default is not None and name == default.name):
                problem = next((p for col in env.requires if (p := col.problem(row.data)) is not None), None)
                if problem is not None:
                    raise DataRefused(row.where, f"environment {name!r} (column 'environment') needs column "
                                               f"{problem[0]!r}: {problem[1]}")
        params = default.params if default is not None and name == default.name else {}
        session = env.session_class()
        try:
            env.create(params)  # bad parameters fail now, not in the first rollout
        except ValueError as exc:
            raise ConfigError(f"config key 'environment.params': {exc}") from None
        factories[name] = functools.partial(session, params, rows=rows, turn_reward=turn_reward)
    if default is not None:
        factories[None] = factories[default.name]
    return factories, choices
