"""A reward's one-time set-up (a heavy import, loading a model) that a worker's per-item alarm must not cut short.

A process-executor item runs under SIGALRM (``grpo_host.scoring.calls``).  A
reward that imports its checkers on first use does that import inside its
first item; if the alarm fires halfway, Python leaves the half-imported
modules in ``sys.modules`` and every later item in that worker fails with
"partially initialized module".  Inside :func:`uninterrupted` the alarm is
held back instead: the set-up finishes, then the pending alarm times the
item out as it should, and the worker stays usable.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator


@contextlib.contextmanager
def uninterrupted() -> Iterator[None]:
    """Hold SIGALRM back for the block (in the main thread, where Python handles signals; elsewhere a no-op)."""
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        yield
        return
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGALRM})
