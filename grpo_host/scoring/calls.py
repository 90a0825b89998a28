"""The one place a reward call's failure is caught and turned into an :class:`Outcome`.

Every executor (the inline thread, a worker process, a Ray actor, the
event loop of async rewards) runs a reward through :func:`call` or
:func:`acall`, as pluggy runs every hook implementation through one catch
site.  So a failure has one shape wherever it happened: an :class:`Outcome`
whose ``error`` is a :class:`Failure`, plain picklable data (the exception's
type name, message and last frames) that crosses a process or a Ray
boundary unchanged.  The error policy (:mod:`grpo_host.scoring.policy`)
then raises one exception chain for all of them: ``RewardError`` from
:class:`RewardCallError`.

Timeouts: ``alarm`` arms two timers around the call, which only a worker's
main thread may do (a worker process, a Ray actor): ``ITIMER_PROF`` at the
timeout in CPU seconds of the process (``timeout``), and ``ITIMER_REAL`` at
the backstop (``backstop``: :data:`~grpo_host.scoring.worker.BACKSTOP` times
the timeout, in wall seconds not spent waiting for a CPU, see
:mod:`grpo_host.scoring.clocks`).  The inline thread and the event loop
bound their calls from outside instead.
"""

from __future__ import annotations

import contextlib
import os
import signal
import traceback
from collections.abc import Awaitable, Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from ..errors import RewardUnusable
from .clocks import Watch
from .contract import BadValue
from .worker import BACKSTOP, hold_alarm, item_deadline

__all__ = ["TIMED_OUT", "CallBackstop", "CallTimeout", "Failure", "Outcome", "ProcessExit", "RewardCallError", "acall",
           "call", "exit_guard", "failed", "install_alarm"]

Status = Literal["ok", "error", "timeout", "backstop", "unusable", "skipped"]
"""``timeout``: the item used its timeout's CPU seconds (an async item: its wall seconds); ``backstop``: it waited,
using no CPU, past the wall-clock backstop (see :mod:`grpo_host.scoring.clocks`), counted among the timeouts but
told apart; ``skipped``: never called, because an executor's ``stop`` said so (see
:mod:`grpo_host.scoring.executors`)."""

Kind = Literal["raised", "bad value", "exited", "worker died", "host"]
"""What a failure was: the reward raised, returned a value outside the contract, tried to end the process
(``sys.exit``, or ``os._exit`` under :func:`exit_guard`), its worker process died (a signal, ``os._exit``), or the
host could not hand the item over or the value back."""


@dataclass(frozen=True)
class Failure:
    """What a reward call raised, as data: the exception's type name, its message and its last frames."""

    type: str
    message: str
    traceback: str = ""
    kind: Kind = "raised"

    @classmethod
    def of(cls, exc: BaseException) -> Failure:
        frames = "".join(traceback.format_exception(exc)[-3:]).rstrip()
        if isinstance(exc, SystemExit | ProcessExit):
            how = "os._exit" if isinstance(exc, ProcessExit) else "sys.exit"
            return cls("", f"called {how}({exc.code!r}) (a reward must return, not end the process)", frames, "exited")
        return cls(type(exc).__name__, str(exc), frames, "bad value" if isinstance(exc, BadValue) else "raised")

    @classmethod
    def note(cls, message: str, kind: Kind = "host") -> Failure:
        """A failure around the call rather than in it (a worker died, a value did not pickle)."""
        return cls("", message, kind=kind)

    def __str__(self) -> str:
        """As error messages show it: with the exception's type, except for a bad value (its message names what was
        returned) and a failure around the call (its message says what happened)."""
        return self.message if self.type in ("", BadValue.__name__) else f"{self.type}: {self.message}"


class RewardCallError(Exception):
    """A reward call's :class:`Failure` as an exception: the cause that ``on_error=raise`` chains to its error.

    The same type from every executor, carrying the reward's traceback as text (``failure.traceback``).
    """

    def __init__(self, failure: Failure) -> None:
        super().__init__(f"{failure}\n{failure.traceback}".rstrip())
        self.failure = failure


TIMED_OUT = ("timeout", "backstop")
"""The statuses of an item stopped by time: its CPU timeout, or the wall-clock backstop."""


class Outcome(NamedTuple):
    """What became of one call: ``ok`` with its value, ``error``/``unusable`` with a :class:`Failure`, ``timeout``."""

    status: Status
    value: Any = None
    error: Failure | None = None

    @property
    def timed_out(self) -> bool:
        """Whether the item was stopped by its timeout or by the backstop."""
        return self.status in TIMED_OUT

    @property
    def failure(self) -> Failure:
        """The :class:`Failure` of an ``error`` or ``unusable`` outcome, which every such outcome carries."""
        if self.error is None:
            raise ValueError(f"a {self.status!r} outcome carries no failure")
        return self.error


class CallTimeout(BaseException):
    """Raised by SIGPROF inside a call; a BaseException so reward code's ``except Exception`` cannot eat it."""


class CallBackstop(CallTimeout):
    """Raised by SIGALRM inside a call that waited past its backstop."""


class ProcessExit(BaseException):
    """Raised in place of ``os._exit`` by a reward call under :func:`exit_guard`; a BaseException, as SystemExit."""

    def __init__(self, code: Any) -> None:
        super().__init__(code)
        self.code = code


_calling: ContextVar[bool] = ContextVar("grpo_host_reward_call", default=False)
"""True inside :func:`call` and :func:`acall` (per thread, and per task on an event loop)."""


@contextlib.contextmanager
def _in_call() -> Iterator[None]:
    token = _calling.set(True)
    try:
        yield
    finally:
        _calling.reset(token)


@contextlib.contextmanager
def exit_guard() -> Iterator[None]:
    """While the block runs, ``os._exit`` called by a reward inside :func:`call` or :func:`acall` raises
    :class:`ProcessExit` (its item fails as ``exited``) instead of ending this process; anywhere else it exits as
    always.  For the audit, whose inline rewards run in its own process.  A reward that bound ``os._exit`` to
    another name before the block, or exits from C, is not caught: that takes a worker process."""
    real = os._exit

    def guarded(code: int) -> None:
        if _calling.get():
            raise ProcessExit(code)
        real(code)

    os._exit = guarded  # type: ignore[assignment]
    try:
        yield
    finally:
        os._exit = real


_armed: tuple[Watch, float] | None = None
"""The item being timed in this worker (its clocks and its backstop), for the SIGALRM handler."""


def _on_cpu_limit(signum: int, frame: Any) -> None:
    if not hold_alarm(CallTimeout):
        raise CallTimeout


def _on_backstop(signum: int, frame: Any) -> None:
    """At the backstop by the wall clock: stop the call, unless part of that time was spent waiting for a CPU, in
    which case the alarm is set again for what is left."""
    if _armed is None:  # a late alarm, after the call ended
        return
    watch, backstop = _armed
    left = backstop - watch.awake()
    if left > 0.001:
        signal.setitimer(signal.ITIMER_REAL, left)
        return
    if not hold_alarm(CallBackstop):
        raise CallBackstop


def install_alarm() -> None:
    """Make SIGPROF raise :class:`CallTimeout` and SIGALRM :class:`CallBackstop` (once, in a worker's main thread)
    so ``call(alarm=...)`` can time."""
    signal.signal(signal.SIGPROF, _on_cpu_limit)
    signal.signal(signal.SIGALRM, _on_backstop)


@contextlib.contextmanager
def _timers(timeout: float) -> Iterator[None]:
    """Arm the CPU timer at ``timeout`` and the backstop at :data:`BACKSTOP` times it for the block."""
    global _armed
    _armed = (Watch(None, str(os.getpid())), BACKSTOP * timeout)  # its handler reads only the awake clock
    signal.setitimer(signal.ITIMER_PROF, timeout)
    signal.setitimer(signal.ITIMER_REAL, BACKSTOP * timeout)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        _armed = None


def failed(exc: BaseException) -> Outcome:
    """The outcome of a call that raised: ``unusable`` for :class:`grpo_host.RewardUnusable`, else ``error``."""
    return Outcome("unusable" if isinstance(exc, RewardUnusable) else "error", error=Failure.of(exc))


def call(fn: Callable[..., Any], args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None, *,
         alarm: float | None = None, timeout: float | None = None) -> Outcome:
    """Run ``fn(*args, **kwargs)``; its value, or its failure, as an :class:`Outcome`.  Never raises.

    :param alarm: CPU seconds after which the call is interrupted, with the backstop after it (see
        :func:`install_alarm`).
    :param timeout: the item's bound when the caller enforces it from outside (the inline thread); the call
        reads the backstop of either as :func:`grpo_host.time_left`.
    """
    limit = alarm or timeout
    timers = _timers(alarm) if alarm else contextlib.nullcontext()
    try:
        with item_deadline(limit and BACKSTOP * limit), _in_call(), timers:
            return Outcome("ok", fn(*args, **(kwargs or {})))
    except CallBackstop:
        return Outcome("backstop")
    except CallTimeout:
        return Outcome("timeout")
    except (Exception, SystemExit, ProcessExit) as exc:  # sys.exit in a reward fails its item, not the host
        return failed(exc)


async def acall(make: Callable[[], Awaitable[Any]], timeout: float | None) -> Outcome:
    """:func:`call` for a coroutine: awaited under ``timeout`` (waiting for a concurrency slot is not part of it)."""
    import asyncio

    try:
        with item_deadline(timeout), _in_call():
            return Outcome("ok", await asyncio.wait_for(make(), timeout))
    except TimeoutError:
        return Outcome("timeout")
    except (Exception, SystemExit, ProcessExit) as exc:
        return failed(exc)
