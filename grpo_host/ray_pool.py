"""A Ray executor for process-executor rewards: :class:`RayPool`, the ``ray`` entry of :data:`grpo_host.ensemble.POOLS`.

When a step's code or math items saturate the trainer node's cores, the
remedy is more machines, and Ray already runs them.  ``RayPool`` has
:class:`~grpo_host.workers.WorkerPool`'s interface and keeps its guarantees
on a Ray cluster:

* **Warm state per worker:** one actor per slot, each a long-lived process,
  so a reward's imports and its module-level state (the code reward's
  sandbox) are made once per actor and reused by every item it runs.
* **Per-item timeouts that hold:** an item's deadline starts when it is
  handed to an actor that is up.  Inside the actor the same ``SIGALRM`` as
  in a local worker interrupts Python code at the timeout (sync actor
  methods run on the actor process's main thread); an item still running
  ``grace`` seconds later (stuck in C code, or ignoring the alarm) is
  cancelled from outside, counted as a timeout, and its actor is killed
  and replaced.  Killing is the only cancellation a running actor task
  has: Ray refuses ``ray.cancel(force=True)`` for actor tasks ("force=True
  is not supported for actor tasks"), and a plain cancel cannot stop a
  running sync method.
* **A lost actor or node is counted, not a hung step:** its item becomes an
  ``error`` outcome naming the failure, a replacement actor takes the slot,
  and ``killed`` counts it, as ``WorkerPool`` counts replaced processes.

The pool connects to the cluster ``RAY_ADDRESS`` names (``ray start --head``
on one machine, ``ray start --address=HEAD:6379`` on the others), or starts
a local one, unless the caller has called ``ray.init`` already.  Every node
needs grpo-host and the reward packs installed in the same environment:
tasks travel as references to module-level rewards, not as code.  Ray is
imported here only, and this module only when the ``ray`` pool is chosen.
"""

from __future__ import annotations

import signal
import time
import traceback
from collections import deque
from collections.abc import Sequence
from typing import Any

import ray

from .rewards import RewardUnusable
from .workers import STARTUP_TIMEOUT, Outcome, Task, WorkerError, _on_alarm, _Timeout

__all__ = ["RayPool"]


class _Slot:
    """One warm worker: runs one item at a time, timing it with SIGALRM as a local worker does."""

    def __init__(self) -> None:
        signal.signal(signal.SIGALRM, _on_alarm)

    def ready(self) -> bool:
        return True

    def call(self, fn, args, kwargs, timeout) -> tuple[str, Any, str | None]:
        try:
            if timeout:
                signal.setitimer(signal.ITIMER_REAL, timeout)
            try:
                return "ok", fn(*args, **kwargs), None
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        except _Timeout:
            return "timeout", None, None
        except RewardUnusable as exc:
            return "unusable", None, f"{type(exc).__name__}: {exc}"
        except Exception as exc:
            tb = "".join(traceback.format_exception(exc)[-3:]).rstrip()
            return "error", None, f"{type(exc).__name__}: {exc}\n{tb}"


def _first_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"


class RayPool:
    """``size`` Ray actors with per-item timeouts, hard kills and replacements; see the module docstring.

    :param size: actors (one CPU each); default: the cluster's CPUs.
    :param grace: seconds past an item's timeout before its actor is killed.
    """

    def __init__(self, size: int | None = None, *, grace: float = 1.0) -> None:
        if not ray.is_initialized():
            ray.init(include_dashboard=False, logging_level="warning")
        self.size = size or max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.grace = grace
        self.killed = 0
        self._remote = ray.remote(num_cpus=1, max_restarts=0)(_Slot)
        self._actors: list[Any] = []

    def _start(self, count: int) -> list[Any]:
        actors = [self._remote.remote() for _ in range(count)]
        try:
            ray.get([a.ready.remote() for a in actors], timeout=STARTUP_TIMEOUT)
        except ray.exceptions.GetTimeoutError:
            for actor in actors:
                ray.kill(actor)
            raise WorkerError(f"{count} Ray actors did not start within {STARTUP_TIMEOUT:.0f} s: does the cluster "
                              f"have {count} free CPUs? (it has {ray.cluster_resources().get('CPU', 0):.0f})") from None
        except ray.exceptions.RayError as exc:
            raise WorkerError(f"a grpo-host Ray actor failed to start: {exc}") from None
        return actors

    def _replace(self, slot: int) -> None:
        ray.kill(self._actors[slot], no_restart=True)
        self.killed += 1
        self._actors[slot] = self._start(1)[0]

    def run(self, tasks: Sequence[Task], timeout: float | None) -> list[Outcome]:
        """Run every task, at most ``size`` at a time; one :class:`~grpo_host.workers.Outcome` per task, in order."""
        want = min(self.size, len(tasks))
        if len(self._actors) < want:
            self._actors += self._start(want - len(self._actors))
        results: list[Outcome | None] = [None] * len(tasks)
        pending = deque(range(len(tasks)))
        idle = list(range(want))
        busy: dict[Any, tuple[int, int, float]] = {}  # ref -> (slot, task index, deadline)
        while pending or busy:
            while pending and idle:
                slot, index = idle.pop(), pending.popleft()
                fn, args, kwargs = tasks[index]
                try:
                    ref = self._actors[slot].call.remote(fn, args, kwargs, timeout)
                except Exception as exc:  # the task did not pickle
                    results[index] = Outcome("error", error=f"cannot send to a Ray actor: {exc}")
                    idle.append(slot)
                    continue
                busy[ref] = (slot, index, time.monotonic() + timeout + self.grace if timeout else float("inf"))
            if not busy:
                continue
            wait_for = min(d for _, _, d in busy.values()) - time.monotonic()
            done, _ = ray.wait(list(busy), num_returns=1, timeout=None if wait_for == float("inf") else max(wait_for, 0))
            if done:
                done, _ = ray.wait(list(busy), num_returns=len(busy), timeout=0)
            for ref in done:
                slot, index, _ = busy.pop(ref)
                try:
                    status, value, error = ray.get(ref)
                except ray.exceptions.RayActorError as exc:  # the actor's process or its node died
                    results[index] = Outcome("error", error=f"Ray actor lost: {_first_line(exc)}")
                    self._replace(slot)
                except ray.exceptions.RayError as exc:  # the value could not come back (it did not pickle)
                    results[index] = Outcome("error", error=f"the result could not be sent back: {_first_line(exc)}")
                else:
                    results[index] = Outcome(status, value, error)
                idle.append(slot)
            now = time.monotonic()
            for ref, (slot, index, deadline) in list(busy.items()):
                if now > deadline:  # did not answer its own alarm: stuck outside Python
                    del busy[ref]
                    ray.cancel(ref)
                    results[index] = Outcome("timeout")
                    self._replace(slot)
                    idle.append(slot)
        return results  # type: ignore[return-value]

    def close(self) -> None:
        for actor in self._actors:
            ray.kill(actor, no_restart=True)
        self._actors.clear()
