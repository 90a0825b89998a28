"""The calls every sandbox server makes, standard library only: framing, capabilities, seccomp, tmpfs, descriptors.

A server (the code pack's ``runner.py``, the contest pack's ``jail.py``)
runs as a script (``python -I -B server.py CONFIG``) inside the sandbox
that :mod:`reward_plugins.sandbox.bwrap` builds, and imports nothing from
grpo-host, so it starts fast and needs no access to the project.  Every
sandbox binds this file read-only at its own path; a server puts this
folder on ``sys.path`` for its import and takes it off again.

Only what a server needs is imported here: every shared library mapped in a
server is copied on every fork, so it costs every program.

Run as a script, this file is :func:`reward_plugins.sandbox.bwrap.isolation`'s
probe: the set-up every server makes, in a fresh sandbox, and nothing else.
"""

import ctypes
import fcntl
import json
import os
import signal
import sys

__all__ = ["NOBODY", "PR_SET_CHILD_SUBREAPER", "PR_SET_DUMPABLE", "PR_SET_PDEATHSIG", "libc", "load_filter",
           "mount_tmpfs", "nest_user_namespace", "place", "probe", "read_exact", "read_proc", "reap", "receive",
           "remove_tree",
           "run_delay", "send", "set_caps", "take_channel", "unix_sockets"]

NOBODY = 65534  # the programs' uid inside every sandbox
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
CLONE_NEWUSER = 0x10000000
MS_NOSUID, MS_NODEV, MS_NOATIME = 2, 4, 1024  # no atime: reading a folder leaves nothing a later program could see
CAPABILITY_VERSION_3 = 0x20080522
libc = ctypes.CDLL(None, use_errno=True)


def read_exact(fd, n):
    buf = b""
    while len(buf) < n:
        chunk = os.read(fd, n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return buf


def receive(fd):
    """One request: a 4-byte big-endian length, then that many bytes of UTF-8 JSON."""
    size = int.from_bytes(read_exact(fd, 4), "big")
    return json.loads(read_exact(fd, size))


def send(fd, message):
    data = json.dumps(message).encode()
    view = memoryview(len(data).to_bytes(4, "big") + data)
    while view:
        view = view[os.write(fd, view):]


def set_caps(keep):
    """Keep exactly the capabilities ``keep`` (effective and permitted), none inheritable or ambient."""
    mask = sum(1 << cap for cap in keep)
    header = (ctypes.c_uint32 * 2)(CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)(mask & 0xFFFFFFFF, mask & 0xFFFFFFFF, 0, mask >> 32, mask >> 32, 0)
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    if libc.capset(header, data) != 0:
        raise OSError(ctypes.get_errno(), "capset")


def load_filter(program):
    """Install the host-compiled seccomp BPF for this process and everything it will fork."""
    code = ctypes.create_string_buffer(program, len(program))

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    prog = Program(len(program) // 8, ctypes.addressof(code))
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or libc.prctl(
        PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0
    ) != 0:
        raise OSError(ctypes.get_errno(), "cannot load the seccomp filter")


def mount_tmpfs(path, options):
    if libc.mount(b"tmpfs", path.encode(), b"tmpfs", MS_NOSUID | MS_NODEV | MS_NOATIME, options.encode()) != 0:
        raise OSError(ctypes.get_errno(), f"mount tmpfs on {path} ({options})")


def nest_user_namespace():
    """``user`` mode: become uid 65534 of a new user namespace, which owns no mount and so can undo none."""
    if libc.unshare(CLONE_NEWUSER) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWUSER)")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{NOBODY} 0 1"), ("gid_map", f"{NOBODY} 0 1")):
        with open(f"/proc/self/{name}", "w") as f:
            f.write(text)


def place(fds):
    """dup2 each of ``fds`` onto its index (None: leave closed), then close every other descriptor."""
    moved = [None if fd is None else fcntl.fcntl(fd, fcntl.F_DUPFD, 100) for fd in fds]
    for target, fd in enumerate(moved):
        if fd is not None:
            os.dup2(fd, target)
    os.closerange(len(fds), 1 << 16)


def read_proc(path):
    """A /proc file's bytes, read with plain descriptors: ``open`` would build a buffered file object each time,
    and the servers read several such files per program."""
    fd = os.open(path, os.O_RDONLY)
    try:
        data = b""
        while chunk := os.read(fd, 65536):
            data += chunk
    finally:
        os.close(fd)
    return data


def run_delay(pid):
    """Seconds process ``pid``'s main thread has spent runnable but waiting for a CPU (the second field of
    ``/proc/<pid>/schedstat``), or None where it cannot be read (gone).  The servers' wall-clock backstops
    subtract it, so a program starved by the machine's load is not stopped as one that sleeps is; this is
    :mod:`grpo_host.scoring.clocks`'s rule, here because servers import nothing from grpo-host."""
    try:
        return int(read_proc(f"/proc/{pid}/schedstat").split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return None


def reap():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def remove_tree(path):
    """Delete a directory tree without following links, whatever its depth: iteratively, relative to directory
    descriptors (``openat``/``unlinkat``), holding two descriptors at a time and, per level, the names of the
    folders still to remove, so neither a chain of thousands of folders (Python's recursion limit) nor a path
    longer than ``PATH_MAX`` can make it fail, and each folder is read once."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC

    def empty_files(fd):  # unlinks the files, returns the folders
        os.fchmod(fd, 0o700)  # a program may have chmod-ed its directories shut
        with os.scandir(fd) as entries:
            found = [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in entries]
        for name, is_dir in found:
            if not is_dir:
                os.unlink(name, dir_fd=fd)
        return [name for name, is_dir in found if is_dir]

    fd = os.open(path, flags)
    try:
        folders, above = empty_files(fd), []
        while True:
            if folders:
                name = folders.pop()
                below = os.open(name, flags, dir_fd=fd)
                os.close(fd)
                fd = below
                above.append((folders, name))
                folders = empty_files(fd)
                continue
            if not above:
                break
            parent = os.open("..", flags, dir_fd=fd)
            os.close(fd)
            fd = parent
            folders, name = above.pop()
            os.rmdir(name, dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(path)


def unix_sockets():
    """Unix sockets alive in the sandbox's network namespace (``/proc/net/unix``, one line each after a header).

    The servers use pipes only, so any socket here beyond what was there at
    the start is a program's: one kept alive only by being in flight in
    another (SCM_RIGHTS), which outlives every process and holds memory a
    later program would be charged for.  No reset can be proven for it, so
    the sandbox is rebuilt.
    """
    return read_proc("/proc/net/unix").count(b"\n") - 1


def take_channel():
    """The host's pipe (fds 0 and 1) moved to fds no child inherits, with /dev/null in their place, so
    nothing forked later can read a request or forge a reply; returns (inbox, outbox)."""
    inbox, outbox = os.dup(0), os.dup(1)
    devnull = os.open("/dev/null", os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.set_inheritable(inbox, False)
    os.set_inheritable(outbox, False)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # a dead reader is an error on write, never the server's death
    return inbox, outbox


def probe(config):
    """Whether a server can set itself up here: tmpfs with an inode cap on the work folder and ``/dev/shm``, in
    ``user`` mode a nested user namespace, capabilities dropped, the seccomp filter loaded (``config``: the
    ``mode`` and the filter as hex BPF).  Raises where a step fails."""
    mount_tmpfs("/tmp/work", "size=1m,nr_inodes=16,mode=0700")
    mount_tmpfs("/dev/shm", "size=1m,nr_inodes=16,mode=1777")
    if config["mode"] == "user":
        nest_user_namespace()
    set_caps(())
    load_filter(bytes.fromhex(config["seccomp"]))


if __name__ == "__main__":
    probe(json.loads(sys.argv[1]))
