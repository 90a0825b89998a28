"""Running untrusted Python: one warm bubblewrap sandbox per worker, a fork per program, a collector beside them.

The sandbox is built by :mod:`reward_plugins.sandbox.bwrap` (namespaces,
the read-only files, the scrubbed environment, the modes; ``docs/sandbox.md``
is the threat model); inside it runs this pack's server, :mod:`runner`,
which loads the seccomp filter of :mod:`reward_plugins.sandbox.seccomp`;
the whole sandbox has a total memory and process bound where a cgroup can
be had (:mod:`reward_plugins.sandbox.cgroup`), and per-process rlimits
(address space, CPU, processes, file size, open files) everywhere.  Each
program may write only its work folder and ``/dev/shm``, tmpfs of
:data:`WORK_BYTES` and :data:`SHM_BYTES` with an inode cap.

The verdict: for stdin/stdout cases the host compares the output; for
assert tests of the literal-call shape (:mod:`reward_plugins.code.shapes`)
the program only computes the calls and the collector, a process of the
sandbox that reads every program's output and never runs program code,
decides (see :mod:`runner`); other assert tests run in a judge process of
their own that calls the program's process over a pipe and gets back plain
data or proxies of its objects.

Speed comes from keeping the sandbox warm: starting bwrap and Python costs
about 0.3 s of CPU, a program run by a fork of the warm server a few
milliseconds all told (``benchmarks/code.md``).  Programs run one after
another in the *same* sandbox, so isolation between two programs rests on
the server's cleanup (every process killed, the work folder and
``/dev/shm`` emptied; System V IPC is not there at all) rather than on a fresh
namespace each time; whatever the server cannot account for, a timeout, or
no answer in time makes the host kill the whole sandbox (its PID namespace
dies with it) and build a new one.

The modes are :func:`~reward_plugins.sandbox.bwrap.isolation`'s.  In
``root`` mode the server keeps CAP_SETUID, SETGID and KILL (and
CAP_SYS_ADMIN until it has mounted its tmpfs), and the programs can signal
neither it nor the collector.  In ``none`` mode the ``code`` reward
refuses to run unless explicitly opted in (``unsafe_unisolated=true`` or
``GRPO_HOST_CODE_UNISOLATED=1``); the same server then runs unsandboxed
with rlimits, the seccomp filter where libseccomp is present, ``setsid``
and a subreaper that kills the program's whole process tree, in a
temporary folder, and says so on stderr.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import marshal
import os
import re
import select
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from reward_plugins.sandbox.bwrap import (
    ENV,
    KEEPER,
    START_TIMEOUT,
    Isolation,
    Mode,
    Namespace,
    bwrap_argv,
    host_uid,
    isolation,
    needed_paths,
    tail,
)
from reward_plugins.sandbox.cgroup import Cgroup
from reward_plugins.sandbox.seccomp import SeccompUnavailable, bpf

from . import plain
from .shapes import Calls

__all__ = ["Execution", "Isolation", "Limits", "Sandbox", "SandboxUnavailable", "announce_unisolated", "isolation"]

RUNNER = Path(__file__).with_name("runner.py")
WORK_BYTES = 256 << 20
WORK_INODES = 4096  # files and folders a program may create in its work folder
SHM_BYTES = 64 << 20
SHM_INODES = 256
MEMORY_RESERVE = 64 << 20  # the sandbox's own processes (bwrap's init, the server, the collector), in its cgroup
PROCESS_RESERVE = 8  # init, server, collector, a cleanup fork, with room
ANSWER_GRACE = 1.0  # seconds the host waits beyond a program's budget for the server's answer
PATIENCE = 0.5  # seconds the host waits on, past that, each time it finds a process of the sandbox runnable
WORK_PREFIX = "grpo-host-code-"
NOT_ISOLATED = (
    "grpo-host code reward: RUNNING UNISOLATED ({reason}), as explicitly asked for (unsafe_unisolated=true or "
    "GRPO_HOST_CODE_UNISOLATED=1). Completions' code runs on this machine as {user} with only rlimits, a "
    "seccomp filter where available and process-tree kills: it can read and write your files and reach your "
    "network. Every row scored so is counted as code/unisolated."
)


class SandboxUnavailable(RuntimeError):
    """No sandbox could be started here (or a started one stopped working)."""


@dataclass(frozen=True)
class Limits:
    """Per-program limits (every program of a sandbox may use different ones).

    ``timeout`` counts the CPU seconds of the program's processes, so a busy
    machine does not fail a program that a quiet one passes; a program that
    uses no CPU (a sleep, a blocked read) is stopped by the wall-clock
    backstop, ``backstop`` times the timeout, which does not count the time
    the program waited for a CPU (``runner.ProgramClock``).
    """

    timeout: float = 5.0
    backstop: float = 3.0
    memory: int = 1 << 30
    processes: int = 16
    file_size: int = 16 << 20
    max_output: int = 1 << 20


@dataclass(frozen=True)
class Execution:
    """What became of one program.

    ``status``: ``exited`` (see ``exit_code``), ``timeout`` (its CPU seconds, or the wall-clock backstop:
    ``backstop``),
    ``output_limit`` (more than ``max_output`` bytes of output) or
    ``crashed`` (the sandbox itself failed; it is rebuilt for the next run).
    ``cases``: for literal-call tests, the judge's verdict per case.
    ``passed_asserts``: for assert scripts, true only when the judge ran the
    tests to their end (a per-case token only the judge held) and every
    suspect call gave its result again when run apart.
    """

    status: Literal["exited", "timeout", "output_limit", "crashed"]
    exit_code: int | None = None
    stdout: str = ""
    stderr: str = ""
    passed_asserts: bool = False
    cases: tuple[bool, ...] = ()
    seconds: float = 0.0
    suspects: tuple[int, ...] = ()
    """Literal calls whose result repeats another same-program call's argument (:meth:`Sandbox.run` reruns them
    alone)."""
    backstop: bool = False
    """For a ``timeout``: the program was stopped by the wall-clock backstop (it waited), not by its CPU time."""
    cpu_seconds: float = 0.0
    """CPU seconds the program's processes used (every program of the run), as the timeout counts them."""

    @property
    def ok(self) -> bool:
        return self.status == "exited" and self.exit_code == 0


@functools.cache
def announce_unisolated(reason: str) -> None:
    """Say on stderr, once per process, that programs run unisolated (not a warning a filter can hide)."""
    user = "root" if os.geteuid() == 0 else f"uid {os.geteuid()}"
    print(NOT_ISOLATED.format(reason=reason, user=user), file=sys.stderr, flush=True)


def _server_command(mode: Mode, *, work_root: str | None = None) -> list[str]:
    """``python runner.py CONFIG``: the server's mode, its tmpfs sizes and the seccomp filter (hex BPF)."""
    drop_uid = mode == "root" or (mode == "none" and _can_drop_root())
    try:
        seccomp = bpf().hex()
    except SeccompUnavailable:
        seccomp = ""  # only reachable in "none" mode: isolation() refuses sandboxes without a filter
    config = {"mode": mode, "drop_uid": drop_uid, "seccomp": seccomp, "cpus": os.cpu_count() or 1,
              "work_bytes": WORK_BYTES, "work_inodes": WORK_INODES, "shm_bytes": SHM_BYTES, "shm_inodes": SHM_INODES}
    if work_root is not None:
        config["work_root"] = work_root
    return [sys.executable, "-I", "-B", str(RUNNER), json.dumps(config)]


def _closed_ancestor(path: str) -> str | None:
    """The first directory on the way to ``path`` that other users may not enter (e.g. ``/root``)."""
    current = "/"
    for part in Path(path).parts[1:]:
        current = os.path.join(current, part)
        try:
            mode = os.stat(current).st_mode
        except OSError:
            return None
        if os.path.isdir(current) and not mode & 0o001:
            return current
    return None


def _can_drop_root() -> bool:
    """Unsandboxed as root: programs can run as uid 65534 if that uid can read Python's installation."""
    return os.geteuid() == 0 and all(_closed_ancestor(p) is None for p in needed_paths(str(RUNNER.parent)))


def _remove_orphaned_work_roots() -> None:
    """Remove unsandboxed work folders whose owner process is gone (killed before it could remove them)."""
    root = Path(tempfile.gettempdir())
    for path in root.glob(f"{WORK_PREFIX}*"):
        match = re.fullmatch(rf"{WORK_PREFIX}(\d+)-.*", path.name)
        if match and not Path(f"/proc/{match[1]}").exists():
            subprocess.run(["rm", "-rf", "--one-file-system", str(path)], capture_output=True)


class Sandbox:
    """A warm sandbox (or, in ``none`` mode, a plain fork server) that runs programs one at a time.

    Started on first use, rebuilt after any program it could not account
    for; :meth:`close` kills it.  Not thread-safe: one per worker process.
    """

    def __init__(self, *, mode: Mode | None = None, owner: int | None = None) -> None:
        """``owner``: a process whose end ends every program too (a worker's parent, the scoring process:
        the worker itself would notice only after its current item)."""
        found = isolation()
        if mode is None:
            mode = found.mode
        elif mode != "none" and not found.isolated:
            raise SandboxUnavailable(f"sandbox mode {mode!r} is not available here: {found.reason}")
        self.mode: Mode = mode
        self.reason = found.reason or ("sandbox mode 'none' was asked for" if mode == "none" else "")
        self._bwrap = found.bwrap
        self.process: subprocess.Popen | None = None
        self._work_root: str | None = None
        self.cgroup: Cgroup | None = None
        self._watch: int | None = None  # our end of the keeper's watch pipe (cgroup mode)
        self.starts = 0
        self.host_uid: int | None = None
        self._lock = threading.Lock()  # one program at a time, even if a caller's thread is abandoned
        self.owner = owner
        self._owner_fd = os.pidfd_open(owner) if owner is not None else None

    @property
    def isolated(self) -> bool:
        return self.mode != "none"

    def start(self) -> None:
        if self.process is not None:
            return
        if self.mode == "none":
            announce_unisolated(self.reason)
            _remove_orphaned_work_roots()
            self._work_root = tempfile.mkdtemp(prefix=f"{WORK_PREFIX}{os.getpid()}-")
            argv = _server_command("none", work_root=self._work_root)
            fds: tuple[int, ...] = ()
            env = {**ENV, "HOME": self._work_root}
            self.cgroup = Cgroup.create()  # as root: whatever a program starts, even in a new session, is found
            if self.cgroup is not None:
                watch, self._watch = os.pipe()
                argv = ["/bin/sh", "-c", KEEPER, "sh", str(watch), self._work_root, *map(str, self.cgroup.dirs), "--",
                        *argv]
                fds = (watch,)
        else:
            assert self._bwrap is not None  # isolation() names bwrap for every mode but none
            self.host_uid = host_uid()
            userns = Namespace.create(self.mode, self.host_uid)
            argv = bwrap_argv(self._bwrap, self.mode, userns, _server_command(self.mode), (str(RUNNER.parent),))
            fds, env = userns.fds, {}
            self.cgroup = Cgroup.create()
            if self.cgroup is not None:
                watch, self._watch = os.pipe()
                argv = ["/bin/sh", "-c", KEEPER, "sh", str(watch), "-", *map(str, self.cgroup.dirs), "--", *argv]
                fds = (*fds, watch)
        try:
            self.process = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                pass_fds=fds, env=env, start_new_session=True,
            )
        finally:
            if self.mode != "none":
                userns.close()
            if self.cgroup is not None:
                os.close(fds[-1])  # the keeper's end of the watch pipe
        self.starts += 1
        hello = self._receive(time.monotonic() + START_TIMEOUT)
        if not isinstance(hello, dict) or not hello.get("ready"):
            error = self.close()
            raise SandboxUnavailable(f"the code sandbox did not start ({self.mode} mode): {error or hello!r}")

    def run(self, code: str, *, tests: str | None = None, calls: Calls | None = None, stdin: str | None = None,
            names: tuple[str, ...] = (), limits: Limits = Limits(), budget: float | None = None) -> Execution:
        """Run ``code``: with ``stdin`` as input, then assert script ``tests``, or computing literal ``calls``.

        ``names``, for ``tests``: the program's names the tests use (:class:`shapes.Scripts`); the judge binds
        only these, each to a proxy of the program's object or a plain copy of its value.

        ``budget`` bounds the whole run (default: one ``limits.timeout``, and
        for ``calls`` one per call more; a script's rerun of suspect calls
        has one per call more, within ``budget``).  Never raises for the
        program's sake; raises :class:`SandboxUnavailable` when no sandbox
        starts.
        """
        wall = limits.timeout * limits.backstop  # the longest a program may take by the wall clock
        if calls is not None:
            kind, payload, longest = "calls", b"", wall * (len(calls.calls) + len(calls.groups))
        elif tests is not None:
            kind, payload, longest = "script", tests.encode("utf-8", "surrogatepass"), wall
        else:
            kind, payload, longest = "io", b"", wall
        total = budget
        budget = longest if budget is None else min(budget, longest)
        header: dict[str, Any] = {
            "kind": kind, "stdin": stdin, "timeout": limits.timeout, "backstop": limits.backstop,
            "budget": max(budget, 0.01),
            "memory": limits.memory, "processes": limits.processes, "file_size": limits.file_size,
            "max_output": limits.max_output}
        source = code.encode("utf-8", "surrogatepass")
        if tests is not None and calls is None:
            header["names"] = list(names)
        with self._lock:
            started = time.monotonic()
            if kind == "script":
                end = float("inf") if total is None else started + total  # a rerun's time comes from what is left
                return self._run_script(header, source, payload, limits, end)
            if calls is None:
                return self._run(header, source, payload, limits)
            result, reply = self._run_calls(header, source, calls, calls.groups, calls.plan, limits)
            rerun = _rerun(result, reply, len(calls.calls))
            if rerun is None:
                return result
            # a call whose result repeats another call's argument runs again, with no such call beside it;
            # the other calls' answers stand
            groups, known = rerun
            plan = json.dumps({**json.loads(calls.plan), "known": known}).encode()
            header["budget"] = max(header["budget"] - (time.monotonic() - started), 0.01)
            return self._run_calls(header, source, calls, groups, plan, limits)[0]

    def _run_script(self, header: dict, source: bytes, tests: bytes, limits: Limits, end: float) -> Execution:
        """An assert script, judged in a process of its own; a pass with suspects holds only if they hold again.

        The judge names the calls of the program's names whose result repeats
        an earlier call's argument (the program's process had seen it); each
        is run again, as a literal call, by a program process that sees no
        call whose arguments hold its result, and must give the same result
        (``end``: when the caller's budget for the whole is spent).
        """
        result, reply = self._run(header, source, tests, limits, reply_too=True)
        if not result.passed_asserts or reply is None or not reply.get("rerun"):
            return result
        again = _script_rerun(reply["rerun"])
        if again is None:  # not what a judge writes: fail closed
            return dataclasses.replace(result, passed_asserts=False)
        budget = min(end - time.monotonic(), limits.timeout * limits.backstop * (len(again.calls) + len(again.groups)))
        header = {key: value for key, value in header.items() if key != "names"}
        header.update(kind="calls", budget=max(budget, 0.01))
        rerun = self._run_calls(header, source, again, again.groups, again.plan, limits)[0]
        return dataclasses.replace(result, passed_asserts=rerun.status == "exited" and all(rerun.cases),
                                   seconds=result.seconds + rerun.seconds,
                                   cpu_seconds=result.cpu_seconds + rerun.cpu_seconds)

    def _run_calls(self, header: dict, source: bytes, calls: Calls, groups: tuple[tuple[int, ...], ...],
                   plan: bytes, limits: Limits) -> tuple[Execution, dict | None]:
        """Literal calls: one program per group, each given only its own group's calls (``runner.run``)."""
        values = calls.values
        marshalled = all(values[i] is not None for group in groups for i in group)
        segments = [marshal.dumps([values[i] for i in group], 2) if marshalled
                    else json.dumps([calls.calls[i] for i in group]).encode() for group in groups]
        header = {**header, "members": [list(g) for g in groups], "calls_lens": [len(s) for s in segments],
                  "cases": calls.cases, "marshal": marshalled}
        payload = plan + b"".join(source + segment for segment in segments)
        return self._run(header, source, payload, limits, tests_len=len(plan), inline=True, reply_too=True)

    def _run(self, header: dict, code: bytes, payload: bytes, limits: Limits, *, tests_len: int | None = None,
             inline: bool = False, reply_too: bool = False):
        """Send one request and check its answer; ``inline``: ``payload`` already holds the sources in place."""
        try:
            self.start()
            if self.cgroup is not None:
                self.cgroup.limit(limits.memory + MEMORY_RESERVE, limits.processes + PROCESS_RESERVE)
            header = {**header, "code_len": len(code), "tests_len": len(payload) if tests_len is None else tests_len}
            self._send(header, payload if inline else code + payload)
            reply = self._receive(time.monotonic() + header["budget"] + ANSWER_GRACE, patient=True)
            result = _execution(reply, limits, header.get("cases", 0))
            if result is None:  # the server died, lied or hung
                result, reply = Execution("crashed", stderr=self.close(), cases=(False,) * header.get("cases", 0)), None
            elif result.status == "timeout" or not (reply or {}).get("clean", False):
                self.close()  # start afresh: nothing of this program survives into the next
            return (result, reply) if reply_too else result
        except SandboxUnavailable:
            raise
        except BaseException:  # a worker's timeout alarm, KeyboardInterrupt: leave nothing running
            self.close()
            raise

    def _send(self, header: dict, payload: bytes) -> None:
        data = json.dumps(header).encode()
        assert self.process is not None and self.process.stdin is not None  # started, with a pipe for its input
        try:
            self.process.stdin.write(struct.pack(">I", len(data)) + data + payload)
            self.process.stdin.flush()
        except OSError:
            pass  # the answer read below sees the dead server

    def _receive(self, deadline: float, *, patient: bool = False) -> dict | None:
        """The server's next message, or None when none comes by ``deadline`` (wall clock); ``patient``: past the
        deadline, wait on while a process of the sandbox is runnable (working, or waiting for a CPU on a busy
        machine), as the server's own budget does not count CPU wait (``runner.ProgramClock``)."""
        header = self._read(4, deadline, patient)
        if header is None:
            return None
        (size,) = struct.unpack(">I", header)
        if size > (64 << 20):
            return None
        body = self._read(size, deadline, patient)
        try:
            return json.loads(body) if body is not None else None
        except ValueError:
            return None

    def _read(self, n: int, deadline: float, patient: bool = False) -> bytes | None:
        assert self.process is not None and self.process.stdout is not None  # started, with a pipe for its output
        fd, buf = self.process.stdout.fileno(), b""
        watched = [fd] if self._owner_fd is None else [fd, self._owner_fd]
        while len(buf) < n:
            left = deadline - time.monotonic()
            ready = select.select(watched, [], [], left)[0] if left > 0 else []
            if self._owner_fd is not None and self._owner_fd in ready:
                self.close()
                raise SandboxUnavailable(f"the process that owns this sandbox ({self.owner}) is gone: its programs "
                                         "were killed")
            if not ready and patient and self._working():  # late because the machine is busy: wait on
                deadline = time.monotonic() + PATIENCE
                continue
            if not ready:
                return None
            chunk = os.read(fd, n - len(buf))
            if not chunk:
                return None
            buf += chunk
        return buf

    def _working(self) -> bool:
        """Whether a process of the sandbox is runnable now (state R: working, or waiting for a CPU)."""
        for pid in self.processes():
            try:
                with open(f"/proc/{pid}/stat", "rb") as f:
                    if f.read().rsplit(b")", 1)[1].split()[0] == b"R":
                        return True
            except (OSError, IndexError):
                continue
        return False

    def processes(self) -> list[int]:
        """Host pids of every process inside this sandbox's PID namespace (init, server and collector when idle)."""
        if self.process is None or self.mode == "none":
            return []
        own = os.readlink("/proc/self/ns/pid")
        try:  # bwrap's children: the namespace's init and, in cgroup mode, the keeper's watcher
            with open(f"/proc/{self.process.pid}/task/{self.process.pid}/children") as f:
                children = [int(pid) for pid in f.read().split()]
            namespace = next(ns for pid in children if (ns := os.readlink(f"/proc/{pid}/ns/pid")) != own)
        except (OSError, StopIteration, ValueError):
            return []
        found = []
        for name in os.listdir("/proc"):
            try:
                if name.isdigit() and os.readlink(f"/proc/{name}/ns/pid") == namespace:
                    found.append(int(name))
            except OSError:
                pass
        return found

    def close(self, *, graceful: bool = False) -> str:
        """Kill the sandbox (SIGKILL to bwrap's process group; its PID namespace dies with its init).

        ``graceful`` first closes the server's input and gives it a second to
        exit, so its CPU time is accounted to this process (benchmarks).
        Returns the end of the sandbox's own stderr (bwrap's or the server's
        complaint, if any).
        """
        process, self.process = self.process, None
        if self._watch is not None:
            os.close(self._watch)
            self._watch = None
        if process is not None:
            if graceful:
                try:
                    if process.stdin is not None:
                        process.stdin.close()
                    process.wait(1.0)
                except (OSError, subprocess.TimeoutExpired):
                    pass
            with contextlib.suppress(OSError):
                os.killpg(process.pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                process.kill()
            process.wait()
            for stream in (process.stdin, process.stdout):
                with contextlib.suppress(OSError, ValueError):
                    if stream is not None:
                        stream.close()
        if self.cgroup is not None:
            self.cgroup.kill()  # an unisolated program may have left the server's session
            self.cgroup.close()
            self.cgroup = None
        if self._work_root is not None:
            subprocess.run(["rm", "-rf", "--one-file-system", self._work_root], capture_output=True)
            self._work_root = None
        return tail(process)

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
            if self._owner_fd is not None:
                os.close(self._owner_fd)
        except Exception:
            pass


def _rerun(result: Execution, reply: dict | None, ncalls: int) -> tuple[tuple[tuple[int, ...], ...], dict] | None:
    """The suspects' groups for a rerun (none beside a call whose arguments hold its result) and the other calls'
    answers, which stand; None when nothing needs to run again (or the reply does not say what to)."""
    if not result.suspects or result.status != "exited" or reply is None:
        return None
    answers, conflicts = reply.get("answers"), reply.get("conflicts")
    if not (isinstance(answers, list) and len(answers) == ncalls and all(isinstance(a, str) for a in answers)
            and isinstance(conflicts, dict)):
        return None
    suspects = [i for i in result.suspects if 0 <= i < ncalls]
    against = {i: set(found) if isinstance(found := conflicts.get(str(i)), list) else set(range(ncalls))
               for i in suspects}
    known = {str(j): answers[j] for j in range(ncalls) if j not in suspects}
    return _colour(suspects, against), known


def _colour(calls: list[int], against: dict[int, set[int]]) -> tuple[tuple[int, ...], ...]:
    """Groups of ``calls`` such that no call shares a group with one in its ``against`` set, nor the other way round
    (greedy: each joins the first group it may)."""
    groups: list[list[int]] = []
    for i in calls:
        home = next((g for g in groups if not against[i] & set(g) and not any(i in against[k] for k in g)), None)
        if home is None:
            groups.append([i])
        else:
            home.append(i)
    return tuple(tuple(g) for g in groups)


def _script_rerun(found: object) -> Calls | None:
    """A script judge's suspects (``[steps, result]``: the steps of a literal call, ``[name, args, kwargs]`` then
    any methods on what it returned, and the result, all plain text) as literal calls and one case, that each
    gives its result again, grouped so that no call shares a process with one whose arguments hold its result;
    None when ``found`` is not of that form."""
    if not isinstance(found, list) or not found:
        return None
    try:
        calls, expected, given = [], [], []
        for steps, text in found:
            if not isinstance(steps, list) or not steps or not isinstance(text, str) or not all(
                    isinstance(step, list) and len(step) == 3 and all(isinstance(x, str) for x in step)
                    for step in steps):
                return None
            given.append([v for _, args, kwargs in steps
                          for v in (*plain.decode(args), *plain.decode(kwargs).values())])
            expected.append((plain.decode(text), text))
            calls.append(tuple(tuple(step) for step in steps))
    except (TypeError, ValueError, RecursionError):  # not pairs, not plain text, or a tuple's text that is not one
        return None
    n = len(calls)
    holding: dict[str, set[int]] = {}  # an argument's plain text -> the calls given it
    for j, values in enumerate(given):
        for value in values:
            holding.setdefault(plain.encode(value), set()).add(j)
    against = {i: holding.get(plain.encode(expected[i][0]), set()) - {i} for i in range(n)}
    for i, (value, _) in enumerate(expected):  # a set's or dict's text follows its order: compared as values
        if type(value) in (set, frozenset, dict):
            against[i] |= {j for j in range(n) if j != i and any(type(a) is type(value) and a == value
                                                                 for a in given[j])}
    groups = _colour(list(range(n)), against)
    text = json.dumps({"setup": "", "cases": [[["__grpo_r == __grpo_e"], list(range(n))]],  # one case: all agree
                       "args": [[[args, kwargs] for _, args, kwargs in steps] for steps in calls],
                       "expect": [t for _, t in expected]})
    return Calls(tuple(calls), text.encode(), 1, groups)


_STATUSES = {"exited", "timeout", "output_limit"}


def _execution(reply: dict | None, limits: Limits, cases: int) -> Execution | None:
    """Check the server's answer field by field: a compromised server must not be able to pass anything odd."""
    if not isinstance(reply, dict) or reply.get("status") not in _STATUSES:
        return None
    code = reply.get("exit_code")
    out, err, seconds = reply.get("stdout"), reply.get("stderr"), reply.get("seconds")
    if not (code is None or isinstance(code, int)) or not isinstance(out, str) or not isinstance(err, str):
        return None
    verdicts = reply.get("cases", [])
    if cases and (not isinstance(verdicts, list) or len(verdicts) != cases):
        return None
    suspects = reply.get("suspects", [])
    if not isinstance(suspects, list) or not all(type(i) is int for i in suspects):
        return None
    return Execution(
        status=reply["status"],
        exit_code=code,
        stdout=out[: limits.max_output],
        stderr=err[-4096:],
        passed_asserts=reply.get("passed_asserts") is True,
        cases=tuple(v is True for v in verdicts) if cases else (),
        seconds=float(seconds) if isinstance(seconds, int | float) else 0.0,
        suspects=tuple(suspects),
        backstop=reply["status"] == "timeout" and reply.get("backstop") is True,
        cpu_seconds=float(cpu) if isinstance(cpu := reply.get("cpu"), int | float) else 0.0,
    )
