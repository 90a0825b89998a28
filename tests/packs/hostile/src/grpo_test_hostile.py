"""Rewards that fight the host on every item, for ``grpo-host audit``'s fault tests.

Each reads the ``answer`` column (so the audit aims its exploits at it) and does one hostile thing, whatever the
completion: never return (inline, in a worker process, as a batch, as an ``async def`` per item or batch), kill
its own worker with a signal, end the whole process with ``os._exit(3)`` or ``sys.exit(3)``, print to stdout,
return inf, a string, or one value too few (a batch reward), or raise.  Timeouts are short so a test waits
seconds, not minutes.
"""

from __future__ import annotations

import asyncio
import math
import os
import signal
import sys
import time
from collections import Counter

from grpo_host import hookimpl, reward

TIMEOUT = 0.5
CALLS: Counter = Counter()
"""Calls started, per reward, of the rewards that count them (read in-process by the tests)."""


@reward(requires={"answer": str}, timeout=TIMEOUT)
def hostile_hang(completion, *, answer, **_):
    """Never returns (inline: the host can only stop waiting for it)."""
    while True:
        time.sleep(0.05)


@reward(requires={"answer": str}, timeout=TIMEOUT, batch=True)
def hostile_hang_batch(completions, *, answer, **_):
    """A batch reward that never returns."""
    CALLS["hostile_hang_batch"] += 1
    while True:
        time.sleep(0.05)


@reward(requires={"answer": str}, timeout=TIMEOUT, concurrency=2)
async def hostile_hang_async(completion, *, answer, **_):
    """An async reward whose items never return, two at a time."""
    CALLS["hostile_hang_async"] += 1
    await asyncio.Event().wait()


@reward(requires={"answer": str}, timeout=TIMEOUT, batch=True)
async def hostile_hang_async_batch(completions, *, answer, **_):
    """An async batch reward that never returns."""
    CALLS["hostile_hang_async_batch"] += 1
    await asyncio.Event().wait()


@reward(requires={"answer": str}, executor="process", timeout=TIMEOUT)
def hostile_hang_worker(completion, *, answer, **_):
    """Never returns, in a worker process, and ignores the worker's alarm (only the outer kill stops it)."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    while True:
        time.sleep(0.05)


@reward(requires={"answer": str}, executor="process", timeout=TIMEOUT)
def hostile_signal(completion, *, answer, **_):
    """Kills its own worker process with SIGKILL."""
    os.kill(os.getpid(), signal.SIGKILL)


@reward(requires={"answer": str})
def hostile_os_exit(completion, *, answer, **_):
    """Ends the process it runs in with exit code 3 (what ``train`` uses for 'a monitor stopped training')."""
    os._exit(3)


@reward(requires={"answer": str})
def hostile_sys_exit(completion, *, answer, **_):
    """Raises SystemExit(3)."""
    sys.exit(3)


@reward(requires={"answer": str})
def hostile_print(completion, *, answer, **_):
    """Prints to stdout, through Python and straight to file descriptor 1, and scores 0."""
    print("HOSTILE PRINT")
    os.write(1, b"HOSTILE WRITE\n")
    return 0.0


@reward(requires={"answer": str})
def hostile_inf(completion, *, answer, **_):
    """Returns inf."""
    return math.inf


@reward(requires={"answer": str})
def hostile_text(completion, *, answer, **_):
    """Returns a string."""
    return "1.0"


@reward(requires={"answer": str}, batch=True)
def hostile_short(completions, *, answer, **_):
    """A batch reward returning one value too few."""
    return [0.0] * (len(completions) - 1)


@reward(requires={"answer": str})
def hostile_raise(completion, *, answer, **_):
    """Raises ValueError."""
    raise ValueError("hostile")


@hookimpl
def register_rewards(register):
    for item in (hostile_hang, hostile_hang_batch, hostile_hang_async, hostile_hang_async_batch,
                 hostile_hang_worker, hostile_signal, hostile_os_exit, hostile_sys_exit, hostile_print,
                 hostile_inf, hostile_text, hostile_short, hostile_raise):
        register.add_reward(item)
