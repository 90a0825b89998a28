"""Environments: the multi-turn, tool-calling worlds an agent is trained in, as a plugin kind.

An environment is a class declared with :func:`environment` and registered
by a pack's ``register_environments`` hook, like rewards::

    @environment("calculator", requires={"answer": str})
    class Calculator:
        \"\"\"Arithmetic on demand.\"\"\"

        def reset(self, row):                 # a new rollout for this dataset row
            self.calls = 0                    # return a string to append it to the prompt, or None

        def add(self, a: float, b: float) -> str:
            \"\"\"Add two numbers.

            Args:
                a: the first number
                b: the second number
            \"\"\"
            self.calls += 1
            return str(a + b)

Its public methods other than ``reset`` and ``reward`` are its **tools**:
each needs type hints and a Google-style docstring, which is what chat
templates (through transformers' ``get_json_schema``) show the model.  An
optional ``reward(self) -> float | None`` scores the rollout from the
environment's own state; declared ``per_turn=True``, it returns a list with
one value per assistant turn instead (or ``Scored(value, turns=[...])``),
which the run's ``turn_reward`` makes one number of, as for a per-turn reward
(:mod:`grpo_host.scoring.turns`).  ``params`` (a pydantic model) configures it;
``requires`` names the row columns it reads, checked by ``data check``
before anything is generated.

**Tool calls are adversarial input.**  The engine never calls the class
directly: it gets a :class:`Session` per rollout, whose tools check the
arguments against the tool's type hints (unknown, missing or mistyped
arguments, and arguments over ``max_argument_chars``, are refused), run
the call under ``timeout`` CPU seconds of its thread, or a wall-clock
backstop of :data:`~grpo_host.scoring.worker.BACKSTOP` times that for a call
that waits (a call that does not return is abandoned on its thread and
answered as an error), and cut the result to
``max_output_chars``.  Every failure (a refused call, a timeout, an
exception of the tool) reaches the engine as an error the model sees in
the tool result and that :class:`~grpo_host.scoring.trajectory.Trajectory`
counts (``tool_errors``); none takes the run down.  An environment that
fails to ``reset`` for a row answers every tool call of that rollout with
that error.  Tools run in the trainer's process: one that runs model-written
code must run it in a sandbox (the ``python`` environment runs it in the
``code`` pack's), and one that reaches the network or host files must say
so in its description.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import RewardError, RolloutError
from ..scoring.contract import BadValue, Column, Scored, construct, required_columns
from ..scoring.trajectory import Trajectory
from ..scoring.turns import TurnRule
from ..scoring.worker import BACKSTOP

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["Environment", "Rollout", "Session", "ToolError", "ToolLimits", "environment", "own_rewards", "rollout"]

RESERVED = ("reset", "reward", "get_reward")
"""Method names an environment class uses for the rollout itself (``get_reward`` is TRL's), never tools."""


class ToolError(Exception):
    """A tool call that could not be served: the message is what the model reads in the tool result."""


@dataclass(frozen=True)
class ToolLimits:
    """Bounds on every tool call of an environment (settable per environment in :func:`environment`)."""

    timeout: float = 10.0
    """CPU seconds a call may use (a call that waits instead is stopped at ``BACKSTOP`` times this, wall clock); past
    it the call is abandoned and answered as an error."""
    max_output_chars: int = 8192
    """A longer result is cut to this many characters, with a note saying how much was cut."""
    max_argument_chars: int = 65536
    """Arguments longer than this (as JSON) are refused before the tool runs."""


@dataclass(frozen=True, eq=False)
class Environment:
    """An environment class with its declaration, as :func:`environment` makes it and a pack registers it."""

    name: str
    factory: Callable[..., Any]
    description: str
    tools: tuple[str, ...]
    requires: tuple[Column, ...] = ()
    params: type[BaseModel] | None = None
    limits: ToolLimits = field(default_factory=ToolLimits)
    pack: str = "?"
    version: str = "?"
    check_row: Callable[[Mapping[str, Any]], str | None] | None = None
    """A per-row check for ``data check`` beyond the required columns (as a reward's)."""
    per_turn: bool = False
    """Its ``reward`` returns a value per assistant turn (see the module docstring)."""

    @property
    def origin(self) -> str:
        return f"pack {self.pack} {self.version}"

    @property
    def has_reward(self) -> bool:
        return callable(getattr(self.factory, "reward", None))

    def create(self, params: Mapping[str, Any] | None = None) -> Any:
        """A fresh instance with validated parameters; :class:`ValueError` names the environment."""
        return construct(self.factory, self.params, params, f"environment {self.name!r} ({self.origin})")

    def tool_summaries(self) -> list[tuple[str, str]]:
        """Each tool's call signature and the first line of its docstring, for listings (imports nothing)."""
        out = []
        for name in self.tools:
            fn = getattr(self.factory, name)
            params = list(inspect.signature(fn).parameters.values())[1:]  # without self
            signature = f"{name}({', '.join(p.name for p in params)})"
            out.append((signature, (inspect.getdoc(fn) or "").splitlines()[0]))
        return out

    def session_class(self) -> type[Session]:
        """A :class:`Session` subclass whose methods are this environment's tools, guarded, with the tools'
        names, signatures, type hints and docstrings (what engines read to describe the tools to the model)."""
        members: dict[str, Any] = {"environment": self}
        for name in self.tools:
            members[name] = _guarded_tool(self, name)
        if self.has_reward:
            members["get_reward"] = Session._reward
        return type(f"{self.factory.__name__}Session", (Session,), members)


class Session:
    """One rollout's environment as an engine drives it (TRL's ``environment_factory`` instances are these).

    ``reset(**row_fields)`` starts a rollout: ``rows`` (when given) maps the
    engine's row id to the dataset row the environment's ``reset`` reads.
    Tool methods are made by :meth:`Environment.session_class`.
    ``turn_reward`` makes a per-turn reward's one number (:class:`TurnRule`).
    """

    environment: Environment
    ROW_KEY = "_grpo_host_row"

    def __init__(self, params: Mapping[str, Any] | None = None, rows: Sequence[Any] | None = None,
                 turn_reward: str | TurnRule = "episode") -> None:
        from ..scoring.executors import InlineRunner

        self.instance = self.environment.create(params)
        self.rows = rows
        self.turn_rule = TurnRule.parse(turn_reward)
        self.failure: str | None = None
        self.where = "a rollout"
        self.turns: tuple[float | None, ...] | None = None
        """A per-turn reward's values for the last rollout, once :meth:`_reward` has scored it."""
        self.runner = InlineRunner()

    def reset(self, **fields: Any) -> str | None:
        """Start a rollout for the row the engine names (its fields, or its id in ``rows``)."""
        row = fields
        if self.rows is not None and isinstance(fields.get(self.ROW_KEY), int):
            found = self.rows[fields[self.ROW_KEY]]
            row = getattr(found, "data", found)
            self.where = str(getattr(found, "where", f"row {fields[self.ROW_KEY]}"))
        self.failure, self.turns = None, None
        try:
            observation = self.instance.reset(row)
        except Exception as exc:  # the environment's bug or a bad row: this rollout's tools say so
            self.failure = f"environment {self.environment.name!r} could not start: {type(exc).__name__}: {exc}"
            return None
        return observation if isinstance(observation, str) or observation is None else str(observation)

    def __del__(self) -> None:
        runner = getattr(self, "runner", None)
        if runner is not None:
            runner.close()  # the session's tool thread ends with the session

    def _reward(self) -> float | None:
        """The environment's own score of this rollout; None when it fails or gives no number.

        A per-turn reward's values are kept in :attr:`turns` and combined by the session's ``turn_reward``; one
        outside the contract (not a list, NaN, a non-number) is a :class:`RewardError` naming the environment
        and the row, since no number would be honest there.  The record and the trainer each ask, after the
        rollout: an environment's reward reads its state, which no longer changes then."""
        if self.failure is not None:
            return None
        try:
            value = self.instance.reward()
        except Exception:
            return None
        if not self.environment.per_turn:
            return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
        try:
            scored = Scored.of_turns(value, None)
        except BadValue as exc:
            env = self.environment
            raise RewardError(f"environment {env.name!r} ({env.origin}) reward on {self.where}: {exc}") from None
        self.turns = None if scored.turns is None else tuple(scored.turns)
        return self.turn_rule.combine(scored.value, scored.turns)

    def _check_turns(self, completion: Any) -> None:
        """A :class:`RewardError` naming the environment and the row when the per-turn values :meth:`_reward` kept
        are not one per assistant turn of ``completion`` (the rollout's messages).

        TRL asks for the reward without the trajectory, so the count is checked where the trajectory is known:
        the reward functions' pass (:func:`own_rewards`) and an evaluation's episode.  Private, as ``_reward``:
        a session's public methods are its tools."""
        if self.turns is None or isinstance(completion, str):
            return
        try:
            Scored.of_turns(list(self.turns), len(Trajectory.of(completion).by_turn))
        except BadValue as exc:
            env = self.environment
            raise RewardError(f"environment {env.name!r} ({env.origin}) reward on {self.where}: {exc}") from None


def own_rewards(sessions: Sequence[Any], completions: Sequence[Any] | None = None) -> tuple[
        dict[str, list[float | None]], dict[str, list[tuple[float | None, ...] | None]]]:
    """The environments' own rewards of a batch's rollouts (one session each), as TRL adds them: one column per
    session class with a ``reward``, named after it, None for rollouts of other environments; and, for a
    per-turn reward, its turns per rollout, checked against each rollout's assistant turns when ``completions``
    (the rollouts' messages, one per session) are given (:meth:`Session._check_turns`)."""
    types = dict.fromkeys(type(s) for s in sessions if isinstance(s, Session) and s.environment.has_reward)
    values = {t.__name__: [s._reward() if type(s) is t else None for s in sessions] for t in types}
    for session, completion in zip(sessions, completions, strict=True) if completions is not None else ():
        if type(session) in types:
            session._check_turns(completion)
    turns = {t.__name__: [s.turns if type(s) is t else None for s in sessions] for t in types
             if t.environment.per_turn}
    return values, turns


def _guarded_tool(env: Environment, name: str) -> Callable[..., str]:
    """``env``'s tool ``name`` behind the guard described in the module docstring."""
    original = getattr(env.factory, name)
    signature = inspect.signature(original)
    hints = _hints(original)
    adapters: dict[str, Any] = {}

    def tool(self: Session, **kwargs: Any) -> str:
        if self.failure is not None:
            raise ToolError(self.failure)
        args = _checked_arguments(env, name, signature, hints, adapters, kwargs)
        return _bounded(self, name, lambda: getattr(self.instance, name)(**args))

    tool.__name__ = tool.__qualname__ = name
    tool.__doc__ = original.__doc__
    tool.__signature__ = signature  # type: ignore[attr-defined]
    tool.__annotations__ = hints
    return tool


def _hints(fn: Callable[..., Any]) -> dict[str, Any]:
    import typing

    return typing.get_type_hints(fn)


def _checked_arguments(env: Environment, name: str, signature: inspect.Signature, hints: dict[str, Any],
                       adapters: dict[str, Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The call's arguments validated against the tool's type hints, or a :class:`ToolError` saying what is wrong."""
    try:
        size = len(json.dumps(kwargs, default=str))
    except (TypeError, ValueError, RecursionError):
        raise ToolError(f"tool {name}: the arguments are not JSON values") from None
    if size > env.limits.max_argument_chars:
        raise ToolError(f"tool {name}: the arguments are {size} characters, over {env.limits.max_argument_chars}")
    params = [p for p in signature.parameters.values() if p.name != "self"]
    known = {p.name for p in params}
    unknown = sorted(set(kwargs) - known)
    missing = [p.name for p in params if p.default is inspect.Parameter.empty and p.name not in kwargs]
    if unknown or missing:
        raise ToolError(f"tool {name}({', '.join(p.name for p in params)}): "
                        + "; ".join(filter(None, [f"unknown arguments {unknown}" if unknown else "",
                                                  f"missing arguments {missing}" if missing else ""])))
    from pydantic import TypeAdapter, ValidationError

    out = {}
    for key, value in kwargs.items():
        adapter = adapters.get(key)
        if adapter is None:
            adapter = adapters[key] = TypeAdapter(hints.get(key, Any))
        try:
            out[key] = adapter.validate_python(value)
        except ValidationError as exc:
            raise ToolError(f"tool {name}: argument {key!r}: {exc.errors()[0]['msg']}") from None
    return out


def _bounded(session: Session, name: str, call: Callable[[], Any]) -> str:
    """Run ``call`` on the session's tool thread for at most the timeout (CPU seconds of the thread, and a wall-clock
    backstop for a call that waits: :mod:`grpo_host.scoring.clocks`); its result as text, cut to the cap.

    One long-lived thread per session, not one per call: what a tool starts may be tied to the thread that
    started it (a sandbox's ``--die-with-parent`` follows its parent thread), so it must outlive the call.  A
    call past its timeout is abandoned with its thread, and the next call gets a new one.
    """
    env = session.environment
    out = session.runner.run([(call, (), {})], env.limits.timeout)[0]
    if out.status == "timeout":
        raise ToolError(f"tool {name} used its {env.limits.timeout:g} s of CPU time without answering")
    if out.status == "backstop":
        raise ToolError(f"tool {name} did not answer within {BACKSTOP * env.limits.timeout:g} s (waiting, not "
                        "working: the backstop of its timeout)")
    if out.status != "ok":
        raise ToolError(f"tool {name} failed: {out.error}")
    value = out.value
    text = value if isinstance(value, str) else str(value)
    cap = env.limits.max_output_chars
    return text if len(text) <= cap else f"{text[:cap]}\n[{len(text) - cap} more characters cut]"


def environment(
    name: str,
    *,
    description: str | None = None,
    params: type[BaseModel] | None = None,
    requires: Mapping[str | tuple[str, ...], Any] | None = None,
    limits: ToolLimits | None = None,
    per_turn: bool = False,
) -> Callable[[type], Environment]:
    """Declare a class as an environment (see the module docstring for the class's shape).

    :param name: the name run configs, a row's ``environment`` column and
        ``grpo-host environments show`` use.
    :param description: what the environment is and what its tools may reach; defaults to the docstring.
    :param params: a pydantic model of its parameters; ``__init__`` then receives a validated instance.
    :param requires: row columns ``reset`` reads, mapped to their types, as for rewards.
    :param limits: bounds on every tool call (:class:`ToolLimits`).
    :param per_turn: its ``reward`` returns a value per assistant turn (see the module docstring).
    """

    def wrap(cls: type) -> Environment:
        who = f"@environment {name!r}"
        if not isinstance(cls, type) or not callable(getattr(cls, "reset", None)):
            raise TypeError(f"{who}: the class needs a reset(self, row) method")
        tools = tuple(n for n, fn in inspect.getmembers(cls, inspect.isfunction)
                      if not n.startswith("_") and n not in RESERVED)
        if not tools:
            raise TypeError(f"{who}: the class has no tools (public methods besides reset and reward)")
        for tool in tools:
            fn = getattr(cls, tool)
            if not inspect.getdoc(fn):
                raise TypeError(f"{who}: tool {tool!r} needs a docstring (the model reads it)")
            hints = _hints(fn)
            untyped = [p for p in list(inspect.signature(fn).parameters)[1:] if p not in hints]
            if untyped:
                raise TypeError(f"{who}: tool {tool!r} needs type hints for {untyped} (the model reads them)")
        if per_turn and not callable(getattr(cls, "reward", None)):
            raise TypeError(f"{who}: per_turn=True, but the class has no reward method")
        return Environment(name=name, factory=cls, description=inspect.cleandoc(description or cls.__doc__ or ""),
                           tools=tools, requires=required_columns(requires or {}), params=params,
                           limits=limits or ToolLimits(), per_turn=per_turn)

    return wrap


@dataclass(frozen=True, eq=False)
class Rollout:
    """A rollout function from an external agent framework, as :func:`rollout` makes it and a pack registers it.

    The function has TRL's ``rollout_func`` contract: ``fn(prompts, trainer)``
    gets one prompt per completion to make (each prompt repeated
    ``group_size`` times) and returns ``{"prompt_ids", "completion_ids",
    "logprobs"}`` with one entry per prompt, plus any other fields as lists
    of the same length, which reach the rewards as columns.  The host
    checks every return (:meth:`checked`): a wrong count, a missing key or
    a field of another length is a :class:`RolloutError` naming the rollout,
    where TRL would drop the columns and fail later in a reward.
    """

    name: str
    fn: Callable[..., Mapping[str, Any]]
    description: str = ""
    pack: str = "?"
    version: str = "?"

    def checked(self) -> Callable[[list[Any], Any], dict[str, Any]]:
        """The function as the engine calls it, with its return checked."""
        def run(prompts: list[Any], trainer: Any) -> dict[str, Any]:
            who = f"rollout {self.name!r} (pack {self.pack} {self.version})"
            out = self.fn(prompts, trainer)
            if not isinstance(out, Mapping):
                raise RolloutError(f"{who} returned {type(out).__name__}, not a dict of prompt_ids, completion_ids "
                                   "and logprobs")
            missing = sorted({"prompt_ids", "completion_ids", "logprobs"} - set(out))
            if missing:
                raise RolloutError(f"{who} returned no {', '.join(missing)}")
            for key, values in out.items():
                if isinstance(values, Sequence) and not isinstance(values, str) and len(values) != len(prompts):
                    raise RolloutError(f"{who} returned {len(values)} {key} for {len(prompts)} prompts (one per "
                                       "completion: each prompt comes group_size times)")
            return dict(out)

        return run


def rollout(name: str, *, description: str | None = None) -> Callable[[Callable[..., Any]], Rollout]:
    """Declare a function with TRL's ``rollout_func`` contract as a rollout a run can name (``rollout: NAME``).

    Registered like an environment, from ``register_environments``:
    ``register.add_rollout(my_rollout)``.
    """

    def wrap(fn: Callable[..., Any]) -> Rollout:
        if not callable(fn):
            raise TypeError(f"@rollout {name!r}: decorate a function fn(prompts, trainer)")
        return Rollout(name, fn, inspect.cleandoc(description or fn.__doc__ or ""))

    return wrap
