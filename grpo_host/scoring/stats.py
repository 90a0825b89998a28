"""Per-reward statistics and their metric names, in one place.

A batch's figures per reward are a :class:`RewardMetrics`; figures over
many batches (a file in ``grpo-host score``, a served request, a log step on
the MLX backend) are kept as :class:`Running` sums and :class:`Moments`, so
memory stays flat however many rows pass; a :class:`Tally` holds a
``Running`` per reward and the row counts ``score`` and ``serve`` report.  The names under which the
figures reach ``metrics.jsonl`` and the trackers are TRL's
(``rewards/<name>/mean``, ``reward``, ``reward_std``) and made by
:func:`reward_key` only, so both backends, ``score`` and ``serve`` log the same
names.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .batch import ScoredBatch
    from .ensemble import Ensemble

__all__ = ["Moments", "RewardMetrics", "Running", "Tally", "reward_key"]


def reward_key(name: str, stat: str, prefix: str = "") -> str:
    """The metric name of one reward's figure: ``rewards/<name>/<stat>`` (``eval_`` before it for validation)."""
    return f"{prefix}rewards/{name}/{stat}"


@dataclass
class Moments:
    """Count, mean and sample standard deviation of a stream of scores (Welford's update); None values are skipped."""

    n: int = 0
    mean: float | None = None
    _m2: float = 0.0

    def add(self, values: Sequence[float | None]) -> Moments:
        for v in values:
            if v is None:
                continue
            self.n += 1
            delta = v - (self.mean or 0.0)
            self.mean = (self.mean or 0.0) + delta / self.n
            self._m2 += delta * (v - self.mean)
        return self

    @property
    def std(self) -> float | None:
        """Sample standard deviation; 0.0 for one value, None for none."""
        if not self.n:
            return None
        return math.sqrt(max(self._m2, 0.0) / (self.n - 1)) if self.n > 1 else 0.0


@dataclass
class RewardMetrics:
    """One reward's figures for one scored batch."""

    mean: float | None
    std: float | None
    coverage: float
    errors: int
    timeouts: int
    seconds: float
    counts: dict[str, float] = field(default_factory=dict)
    """The reward's own counters (see :class:`grpo_host.Scored`), summed over the batch."""
    backstops: int = 0
    """Of ``timeouts``, the items stopped by the wall-clock backstop rather than by their CPU timeout: they waited,
    using no CPU, or ran in a Ray actor on another node, whose CPU time cannot be read from here."""

    @classmethod
    def of(cls, values: Sequence[float | None], errors: int, timeouts: int, seconds: float,
           counts: dict[str, float], backstops: int = 0) -> RewardMetrics:
        m = Moments().add(values)
        return cls(mean=m.mean, std=m.std, coverage=m.n / len(values) if values else 0.0,
                   errors=errors, timeouts=timeouts, seconds=seconds, counts=counts, backstops=backstops)

    def logged(self, name: str) -> Iterator[tuple[str, float]]:
        """The figures a backend logs per batch beside the engine's own mean and std, under their metric names."""
        yield reward_key(name, "coverage"), self.coverage
        yield reward_key(name, "errors"), float(self.errors)
        yield reward_key(name, "timeouts"), float(self.timeouts)
        yield reward_key(name, "backstops"), float(self.backstops)
        yield reward_key(name, "seconds"), self.seconds
        for key, count in self.counts.items():
            yield reward_key(name, key), count


@dataclass
class Running:
    """One reward's figures summed over every batch so far (what ``score`` and ``serve`` report)."""

    moments: Moments = field(default_factory=Moments)
    rows: int = 0
    errors: int = 0
    timeouts: int = 0
    backstops: int = 0
    seconds: float = 0.0
    counts: dict[str, float] = field(default_factory=dict)

    def add(self, values: Sequence[float | None], metrics: RewardMetrics) -> None:
        self.moments.add(values)
        self.rows += len(values)
        self.errors += metrics.errors
        self.timeouts += metrics.timeouts
        self.backstops += metrics.backstops
        self.seconds += metrics.seconds
        for key, count in metrics.counts.items():
            self.counts[key] = self.counts.get(key, 0.0) + count

    def as_dict(self) -> dict[str, Any]:
        """The shape of one reward in ``grpo-host score --json``."""
        return {"mean": self.moments.mean, "std": self.moments.std,
                "coverage": self.moments.n / self.rows if self.rows else 0.0, "errors": self.errors,
                "timeouts": self.timeouts, "backstops": self.backstops,
                "seconds": round(self.seconds, 4), "counts": dict(self.counts)}


class Tally:
    """What ``grpo-host score`` (and ``serve``) report: row counts and per-reward figures over every batch so far.

    A sink (:class:`grpo_host.scoring.batch.Sink`) of the scored batches;
    the rows read and the bad ones are counted by whoever reads them
    (:func:`grpo_host.batches.score_file_batches`).
    """

    def __init__(self, names: list[str]) -> None:
        self.rows = self.bad = self.failed = self.unscored = self.batches = self.timed_out = 0
        self.errors: list[str] = []  # the first messages of rows a reward failed on
        self.timed_out_rows: list[str] = []  # the first rows whose every reward timed out
        self._rewards = {n: Running() for n in names}
        self._monitor_metrics: dict[str, Moments] = {}

    def take(self, batch: ScoredBatch) -> None:
        result = batch.result
        self.unscored += result.unscored
        self.failed += len(result.row_errors)
        self.errors += result.errors[: max(0, 10 - len(self.errors))]
        self.timed_out += len(result.timed_out)
        self.timed_out_rows += [str(batch.labels[i]) for i in result.timed_out[: max(0, 10 - len(self.timed_out_rows))]]
        for name, values in result.values.items():
            self._rewards[name].add(values, result.metrics[name])
        for key, value in (batch.monitor_metrics or {}).items():
            self._monitor_metrics.setdefault(key, Moments()).add([value])
        self.batches += 1

    def monitor_metrics(self) -> dict[str, float | None]:
        """Each monitor metric's mean over the batches."""
        return {key: m.mean for key, m in sorted(self._monitor_metrics.items())}

    @property
    def timeouts(self) -> int:
        """Items any reward timed out on: verdicts missing because of time."""
        return sum(running.timeouts for running in self._rewards.values())

    def timeout_lines(self) -> list[str]:
        """What ``score`` says of the verdicts time cost: per reward that timed out, how often (and how often at the
        backstop), then the rows whose every reward timed out, named."""
        lines = []
        for name, running in self._rewards.items():
            if running.timeouts:
                waited = f" ({running.backstops} at the wall-clock backstop)" if running.backstops else ""
                lines.append(f"reward {name!r} timed out on {running.timeouts} of {running.rows} rows{waited}")
        if self.timed_out:
            more = f" and {self.timed_out - len(self.timed_out_rows)} more" if self.timed_out > len(
                self.timed_out_rows) else ""
            lines.append(f"{self.timed_out} rows have no verdict: every reward timed out on them "
                         f"({', '.join(self.timed_out_rows)}{more})")
        return lines

    def per_reward(self) -> dict[str, dict[str, Any]]:
        return {name: running.as_dict() for name, running in self._rewards.items()}

    def summary(self, ensemble: Ensemble, alerts: Sequence[Mapping[str, Any]] | None = None) -> dict[str, Any]:
        """The object ``grpo-host score --json`` prints (with the monitors' ``alerts``, as dicts) and ``serve``'s
        ``/score`` answers with."""
        out = {"rows": self.rows, "scored": self.rows - self.bad, "bad_rows": self.bad, "failed_rows": self.failed,
               "unscored": self.unscored, "timed_out_rows": self.timed_out, "rewards": self.per_reward(),
               "weights": dict(zip(ensemble.names, ensemble.weights, strict=True))}
        if alerts is not None:
            out["monitors"] = {"metrics": self.monitor_metrics(), "alerts": list(alerts)}
        return out
