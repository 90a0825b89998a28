"""A weighted ensemble of rewards: ``score() = run, account, total``.

An :class:`Ensemble` is members (a reward with its weight, error policy and
timeout) and one method that matters, :meth:`Ensemble.score`: it runs every
member's items on that member's executor
(:mod:`grpo_host.scoring.executors`), accounts each outcome under the error
policy (:mod:`grpo_host.scoring.policy`) into values and statistics
(:mod:`grpo_host.scoring.stats`), and adds the weighted total.

The total follows TRL: the weighted sum over the rewards that applied to a
row (``nansum``), weight 0 meaning "log it, do not train on it".  What TRL
leaves implicit is made explicit here: per-reward coverage, error and timeout
counts, and the rows no reward scored, which get no total (None) and can be
made an error with ``strict``.

A per-turn member's value is what the ensemble's ``turn_reward``
(:class:`~grpo_host.scoring.turns.TurnRule`) makes of its turns, so every
trainer and the record see the number trained on; the turns themselves are
in :attr:`ScoreResult.turns`.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import math
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, Self, TypeGuard

from ..errors import UnscoredRowsError, UserError
from .calls import TIMED_OUT, Outcome, acall
from .contract import AsyncReward, Reward, ascore_row, gather_bounded, score_row
from .executors import AsyncRunner, Executor, InlineRunner, Stop, WorkerPool
from .policy import BUG_STREAK, OnError, Policy, check_on_error
from .spec import SpecItem
from .stats import Moments, RewardMetrics
from .turns import TurnRule

__all__ = ["BUG_STREAK", "DEFAULT_TIMEOUT", "Ensemble", "Member", "Moments", "RewardMetrics", "ScoreResult"]

DEFAULT_TIMEOUT = 30.0
"""Per-item seconds (CPU seconds for a synchronous reward: :mod:`grpo_host.scoring.clocks`) when neither the spec
nor the reward sets a timeout."""

class Pool(Executor, Protocol):
    """An executor for ``executor="process"`` items: one that counts the workers it killed and replaced."""

    killed: int


POOLS: dict[str, Callable[[int | None], Pool]] = {
    "local": WorkerPool,
    "ray": lambda size: _ray_pool(size),
}
"""Where ``executor="process"`` items run: a factory taking the worker count and returning a :class:`Pool` (an
:class:`~grpo_host.scoring.executors.Executor` with ``killed``: workers replaced).  ``ray`` sends them to warm actors
on a Ray cluster (:class:`grpo_host.scoring.ray_pool.RayPool`, imported on first use); ``local`` is this machine's
:class:`~grpo_host.scoring.executors.WorkerPool`."""


@dataclass(frozen=True)
class Member:
    """One reward of an ensemble, with its weight and policies."""

    reward: Reward
    weight: float = 1.0
    on_error: OnError = "auto"
    timeout: float | None = DEFAULT_TIMEOUT

    def __post_init__(self) -> None:
        who = f"reward {self.reward.name!r}"
        check_on_error(self.on_error, who)
        if not isinstance(self.weight, int | float) or isinstance(self.weight, bool) or not math.isfinite(self.weight):
            raise UserError(f"{who}: weight must be a finite number, not {self.weight!r}")
        if self.timeout is not None and not (isinstance(self.timeout, int | float) and 0 < self.timeout < math.inf):
            raise UserError(f"{who}: timeout must be a positive number of seconds or None, not {self.timeout!r}")

    @property
    def name(self) -> str:
        return self.reward.name

    @classmethod
    def of(cls, base: Reward, item: SpecItem) -> Member:
        """The member a spec item asks for: ``base`` bound to its parameters, with its weight and policies."""
        timeout = item.timeout if item.timeout is not None else (base.timeout or DEFAULT_TIMEOUT)
        return cls(base.bind(item.params), item.weight, item.on_error, timeout)


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
    failures: dict[int, dict[str, str]] = field(default_factory=dict)
    """Row index -> reward -> what became of an item that has no value from its reward: ``timeout``,
    ``backstop`` (it waited past the wall-clock backstop: :mod:`grpo_host.scoring.clocks`), ``skipped`` (not
    called: see :meth:`Ensemble.stopping_hung`), or the failure's kind (``raised``, ``bad value``, ``exited``,
    ``worker died``, ``host``; :data:`grpo_host.scoring.calls.Kind`)."""
    timed_out: list[int] = field(default_factory=list)
    """Row indices whose every reward timed out (or reached its backstop): rows with no verdict because of time,
    which ``grpo-host score`` counts and names, and which ``strict`` makes an error as any unscored row."""
    turns: dict[str, list[tuple[float | None, ...] | None]] = field(default_factory=dict)
    """Per-turn members only: each row's value per assistant turn (None where the reward gave no turns: it did not
    apply, or failed); their :attr:`values` are these combined by the ensemble's ``turn_reward``."""


class Ensemble:
    """Rewards with weights, scored together.

    Build one with :meth:`from_spec`; call :meth:`score` per batch.  Process
    workers and the inline thread are created on first use and reused; call
    :meth:`close` (or use ``with``) to stop the workers early.  ``turn_reward``
    (``episode``, ``sum``, ``discounted:GAMMA``) makes per-turn members' values.
    """

    def __init__(self, members: Sequence[Member], *, strict: bool = False, workers: int | None = None,
                 pool: str = "local", turn_reward: str | TurnRule = "episode") -> None:
        if not members:
            raise UserError("an ensemble needs at least one reward")
        if pool not in POOLS:
            raise UserError(f"unknown worker pool {pool!r}; choose one of {', '.join(POOLS)}")
        self.members = list(members)
        self.strict = strict
        try:
            self.turn_rule = TurnRule.parse(turn_reward)
        except ValueError as exc:
            raise UserError(str(exc)) from None
        self._workers = workers
        self._pool_kind = pool
        self._pool: Pool | None = None
        self._inline = InlineRunner()
        self._async = AsyncRunner()
        self._policy = Policy()
        self._hung: tuple[int, int] | None = None
        self.stopped: dict[str, str] = {}
        """Members called no more (see :meth:`stopping_hung`) -> why."""
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
        turn_reward: str | TurnRule = "episode",
    ) -> Self:
        """Build an ensemble from a spec string or YAML-style list, looking names up in ``plugins``.

        :param plugins: where names are looked up: anything with a ``registry``
            whose ``reward(name)`` returns the reward (a
            :class:`grpo_host.discovery.plugins.Plugins`).  Required here: the
            scoring core does not find plugins.  :class:`grpo_host.Ensemble`
            (:class:`grpo_host.discovery.build.Ensemble`, the plugin layer's
            subclass) defaults it to the installed plugins.
        :param pool: where ``executor="process"`` rewards run (see :data:`POOLS`).
        Unknown names raise with the available names; bad parameters raise with
        the reward's parameter schema.
        """
        from .spec import parse_spec

        if plugins is None:
            raise TypeError("grpo_host.scoring's Ensemble.from_spec needs plugins= (the scoring core does not find "
                            "plugins); grpo_host.Ensemble.from_spec looks names up in the installed ones")
        items = spec if _spec_items(spec) else parse_spec(spec)
        members = [Member.of(plugins.registry.reward(item.name), item) for item in items]
        return cls(members, strict=strict, workers=workers, pool=pool, turn_reward=turn_reward)

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
        """Score a batch of completions with every member: run, account, total.

        :param completions: strings or chat message lists, one per row.
        :param prompts: the prompts, one per row (optional).
        :param row_ids: labels used in error messages (default: 0-based index).
        :param columns: dataset columns, one list entry per row.
        """
        n = len(completions)
        for key, col in columns.items():
            if len(col) != n:
                raise ValueError(f"column {key!r} has {len(col)} values for {n} completions")
        items = _Items(list(completions), list(prompts) if prompts is not None else [None] * n, columns)
        row_ids = list(row_ids) if row_ids is not None else list(range(n))
        # Async members start first and are collected last: their items overlap each other and the
        # synchronous members' work.
        started = {m.name: self._start(m, items) for m in sorted(self.members, key=lambda m: not m.reward.is_async)}
        result = ScoreResult({}, [], {})
        for member in self.members:
            outcomes, seconds = started[member.name]()
            self._account(member, outcomes, seconds, row_ids, result)
        result.total, result.unscored = self.weighted_total(result.values, n)
        result.timed_out = [i for i, failed in sorted(result.failures.items())
                            if len(failed) == len(self.members) and all(f in TIMED_OUT for f in failed.values())]
        if result.unscored and self.strict:
            rows = [row_ids[i] for i in range(n) if result.total[i] is None]
            timed = f"; every reward timed out on {len(result.timed_out)} of them" if result.timed_out else ""
            raise UnscoredRowsError(
                f"{result.unscored} rows were scored by no reward (strict): rows {rows[:10]}{timed}")
        return result

    @contextlib.contextmanager
    def stopping_hung(self, in_a_row: int, in_all: int) -> Iterator[dict[str, str]]:
        """Within the block, a member whose items timed out or lost their worker process ``in_a_row`` times in a row, or
        ``in_all`` times in all, is called no more: its items left in that batch, and in every later one, are
        ``skipped`` (a per-item reward's items already running, or already handed to a worker in a chunk, finish under
        their timeout, sync or async; a batch reward
        is stopped between batches, each timed-out batch counting once). Yields :attr:`stopped`, the members stopped so
        far.

        A run waits out every timeout (a slow item is not a broken reward); the audit, which sends a reward
        hostile text for minutes, uses this so that a reward that hangs or crashes costs a few timeouts, not one
        per probe and row.  Afterwards the ensemble is as it was (a run's own ensemble, lent to its audit).
        """
        saved, policy, stopped = self._hung, self._policy, self.stopped
        self._hung, self._policy, self.stopped = (in_a_row, in_all), copy.deepcopy(policy), {}
        try:
            yield self.stopped
        finally:
            self._hung, self._policy, self.stopped = saved, policy, stopped

    def _stop(self, member: Member) -> Stop | None:
        """The executors' ``stop`` for ``member`` under :meth:`stopping_hung`; None outside it."""
        if self._hung is None:
            return None
        in_a_row, in_all = self._hung

        def stop(out: Outcome) -> bool:
            if member.name in self.stopped:
                return True
            if not self._policy.hung(member.name, out, in_a_row, in_all):
                return False
            row, total = self._policy.hangs(member.name)
            how = "timed out" if out.timed_out else "lost its worker process"
            what = f"{how} on {in_a_row} items in a row" if row >= in_a_row else (
                f"timed out or lost its worker process on {total} items in all (the last {how})")
            self.stopped[member.name] = f"{what}, so it was called no more"
            return True

        return stop

    def _start(self, member: Member, items: _Items) -> Callable[[], tuple[list[Outcome], float]]:
        """Run ``member``'s items (async ones: start them); returns what collects its outcomes and seconds."""
        reward, n, start = member.reward, len(items.completions), time.perf_counter()
        stop = self._stop(member)
        if member.name in self.stopped:
            skipped = [Outcome("skipped")] * n
            return lambda: (skipped, 0.0)
        if isinstance(reward, AsyncReward):  # the rewards whose is_async is true
            filled: list[Outcome | None] = [None] * n  # filled as items finish: a blocked loop loses only the rest
            future = self._async.submit(_run_async(member, reward, items, filled, None if reward.batch else stop))
            rounds = 1 if reward.batch else -(-n // reward.concurrency)
            backstop = None if member.timeout is None else member.timeout * rounds + 1.0

            def collect() -> tuple[list[Outcome], float]:
                with contextlib.suppress(TimeoutError):  # its coroutines blocked the event loop
                    self._async.wait(future, backstop)
                lost = [i for i, out in enumerate(filled) if out is None]  # what the blocked loop never finished
                outcomes = [out or Outcome("timeout") for out in filled]
                if stop is not None:  # a batch counts once it is in (a later batch is not called); items counted
                    # as they finished (_run_async), and here those the loop lost
                    for out in outcomes[:1] if reward.batch else [outcomes[i] for i in lost]:
                        stop(out)
                return outcomes, time.perf_counter() - start

            return collect
        if reward.batch:  # one call: stopped, if at all, before the next batch
            outcomes = _spread(self._inline.run([(reward.score_items, items.batch_args(reward), {})],
                                                member.timeout, stop)[0], n)
        else:
            outcomes = self._executor(reward).run(items.tasks(reward, functools.partial(score_row, reward)),
                                                  member.timeout, stop)
        done = outcomes, time.perf_counter() - start
        return lambda: done

    def _executor(self, reward: Reward) -> Executor:
        if reward.executor != "process":
            return self._inline
        if self._pool is None:
            self._pool = POOLS[self._pool_kind](self._workers)
        return self._pool

    def _account(self, member: Member, outcomes: Sequence[Outcome], seconds: float, row_ids: list[Any],
                 result: ScoreResult) -> None:
        """One member's outcomes into ``result``: values, statistics and every failure's message under its policy.

        Values arrive checked (a :class:`~grpo_host.Scored`): every executor runs the reward's own
        ``score_items`` (per item: :func:`~grpo_host.scoring.contract.score_row`), which checks what the
        function returned.
        """
        vals: list[float | None] = []
        turns: list[tuple[float | None, ...] | None] = []
        failed = timeouts = backstops = 0
        counts: dict[str, float] = {}
        for i, out in enumerate(outcomes):
            turns.append(tuple(out.value.turns) if out.status == "ok" and out.value.turns is not None else None)
            if out.status == "ok":
                vals.append(self.turn_rule.combine(out.value.value, out.value.turns))
                for key, count in out.value.counts.items():
                    counts[key] = counts.get(key, 0.0) + count
                self._policy.succeeded(member.name)
                continue
            vals.append(None)
            if out.status == "unusable":
                raise self._policy.unusable(member, out.failure)
            result.failures.setdefault(i, {})[member.name] = out.failure.kind if out.status == "error" else out.status
            if out.status == "skipped":
                continue
            if out.timed_out:
                timeouts += 1
                backstops += out.status == "backstop"
                continue
            failed += 1
            where = f"rows {row_ids[0]}..{row_ids[-1]}" if member.reward.batch else f"row {row_ids[i]}"
            message = self._policy.failed(member, out.failure, where)
            result.errors.append(message)
            result.row_errors.setdefault(i, []).append(message)
        result.values[member.name] = vals
        if member.reward.per_turn:
            result.turns[member.name] = turns
        result.metrics[member.name] = RewardMetrics.of(vals, failed, timeouts, seconds, counts, backstops)
        total_counts = self.counts[member.name]
        for key, count in counts.items():
            total_counts[key] = total_counts.get(key, 0.0) + count

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
        reach :meth:`score`, for ``grpo-host score``, both training backends and
        the testing helpers.
        """
        if completions is None:
            completions = [row["completion"] for row in rows]
        keys = sorted({k for row in rows for k in row} - {"completion", "prompt"})
        columns = {k: [row.get(k) for row in rows] for k in keys}
        if completion_ids is not None and len(completion_ids) == len(completions):
            columns["completion_ids"] = list(completion_ids)
        return self.score(completions, [row.get("prompt") for row in rows], row_ids=row_ids, **columns)

    def weighted_total(self, values: dict[str, list[float | None]], n: int) -> tuple[list[float | None], int]:
        """Per-row totals over the weighted members that applied (None when none did), and how many rows had none.

        The one place the weighting rule lives; backends that compute rows' totals themselves call it too.
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

    @property
    def recycled_workers(self) -> int:
        """How many worker processes were replaced after their own alarm stopped a call (see WorkerPool)."""
        return getattr(self._pool, "recycled", 0)

    def close(self) -> None:
        self._async.close()
        self._inline.close()
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def __enter__(self) -> Ensemble:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class _Items:
    """One batch as every member receives it: completions (read once as texts, or as trajectories for the
    members that read those), prompts and columns, per item or whole."""

    completions: list[Any]
    prompts: list[Any]
    columns: Mapping[str, Sequence[Any]]
    _read: dict[bool, list[Any]] = field(default_factory=dict)

    def inputs(self, reward: Reward) -> list[Any]:
        """What ``reward`` reads of each completion: its text, or its :class:`~grpo_host.scoring.trajectory.Trajectory`
        (small, plain data: it pickles to worker processes as the text does)."""
        if reward.trajectory not in self._read:
            self._read[reward.trajectory] = [reward.reads(c) for c in self.completions]
        return self._read[reward.trajectory]

    def batch_args(self, reward: Reward) -> tuple[Any, ...]:
        return self.inputs(reward), self.prompts, self.columns

    def row(self, i: int) -> dict[str, Any]:
        return {k: v[i] for k, v in self.columns.items()}

    def tasks(self, reward: Reward,
              fn: Callable[..., Any]) -> list[tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]]:
        inputs = self.inputs(reward)
        return [(fn, (inputs[i], self.prompts[i]), self.row(i)) for i in range(len(inputs))]


def _spec_items(spec: str | Sequence[Any]) -> TypeGuard[Sequence[SpecItem]]:
    """Whether ``spec`` is already parsed: a non-empty sequence of :class:`SpecItem`."""
    return bool(spec) and all(isinstance(s, SpecItem) for s in spec)


def _spread(out: Outcome, n: int) -> list[Outcome]:
    """A batch call's outcome as one per row: its values when it succeeded, else its failure for every row."""
    return [Outcome("ok", v) for v in out.value] if out.status == "ok" else [out] * n


def _ray_pool(size: int | None) -> Pool:
    from .ray_pool import RayPool  # Ray is imported only by a run that asks for it

    return RayPool(size)


async def _run_async(member: Member, reward: AsyncReward, items: _Items, done: list[Outcome | None],
                     stop: Stop | None = None) -> None:
    """An async member's items (``reward`` is ``member.reward``) into ``done``, ``concurrency`` at a time, each under
    the member's timeout (waiting for a slot is not part of it), each outcome as soon as it is known; a batch reward
    is one call under the timeout.

    ``stop`` (per-item rewards, :meth:`Ensemble.stopping_hung`) sees each outcome as it comes, as the executors
    do for a sync reward: once it says stop, the items not yet started are ``skipped``, so an async reward whose
    items hang costs a few timeouts, not one per round of ``concurrency`` over the whole batch."""
    inputs = items.inputs(reward)
    if reward.batch:
        done[:] = _spread(await acall(functools.partial(reward.ascore_items, *items.batch_args(reward)),
                                      member.timeout), len(inputs))
        return
    stopped = False

    async def one(i: int) -> None:
        nonlocal stopped
        if stopped:
            done[i] = Outcome("skipped")
            return
        done[i] = out = await acall(functools.partial(ascore_row, reward, inputs[i], items.prompts[i],
                                                      **items.row(i)), member.timeout)
        stopped = stop is not None and stop(out)

    await gather_bounded(reward.concurrency, [functools.partial(one, i) for i in range(len(inputs))])
