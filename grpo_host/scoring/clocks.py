"""The clocks an item's time limits read: the CPU time of its work, and the wall time it spent not waiting for a CPU.

A per-item timeout is a bound on the *work*: an item that needs 0.6 s of
CPU needs it on an idle machine and on one where ten other processes share
each core, and there it may take ten times as long by the wall clock.  So
the timeout counts CPU seconds (the worker process's, or the inline
thread's), and a second, larger bound, the *backstop*
(:data:`grpo_host.scoring.worker.BACKSTOP` times the timeout), stops what
uses no CPU at all (a sleep, a lock, a read from a server that never
answers).  The backstop counts wall seconds less the time the task spent
runnable but waiting for a CPU (the second field of Linux's
``/proc/<pid>/schedstat``): a starved item is not a waiting one, so no
load, however heavy, brings an item that works to its backstop.

An inline thread waiting for the GIL is asleep, not runnable, so the
kernel does not count that wait; the CPU time the process's other threads
used meanwhile (they held the GIL) is taken off its backstop clock instead,
so twenty busy scoring threads (``serve --concurrency 20``) do not stop a
working item.  The credit cannot be bounded by the item's own CPU time:
CPython hands the GIL over unevenly, and beside twenty spinning threads a
working item saw 7 to over 1,000 times its own CPU in the others'.  So a
thread that burns CPU without end beside a waiting item defers that item's
backstop; the one such thread the host makes, an abandoned inline call, is
stopped when it runs Python (:class:`~grpo_host.scoring.executors.InlineRunner`),
and one stuck in C code is the case the worker pool exists for.  What load can still change is the CPU time of the same
work (a sibling hyper-thread, a lower all-core clock): by a factor, which
is why timeouts leave room.

Where these clocks cannot be read (no ``/proc``: macOS; no per-thread CPU
clock), each falls back to the wall clock, which is what every bound was
before.  The ``/proc`` files are read for every item, so each stays open
and is read again from its start (one ``pread``, not an open, a read and a
close).
"""

from __future__ import annotations

import functools
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Literal

__all__ = ["POLL", "Stopped", "Watch", "cpu_seconds", "waited_seconds"]

Stopped = Literal["timeout", "backstop"]
"""Which bound stopped an item: its CPU timeout, or the backstop."""

POLL = 1.0
"""Most seconds between two looks at an item watched from outside: a process's CPU time can grow faster than the
wall clock (several threads), so the lower bound on the time left is not waited out in one sleep."""

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


_KEPT = 64
"""Most ``/proc`` files kept open at once (the oldest is closed first)."""
_kept: OrderedDict[str, int] = OrderedDict()
_kept_lock = threading.Lock()


def _read_proc(path: str) -> bytes | None:
    """A ``/proc`` file's contents, through a descriptor kept open.  A descriptor stays bound to the process it was
    opened for: once that process is gone its reads fail, and the path is opened again (a new process may have
    its pid)."""
    with _kept_lock:
        for _ in range(2):
            fd = _kept.get(path)
            if fd is None:
                try:
                    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
                except OSError:
                    return None
                _kept[path] = fd
                if len(_kept) > _KEPT:
                    os.close(_kept.popitem(last=False)[1])
            try:
                data = os.pread(fd, 4096, 0)
            except OSError:
                data = b""
            if data:
                return data
            os.close(_kept.pop(path))
        return None


def cpu_seconds(pid: int) -> float | None:
    """CPU seconds (user and system, every thread) process ``pid`` has used; None where ``/proc`` cannot say."""
    try:
        fields = (_read_proc(f"/proc/{pid}/stat") or b"").rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _TICKS  # utime, stime: fields 14 and 15 of stat(5)
    except (IndexError, ValueError):
        return None


def waited_seconds(task: str) -> float | None:
    """Seconds task ``task`` (``"<pid>"`` or ``"<pid>/task/<tid>"``) spent runnable, waiting for a CPU."""
    try:
        return int((_read_proc(f"/proc/{task}/schedstat") or b"").split()[1]) / 1e9
    except (IndexError, ValueError):
        return None


class Watch:
    """One item's clocks from the moment it starts: :meth:`cpu` (its work) and :meth:`awake` (wall time less CPU
    wait), read from outside the item (the pool's loop, the inline runner's caller) or from inside (a signal
    handler)."""

    def __init__(self, cpu: Callable[[], float | None] | None, task: str | None,
                 held: Callable[[], float | None] | None = None) -> None:
        """``cpu``: the item's CPU clock; ``task``: its ``/proc`` task, whose CPU wait does not count as awake;
        ``held``: a clock of other time it was held back (an inline thread: its process's other threads' CPU)."""
        self._cpu = cpu
        self._task = task
        self._held = held
        self._start = time.monotonic()
        self._cpu0 = self._read_cpu()
        self._waited0 = None if task is None else waited_seconds(task)
        self._held0 = (held() or 0.0) if held is not None else 0.0
        self._last_cpu, self._last_waited = self._cpu0 or 0.0, self._waited0 or 0.0

    @classmethod
    def process(cls, pid: int) -> Watch:
        """Process ``pid``: its CPU time (all threads), and the CPU wait of its main thread, where items run."""
        return cls(lambda: cpu_seconds(pid), str(pid))

    @classmethod
    def elsewhere(cls) -> Watch:
        """A process whose clocks cannot be read here (a Ray actor on another node): it times its own CPU, and
        from here only the wall clock, at the backstop, bounds it."""
        return cls(lambda: 0.0, None)

    @classmethod
    def thread(cls, thread: threading.Thread) -> Watch:
        """A thread of this process: its own CPU clock, and its own CPU wait."""
        read: Callable[[], float | None] | None = None
        held: Callable[[], float | None] | None = None
        if thread.ident is not None and hasattr(time, "pthread_getcpuclockid"):
            clock = time.pthread_getcpuclockid(thread.ident)
            read = functools.partial(_thread_cpu, clock)
            held = functools.partial(_others_cpu, clock)
        return cls(read, f"{os.getpid()}/task/{thread.native_id}", held)

    def _read_cpu(self) -> float | None:
        return self._cpu() if self._cpu is not None else None

    def wall(self) -> float:
        return time.monotonic() - self._start

    def cpu(self) -> float:
        """CPU seconds used since the start (the wall clock where no CPU clock could be read at the start; the last
        reading once the task is gone)."""
        if self._cpu0 is None:
            return self.wall()
        now = self._read_cpu()
        if now is not None:
            self._last_cpu = now
        return self._last_cpu - self._cpu0

    def awake(self) -> float:
        """Wall seconds since the start, less those the task spent waiting for a CPU (or held back: see ``held``)."""
        held = (self._held() or self._held0) - self._held0 if self._held is not None else 0.0
        if self._waited0 is None:
            return self.wall() - held
        now = waited_seconds(self._task) if self._task else None
        if now is not None:
            self._last_waited = now
        return self.wall() - (self._last_waited - self._waited0) - held

    def over(self, timeout: float, backstop: float) -> Stopped | None:
        """``"timeout"`` once the CPU used reaches ``timeout``, ``"backstop"`` once :meth:`awake` reaches
        ``backstop``, else None.  Before the wall clock reaches either, neither can have (one thread's clocks never
        run faster than the wall clock; a worker's several threads are its own timer's to stop), and nothing is
        read."""
        if self.wall() < min(timeout, backstop):
            return None
        if self.cpu() >= timeout:
            return "timeout"
        if self.awake() >= backstop:
            return "backstop"
        return None

    def next_look(self, timeout: float, backstop: float) -> float:
        """Wall seconds to wait before :meth:`over` can first say something new (at most :data:`POLL` once the wall
        clock has passed a bound)."""
        early = min(timeout, backstop) - self.wall()
        if early > 0:
            return early
        return max(0.01, min(timeout - self.cpu(), backstop - self.awake(), POLL))


def _thread_cpu(clock: int) -> float | None:
    try:
        return time.clock_gettime(clock)
    except OSError:  # the thread has ended
        return None


def _others_cpu(clock: int) -> float | None:
    """CPU seconds this process's threads other than the one of ``clock`` have used."""
    own = _thread_cpu(clock)
    return None if own is None else time.process_time() - own
