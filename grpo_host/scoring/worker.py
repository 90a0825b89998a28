"""What a reward may ask the host while it scores an item: the time left, a block its timeout must not cut, and
whether it runs in a worker process.

The host runs each item under a timeout (the reward's ``timeout``) that counts the CPU time of the work
(:mod:`grpo_host.scoring.clocks`): a process-executor item in a worker process or a Ray actor under ``SIGPROF``
(``ITIMER_PROF``, the process's CPU clock), an inline item on a thread whose CPU clock the caller watches.  What
uses no CPU (a sleep, a lock, a reply that never comes) is stopped by a wall-clock backstop, :data:`BACKSTOP`
times the timeout, that does not count time spent waiting for a CPU (``SIGALRM`` in a worker).  An async item
waits on the network, so its timeout is the wall clock (``asyncio.wait_for``).  A reward that spends the time
itself (a sandboxed program, a judge call) sizes its own wait with :func:`time_left`, so it ends inside the host's
bound and reports its own verdict instead of being cut off.  A reward whose first item does a one-time set-up (a
heavy import, loading a model) wraps it in :func:`uninterrupted`: an alarm halfway through an import leaves
half-made modules in ``sys.modules`` and every later item in that worker fails with "partially initialized
module".  A reward that starts processes of its own asks :func:`in_worker` to know that its parent is a scoring
process whose end should end them.

These are the pack-facing half of :mod:`grpo_host.scoring.calls` and :mod:`grpo_host.scoring.executors`, which
set what they read; a pack imports them from :mod:`grpo_host`.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from contextvars import ContextVar

__all__ = ["BACKSTOP", "hold_alarm", "in_worker", "item_deadline", "mark_worker", "time_left", "uninterrupted"]

BACKSTOP = 10.0
"""The wall-clock backstop of a synchronous item, as a multiple of its (CPU) timeout: for what waits rather than
works.  Time spent runnable but waiting for a CPU does not count (:class:`grpo_host.scoring.clocks.Watch`), so load
never brings a working item to it; an item stopped by it is reported as ``backstop``, not as its reward's answer."""

_deadline: ContextVar[float | None] = ContextVar("grpo_host_item_deadline", default=None)
_worker = False

class _Hold:
    """The main thread's open :func:`uninterrupted` blocks, and the alarm that came during them."""

    depth = 0
    pending: type[BaseException] | None = None


def hold_alarm(stop: type[BaseException]) -> bool:
    """For the item alarms' handlers: True while an :func:`uninterrupted` block is open, keeping ``stop`` (the
    exception the alarm raises) for the block's end."""
    if not _Hold.depth:
        return False
    _Hold.pending = _Hold.pending or stop
    return True


def time_left() -> float | None:
    """Wall seconds the current item may still wait before the host stops it (never below 0.0): for a synchronous
    item the backstop (:data:`BACKSTOP` times its timeout; time spent waiting for a CPU only lengthens it), for an
    async item its timeout.  None outside an item the host timed."""
    deadline = _deadline.get()
    return None if deadline is None else max(0.0, deadline - time.monotonic())


def in_worker() -> bool:
    """Whether this code runs in a grpo-host worker process (a local worker or a Ray actor's slot): the process
    that started it is the scoring process, or Ray's, and its end is this process's end."""
    return _worker


@contextlib.contextmanager
def uninterrupted() -> Iterator[None]:
    """Hold the worker's item alarms (the CPU timeout and the backstop) back for the block; a pending one fires right
    after it.

    Python runs signal handlers in the main thread, whichever thread the kernel delivered the signal to (a worker
    has others), so the alarms' handlers look at this block's flag rather than at a signal mask.  In any other
    thread (an inline thread, the event loop) no alarm can interrupt the block, and this does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _Hold.depth += 1
    pending = None
    try:
        yield
    finally:
        _Hold.depth -= 1
        if not _Hold.depth:
            pending, _Hold.pending = _Hold.pending, None
    if pending is not None:
        raise pending


@contextlib.contextmanager
def item_deadline(wall: float | None) -> Iterator[None]:
    """For the host's executors: the item run inside the block may wait ``wall`` seconds (None: no bound)."""
    token = _deadline.set(None if not wall else time.monotonic() + wall)
    try:
        yield
    finally:
        _deadline.reset(token)


def mark_worker() -> None:
    """For the host's executors: this process is a worker, started to score items for its parent."""
    global _worker
    _worker = True
