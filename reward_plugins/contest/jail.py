"""The contest judge's server inside bubblewrap: compiles, runs and judges programs, one request at a time.

Executed as a script (``python -I -B jail.py CONFIG``) in the sandbox that
:mod:`reward_plugins.contest.judge` builds (``root`` mode only).  It uses the
standard library and the servers' :mod:`primitives` (the tmpfs mount,
capabilities, the seccomp loader, the request framing, tree removal),
imported from ``reward_plugins/sandbox/``, which every sandbox binds.

Set-up, before any program exists: mount ``/tmp/work`` as a tmpfs with a
size and an inode cap, keep only the capabilities the server needs (to
chown, to remove what programs left, to kill, to change uid), load the
host's seccomp filter (inherited by every fork), become non-dumpable.

Two unprivileged ids run programs, each mapped to its own unused host uid:

* 65534, the **contestant**: the completion's compiler and program;
* 65533, the **judge**: checkers, interactors and their compilers.

So a contestant can neither signal, trace nor read the memory of a checker
or interactor running beside it, nor write any file the judge reads: the
judge's files are written by the server, root-owned, in folders the
contestant cannot enter.  Compiled artifacts live in ``/tmp/work/cache``
(root only, mode 0700), keyed by the host's content hash; a run gets hard
links to them (root-owned, mode 0555: not writable by the program).
Precompiled system headers live in ``/tmp/work/pch/<key>`` (root-owned,
folders 0755, files 0444: every compiler reads them, none writes them),
keyed by the host's hash of the compiler's version and flags; each is built
once per sandbox as the judge's uid from a line of this server's own
(``#include <bits/stdc++.h>``), never from a submission (:func:`ensure_pch`).

Nothing a program leaves may reach a later one (``docs/sandbox.md``):
after every request the server kills every process of both uids (it is
their subreaper, so an orphan's CPU time is counted against its program),
empties the work folder but for the cache (:func:`tidy`), and verifies with
``statvfs`` that the tmpfs holds the cache and nothing else and that no
unix socket is left in flight; otherwise the reply says ``clean: false``
and the host rebuilds the sandbox.  A program's run folder is read-only
unless the row declares file I/O, and a program's process gets a second
seccomp filter (no file locks or watches, no changing another process's
scheduling); a program that cannot start says so on a close-on-exec pipe,
never through its own output.

Requests (``primitives.receive``): a JSON header whose ``blobs`` lists the sizes
of the byte strings that follow it.  Replies (``primitives.send``) likewise, a
header then blobs.  Operations: ``compile``, ``run``, ``check``,
``interact``, ``forget``; each answers ``clean: false`` when a program's
process or file could not be removed, and the host then rebuilds the sandbox.
"""

import base64
import contextlib
import fcntl
import json
import math
import os
import re
import resource
import select
import signal
import stat
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "sandbox"))
from primitives import (  # noqa: E402
    PR_SET_CHILD_SUBREAPER,
    PR_SET_DUMPABLE,
    PR_SET_PDEATHSIG,
    libc,
    load_filter,
    mount_tmpfs,
    place,
    read_exact,
    reap,
    receive,
    remove_tree,
    run_delay,
    send,
    set_caps,
    take_channel,
    unix_sockets,
)

del sys.path[0]

WORK = "/tmp/work"
CACHE = f"{WORK}/cache"
PCH = f"{WORK}/pch"
HEADER = re.compile(r"[A-Za-z0-9_+-]+(?:/[A-Za-z0-9_+-]+)*(?:\.h)?")  # a system header's name: bits/stdc++.h
KEPT = f"{WORK}/kept"  # a run's output kept for the next request's checker (root's, in the server's folder)
INPUT = f"{WORK}/input"  # a run's input, streamed from the request to this file (root's, in the server's folder)
CONTESTANT, JUDGE = 65534, 65533
PEERS: list[int] = []  # set in main: the uids of a Communication task's processes 1.. (sandbox 65532 down), one each
CHUNK = 1 << 16
FEEDBACK_BYTES = 16 << 20  # a multi-pass validator's feedback folder carried from one pass to the next
LOG_BYTES = 64 << 10  # a compiler's or checker's messages kept
ERR_BYTES = 4096  # a program's stderr kept (its tail)
CAPS = (0, 1, 3, 5, 6, 7)  # CHOWN, DAC_OVERRIDE, FOWNER, KILL, SETGID, SETUID
PAGE = os.sysconf("SC_PAGE_SIZE")
PIPE_BYTES = 1 << 20  # each interaction pipe's capacity (problemtools' interactive runner's)
ACCEPTS = {"kattis": 42, "testlib": 0, "default": 0, "coci": 0}  # an interactor's accepting exit, by protocol
OWN_STDOUT = ("cms", "peg", "coci", "dmoj")  # protocols whose checker's stdout is read apart from its stderr
LOOK = 0.05  # most seconds between two looks at the CPU waits of running programs' processes
BASELINE: dict = {}  # set in main: the empty tmpfs's use, the sockets alive, the programs' second filter


class NoRoom(Exception):
    """The work folder holds more than the cache: the host rebuilds the sandbox and asks again."""


def blobs(fd, sizes):
    return [read_exact(fd, n) if n else b"" for n in sizes]


def receive_file(fd, size, path):
    """A request's blob written straight to ``path`` (a run's input: never whole in this server's memory, which
    the sandbox's cgroup would count while the program runs)."""
    out = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o400)
    try:
        while size:
            chunk = read_exact(fd, min(size, CHUNK))
            size -= len(chunk)
            view = memoryview(chunk)
            while view:
                view = view[os.write(out, view):]
    finally:
        os.close(out)


def reply(fd, header, *data):
    send(fd, {**header, "blobs": [len(d) for d in data]})
    for d in data:
        view = memoryview(d)
        while view:
            view = view[os.write(fd, view):]


def fresh_dir(path, owner, mode):
    """An empty folder at ``path`` owned by ``owner`` (removing whatever was there)."""
    if os.path.lexists(path):
        remove_tree(path) if os.path.isdir(path) and not os.path.islink(path) else os.unlink(path)
    os.mkdir(path, mode)
    os.chown(path, owner, owner)
    os.chmod(path, mode)


def write_file(path, data, mode=0o444):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def tail(path, n):
    """The last ``n`` bytes of a file the server opened for a program's output."""
    try:
        with open(path, "rb") as f:
            f.seek(max(os.fstat(f.fileno()).st_size - n, 0))
            return f.read(n).decode("utf-8", "replace")
    except OSError:
        return ""


class Awake:
    """The clock of a program's wall-clock bound: wall seconds since it started less the seconds its processes
    (every process of its uid: the program's tree, a compiler's passes) spent runnable but waiting for a CPU.

    The bound is for a program that sleeps or blocks, whose processes wait for no CPU; a program that works,
    however starved by the machine's load, reaches its CPU limit first (``docs/contest.md``).  Each process's wait
    is read at every look (:data:`LOOK`), and a process gone since keeps its last reading: a process that lives
    less than a look may go uncounted, which only makes the bound come sooner.  Waits are summed: processes that
    wait at the same time (a tree that starves itself) lengthen the bound more than the wall time they waited,
    but each is bounded by its own CPU limit and their number by the process limit."""

    def __init__(self, pid, uid):
        self.uid, self.start = uid, time.monotonic()
        self.seen = {}  # pid -> (its wait when first seen, when last seen)
        self.gone = 0.0  # the waits of processes whose pid was taken again since
        self.look()
        self.seen = {pid: (last, last) for pid, (_, last) in self.seen.items()}  # before the start: not counted

    def look(self):
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                if os.stat(f"/proc/{name}").st_uid != self.uid:
                    continue
            except OSError:
                continue
            pid = int(name)
            now = run_delay(pid)
            if now is None:
                continue
            first, last = self.seen.get(pid, (0.0, 0.0))
            if now < last:  # another process with the same pid: the first one's wait is kept
                self.gone += last - first
                first = 0.0
            self.seen[pid] = (first, now)

    def wall(self):
        return time.monotonic() - self.start

    def awake(self):
        self.look()
        return self.wall() - self.gone - sum(last - first for first, last in self.seen.values())


def _stack(limits):
    """The stack limit a request asks: bytes, or None for unlimited (the contest rules' ``unlimited_stack``, still
    under the address-space limit and the sandbox's cgroup)."""
    stack = limits.get("stack", 8 << 20)
    return resource.RLIM_INFINITY if stack is None else stack


def spawn(argv, *, uid, cwd, limits, stdin, stdout, stderr, env_extra=None, program=False):
    """Fork a program as ``uid`` under ``limits``; returns (pid, pidfd, its :class:`Awake` clock, why it could not
    start or None).

    Why it could not start comes on a close-on-exec pipe, which closes when the exec succeeds: never from the
    program's own output or exit status, which it controls (a program that prints this server's complaint and
    exits 127 has failed, not the judge).  ``program``: a contestant's program's run, which gets the second
    seccomp filter.  A judge (uid 65533) ignores SIGPIPE: when the contestant has gone, its writes fail and it
    reads end of input, so it gives its verdict rather than dying of the contestant's exit."""
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": cwd, "TMPDIR": cwd, **(env_extra or {})}
    failed_r, failed_w = os.pipe2(os.O_CLOEXEC)
    pid = os.fork()
    if pid == 0:
        try:
            os.close(failed_r)
            os.setsid()
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            for signum in (signal.SIGPIPE, signal.SIGINT, signal.SIGTERM, signal.SIGXFSZ, signal.SIGXCPU):
                signal.signal(signum, signal.SIG_DFL)
            if uid == JUDGE:
                signal.signal(signal.SIGPIPE, signal.SIG_IGN)
            place([stdin, stdout, stderr, failed_w])
            os.set_inheritable(3, False)  # fd 3 closes when the exec succeeds
            libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
            with open("/proc/self/oom_score_adj", "w") as f:
                f.write("1000")  # past the sandbox's memory bound, the kernel kills a program, not the server
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)  # every capability goes with it
            os.chdir(cwd)
            os.umask(0o077)
            cpu = limits.get("cpu")
            rules = [(resource.RLIMIT_FSIZE, limits["fsize"]), (resource.RLIMIT_NOFILE, limits.get("files", 64)),
                     (resource.RLIMIT_CORE, 0), (resource.RLIMIT_NPROC, limits["processes"]),
                     (resource.RLIMIT_STACK, _stack(limits)), (resource.RLIMIT_MSGQUEUE, 0)]
            if limits.get("memory"):
                rules.append((resource.RLIMIT_AS, limits["memory"]))
            for which, value in rules:
                resource.setrlimit(which, (value, value))
            if cpu:
                soft = math.ceil(cpu) + 1  # a second or more past the limit: the measured CPU time decides TLE
                resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 1))
            if program:
                load_filter(BASELINE["program_filter"])
            os.execve(argv[0], argv, env)
        except BaseException as exc:
            try:
                os.write(3, f"cannot start {argv[0]}: {exc}".encode()[:4096])
            finally:
                os._exit(127)
    os.close(failed_w)
    try:
        failed = b""
        while chunk := os.read(failed_r, 4096):  # end of file at the exec (or the child's end)
            failed += chunk
    finally:
        os.close(failed_r)
    return pid, os.pidfd_open(pid), Awake(pid, uid), failed.decode("utf-8", "replace") or None


def image():
    """An upper bound of what a program's peak RSS (``ru_maxrss``) holds before its ``exec``: the copy of this
    server it was forked from (its resident pages now, with a MiB for the child's own work before the exec).  The
    kernel keeps that peak across the exec, so a program's reported peak at or below this is not its own."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE + (1 << 20)


def finish(pid, pidfd, clock, failed, wall, pumps=()):
    """Wait for a program until its wall limit (:class:`Awake`), moving its ``pumps``' output meanwhile; returns its
    outcome (exit or signal, CPU seconds, peak RSS)."""
    return finish_all([(pid, pidfd, clock, failed, wall)], pumps=pumps)[0]


class Pump:
    """A program's stdout or stderr read through a pipe and written to ``into`` up to ``cap`` bytes, the rest read
    and thrown away, so the program runs on (DOMjudge's ``runguard --streamsize``: the contest rules'
    ``truncate_output``); ``total`` counts every byte it wrote, ``kept`` those in the file."""

    def __init__(self, fd, into, cap):
        self.fd, self.into, self.cap, self.total, self.kept, self.open = fd, into, cap, 0, 0, True
        os.set_blocking(fd, False)
        with contextlib.suppress(OSError):
            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)

    def move(self):
        """Read what the pipe holds now (at most a few MiB, so the wait loop looks at its clocks)."""
        for _ in range(8):
            try:
                chunk = os.read(self.fd, PIPE_BYTES)
            except BlockingIOError:
                return
            if not chunk:
                self.open = False
                return
            self.total += len(chunk)
            view = memoryview(chunk)[:max(self.cap - self.kept, 0)]
            while view:
                written = os.write(self.into, view)
                self.kept += written
                view = view[written:]

    @property
    def truncated(self):
        return self.total > self.kept


def finish_all(runs, on_end=None, pumps=()):
    """Wait for programs running side by side, each until its own wall limit (:class:`Awake`), in one loop that
    reaps each end the moment it sees it and calls ``on_end(k, outcome)`` before it looks for the next
    (problemtools' interactive runner's ``wait3`` loop): an interaction closes there the pipe ends the ended
    process held, so the other process sees that end only after it is taken.  Each outcome's ``order`` says how many
    were taken before it; ends seen in the same look are taken in the order of ``runs`` (as ``wait3`` returns the
    older child first).  ``pumps`` (:class:`Pump`) are moved whenever they are readable, and once more after the
    last end (what an orphan still writes is not waited for)."""
    outcomes = [None] * len(runs)
    alive = list(range(len(runs)))
    looked = 0.0
    while alive:
        flowing = [pump.fd for pump in pumps if pump.open]
        ready = select.select([runs[k][1] for k in alive] + flowing, [], [], LOOK)[0]
        for pump in pumps:
            if pump.fd in ready:
                pump.move()
        now = time.monotonic()
        look = now - looked >= LOOK
        looked = now if look else looked
        for k in [k for k in alive if runs[k][1] in ready or (look and runs[k][2].awake() >= runs[k][4])]:
            pid, pidfd, clock, failed, _ = runs[k]
            killed = pidfd not in ready
            if killed:
                os.kill(pid, signal.SIGKILL)
            wall = clock.wall()
            _, status, usage = os.wait4(pid, 0)
            os.close(pidfd)
            outcomes[k] = {"exit": os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else None,
                           "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
                           "cpu": usage.ru_utime + usage.ru_stime, "rss": usage.ru_maxrss * 1024,
                           "wall": wall, "wall_killed": killed, "order": len(runs) - len(alive),
                           "start_error": failed}
            alive.remove(k)
            if on_end is not None:
                on_end(k, outcomes[k])
    for pump in pumps:
        if pump.open:
            pump.move()
    return outcomes


def children_cpu():
    """CPU seconds of every process this server has reaped: its children, and as their subreaper every orphan."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def count_orphans(outcome, before, waited):
    """Kill what the program left and add its orphans' CPU time (``before``: :func:`children_cpu` before it started;
    ``waited``: the CPU its own ``wait4`` counted, the program's and its waited-for children's, and the judge's)."""
    kill_ours()
    outcome["cpu"] += max(children_cpu() - before - waited, 0.0)


def kill_ours():
    """SIGKILL every contestant and judge process, pass after pass; True when none is left within a second."""
    deadline = time.monotonic() + 1.0
    while True:
        found = []
        for name in os.listdir("/proc"):
            if name.isdigit():
                try:
                    if os.stat(f"/proc/{name}").st_uid in (CONTESTANT, JUDGE, *PEERS):
                        found.append(int(name))
                except OSError:
                    pass
        for pid in found:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        reap()
        if not found:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.002)


def used():
    """(bytes, inodes) the work folder's tmpfs holds."""
    found = os.statvfs(WORK)
    return (found.f_blocks - found.f_bfree) * found.f_frsize, found.f_files - found.f_ffree


def room():
    """Whether the tmpfs holds the empty folder's own use and the cache's files, nothing more: what a program
    left (a file, a folder, a file unlinked but still open in a socket in flight) would show here."""
    size, inodes = used()
    base_size, base_inodes = BASELINE["used"]
    cached = [*BASELINE["cached"].values()]
    for path in (KEPT, INPUT):  # the server's own: an output for the next checker, the input of this run
        if os.path.lexists(path):
            cached.append((-(-os.lstat(path).st_size // PAGE) * PAGE, 1))
    return (size <= base_size + sum(b for b, _ in cached) + 16 * PAGE
            and inodes <= base_inodes + sum(n for _, n in cached) + 2)


def tidy(keep):
    """Empty the work folder but for the cache after every request (a program's files, the logs, the judge's
    folder; ``keep``: the output a checker reads next); True when the tmpfs then holds the cache (and that
    output) alone and no unix socket is left in flight."""
    spared = ("cache", "pch", "kept") if keep else ("cache", "pch")
    with os.scandir(WORK) as entries:
        doomed = [(entry.path, entry.is_dir(follow_symlinks=False)) for entry in entries if entry.name not in spared]
    for path, is_dir in doomed:
        remove_tree(path) if is_dir else os.unlink(path)
    return room() and unix_sockets() == BASELINE["sockets"]


def link_artifact(key, into):
    """Hard links to a cached artifact's files (root-owned, read-only) in a program's folder."""
    source = os.path.join(CACHE, key)
    for name in os.listdir(source):
        os.link(os.path.join(source, name), os.path.join(into, name))


def ensure_pch(spec):
    """Precompile the system headers ``spec`` names with its compiler command, once per key: each built as the
    judge's uid in a folder of its own from ``#include <header>`` (this server's text, never a submission's), then
    copied root-owned and read-only to ``PCH/<key>/<header>.gch``, where g++ finds it before the header itself when
    the folder is first on the include path (and ignores it, reading the header, where it does not apply: other
    flags, a macro defined before it).  A header that does not build is left out: its compiles read the header.
    Returns the CPU seconds spent building."""
    key = spec["key"]
    folder = f"{PCH}/{key}"
    if os.path.isdir(folder) or not re.fullmatch(r"[0-9a-f]{16,64}", key):
        return 0.0
    build, staged, cpu, kept = f"{WORK}/pchbuild", f"{PCH}/.staged", 0.0, []
    fresh_dir(build, JUDGE, 0o700)
    fresh_dir(staged, 0, 0o755)
    null = os.open("/dev/null", os.O_RDWR)
    try:
        for n, header in enumerate(spec["headers"]):
            if not HEADER.fullmatch(header) or ".." in header:
                continue
            wrapper, out = f"{build}/{n}.h", f"{build}/{n}.gch"
            write_file(wrapper, f"#include <{header}>\n".encode())
            outcome = finish(*spawn([*spec["argv"], "-x", "c++-header", "-o", out, wrapper], uid=JUDGE, cwd=build,
                                    limits=spec["limits"], stdin=null, stdout=null, stderr=null),
                             spec["limits"]["wall"])
            cpu += outcome["cpu"]
            if outcome["exit"] != 0 or outcome["start_error"] or not os.path.isfile(out):
                continue
            target = os.path.join(staged, f"{header}.gch")
            if not os.path.isdir(os.path.dirname(target)):
                os.makedirs(os.path.dirname(target))
                os.chmod(os.path.dirname(target), 0o755)
            with open(out, "rb") as f:
                write_file(target, f.read(), 0o444)
            kept.append(os.path.getsize(target))
    finally:
        os.close(null)
        kill_ours()
        remove_tree(build)
    folders = sum(len(dirs) for _, dirs, _ in os.walk(staged)) + 1
    os.rename(staged, folder)
    BASELINE["cached"][f"pch/{key}"] = (sum(-(-size // PAGE) * PAGE for size in kept), len(kept) + folders)
    return cpu


def pch_bytes():
    """The bytes the precompiled headers hold on the tmpfs (the host counts them into the sandbox's memory bound)."""
    return {"pch_bytes": sum(size for key, (size, _) in BASELINE["cached"].items() if key.startswith("pch/"))}


def do_compile(req, data):
    """Write the sources, run the compiler as its owner's uid, keep every regular file it leaves as the artifact
    (with ``pch``, the system headers it names precompiled first: :func:`ensure_pch`)."""
    key, uid = req["key"], (JUDGE if req.get("judge") else CONTESTANT)
    target = os.path.join(CACHE, key)
    if os.path.isdir(target):
        return {"status": "ok", "cached": True, "bytes": BASELINE["cached"][key][0], **pch_bytes()}, b""
    if not room():
        raise NoRoom
    pch_cpu = ensure_pch(req["pch"]) if req.get("pch") else 0.0
    build = f"{WORK}/build"
    fresh_dir(build, uid, 0o700)
    for name, content in zip(req["files"], data, strict=False):
        if not isinstance(name, str) or "/" in name or "\0" in name or name in ("", ".", ".."):
            return {"status": "error", "error": f"not a plain file name: {str(name)[:60]!r}"}, b""  # a second guard:
            # the host refuses such names (reward_plugins.contest.submission); nothing leaves the build folder
        write_file(os.path.join(build, name), content)
        os.chown(os.path.join(build, name), uid, uid)
    log = f"{WORK}/compile.log"
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    null = os.open("/dev/null", os.O_RDONLY)
    outcome = finish(*spawn(req["argv"], uid=uid, cwd=build, limits=req["limits"], stdin=null, stdout=fd,
                            stderr=fd, env_extra=req.get("env")), req["limits"]["wall"])
    os.close(fd)
    os.close(null)
    text = tail(log, LOG_BYTES)
    status = "timeout" if outcome["wall_killed"] or outcome["signal"] == signal.SIGXCPU else (
        "ok" if outcome["exit"] == 0 else "error")
    outcome["pch_cpu"] = pch_cpu
    if outcome["start_error"]:
        return {"status": "start_error", "error": outcome["start_error"], **pch_bytes()}, b""
    if status == "ok":
        staged = f"{CACHE}/.staged"
        fresh_dir(staged, 0, 0o700)
        total, kept = 0, []
        with os.scandir(build) as entries:
            for entry in entries:
                if entry.is_file(follow_symlinks=False) and total + entry.stat().st_size <= req["max_bytes"]:
                    fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW)
                    with os.fdopen(fd, "rb") as f:
                        content = f.read(req["max_bytes"] + 1)
                    total += len(content)
                    kept.append(len(content))
                    write_file(os.path.join(staged, entry.name), content, 0o555)
        os.rename(staged, target)
        BASELINE["cached"][key] = (sum(-(-size // PAGE) * PAGE for size in kept), len(kept) + 1)
    return {"status": status, "cached": False, "bytes": BASELINE["cached"].get(key, (0,))[0], **outcome,
            **pch_bytes()}, text.encode()


def run_folder(req):
    """The program's folder, with hard links to its artifact: the server's and read-only (judges let a batch
    program create no file), or the program's own where the row declares file I/O (``writable``)."""
    if not room():
        raise NoRoom
    run = f"{WORK}/run"
    if req.get("writable"):
        fresh_dir(run, CONTESTANT, 0o700)
    else:
        fresh_dir(run, 0, 0o755)
    link_artifact(req["key"], run)
    return run


def do_run(req, data):
    """Run an artifact on one input (streamed to :data:`INPUT` as the request arrived); its output is returned, or
    kept (:data:`KEPT`) for the next request's ``check``.

    File I/O (``input_file``, ``output_file``), as CMS's Batch runs it: the input is a root-owned, read-only file
    in the program's folder (stdin is then empty); the output file is created empty and the program's, the only
    file it may write in a folder it cannot otherwise change (stdout is then thrown away); what it holds after
    the run is the output, read without following a link."""
    run, io = run_folder(req), f"{WORK}/io"
    fresh_dir(io, 0, 0o700)
    named_in, named_out = req.get("input_file"), req.get("output_file")
    for name in (named_in, named_out):
        if name is not None and os.path.lexists(os.path.join(run, name)):
            return {"status": "jail_error", "error": f"{name}: the name of one of the program's own files"}, b""
    if named_in is not None:
        os.rename(INPUT, os.path.join(run, named_in))
        os.chmod(os.path.join(run, named_in), 0o444)
        os.close(os.open(f"{io}/in", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400))
    else:
        os.rename(INPUT, f"{io}/in")
    stdin = os.open(f"{io}/in", os.O_RDONLY)
    if named_out is not None:
        out = os.open("/dev/null", os.O_WRONLY)
        os.close(os.open(os.path.join(run, named_out), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        os.chown(os.path.join(run, named_out), CONTESTANT, CONTESTANT)
    else:
        out = os.open(f"{io}/out", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    err = os.open(f"{io}/err", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    pumps, ends = [], (out, err)
    if req.get("truncate"):  # the program writes into pipes; the server keeps the first fsize bytes of each
        pipes = [os.pipe(), os.pipe()]
        pumps = [Pump(r, into, req["limits"]["fsize"]) for (r, _), into in zip(pipes, (out, err), strict=True)]
        ends = tuple(w for _, w in pipes)
    before, forked_from = children_cpu(), image()
    started = spawn(req["argv"], uid=CONTESTANT, cwd=run, limits=req["limits"], stdin=stdin, stdout=ends[0],
                    stderr=ends[1], env_extra=req.get("env"), program=True)
    if pumps:
        for end in ends:
            os.close(end)
    outcome = finish(*started, req["limits"]["wall"], pumps)
    outcome["image_rss"] = forked_from
    count_orphans(outcome, before, outcome["cpu"])
    for fd in (stdin, out, err, *(pump.fd for pump in pumps)):
        os.close(fd)
    if pumps:
        outcome["truncated"] = pumps[0].truncated
    if named_out is not None:
        take_output(os.path.join(run, named_out), f"{io}/out", req["limits"]["fsize"])
    size = os.stat(f"{io}/out").st_size
    outcome.update(out_bytes=size, stderr=tail(f"{io}/err", ERR_BYTES))
    output = b""
    if req.get("return_output"):
        with open(f"{io}/out", "rb") as f:
            output = f.read(req["limits"]["fsize"])
    if req.get("keep_output"):
        os.rename(f"{io}/out", KEPT)
    return outcome, output


def take_output(path, into, cap):
    """The program's output file moved to the server's ``into`` (at most ``cap`` bytes; RLIMIT_FSIZE held the program
    to that): a regular file only, never followed through a link (one the program put there where its folder is
    its own, ``file_io``), else an empty output; the program's copy is removed, so it counts once."""
    try:
        source = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        source = None
    with open(into, "wb") as target:
        if source is not None:
            with os.fdopen(source, "rb") as f:
                if stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                    while chunk := f.read(min(CHUNK, cap - target.tell())):
                        target.write(chunk)
    with contextlib.suppress(OSError):
        os.unlink(path)


def judge_files(data, names):
    """The judge's folder: the server's copies of the test's files, readable by the judge only (the folder is the
    judge's, mode 0700: an interactive program running beside it cannot read the input's secret or the answer)."""
    judge = f"{WORK}/judge"
    fresh_dir(judge, JUDGE, 0o700)
    for name, content in zip(names, data, strict=False):
        write_file(f"{judge}/{name}", content)
    os.mkdir(f"{judge}/feedback", 0o700)
    os.chown(f"{judge}/feedback", JUDGE, JUDGE)
    os.mkdir(f"{judge}/bin", 0o755)
    return judge


def judge_argv(req, judge, output, interactor=False):
    """The checker's arguments by protocol: testlib ``input output answer``, Kattis ``input answer feedback/``, CMS
    ``input correct_output output`` (``cms/grading/steps/trusted.py`` ``checker_step``); DMOJ's contrib modules
    (``dmoj/contrib/*.py``): ``peg`` ``answer output input``, a ``default`` or ``coci`` interactor ``input answer``,
    a ``dmoj`` ``check()`` module's runner CMS's order."""
    binary = [part.replace("{bin}", f"{judge}/bin") for part in req["judge_argv"]]
    if req["protocol"] == "kattis":
        return binary + [f"{judge}/input", f"{judge}/answer", f"{judge}/feedback/"]
    if interactor and req["protocol"] in ("default", "coci"):
        return binary + [f"{judge}/input", f"{judge}/answer"]
    if req["protocol"] in ("cms", "dmoj"):
        return binary + [f"{judge}/input", f"{judge}/answer", output]
    if req["protocol"] == "peg":
        return binary + [f"{judge}/answer", output, f"{judge}/input"]
    return binary + [f"{judge}/input", output, f"{judge}/answer"]


def judge_outcome(outcome, judge, log, stdout=None):
    """The judge's messages, and what it scored: a Kattis validator's ``feedback/score.txt`` (``score_txt``, None
    when it wrote none), a CMS checker's stdout (``stdout``: its first line is the outcome)."""
    outcome["message"] = (tail(log, LOG_BYTES) + tail(f"{judge}/feedback/judgemessage.txt", LOG_BYTES))[-LOG_BYTES:]
    score = f"{judge}/feedback/score.txt"
    outcome["score_txt"] = tail(score, 4096) if os.path.isfile(score) and not os.path.islink(score) else None
    if stdout is not None:
        outcome["stdout"] = tail(stdout, 4096)
    return outcome


def do_check(req, data):
    """Run a checker on the output the last run or interaction kept (the program's, or the interactor's ``tout``),
    or, for an output-only submission, on the output the host sent as a third file; moved into the judge's folder,
    where the contestant cannot reach."""
    if len(data) > 2:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(KEPT)
        write_file(KEPT, data[2], 0o600)
    os.rename(KEPT, f"{WORK}/checked")
    judge = judge_files(data, ("input", "answer"))
    if isinstance(req.get("source"), str):  # the submission, for a DMOJ check() module (its submission_source)
        write_file(f"{judge}/source", req["source"].encode("utf-8", "surrogatepass"))
    for name, content in req.get("feedback", {}).items():  # a multi-pass validator's files from the passes before
        if "/" in name or name.startswith("."):
            return {"status": "jail_error", "error": f"feedback file {name!r}"}, b""
        write_file(f"{judge}/feedback/{name}", base64.b64decode(content), 0o600)
        os.chown(f"{judge}/feedback/{name}", JUDGE, JUDGE)
    os.rename(f"{WORK}/checked", f"{judge}/output")
    os.chown(f"{judge}/output", 0, 0)
    os.chmod(f"{judge}/output", 0o444)
    link_artifact(req["judge_key"], f"{judge}/bin")
    log, stdout = f"{WORK}/judge.log", f"{WORK}/judge.out"
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    out = os.open(stdout, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600) if req["protocol"] in OWN_STDOUT else fd
    stdin = os.open(f"{judge}/output" if req["protocol"] == "kattis" else "/dev/null", os.O_RDONLY)
    argv = judge_argv(req, judge, f"{judge}/output")
    outcome = finish(*spawn(argv, uid=JUDGE, cwd=f"{judge}/feedback", limits=req["judge_limits"], stdin=stdin,
                            stdout=out, stderr=fd), req["judge_limits"]["wall"])
    for end in {fd, out, stdin}:
        os.close(end)
    outcome = judge_outcome(outcome, judge, log, stdout if out != fd else None)
    return (outcome, b"") if not req.get("multi_pass") else next_pass(outcome, f"{judge}/feedback")


def next_pass(outcome, feedback):
    """A multi-pass validator's ``nextpass.in`` (the payload; ``nextpass`` says whether there is one) and the other
    regular files of its feedback folder (``feedback``, which the host sends back with the next pass's check, as
    problemtools keeps the folder across passes), at most :data:`FEEDBACK_BYTES` in all, else a judge error."""
    files, total, nextpass = {}, 0, None
    for entry in os.scandir(feedback):
        if not entry.is_file(follow_symlinks=False):
            continue
        with open(os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW), "rb") as f:
            content = f.read(FEEDBACK_BYTES + 1)
        total += len(content)
        if total > FEEDBACK_BYTES:
            return {**outcome, "status": "jail_error", "error": f"the feedback folder holds over {FEEDBACK_BYTES} "
                    "bytes"}, b""
        if entry.name == "nextpass.in":
            nextpass = content
        else:
            files[entry.name] = base64.b64encode(content).decode()
    return {**outcome, "nextpass": nextpass is not None, "feedback": files}, nextpass or b""


def do_interact(req, data):
    """The program and the interactor, each one's stdout the other's stdin; the interactor decides.

    Run as problemtools' interactive runner (``support/interactive/interactive.cc``) runs them, so that which of
    the two ended first is cause, not timing: the server holds its copy of every pipe end until the process at
    the other end is reaped (:func:`finish_all`), so neither reads the other's end before the server has taken it.

    * The program's output (the interactor's input), write end: closed when the program is reaped.  A program
      that closes its output and then crashes or spins has ended first, though the interactor read end of input.
    * The interactor's output (the program's input), write end: closed when the interactor is reaped.  A program
      that crashes on that end of input, or on a broken pipe, ended second.
    * The interactor's input, read end: closed when the interactor ended first without accepting (the program's
      writes then fail and it ends soon); otherwise held to the end, so a program that writes after the
      interactor accepted gets no broken pipe for it (up to the pipe's 1 MiB, problemtools' size too).
    * The program's input, read end: held to the end (an interactor writing after the program ended is not hurt).

    The reply's ``order`` (the program's, and the judge's in ``judge``) says which was taken first."""
    run = run_folder(req)
    judge = judge_files(data, ("input", "answer"))
    link_artifact(req["judge_key"], f"{judge}/bin")
    to_judge_r, to_judge_w = os.pipe()
    to_program_r, to_program_w = os.pipe()
    for end in (to_judge_w, to_program_w):
        with contextlib.suppress(OSError):  # over the user's pipe quota: the default size, as problemtools allows
            fcntl.fcntl(end, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    held = {to_judge_r, to_judge_w, to_program_r, to_program_w}
    log = f"{WORK}/judge.log"
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    err = os.open(f"{WORK}/program.err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    tout = f"{judge}/feedback/tout"
    argv = judge_argv(req, judge, tout, interactor=True)

    def release(*ends):
        for end in held.intersection(ends):
            os.close(end)
            held.discard(end)

    def ended(k, outcome):
        if k == 1:  # the program
            release(to_judge_w)
            return
        release(to_program_w)
        if outcome["order"] == 0 and outcome["exit"] != ACCEPTS[req["protocol"]]:
            release(to_judge_r)

    try:
        judge_run = spawn(argv, uid=JUDGE, cwd=f"{judge}/feedback", limits=req["judge_limits"], stdin=to_judge_r,
                          stdout=to_program_w, stderr=fd)
        before, forked_from = children_cpu(), image()
        program = spawn(req["argv"], uid=CONTESTANT, cwd=run, limits=req["limits"], stdin=to_program_r,
                        stdout=to_judge_w, stderr=err, env_extra=req.get("env"), program=True)
        os.close(fd)
        os.close(err)
        verdict, outcome = finish_all([(*judge_run, req["judge_limits"]["wall"]), (*program, req["limits"]["wall"])],
                                      ended)
    finally:
        release(*held)
    count_orphans(outcome, before, outcome["cpu"] + verdict["cpu"])
    outcome["image_rss"] = forked_from
    verdict = judge_outcome(verdict, judge, log)
    outcome["stderr"] = tail(f"{WORK}/program.err", ERR_BYTES)
    outcome["judge"] = verdict
    if req.get("keep_output") and os.path.lexists(tout):  # an interactor that judged early may have written none
        os.rename(tout, KEPT)
    return outcome, b""


def do_communicate(req, data):
    """CMS's Communication task type (cms-dev/cms ``cms/grading/tasktypes/Communication.py``, commit
    ``c3659b810cfd1fab37904f6c6148d460f2854eff``): the manager, run as the judge's uid in its own folder, which
    holds the test's input as ``input.txt`` (also its stdin) and where it may write ``output.txt``, talks to each of
    the program's ``processes`` instances through a FIFO pair of its own, ``fifo<i>/u<i>_to_m`` and
    ``fifo<i>/m_to_u<i>``, all on its command line (user-to-manager, then manager-to-user, process by process).
    Each process reads its manager FIFO as its stdin and writes its own as its stdout (``std_io``), or, linked with
    the task's stub (``fifo_io``), gets their paths as arguments (manager-to-user first); with more than one
    process, its 0-based index comes last.  The manager's stdout's first line is the outcome, its stderr the text.

    What CMS's separate sandboxes guarantee, here by uids and modes: the manager's folder is the judge's (0700),
    so no process can read the input; process 0 runs as the contestant's uid, process ``i`` as ``PEERS[i - 1]``
    (none can signal, trace or open the files of another); each FIFO is the judge's, with the process's group,
    readable only (manager-to-user, 0640) or writable only (user-to-manager, 0620) by that group and by nobody
    else, so a process can neither forge the manager's words, read its own back, nor reach another process's
    FIFOs.  As in :func:`do_interact`, the server holds a writer of each user-to-manager FIFO until its process is
    reaped, and a reader and a writer of each manager-to-user one until the manager is, so no ``open`` waits and an
    end of input is seen only once the process at the other end is taken.  A manager that reaches its ``open`` of
    a user-to-manager FIFO only after that process ended waits for a writer to its wall limit, as under CMS; the
    program's own verdict (RE, TLE) stands.  The processes' outcomes are merged as CMS's
    ``merge_execution_stats``: CPU seconds summed (the host compares the sum with the limit), the largest peak
    memory, and the first failing process's exit or signal."""
    n = req.get("processes", 1)
    uids = [CONTESTANT, *PEERS][:n]
    if len(uids) < n:
        return {"status": "jail_error", "error": f"{n} processes: this sandbox has uids for {len(uids)}"}, b""
    run = run_folder(req)
    judge = judge_files(data[:1], ("input",))
    link_artifact(req["judge_key"], f"{judge}/bin")
    box = f"{judge}/feedback"
    write_file(f"{box}/input.txt", data[0])
    to_manager = [f"{WORK}/fifo{i}/u{i}_to_m" for i in range(n)]
    to_user = [f"{WORK}/fifo{i}/m_to_u{i}" for i in range(n)]
    user_in, user_out, manager_out = [], [], []
    for i, uid in enumerate(uids):
        fresh_dir(f"{WORK}/fifo{i}", JUDGE, 0o711)
        for path, mode in ((to_manager[i], 0o620), (to_user[i], 0o640)):
            os.mkfifo(path, 0o600)
            os.chown(path, JUDGE, uid)
            os.chmod(path, mode)
        user_in.append(os.open(to_user[i], os.O_RDONLY | os.O_NONBLOCK))
        os.set_blocking(user_in[i], True)
        manager_out.append(os.open(to_user[i], os.O_WRONLY))  # a writer from the start: no early end of input
        reader = os.open(to_manager[i], os.O_RDONLY | os.O_NONBLOCK)  # so that the writer's open does not wait
        user_out.append(os.open(to_manager[i], os.O_WRONLY))
        os.close(reader)
    held = {*user_in, *user_out, *manager_out}
    log, stdout = f"{WORK}/judge.log", f"{WORK}/judge.out"
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    out = os.open(stdout, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    errs = [os.open(f"{WORK}/program{i}.err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600) for i in range(n)]
    stdin = os.open(f"{box}/input.txt", os.O_RDONLY)
    null = os.open("/dev/null", os.O_RDWR)
    stdio = req.get("user_io", "std_io") == "std_io"

    def release(*ends):
        for end in held.intersection(ends):
            os.close(end)
            held.discard(end)

    def ended(k, _):
        if k == 0:  # the manager
            release(*user_in, *manager_out)
            return
        release(user_out[k - 1])
        with contextlib.suppress(OSError):  # a manager waiting in open() for a writer that will never come: woken
            os.close(os.open(to_manager[k - 1], os.O_WRONLY | os.O_NONBLOCK))

    try:
        manager = spawn([part.replace("{bin}", f"{judge}/bin") for part in req["judge_argv"]]
                        + [path for pair in zip(to_manager, to_user, strict=True) for path in pair],
                        uid=JUDGE, cwd=box, limits=req["judge_limits"], stdin=stdin, stdout=out, stderr=fd)
        before, forked_from = children_cpu(), image()
        programs = []
        for i, uid in enumerate(uids):
            argv = [*req["argv"], *(() if stdio else (to_user[i], to_manager[i])), *((str(i),) if n > 1 else ())]
            programs.append(spawn(argv, uid=uid, cwd=run, limits=req["limits"], stdin=user_in[i] if stdio else null,
                                  stdout=user_out[i] if stdio else null, stderr=errs[i], env_extra=req.get("env"),
                                  program=True))
        for end in (fd, out, *errs, stdin, null):
            os.close(end)
        verdict, *outcomes = finish_all([(*manager, req["judge_limits"]["wall"]),
                                         *((*program, req["limits"]["wall"]) for program in programs)], ended)
    finally:
        release(*held)
    outcome = merged(outcomes)
    count_orphans(outcome, before, outcome["cpu"] + verdict["cpu"])
    outcome["image_rss"] = forked_from
    outcome["stderr"] = "".join(tail(f"{WORK}/program{i}.err", ERR_BYTES) for i in range(n))[-ERR_BYTES:]
    outcome["judge"] = judge_outcome(verdict, judge, log, stdout)
    return outcome, b""


def do_two_steps(req, data):
    """CMS's TwoSteps task type (``cms/grading/tasktypes/TwoSteps.py``, commit ``c3659b8``): the program (the task's
    manager compiled with the submission's two functions) runs twice at once, ``<argv> 0 <fifo>`` with the test's
    input as its stdin, and ``<argv> 1 <fifo>``, whose stdout is the output checked; each instance under the
    program's limits, as a uid of its own (the contestant's, then ``PEERS[0]``), talking only through the FIFO,
    which both may open either way (CMS's is mode 0666).  An instance waiting in ``open`` for the other, which
    ended first, is woken (it then reads an end of input, or its writes fail).  The outcomes are merged as
    :func:`merged`; the output is returned or kept as :func:`do_run`'s."""
    if not PEERS:
        return {"status": "jail_error", "error": "this sandbox has no second uid"}, b""
    run, io, step = run_folder(req), f"{WORK}/io", f"{WORK}/step"
    fresh_dir(io, 0, 0o700)
    fresh_dir(step, 0, 0o755)
    fifo = f"{step}/fifo"
    os.mkfifo(fifo, 0o600)
    os.chmod(fifo, 0o666)
    os.rename(INPUT, f"{io}/in")
    stdin = os.open(f"{io}/in", os.O_RDONLY)
    null = os.open("/dev/null", os.O_RDWR)
    out = os.open(f"{io}/out", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    errs = [os.open(f"{io}/err{i}", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600) for i in range(2)]

    def ended(k, _):
        with contextlib.suppress(OSError):  # the other instance, waiting in open() for this one's end: woken
            os.close(os.open(fifo, (os.O_WRONLY if k == 0 else os.O_RDONLY) | os.O_NONBLOCK))

    before, forked_from = children_cpu(), image()
    programs = [spawn([*req["argv"], str(i), fifo], uid=uid, cwd=run, limits=req["limits"],
                      stdin=stdin if i == 0 else null, stdout=null if i == 0 else out, stderr=errs[i],
                      env_extra=req.get("env"), program=True) for i, uid in enumerate((CONTESTANT, PEERS[0]))]
    for end in (stdin, null, out, *errs):
        os.close(end)
    outcome = merged(finish_all([(*program, req["limits"]["wall"]) for program in programs], ended))
    outcome["image_rss"] = forked_from
    count_orphans(outcome, before, outcome["cpu"])
    outcome.update(out_bytes=os.stat(f"{io}/out").st_size,
                   stderr=(tail(f"{io}/err0", ERR_BYTES) + tail(f"{io}/err1", ERR_BYTES))[-ERR_BYTES:])
    output = b""
    if req.get("return_output"):
        with open(f"{io}/out", "rb") as f:
            output = f.read(req["limits"]["fsize"])
    if req.get("keep_output"):
        os.rename(f"{io}/out", KEPT)
    return outcome, output


def merged(outcomes):
    """Several processes' outcomes as one, as CMS's ``merge_execution_stats`` (``cms/grading/steps/stats.py``):
    CPU seconds summed, the wall clock and the peak memory the largest, the first failing process's ending."""
    failing = [o for o in outcomes if o["exit"] != 0 or o["signal"] is not None or o["wall_killed"]
               or o["start_error"]]
    first = dict(failing[0] if failing else outcomes[0])
    first.update(cpu=sum(o["cpu"] for o in outcomes), wall=max(o["wall"] for o in outcomes),
                 rss=max(o["rss"] for o in outcomes), processes=len(outcomes))
    return first


OPS = {"compile": do_compile, "run": do_run, "check": do_check, "interact": do_interact,
       "communicate": do_communicate, "two_steps": do_two_steps}


def forget(req):
    """Drop cached artifacts the host no longer wants (its cache is bounded)."""
    for key in req["keys"]:
        path = os.path.join(CACHE, key)
        if os.path.isdir(path):
            remove_tree(path)
        BASELINE["cached"].pop(key, None)
    return {"status": "ok"}


def main():
    config = json.loads(sys.argv[1])
    mount_tmpfs(WORK, f"size={config['work_bytes']},nr_inodes={config['work_inodes']},mode=0755")
    os.mkdir(CACHE, 0o700)
    os.mkdir(PCH, 0o755)
    os.chmod(PCH, 0o755)
    PEERS.extend(65532 - i for i in range(config["processes"] - 1))
    BASELINE.update(used=used(), cached={}, sockets=unix_sockets(),
                    program_filter=bytes.fromhex(config["program_seccomp"]))
    set_caps(CAPS)
    load_filter(bytes.fromhex(config["seccomp"]))
    inbox, outbox = take_channel()
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)  # orphans come to this server: killed, reaped and counted
    send(outbox, {"ready": True, "pid": os.getpid()})
    while True:
        try:
            req = receive(inbox)
            sizes = req.get("blobs", [])
            if req.get("op") in ("run", "two_steps"):
                receive_file(inbox, sizes[0], INPUT)
                sizes = sizes[1:]
            data = blobs(inbox, sizes)
        except EOFError:
            break
        try:
            if req["op"] == "forget":
                header, payload = forget(req), b""
            else:
                header, payload = OPS[req["op"]](req, data)
            header["clean"] = kill_ours() and tidy(req.get("keep_output") and header.get("status") != "jail_error")
        except NoRoom:  # an earlier program's leftovers: nothing was run, so the host asks a fresh sandbox
            header, payload = {"status": "no_room", "clean": False}, b""
        except Exception as exc:  # anything odd that a program left: the host rebuilds the sandbox
            header, payload = {"status": "jail_error", "error": f"{type(exc).__name__}: {exc}", "clean": False}, b""
        reply(outbox, header, payload)
    kill_ours()


if __name__ == "__main__":
    main()
