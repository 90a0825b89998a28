"""Which rows a reward scored null, and why: what ``grpo-host score`` says once per reward after its summary.

A reward returns None for "not applicable" (a contest row whose tests are
missing, a math gold that does not parse): the row's line in ``--out`` holds
``null`` and the coverage column drops, but nothing says which rows those
were.  :class:`NullRows` is a sink of the scored batches that counts, per
reward, the rows whose value is None although the call succeeded (errors and
timeouts are reported as such elsewhere), and keeps the first few: their
label, their id column when the data has one, and why, when the reward
declares a row check (``check_row``, what ``data check`` runs).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..scoring.batch import ScoredBatch

__all__ = ["ID_COLUMNS", "NullRows"]

ID_COLUMNS = ("id", "task_id", "problem_id", "question_id")
"""The columns that name a row in the common datasets; the first a row has is shown beside its label."""
SHOWN = 3
"""Rows named per reward."""


class NullRows:
    """A sink: per reward, how many rows it scored null, and the first :data:`SHOWN` of them named with why."""

    def __init__(self, members: Any) -> None:
        self.checks = {m.name: m.reward.check_row for m in members}
        self.counts = dict.fromkeys(self.checks, 0)
        self.rows = 0
        """Rows scored (bad rows never reach a reward), in this run: a resumed output's kept rows are not seen."""
        self.first: dict[str, list[str]] = {name: [] for name in self.checks}

    def take(self, batch: ScoredBatch) -> None:
        result = batch.result
        self.rows += len(batch.labels)
        for name, values in result.values.items():
            for i, value in enumerate(values):
                if value is None and name not in result.failures.get(i, {}):
                    self.counts[name] += 1
                    if len(self.first[name]) < SHOWN:
                        self.first[name].append(self._named(name, batch.labels[i], batch.rows[i]))

    def _named(self, name: str, label: Any, row: Mapping[str, Any]) -> str:
        ident = next((f" ({col} {row[col]!r})" for col in ID_COLUMNS if row.get(col) not in (None, "")), "")
        check = self.checks[name]
        why = None
        if check is not None:
            try:
                why = check(row)
            except Exception as exc:  # a pack's row check that fails says so here, not as a traceback
                why = f"its row check raised {type(exc).__name__}: {exc}"
        return f"{label}{ident}" + (f": {why}" if why else "")

    def lines(self) -> list[str]:
        """One line per reward that scored some row null."""
        out = []
        for name, count in self.counts.items():
            if count:
                more = f"; and {count - len(self.first[name])} more" if count > len(self.first[name]) else ""
                out.append(f"{name} gave no value (null) on {count} of {self.rows} rows: "
                           f"{'; '.join(self.first[name])}{more}")
        return out
