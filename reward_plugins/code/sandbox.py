"""Running untrusted Python: one warm bubblewrap sandbox, a fork per program.

Model output is hostile by accident (fork bombs, infinite loops, huge
allocations, ``rm -rf``), so every program runs in a bubblewrap sandbox:
new user, PID, network, IPC, UTS and cgroup namespaces (no network at all: a
listener on the host's 127.0.0.1 is unreachable), the host's root bound
read-only, a fresh ``/proc``, a read-only ``/dev``, ``--new-session`` and
``--die-with-parent``.  Programs may write only in their work directory (on
a size-limited tmpfs at ``/tmp``) and in a private ``/dev/shm`` tmpfs.
Inside runs :mod:`reward_plugins.code.runner`, a fork server that gives each
program an empty work directory, an unprivileged uid, rlimits (address
space, CPU time, processes, file size, open files), ``/dev/null`` or the
case's input as stdin, capped output and a wall-clock limit, and kills
whatever the program started when it ends.

Speed comes from keeping the sandbox warm: starting bwrap and Python costs
about 0.3 s of CPU, a program run by a fork of the warm server a few
milliseconds all told (``benchmarks/code.md``).

The trade-off, stated plainly: programs run one after another in the *same*
sandbox, so isolation between two programs rests on the server's cleanup,
not on a fresh namespace each time.  After each program the server kills
every process left in the PID namespace (``kill(-1, SIGKILL)``, which no
fork race survives because a pending SIGKILL aborts ``fork``) and checks
that none is left, then empties the work directory and ``/dev/shm`` and
removes System V IPC objects whenever the program touched them (change
times and ``/proc/sysvipc`` tell).  Programs cannot write anywhere else
(read-only root and ``/dev``; ``/tmp`` itself belongs to the server in
``root`` mode and is emptied in ``user`` mode), cannot signal or ptrace the
server in ``root`` mode (another uid), and cannot reach another sandbox.
When a program times out, anything survives cleanup, the server dies (in
``user`` mode a program can kill it) or the host sees no answer in time, the
host kills the whole sandbox (its PID namespace dies with it) and builds a
new one for the next program: a rebuild costs about 0.3 s, paid after a
program that already used its full time limit.  What consecutive programs
still share is the server's memory image, which each only ever sees as a
copy-on-write fork, and the read-only host files every program can read.

Modes, picked by :func:`isolation`:

* ``root`` (we are root): a user namespace is prepared by us with two ids,
  sandbox root -> host root (the server: capabilities CAP_SETUID, SETGID,
  KILL and CHOWN, valid inside the namespace only) and sandbox 65534 -> an
  unused high host uid unique to this sandbox (the programs).  A distinct
  real uid matters because RLIMIT_NPROC counts processes per user (and is
  not enforced for real root at all).  Directories on the way to the Python installation that this uid
  may not enter (``/root`` for a pyenv install) are covered with a tmpfs and
  the installation is bound back read-only.
* ``user`` (not root): bwrap's own unprivileged user namespace, programs and
  server share the uid 65534 (mapped to ours); on Linux >= 5.14 RLIMIT_NPROC
  counts per user namespace.
* ``none``: no bubblewrap or no user namespaces (macOS, unprivileged
  containers).  The same server runs unsandboxed with rlimits, ``setsid`` and
  a subreaper that kills the program's whole process tree, in a temporary
  directory; as root, programs still run as uid 65534 when that uid can read
  the Python installation.  A loud warning is given once per process.
  ``require_isolation`` refuses this mode.

``GRPO_HOST_BWRAP`` names the bwrap binary to use; ``off`` disables it (the
``none`` mode), e.g. to check a configuration that must refuse to run.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import select
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = ["Execution", "Isolation", "Limits", "Sandbox", "SandboxUnavailable", "isolation"]

RUNNER = Path(__file__).with_name("runner.py")
TMPFS_BYTES = 256 << 20
SHM_BYTES = 64 << 20
HOST_UID_BASE = 1_000_000_000  # programs' host uids: unused, high, distinct per sandbox
HOST_UID_SPAN = 1_000_000_000
ANSWER_GRACE = 5.0  # seconds the host waits beyond a program's timeout for the server's answer
START_TIMEOUT = 20.0
NOT_ISOLATED = (
    "grpo-host code reward: NO SANDBOX ({reason}). Completions' code runs UNISOLATED on this machine "
    "with only rlimits and process-tree kills: it can read and write your files and reach the network. "
    "Install bubblewrap with working user namespaces, or set require_isolation=true to refuse."
)

Mode = Literal["root", "user", "none"]


class SandboxUnavailable(RuntimeError):
    """Isolation was required but bubblewrap (or user namespaces) cannot be used here."""


@dataclass(frozen=True)
class Limits:
    """Per-program limits (every program of a sandbox may use different ones)."""

    timeout: float = 5.0
    memory: int = 1 << 30
    processes: int = 16
    file_size: int = 16 << 20
    max_output: int = 1 << 20


@dataclass(frozen=True)
class Execution:
    """What became of one program.

    ``status``: ``exited`` (see ``exit_code``), ``timeout`` (wall clock),
    ``output_limit`` (more than ``max_output`` bytes on stdout+stderr) or
    ``crashed`` (the sandbox itself failed; it is rebuilt for the next run).
    ``passed_asserts`` is true only when an assert-style program ran its
    tests to the end (a per-run token the server checks, so a program that
    calls ``sys.exit(0)`` or ``os._exit(0)`` before the asserts does not
    pass).  The token lives in the program's own interpreter, so code that
    deliberately inspects it could forge it; stdin/stdout cases are safer:
    the expected output never enters the sandbox.
    """

    status: Literal["exited", "timeout", "output_limit", "crashed"]
    exit_code: int | None = None
    stdout: str = ""
    stderr: str = ""
    passed_asserts: bool = False
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == "exited" and self.exit_code == 0


@dataclass(frozen=True)
class Isolation:
    """Which mode this machine gives, and why not a better one."""

    mode: Mode
    reason: str = ""
    bwrap: str | None = None

    @property
    def isolated(self) -> bool:
        return self.mode != "none"


def _bwrap_path() -> str | None:
    configured = os.environ.get("GRPO_HOST_BWRAP")
    if configured is not None:
        return None if configured.strip().lower() in ("", "off", "none", "0") else configured
    return shutil.which("bwrap")


@functools.cache
def isolation() -> Isolation:
    """Probe once per process whether bubblewrap sandboxes work here (runs ``bwrap ... true``)."""
    if not sys.platform.startswith("linux"):
        return Isolation("none", f"bubblewrap needs Linux, this is {sys.platform}")
    bwrap = _bwrap_path()
    if bwrap is None:
        why = "GRPO_HOST_BWRAP=off" if "GRPO_HOST_BWRAP" in os.environ else "bwrap not found on PATH"
        return Isolation("none", f"{why}; install the bubblewrap package")
    mode: Mode = "root" if os.geteuid() == 0 else "user"
    try:
        with _Namespace.create(mode, HOST_UID_BASE) as userns:
            argv = _bwrap_argv(bwrap, mode, userns, ["true"])
            done = subprocess.run(argv, pass_fds=userns.fds, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as exc:
        return Isolation("none", f"cannot start bubblewrap: {exc}")
    if done.returncode != 0:
        return Isolation("none", f"bubblewrap does not work here: {done.stderr.strip() or done.returncode}")
    return Isolation(mode, "", bwrap)


@functools.cache
def _warn_not_isolated(reason: str) -> None:
    """Once per process (each worker process says it once)."""
    warnings.warn(NOT_ISOLATED.format(reason=reason), RuntimeWarning, stacklevel=3)


class _Namespace:
    """The user namespace of a ``root``-mode sandbox, made by us so it can map two ids.

    bwrap alone maps one id (sandbox uid -> our uid, i.e. host root), which
    would leave programs as real root: exempt from RLIMIT_NPROC and owner of
    root's files.  Root may write any mapping, so a short-lived helper
    unshares a user namespace, we write ``0 -> 0`` (the server) and
    ``65534 -> host_uid`` (the programs) into it and hand it to bwrap with
    ``--userns``.  In ``user`` mode there is nothing to prepare.
    """

    def __init__(self, fds: tuple[int, ...]) -> None:
        self.fds = fds

    @classmethod
    def create(cls, mode: Mode, host_uid: int) -> _Namespace:
        if mode != "root":
            return cls(())
        with subprocess.Popen(
            [sys.executable, "-I", "-S", "-c",
             "import ctypes,sys\n"
             "if ctypes.CDLL(None, use_errno=True).unshare(0x10000000):  # CLONE_NEWUSER\n"
             "    sys.exit(f'unshare: errno {ctypes.get_errno()}')\n"
             "print(flush=True); sys.stdin.read()"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        ) as helper:  # leaving the block closes its input, so it exits, and waits for it
            if not helper.stdout.readline():
                raise OSError(f"cannot create a user namespace: {helper.stderr.read().decode().strip()}")
            for kind in ("uid", "gid"):
                with open(f"/proc/{helper.pid}/{kind}_map", "w") as f:
                    f.write(f"0 0 1\n65534 {host_uid} 1\n")
            fd = os.open(f"/proc/{helper.pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
        return cls((fd,))

    def __enter__(self) -> _Namespace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds = ()


def _needed_paths() -> list[str]:
    """Directories the sandboxed interpreter must read: Python's installation (with site-packages), the runner.

    Outermost first, without paths inside another one; never ``/`` or ``/tmp`` themselves (those stay
    covered: only what is inside them is bound back).
    """
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable)),
             str(RUNNER.parent)}
    paths = {os.path.realpath(p) for p in paths} | {os.path.abspath(p) for p in paths}
    kept: list[str] = []
    for path in sorted(paths - {"/", "/tmp"}, key=len):
        if not any(_under(path, k) for k in kept):
            kept.append(path)
    return kept


def _under(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def _closed_ancestor(path: str) -> str | None:
    """The first directory on the way to ``path`` that other users may not enter (e.g. ``/root``)."""
    current = "/"
    for part in Path(path).parts[1:]:
        current = os.path.join(current, part)
        try:
            mode = os.stat(current).st_mode
        except OSError:
            return None
        if stat.S_ISDIR(mode) and not mode & stat.S_IXOTH:
            return current
    return None


def _mount_args(mode: Mode) -> list[str]:
    """tmpfs on /tmp (and on closed directories in root mode) with the needed paths bound back read-only."""
    needed = _needed_paths()
    masks = {"/tmp"}
    if mode == "root":
        masks |= {c for p in needed if (c := _closed_ancestor(p))}
    masks = {m for m in masks if not any(m != o and _under(m, o) for o in masks)}
    args = []
    for mask in sorted(masks, key=len):
        if mask == "/tmp":
            args += ["--size", str(TMPFS_BYTES)]
        args += ["--tmpfs", mask]
    made: set[str] = set()
    for path in needed:
        mask = next((m for m in masks if _under(path, m) and path != m), None)
        if mask is None:
            continue
        parent = os.path.dirname(path)
        todo = []
        while parent != mask and parent not in made:
            todo.append(parent)
            parent = os.path.dirname(parent)
        for directory in reversed(todo):
            args += ["--perms", "0755", "--dir", directory]
            made.add(directory)
        args += ["--ro-bind", path, path]
    return args


def _bound_in_tmp() -> list[str]:
    """Entries of the sandbox's /tmp that hold read-only binds (a venv under /tmp): the server must not empty them."""
    return sorted({Path(p).relative_to("/tmp").parts[0] for p in _needed_paths() if _under(p, "/tmp") and p != "/tmp"})


def _bwrap_argv(bwrap: str, mode: Mode, userns: _Namespace, command: list[str]) -> list[str]:
    if mode == "root":
        argv = [bwrap, "--userns", str(userns.fds[0]), "--unshare-pid", "--unshare-net", "--unshare-ipc",
                "--unshare-uts", "--unshare-cgroup-try", "--cap-drop", "ALL"]
        argv += [a for cap in ("CAP_SETUID", "CAP_SETGID", "CAP_KILL", "CAP_CHOWN") for a in ("--cap-add", cap)]
    else:
        argv = [bwrap, "--unshare-all", "--unshare-user", "--disable-userns", "--uid", "65534", "--gid", "65534"]
    argv += ["--die-with-parent", "--new-session", "--hostname", "sandbox",
             "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
             "--perms", "1777", "--size", str(SHM_BYTES), "--tmpfs", "/dev/shm", "--remount-ro", "/dev"]
    argv += _mount_args(mode)
    argv += ["--chdir", "/tmp", "--clearenv"]
    for key, value in _ENV.items():
        argv += ["--setenv", key, value]
    return argv + ["--", *command]


_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/tmp",
    "LANG": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONIOENCODING": "utf-8",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}

_uids = itertools.count()


def _can_drop_root() -> bool:
    """Unsandboxed as root: programs can run as uid 65534 if that uid can read Python's installation."""
    return os.geteuid() == 0 and all(_closed_ancestor(p) is None for p in _needed_paths())


class Sandbox:
    """A warm sandbox (or, in ``none`` mode, a plain fork server) that runs programs one at a time.

    Started on first use, rebuilt after any program it could not account
    for; :meth:`close` kills it.  Not thread-safe: one per worker process.
    """

    def __init__(self, *, require_isolation: bool = False, mode: Mode | None = None) -> None:
        found = isolation()
        if mode is None:
            mode = found.mode
        elif mode != "none" and not found.isolated:
            raise SandboxUnavailable(f"sandbox mode {mode!r} is not available here: {found.reason}")
        if require_isolation and mode == "none":
            raise SandboxUnavailable(
                f"code execution requires isolation (require_isolation=true) but none is available: {found.reason}"
            )
        self.mode: Mode = mode
        self.reason = found.reason or ("sandbox mode 'none' was asked for" if mode == "none" else "")
        self._bwrap = found.bwrap
        self.process: subprocess.Popen | None = None
        self._workdir: str | None = None
        self.starts = 0
        self.host_uid: int | None = None
        self._lock = threading.Lock()  # one program at a time, even if a caller's thread is abandoned

    @property
    def isolated(self) -> bool:
        return self.mode != "none"

    def start(self) -> None:
        if self.process is not None:
            return
        config = {"mode": self.mode, "drop_uid": self.mode == "root" or _can_drop_root(), "keep": _bound_in_tmp()}
        command = [sys.executable, "-I", "-B", str(RUNNER)]
        if self.mode == "none":
            _warn_not_isolated(self.reason)
            self._workdir = tempfile.mkdtemp(prefix="grpo-host-code-")
            config["work_root"] = self._workdir
            argv, fds, env = command + [json.dumps(config)], (), {**_ENV, "HOME": self._workdir}
        else:
            self.host_uid = HOST_UID_BASE + (os.getpid() * 64 + next(_uids)) % HOST_UID_SPAN
            userns = _Namespace.create(self.mode, self.host_uid)
            argv = _bwrap_argv(self._bwrap, self.mode, userns, command + [json.dumps(config)])
            fds, env = userns.fds, None
        try:
            self.process = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                pass_fds=fds, env=env, start_new_session=True,
            )
        finally:
            if self.mode != "none":
                userns.close()
        self.starts += 1
        hello = self._receive(time.monotonic() + START_TIMEOUT)
        if not isinstance(hello, dict) or not hello.get("ready"):
            error = self.close()
            raise SandboxUnavailable(f"the code sandbox did not start ({self.mode} mode): {error or hello!r}")

    def run(self, code: str, *, tests: str | None = None, stdin: str | None = None,
            limits: Limits = Limits()) -> Execution:
        """Run ``code`` (then ``tests``, for assert-style cases) with ``stdin`` as input.

        Never raises for the program's sake; raises :class:`SandboxUnavailable` when no sandbox starts.
        """
        with self._lock:
            return self._run(code, tests, stdin, limits)

    def _run(self, code: str, tests: str | None, stdin: str | None, limits: Limits) -> Execution:
        try:
            self.start()
            request = {"code": code, "tests": tests, "stdin": stdin, "timeout": limits.timeout,
                       "memory": limits.memory, "processes": limits.processes, "file_size": limits.file_size,
                       "max_output": limits.max_output}
            self._send(request)
            reply = self._receive(time.monotonic() + limits.timeout + ANSWER_GRACE)
            result = _execution(reply, limits)
            if result is None:  # the server died, lied or hung
                return Execution("crashed", stderr=self.close())
            if result.status == "timeout" or not reply.get("clean", False):
                self.close()  # start afresh: nothing of this program survives into the next
            return result
        except SandboxUnavailable:
            raise
        except BaseException:  # a worker's timeout alarm, KeyboardInterrupt: leave nothing running
            self.close()
            raise

    def _send(self, message: dict) -> None:
        data = json.dumps(message).encode()
        try:
            self.process.stdin.write(struct.pack(">I", len(data)) + data)
            self.process.stdin.flush()
        except OSError:
            pass  # the answer read below sees the dead server

    def _receive(self, deadline: float) -> dict | None:
        header = self._read(4, deadline)
        if header is None:
            return None
        (size,) = struct.unpack(">I", header)
        if size > (64 << 20):
            return None
        body = self._read(size, deadline)
        try:
            return json.loads(body) if body is not None else None
        except ValueError:
            return None

    def _read(self, n: int, deadline: float) -> bytes | None:
        fd, buf = self.process.stdout.fileno(), b""
        while len(buf) < n:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, n - len(buf))
            if not chunk:
                return None
            buf += chunk
        return buf

    def processes(self) -> list[int]:
        """Host pids of every process inside this sandbox's PID namespace (init and server when idle)."""
        if self.process is None or self.mode == "none":
            return []
        try:
            with open(f"/proc/{self.process.pid}/task/{self.process.pid}/children") as f:
                init = int(f.read().split()[0])
            namespace = os.readlink(f"/proc/{init}/ns/pid")
        except (OSError, IndexError, ValueError):
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
        if process is not None:
            if graceful:
                try:
                    process.stdin.close()
                    process.wait(1.0)
                except (OSError, subprocess.TimeoutExpired):
                    pass
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except OSError:
                pass
            try:
                process.kill()
            except OSError:
                pass
            process.wait()
            for stream in (process.stdin, process.stdout):
                try:
                    stream.close()
                except (OSError, ValueError):
                    pass
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None
        return _tail(process)

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


def _tail(process: subprocess.Popen | None) -> str:
    """The last of a dead sandbox's own stderr (bwrap's or the server's complaint)."""
    if process is None or process.stderr is None:
        return ""
    try:
        os.set_blocking(process.stderr.fileno(), False)
        data = process.stderr.read(1 << 16) or b""
    except (OSError, ValueError, TypeError):
        data = b""
    finally:
        process.stderr.close()
    return data.decode(errors="replace").strip()[-2000:]


_STATUSES = {"exited", "timeout", "output_limit"}


def _execution(reply: dict | None, limits: Limits) -> Execution | None:
    """Check the server's answer field by field: a compromised server must not be able to pass anything odd."""
    if not isinstance(reply, dict) or reply.get("status") not in _STATUSES:
        return None
    code = reply.get("exit_code")
    out, err, seconds = reply.get("stdout"), reply.get("stderr"), reply.get("seconds")
    if not (code is None or isinstance(code, int)) or not isinstance(out, str) or not isinstance(err, str):
        return None
    return Execution(
        status=reply["status"],
        exit_code=code,
        stdout=out[: limits.max_output],
        stderr=err[-4096:],
        passed_asserts=reply.get("passed_asserts") is True,
        seconds=float(seconds) if isinstance(seconds, int | float) else 0.0,
    )
