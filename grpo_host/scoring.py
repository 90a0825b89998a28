"""Offline scoring of a file of completions, streamed in batches.

This is ``grpo-host score`` without the terminal: rows go in as
``read_rows`` yields them, scored lines come out in input order, and a
:class:`Summary` keeps running per-reward figures (sums, not lists, so
memory stays flat on large files).  Bad rows are yielded as errors in place,
never dropped.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from typing import Any

from .data import DataError, normalize
from .ensemble import Ensemble, ScoreResult

__all__ = ["Summary", "score_rows"]


class Summary:
    """Per-reward mean/std/coverage/errors/timeouts/seconds over every batch so far."""

    def __init__(self, names: list[str]) -> None:
        self.rows = self.bad = self.unscored = 0
        self.skipped: list[str] = []  # the first messages of errors counted under on_error=skip
        self._stats = {n: dict(n=0, scored=0, sum=0.0, sumsq=0.0, errors=0, timeouts=0, seconds=0.0) for n in names}

    def add(self, result: ScoreResult) -> None:
        self.unscored += result.unscored
        self.skipped += result.errors[: max(0, 10 - len(self.skipped))]
        for name, values in result.values.items():
            s, m = self._stats[name], result.metrics[name]
            got = [v for v in values if v is not None]
            s["n"] += len(values)
            s["scored"] += len(got)
            s["sum"] += sum(got)
            s["sumsq"] += sum(v * v for v in got)
            s["errors"] += m.errors
            s["timeouts"] += m.timeouts
            s["seconds"] += m.seconds

    def per_reward(self) -> dict[str, dict[str, float | int | None]]:
        res = {}
        for name, s in self._stats.items():
            k = s["scored"]
            mean = s["sum"] / k if k else None
            var = (s["sumsq"] - k * mean * mean) / (k - 1) if k > 1 else 0.0
            res[name] = {
                "mean": mean,
                "std": math.sqrt(max(var, 0.0)) if k else None,
                "coverage": k / s["n"] if s["n"] else 0.0,
                "errors": s["errors"],
                "timeouts": s["timeouts"],
                "seconds": round(s["seconds"], 4),
            }
        return res


def _problem(row: dict[str, Any], where: str, checks) -> DataError | None:
    if row.get("completion") in (None, "", []):
        return DataError(where, "no 'completion' to score")
    for name, col in checks:
        problem = col.problem(row)
        if problem:
            return DataError(where, f"reward {name!r} needs column {problem[0]!r}: {problem[1]}")
    return None


def score_rows(
    rows: Iterable[tuple[str, Any]], ensemble: Ensemble, summary: Summary, *, batch_size: int = 256
) -> Iterator[dict[str, Any]]:
    """Yield one result per input row, in order.

    A scored row is ``{"row", "rewards": {name: value or None}, "total"}``; a
    row that cannot be scored (unreadable, no prompt, no completion, a column
    a chosen reward needs) is ``{"row", "error"}`` and counted in ``summary.bad``.
    """
    checks = [(r.name, col) for r in ensemble.rewards for col in r.requires]
    pending: list[tuple[str, dict[str, Any] | None, DataError | None]] = []

    def flush() -> Iterator[dict[str, Any]]:
        good = [(where, row) for where, row, error in pending if error is None]
        result = None
        if good:
            keys = sorted({k for _, row in good for k in row} - {"completion", "prompt"})
            result = ensemble.score(
                [row["completion"] for _, row in good],
                [row["prompt"] for _, row in good],
                row_ids=[where for where, _ in good],
                **{k: [row.get(k) for _, row in good] for k in keys},
            )
            summary.add(result)
        i = 0
        for where, _, error in pending:
            if error is not None:
                yield {"row": where, "error": str(error).removeprefix(f"{where}: ")}
                continue
            yield {"row": where, "rewards": {n: result.values[n][i] for n in ensemble.names}, "total": result.total[i]}
            i += 1
        pending.clear()

    for where, raw in rows:
        summary.rows += 1
        try:
            if isinstance(raw, DataError):
                raise raw
            row = normalize(raw, where)
            error = _problem(row, where, checks)
        except DataError as exc:
            row, error = None, exc
        summary.bad += error is not None
        pending.append((where, row, error))
        if len(pending) >= batch_size:
            yield from flush()
    yield from flush()
