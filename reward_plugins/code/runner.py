"""The warm interpreter that runs untrusted programs: a fork server, one per sandbox.

This file is executed as a script (``python -I -B runner.py CONFIG``) inside
the sandbox that :mod:`reward_plugins.code.sandbox` builds; it imports
nothing from grpo-host, only the standard library, so it starts fast and
needs no access to the project.  It reads requests from fd 0 and answers on
fd 1, each a 4-byte big-endian length and UTF-8 JSON.

Per request it forks a child (the program runs in a copy of this warm
interpreter: a fork, not a ``python`` start) that:

* starts a new session (``setsid``), so it has no terminal and its own group;
* drops to uid/gid 65534 with no supplementary groups and no capabilities
  when the server runs as another uid (``drop_uid``);
* sets rlimits: address space, CPU seconds, processes (RLIMIT_NPROC),
  file size, open files, no core files, no POSIX message queues;
* changes into the work directory, empty at the start of every program
  (the only place besides the sandbox's private ``/dev/shm`` it may write);
* gets stdin (a pipe with the case's input, or ``/dev/null`` for assert
  tests), stdout and stderr pipes, and for assert tests fd 3, where the
  harness writes a per-run token once the asserts have all run;
* executes the code with ``exec`` in a fresh namespace.

The server enforces the wall-clock limit and reads at most ``max_output``
bytes, then kills every process the program left: in a sandbox
``kill(-1, SIGKILL)`` reaches everything in the PID namespace except its
init and the server; without one (``none`` mode) the server is a child
subreaper, so orphans reparent to it and it kills its whole subtree.  It
then empties what the program wrote and removes System V IPC objects (in a
sandbox only: the IPC namespace is its own), and answers ``clean: false``
when anything could not be undone, which makes the host tear the sandbox
down and build a new one.
"""

import ctypes
import json
import os
import resource
import select
import signal
import sys
import time

WORK_ROOT = "/tmp"
NOBODY = 65534
CHUNK = 65536
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
IPC_RMID = 0
NPROC_BASE = 0  # processes of the program's uid that are not the program's (set in main)
KEEP = set()  # paths in WORK_ROOT holding the host's read-only binds (set in main)
OWN_IPC = True  # the IPC namespace is the sandbox's own (False without a sandbox)
_libc = ctypes.CDLL(None, use_errno=True)


# Only what the server needs is imported: every shared library mapped here is copied on every fork
# (shutil alone would bring zlib, bz2 and lzma), so it costs every program.


def read_exact(fd, n):
    buf = b""
    while len(buf) < n:
        chunk = os.read(fd, n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return buf


def receive(fd):
    size = int.from_bytes(read_exact(fd, 4), "big")
    return json.loads(read_exact(fd, size))


def send(fd, message):
    data = json.dumps(message).encode()
    view = memoryview(len(data).to_bytes(4, "big") + data)
    while view:
        view = view[os.write(fd, view):]


def set_limits(req):
    limits = [
        (resource.RLIMIT_AS, req["memory"]),
        (resource.RLIMIT_CPU, int(float(req["timeout"])) + 1),
        (resource.RLIMIT_FSIZE, req["file_size"]),
        (resource.RLIMIT_NOFILE, 64),
        (resource.RLIMIT_CORE, 0),
        (resource.RLIMIT_MSGQUEUE, 0),
        (resource.RLIMIT_NPROC, req["processes"] + NPROC_BASE),
    ]
    for which, value in limits:
        resource.setrlimit(which, (value, value + 1 if which == resource.RLIMIT_CPU else value))


def child(req, drop_uid, workdir, fds, nonce):
    """Runs in the forked child; never returns."""
    stdin_r, out_w, err_w, token_w = fds
    try:
        os.setsid()
        for signum in (signal.SIGPIPE, signal.SIGINT, signal.SIGTERM, signal.SIGXFSZ):
            signal.signal(signum, signal.SIG_DFL)
        os.dup2(stdin_r, 0)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        if token_w is not None:
            os.dup2(token_w, 3)
        os.closerange(3 if token_w is None else 4, 1 << 16)
        if drop_uid:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
        os.chdir(workdir)
        os.umask(0o077)
        set_limits(req)
        sys.stdin = open(0, "r", encoding="utf-8", errors="replace", closefd=False)
        sys.stdout = open(1, "w", encoding="utf-8", errors="replace", closefd=False)
        sys.stderr = open(2, "w", encoding="utf-8", errors="replace", closefd=False)
        sys.argv = ["solution.py"]
        os.environ["TMPDIR"] = workdir  # tempfile's choice: /tmp is not the programs' to write
        sys.path[:0] = [workdir]
        source, tests = req["code"], req.get("tests")
        namespace = {"__name__": "__main__" if tests is None else "solution", "__builtins__": __builtins__}
        del req
    except BaseException as exc:
        os.write(2, f"sandbox setup failed: {type(exc).__name__}: {exc}\n".encode())
        os._exit(70)
    status = 0
    try:
        code = compile(source, "solution.py", "exec")
        tests = compile(tests, "tests.py", "exec") if tests is not None else None
        exec(code, namespace)
        if tests is not None:
            exec(tests, namespace)
            sys.stdout.flush()
            os.write(3, nonce)
    except SystemExit as exc:
        if tests is not None:  # leaving before the asserts ran is not passing them
            status = 1
        elif exc.code is None or isinstance(exc.code, int):
            status = (exc.code or 0) & 0xFF
        else:
            print(exc.code, file=sys.stderr)
            status = 1
    except BaseException as exc:
        import traceback  # loaded by warm_up: no cost here

        traceback.print_exception(type(exc), exc, exc.__traceback__.tb_next)  # from the program's frame on
        status = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        status = status or 1
    os._exit(status)


def descendants(root):
    """Pids in the subtree under ``root`` (the server), from /proc's ``children`` lists."""
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{pid}/task/{tid}/children") as f:
                    kids = [int(k) for k in f.read().split()]
            except OSError:
                continue
            out += kids
            todo += kids
    return out


def others(mode):
    """Processes other than the server (and the namespace's init) that are still alive."""
    if mode == "none":
        pids = descendants(os.getpid())
    else:
        me = os.getpid()
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, me)]
    alive = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        if stat[stat.rindex(b")") + 2:stat.rindex(b")") + 3] != b"Z":
            alive.append(pid)
    return alive


def count_processes(uid):
    count = 0
    for name in os.listdir("/proc"):
        try:
            if name.isdigit() and os.stat(f"/proc/{name}").st_uid == uid:
                count += 1
        except OSError:
            pass
    return count


def reap():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def alone(mode):
    """Fast check that nothing but the server (and init) is left, from two ``children`` lists.

    In a sandbox every process descends from init (pid 1): when init's only
    child is the server and the server has none, nothing else exists.
    """
    me = os.getpid()
    try:
        with open(f"/proc/{me}/task/{me}/children") as f:
            if f.read().strip():
                return False
        if mode == "none":
            return True
        with open("/proc/1/task/1/children") as f:
            return f.read().split() == [str(me)]
    except OSError:
        return False


def kill_all(mode):
    """Kill everything the program started; True when nothing is left within a second."""
    if alone(mode):
        return True
    deadline = time.monotonic() + 1.0
    while True:
        if mode == "none":
            for pid in descendants(os.getpid()):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        else:
            try:
                os.kill(-1, signal.SIGKILL)
            except OSError:
                pass
        reap()
        if not others(mode):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.002)


def remove_ipc():
    """Delete System V IPC objects a program left: they would outlive it and reach the next program."""
    if not OWN_IPC:
        return
    for kind, remove in (("shm", _libc.shmctl), ("msg", _libc.msgctl), ("sem", _libc.semctl)):
        try:
            with open(f"/proc/sysvipc/{kind}") as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            ident = int(row.split()[1])
            if kind == "sem":
                remove(ident, 0, IPC_RMID)
            else:
                remove(ident, IPC_RMID, None)


def remove_tree(path):
    """Delete a directory tree without following links; too deep a tree raises (the sandbox is then rebuilt)."""
    os.chmod(path, 0o700)  # a program may have chmod-ed its directories shut
    with os.scandir(path) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                remove_tree(entry.path)
            else:
                os.unlink(entry.path)
    os.rmdir(path)


def empty(directory, keep=()):
    with os.scandir(directory) as entries:
        doomed = [(entry.path, entry.is_dir(follow_symlinks=False)) for entry in entries if entry.path not in keep]
    for path, is_dir in doomed:
        remove_tree(path) if is_dir else os.unlink(path)


def ipc_objects():
    if not OWN_IPC:
        return False
    for kind in ("shm", "msg", "sem"):
        try:
            with open(f"/proc/sysvipc/{kind}") as f:
                if len(f.read().splitlines()) > 1:
                    return True
        except OSError:
            pass
    return False


SHM = "/dev/shm"  # a tmpfs of its own in the sandbox, writable by programs (POSIX semaphores need it)


def marks(workdir):
    """Change times of the writable directories: a change means the program left something to delete."""
    return tuple(os.stat(d).st_ctime_ns for d in (workdir, WORK_ROOT, SHM) if d)


def cleanup(workdir, drop_uid):
    """Empty the work dir (and /tmp) and remove IPC objects; as the programs' uid when they run as another."""
    if not drop_uid:
        empty(WORK_ROOT, keep=KEEP | {workdir})
        empty(workdir)
        if SHM:
            empty(SHM)
        remove_ipc()
        return True
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            empty(workdir)
            if SHM:
                empty(SHM)
            remove_ipc()
        except BaseException:
            os._exit(1)
        os._exit(0)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0


def run(req, mode, drop_uid, workdir, before):
    assert_mode = req.get("tests") is not None
    stdin_data = (req.get("stdin") or "").encode() if not assert_mode else b""
    stdin_r, stdin_w = os.pipe() if not assert_mode else (os.open("/dev/null", os.O_RDONLY), None)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    token_r, token_w = os.pipe() if assert_mode else (None, None)
    nonce = os.urandom(16)
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        child(req, drop_uid, workdir, (stdin_r, out_w, err_w, token_w), nonce)
    for fd in (stdin_r, out_w, err_w, token_w):
        if fd is not None:
            os.close(fd)
    pidfd = os.pidfd_open(pid)
    poller = select.poll()
    buffers = {out_r: bytearray(), err_r: bytearray()}
    token = bytearray()
    readers = {out_r: buffers[out_r], err_r: buffers[err_r]}
    if token_r is not None:
        readers[token_r] = token
    for fd in readers:
        poller.register(fd, select.POLLIN)
    poller.register(pidfd, select.POLLIN)
    if stdin_w is not None:
        os.set_blocking(stdin_w, False)
        if stdin_data:
            poller.register(stdin_w, select.POLLOUT)
        else:
            os.close(stdin_w)
            stdin_w = None
    deadline = start + float(req["timeout"])
    cap = int(req["max_output"])
    status, exited = None, False
    sent = 0
    while not exited:
        left = deadline - time.monotonic()
        if left <= 0:
            status = "timeout"
            break
        for fd, event in poller.poll(left * 1000):
            if fd == pidfd:
                exited = True
            elif fd == stdin_w:
                try:
                    sent += os.write(stdin_w, stdin_data[sent:sent + CHUNK])
                except OSError:  # the program closed its stdin
                    sent = len(stdin_data)
                if sent >= len(stdin_data):
                    poller.unregister(stdin_w)
                    os.close(stdin_w)
                    stdin_w = None
            elif fd in readers:
                data = os.read(fd, CHUNK)
                if not data:
                    poller.unregister(fd)
                    continue
                readers[fd] += data
        if len(buffers[out_r]) + len(buffers[err_r]) > cap:
            status = "output_limit"
            break
    seconds = time.monotonic() - start
    if not exited:
        os.kill(pid, signal.SIGKILL)
    wstatus = os.waitpid(pid, 0)[1]
    clean = kill_all(mode)
    for fd in list(readers):  # every writer is dead now: drain to EOF, within the cap
        os.set_blocking(fd, False)
        while len(buffers[out_r]) + len(buffers[err_r]) <= cap:
            try:
                data = os.read(fd, CHUNK)
            except BlockingIOError:
                break
            if not data:
                break
            readers[fd] += data
        os.close(fd)
    if stdin_w is not None:
        os.close(stdin_w)
    os.close(pidfd)
    if status is None and len(buffers[out_r]) + len(buffers[err_r]) > cap:
        status = "output_limit"
    exit_code = os.waitstatus_to_exitcode(wstatus)
    if status is None:
        status = "exited"
    try:
        if marks(workdir) != before or ipc_objects():
            clean = cleanup(workdir, drop_uid) and clean
    except Exception:  # e.g. a tree too deep to remove: the host builds a new sandbox
        clean = False
    return {
        "status": status,
        "exit_code": exit_code,
        "stdout": bytes(buffers[out_r][:cap]).decode("utf-8", "replace"),
        "stderr": bytes(buffers[err_r][-4096:]).decode("utf-8", "replace"),
        "passed_asserts": bool(token_r is not None and bytes(token) == nonce and exit_code == 0),
        "seconds": seconds,
        "clean": clean,
    }


def warm_up():
    """Load here, once, what every program would otherwise pay for after its fork.

    Modules most programs import (not ``random``: it reseeds itself after
    every fork, which would cost every program ~0.4 ms); the first
    ``compile``/``exec``/text-file set-up (they initialise lazily); then
    ``gc.freeze()`` so the children's garbage collections do not touch, and
    copy, the whole inherited heap.
    """
    import bisect, collections, functools, heapq, io, itertools, math, re, string, traceback, typing  # noqa: E401,F401
    import gc

    warm = compile("import sys\nx = [i for i in range(3)]\nassert x\n", "warm.py", "exec")
    exec(warm, {"__builtins__": __builtins__})
    open(os.devnull, "w", encoding="utf-8", errors="replace").close()
    gc.collect()
    gc.freeze()


def main():
    global WORK_ROOT, NPROC_BASE, SHM, KEEP, OWN_IPC
    config = json.loads(sys.argv[1])
    mode, drop_uid = config["mode"], config["drop_uid"]
    WORK_ROOT = config.get("work_root", WORK_ROOT)
    KEEP = {os.path.join(WORK_ROOT, name) for name in config.get("keep", ())}
    if mode == "none":
        SHM, OWN_IPC = None, False  # the host's /dev/shm and System V IPC objects are not ours to remove
    inbox, outbox = os.dup(0), os.dup(1)
    devnull = os.open("/dev/null", os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.set_inheritable(inbox, False)
    os.set_inheritable(outbox, False)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    if mode == "none" or not drop_uid:  # RLIMIT_NPROC counts every process of the uid, not only the program's
        NPROC_BASE = count_processes(NOBODY if drop_uid else os.getuid())
    _libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)  # programs (same uid in "user" mode) cannot ptrace the server
    if mode == "none":
        _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    os.chmod(WORK_ROOT, 0o755)  # only the server writes here; programs get the work dir below
    warm_up()

    workdir = os.path.join(WORK_ROOT, "work")
    os.mkdir(workdir, 0o700)
    if drop_uid:
        os.chown(workdir, NOBODY, NOBODY)
    send(outbox, {"ready": True, "mode": mode, "uid": os.getuid(), "pid": os.getpid()})
    while True:
        try:
            req = receive(inbox)
        except EOFError:
            return
        before = marks(workdir)
        send(outbox, run(req, mode, drop_uid, workdir, before))


if __name__ == "__main__":
    main()
