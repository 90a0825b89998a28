"""The ensemble as engine reward functions: one named function per member, one scoring pass per batch.

Engines (TRL, mlx-lm-lora) want a list of reward functions, each with its
own ``__name__`` (so they log ``rewards/<name>/mean``) and weights given
separately.  Calling each :class:`grpo_host.Reward` directly would bypass
what the ensemble adds: the per-reward timeout and error policy, worker
processes, the metrics, and the unscored-row policy (``strict``), which
needs every member's value for a row at once.  So the first member function
called for a batch scores the whole batch through :meth:`Ensemble.score`
and the others read their column from that result.

Rows travel to the engine as an integer row id (the ``_grpo_host_row``
column) and are looked up here, so per-row metadata reaches rewards exactly
as it was read: an Arrow-backed dataset would merge dict keys across rows
and fill the missing ones with None.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ...kinds.environment import own_rewards
from ...scoring.batch import ScoredBatch, Sink, feed, score_batch

if TYPE_CHECKING:
    from ...kinds.monitor import MonitorSet
    from ...runs.record import RolloutRecord
    from ...scoring.ensemble import Ensemble
    from ..train import Row

__all__ = ["ROW_ID", "EnsembleRewardFuncs", "MemberRewardFunc", "MetricLog"]

ROW_ID = "_grpo_host_row"
"""Name of the dataset column that carries each prompt's row index."""

LogMetric = Callable[[str, float], None]


class MetricLog:
    """A backend's metric logging as a batch sink: every figure of a scored batch (:meth:`ScoredBatch.figures`)
    handed to the engine's ``log_metric``, after the engine's own reward means."""

    def __init__(self, log_metric: LogMetric) -> None:
        self.log_metric = log_metric

    def take(self, batch: ScoredBatch) -> None:
        for key, value in batch.figures():
            self.log_metric(key, value)


class MemberRewardFunc:
    """One ensemble member as a reward function with the engine contract (``prompts=, completions=, **columns``)."""

    def __init__(self, owner: EnsembleRewardFuncs, index: int, name: str) -> None:
        self.owner, self.index, self.__name__ = owner, index, name

    def __call__(
        self, prompts: Sequence[Any] | None = None, completions: Sequence[Any] = (), **kwargs: Any
    ) -> list[float | None]:
        ids = kwargs.get(ROW_ID)
        if ids is None:
            raise ValueError(f"reward function {self.__name__!r} got no {ROW_ID!r} column from the engine")
        state = kwargs.get("trainer_state")  # TRL's TrainerState: the step being computed is global_step + 1
        done = getattr(state, "global_step", None)
        return self.owner.values(self.index, completions, ids, kwargs.get("log_metric"), kwargs.get("completion_ids"),
                                 step=done + 1 if isinstance(done, int) else None,
                                 environments=kwargs.get("environments"))

    def __repr__(self) -> str:
        return f"<reward function {self.__name__!r} of an ensemble>"


class EnsembleRewardFuncs:
    """Per-member reward functions over one ensemble and the run's rows.

    :param ensemble: the :class:`grpo_host.Ensemble` to score with.
    :param rows: the run's :class:`grpo_host.training.train.Row` list (``where``,
        ``data``); row ids index it, and ``where`` names a row in errors.
    :param log_metric: where our metrics go when the engine passes no
        ``log_metric`` of its own.
    :param monitors: the run's :class:`grpo_host.kinds.monitor.MonitorSet`; it
        sees every scored batch (groups: completions of one row), and its
        metrics are logged beside the rewards'.
    :param max_length: ``max_completion_length``, for the length monitor.
    :param record: the run's :class:`grpo_host.runs.record.RolloutRecord` (None: nothing recorded); every scored
        batch goes into it, grouped as the engine groups completions: consecutive completions of one row,
        ``group_size`` at most.
    :param sinks: more sinks of every scored batch (:mod:`grpo_host.scoring.batch`), after the record and the
        monitors and before the metric log.
    """

    def __init__(self, ensemble: Ensemble, rows: Sequence[Row], log_metric: LogMetric | None = None,
                 monitors: MonitorSet | None = None, max_length: int | None = None,
                 record: RolloutRecord | None = None, group_size: int | None = None,
                 sinks: Sequence[Sink] = ()) -> None:
        self.ensemble, self.rows, self.log_metric = ensemble, rows, log_metric
        self.monitors, self.max_length, self.passes = monitors, max_length, 0
        self.record, self.group_size, self.sinks = record, group_size, sinks
        self.funcs = [MemberRewardFunc(self, i, m.name) for i, m in enumerate(ensemble.members)]
        self._batch: tuple[Sequence[Any], list[int]] | None = None
        self._values: list[list[float | None]] = []
        self._served: set[int] = set()

    @property
    def weights(self) -> list[float]:
        return self.ensemble.weights

    def values(self, index: int, completions: Sequence[Any], row_ids: Sequence[Any],
               log_metric: LogMetric | None = None, completion_ids: Sequence[Any] | None = None,
               step: int | None = None, environments: Sequence[Any] | None = None) -> list[float | None]:
        """Member ``index``'s scores for this batch, scoring the batch first if this member already had it.

        ``environments``: the rollouts' sessions (TRL passes them to reward functions), whose own rewards are
        recorded with the batch."""
        ids = [int(i) for i in row_ids]
        same = self._batch is not None and (completions is self._batch[0] or (
            ids == self._batch[1] and list(completions) == list(self._batch[0])))
        if not same or index in self._served:
            self._score(completions, ids, log_metric or self.log_metric, completion_ids, step, environments)
        self._served.add(index)
        return self._values[index]

    def _score(self, completions: Sequence[Any], ids: list[int], log_metric: LogMetric | None,
               completion_ids: Sequence[Any] | None = None, step: int | None = None,
               environments: Sequence[Any] | None = None) -> None:
        rows = [self.rows[i] for i in ids]
        batch = score_batch(self.ensemble, [row.data for row in rows], index=self.passes, completions=completions,
                            labels=[row.where for row in rows], groups=_groups(ids, self.group_size), step=step,
                            row_ids=ids, completion_ids=completion_ids, max_length=self.max_length)
        if environments is not None and len(environments) == len(completions):
            batch.environment_values, batch.environment_turns = own_rewards(environments, completions)
        self._batch, self._served = (completions, ids), set()
        # A row that no weighted reward nor its environment scored is unscored (the ensemble's rule); engines
        # call a completion unscorable only when every function returned None, so weight-0 members say None there.
        unscored = [t is None for t in batch.totals]
        self._values = [[None if u else v for v, u in zip(batch.result.values[name], unscored, strict=True)]
                        for name in self.ensemble.names]
        feed(batch, [self.record, self.monitors, *self.sinks,
                     MetricLog(log_metric) if log_metric is not None else None])
        self.passes += 1


def _groups(ids: Sequence[int], size: int | None) -> list[str]:
    """GRPO's groups in a batch: runs of consecutive completions of one row, cut every ``size`` (a row drawn twice
    in a row is two groups), named ``<pass-local index>:<row id>``."""
    out: list[str] = []
    group, run = -1, 0
    for i, row in enumerate(ids):
        if i == 0 or row != ids[i - 1] or (size and run >= size):
            group, run = group + 1, 0
        run += 1
        out.append(f"{group}:{row}")
    return out
