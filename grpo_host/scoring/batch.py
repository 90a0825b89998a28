"""One scored batch, built once per scoring pass, and the sinks every pass feeds.

``grpo-host score``, ``serve``, the verl adapter and both training
backends score rows the same way: :func:`score_batch` reads the completions
once (a chat completion into a :class:`~grpo_host.scoring.trajectory.Trajectory`,
which the ensemble's rewards, the rollout record and the monitors then share),
scores them with the ensemble, and returns the result together with what was
scored as one :class:`ScoredBatch`; :func:`feed` hands it to each
:class:`Sink` in turn: the rollout record, the monitors, the running
:class:`~grpo_host.scoring.stats.Tally` of ``score`` and ``serve``, a
backend's metric log.  The next thing that should see every scored batch (a
tracker, a sampler, a live dashboard) is one more sink in that list, not a
third copy of the pipeline.

A sink that measures something leaves it on the batch (the record its
seconds, the monitors their metrics), so the sinks after it report it: a
pass feeds the record first, then the monitors, then whatever reports.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from .ensemble import Ensemble, ScoreResult
from .trajectory import Trajectory

__all__ = ["ScoredBatch", "Sink", "feed", "score_batch", "trained_total"]


class Sink(Protocol):
    """Whatever sees every scored batch: the rollout record, the monitors, a tally, a metric log."""

    def take(self, batch: ScoredBatch) -> None:
        """Take one scored batch (in the order of the pass's sinks; see the module docstring)."""


@dataclass
class ScoredBatch:
    """One scoring pass: the ensemble's result and what it scored; lists have one entry per completion."""

    index: int
    """The scoring pass, from 0: the record's ``batch``, the step monitors see."""
    result: ScoreResult
    weights: dict[str, float]
    """Each reward's weight, by name."""
    prompts: Sequence[Any]
    completions: Sequence[Any]
    """As given: text, or chat messages (the record keeps those as the rollout's trajectory)."""
    read: Sequence[str | Trajectory]
    """The completions as read once for everyone: text as it is, chat messages as a :class:`Trajectory`."""
    rows: Sequence[Mapping[str, Any]]
    """Each completion's row as read: the columns rewards received."""
    labels: Sequence[Any]
    """Where each row came from (``line 12``, ``row 3``): what error messages and alerts name."""
    groups: Sequence[Any]
    """GRPO's groups: one id per completion, shared by the completions of one prompt (advantages are within one)."""
    step: int | None = None
    """The engine's global step, when it says; None: the record numbers the pass itself."""
    row_ids: Sequence[int] | None = None
    """The engine's integer row ids (training: indices into the run's rows; higher ones are validation rows)."""
    lengths: Sequence[int | None] = ()
    """Completion token counts, when the engine gave them."""
    max_length: int | None = None
    """``max_completion_length``, when known (for the length monitor)."""
    record_seconds: float | None = None
    """Set by the rollout record: the seconds writing this batch took."""
    monitor_metrics: dict[str, float] | None = None
    """Set by the monitors: their metrics for this batch (``monitors/<name>/<metric>``)."""
    environment_values: dict[str, list[float | None]] = field(default_factory=dict)
    """The environments' own rewards (:func:`~grpo_host.kinds.environment.own_rewards`), when the engine ran
    environments: recorded beside the ensemble's rewards (the trainer adds them in with weight 1)."""
    environment_turns: dict[str, list[tuple[float | None, ...] | None]] = field(default_factory=dict)
    """Their per-turn values, for environments whose reward is per turn."""

    @property
    def totals(self) -> list[float | None]:
        """What each completion was trained on: the ensemble's weighted total with the environments' own rewards
        added (:func:`trained_total`); the record's ``total`` and ``advantage`` are of these."""
        return trained_total(self.result.total, self.environment_values)

    @functools.cached_property
    def texts(self) -> list[str]:
        """Each completion's text as text rewards scored it (a chat completion's final answer, reasoning restored)."""
        return [r if isinstance(r, str) else r.text for r in self.read]

    @functools.cached_property
    def tools(self) -> list[dict[str, float]]:
        """Per completion, :attr:`Trajectory.counts` (turns, tool calls, tool errors, unfinished) when any completion
        is a message list (agent rollouts); empty when every one is text."""
        if all(isinstance(r, str) for r in self.read):
            return []
        return [Trajectory.of(r).counts for r in self.read]

    def figures(self) -> Iterator[tuple[str, float]]:
        """Every figure a backend logs for this batch beside the engine's own means, under its metric name: each
        reward's (:meth:`~grpo_host.scoring.stats.RewardMetrics.logged`), ``unscored`` (of :attr:`totals`),
        ``record/seconds`` and the monitors' metrics (when those sinks took the batch first)."""
        for name, metrics in self.result.metrics.items():
            yield from metrics.logged(name)
        yield "unscored", float(sum(t is None for t in self.totals))  # what nothing scored, environments included
        if self.record_seconds is not None:
            yield "record/seconds", self.record_seconds
        if self.monitor_metrics:
            yield from self.monitor_metrics.items()


def score_batch(
    ensemble: Ensemble, rows: Sequence[Mapping[str, Any]], *, index: int, labels: Sequence[Any],
    groups: Sequence[Any], completions: Sequence[Any] | None = None, step: int | None = None,
    row_ids: Sequence[int] | None = None, completion_ids: Sequence[Any] | None = None,
    lengths: Sequence[int | None] | None = None, max_length: int | None = None,
) -> ScoredBatch:
    """Read ``rows``' completions once, score them with ``ensemble``, and return the batch the sinks take.

    ``completions`` (an engine's) replace the rows' ``completion`` column;
    ``completion_ids`` (token ids per completion) reach length rewards and
    give :attr:`ScoredBatch.lengths` unless ``lengths`` are given.  The ensemble receives the completions
    as read: a reward reading a :class:`Trajectory` gets that one, a text
    reward its text, so no reward, record or monitor reads a message list again.
    """
    given = [row["completion"] for row in rows] if completions is None else completions
    read = [c if isinstance(c, str) else Trajectory.of(c) for c in given]
    result = ensemble.score_rows(rows, completions=read, row_ids=labels, completion_ids=completion_ids)
    if lengths is None:
        lengths = [len(c) for c in completion_ids] if completion_ids is not None else ()
    return ScoredBatch(
        index=index, result=result, weights=dict(zip(ensemble.names, ensemble.weights, strict=True)),
        prompts=[row.get("prompt") for row in rows], completions=given, read=read, rows=rows, labels=labels,
        groups=groups, step=step, row_ids=row_ids, lengths=lengths, max_length=max_length)


def trained_total(total: Sequence[float | None],
                  own: Mapping[str, Sequence[float | None]]) -> list[float | None]:
    """The ensemble's weighted ``total`` with the environments' ``own`` rewards (name -> one value per completion)
    added with weight 1, as TRL adds an environment's ``get_reward`` and the MLX backend its environment reward
    function; None where neither the ensemble nor any environment scored the completion.  The one place this sum
    is made: the record, the MLX backend's fill-in and ``grpo-host eval`` all call it."""
    columns = list(own.values())
    return [t if not columns else None if t is None and all(c[i] is None for c in columns)
            else (t or 0.0) + math.fsum(c[i] or 0.0 for c in columns) for i, t in enumerate(total)]


def feed(batch: ScoredBatch, sinks: Iterable[Sink | None]) -> ScoredBatch:
    """Hand ``batch`` to every sink in order (None: a sink this pass does without, such as no record)."""
    for sink in sinks:
        if sink is not None:
            sink.take(batch)
    return batch
