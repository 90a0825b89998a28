"""A weighted ensemble of rewards: scores, totals, metrics and the error policy.

The total follows TRL: the weighted sum over the rewards that applied to a
row (``nansum``), weight 0 meaning "log it, do not train on it".  What TRL
leaves implicit is made explicit here: per-reward coverage, error and timeout
counts, and the rows no reward scored, which get no total (None) and can be
made an error with ``strict``.

The error policy tells two kinds of failure apart.  A reward that raises on
one row was most likely handed a bad row or a hostile completion: under the
default ``on_error="auto"`` that row scores None, the error is kept with the
row it belongs to (:attr:`ScoreResult.row_errors`) and counted, and scoring
goes on.  A reward that raises on :data:`BUG_STREAK` rows in a row is broken,
not unlucky: training on its silence would waste the run, so the ensemble
stops there, naming the reward, its pack and the first error.
"""

from __future__ import annotations

import asyncio
import functools
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .rewards import BadValue, Reward, RewardError, Scored, completion_text, gather_bounded
from .reward_spec import SpecItem, parse_spec
from .workers import AsyncRunner, InlineRunner, Outcome, WorkerPool, failure

__all__ = [
    "BUG_STREAK", "DEFAULT_TIMEOUT", "Ensemble", "Member", "Moments", "RewardMetrics", "ScoreResult",
    "UnscoredRowsError",
]

DEFAULT_TIMEOUT = 30.0
"""Per-item seconds when neither the spec nor the reward sets a timeout."""

POOLS: dict[str, Any] = {
    "local": WorkerPool,
    "ray": lambda size: _ray_pool(size),
}
"""Where ``executor="process"`` items run: a class taking the worker count, with ``run(tasks, timeout)`` returning
one :class:`~grpo_host.workers.Outcome` per task, ``killed`` (workers replaced) and ``close()``.  ``ray`` sends them to
warm actors on a Ray cluster (:class:`grpo_host.ray_pool.RayPool`, imported on first use).  ``local`` is this
machine's :class:`~grpo_host.workers.WorkerPool`."""

BUG_STREAK = 32
"""Consecutive failed rows after which ``on_error="auto"`` stops: a reward failing that often is broken."""


class UnscoredRowsError(RewardError):
    """``strict`` is on and some rows were scored by no (weighted) reward."""


@dataclass(frozen=True)
class Member:
    """One reward of an ensemble, with its weight and policies."""

    reward: Reward
    weight: float = 1.0
    on_error: str = "auto"
    timeout: float | None = DEFAULT_TIMEOUT

    @property
    def name(self) -> str:
        return self.reward.name


@dataclass
class RewardMetrics:
    """Per-reward figures for one call of :meth:`Ensemble.score`."""

    mean: float | None
    std: float | None
    coverage: float
    errors: int
    timeouts: int
    seconds: float
    counts: dict[str, float] = field(default_factory=dict)
    """The reward's own counters (see :class:`grpo_host.Scored`), summed over the batch."""


@dataclass
class ScoreResult:
    """What :meth:`Ensemble.score` returns."""

    values: dict[str, list[float | None]]
    total: list[float | None]
    metrics: dict[str, RewardMetrics]
    unscored: int = 0
    errors: list[str] = field(default_factory=list)
    """Every error counted in this batch, one message each, naming reward, pack and row."""
    row_errors: dict[int, list[str]] = field(default_factory=dict)
    """The same messages by row index: what each row that a reward could not score carries."""


@dataclass
class Moments:
    """Count, mean and sample standard deviation of a stream of scores (Welford's update).

    The one place these figures are computed: per batch here, over a whole
    file in ``grpo-host score`` (where keeping every value would grow with
    the file), per log step on the MLX host.  None values are skipped.
    """

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


def _metrics(values: list[float | None], errors: int, timeouts: int, seconds: float,
             counts: dict[str, float]) -> RewardMetrics:
    m = Moments().add(values)
    return RewardMetrics(mean=m.mean, std=m.std, coverage=m.n / len(values) if values else 0.0,
                         errors=errors, timeouts=timeouts, seconds=seconds, counts=counts)


class Ensemble:
    """Rewards with weights, scored together.

    Build one with :meth:`from_spec`; call :meth:`score` per batch.  Process
    workers and the inline thread are created on first use and reused; call
    :meth:`close` (or use ``with``) to stop the workers early.
    """

    def __init__(self, members: Sequence[Member], *, strict: bool = False, workers: int | None = None,
                 pool: str = "local") -> None:
        if not members:
            raise ValueError("an ensemble needs at least one reward")
        if pool not in POOLS:
            raise ValueError(f"unknown worker pool {pool!r}; choose one of {', '.join(POOLS)}")
        self.members = list(members)
        self.strict = strict
        self._workers = workers
        self._pool_kind = pool
        self._pool: Any = None
        self._inline = InlineRunner()
        self._async = AsyncRunner()
        self._streaks = {m.name: 0 for m in self.members}
        self.counts: dict[str, dict[str, float]] = {m.name: {} for m in self.members}
        """Every member's counters summed over all batches scored so far (what ``summary.json`` records)."""

    @classmethod
    def from_spec(
        cls,
        spec: str | Sequence[Mapping[str, Any] | str] | Sequence[SpecItem],
        *,
        plugins: Any = None,
        strict: bool = False,
        workers: int | None = None,
        pool: str = "local",
    ) -> Ensemble:
        """Build an ensemble from a spec string or YAML-style list.

        :param plugins: a :class:`grpo_host.plugins.Plugins` to look names up
            in; defaults to the installed plugins.
        :param pool: where ``executor="process"`` rewards run (see :data:`POOLS`).
        Unknown names raise with the available names; bad parameters raise with
        the reward's parameter schema.
        """
        from .plugins import default_plugins

        registry = (plugins or default_plugins()).registry
        items = spec if spec and all(isinstance(s, SpecItem) for s in spec) else parse_spec(spec)  # type: ignore[arg-type]
        members = []
        for item in items:
            base = registry.reward(item.name)
            timeout = item.timeout if item.timeout is not None else (base.timeout or DEFAULT_TIMEOUT)
            members.append(Member(base.bind(item.params), item.weight, item.on_error, timeout))
        return cls(members, strict=strict, workers=workers, pool=pool)

    @property
    def names(self) -> list[str]:
        return [m.name for m in self.members]

    @property
    def weights(self) -> list[float]:
        return [m.weight for m in self.members]

    @property
    def rewards(self) -> list[Reward]:
        return [m.reward for m in self.members]

    def score(
        self,
        completions: Sequence[Any],
        prompts: Sequence[Any] | None = None,
        *,
        row_ids: Sequence[Any] | None = None,
        **columns: Sequence[Any],
    ) -> ScoreResult:
        """Score a batch of completions with every member.

        :param completions: strings or chat message lists, one per row.
        :param prompts: the prompts, one per row (optional).
        :param row_ids: labels used in error messages (default: 0-based index).
        :param columns: dataset columns, one list entry per row.
        """
        n = len(completions)
        for key, col in columns.items():
            if len(col) != n:
                raise ValueError(f"column {key!r} has {len(col)} values for {n} completions")
        texts = [completion_text(c) for c in completions]
        prompts = list(prompts) if prompts is not None else [None] * n
        row_ids = list(row_ids) if row_ids is not None else list(range(n))
        values: dict[str, list[float | None]] = {}
        metrics: dict[str, RewardMetrics] = {}
        errors: list[str] = []
        row_errors: dict[int, list[str]] = {}
        # Async members start first and are collected last: their items overlap each other and the
        # synchronous members' work.
        runs: dict[str, tuple[Any, ...]] = {}
        for member in self.members:
            if member.reward.is_async:
                future = self._async.submit(_run_async(member, texts, prompts, columns))
                runs[member.name] = (time.perf_counter(), future)
        for member in self.members:
            if not member.reward.is_async:
                start = time.perf_counter()
                runs[member.name] = (start, self._run(member, texts, prompts, columns), time.perf_counter() - start)
        for member in self.members:
            if member.reward.is_async:
                start, future = runs[member.name]
                outcomes = self._collect(member, future, n)
                seconds = time.perf_counter() - start
            else:
                _, outcomes, seconds = runs[member.name]
            vals, failed, timeouts, counts = self._account(member, outcomes, row_ids, errors, row_errors)
            values[member.name] = vals
            metrics[member.name] = _metrics(vals, failed, timeouts, seconds, counts)
            total_counts = self.counts[member.name]
            for key, count in counts.items():
                total_counts[key] = total_counts.get(key, 0.0) + count
        total, unscored = self.weighted_total(values, n)
        if unscored and self.strict:
            rows = [row_ids[i] for i in range(n) if total[i] is None]
            raise UnscoredRowsError(f"{unscored} rows were scored by no reward (strict): rows {rows[:10]}")
        return ScoreResult(values, total, metrics, unscored, errors, row_errors)

    def _account(self, member: Member, outcomes: Sequence[Outcome], row_ids: list[Any], errors: list[str],
                 row_errors: dict[int, list[str]]) -> tuple[list[float | None], int, int, dict[str, float]]:
        """One member's outcomes as values, error and timeout counts and summed counters; failures are recorded
        in ``errors`` and ``row_errors`` (or raise, as the member's policy says)."""
        vals: list[float | None] = []
        failed = timeouts = 0
        counts: dict[str, float] = {}
        for i, out in enumerate(outcomes):
            if out.status == "ok":
                try:  # the executors hand back Scored, already checked where the reward ran; anything else is checked
                    scored = out.value if out.value.__class__ is Scored else Scored.of(out.value)
                except BadValue as exc:
                    out = Outcome("error", error=exc)
                else:
                    vals.append(scored.value)
                    for key, count in scored.counts.items():
                        counts[key] = counts.get(key, 0.0) + count
                    self._streaks[member.name] = 0
                    continue
            vals.append(None)
            if out.status == "unusable":
                raise RewardError(f"reward {member.name!r} ({member.reward.origin}) cannot run: {_text(out.error)}")
            if out.status == "timeout":
                timeouts += 1
                continue
            failed += 1
            message = self._failure(member, out.error, row_ids, i)
            errors.append(message)
            row_errors.setdefault(i, []).append(message)
        return vals, failed, timeouts, counts

    def _failure(self, member: Member, error: Any, row_ids: list[Any], i: int) -> str:
        """The message for a failed row; raises when the member's policy says this failure stops the run."""
        where = f"rows {row_ids[0]}..{row_ids[-1]}" if member.reward.batch else f"row {row_ids[i]}"
        message = f"reward {member.name!r} ({member.reward.origin}) failed on {where}: {_text(error)}"
        cause = error if isinstance(error, BaseException) else None
        if member.on_error == "raise":
            raise RewardError(message) from cause
        self._streaks[member.name] += 1
        if member.on_error == "auto" and self._streaks[member.name] >= BUG_STREAK:
            raise RewardError(
                f"reward {member.name!r} ({member.reward.origin}) failed on {BUG_STREAK} rows in a row, so it is "
                f"broken rather than handed bad rows; stopping (set on_error=skip to go on regardless). "
                f"Last error: {message}"
            ) from cause
        return message

    def score_rows(
        self,
        rows: Sequence[Mapping[str, Any]],
        *,
        completions: Sequence[Any] | None = None,
        row_ids: Sequence[Any] | None = None,
        completion_ids: Sequence[Any] | None = None,
    ) -> ScoreResult:
        """Score rows as datasets hold them: ``completion`` (unless ``completions`` is given), ``prompt``, columns.

        Every key of any row other than ``completion`` and ``prompt`` becomes
        a column (None where a row lacks it); ``completion_ids`` (token ids
        per completion) reach length-based rewards.  This is the one way rows
        reach :meth:`score`, for ``grpo-host score``, both training hosts and
        the testing helpers.
        """
        if completions is None:
            completions = [row["completion"] for row in rows]
        keys = sorted({k for row in rows for k in row} - {"completion", "prompt"})
        columns = {k: [row.get(k) for row in rows] for k in keys}
        if completion_ids is not None and len(completion_ids) == len(completions):
            columns["completion_ids"] = list(completion_ids)
        return self.score(completions, [row.get("prompt") for row in rows], row_ids=row_ids, **columns)

    def _collect(self, member: Member, future: Any, n: int) -> list[Outcome]:
        """An async member's outcomes, or timeouts for all its items when its coroutines blocked the event loop."""
        reward = member.reward
        rounds = 1 if reward.batch else -(-n // reward.concurrency)
        backstop = None if member.timeout is None else member.timeout * rounds + 1.0
        try:
            return self._async.wait(future, backstop)
        except TimeoutError:
            return [Outcome("timeout")] * n

    def _run(self, member: Member, texts: list[str], prompts: list[Any], columns: Mapping[str, Sequence[Any]]):
        reward, n = member.reward, len(texts)
        if reward.batch:
            task = (reward.score_items, (texts, prompts, columns), {})
            out = self._inline.call(task, member.timeout)
            if out.status != "ok":
                return [out] * n
            return [Outcome("ok", v) for v in out.value]
        tasks = [(reward.score_item, (texts[i], prompts[i]), {k: v[i] for k, v in columns.items()}) for i in range(n)]
        if reward.executor == "process":
            if self._pool is None:
                self._pool = POOLS[self._pool_kind](self._workers)
            return self._pool.run(tasks, member.timeout)
        return [self._inline.call(task, member.timeout) for task in tasks]

    def weighted_total(self, values: dict[str, list[float | None]], n: int) -> tuple[list[float | None], int]:
        """Per-row totals over the weighted members that applied (None when none did), and how many rows had none.

        The one place the weighting rule lives; hosts that compute rows' totals themselves call it too.
        """
        total: list[float | None] = []
        for i in range(n):
            got = [(m.weight, values[m.name][i]) for m in self.members if m.weight != 0]
            applied = [w * v for w, v in got if v is not None]
            total.append(sum(applied) if applied else None)
        return total, sum(t is None for t in total)

    @property
    def worker_pids(self) -> list[int]:
        """The local worker processes' ids (empty before the first process-executor item, or on another pool)."""
        return list(getattr(self._pool, "pids", ()))

    @property
    def replaced_workers(self) -> int:
        """How many worker processes were killed and replaced (timeouts the worker's own alarm could not stop)."""
        return self._pool.killed if self._pool is not None else 0

    def close(self) -> None:
        self._async.close()
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def __enter__(self) -> Ensemble:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()



def _text(error: Any) -> str:
    """An error as messages show it: an exception with its type (a bad value needs none), a worker's text as sent."""
    if isinstance(error, BaseException) and not isinstance(error, BadValue):
        return f"{type(error).__name__}: {error}"
    return str(error)


def _ray_pool(size: int | None) -> Any:
    from .ray_pool import RayPool  # Ray is imported only by a run that asks for it

    return RayPool(size)


async def _run_async(member: Member, texts: list[str], prompts: list[Any],
                     columns: Mapping[str, Sequence[Any]]) -> list[Outcome]:
    """An async member's items, ``concurrency`` at a time, each under the member's timeout (waiting for a slot
    is not part of it); a batch reward is one call under the timeout."""
    reward, n = member.reward, len(texts)

    async def bounded(call: Any) -> Outcome:
        try:
            return Outcome("ok", await asyncio.wait_for(call(), member.timeout))
        except TimeoutError:
            return Outcome("timeout")
        except Exception as exc:
            return failure(exc)

    if reward.batch:
        out = await bounded(functools.partial(reward.ascore_items, texts, prompts, columns))
        return [Outcome("ok", v) for v in out.value] if out.status == "ok" else [out] * n
    return await gather_bounded(reward.concurrency, [
        functools.partial(bounded, functools.partial(reward.ascore_item, texts[i], prompts[i],
                                                     **{k: v[i] for k, v in columns.items()}))
        for i in range(n)])
