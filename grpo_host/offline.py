"""Scoring a file of completions offline (``grpo-host score``), streamed in batches.

Rows go in as :func:`grpo_host.data.read_rows` yields them and one result
per row comes out, in input order, so nothing is lost: a scored row carries
every reward's value and the total; a row that could not be read or lacks
what a chosen reward needs is ``{"row", "error"}``; a row that a reward
failed on keeps the other rewards' values and says which reward failed and
why under ``"error"``.  A :class:`Tally` keeps running per-reward figures
(moments, not lists, so memory stays flat on large files).  Monitors see
each scored batch, with groups taken from a column or from the rows that
share a prompt, so a run's samples can be audited after the fact.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from .data import DataError, missing_column, normalize
from .ensemble import Ensemble, ScoreResult
from .monitoring import Batch, MonitorSet
from .scoring.stats import Moments, Running

__all__ = ["Tally", "score_file_rows"]


class Tally:
    """What ``grpo-host score`` (and ``serve``) report: row counts and per-reward figures over every batch so far."""

    def __init__(self, names: list[str]) -> None:
        self.rows = self.bad = self.failed = self.unscored = self.batches = 0
        self.errors: list[str] = []  # the first messages of rows a reward failed on
        self._rewards = {n: Running() for n in names}
        self._monitor_metrics: dict[str, Moments] = {}

    def add_monitor_metrics(self, metrics: dict[str, float]) -> None:
        for key, value in metrics.items():
            self._monitor_metrics.setdefault(key, Moments()).add([value])

    def monitor_metrics(self) -> dict[str, float | None]:
        """Each monitor metric's mean over the batches."""
        return {key: m.mean for key, m in sorted(self._monitor_metrics.items())}

    def add(self, result: ScoreResult) -> None:
        self.unscored += result.unscored
        self.failed += len(result.row_errors)
        self.errors += result.errors[: max(0, 10 - len(self.errors))]
        for name, values in result.values.items():
            self._rewards[name].add(values, result.metrics[name])

    def per_reward(self) -> dict[str, dict[str, Any]]:
        return {name: running.as_dict() for name, running in self._rewards.items()}

    def summary(self, ensemble: Ensemble, monitors: MonitorSet | None = None) -> dict[str, Any]:
        """The object ``grpo-host score --json`` prints and ``serve``'s ``/score`` answers with."""
        out = {"rows": self.rows, "scored": self.rows - self.bad, "bad_rows": self.bad, "failed_rows": self.failed,
               "unscored": self.unscored, "rewards": self.per_reward(),
               "weights": dict(zip(ensemble.names, ensemble.weights))}
        if monitors is not None:
            out["monitors"] = {"metrics": self.monitor_metrics(), "alerts": [a.as_dict() for a in monitors.alerts]}
        return out


def score_file_rows(
    rows: Iterable[tuple[str, Any]], ensemble: Ensemble, tally: Tally, *, batch_size: int = 256,
    monitors: MonitorSet | None = None, group_column: str | None = None,
) -> Iterator[dict[str, Any]]:
    """Yield one result per input row, in order (see the module docstring for their shapes).

    A row needs a ``completion`` (an empty string is a completion: a policy
    that emits EOS at once wrote it); a prompt only when a chosen reward
    declares the ``prompt`` column.  ``monitors`` observe every batch; a
    monitor's group is ``group_column``'s value, else the row's prompt.
    """
    rewards = ensemble.rewards
    need_prompt = any("prompt" in col.names for r in rewards for col in r.requires)
    pending: list[tuple[str, dict[str, Any] | None, DataError | None]] = []

    def flush() -> Iterator[dict[str, Any]]:
        good = [(where, row) for where, row, error in pending if error is None]
        result = None
        if good:
            batch = [row for _, row in good]
            result = ensemble.score_rows(batch, row_ids=[where for where, _ in good])
            tally.add(result)
            if monitors is not None:
                groups = [_group(row, group_column) for row in batch]
                tally.add_monitor_metrics(monitors.observe(Batch.of(
                    tally.batches, result, ensemble, [row.get("prompt") for row in batch],
                    [row["completion"] for row in batch], groups, row_ids=[where for where, _ in good])))
            tally.batches += 1
        i = 0
        for where, _, error in pending:
            if error is not None:
                yield {"row": where, "error": str(error).removeprefix(f"{where}: ")}
                continue
            line = {"row": where, "rewards": {n: result.values[n][i] for n in ensemble.names}, "total": result.total[i]}
            if i in result.row_errors:
                line["error"] = "; ".join(result.row_errors[i])
            yield line
            i += 1
        pending.clear()

    for where, raw in rows:
        tally.rows += 1
        try:
            if isinstance(raw, DataError):
                raise raw
            row = normalize(raw, where, require_prompt=need_prompt)
            if row.get("completion") is None or isinstance(row["completion"], list | dict) and not row["completion"]:
                raise DataError(where, "no 'completion' to score")
            problem = missing_column(row, rewards)
            if problem:
                raise DataError(where, problem)
            error = None
        except DataError as exc:
            row, error = None, exc
        tally.bad += error is not None
        pending.append((where, row, error))
        if len(pending) >= batch_size:
            yield from flush()
    yield from flush()


def _group(row: dict[str, Any], column: str | None) -> Any:
    """A row's group id: its ``column`` value, else its prompt (rows sharing a prompt are one GRPO group)."""
    value = row.get(column) if column else row.get("prompt")
    return value if isinstance(value, str | int | float | None) else json.dumps(value, sort_keys=True, default=str)
