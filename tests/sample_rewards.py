"""Rewards that misbehave on purpose, registered directly (not through entry points).

Module-level so the process executor can pickle them by reference; the
ensemble tests load this module with ``load_plugins(plugins=[sample_rewards])``.
"""

import asyncio
import math
import os
import signal
import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from grpo_host import RewardUnusable, Scored, hookimpl, reward, uninterrupted


class ScaleParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    scale: float = Field(1.0, description="multiplier")


@reward(requires={"answer": str}, params=ScaleParams)
def echo(completion, *, answer, params, **_):
    """The completion parsed as a float, times scale; None when it is not a number."""
    try:
        return float(completion) * params.scale
    except ValueError:
        return None


@reward
def misbehave(completion, **_):
    """Does what the completion says: nan, inf, text, raise, sleep (wait, using no CPU), spin (work forever), or a
    number."""
    if completion == "nan":
        return math.nan
    if completion == "inf":
        return math.inf
    if completion == "text":
        return "1.0"
    if completion == "raise":
        raise ZeroDivisionError("asked to raise")
    if completion == "unusable":
        raise RewardUnusable("no such model here")
    if completion == "sleep":
        time.sleep(30)
    if completion == "spin":
        while True:
            pass
    return float(completion)


STARVED_CPU = min(os.sched_getaffinity(0))
"""The CPU ``starved`` pins itself to: a test's busy process spins on it too."""


@reward
def starved(completion, **_):
    """Works as many CPU seconds as the completion says, on :data:`STARVED_CPU` at the lowest priority (so a busy
    process there leaves it about 1.5 % of the core), then returns them: an item that works, starved by load."""
    os.sched_setaffinity(0, {STARVED_CPU})  # 0: the calling thread (Linux), the inline runner's or the worker's
    os.setpriority(os.PRIO_PROCESS, 0, 19)
    end = time.thread_time() + float(completion)
    while time.thread_time() < end:
        pass
    return float(completion)


@reward(executor="process")
def in_worker(completion, **_):
    """Runs in a worker: 'spin' loops in Python, 'stuck' ignores SIGALRM (only the outer kill helps),
    'die' kills its own worker; otherwise returns the worker's pid."""
    if completion == "spin":
        while True:
            pass
    if completion == "stuck":
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
        time.sleep(30)
    if completion == "die":
        os.kill(os.getpid(), signal.SIGKILL)
    if completion == "raise":
        raise ValueError("bad item")
    if completion == "unusable":
        raise RewardUnusable("no such model here")
    return float(os.getpid())


@reward(batch=True)
def batch_count(completions, *, prompts, **_):
    """Number of completions in the batch equal to this one; 'short' returns one value too few."""
    if "short" in completions:
        return [1.0] * (len(completions) - 1)
    return [float(completions.count(c)) for c in completions]


@reward(executor="process")
def counted(completion, **_):
    """The completion's length, counting the long ones (over 3 characters); \
'bad' returns a count that is not a number."""
    if completion == "bad":
        return Scored(1.0, counts={"long": "yes"})
    return Scored(float(len(completion)), counts={"long": len(completion) > 3, "rows": 1})


SPANS: dict[str, list[tuple[float, float]]] = {"waits": [], "waits_batch": [], "sync_wait": []}
"""When each call of the waiting rewards ran (monotonic start and end): tests read overlap from here, since
what overlapped is the same on a busy machine and a wall-clock bound is not."""


def _span(name, start):
    SPANS[name].append((start, time.monotonic()))


@reward(concurrency=4)
async def waits(completion, **_):
    """Awaits as many seconds as the completion says (a judge waiting on its server), then scores 1.0;
    'block' blocks the event loop itself, 'raise' raises, 'unusable' cannot run at all."""
    if completion == "block":
        time.sleep(8)  # synchronous work inside async def: no timeout can interrupt it
    if completion == "raise":
        raise ValueError("the judge said no")
    if completion == "unusable":
        raise RewardUnusable("no judge server configured")
    start = time.monotonic()
    await asyncio.sleep(float(completion) if completion not in ("block",) else 0)
    _span("waits", start)
    return 1.0


@reward(batch=True)
async def waits_batch(completions, **_):
    """One await for the whole batch (a reward server taking the batch in one request): the lengths."""
    start = time.monotonic()
    await asyncio.sleep(0.3)
    _span("waits_batch", start)
    return [float(len(c)) for c in completions]


@reward(batch=True)
def sync_wait(completions, **_):
    """A synchronous member that takes 0.6 s per batch."""
    start = time.monotonic()
    time.sleep(0.6)
    _span("sync_wait", start)
    return [1.0] * len(completions)


@reward(executor="process")
def held(completion, **_):
    """Works the completion's first word in CPU seconds inside ``uninterrupted()``, then writes the file its second
    word names: a one-time set-up that its item's alarm must not cut short."""
    seconds, marker = completion.split(" ", 1)
    with uninterrupted():
        end = time.process_time() + float(seconds)
        while time.process_time() < end:
            pass
        Path(marker).write_text("done")
    return 1.0


@hookimpl
def register_rewards(register):
    for item in (echo, misbehave, in_worker, batch_count, counted, waits, waits_batch, sync_wait, starved, held):
        register(item)
