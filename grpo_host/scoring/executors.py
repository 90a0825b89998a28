"""Where reward items run, with a time bound that holds: the executors behind one interface.

Every executor takes tasks ``(fn, args, kwargs)`` and a per-item timeout
and returns one :class:`~grpo_host.scoring.calls.Outcome` per task, in
order, never raising for a task's failure: each call goes through
:func:`grpo_host.scoring.calls.call`, the one catch site.

Every bound of a synchronous item counts its work, not the machine's load
(:mod:`grpo_host.scoring.clocks`): the timeout is CPU seconds, and what uses
no CPU is stopped at the backstop, :data:`~grpo_host.scoring.worker.BACKSTOP`
times the timeout in wall seconds not spent waiting for a CPU (outcome
``backstop``).

* :class:`InlineRunner` runs items on a daemon thread of this process, so the
  caller can stop waiting once the thread's CPU clock reaches the timeout (or
  the backstop passes).  Cheap, but a timed-out call
  cannot be killed: it is abandoned (and a new thread takes over).  Fine for
  regexes and string checks.  An abandoned thread is asked to stop (an
  exception raised in it at its next Python instruction), so a call that
  spins in Python code does not go on using a CPU and the GIL for the
  life of the process; one that waits in C code stops when the wait ends.
* :class:`WorkerPool` runs items in worker processes.  The timeout is
  enforced twice: inside the worker (``SIGPROF`` at the CPU timeout,
  ``SIGALRM`` at the backstop, raise in the call) and from outside (a worker
  whose CPU time, read from ``/proc``, or backstop clock is ``grace`` seconds
  past its bound, e.g. stuck in C code that never checks signals, is killed with
  SIGKILL and replaced).  A worker whose call the alarm interrupted is
  replaced too: the call may have been importing a module or updating
  state, and the next item must not inherit that.  Consecutive items go to a
  worker in chunks (:func:`chunk_size`), one message each way per chunk:
  the messages, not the items, were most of a cheap item's cost.  This is the one for sympy, code and anything that
  can hang the interpreter.  :class:`grpo_host.scoring.ray_pool.RayPool` is
  the same on a Ray cluster.
* :class:`AsyncRunner` runs ``async def`` rewards on an event loop of its
  own thread, so a judge's many waiting calls overlap each other and the
  synchronous members the caller scores meanwhile.  Its coroutines are
  submitted first and collected last; inside them each item goes through
  :func:`grpo_host.scoring.calls.acall`.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import pickle
import queue
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection, wait
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import WorkerError
from .calls import Failure, Outcome, call, install_alarm
from .clocks import Watch
from .worker import BACKSTOP, mark_worker

if TYPE_CHECKING:
    import asyncio

__all__ = ["AsyncRunner", "Executor", "InlineRunner", "Task", "WorkerPool"]

STARTUP_TIMEOUT = 120.0
"""Seconds a new worker interpreter may take to import grpo_host and say it is ready."""

Task = tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]
Stop = Callable[[Outcome], bool]
"""Called with each outcome as it arrives; once it returns True no further task of the run is started (those get
``Outcome("skipped")``): how the ensemble stops calling a reward that hangs or kills its worker."""


class Executor(Protocol):
    """What the ensemble needs of a place where per-item calls run."""

    def run(self, tasks: Sequence[Task], timeout: float | None, stop: Stop | None = None) -> list[Outcome]:
        """One outcome per task, in order; a task's failure or timeout is its outcome, never an exception.
        ``stop``: see :data:`Stop` (tasks already running finish, under their timeout)."""

    def close(self) -> None:
        """Stop any processes or actors; the executor may be used again afterwards."""


class InlineRunner:
    """Runs calls one at a time on a daemon thread; the caller waits until the thread has used ``timeout`` CPU
    seconds on the call, or until the backstop (:class:`~grpo_host.scoring.clocks.Watch`).

    The thread starts on the first call that has a timeout and ends on :meth:`close` (a later call starts a
    new one), so an ensemble or a tool session that is done holds no thread.
    """

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue | None = None

    def _start(self) -> queue.SimpleQueue:
        self._jobs = queue.SimpleQueue()
        self._done: queue.SimpleQueue[Outcome] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, args=(self._jobs, self._done), daemon=True,
                                        name="grpo-host-inline")
        self._thread.start()
        return self._jobs

    @staticmethod
    def _loop(jobs: queue.SimpleQueue, done: queue.SimpleQueue) -> None:
        with contextlib.suppress(Abandoned):
            while (job := jobs.get()) is not None:
                task, timeout = job
                done.put(call(*task, timeout=timeout))

    def run(self, tasks: Sequence[Task], timeout: float | None, stop: Stop | None = None) -> list[Outcome]:
        outcomes: list[Outcome] = []
        for task in tasks:
            if outcomes and stop is not None and stop(outcomes[-1]):
                return outcomes + [Outcome("skipped")] * (len(tasks) - len(outcomes))
            outcomes.append(self._one(task, timeout))
        if outcomes and stop is not None:
            stop(outcomes[-1])
        return outcomes

    def _one(self, task: Task, timeout: float | None) -> Outcome:
        if timeout is None:
            return call(*task)
        jobs = self._jobs or self._start()
        watch, backstop = Watch.thread(self._thread), BACKSTOP * timeout
        jobs.put((task, timeout))
        while True:
            try:
                return self._done.get(timeout=watch.next_look(timeout, backstop))
            except queue.Empty:
                status = watch.over(timeout, backstop)
                if status is not None:
                    self.close()  # the next call gets a new thread
                    _abandon(self._thread)
                    return Outcome(status)

    def close(self) -> None:
        """Let the thread end (it exits once it is idle); the runner may be used again."""
        if self._jobs is not None:
            self._jobs.put(None)
            self._jobs = None


class Abandoned(BaseException):
    """Raised in an inline thread whose call was given up on; a BaseException so the reward's ``except Exception``
    does not eat it (one that catches everything keeps its thread, as before)."""


def _abandon(thread: threading.Thread) -> None:
    """Raise :class:`Abandoned` in ``thread`` at its next Python instruction (CPython's
    ``PyThreadState_SetAsyncExc``; elsewhere the thread is left to end when its call returns)."""
    if thread.ident is not None and thread.is_alive() and sys.implementation.name == "cpython":
        import ctypes

        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(Abandoned))


class AsyncRunner:
    """An event loop on a daemon thread, where async rewards' coroutines run while the caller does other work.

    ``submit`` hands a coroutine over and returns a future at once; ``wait``
    collects it.  Per-item timeouts are the coroutine's own business
    (``asyncio.wait_for``); ``wait``'s ``backstop`` is for a coroutine that
    blocks the loop itself (synchronous work inside ``async def``), which no
    cancellation can stop: past the backstop, a loop that does not answer a
    ping within :attr:`STALL` seconds is abandoned and a new one started, as
    :class:`InlineRunner` abandons a stuck thread.  A loop that still turns
    is only slow (a loaded machine), and its items' own timeouts bring them
    home, so it is waited for up to twice the backstop: a busy machine must
    not cost a batch its rewards.
    """

    STALL = 1.0
    """Seconds a loop may take to answer a ping before it counts as blocked by a coroutine."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None

    def submit(self, coro: Any) -> concurrent.futures.Future:
        import asyncio  # here, not at the top: the command and every worker import this module, and asyncio costs
        # ~50 ms of CPU to import (issue 39), which only async rewards need

        if self._loop is None:
            self._loop = asyncio.new_event_loop()
            threading.Thread(target=_serve, args=(self._loop,), daemon=True, name="grpo-host-async").start()
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def wait(self, future: concurrent.futures.Future, backstop: float | None) -> Any:
        """The coroutine's result; raises ``TimeoutError`` (and starts over with a new loop) past ``backstop``
        if the loop does not answer a ping within :attr:`STALL` seconds, or past twice ``backstop`` whatever."""
        if backstop is None:
            return future.result()
        start = time.monotonic()
        while True:
            try:
                return future.result(timeout=max(start + backstop - time.monotonic(), self.STALL / 4))
            except concurrent.futures.TimeoutError:
                if time.monotonic() - start >= 2 * backstop or not self._answers(self.STALL) and not future.done():
                    future.cancel()
                    self.close()
                    raise TimeoutError from None

    def _answers(self, seconds: float) -> bool:
        """Whether the loop runs a callback within ``seconds``: it turns, so no coroutine is blocking it.
        An abandoned loop (another member of the batch found it blocked) does not."""
        if self._loop is None:
            return False
        turned = threading.Event()
        self._loop.call_soon_threadsafe(turned.set)
        return turned.wait(seconds)

    def close(self) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._loop = None


def _serve(loop: asyncio.AbstractEventLoop) -> None:
    """Run ``loop`` until it is stopped, then cancel what it still holds and close it (its sockets with it)."""
    import asyncio

    try:
        loop.run_forever()
    finally:
        pending = asyncio.all_tasks(loop)
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


PARENT_CHECK = 0.25
"""Seconds between a worker's checks that the process which started it is still there."""


def _leave_with(parent: int) -> None:
    """End this worker (at once, mid-call) once ``parent`` is gone: a parent killed with SIGKILL cannot kill its
    workers, and a call still running would otherwise go on, and write to a closed pipe, after it."""
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK)
    os._exit(0)


FLUSH = 0.5
"""A worker running a chunk of items sends back what it has answered once half a timeout of CPU or wall time has
passed since its last message, so the pool's outside bound on a chunk (:func:`_chunk_limits`) never counts more
than that of items already done against the one running."""


def _worker_main(conn) -> None:
    """Serve chunks of calls from the parent until it closes the pipe, sends None, or is gone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    threading.Thread(target=_leave_with, args=(os.getppid(),), daemon=True, name="grpo-host parent watch").start()
    install_alarm()
    mark_worker()
    try:
        conn.send("ready")
    except OSError:  # parent gone before it heard
        return
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):  # parent gone
            return
        if msg is None or not _serve_chunk(conn, *msg):
            return


def _serve_chunk(conn, items: list[tuple[int, Callable[..., Any], tuple, dict]], timeout: float | None) -> bool:
    """Run a chunk's items in order, each under its own alarm, and send their outcomes back: at the end, after an
    item its alarm stopped (the parent replaces this worker then: the rest of the chunk is not run here), and
    whenever :data:`FLUSH` times the timeout has passed since the last message.  False once the parent is gone."""
    answered: list[tuple[int, Outcome]] = []
    cpu, wall = time.process_time(), time.monotonic()
    for n, (index, fn, args, kwargs) in enumerate(items, 1):
        out = call(fn, args, kwargs, alarm=timeout)
        answered.append((index, out))
        due = timeout is not None and max(time.process_time() - cpu, time.monotonic() - wall) >= FLUSH * timeout
        if n == len(items) or out.timed_out or due:
            try:
                _send_outcomes(conn, answered)
            except OSError:  # the parent is gone (a broken pipe): nobody to answer
                return False
            if out.timed_out:
                return True
            answered, cpu, wall = [], time.process_time(), time.monotonic()
    return True


def _send_outcomes(conn, answered: list[tuple[int, Outcome]]) -> None:
    """Send (index, outcome) pairs in one message; a value that does not pickle becomes its item's error."""
    try:
        conn.send(answered)
    except OSError:
        raise
    except Exception:  # some value did not pickle: find which, and send the rest as they are
        conn.send([(index, _picklable(out)) for index, out in answered])


def _picklable(out: Outcome) -> Outcome:
    try:
        pickle.dumps(out)
    except Exception as exc:
        return Outcome("error", error=Failure.note(f"result could not be sent back: {exc}"))
    return out


class _Worker:
    """A plain ``python -m grpo_host.scoring.executors`` child talking pickle over its own pipe pair.

    A fresh interpreter rather than fork or multiprocessing: it inherits no
    threads or CUDA state from a training process, and it never re-imports
    the user's ``__main__`` (a training script without a main guard works).
    """

    def __init__(self) -> None:
        down_r, down_w = os.pipe()
        up_r, up_w = os.pipe()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}  # import what the parent can
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "grpo_host.scoring.executors", str(down_r), str(up_w)],
                pass_fds=(down_r, up_w),
                stdin=subprocess.DEVNULL,
                stdout=_stderr_fd(),  # a reward's print() must not land in `grpo-host score --out -`
                env=env,
            )
        except OSError as exc:  # out of processes or memory
            for fd in (down_r, down_w, up_r, up_w):
                os.close(fd)
            raise WorkerError(f"cannot start a grpo-host worker process: {exc}") from None
        os.close(down_r)
        os.close(up_w)
        self.conn = _Duplex(Connection(up_r, writable=False), Connection(down_w, readable=False))
        self.ready = False  # set when the child says so: its start-up is no part of any item's timeout

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(5)
        self.conn.close()


def _died(code: int | None) -> str:
    """What became of a worker that stopped answering: its exit code, or the signal that killed it."""
    if code is not None and code < 0:
        with contextlib.suppress(ValueError):
            return f"worker process died (killed by signal {signal.Signals(-code).name})"
    return f"worker process died (exit code {code})"


def _stderr_fd() -> int:
    try:
        return sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # no real stderr (e.g. captured by a notebook)
        return subprocess.DEVNULL


class _Duplex:
    """Two one-way connections used as one; ``fileno`` is the readable end."""

    def __init__(self, reader: Connection, writer: Connection) -> None:
        self.reader, self.writer = reader, writer
        self.recv, self.send = reader.recv, writer.send

    def fileno(self) -> int:
        return self.reader.fileno()

    def close(self) -> None:
        self.reader.close()
        self.writer.close()


MAX_CHUNK = 16
"""Most tasks a worker is sent in one message."""
CHUNKS_PER_WORKER = 4
"""Chunks are no larger than leaves this many per worker, so the workers finish a batch at about the same time."""


def chunk_size(tasks: int, workers: int) -> int:
    """How many consecutive tasks go to a worker in one message: one when there are few (every worker busy, the
    batch's last items not waiting behind others), else up to :data:`MAX_CHUNK`.  Each message costs both processes
    a pickling, a pipe write and a wake-up, about as much as a plain number's whole verdict."""
    return max(1, min(MAX_CHUNK, tasks // (CHUNKS_PER_WORKER * workers)))


def _chunk_limits(timeout: float | None, grace: float, unanswered: int) -> tuple[float, float]:
    """The outside bounds (CPU seconds, backstop seconds) on a worker's clocks since its chunk was handed out or it
    last sent outcomes back: the running task's timeout and backstop plus ``grace``, and, while more than it is
    unanswered, the :data:`FLUSH` share of a timeout that tasks done but not yet sent may have used before it."""
    if timeout is None:
        return 0.0, 0.0
    done_before = FLUSH * timeout if unanswered > 1 else 0.0
    return timeout + done_before + grace, BACKSTOP * timeout + done_before + grace


class WorkerPool:
    """A fixed set of worker processes with per-call timeouts and hard kills.

    Workers are fresh interpreters (see :class:`_Worker`) and stay warm
    across calls: plugin modules are imported once per worker.
    """

    def __init__(self, size: int | None = None, *, grace: float = 1.0) -> None:
        self.size = size or os.cpu_count() or 1
        self.grace = grace
        self._workers: list[_Worker] = []
        self.killed = 0
        """Workers killed from outside (stuck past their alarm) or found dead, and replaced."""
        self.recycled = 0
        """Workers replaced after their own alarm stopped a call: an interrupted call may leave half-imported
        modules or half-updated state behind, so the next item gets a fresh interpreter."""

    @property
    def pids(self) -> list[int]:
        """The worker processes' ids, e.g. to read their CPU time (benchmarks)."""
        return [w.process.pid for w in self._workers]

    def _replace(self, worker: _Worker, *, recycled: bool = False) -> _Worker:
        worker.kill()
        if recycled:
            self.recycled += 1
        else:
            self.killed += 1
        fresh = _Worker()
        self._workers[self._workers.index(worker)] = fresh
        return fresh

    def run(self, tasks: Sequence[Task], timeout: float | None, stop: Stop | None = None) -> list[Outcome]:
        """Run every task, at most ``size`` at a time; one :class:`Outcome` per task, in order.

        Tasks go to the workers in chunks of consecutive ones (:func:`chunk_size`: one message each way per chunk,
        not per task, and a GRPO group's items, which share a gold, land in one worker) while there are enough to
        keep every worker busy; each task still runs under its own alarm in the worker.  A chunk's clocks start
        when it is handed to a worker that has said it is ready, so interpreter start-up never eats into an item's
        timeout, and start again at each message the worker sends back (:data:`FLUSH`); from outside, a chunk is
        bounded by :func:`_chunk_limits`.  When a chunk's worker dies or is killed from outside, its unanswered
        tasks run again one per message, so only the task that kills or hangs a worker is counted.  ``stop``,
        when given, sees each outcome; once it says so, the tasks not yet handed out are ``skipped`` (those of a
        chunk already handed out run).

        One loop of about 100 lines on purpose: the pending queue and the three states of a worker (starting,
        idle, busy) change together at every wake-up, and split into functions they would be one mutable state
        handed between them.
        """
        while len(self._workers) < min(self.size, len(tasks)):
            self._workers.append(_Worker())
        results: dict[int, Outcome] = {}  # task index -> its outcome
        pending = deque(range(len(tasks)))
        alone: set[int] = set()  # tasks of a chunk whose worker died or was killed: sent one per message
        idle = [w for w in self._workers if w.ready]
        starting = {w: time.monotonic() + STARTUP_TIMEOUT for w in self._workers if not w.ready}
        busy: dict[_Worker, tuple[deque[int], Watch | None]] = {}  # worker -> (its unanswered tasks, their clocks)
        size = chunk_size(len(tasks), self.size)
        stopped = False

        def done(index: int, out: Outcome) -> None:
            nonlocal stopped
            results[index] = out
            if stop is not None and stop(out):
                stopped = True
                for left in pending:
                    results[left] = Outcome("skipped")
                pending.clear()

        def again(indices: deque[int]) -> None:
            """A lost chunk's unanswered tasks, back at the front of the queue to run one by one (or skipped)."""
            for index in indices:
                results[index] = Outcome("skipped")
            if not stopped:
                alone.update(indices)
                pending.extendleft(reversed(indices))

        while pending or busy:
            while pending and idle:
                worker, chunk = idle.pop(), deque([pending.popleft()])
                while pending and len(chunk) < size and chunk[0] not in alone and pending[0] not in alone:
                    chunk.append(pending.popleft())
                try:
                    worker.conn.send(([(i, *tasks[i]) for i in chunk], timeout))
                except (BrokenPipeError, OSError):
                    starting[self._replace(worker)] = time.monotonic() + STARTUP_TIMEOUT
                    pending.extendleft(reversed(chunk))
                    continue
                except Exception as exc:  # a task did not pickle: send each alone to find which
                    if len(chunk) > 1:
                        alone.update(chunk)
                        pending.extendleft(reversed(chunk))
                    else:
                        done(chunk[0], Outcome("error", error=Failure.note(f"cannot send to a worker process: {exc}")))
                    idle.append(worker)
                    continue
                busy[worker] = (chunk, Watch.process(worker.process.pid) if timeout else None)
            if not busy and not starting:
                continue
            now = time.monotonic()
            wait_for = min([w.next_look(*_chunk_limits(timeout, self.grace, len(c))) for c, w in busy.values()
                            if w is not None] + [d - now for d in starting.values()], default=float("inf"))
            ready = wait([w.conn.reader for w in (*busy, *starting)],
                         timeout=None if wait_for == float("inf") else max(wait_for, 0))
            for worker in [w for w in starting if w.conn.reader in ready]:
                del starting[worker]
                try:
                    worker.conn.recv()  # the worker's "ready"
                except (EOFError, OSError):
                    raise WorkerError(
                        f"a grpo-host worker process failed to start (exit code {worker.process.wait(5)}); "
                        f"its error, if any, is on stderr above; it runs "
                        f"`{sys.executable} -m grpo_host.scoring.executors` "
                        "with this process's environment and sys.path"
                    ) from None
                worker.ready = True
                idle.append(worker)
            for worker in [w for w in busy if w.conn.reader in ready]:
                chunk, _ = busy.pop(worker)
                try:
                    answered: list[tuple[int, Outcome]] = worker.conn.recv()
                except (EOFError, OSError):
                    try:  # the pipe closes as it dies: its exit code follows at once
                        code = worker.process.wait(1)
                    except subprocess.TimeoutExpired:
                        code = None
                    if len(chunk) == 1:
                        done(chunk[0], Outcome("error", error=Failure.note(_died(code), "worker died")))
                    else:  # which of them killed it is not known: each runs again alone
                        again(chunk)
                    starting[self._replace(worker)] = time.monotonic() + STARTUP_TIMEOUT
                    continue
                for index, out in answered:
                    chunk.remove(index)
                    done(index, out)
                if answered and answered[-1][1].timed_out:  # interrupted mid-call: its state is not to be trusted
                    again(chunk)
                    starting[self._replace(worker, recycled=True)] = time.monotonic() + STARTUP_TIMEOUT
                elif chunk:  # more of the chunk to come: its clocks start again
                    busy[worker] = (chunk, Watch.process(worker.process.pid) if timeout else None)
                else:
                    idle.append(worker)
            now = time.monotonic()
            for worker, (chunk, watch) in list(busy.items()):
                status = None if watch is None else watch.over(*_chunk_limits(timeout, self.grace, len(chunk)))
                if status is not None:  # did not answer its own alarm: stuck outside Python
                    del busy[worker]
                    if len(chunk) == 1:
                        done(chunk[0], Outcome(status))
                    else:  # which one hangs is not known: each runs again alone
                        again(chunk)
                    starting[self._replace(worker)] = now + STARTUP_TIMEOUT
            if any(now > deadline for deadline in starting.values()):
                raise WorkerError(f"a grpo-host worker process did not start within {STARTUP_TIMEOUT:.0f} s "
                                  "(is the machine out of memory or processes?)")
        # The loop ends only when no task is pending or busy: every task has its outcome.
        return [results[i] for i in range(len(tasks))]

    def close(self) -> None:
        # Plain try/except rather than contextlib.suppress, here and in __del__ (which calls this): at interpreter
        # exit this module's globals may already be cleared, and every worker must still be killed.
        for worker in self._workers:
            try:  # noqa: SIM105
                worker.conn.send(None)
            except OSError:
                pass
            worker.kill()
        self._workers.clear()

    def __del__(self) -> None:
        try:  # noqa: SIM105  # see close
            self.close()
        except Exception:
            pass


if __name__ == "__main__":
    _worker_main(_Duplex(Connection(int(sys.argv[1]), writable=False), Connection(int(sys.argv[2]), readable=False)))
