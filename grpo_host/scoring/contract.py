"""The reward contract: the :class:`Reward` record and the :func:`reward` decorator.

A reward is a plain function plus a declaration of what it needs (dataset
columns and their types, a pydantic parameter model) so the host can check a
dataset before anything is generated.  The declaration travels with the
function, which is why ``@reward`` returns a :class:`Reward` object instead of
the bare function: the object is what a pack registers, what the CLI lists,
and (through ``__call__``) a ready-made TRL reward function.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import math
import numbers
import sys
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, overload

from ..errors import RewardError, UserError
from .trajectory import Trajectory, completion_text

if TYPE_CHECKING:  # pydantic is imported where it is used: listing rewards stays cheap
    from pydantic import BaseModel

__all__ = ["AsyncReward", "Column", "Reward", "Scored", "ascore_row", "completion_text", "reward", "score_row"]

Executor = Literal["inline", "process"]


class BadValue(ValueError):
    """A reward returned something outside the contract (inf, a non-number, a wrong count)."""


_SIZED = (str, list, dict, tuple)


def _is_empty(value: Any) -> bool:
    return value is None or (not value and isinstance(value, _SIZED))


@dataclass(frozen=True, slots=True)
class Column:
    """One required column, or an any-of group of columns sharing one type.

    ``names`` has one entry for a plain column and several for a group such as
    ("expected", "answer"), satisfied when any one is present and non-empty.
    ``empty_ok``: an empty value ("", [], {}) is a value, not a gap (the
    schema ``{}`` accepts everything); only None is then empty.
    """

    names: tuple[str, ...]
    type: Any = str
    empty_ok: bool = False

    @property
    def label(self) -> str:
        return " or ".join(self.names)

    @property
    def type_label(self) -> str:
        """The declared type as listings print it (``str``, ``list[IOCase] | str``)."""
        tp = self.type
        return tp.__name__ if isinstance(tp, type) else str(tp).replace("typing.", "")

    def problem(self, row: Mapping[str, Any]) -> tuple[str, str] | None:
        """Return ``(column, problem)`` for the first thing wrong in ``row``, or None.

        Problems are ``missing`` (no such key), ``empty`` (None, "", [], {}) and
        ``wrong type``; a plain class is checked with ``isinstance`` (fast path
        for the common ``str``), anything else through a pydantic TypeAdapter.
        This runs once per row and column in ``data check``: keep it lean.
        """
        if len(self.names) == 1:  # the common case, without the any-of bookkeeping
            name = self.names[0]
            if name not in row:
                return name, "missing"
            value = row[name]
            if value is None or (not self.empty_ok and _is_empty(value)):
                return name, "empty"
            return None if self._type_ok(value) else (name, self._wrong(value))
        present = [n for n in self.names if n in row]
        if not present:
            return self.label, "missing"
        filled = [n for n in present if row[n] is not None and (self.empty_ok or not _is_empty(row[n]))]
        if not filled:
            return self.label, "empty"
        if any(self._type_ok(row[name]) for name in filled):
            return None
        return filled[0], self._wrong(row[filled[0]])

    def _wrong(self, value: Any) -> str:
        return f"wrong type: expected {self.type_label}, got {type(value).__name__}"

    def _type_ok(self, value: Any) -> bool:
        if value.__class__ is self.type:  # fast path: a str column holding a str
            return True
        if self.type is Any:
            return True
        if self.type is float:
            return isinstance(value, numbers.Real) and not isinstance(value, bool)
        if isinstance(self.type, type) and not hasattr(self.type, "model_validate"):
            return isinstance(value, self.type)
        return _validates(self.type, value)


def _validates(tp: Any, value: Any) -> bool:
    from pydantic import TypeAdapter, ValidationError

    adapter = _ADAPTERS.get(id(tp))
    if adapter is None:
        adapter = _ADAPTERS[id(tp)] = TypeAdapter(tp)
    try:
        adapter.validate_python(value, strict=False)
    except ValidationError:
        return False
    return True


_ADAPTERS: dict[int, Any] = {}


def construct(factory: Callable[..., Any], model: type[BaseModel] | None, params: Mapping[str, Any] | None,
              who: str) -> Any:
    """``factory(validated params)`` (``factory()`` when there is no parameter model): how monitors and
    environments are made from a config's parameters; a :class:`ValueError` names ``who`` and what is wrong."""
    if model is None:
        if params:
            raise UserError(f"{who} takes no parameters, got {sorted(params)}")
        return factory()
    from pydantic import ValidationError

    try:
        bound = model.model_validate(dict(params or {}))
    except ValidationError as exc:
        raise UserError(f"bad parameters for {who}:\n{exc}") from None
    return factory(bound)


def required_columns(requires: Mapping[str | tuple[str, ...], Any], empty_ok: Sequence[str] = ()) -> tuple[Column, ...]:
    cols = []
    for key, tp in requires.items():
        names = (key,) if isinstance(key, str) else tuple(key)
        if not names or not all(isinstance(n, str) and n for n in names):
            raise TypeError(f"requires key {key!r}: expected a column name or a tuple of names")
        cols.append(Column(names, tp, empty_ok=bool(set(names) & set(empty_ok))))
    unknown = set(empty_ok) - {n for col in cols for n in col.names}
    if unknown:
        raise TypeError(f"empty_ok names {sorted(unknown)}, which are not required columns")
    return tuple(cols)


@dataclass(frozen=True, slots=True)
class Scored:
    """A score plus counters: what a reward returns when a row carries a fact that is not a score.

    ``value`` is the score (a float or None, as a plain return value would
    be).  ``counts`` maps counter names to numbers that the ensemble adds up
    per reward over every row of a batch and reports beside the mean, as
    ``<reward>/<counter>`` (``code/unisolated``: rows whose programs ran
    without a sandbox).  Counters are how a reward makes a
    property of its own verdicts visible in ``score`` summaries, training
    logs and ``summary.json`` without bending the score.
    """

    value: Any
    counts: Mapping[str, float] = field(default_factory=dict)
    turns: Sequence[float | None] | None = None
    """A per-turn reward's value for each assistant turn (None: a reward without turns); see
    :mod:`grpo_host.scoring.turns`."""

    @staticmethod
    def of(value: Any) -> Scored:
        """A reward's return value as a :class:`Scored` with a checked value and counts, or raise :class:`BadValue`."""
        if value.__class__ is not Scored:
            return Scored(_coerce(value))
        if value.turns is not None:
            raise BadValue("returned turn values, but the reward is not declared per_turn")
        return Scored(_coerce(value.value), _counts(value.counts))

    @staticmethod
    def of_turns(value: Any, turns: int | None) -> Scored:
        """A per-turn reward's return value for a rollout of ``turns`` assistant turns, checked: a list with one
        float or None per turn, a :class:`Scored` holding such a list as ``turns`` (its ``value`` the episode
        value), or None (the reward does not apply); without an episode value it is the sum of the turn values.
        Anything else, a wrong count, NaN or inf is a :class:`BadValue` saying which turn.  ``turns`` None: the
        count is not known (an environment's own reward, which TRL asks for without the trajectory)."""
        if value is None:
            return Scored(None)
        scored = value if value.__class__ is Scored else Scored(None, turns=value)
        raw = scored.turns
        if not isinstance(raw, Sequence) or isinstance(raw, str | bytes):
            raise BadValue(f"returned {type(raw).__name__} {raw!r:.60} (a per_turn reward returns a list with one "
                           "value per assistant turn)")
        if turns is not None and len(raw) != turns:
            plural = "" if turns == 1 else "s"
            raise BadValue(f"returned {len(raw)} turn values for a rollout of {turns} assistant turn{plural}")
        values = tuple(_turn_value(v, t) for t, v in enumerate(raw, 1))
        episode = _coerce(scored.value)
        if episode is None:
            given = [v for v in values if v is not None]
            episode = math.fsum(given) if given else None
        return Scored(episode, _counts(scored.counts), values)


def _counts(counts: Mapping[str, Any]) -> dict[str, float]:
    out = {}
    for key, count in counts.items():
        if not isinstance(key, str) or not isinstance(count, bool | numbers.Real) or not math.isfinite(count):
            raise BadValue(f"returned a count {key!r}: {count!r} (counts map names to finite numbers)")
        out[key] = float(count)
    return out


def _turn_value(value: Any, turn: int) -> float | None:
    """One turn's value: a finite number or None; NaN too is refused here (a turn without a value is None)."""
    if value is None:
        return None
    if isinstance(value, bool | numbers.Real) and math.isfinite(float(value)):
        return float(value)
    shown = f"{type(value).__name__} {value!r:.60}" if not isinstance(value, numbers.Real) else repr(float(value))
    raise BadValue(f"returned {shown} for turn {turn} (each turn's value is a finite number or None)")


def _coerce(value: Any) -> float | None:
    """Turn a reward's return value into a float or None, or raise :class:`BadValue`."""
    if value is None:
        return None
    if isinstance(value, bool | numbers.Real):
        out = float(value)
        if math.isnan(out):
            return None
        if math.isinf(out):
            raise BadValue(f"returned {out} (rewards must be finite)")
        return out
    raise BadValue(f"returned {type(value).__name__} {value!r:.60} (expected a float or None)")


@dataclass(frozen=True, eq=False)
class Reward:
    """A reward function with its declaration.

    Instances are made by :func:`reward`; :meth:`bind` returns a copy carrying
    validated parameters, and the registrar stamps ``pack``/``version``.

    Calling an instance follows TRL's reward-function contract
    (``prompts=, completions=, completion_ids=, **columns`` in, one float or
    None per completion out), so a registered reward can be passed straight to
    ``trl.GRPOTrainer(reward_funcs=[...])``.  Columns are the keyword
    arguments whose value is a list with one entry per completion, plus
    ``completion_ids``; anything else TRL passes (``trainer_state``,
    ``log_metric``) is not a column and is not forwarded.
    """

    name: str
    fn: Callable[..., Any]
    requires: tuple[Column, ...] = ()
    params: type[BaseModel] | None = None
    description: str = ""
    batch: bool = False
    executor: Executor = "inline"
    timeout: float | None = None
    check_row: Callable[[Mapping[str, Any]], str | None] | None = None
    examples: tuple[Mapping[str, Any], ...] = ()
    concurrency: int = 16
    trajectory: bool = False
    """The function's first argument is the rollout's :class:`~grpo_host.scoring.trajectory.Trajectory`, not text."""
    per_turn: bool = False
    """The function returns a value per assistant turn (:meth:`Scored.of_turns`); it reads trajectories."""
    pack: str = "?"
    """The distribution that registered it (``pip install``'s name), stamped by the registrar."""
    version: str = "?"
    bound: BaseModel | None = field(default=None)

    @property
    def __name__(self) -> str:
        """TRL names reward functions (and logs ``rewards/<name>/mean``) by ``__name__``."""
        return self.name

    def __reduce__(self):
        """Pickle by reference to the module attribute (for worker processes).

        A bound copy is rebuilt from the module-level reward and its params,
        so only names and plain values cross the process boundary.
        """
        module, qualname = self.fn.__module__, self.fn.__qualname__
        base = getattr(sys.modules.get(module), qualname, None)
        if not isinstance(base, Reward) or base.fn is not self.fn:
            raise TypeError(
                f"reward {self.name!r} ({self.origin}) is not a module-level @reward, so it cannot run "
                "in a worker process; use executor='inline'"
            )
        params = self.bound.model_dump() if self.bound is not None else None
        return _rebuild, (module, qualname, self.pack, self.version, params)

    @property
    def origin(self) -> str:
        return f"pack {self.pack} {self.version}"

    def bind(self, params: Mapping[str, Any] | None = None) -> Reward:
        """Return a copy with validated parameters (the model's defaults when None).

        Raises :class:`ValueError` naming the reward and listing its parameter
        schema when ``params`` does not fit the declared model.
        """
        if self.params is None:
            if params:
                raise UserError(f"reward {self.name!r} ({self.origin}) takes no parameters, got {sorted(params)}")
            return self
        from pydantic import ValidationError

        try:
            bound = self.params.model_validate(dict(params or {}))
        except ValidationError as exc:
            raise UserError(
                f"bad parameters for reward {self.name!r} ({self.origin}):\n{exc}\n"
                f"parameters of {self.name!r}: {self.describe_params()}"
            ) from None
        more = getattr(bound, "requires", None)  # columns these parameters make the reward read
        if callable(more):
            return replace(self, bound=bound, requires=self.requires + required_columns(more()))
        return replace(self, bound=bound)

    def describe_params(self) -> str:
        if self.params is None:
            return "none"
        schema = self.params.model_json_schema()
        parts = []
        for key, prop in schema.get("properties", {}).items():
            kind = prop.get("type") or prop.get("enum") or "any"
            parts.append(f"{key} ({kind}, default {prop.get('default')!r}): {prop.get('description', '')}".rstrip(": "))
        return "; ".join(parts) or "none"

    def _kwargs(self) -> dict[str, Any]:
        if self.params is None:
            return {}
        return {"params": self.bound if self.bound is not None else self.params()}

    def score_items(
        self, completions: Sequence[Any], prompts: Sequence[Any] | None, columns: Mapping[str, Sequence[Any]]
    ) -> list[Scored]:
        """Score a batch: the function called once (batch) or once per item, each value checked.

        The one scoring method the rest is built on: TRL's ``__call__`` (the
        values), :meth:`score_one` (one row), and the ensemble, which runs a
        per-item reward one row at a time (:func:`score_row`) on its executors
        with timeouts and the error policy.  Raises :class:`BadValue` on a value
        that is not a float or None, or a batch function's wrong count.
        """
        n = len(completions)
        prompts = list(prompts) if prompts is not None else [None] * n
        inputs, kwargs = [self.reads(c) for c in completions], self._kwargs()
        if self.batch:
            return self._batch_values(self.fn(inputs, prompts=prompts, **columns, **kwargs), inputs)
        return [self.checked(self.fn(inputs[i], prompt=prompts[i], **{k: v[i] for k, v in columns.items()}, **kwargs),
                             inputs[i]) for i in range(n)]

    def checked(self, value: Any, read: Any) -> Scored:
        """What the function returned for the completion it read as ``read``, checked against the contract: a
        value (:meth:`Scored.of`), or for a ``per_turn`` reward a value per turn of ``read``
        (:meth:`Scored.of_turns`)."""
        return Scored.of_turns(value, read.turns) if self.per_turn else Scored.of(value)

    def _batch_values(self, out: Any, inputs: Sequence[Any]) -> list[Scored]:
        """A batch function's return value checked: a list of one value per completion, each as :meth:`checked`."""
        if not isinstance(out, Sequence) or isinstance(out, str | bytes):
            raise BadValue(f"returned {type(out).__name__} (a batch reward returns a list)")
        if len(out) != len(inputs):
            raise BadValue(f"returned {len(out)} values for {len(inputs)} completions")
        return [self.checked(v, read) for v, read in zip(out, inputs, strict=True)]

    def score_one(self, completion: Any, prompt: Any = None, **columns: Any) -> float | None:
        """One completion's value (a float or None), with its columns as keywords: for tests, docs and
        ``rewards show``; raises :class:`BadValue` on a value outside the contract."""
        return score_row(self, completion, prompt, **columns).value

    def reads(self, completion: Any) -> Any:
        """What the function receives for ``completion``: its :class:`Trajectory` or, by default, its text."""
        return Trajectory.of(completion) if self.trajectory else completion_text(completion)

    @property
    def is_async(self) -> bool:
        return False

    def __call__(self, prompts: Sequence[Any] | None = None, completions: Sequence[Any] = (),
                 completion_ids: Sequence[Any] | None = None, **kwargs: Any) -> list[float | None]:
        with self._named():
            return [s.value for s in self.score_items(completions, prompts,
                                                      _trl_columns(len(completions), completion_ids, kwargs))]

    @contextlib.contextmanager
    def _named(self) -> Iterator[None]:
        """TRL's calls: a value outside the contract is a :class:`RewardError` naming the reward and its pack."""
        try:
            yield
        except BadValue as exc:
            raise RewardError(f"reward {self.name!r} ({self.origin}) {exc}") from exc


def score_row(reward: Reward, completion: Any, prompt: Any = None, **columns: Any) -> Scored:
    """One row through :meth:`Reward.score_items`: how the ensemble runs a per-item reward one item at a time,
    each under its own timeout, on any executor (a module function and a reward: it pickles to workers)."""
    return reward.score_items([completion], [prompt], {k: [v] for k, v in columns.items()})[0]


async def ascore_row(reward: AsyncReward, completion: Any, prompt: Any = None, **columns: Any) -> Scored:
    """:func:`score_row` for an async reward, through :meth:`AsyncReward.ascore_items`."""
    return (await reward.ascore_items([completion], [prompt], {k: [v] for k, v in columns.items()}))[0]


async def gather_bounded(limit: int, calls: Sequence[Callable[[], Awaitable[Any]]]) -> list[Any]:
    """Await every call, at most ``limit`` at a time; the results in order (an async reward's concurrency)."""
    import asyncio  # here, not at the top: every pack imports this module, and asyncio costs ~40 ms to import

    slots = asyncio.Semaphore(limit)

    async def one(call: Callable[[], Awaitable[Any]]) -> Any:
        async with slots:
            return await call()

    return list(await asyncio.gather(*(one(call) for call in calls)))


def _trl_columns(n: int, completion_ids: Sequence[Any] | None, kwargs: Mapping[str, Any]) -> dict[str, Sequence[Any]]:
    """The columns among what TRL passes a reward function: lists with one entry per completion, and token ids."""
    columns: dict[str, Sequence[Any]] = {k: v for k, v in kwargs.items() if isinstance(v, list | tuple) and len(v) == n}
    if completion_ids is not None and len(completion_ids) == n:  # token counts, for length-based rewards
        columns["completion_ids"] = completion_ids
    return columns


@dataclass(frozen=True, eq=False)
class AsyncReward(Reward):
    """A reward whose function is ``async def`` (a judge, a reward server): made by :func:`reward` for one.

    The ensemble awaits a batch's items concurrently, at most ``concurrency``
    at a time, beside the synchronous members, with each item's timeout
    enforced by ``asyncio.wait_for``.  As a TRL reward function it is an
    async callable (``async def __call__``), which TRL gathers with its other
    async reward functions on its own event loop.  The synchronous methods
    (``score_items``, ``score_one``) run the coroutine to completion with
    ``asyncio.run``, for ``rewards show`` and plain scripts; they cannot be
    called from inside a running event loop.
    """

    @property
    def is_async(self) -> bool:
        return True

    async def ascore_items(
        self, completions: Sequence[Any], prompts: Sequence[Any] | None, columns: Mapping[str, Sequence[Any]]
    ) -> list[Scored]:
        """:meth:`Reward.score_items` awaited: one call of a batch function, or the items ``concurrency`` at a
        time."""
        n = len(completions)
        prompts = list(prompts) if prompts is not None else [None] * n
        inputs, kwargs = [self.reads(c) for c in completions], self._kwargs()
        if self.batch:
            return self._batch_values(await self.fn(inputs, prompts=prompts, **columns, **kwargs), inputs)

        async def item(i: int) -> Scored:
            return self.checked(await self.fn(inputs[i], prompt=prompts[i], **{k: v[i] for k, v in columns.items()},
                                              **kwargs), inputs[i])

        return await gather_bounded(self.concurrency, [functools.partial(item, i) for i in range(n)])

    def score_items(
        self, completions: Sequence[Any], prompts: Sequence[Any] | None, columns: Mapping[str, Sequence[Any]]
    ) -> list[Scored]:
        import asyncio

        return asyncio.run(self.ascore_items(completions, prompts, columns))

    # An async override of a sync method, on purpose: TRL awaits reward functions that are async callables.
    async def __call__(  # type: ignore[override]
            self, prompts: Sequence[Any] | None = None, completions: Sequence[Any] = (),
            completion_ids: Sequence[Any] | None = None, **kwargs: Any) -> list[float | None]:
        columns = _trl_columns(len(completions), completion_ids, kwargs)
        with self._named():
            scored = await self.ascore_items(completions, prompts, columns)
        return [s.value for s in scored]


def _rebuild(module: str, qualname: str, pack: str, version: str, params: dict | None) -> Reward:
    import importlib

    base = getattr(importlib.import_module(module), qualname)
    out = replace(base, pack=pack, version=version)
    return out.bind(params) if params is not None else out


@overload
def reward(name: Callable[..., Any]) -> Reward: ...


@overload
def reward(
    name: str | None = None,
    *,
    requires: Mapping[str | tuple[str, ...], Any] | None = None,
    params: type[BaseModel] | None = None,
    description: str | None = None,
    batch: bool = False,
    executor: Executor = "inline",
    timeout: float | None = None,
    check_row: Callable[[Mapping[str, Any]], str | None] | None = None,
    examples: Sequence[Mapping[str, Any]] = (),
    concurrency: int = 16,
    empty_ok: Sequence[str] = (),
    trajectory: bool = False,
    per_turn: bool = False,
) -> Callable[[Callable[..., Any]], Reward]: ...


def reward(
    name: str | Callable[..., Any] | None = None,
    *,
    requires: Mapping[str | tuple[str, ...], Any] | None = None,
    params: type[BaseModel] | None = None,
    description: str | None = None,
    batch: bool = False,
    executor: Executor = "inline",
    timeout: float | None = None,
    check_row: Callable[[Mapping[str, Any]], str | None] | None = None,
    examples: Sequence[Mapping[str, Any]] = (),
    concurrency: int = 16,
    empty_ok: Sequence[str] = (),
    trajectory: bool = False,
    per_turn: bool = False,
) -> Reward | Callable[[Callable[..., Any]], Reward]:
    """Declare a function as a reward.

    :param name: the name used in specs; defaults to the function's name.
        ``@reward`` without arguments works too.
    :param requires: dataset columns the reward reads, mapped to their type.
        A tuple key is an any-of group: ``{("expected", "answer"): str}``.
    :param params: a pydantic model of the reward's parameters; the function
        then receives a validated instance as ``params=``.  A model with a
        ``requires(self)`` method (a mapping as ``requires`` takes) names the
        columns those parameters make the reward read (a function it calls,
        named by a parameter): :meth:`Reward.bind` adds them to the bound
        reward's ``requires``, so ``data check`` checks them too.
    :param description: one paragraph with the exact scoring rule; defaults
        to the function's docstring.
    :param batch: the function takes lists (``completions``, ``prompts=``, one
        list per column) and returns one value per completion.
    :param executor: ``"process"`` runs each item in a worker process with a
        hard timeout (for CPU-heavy or risky work); ``"inline"`` in this one.
    :param timeout: default per-item time bound in seconds.
    :param check_row: ``check_row(row) -> problem or None``, run by
        ``grpo-host data check`` on every row (e.g. "gold answer parses").
    :param examples: rows (``completion`` plus columns) shown by
        ``rewards show`` with the score each gets; an example's ``score``
        key is the score it must get, stated as TRL's docstring examples
        state their output, and checked by
        :func:`grpo_host.testing.check_examples` (``score`` is therefore
        not a column an example can carry).  ``params`` scores the example
        with those parameters; ``completions`` with ``scores`` is a group
        (several completions of one prompt, one score each) for a batch
        reward whose score depends on the group; ``judge_reply`` is what a
        judge server answers, served from 127.0.0.1 as the reward's
        ``base_url`` (see :mod:`grpo_host.scoring.examples`).
    :param empty_ok: required columns whose empty value ("", [], {}) is
        meaningful (a JSON schema ``{}``), so ``data check`` accepts it.
    :param concurrency: for an ``async def`` function, how many of a batch's
        items the ensemble awaits at once (an async reward runs in this
        process's event loop, beside the synchronous members).
    :param trajectory: the function reads whole rollouts: its first argument
        is a :class:`~grpo_host.scoring.trajectory.Trajectory` (messages, tool
        calls and results, counts) instead of the final text (a list of them
        for a batch reward).
    :param per_turn: the function scores each assistant turn (implies
        ``trajectory``): it returns a list with one float or None per turn
        of :attr:`Trajectory.by_turn <grpo_host.scoring.trajectory.Trajectory.by_turn>`,
        or ``Scored(episode_value, turns=[...])``, or None; the run's
        ``turn_reward`` says what is trained on (:mod:`grpo_host.scoring.turns`).
    """

    given = None if callable(name) else name  # a bare @reward passes the function as ``name``

    def wrap(fn: Callable[..., Any]) -> Reward:
        if params is not None and not (isinstance(params, type) and hasattr(params, "model_json_schema")):
            raise TypeError(f"@reward {given or fn.__name__!r}: params must be a pydantic BaseModel subclass")
        if batch and executor == "process":
            raise TypeError(f"@reward {given or fn.__name__!r}: batch rewards run inline")
        is_async = inspect.iscoroutinefunction(fn)
        if is_async and executor == "process":
            raise TypeError(f"@reward {given or fn.__name__!r}: async rewards run in this process's event loop")
        if not isinstance(concurrency, int) or concurrency < 1:
            raise TypeError(f"@reward {given or fn.__name__!r}: concurrency must be a positive integer")
        return (AsyncReward if is_async else Reward)(
            name=given or fn.__name__,
            fn=fn,
            requires=required_columns(requires or {}, empty_ok),
            params=params,
            description=inspect.cleandoc(description or fn.__doc__ or ""),
            batch=batch,
            executor=executor,
            timeout=timeout,
            check_row=check_row,
            examples=tuple(examples),
            concurrency=concurrency,
            trajectory=trajectory or per_turn,
            per_turn=per_turn,
        )

    if callable(name):  # bare @reward
        return wrap(name)
    return wrap

