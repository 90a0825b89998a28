"""Building a bubblewrap sandbox for a server of untrusted programs: the mode, the namespaces, the files, the argv.

The programs are written by an optimiser that is paid for passing, so the
sandbox assumes they will try to escape and to forge (``docs/sandbox.md``
is the threat model).  What a sandbox built here gives, by construction:

* namespaces: new user, PID, network (a loopback of its own only), IPC,
  UTS and cgroup namespaces, ``--new-session``, ``--die-with-parent``;
* files: an empty root with only the interpreter's installation (its
  prefixes, so the stdlib and site-packages), the system's shared
  libraries, ``/etc/ld.so.cache``, :mod:`primitives` and the server's own
  paths bound read-only; a fresh ``/proc``, a minimal read-only ``/dev``;
  no home folder, no ``/run``, no ``/etc`` beyond that file, no ``/sys``,
  and ``/tmp`` read-only.  Programs may write only what the server mounts
  itself (bwrap's tmpfs has no inode option), ``/tmp/work`` and ``/dev/shm``;
* an environment from an allow-list (:data:`ENV`), bwrap itself started
  with an empty one, so even ``/proc/1/environ`` holds nothing of the host's.

The server loads the seccomp filter of :mod:`reward_plugins.sandbox.seccomp`;
the host bounds the whole sandbox with a :mod:`reward_plugins.sandbox.cgroup`
where one can be had, joined by the :data:`KEEPER` before bwrap starts.
This module takes the server's command and paths as arguments: it knows no
pack's server.

Modes, picked by :func:`isolation`:

* ``root`` (we are root): a user namespace prepared by us (:class:`Namespace`)
  with two ids, sandbox root -> host root (the server: its capabilities are
  valid inside the namespace only) and sandbox 65534 -> an unused high host
  uid unique to this sandbox (:func:`host_uid`: the programs), so
  RLIMIT_NPROC counts only their processes and they cannot signal the server.
* ``user`` (not root): bwrap's own unprivileged user namespace; the server
  mounts, then moves into a nested user namespace as uid 65534 with no
  capabilities, and programs run as that same uid.
* ``none``: no usable sandbox.

``GRPO_HOST_BWRAP`` names the bwrap binary to use; ``off`` disables it (the
``none`` mode), e.g. to check a configuration that must refuse to run.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from .seccomp import SeccompUnavailable, bpf

__all__ = ["ENV", "HOST_UID_BASE", "HOST_UID_SPAN", "KEEPER", "PRIMITIVES", "START_TIMEOUT", "Isolation", "Mode",
           "Namespace", "bwrap_argv", "host_uid", "isolation", "needed_paths", "tail"]

PRIMITIVES = Path(__file__).with_name("primitives.py")
HOST_UID_BASE = 1_000_000_000  # programs' host uids: unused, high, distinct per sandbox
HOST_UID_SPAN = 1_000_000_000
START_TIMEOUT = 20.0
SYSTEM_LIBRARIES = ("/usr/lib", "/usr/lib64", "/usr/lib32", "/usr/libx32", "/lib", "/lib64", "/lib32", "/libx32")
KEEPER = r"""
# Leaves a watcher behind, joins the sandbox's cgroups and becomes bwrap (or, unisolated, the server).  When the
# owner's end of the watch pipe closes (it closed the sandbox, or it was killed, SIGKILL included), the watcher
# kills bwrap (its PID namespace dies with it), kills whatever is still in the cgroups (an unisolated program
# that left its session), removes them once they are empty, and removes the unisolated work folder (or "-").
watch=$1; work=$2; shift 2; dirs=
while [ "$1" != -- ]; do dirs="$dirs $1"; shift; done
shift
(
    exec 0</dev/null 1>&- 2>&-
    read _ <&"$watch"
    kill -KILL $$ 2>/dev/null
    for d in $dirs; do n=0; until rmdir "$d" 2>/dev/null || [ ! -d "$d" ] || [ $n -ge 500 ]; do
        for p in $(cat "$d/cgroup.procs" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
        n=$((n + 1)); sleep 0.01; done; done
    [ "$work" = - ] || rm -rf --one-file-system "$work"
) &
for d in $dirs; do echo $$ > "$d/cgroup.procs" || exit 125; done
exec "$@"
"""

USERNS_REMEDY = (
    "allow unprivileged user namespaces: on the host `sysctl -w kernel.unprivileged_userns_clone=1` (Debian "
    "before 11), `sysctl -w user.max_user_namespaces=15000` (RHEL/CentOS 7), `sysctl -w "
    "kernel.apparmor_restrict_unprivileged_userns=0` (Ubuntu 23.10+); in a container, run it with "
    "`--security-opt seccomp=unconfined --security-opt apparmor=unconfined` (Docker, Podman) or allow it in the "
    "pod's securityContext (Kubernetes)"
)

ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/tmp/work",
    "LANG": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONIOENCODING": "utf-8",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}

Mode = Literal["root", "user", "none"]


@dataclass(frozen=True)
class Isolation:
    """Which mode this machine gives, and why not a better one (with what would fix it)."""

    mode: Mode
    reason: str = ""
    remedy: str = ""
    bwrap: str | None = None

    @property
    def isolated(self) -> bool:
        return self.mode != "none"


def _bwrap_path() -> str | None:
    configured = os.environ.get("GRPO_HOST_BWRAP")
    if configured is not None:
        return None if configured.strip().lower() in ("", "off", "none", "0") else configured
    for directory in os.environ.get("PATH", "").split(os.pathsep) + ["/usr/bin", "/bin"]:
        if os.access(candidate := os.path.join(directory, "bwrap"), os.X_OK):
            return candidate
    return None


@functools.cache
def isolation() -> Isolation:
    """Probe once per process whether sandboxes work here: bwrap, user namespaces, a server's mounts, seccomp."""
    if not sys.platform.startswith("linux"):
        return Isolation("none", f"bubblewrap needs Linux, this is {sys.platform}", "run on Linux")
    try:
        seccomp = bpf().hex()
    except SeccompUnavailable as exc:
        return Isolation("none", str(exc), "apt-get install libseccomp2 (or your system's libseccomp); "
                                           "pip install pyseccomp")
    bwrap = _bwrap_path()
    if bwrap is None:
        if "GRPO_HOST_BWRAP" in os.environ:
            return Isolation("none", f"GRPO_HOST_BWRAP={os.environ['GRPO_HOST_BWRAP']}",
                             "unset GRPO_HOST_BWRAP (or point it at a bwrap binary)")
        return Isolation("none", "bwrap (bubblewrap) is not installed",
                         "install bubblewrap: apt-get install bubblewrap (Debian, Ubuntu), dnf install bubblewrap "
                         "(Fedora, RHEL), apk add bubblewrap (Alpine)")
    mode: Mode = "root" if os.geteuid() == 0 else "user"
    probe = [sys.executable, "-I", "-B", str(PRIMITIVES), json.dumps({"mode": mode, "seccomp": seccomp})]
    try:
        with Namespace.create(mode, HOST_UID_BASE) as userns:
            argv = bwrap_argv(bwrap, mode, userns, probe)
            done = subprocess.run(argv, pass_fds=userns.fds, capture_output=True, text=True, timeout=30, env={})
    except (OSError, subprocess.SubprocessError) as exc:
        return Isolation("none", f"cannot start bubblewrap: {exc}", USERNS_REMEDY)
    if done.returncode != 0:
        return Isolation("none", f"bubblewrap does not work here: {done.stderr.strip() or done.returncode}",
                         USERNS_REMEDY)
    return Isolation(mode, "", "", bwrap)


class Namespace:
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
    def create(cls, mode: Mode, host_uid: int, judge_uid: int | None = None, peers: tuple[int, ...] = ()
               ) -> Namespace:
        """``judge_uid``: a third id, sandbox 65533 -> ``judge_uid`` (a server's trusted judge programs); ``peers``:
        more ids, sandbox 65532, 65531, ... -> each in turn (programs that must not reach one another)."""
        if mode != "root":
            return cls(())
        with subprocess.Popen(
            [sys.executable, "-I", "-S", "-c",
             "import ctypes,sys\n"
             "if ctypes.CDLL(None, use_errno=True).unshare(0x10000000):  # CLONE_NEWUSER\n"
             "    sys.exit(f'unshare: errno {ctypes.get_errno()}')\n"
             "print(flush=True); sys.stdin.read()"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={},
        ) as helper:  # leaving the block closes its input, so it exits, and waits for it
            assert helper.stdout is not None and helper.stderr is not None  # both are pipes: asked for above
            if not helper.stdout.readline():
                raise OSError(f"cannot create a user namespace: {helper.stderr.read().decode().strip()}")
            for kind in ("uid", "gid"):
                with open(f"/proc/{helper.pid}/{kind}_map", "w") as f:
                    f.write(f"0 0 1\n65534 {host_uid} 1\n" + (f"65533 {judge_uid} 1\n" if judge_uid else "")
                            + "".join(f"{65532 - i} {peer} 1\n" for i, peer in enumerate(peers)))
            fd = os.open(f"/proc/{helper.pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
        return cls((fd,))

    def __enter__(self) -> Namespace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds = ()


_uids = itertools.count()


def host_uid() -> int:
    """A host uid for a new sandbox's programs: unused, high, distinct per sandbox (the pid and a serial)."""
    return HOST_UID_BASE + (os.getpid() * 64 + next(_uids)) % HOST_UID_SPAN


def _under(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def _outermost(paths: set[str]) -> list[str]:
    kept: list[str] = []
    for path in sorted(paths - {"/"}, key=len):
        if not any(_under(path, k) for k in kept):
            kept.append(path)
    return kept


def needed_paths(*server: str) -> list[str]:
    """What a sandboxed server must read: Python's prefixes (stdlib, site-packages), :mod:`primitives` and the
    server's own ``server`` paths."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             os.path.dirname(os.path.realpath(sys.executable)), str(PRIMITIVES), *server}
    return _outermost({os.path.realpath(p) for p in paths} | {os.path.abspath(p) for p in paths})


def _mount_args(server: tuple[str, ...], extra: tuple[str, ...], devices: tuple[str, ...] | None = None) -> list[str]:
    """An empty root with the interpreter, the shared libraries and the server bound read-only, nothing else.

    ``extra``: more paths bound read-only at the same place (a compiler's files); ``devices``: the only device
    nodes ``/dev`` holds (None: bwrap's minimal ``/dev``, with ``full``, ``random``, ``tty``, ``ptmx``)."""
    args = []
    binds: set[str] = set(needed_paths(*server)) | set(extra)
    for path in SYSTEM_LIBRARIES:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            binds.add(path)
    made: set[str] = set()
    targets = _outermost(binds) + (["/etc/ld.so.cache"] if os.path.exists("/etc/ld.so.cache") else [])
    for path in targets:
        for parent in reversed(Path(path).parents[:-1]):  # bwrap would make them 0700: programs could not enter
            if str(parent) not in made:
                args += ["--perms", "0755", "--dir", str(parent)]
                made.add(str(parent))
        args += ["--ro-bind", path, path]
    if devices is None:
        args += ["--dev", "/dev"]
    else:
        args += ["--perms", "0755", "--tmpfs", "/dev"]
        for name in devices:
            args += ["--dev-bind", f"/dev/{name}", f"/dev/{name}"]
    args += ["--proc", "/proc"]
    for listing in ("/proc/keys", "/proc/key-users"):  # every keyring's keys and users, by description: hidden
        if os.path.exists(listing):
            args += ["--ro-bind", "/dev/null", listing]
    args += ["--perms", "1777", "--dir", "/dev/shm", "--remount-ro", "/dev",
             "--perms", "0755", "--dir", "/tmp", "--dir", "/tmp/work", "--remount-ro", "/"]
    return args


def bwrap_argv(bwrap: str, mode: Mode, userns: Namespace, command: list[str], server: tuple[str, ...] = (),
               binds: tuple[str, ...] = (), extra_caps: tuple[str, ...] = (),
               devices: tuple[str, ...] | None = None) -> list[str]:
    """bwrap's argv running ``command``: ``server``, the server's own paths (its script's folder); ``binds``, more
    read-only paths; ``extra_caps``, more capabilities for the server (beyond the mounts' and, in ``root`` mode,
    changing uid and killing); ``devices``, the only device nodes in ``/dev`` (default: bwrap's own set)."""
    if mode == "root":
        argv = [bwrap, "--userns", str(userns.fds[0]), "--unshare-pid", "--unshare-net", "--unshare-ipc",
                "--unshare-uts", "--unshare-cgroup-try", "--cap-drop", "ALL"]
        caps: tuple[str, ...] = ("CAP_SETUID", "CAP_SETGID", "CAP_KILL", "CAP_SYS_ADMIN")
    else:
        argv = [bwrap, "--unshare-all", "--unshare-user", "--uid", "0", "--gid", "0", "--cap-drop", "ALL"]
        caps = ("CAP_SYS_ADMIN", "CAP_SETFCAP")  # to mount the tmpfs, and to map uid 0 into the nested namespace
    argv += [a for cap in (*caps, *extra_caps) for a in ("--cap-add", cap)]
    argv += ["--die-with-parent", "--new-session", "--hostname", "sandbox", *_mount_args(server, binds, devices),
             "--chdir", "/tmp", "--clearenv"]
    for key, value in ENV.items():
        argv += ["--setenv", key, value]
    return argv + ["--", *command]


def tail(process: subprocess.Popen | None) -> str:
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
