"""Rows in, one result line per row out, in batches: the path ``score``, ``serve`` and the verl adapter share.

Rows go in as :func:`grpo_host.data.read_rows` yields them (or as a request
holds them) and one result per row comes out, in input order, so nothing is
lost: a scored row carries every reward's value and the total; a row that
could not be read or lacks what a chosen reward needs is ``{"row",
"error"}``; a row that a reward failed on keeps the other rewards' values and
says which reward failed and why under ``"error"``.  Each batch of good rows
is scored once (:func:`grpo_host.scoring.batch.score_batch`) and fed to the
caller's sinks (``score``'s rollout record and monitors), then to a
:class:`~grpo_host.scoring.stats.Tally`, which keeps running per-reward
figures (moments, not lists, so memory stays flat on large files).  A batch's
groups come from a column or from the rows that share a prompt, so a run's
samples can be audited after the fact.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from .data import missing_column, normalize
from .errors import DataError
from .scoring.batch import Sink, feed, score_batch
from .scoring.contract import Reward
from .scoring.ensemble import Ensemble, ScoreResult
from .scoring.stats import Tally

__all__ = ["score_file_batches", "score_file_rows"]


def score_file_rows(
    rows: Iterable[tuple[str, Any]], ensemble: Ensemble, tally: Tally, *, batch_size: int = 256,
    sinks: Sequence[Sink | None] = (), group_column: str | None = None,
) -> Iterator[dict[str, Any]]:
    """Yield one result per input row, in order (:func:`score_file_batches`, one line at a time)."""
    for lines in score_file_batches(rows, ensemble, tally, batch_size=batch_size, sinks=sinks,
                                    group_column=group_column):
        yield from lines


def score_file_batches(
    rows: Iterable[tuple[str, Any]], ensemble: Ensemble, tally: Tally, *, batch_size: int = 256,
    sinks: Sequence[Sink | None] = (), group_column: str | None = None,
) -> Iterator[list[dict[str, Any]]]:
    """Yield each batch's results, one per input row, in order (see the module docstring for their shapes).

    A row needs a ``completion`` (an empty string is a completion: a policy
    that emits EOS at once wrote it); a prompt only when a chosen reward
    declares the ``prompt`` column.  ``sinks`` (the rollout record, the
    monitors; None entries skipped) take every scored batch before ``tally``
    does; a batch's group is ``group_column``'s value, else the row's prompt.
    """
    rewards = ensemble.rewards
    need_prompt = any("prompt" in col.names for r in rewards for col in r.requires)
    pending: list[tuple[str, dict[str, Any] | None, DataError | None]] = []

    def flush() -> list[dict[str, Any]]:
        good = [(where, row) for where, row, _ in pending if row is not None]  # a row is None where it had an error
        result = None
        if good:
            batch = [row for _, row in good]
            result = feed(score_batch(ensemble, batch, index=tally.batches, labels=[where for where, _ in good],
                                      groups=[_group(row, group_column) for row in batch]), [*sinks, tally]).result
        lines: list[dict[str, Any]] = []
        i = 0
        for where, _, error in pending:
            if error is not None:
                lines.append({"row": where, "error": str(error).removeprefix(f"{where}: ")})
                continue
            assert result is not None  # a good row is in the scored batch
            lines.append(_line(where, result, i, ensemble.names))
            i += 1
        pending.clear()
        return lines

    for where, raw in rows:
        tally.rows += 1
        try:
            row, error = _checked(raw, where, rewards, need_prompt), None
        except DataError as exc:
            row, error = None, exc
        tally.bad += error is not None
        pending.append((where, row, error))
        if len(pending) >= batch_size:
            yield flush()
    if pending:
        yield flush()


def _checked(raw: Any, where: str, rewards: Sequence[Reward], need_prompt: bool) -> dict[str, Any]:
    """``raw`` normalised, or the :class:`DataError` that says why it cannot be scored."""
    if isinstance(raw, DataError):
        raise raw
    row = normalize(raw, where, require_prompt=need_prompt)
    if row.get("completion") is None or isinstance(row["completion"], list | dict) and not row["completion"]:
        raise DataError(where, "no 'completion' to score")
    problem = missing_column(row, rewards)
    if problem:
        raise DataError(where, problem)
    return row


def _line(where: str, result: ScoreResult, i: int, names: Sequence[str]) -> dict[str, Any]:
    """The result line of the ``i``-th scored row of ``result``."""
    line = {"row": where, "rewards": {n: result.values[n][i] for n in names}, "total": result.total[i]}
    if i in result.row_errors:
        line["error"] = "; ".join(result.row_errors[i])
    return _finite(line)


def _finite(line: dict[str, Any]) -> dict[str, Any]:
    """``line`` with any infinite value or total replaced by None and said under ``error`` (JSON has no
    Infinity; weights of 1e308 overflow a total)."""
    bad = [name for name, value in line["rewards"].items() if isinstance(value, float) and not math.isfinite(value)]
    total = line["total"]
    if not bad and not (isinstance(total, float) and not math.isfinite(total)):
        return line
    rewards = {name: None if name in bad else value for name, value in line["rewards"].items()}
    causes = [f"reward {name!r} gave a non-finite value" for name in bad] or [
        "the weighted total overflowed (weights too large for the values): no total"]
    error = "; ".join(filter(None, [line.get("error"), *causes]))
    return {**line, "rewards": rewards, "total": None, "error": error}


def _group(row: dict[str, Any], column: str | None) -> Any:
    """A row's group id: its ``column`` value, else its prompt (rows sharing a prompt are one GRPO group)."""
    value = row.get(column) if column else row.get("prompt")
    return value if isinstance(value, str | int | float | None) else json.dumps(value, sort_keys=True, default=str)
