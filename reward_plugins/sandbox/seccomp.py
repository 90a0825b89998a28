"""The seccomp filter every sandboxed process runs under, compiled by libseccomp (through ``pyseccomp``).

A deny list in the spirit of Flatpak's (flatpak-run.c, ``setup_seccomp``):
a test program computes, reads its input and writes its output, so it never
needs the syscalls below, and each of them is a way out of the sandbox or
into the kernel's less-travelled code:

* kernel keyrings (``keyctl``, ``add_key``, ``request_key``): a keyring is
  per user, not per namespace, so a key one program stores another reads;
* namespaces and mounts (``unshare``, ``setns``, ``clone``/``clone3`` with a
  ``CLONE_NEW*`` flag, ``mount`` and the new mount API, ``pivot_root``,
  ``chroot``): a nested user namespace gives a program capabilities again,
  and its own tmpfs memory that no limit of ours counts;
* every ``socket()``: no network is the promise, so not even the sandbox's
  own loopback (TCP buffers are kernel memory that a cgroup v1 memory bound
  does not count, and TIME_WAIT ports outlive a program); without
  ``AF_UNIX`` no pathname socket (``docker.sock``, D-Bus, a host socket
  planted in a folder the sandbox binds) can be reached.  ``socketpair``
  stays for ``AF_UNIX`` ``SOCK_STREAM`` only (asyncio's self-pipe,
  ``multiprocessing.Pipe``): a connected stream pair cannot be pointed at a
  path, while an unconnected datagram one could ``sendto`` any bound path;
* another process's memory (``ptrace``, ``process_vm_readv``/``writev``,
  ``kcmp``, ``pidfd_getfd``): the fork server, the collector and script cases' judges share the sandbox;
* memory that no rlimit counts: System V shared memory, semaphores and
  message queues (a segment keeps its pages after it is detached, and
  outlives the program), ``memfd_create``; POSIX shared memory stays, on the
  sandbox's own size- and inode-capped ``/dev/shm``;
* kernel attack surface a test never needs: ``bpf``, ``perf_event_open``,
  ``userfaultfd``, ``io_uring_*``, modules, ``kexec``, ``acct``, swap,
  ``reboot``, clocks, ``syslog``, NUMA policy calls, ``open_by_handle_at``,
  ``TIOCSTI``/``TIOCLINUX`` ioctls (typing into a terminal).

``clone3`` fails with ENOSYS (as in Flatpak) because a filter cannot read
its flags, which live in memory; glibc then falls back to ``clone``, whose
flags it can check.  Syscalls of a foreign ABI (i386 ``int 0x80``, x32) kill
the process: libseccomp's default for an architecture the filter was not
built for.

The filter is built here, in the host, once per process, and handed to the
sandbox's server as BPF bytecode, which it loads after its own set-up (it
mounts the work folder's tmpfs first); every program is a fork of that
server and inherits the filter.  Nothing here assembles BPF by hand.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import tempfile

__all__ = ["BLOCKED", "SeccompUnavailable", "bpf", "program_bpf"]

BLOCKED = (
    "keyctl", "add_key", "request_key",
    "unshare", "setns", "mount", "umount", "umount2", "pivot_root", "chroot", "open_tree", "move_mount",
    "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load", "acct", "swapon", "swapoff",
    "reboot", "syslog", "uselib", "quotactl", "quotactl_fd", "lookup_dcookie", "vhangup", "nfsservctl",
    "clock_settime", "clock_adjtime", "settimeofday", "adjtimex", "sethostname", "setdomainname",
    "mbind", "migrate_pages", "move_pages", "set_mempolicy", "get_mempolicy", "set_mempolicy_home_node",
    "name_to_handle_at", "open_by_handle_at", "fanotify_init", "iopl", "ioperm", "modify_ldt",
    "shmget", "shmat", "shmdt", "shmctl", "semget", "semop", "semtimedop", "semctl",
    "msgget", "msgsnd", "msgrcv", "msgctl", "memfd_create", "memfd_secret",
)
"""Syscalls that fail with EPERM inside the sandbox."""

CLONE_NAMESPACES = (0x00000080, 0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)
"""CLONE_NEWTIME, NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET: each makes ``clone`` fail."""

AF_UNIX, SOCK_STREAM, SOCK_TYPE_MASK = 1, 1, 0xF  # the type's low bits; SOCK_NONBLOCK and SOCK_CLOEXEC above
TIOCSTI, TIOCLINUX = 0x5412, 0x541C


FILE_WATCHES = ("flock", "inotify_init", "inotify_init1", "inotify_add_watch")
"""A contest program's run: file locks and watches on what other sandboxes bind too (``program_bpf``)."""
FCNTL_WATCHES = (5, 6, 7, 36, 37, 38, 1024, 1025, 1026)
"""fcntl's F_GETLK, F_SETLK, F_SETLKW, F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW, F_SETLEASE, F_GETLEASE, F_NOTIFY."""
ON_ANOTHER = (("sched_setattr", 0), ("sched_setscheduler", 0), ("sched_setparam", 0), ("setpriority", 1),
              ("ioprio_set", 1), ("prlimit64", 0))
"""Calls that change another process's scheduling or limits, with the argument naming it (0 is the caller)."""


class SeccompUnavailable(RuntimeError):
    """libseccomp or its Python binding is missing, so no filter can be built."""


@functools.cache
def bpf() -> bytes:
    """The filter as BPF bytecode for ``seccomp(SECCOMP_SET_MODE_FILTER)``; built once per process."""
    try:
        import pyseccomp as seccomp
    except (ImportError, OSError, AttributeError) as exc:  # the binding, or libseccomp.so.2 under it, is missing
        raise SeccompUnavailable(
            f"cannot load libseccomp ({type(exc).__name__}: {exc}); install the libseccomp2 system package "
            "(apt-get install libseccomp2) and the pyseccomp Python package"
        ) from None
    deny = seccomp.ERRNO(errno.EPERM)
    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    with contextlib.suppress(OSError):  # libseccomp before 2.5: the same rules, checked one after another
        rules.set_attr(seccomp.Attr.CTL_OPTIMIZE, 2)  # a binary tree of syscall numbers: every syscall pays log(n)
    for name in BLOCKED:
        # a syscall this architecture does not have (nfsservctl on x86-64): nothing to block
        with contextlib.suppress(OSError, ValueError, RuntimeError):
            rules.add_rule(deny, name)
    for flag in CLONE_NAMESPACES:
        rules.add_rule(deny, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    no_family = seccomp.ERRNO(errno.EAFNOSUPPORT)
    rules.add_rule(no_family, "socket")
    rules.add_rule(no_family, "socketpair", seccomp.Arg(0, seccomp.NE, AF_UNIX))
    for kind in range(SOCK_TYPE_MASK + 1):
        if kind != SOCK_STREAM:
            rules.add_rule(no_family, "socketpair", seccomp.Arg(1, seccomp.MASKED_EQ, SOCK_TYPE_MASK, kind))
    for request in (TIOCSTI, TIOCLINUX):
        rules.add_rule(deny, "ioctl", seccomp.Arg(1, seccomp.MASKED_EQ, 0xFFFFFFFF, request))
    with tempfile.TemporaryFile() as out:
        rules.export_bpf(out)
        out.seek(0)
        return out.read()


@functools.cache
def program_bpf() -> bytes:
    """A second filter, stacked on :func:`bpf`'s in a contest program's process just before it runs (never in its
    compiler: ``go build`` locks its cache): EPERM for byte-range and whole-file locks, leases and file watches
    (``inotify``, ``F_NOTIFY``), which reach every sandbox that binds the same read-only file, so two programs
    scored at once could talk through them; and for changing the scheduling, priority or limits of any process
    but itself, so nothing it sets outlives it in the server (``docs/sandbox.md``, the contest judge)."""
    import pyseccomp as seccomp  # bpf() has loaded it already: the sandbox needs it

    deny = seccomp.ERRNO(errno.EPERM)
    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    for name in FILE_WATCHES:
        rules.add_rule(deny, name)
    for command in FCNTL_WATCHES:
        rules.add_rule(deny, "fcntl", seccomp.Arg(1, seccomp.EQ, command))
    for name, which in ON_ANOTHER:
        rules.add_rule(deny, name, seccomp.Arg(which, seccomp.NE, 0))
    with tempfile.TemporaryFile() as out:
        rules.export_bpf(out)
        out.seek(0)
        return out.read()
