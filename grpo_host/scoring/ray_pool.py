"""A Ray executor for process-executor rewards: :class:`RayPool`, the ``ray`` entry of ``ensemble.POOLS``.

When a step's code or math items saturate the trainer node's cores, the
remedy is more machines, and Ray already runs them.  ``RayPool`` has
:class:`~grpo_host.scoring.executors.WorkerPool`'s interface and keeps its guarantees
on a Ray cluster:

* **Warm state per worker:** one actor per slot, each a long-lived process,
  so a reward's imports and its module-level state (the code reward's
  sandbox) are made once per actor and reused by every item it runs.
* **Per-item timeouts that hold, and count the work:** an item's clocks
  start when it is handed to an actor that is up.  Inside the actor the
  same timers as in a local worker interrupt Python code at the timeout in
  CPU seconds and at the backstop (sync actor methods run on the actor
  process's main thread; :mod:`grpo_host.scoring.clocks`); an item still
  running ``grace`` seconds past either (stuck in C code, or ignoring the
  alarm) is cancelled from outside, counted as a ``timeout`` or a
  ``backstop`` as a local worker's would be, and its actor is killed and
  replaced.  The pool reads the CPU time and CPU wait of the actors on its
  own node from ``/proc``; an actor on another node is bounded from outside
  by the plain wall clock at the backstop (its own timers still count its
  CPU and discount its CPU wait), and a kill there is a ``backstop`` whatever
  the item was doing.  Killing is the only cancellation a running actor task
  has: Ray refuses ``ray.cancel(force=True)`` for actor tasks ("force=True
  is not supported for actor tasks"), and a plain cancel cannot stop a
  running sync method.  An actor whose item its own alarm stopped is
  replaced as well (``recycled``): the interrupted call may have left
  half-imported modules or half-updated state behind.
* **A lost actor or node is counted, not a hung step:** its item becomes an
  ``error`` outcome naming the failure, a replacement actor takes the slot,
  and ``killed`` counts it, as ``WorkerPool`` counts replaced processes.
* **Several items per call** when there are enough to keep every actor
  busy (``chunk``, 4 by default): Ray's per-call cost in the calling
  process, not the cluster, is what limits a large cluster.  When a call of
  several items has to be killed or loses its actor, its items run again one
  per call, so only the item that hangs or kills its actor is counted; an
  item that hangs outside Python is thus answered after at most
  ``(chunk + 1) * backstop + 2 * grace``.

The pool connects to the cluster ``RAY_ADDRESS`` names (``ray start --head``
on one machine, ``ray start --address=HEAD:6379`` on the others), or starts
a local one, unless the caller has called ``ray.init`` already.  Every node
needs grpo-host and the reward packs installed in the same environment:
tasks travel as references to module-level rewards, not as code.  Ray is
imported here only, and this module only when the ``ray`` pool is chosen.
"""

from __future__ import annotations

import logging
import os
from collections import deque
from collections.abc import Sequence
from typing import Any

import ray

from ..errors import WorkerError
from .calls import Failure, Kind, Outcome, call, install_alarm
from .clocks import Stopped, Watch
from .executors import STARTUP_TIMEOUT, Stop, Task
from .worker import BACKSTOP, mark_worker

__all__ = ["RayPool"]


class _Slot:
    """One warm worker: runs the items of a call one after another, timing each as a local worker does."""

    def __init__(self) -> None:
        install_alarm()
        mark_worker()

    def ready(self) -> tuple[str, int]:
        """Where the actor runs: its node and its process, so a pool on the same node can read its clocks."""
        return ray.get_runtime_context().get_node_id(), os.getpid()

    def call(self, tasks, timeout) -> list[Outcome]:
        return [call(fn, args, kwargs, alarm=timeout) for fn, args, kwargs in tasks]


def _first_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"


class RayPool:
    """``size`` Ray actors with per-item timeouts, hard kills and replacements; see the module docstring.

    :param size: actors (one CPU each); default: the cluster's CPUs.
    :param grace: seconds past an item's CPU timeout, or its backstop, before its actor is killed.
    :param chunk: most items per actor call.  Each call costs the caller about 0.7 ms of CPU
        (``benchmarks/serve.md``), which caps one process at about 1,400 calls a second however
        large the cluster; sending up to ``chunk`` items per call divides that cost.  A call's
        bounds are its items' CPU timeouts, and their backstops, added up, each plus ``grace``.
    """

    def __init__(self, size: int | None = None, *, grace: float = 1.0, chunk: int = 4) -> None:
        if not ray.is_initialized():
            ray.init(include_dashboard=False, logging_level=logging.WARNING)
        self.size = size or max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.grace = grace
        self.chunk = max(1, chunk)
        self.killed = 0
        self.recycled = 0
        """Actors replaced after their own alarm stopped an item (as :class:`WorkerPool` recycles workers)."""
        self._remote = ray.remote(num_cpus=1, max_restarts=0)(_Slot)
        self._actors: list[Any] = []
        self._pids: list[int | None] = []
        """Each actor's process id when it runs on this node (its clocks are readable here), else None."""
        self._node = ray.get_runtime_context().get_node_id()

    def _start(self, count: int) -> list[tuple[Any, int | None]]:
        # Any: Ray types a handle as "ActorHandle or the class itself", whose methods have no .remote() unless
        # each is decorated with @ray.method.
        actors: list[Any] = [self._remote.remote() for _ in range(count)]
        try:
            where = ray.get([a.ready.remote() for a in actors], timeout=STARTUP_TIMEOUT)
        except ray.exceptions.GetTimeoutError:
            for actor in actors:
                ray.kill(actor)
            raise WorkerError(f"{count} Ray actors did not start within {STARTUP_TIMEOUT:.0f} s: does the cluster "
                              f"have {count} free CPUs? (it has {ray.cluster_resources().get('CPU', 0):.0f})") from None
        except ray.exceptions.RayError as exc:
            raise WorkerError(f"a grpo-host Ray actor failed to start: {exc}") from None
        return [(actor, pid if node == self._node else None) for actor, (node, pid) in zip(actors, where, strict=True)]

    def _replace(self, slot: int, *, recycled: bool = False) -> None:
        ray.kill(self._actors[slot], no_restart=True)
        if recycled:
            self.recycled += 1
        else:
            self.killed += 1
        self._actors[slot], self._pids[slot] = self._start(1)[0]

    def run(self, tasks: Sequence[Task], timeout: float | None, stop: Stop | None = None) -> list[Outcome]:
        """Run every task, at most ``size`` calls at a time; one outcome per task, in order.

        Items go to actors up to ``chunk`` per call while there are enough to keep every actor busy.  ``stop`` is
        asked after each call's outcomes come back (a chunk's items are not stopped singly).
        """
        want = min(self.size, len(tasks))
        if len(self._actors) < want:
            for actor, pid in self._start(want - len(self._actors)):
                self._actors.append(actor)
                self._pids.append(pid)
        results: dict[int, Outcome] = {}  # task index -> its outcome
        pending = deque(range(len(tasks)))
        singles: deque[int] = deque()  # items of a call whose actor had to be killed: each runs again on its own
        idle = list(range(want))
        busy: dict[Any, tuple[int, list[int], Watch | None]] = {}  # ref -> (slot, task indices, the call's clocks)
        while pending or singles or busy:
            while (pending or singles) and idle:
                slot = idle.pop()
                if singles:
                    indices = [singles.popleft()]
                else:
                    k = min(self.chunk, max(1, len(pending) // (2 * want)))
                    indices = [pending.popleft() for _ in range(min(k, len(pending)))]
                try:
                    ref = self._actors[slot].call.remote([tasks[i] for i in indices], timeout)
                except Exception as exc:  # a task did not pickle
                    for i in indices:
                        results[i] = Outcome("error", error=Failure.note(f"cannot send to a Ray actor: {exc}"))
                    idle.append(slot)
                    continue
                pid = self._pids[slot]
                busy[ref] = (slot, indices, None if not timeout else Watch.elsewhere() if pid is None
                             else Watch.process(pid))
            if not busy:
                continue
            wait_for = min((w.next_look(*self._limits(timeout, len(i))) for _, i, w in busy.values()
                            if w is not None and timeout is not None), default=float("inf"))
            done, _ = ray.wait(list(busy), num_returns=1,
                               timeout=None if wait_for == float("inf") else max(wait_for, 0))
            if done:
                done, _ = ray.wait(list(busy), num_returns=len(busy), timeout=0)
            for ref in done:
                slot, indices, _ = busy.pop(ref)
                try:
                    replies = ray.get(ref)
                except ray.exceptions.RayActorError as exc:  # the actor's process or its node died
                    self._fail(indices, results, singles, f"Ray actor lost: {_first_line(exc)}", "worker died")
                    self._replace(slot)
                except ray.exceptions.RayError as exc:  # a value could not come back (it did not pickle)
                    self._fail(indices, results, singles, f"the result could not be sent back: {_first_line(exc)}")
                else:
                    for i, outcome in zip(indices, replies, strict=True):  # _Slot.call: one outcome per task
                        results[i] = outcome
                    if stop is not None and any([stop(outcome) for outcome in replies]):  # every outcome counted
                        results.update({i: Outcome("skipped") for i in (*pending, *singles)})
                        pending.clear()
                        singles.clear()
                    if any(outcome.timed_out for outcome in replies):  # interrupted mid-call: not reused
                        self._replace(slot, recycled=True)
                idle.append(slot)
            for ref, (slot, indices, watch) in list(busy.items()):
                status = None if watch is None or timeout is None else watch.over(*self._limits(timeout, len(indices)))
                if status is not None:  # an item did not answer its own alarm: stuck outside Python
                    del busy[ref]
                    ray.cancel(ref)
                    self._fail(indices, results, singles, None, timed_out=status)
                    self._replace(slot)
                    idle.append(slot)
        # The loop ends only when no item is pending, waiting to run again or busy: every item has its outcome.
        return [results[i] for i in range(len(tasks))]

    def _limits(self, timeout: float, items: int) -> tuple[float, float]:
        """A call's bounds from outside: its items' CPU timeouts and backstops added up, each plus ``grace``."""
        return items * timeout + self.grace, items * BACKSTOP * timeout + self.grace

    @staticmethod
    def _fail(indices: list[int], results: dict[int, Outcome], singles: deque[int], error: str | None,
              kind: Kind = "host", timed_out: Stopped = "timeout") -> None:
        """A call that failed as a whole: its one item is counted (``timed_out`` when ``error`` is None); a chunk's
        items run again one per call, so that only the item that hangs or kills its actor is counted."""
        if len(indices) > 1:
            singles.extend(indices)
        else:
            results[indices[0]] = (Outcome(timed_out) if error is None
                                   else Outcome("error", error=Failure.note(error, kind)))

    def close(self) -> None:
        for actor in self._actors:
            ray.kill(actor, no_restart=True)
        self._actors.clear()
        self._pids.clear()
