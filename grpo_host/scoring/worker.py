"""What a reward may ask the host while it scores an item: the time left, a block its timeout must not cut, and
whether it runs in a worker process.

The host runs each item under a timeout (the reward's ``timeout``): a process-executor item in a worker process or
a Ray actor under ``SIGALRM``, an async item under ``asyncio.wait_for``, an inline item on a thread the caller stops
waiting for.  A reward that spends the time itself (a sandboxed program, a judge call) sizes its own wait with
:func:`time_left`, so it ends inside the host's bound and reports its own verdict instead of being cut off.  A
reward whose first item does a one-time set-up (a heavy import, loading a model) wraps it in
:func:`uninterrupted`: an alarm halfway through an import leaves half-made modules in ``sys.modules`` and every
later item in that worker fails with "partially initialized module".  A reward that starts processes of its own
asks :func:`in_worker` to know that its parent is a scoring process whose end should end them.

These are the pack-facing half of :mod:`grpo_host.scoring.calls` and :mod:`grpo_host.scoring.executors`, which
set what they read; a pack imports them from :mod:`grpo_host`.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Iterator
from contextvars import ContextVar

__all__ = ["in_worker", "item_deadline", "mark_worker", "time_left", "uninterrupted"]

_deadline: ContextVar[float | None] = ContextVar("grpo_host_item_deadline", default=None)
_worker = False


def time_left() -> float | None:
    """Seconds left before the current item's timeout (never below 0.0); None outside an item the host timed."""
    deadline = _deadline.get()
    return None if deadline is None else max(0.0, deadline - time.monotonic())


def in_worker() -> bool:
    """Whether this code runs in a grpo-host worker process (a local worker or a Ray actor's slot): the process
    that started it is the scoring process, or Ray's, and its end is this process's end."""
    return _worker


@contextlib.contextmanager
def uninterrupted() -> Iterator[None]:
    """Hold the worker's item alarm back for the block; a pending alarm fires right after it.

    In the main thread, where Python handles signals; elsewhere (an inline thread, the event loop) nothing can
    interrupt the block, and this does nothing.
    """
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        yield
        return
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGALRM})


@contextlib.contextmanager
def item_deadline(timeout: float | None) -> Iterator[None]:
    """For the host's executors: the item run inside the block has ``timeout`` seconds (None: no bound)."""
    token = _deadline.set(None if not timeout else time.monotonic() + timeout)
    try:
        yield
    finally:
        _deadline.reset(token)


def mark_worker() -> None:
    """For the host's executors: this process is a worker, started to score items for its parent."""
    global _worker
    _worker = True
