"""The warm interpreter that runs untrusted programs: a fork server and its collector, one of each per sandbox.

This file is executed as a script (``python -I -B runner.py CONFIG``) inside
the sandbox that :mod:`reward_plugins.code.sandbox` builds; it imports
nothing from grpo-host, only the standard library, the :mod:`plain` codec
beside it and the servers' :mod:`primitives` (``reward_plugins/sandbox/``,
which every sandbox binds), so it starts fast and needs no access to the
project.

Set-up, in this order, before any program exists: mount the programs' work
folder and ``/dev/shm`` as tmpfs with a size *and an inode cap* (bwrap's own
tmpfs has no inode option); in ``user`` mode move into a nested user
namespace that owns no mount (so no capability left here can undo a mount);
drop every capability the server does not need; load the seccomp filter the
host compiled (:mod:`reward_plugins.sandbox.seccomp`), which every later fork
inherits; fork the collector.

Every program is a fork of the server, so the server holds nothing a later
program could use.  Requests arrive on fd 0 as a 4-byte big-endian length
and UTF-8 JSON (the header: limits, stdin input, call arguments), followed
by the raw payload, the program's source then the tests, which the server
splices straight from the host's pipe to their reader without reading them:
the source to the program's fd 4, the tests to the collector (literal-call
tests) or to a script case's judge.  Programs' output and every verdict go
to the **collector**, a process that never runs program code: it reads
them (capped), judges, and writes the reply to the host itself.  So no
program finds, in its copy of the server's memory, an earlier request's
tests, a sibling's code, output or results, or a token.

Three kinds of request:

* ``io``: the program runs as ``__main__`` with the case's input on stdin;
  the host compares its stdout with the expected output, which never enters
  the sandbox.
* ``calls`` (assert tests whose calls have literal arguments, see
  :mod:`reward_plugins.code.shapes`): the program's module runs, then the
  harness writes ``=`` to fd 3 (the module ran to its end; without it every
  case fails), makes each call, decoded before the program ran, and writes
  each result as one line of plain data (:mod:`plain`), or ``!`` when the
  call raised or returned anything but builtin values.  The collector
  decides every case from those values once the program and everything it
  started are dead.  The program never sees an expected value, so it can
  only pass by computing it.
* ``script`` (any other assert tests): two processes per case, both forks of
  the server.  The **program's process** runs the module, then serves
  requests (:func:`serve`): it reads them on fd 5 and answers on fd 3 (its
  stdout goes to the judge, its stderr to the collector).  The **judge**
  (:func:`judge_process`), forked after it, never executes program code: it
  runs the case's tests with each of the program's names the tests use
  bound to a :class:`Proxy` (or to a plain copy of a plain value), so every
  call is a request over the pipe and every result comes back as fresh
  plain data or as another proxy, which compares by identity only and has
  no truth value, length or operator of the program's.  Only the judge
  holds the tests, the per-case token (made after the program's fork) and
  the result channel to the collector: when the tests ran to their end it
  writes the token and its *suspects* (calls of the program's names whose
  result repeats an earlier call's argument, which the host runs again as
  literal calls in a process that never saw it).  A program that reads or
  writes its descriptors, patches the harness or a module, kills, stops or
  floods the judge, or answers out of form or out of turn only fails the
  case.

Per program the child starts a new session, drops to uid 65534 (``root``
mode; in ``user`` mode it already is that uid, without capabilities), makes
itself the OOM killer's first choice, sets rlimits (address space, CPU,
processes, file size, open files), and runs in its empty work folder.  The
server enforces the wall clock (``calls``: each answered call earns the
next one a full per-test timeout, within the run's total budget; the
collector notes the times, the server looks only when a deadline is up),
kills the program when the collector reports too much output, then kills
every process the program left and empties what it wrote; ``clean: false``
makes the host rebuild the sandbox.  When the host's end of fd 0 closes
(the scoring process died), the server kills the program, removes its work
folder and exits.
"""

import _signal  # type: ignore[import-not-found]  # signal.signal's C function: its wrapper makes enums, per program
import builtins
import collections
import contextlib
import json
import marshal
import os
import resource
import select
import signal
import sys
import time
import types

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "sandbox"))
from primitives import (  # noqa: E402
    NOBODY,
    PR_SET_CHILD_SUBREAPER,
    PR_SET_DUMPABLE,
    PR_SET_PDEATHSIG,
    libc,
    load_filter,
    mount_tmpfs,
    nest_user_namespace,
    place,
    read_exact,
    read_proc,
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

WORK = "/tmp/work"  # the programs' work folder in a sandbox (a tmpfs of its own)
SHM = "/dev/shm"  # a tmpfs of its own in a sandbox, writable by programs (POSIX semaphores need it)
CHUNK = 65536
TOKEN_BYTES = 16
ROOT_CAPS = (5, 6, 7)  # CAP_KILL, SETGID, SETUID: what the root-mode server keeps (to kill and to drop to 65534)
NPROC_BASE = 0  # processes of the program's uid that are not the program's (set in main)
COLLECTOR_PID = None  # never killed with a program's leftovers
STDIO: dict = {}  # the programs' text files: stdin ("io": a pipe, "null": /dev/null), "out", "err" (program_stdio)
plain = None  # the codec module, imported in main from this file's folder

# Only what the server needs is imported: every shared library mapped here is copied on every fork
# (shutil alone would bring zlib, bz2 and lzma), so it costs every program.


class Hangup(Exception):
    """The host's end of the request pipe closed: it is gone, so is everything here."""


def read_all(fd):
    parts = []
    while chunk := os.read(fd, CHUNK):
        parts.append(chunk)
    return b"".join(parts)


def forward(src, dst, n):
    """Move ``n`` bytes from pipe ``src`` to ``dst`` in the kernel; True when all reached ``dst``.

    On a closed reader the rest is still consumed (into /dev/null), so the
    request stream stays in step.
    """
    delivered = dst is not None
    while n > 0:
        try:
            if not delivered:
                raise BrokenPipeError
            moved = os.splice(src, dst, n)
        except BrokenPipeError:
            delivered = False
            with open(os.devnull, "wb") as sink:
                while n > 0:
                    moved = os.splice(src, sink.fileno(), n)
                    if not moved:
                        raise EOFError from None
                    n -= moved
            break
        if not moved:
            raise EOFError
        n -= moved
    return delivered


def set_limits(req, extra_processes=0):
    limits = [
        (resource.RLIMIT_AS, req["memory"]),
        (resource.RLIMIT_CPU, int(float(req["budget"])) + 1),
        (resource.RLIMIT_FSIZE, req["file_size"]),
        (resource.RLIMIT_NOFILE, 64),
        (resource.RLIMIT_CORE, 0),
        (resource.RLIMIT_MSGQUEUE, 0),
        (resource.RLIMIT_NPROC, req["processes"] + NPROC_BASE + extra_processes),
    ]
    for which, value in limits:
        resource.setrlimit(which, (value, value + 1 if which == resource.RLIMIT_CPU else value))


def child(req, drop_uid, workdir, fds, extra_processes=0):
    """Runs in the forked program process; never returns.

    ``extra_processes``: processes of the program's uid beside it that its
    RLIMIT_NPROC must not count against it (a script case's judge, same uid).
    """
    kind = req["kind"]
    try:
        os.setsid()
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # a program dies with the server (unisolated too)
        for signum in (signal.SIGPIPE, signal.SIGINT, signal.SIGTERM, signal.SIGXFSZ):
            _signal.signal(signum, _signal.SIG_DFL)
        place(fds)  # 0 stdin, 1 stdout, 2 stderr, 3 results (calls) or answers (script), 4 source, 5 calls/requests
        libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)  # a non-dumpable process's /proc files are not its own to write
        oom = os.open("/proc/self/oom_score_adj", os.O_WRONLY)
        os.write(oom, b"1000")  # past a memory bound, the kernel kills a program, not the server or the collector
        os.close(oom)
        libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
        if drop_uid:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
        os.chdir(workdir)
        os.umask(0o077)
        set_limits(req, extra_processes)
        source = read_all(4).decode("utf-8", "replace")
        os.close(4)
        calls = []
        if kind == "calls":  # this group's calls only: no other call's arguments ever reach this process
            data = read_all(5)
            calls = marshal.loads(data) if req.get("marshal") else [  # the host's marshal: C, no codec to run
                [(name, plain.decode(args), plain.decode(kwargs)) for name, args, kwargs in steps]
                for steps in json.loads(data)]
            os.close(5)
        # the program's stdio, open for as long as its process lives (made by the server: program_stdio)
        sys.stdin, sys.stdout, sys.stderr = STDIO["io" if kind == "io" else "null"], STDIO["out"], STDIO["err"]
        sys.argv = ["solution.py"]
        sys.path[:0] = [workdir]
        namespace = {"__name__": "__main__" if kind == "io" else "solution", "__builtins__": __builtins__}
        names = tuple(req.get("names", ()))  # script mode: the program's names the tests use (from the tests alone)
        del req
    except BaseException as exc:
        os.write(2, f"sandbox setup failed: {type(exc).__name__}: {exc}\n".encode())
        os._exit(70)
    # Bound before the program runs: rebinding builtins.exec or os.write from the program changes nothing below
    # (in script mode nothing here decides a verdict anyway: the judge, another process, does).
    run_code, compile_code, write, encode, serve_calls = exec, compile, os.write, plain.encode, serve
    status = 0
    try:
        run_code(compile_code(source, "solution.py", "exec"), namespace)
        if kind == "calls":
            write(3, b"=\n")  # the module ran to its end: without this line every case fails
            for (name, args, kwargs), *methods in calls:
                try:
                    value = namespace[name](*args, **kwargs)
                    for method, args, kwargs in methods:  # Solution().two_sum(...): the chain's end is the result
                        value = getattr(value, method)(*args, **kwargs)
                    line = encode(value)
                except BaseException:  # raised, exited, or returned something that is not plain data
                    line = "!"
                write(3, (line + "\n").encode())
        elif kind == "script":
            serve_calls(namespace, names)
    except SystemExit as exc:
        if kind != "io":  # leaving before the tests ran is not passing them
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


# ---------------------------------------------------------------- script mode: the program's side of the pipe


MUTABLE = (list, dict, set, bytearray, collections.Counter, collections.OrderedDict, collections.defaultdict,
           collections.deque)  # top-level arguments whose in-place changes go back to the judge
MAX_MESSAGE = 64 << 20  # the largest request or answer either side reads: more fails the case
CONTROL_FLOW = (StopIteration, StopAsyncIteration)  # a program's exception never re-raised as one of these
BUILTIN_NAMES = frozenset(dir(builtins))  # never the program's to bind in the judge, whatever it sends


def message(fd, body):
    """Write one length-prefixed JSON message (either direction of a script case's pipes)."""
    data = plain.dumps(body).encode()
    view = memoryview(len(data).to_bytes(4, "big") + data)
    while view:
        view = view[os.write(fd, view):]


def serve(namespace, names):
    """The program's process in script mode, after its module ran: perform the judge's requests, answer each.

    First it answers, unasked, with the program's ``names`` the tests use
    (plain values, or references to its objects; a name it does not define
    is left out), then it reads requests on fd 5 and answers on fd 3 until
    the judge closes the pipe.  A request calls an object, reads or sets an
    attribute of one; the answer is plain data or a reference (an object that
    is not plain stays here, the judge gets ``{"h": n}``), what the call
    printed went to stdout before the answer (flushed, so the judge reads it
    first), and each top-level list, dict, set or bytearray argument the call
    changed comes back whole.  Nothing here is trusted: the judge checks
    every answer's form, and a program that writes fd 3 itself, or patches
    this loop, only answers wrongly.
    """
    objects, handles = [], {}

    def ref(obj):
        handle = handles.get(id(obj))
        if handle is None:
            handle = handles[id(obj)] = len(objects)
            objects.append(obj)  # kept alive, so its id is never reused for another object
        return handle

    def deref(handle):
        if not 0 <= handle < len(objects):
            raise ValueError("no such object")
        return objects[handle]

    def flush():  # the server ends this process without a word once the judge is done: nothing may stay buffered
        for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            try:  # noqa: SIM105 - the program's own process: syntax it cannot patch, not contextlib's suppress
                stream.flush()
            except BaseException:
                pass

    pending = bytearray()

    def receive():  # one request, read in as few reads as it arrived in
        while len(pending) < 4 or len(pending) < 4 + int.from_bytes(pending[:4], "big"):
            chunk = os.read(5, CHUNK)
            if not chunk:
                raise EOFError
            pending.extend(chunk)
        size = int.from_bytes(pending[:4], "big")
        body = bytes(pending[4:4 + size])
        del pending[:4 + size]
        return json.loads(body)

    found = {}
    for name in names:
        if name in namespace:
            found[name] = plain.tag(namespace[name], ref)
    flush()
    message(3, {"i": 0, "names": found})
    while True:
        try:
            request = receive()
        except EOFError:
            return
        answer = {"i": request.get("i")}
        try:
            target, op = deref(request["t"]), request["o"]
            if op == "c":
                args = [plain.untag(node, deref) for node in request["a"]]
                kwargs = {key: plain.untag(node, deref) for key, node in request["k"].items()}
                try:
                    answer["v"] = plain.tag(target(*args, **kwargs), ref)
                finally:  # what it changed before it raised comes back too
                    changed = [[n, after] for n, (value, node) in enumerate(zip(args, request["a"], strict=False))
                               if type(value) in MUTABLE and (after := plain.tag(value, ref)) != node]
                    changed += [[key, after] for key, value in kwargs.items()
                                if type(value) in MUTABLE and (after := plain.tag(value, ref)) != request["k"][key]]
                    if changed:
                        answer["m"] = changed
            elif op == "g":
                answer["v"] = plain.tag(getattr(target, request["n"]), ref)
            elif op == "s":
                setattr(target, request["n"], plain.untag(request["v"], deref))
                answer["v"] = None
            else:
                raise ValueError(f"unknown request {op!r}")
        except BaseException as exc:  # the program's exception (or a malformed request): the judge re-raises it
            answer = {"i": request.get("i"), "e": builtin_base(type(exc)), **({"m": answer["m"]} if "m" in answer
                                                                               else {})}
            try:
                answer["s"] = str(exc)[:1000]
                if len(json.dumps(args := plain.tag(exc.args))) <= 4096:  # KeyError('b') again, not KeyError("'b'")
                    answer["a"] = args
            except BaseException:
                pass
        flush()
        message(3, answer)


def builtin_base(kind):
    """The name of the nearest builtin exception class ``kind`` derives from (``ValueError`` for a program's
    ``class BadInput(ValueError)``), so the tests' ``except ValueError`` catches it in the judge."""
    for base in kind.__mro__:
        if base.__module__ == "builtins":
            return base.__name__
    return kind.__name__


# ---------------------------------------------------------------- script mode: the judge


class ProgramFailed(Exception):
    """The program's process ended, answered out of turn or out of form, or printed too much: the case fails."""


class ProgramError(Exception):
    """A call raised in the program's process an exception that is not one of the builtin exceptions."""


class Proxy:
    """An object of the program's as the judge holds it: a reference, never the object.

    Reading an attribute and calling are requests to the program's process
    (:class:`Link`); everything else is the judge's own: equality and hashing
    by identity (one proxy per object, so ``a is b`` holds when the program
    returned one object twice), a class of its own per object (``type(a) is
    type(b)`` only when ``a is b``), and no truth value, length, iteration or
    arithmetic at all (a ``TypeError``, so the case fails): no ``__eq__``,
    ``__bool__`` or ``__sub__`` the program wrote ever decides an assert.
    """

    __slots__ = ("_grpo_ref",)

    def __init__(self, handle):
        object.__setattr__(self, "_grpo_ref", handle)

    def __getattr__(self, name):
        if name.startswith("__"):  # protocol probes (copy's __deepcopy__ and the like) are not the program's to answer
            raise AttributeError(name)
        return LINK.get(self._grpo_ref, name)

    def __setattr__(self, name, value):
        LINK.set(self._grpo_ref, name, value)

    def __call__(self, *args, **kwargs):
        return LINK.call(self._grpo_ref, args, kwargs)

    def __bool__(self):
        raise TypeError("an object of the program's has no truth value in the judge (compare plain results)")

    def __repr__(self):
        return f"<the program's object #{self._grpo_ref}>"


LINK = None  # the judge's Link to the program's process (set in the judge process only)


class Link:
    """The judge's end of a script case's pipes to the program's process: requests out, answers and stdout in.

    Every answer is checked: its number is the request's (an answer out of
    turn fails the case), it is one length-prefixed JSON message of at most
    :data:`MAX_MESSAGE` bytes, and its value decodes to fresh plain data or
    proxies.  What the program printed is forwarded to the judge's
    ``sys.stdout`` (a test may capture it), at most ``cap`` bytes in all.

    It also keeps what the program's process has been given (every call's
    top-level arguments) to find the calls that may have answered with an
    earlier call's argument (:meth:`suspects`).
    """

    def __init__(self, requests, answers, outputs, cap):
        import codecs

        self.requests, self.answers, self.cap = requests, answers, cap
        self.outputs = {fd: (name, codecs.getincrementaldecoder("utf-8")("replace")) for fd, name in outputs.items()}
        os.set_blocking(answers, False)
        self.poller = select.poll()
        self.poller.register(answers, select.POLLIN)
        for fd in outputs:
            os.set_blocking(fd, False)
            self.poller.register(fd, select.POLLIN)
        self.buffer, self.printed, self.count, self.referenced = bytearray(), 0, 0, 0
        self.proxies = {}
        self.roots = {}  # handle -> the program's name it was bound to
        self.given = set()  # every earlier call's top-level arguments, as keys (plain.key: equal by ==)
        self.made_from = {}  # key of an earlier call's result (any: guessable, a proxy) -> the keys of its arguments
        self.found = []  # suspect calls: their literal steps ([name, args text, kwargs text], ...), result text
        self.origin = {}  # handle -> [name, args, kwargs] of the name's call that made it, or (handle, attribute)

    # the wire

    def exchange(self, body):
        self.count += 1
        body["i"] = self.count
        try:
            message(self.requests, body)
        except OSError:
            raise ProgramFailed("the program's process is gone") from None
        answer = self.receive()
        if answer.get("i") != self.count:
            raise ProgramFailed("an answer out of turn")
        return answer

    def receive(self):
        while True:
            if len(self.buffer) >= 4:
                size = int.from_bytes(self.buffer[:4], "big")
                if size > MAX_MESSAGE:
                    raise ProgramFailed("an answer too large")
                if len(self.buffer) >= 4 + size:  # what the program printed before it answered is forwarded: it
                    body = bytes(self.buffer[4:4 + size])  # was in its pipe when the poll that saw the answer ran
                    del self.buffer[:4 + size]
                    try:
                        answer = json.loads(body)
                    except (ValueError, RecursionError):
                        raise ProgramFailed("an answer that is not JSON") from None
                    if type(answer) is not dict:
                        raise ProgramFailed("an answer that is not an object")
                    return answer
            for fd, _ in self.poller.poll():
                if fd in self.outputs:
                    self.forward(fd)
                    continue
                try:
                    chunk = os.read(self.answers, CHUNK)
                except BlockingIOError:
                    continue
                if not chunk:
                    raise ProgramFailed("the program's process ended")
                self.buffer += chunk

    def forward(self, fd):
        """What the program wrote on its stdout or stderr, to the judge's ``sys.stdout`` or ``sys.stderr`` as they
        are now (a test's ``redirect_stdout``/``redirect_stderr`` captures it)."""
        name, text = self.outputs[fd]
        while True:
            try:
                chunk = os.read(fd, CHUNK)
            except BlockingIOError:
                return
            if not chunk:
                self.poller.unregister(fd)
                del self.outputs[fd]
                return
            self.printed += len(chunk)
            if self.printed > self.cap:
                raise ProgramFailed("the program printed more than max_output")
            getattr(sys, name).write(text.decode(chunk))

    # values both ways

    def ref(self, value):
        if isinstance(value, Proxy):
            self.referenced += 1
            return value._grpo_ref
        return None  # anything else of the judge's that is not plain: NotPlain, the call fails

    def deref(self, handle):
        proxy = self.proxies.get(handle)
        if proxy is None:
            # a class of its own per object: type(a) is type(b) never holds for two of the program's objects
            # (one proxy class for all made any two objects' types equal, whatever their classes)
            proxy = self.proxies[handle] = type("Proxy", (Proxy,), {"__slots__": ()})(handle)
        return proxy

    def value(self, answer):
        if "e" in answer:
            raise self.error(answer)
        if "v" not in answer:
            raise ProgramFailed("an answer without a value")
        try:
            return plain.untag(answer["v"], self.deref)
        except (ValueError, RecursionError):
            raise ProgramFailed("an answer that is not plain data") from None

    @staticmethod
    def error(answer):
        """The program's exception, as the judge's own: a builtin exception of that name (its arguments when
        they were plain, else its text), else ProgramError.  Never one that steers the tests' own control flow
        (StopIteration would end their ``map`` or generator early, as if it had run to its end; GeneratorExit,
        SystemExit, KeyboardInterrupt are no Exception at all): those, too, are a ProgramError."""
        name, text = answer.get("e"), answer.get("s")
        text = text if type(text) is str else ""
        kind = getattr(builtins, name, None) if type(name) is str else None
        if (isinstance(kind, type) and issubclass(kind, Exception) and kind.__module__ == "builtins"
                and not issubclass(kind, CONTROL_FLOW)):
            try:
                args = plain.untag(answer["a"]) if "a" in answer else (text,)
                return kind(*(args if type(args) is tuple else (text,)))
            except Exception:
                try:
                    return kind(text)
                except Exception:
                    pass
        return ProgramError(f"{name}: {text}")

    # requests

    def names(self, wanted):
        """The program's names the tests use: wait for the program's module to run, then bind them.

        Only ``wanted`` (the plan's names, from the tests alone) is bound, and
        never a builtin or a dunder name: the names message comes from the
        program's process, which may write anything there (shadow ``range``,
        ``abs`` or ``__builtins__`` with its own functions).  A name it was not
        asked for fails the case (an honest server never sends one).
        """
        answer = self.receive()
        found = answer.get("names")
        if answer.get("i") != 0 or type(found) is not dict:
            raise ProgramFailed("no names from the program's module")
        allowed = {n for n in wanted if type(n) is str and not n.startswith("__") and n not in BUILTIN_NAMES}
        if not set(found) <= allowed:
            raise ProgramFailed("the program's module sent names the tests do not take from it")
        bound = {}
        for name, node in found.items():
            bound[name] = self.value({"v": node})
            if isinstance(bound[name], Proxy):
                self.roots[bound[name]._grpo_ref] = name
        return bound

    def key(self, value):
        """``value``'s :func:`plain.key` (a proxy by its handle), or None for what has none (a lambda of the
        tests'; the call fails anyway)."""
        try:
            return plain.key(value, lambda obj: obj._grpo_ref if isinstance(obj, Proxy) else id(obj))
        except (TypeError, RecursionError):
            return None

    def call(self, handle, args, kwargs):
        before = self.referenced
        a = [plain.tag(v, self.ref) for v in args]
        k = {key: plain.tag(v, self.ref) for key, v in kwargs.items()}
        given = {self.key(v) for v in (*args, *kwargs.values())}  # as sent: the judge's objects may change later
        answer = self.exchange({"o": "c", "t": handle, "a": a, "k": k})
        try:
            for where, node in answer.get("m") or ():  # first: a call that raised may have changed them before
                self.reflect(args, kwargs, where, node)
            result = self.value(answer)
            self.check(handle, a, k, given, result, self.referenced == before)
        finally:  # given, whatever came of the call (a call that raised saw its arguments all the same)
            self.given |= given
        return result

    def get(self, handle, name):
        value = self.value(self.exchange({"o": "g", "t": handle, "n": name}))
        if isinstance(value, Proxy):
            self.origin.setdefault(value._grpo_ref, (handle, name))
        return value

    def set(self, handle, name, value):
        node = plain.tag(value, self.ref)
        given = self.key(value)
        try:
            self.value(self.exchange({"o": "s", "t": handle, "n": name, "v": node}))
        finally:
            self.given.add(given)

    def reflect(self, args, kwargs, where, node):
        """Put a mutable argument's state after the call (the program changed it in place) into the judge's own."""
        try:
            target = args[where] if type(where) is int else kwargs[where]
            after = plain.untag(node, self.deref)
        except (IndexError, KeyError, TypeError, ValueError, RecursionError):
            raise ProgramFailed("a changed argument that was not given") from None
        if type(target) is not type(after) or type(target) not in MUTABLE:
            raise ProgramFailed("a changed argument of another type")
        if type(target) in (list, bytearray):
            target[:] = after
        elif type(target) is collections.deque:
            target.clear()
            target.extend(after)
        else:  # a dict, set, OrderedDict or defaultdict; a Counter's update adds to the nothing that clear leaves
            target.clear()
            target.update(after)

    # the theft of an earlier call's argument

    def check(self, handle, a, k, given, result, plain_arguments):
        """Whether a call may have answered with an earlier call's argument, which its process had seen.

        Values compare as the tests' ``==`` would (:func:`plain.key`: ``5``
        and ``5.0``, a set and a frozenset are one).  Suspect: a call of one
        of the program's names whose result (plain, not :func:`guessable`)
        equals a top-level argument of an earlier call; or a method of an
        object a name's call made (``Codec().decode``) whose result equals
        an earlier argument *and* is a round trip: one of its arguments is the
        result of an earlier call (guessable or an object of the program's
        too: an ``encode`` returning ``''`` or a token object) that was given
        that very value (``c.decode(c.encode(s)) == s``; an object that merely
        keeps what it was given, a stack or a cache, is none).  A suspect is
        noted as literal steps to run again apart (the name's call, or the
        object's making and the method's call); one that cannot be (an object
        of the program's among its arguments, an object made any other way)
        fails the case.  So does an object round trip: a call answering with
        the very object of the judge's that an earlier call was given and
        turned into this call's argument (``deserialize(serialize(root)) is
        root``), which no rerun could tell from a copy.
        """
        if handle in self.roots and isinstance(result, Proxy) and plain_arguments:
            self.origin.setdefault(result._grpo_ref, [self.roots[handle], a, k])  # an object this call made
        made = self.key(result)
        round_trip = any(made in self.made_from.get(g, ()) for g in given if g != made)
        self.made_from.setdefault(made, set()).update(given)
        if isinstance(result, Proxy):
            if round_trip and made in self.given:
                raise ProgramFailed("a call answered with the very object an earlier call was given, from what "
                                    "that call returned")
            return
        try:
            text = plain.encode(result)
        except plain.NotPlain:
            return  # holds an object of the program's: no argument of the judge's is one
        if guessable(result) or made not in self.given or (handle not in self.roots and not round_trip):
            return  # a method: only a round trip is suspect
        calls = [[self.roots[handle], a, k]] if handle in self.roots else None
        if type(origin := self.origin.get(handle)) is tuple and type(self.origin.get(origin[0])) is list:
            calls = [self.origin[origin[0]], [origin[1], a, k]]  # a method read off an object a name's call made
        if calls is None or not plain_arguments:
            raise ProgramFailed("a call returned an earlier call's argument and cannot be run again without the "
                                "others (it was given, or called on, an object of the program's)")
        steps = [[name, json.dumps({"t": args}, separators=(",", ":")),
                  json.dumps({"d": [[key, node] for key, node in kwargs.items()]}, separators=(",", ":"))]
                 for name, args, kwargs in calls]
        self.found.append([steps, text])


def referee(req):
    """The judge process's work: the case's tests, run against proxies of the program's names.

    Returns the exit status: 0 when the tests ran to their end (then the
    token, the tests' first bytes, and the suspects went to the collector on
    fd 3), 1 when they did not.
    """
    global LINK
    data = read_all(4)
    token, tests = data[:TOKEN_BYTES], data[TOKEN_BYTES:].decode("utf-8", "replace")
    os.close(4)
    LINK = Link(5, 6, {7: "stdout", 8: "stderr"}, int(req["max_output"]))
    module = types.ModuleType("__main__")  # the tests run as a script would: ``if __name__ == "__main__":`` runs,
    sys.modules["__main__"] = module  # and unittest.main() finds their TestCase classes here
    sys.argv[:] = ["tests.py"]
    namespace = module.__dict__
    namespace.update({"__builtins__": builtins, "__file__": "tests.py"})
    wanted = tuple(req.get("names", ()))
    modules = stdlib_modules(tests, wanted)
    namespace.update(LINK.names(wanted))
    namespace.update(modules)  # the judge's own, over whatever the program has of that name
    try:
        exec(compile(tests, "tests.py", "exec"), namespace)
    except SystemExit as exc:  # the tests' own exit (unittest.main()): status 0 is their end, as for a script
        if exc.code not in (None, 0, False):  # (the program's SystemExit arrives as a ProgramError, never this)
            raise
    sys.stdout.flush()
    os.write(3, token + json.dumps({"suspects": LINK.found}).encode())
    return 0


def stdlib_modules(tests, wanted):
    """The names among ``wanted`` that are the judge's own standard modules, imported: ``math.isclose(...)`` in
    tests that never import math (they ran after the program, in its namespace, where the program's ``import
    math`` was).  Decided from the tests and the judge's stdlib alone, never from the program: a name of a
    standard module that the tests use only as ``name.attribute``, each attribute one the module has.  A program
    that defines such a name as something else and tests that use it so (``calendar.book(1, 2)`` on the
    program's object) keep the program's (the module has no ``book``)."""
    candidates = [name for name in wanted if name in sys.stdlib_module_names]
    if not candidates:
        return {}
    import ast
    import importlib

    attributes = {name: set() for name in candidates}
    for node in ast.walk(ast.parse(tests)):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Name) and child.id in attributes:
                if isinstance(node, ast.Attribute) and node.value is child and attributes[child.id] is not None:
                    attributes[child.id].add(node.attr)
                else:
                    attributes[child.id] = None  # used as itself somewhere: the program's
    modules = {}
    for name, used in attributes.items():
        if not used:
            continue
        try:
            module = importlib.import_module(name)
        except BaseException:
            continue
        if all(hasattr(module, attribute) for attribute in used):
            modules[name] = module
    return modules


def judge_process(req, mode, drop_uid, workdir, fds):
    """Runs in the forked judge of a script case; never returns.  It never executes program code.

    Out of the program's reach: in ``root`` mode another uid (the
    sandbox's root, no capability), in ``user`` mode the same uid but not
    dumpable (its ``/proc`` files, memory and descriptors are closed to the
    program; ``ptrace``, ``process_vm_readv`` and ``pidfd_getfd`` fail under
    seccomp); its own interpreter (a fork of the server, which never ran a
    program), so a module the program patched is the program's copy only;
    a ``sys.path`` without relative entries, so a ``math.py`` the program
    wrote in the work folder is never imported here.  What the program can
    still do to it (kill it, stop it, lower its limits, in ``user`` mode)
    only ends it without a verdict: the case fails.
    """
    status = 1
    try:
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # no KeyboardInterrupt a program's kill() could raise in a test
        del os.environ["TMPDIR"]  # the programs' (main): the tests' temporary files never go to the program's folder
        place(fds)  # 0 /dev/null, 1 stdout and 2 stderr (the collector's), 3 the verdict, 4 tests, 5-8 the pipes
        if mode != "none":
            set_caps(())
        elif drop_uid:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
        libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
        set_limits(req)  # the row's memory and CPU bounds hold here too: one crafted answer cannot take it past them
        os.chdir(os.path.dirname(workdir))  # not the program's folder (not its to enter, as root without capabilities)
        sys.path[:] = [p for p in sys.path if os.path.isabs(p) and not p.startswith(workdir)]
        status = referee(req)  # sys.stdout and sys.stderr are the server's, on fds 1 and 2: the collector's now
    except BaseException as exc:
        try:
            import traceback

            tb = exc.__traceback__
            while tb is not None and tb.tb_frame.f_code.co_filename != "tests.py":
                tb = tb.tb_next  # from the tests' frame on, when the tests raised
            traceback.print_exception(type(exc), exc, tb or exc.__traceback__)
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:
            pass
    os._exit(status)


# ---------------------------------------------------------------- the collector (and judge)


def judge(plan, results, groups):
    """Decide each case from plain result values; a case using a failed or missing call fails.

    Also returns the *suspects*: calls of a passed case whose result equals
    an argument of another call that ran in the same program (an encode
    returning what its decode was given): such a call may have passed by
    reading that argument, not by computing, so the host runs it again alone.
    """
    import builtins

    values, ok = [], []
    for line in results:
        try:
            values.append(plain.decode(line))
            ok.append(True)
        except ValueError:  # "!" (the call raised or returned no plain data) or garbage
            values.append(None)
            ok.append(False)
    expected = [plain.decode(text) for text in plan.get("expect", ())]  # a script's rerun: the first run's results
    namespace = {"__name__": "__main__", "__builtins__": builtins, "__grpo_r": values, "__grpo_e": expected}
    try:
        exec(compile(plan["setup"], "tests.py", "exec"), namespace)
    except BaseException:
        return [False] * len(plan["cases"]), []
    verdicts = []
    for exprs, used in plan["cases"]:
        passed = all(i < len(ok) and ok[i] for i in used)
        try:
            passed = passed and all(eval(compile(e, "tests.py", "eval"), namespace) for e in exprs)
        except BaseException:
            passed = False
        verdicts.append(passed is True)
    return verdicts, suspects(plan, results, values, ok, verdicts, groups)


def conflicts(plan, answers, found):
    """Per suspect, the calls whose arguments hold its result: it must not share a process with them on rerun."""
    out = {}
    for i in found:
        value = plain.key(plain.decode(answers[i]))
        out[str(i)] = [j for j, steps in enumerate(plan["args"]) if j != i and any(
            plain.key(a) == value for args, kwargs in steps
            for a in (*plain.decode(args), *plain.decode(kwargs).values()))]
    return out


def guessable(value):
    """A value a program could as well guess as steal: None, a bool, an integer from -10 to 10, an empty value."""
    if value is None or type(value) is bool:
        return True
    if type(value) in (int, float):
        return -10 <= value <= 10 and value == int(value)
    return type(value) in (str, bytes, list, tuple, set, frozenset, dict) and len(value) == 0


def suspects(plan, results, values, ok, verdicts, groups):
    """The calls of passed cases whose result equals, as the tests' ``==`` would have it (:func:`plain.key`: ``5``
    and ``5.0``, a set and a frozenset), another same-program call's argument, unless it is :func:`guessable`."""
    relevant = {i for (_, used), passed in zip(plan["cases"], verdicts, strict=False) if passed for i in used}
    found = []
    for group in groups:
        if len(group) < 2:
            continue
        given = {}  # argument key -> how many of the group's calls were given it
        mine = {}
        for j in group:
            mine[j] = {plain.key(a) for args, kwargs in plan["args"][j]
                       for a in (*plain.decode(args), *plain.decode(kwargs).values())}
            for k in mine[j]:
                given[k] = given.get(k, 0) + 1
        for i in group:
            if i not in relevant or not ok[i] or guessable(values[i]):
                continue
            try:
                k = plain.key(values[i])
                if given.get(k, 0) > (k in mine[i]):  # some other call of the group was given it
                    found.append(i)
            except Exception:  # plain values key without raising; this is only a guard
                found.append(i)
    return found


class ResultLines:
    """The result channel of a literal-call program, checked line by line as it arrives.

    The first line must be ``=`` (the module ran), each later one a plain
    value or ``!``, and no more lines than calls.  Only such lines count as
    answered calls (each earns the next call a full timeout); anything else
    (a thread of the program writing newlines, or answers beyond the calls)
    makes every case fail and ends the program at once.
    """

    def __init__(self, calls):
        self.calls, self.count, self.offset, self.bad, self.alerted = calls, 0, 0, False, False

    def add(self, buffer):
        """Check the complete lines that arrived since the last look; True when any did."""
        end = buffer.rfind(b"\n") + 1
        if end <= self.offset:
            return False
        for line in bytes(buffer[self.offset:end - 1]).split(b"\n"):
            if self.count == 0:
                self.bad = self.bad or line != b"="
            elif line != b"!":
                try:
                    plain.decode(line.decode("utf-8"))
                except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
                    self.bad = True
            self.count += 1
        self.offset = end
        return True


def collect(info, pipes, plan_r, control, ticks, alerts):
    """Read one program's output (capped), tick per answered call, then build and send the host's reply."""
    out_r, err_r, res_r = pipes
    plan = None
    if info["kind"] == "calls":
        size = int.from_bytes(read_exact(plan_r, 4), "big")
        plan = json.loads(read_exact(plan_r, size))
    cap, kind = int(info["cap"]), info["kind"]
    buffers = {out_r: bytearray(), err_r: bytearray(), res_r: bytearray()}
    total, limited = 0, False
    sizes = [len(group) for group in info.get("members", [[]])]  # calls: how many each group's program answers
    lines, done = ResultLines(sizes[0]), []  # done: each finished group's result bytes and line check
    poller = select.poll()
    for fd in (out_r, err_r, res_r, control):
        poller.register(fd, select.POLLIN)
    finished = None
    while finished is None:
        for fd, _ in poller.poll():
            if fd == control:
                message = receive(control)
                if "boundary" not in message:
                    finished = message
                    continue
                # one group's program and everything it started are dead: all it wrote is in the pipe
                while True:
                    try:
                        data = os.read(res_r, CHUNK)
                    except BlockingIOError:
                        break
                    total += len(data)
                    if total <= cap and not limited:
                        buffers[res_r] += data
                lines.add(buffers[res_r])
                done.append((bytes(buffers[res_r]), lines))
                buffers[res_r] = bytearray()
                lines = ResultLines(sizes[min(len(done), len(sizes) - 1)])
                os.write(alerts, b"A%d;" % message["boundary"])  # the next group's program may start
                continue
            while True:
                try:
                    data = os.read(fd, CHUNK)
                except BlockingIOError:
                    break
                total += len(data) if fd != res_r or kind != "script" else 0  # a script's verdict is the judge's
                if total > cap:
                    os.write(alerts, b"L")  # the server kills the program; the rest is drained at its end
                    limited = True
                    for reader in (out_r, err_r, res_r):
                        poller.unregister(reader)
                    break
                buffers[fd] += data
                if fd == res_r and kind == "calls" and b"\n" in data and lines.add(buffers[res_r]):
                    os.write(ticks, b"%.6f\n" % time.monotonic())  # read by the server only when a deadline is up
                    if (lines.bad or lines.count > lines.calls + 1) and not lines.alerted:
                        lines.alerted = True  # a broken result channel: the server ends this group's program now
                        os.write(alerts, b"D%d;" % len(done))
                if len(data) < CHUNK:
                    break
    for fd in (out_r, err_r, res_r):  # every writer is dead now: the rest, all of it (none may reach the next)
        while True:
            try:
                data = os.read(fd, CHUNK)
            except BlockingIOError:
                break
            if fd == res_r and kind == "script":  # the judge's verdict (it runs no program code): not output
                buffers[fd] += data
                continue
            if not limited:
                buffers[fd] += data[: max(0, cap - total)]
            total += len(data)
    status = finished["status"]
    if status == "exited" and total > cap:
        status = "output_limit"
    reply = {
        "status": status,
        "exit_code": finished["exit_code"],
        "stdout": bytes(buffers[out_r][:cap]).decode("utf-8", "replace"),
        "stderr": bytes(buffers[err_r][-4096:]).decode("utf-8", "replace"),
        "seconds": finished["seconds"],
        "clean": finished["clean"],
        "backstop": finished.get("backstop") is True,
        "cpu": finished.get("cpu", 0.0),
    }
    results = bytes(buffers[res_r])
    if kind == "script":
        reply["passed_asserts"] = False
        nonce = bytes.fromhex(finished.get("nonce") or "")
        if nonce and results[:len(nonce)] == nonce and finished["exit_code"] == 0:
            try:
                verdict = json.loads(results[len(nonce):])
                reply["rerun"], reply["passed_asserts"] = verdict["suspects"], True
            except (ValueError, KeyError, TypeError):
                pass
    elif kind == "calls":
        lines.add(buffers[res_r])
        done.append((results, lines))
        answers = ["!"] * len(plan["args"])
        for index, line in plan.get("known", {}).items():  # a rerun: the first run's answers of the calls not rerun
            answers[int(index)] = line
        for (data, checked), group in zip(done, info["members"], strict=False):
            found = data.decode("utf-8", "replace").split("\n")[:-1][: len(group) + 1]  # whole lines
            if found and found[0] == "=" and not checked.bad:
                for index, line in zip(group, found[1:], strict=False):
                    answers[index] = line
        reply["cases"], reply["suspects"] = judge(plan, answers, info["members"])
        if reply["suspects"]:
            reply["answers"] = answers  # for the host's rerun of the suspects alone, which reuses the others
            reply["conflicts"] = conflicts(plan, answers, reply["suspects"])
    return reply


def collector_main(pipes, plan_r, control, ticks, alerts, outbox):
    """The collector's loop: one request's description from the server, then the program's output."""
    for fd in pipes:
        os.set_blocking(fd, False)
    while True:
        try:
            info = receive(control)
        except EOFError:
            os._exit(0)
        send(outbox, collect(info, pipes, plan_r, control, ticks, alerts))


class Collector:
    """The process that reads what programs write and judges literal-call tests; it never runs program code.

    Programs are forks of the server, so the server must never hold anything
    a later program could use: not an earlier program's output (a sibling's
    right answer), its call results, or any tests.  The collector holds them
    instead, in memory no program can read (another process, non-dumpable,
    no ptrace), reads the programs' stdout, stderr and result pipes (shared by
    every program: the server hands each its write ends; a script case's
    program writes its stdout to its judge, which forwards it), takes a
    script judge's verdict (token and suspects) from the result pipe,
    enforces the output cap, and writes each reply to the host itself.
    """

    def __init__(self, drop_uid, sandboxed, outbox):
        self.drop_uid, self.sandboxed, self.outbox = drop_uid, sandboxed, outbox
        self.pid = None
        self.spawn()

    def spawn(self):
        global COLLECTOR_PID
        out_r, self.out_w = os.pipe()
        err_r, self.err_w = os.pipe()
        res_r, self.res_w = os.pipe()
        plan_r, self.plan_w = os.pipe()
        control_r, self.control = os.pipe()
        self.ticks, ticks_w = os.pipe()
        self.alerts, alerts_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                place([None, None, 2, out_r, err_r, res_r, plan_r, control_r, ticks_w, alerts_w, self.outbox])
                signal.signal(signal.SIGPIPE, signal.SIG_DFL)
                if self.sandboxed:
                    set_caps(())  # root mode: still uid 0 of the sandbox (programs cannot signal it), no capability
                elif self.drop_uid:
                    os.setgroups([])
                    os.setgid(NOBODY)
                    os.setuid(NOBODY)
                collector_main((3, 4, 5), 6, 7, 8, 9, 10)
            finally:
                os._exit(70)
        for fd in (out_r, err_r, res_r, plan_r, control_r, ticks_w, alerts_w):
            os.close(fd)
        os.set_blocking(self.ticks, False)
        os.set_blocking(self.alerts, False)
        self.pid = COLLECTOR_PID = pid

    def close(self):
        for fd in (self.out_w, self.err_w, self.res_w, self.plan_w, self.control, self.ticks, self.alerts):
            os.close(fd)
        with contextlib.suppress(OSError):
            os.kill(self.pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)

    def give_plan(self, inbox, size):
        """Splice the tests (a JSON plan from the host, ``size`` bytes) from the request pipe to the collector."""
        try:
            os.write(self.plan_w, size.to_bytes(4, "big"))
            target = self.plan_w
        except OSError:
            target = None
        forward(inbox, target, size)

    def boundary(self, group):
        """Tell the collector that ``group``'s program is over, and wait until it has taken all that it wrote.

        Only then may the next group's program start: its results must not be
        read as the last group's.  False when no answer comes.
        """
        try:
            send(self.control, {"boundary": group})
        except OSError:
            return False
        wanted, seen = b"A%d;" % group, b""
        poller = select.poll()
        poller.register(self.alerts, select.POLLIN)
        deadline = time.monotonic() + 5.0
        while wanted not in seen:
            left = deadline - time.monotonic()
            if left <= 0 or not poller.poll(left * 1000):
                return False
            with contextlib.suppress(BlockingIOError):
                seen += os.read(self.alerts, CHUNK)
        return True

    def finish(self, outcome):
        """Tell the collector the program's end: it drains the pipes, judges and replies to the host itself.

        Not waited for: a collector that died (a program of the same uid may
        kill it) or hangs sends no reply, and the host, seeing none in time,
        scores the program as failed and rebuilds the sandbox.
        """
        with contextlib.suppress(OSError):
            send(self.control, outcome)

    def last_tick(self):
        """When the collector last saw a call answered (monotonic seconds), or None since the last look."""
        data = b""
        try:
            while chunk := os.read(self.ticks, CHUNK):
                data += chunk
        except BlockingIOError:
            pass
        return float(data.split()[-1]) if data.strip() else None

    def stale_events(self):
        """Drop the last request's ticks and alerts before the next one starts."""
        self.last_tick()
        try:
            while os.read(self.alerts, CHUNK):
                pass
        except BlockingIOError:
            pass


# ---------------------------------------------------------------- the program's clocks


POLL = 0.5  # most seconds between two looks at a running program's clocks
TICKS = os.sysconf("SC_CLK_TCK")  # /proc's CPU times are in these
CPUS = 1  # the most CPUs a program's processes can use at once (main: the host's count and this one's, the larger)


class ProgramClock:
    """The clocks of one program's per-test timeout: CPU seconds of all its processes, and a wall-clock backstop.

    CPU: what every process of the sandbox but the server, the collector
    and init has used (``/proc/<pid>/stat``'s utime, stime and the reaped
    children's cutime, cstime), plus what the server and init gained by
    reaping the program's orphans, since the start.  Backstop: wall seconds
    less the time the program's main processes (the program, and a script
    case's judge) spent runnable but waiting for a CPU
    (``/proc/<pid>/schedstat``), the least of them: a program that works,
    however starved, is not stopped by it; one that sleeps or blocks is.
    This is :mod:`grpo_host.scoring.clocks`'s rule, restated here because this
    script runs inside the sandbox with the standard library only; the
    contest jail's bounds read the same :func:`primitives.run_delay`.

    Reading /proc costs every program some hundred microseconds, and most
    programs end in milliseconds, so the clock reads nothing in its first
    :data:`POLL` seconds, nor until something *can* be over (:meth:`look`):
    the program's processes cannot use more CPU than the wall time since the
    start on every CPU of the machine, and neither the backstop's clock nor
    the budget's runs faster than the wall.  (Before, the first look came at
    the start and the next one :data:`POLL` later: the looks a
    :meth:`restart` picks from are as far apart as they were.)
    The start needs no reading either: it is taken before the program's fork,
    when only the server, the collector and init exist (:func:`kill_all` left
    no other), so the CPU then is what the server and init had reaped
    (:func:`reaped_cpu`), and a process forked after it has waited for no CPU yet.
    """

    def __init__(self, mode, start, cpu0):
        self.mode, self.mains = mode, []
        self.start, self.cpu0 = start, cpu0
        self.first = cpu0
        self.samples = [(start, cpu0, None)]  # (when, CPU, CPU waits) at each look since the last restart
        self.waited0 = None  # None: nothing waited yet (the start, before the mains were forked)

    def watch(self, mains):
        """The program's main processes, forked after the start: the backstop's clock counts their CPU waits."""
        self.mains = mains

    def used(self, settled=False):
        """CPU seconds the program's processes used since it started (reaped ones included); ``settled``: every
        one of them is dead and reaped (:func:`alone`), so :func:`reaped_cpu` holds it all."""
        return (reaped_cpu(self.mode) if settled else self.cpu_total()) - self.first

    def restart(self, since):
        """Count afresh from ``since`` (a call answered then): from the last look at or before it."""
        earlier = [sample for sample in self.samples if sample[0] <= since]
        self.start, self.cpu0, self.waited0 = earlier[-1] if earlier else (time.monotonic(), self.cpu_total(),
                                                                           self.waited())
        self.samples = [(self.start, self.cpu0, self.waited0)]

    def cpu_total(self):
        me = os.getpid()
        pids = descendants(me) if self.mode == "none" else [
            int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in (me, COLLECTOR_PID)]
        ticks = 0
        for pid in [*pids, me]:
            try:
                fields = read_proc(f"/proc/{pid}/stat").rsplit(b")", 1)[1].split()
            except OSError:
                continue
            own = pid not in (me, 1)  # the server and init: only what they reaped of the program's
            ticks += (int(fields[11]) + int(fields[12])) * own + int(fields[13]) + int(fields[14])
        return ticks / TICKS

    def waited(self):
        return [run_delay(pid) for pid in self.mains]  # None: gone, its clock no longer says anything

    def cpu(self):
        return self.cpu_total() - self.cpu0

    def awake(self):
        wall = time.monotonic() - self.start
        waited0 = self.waited0 if self.waited0 is not None else [0.0] * len(self.mains)
        waits = [now - then for now, then in zip(self.waited(), waited0, strict=True) if None not in (now, then)]
        return min((wall - waited for waited in waits), default=wall)

    def quiet(self, timeout, backstop, budget):
        """Wall seconds from now during which nothing can be over (``budget``: what is left of the run's), at most
        :data:`POLL` from the start, so the looks that :meth:`restart` picks from stay as close together as they
        were; 0 or less when something may be: the CPU used since the start is at most the wall time on every
        CPU, and :meth:`awake` at most the wall time."""
        return min(timeout / CPUS, backstop, budget, POLL) - (time.monotonic() - self.start)

    def look(self, timeout, backstop, budget):
        """``"budget"`` once :meth:`awake` reaches ``budget`` (what is left of the run's), else :meth:`over`; None
        without reading anything while :meth:`quiet`."""
        if self.quiet(timeout, backstop, budget) > 0:
            return None
        return "budget" if self.awake() >= budget else self.over(timeout, backstop)

    def over(self, timeout, backstop):
        """``"timeout"`` once the CPU used reaches ``timeout``, ``"backstop"`` once :meth:`awake` reaches
        ``backstop``, else None."""
        self.samples.append((time.monotonic(), self.cpu_total(), self.waited()))
        if self.cpu() >= timeout:
            return "timeout"
        if self.awake() >= backstop:
            return "backstop"
        return None

    def next_look(self, timeout, backstop, budget):
        """Seconds until the next look: the end of a quiet spell, else the least left of any clock (or POLL)."""
        if (quiet := self.quiet(timeout, backstop, budget)) > 0:
            return max(0.001, min(quiet, POLL))
        return max(0.001, min(budget - self.awake(), timeout - self.cpu(), backstop - self.awake(), POLL))


def reaped_cpu(mode):
    """CPU seconds of the processes the server (``times``) and, in a sandbox, init have reaped: all of
    :meth:`ProgramClock.cpu_total` while no process but the server, the collector and init exists."""
    times = os.times()
    total = times.children_user + times.children_system
    if mode != "none":
        fields = read_proc("/proc/1/stat").rsplit(b")", 1)[1].split()
        total += (int(fields[13]) + int(fields[14])) / TICKS
    return total


# ---------------------------------------------------------------- the program's leftovers


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
                kids = [int(k) for k in read_proc(f"/proc/{pid}/task/{tid}/children").split()]
            except OSError:
                continue
            out += kids
            todo += kids
    return out


def others(mode):
    """Processes other than the server, the collector (and the namespace's init) that are still alive."""
    me = os.getpid()
    if mode == "none":
        pids = [p for p in descendants(me) if p != COLLECTOR_PID]
    else:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, me, COLLECTOR_PID)]
    alive = []
    for pid in pids:
        try:
            stat = read_proc(f"/proc/{pid}/stat")
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


def alone(mode):
    """Fast check that nothing but the server, its collector (and init) is left, from two ``children`` lists.

    In a sandbox every process descends from init (pid 1): when init's only
    child is the server and the server's only child the collector, nothing else exists.
    """
    me = os.getpid()
    try:
        if read_proc(f"/proc/{me}/task/{me}/children").split() != [b"%d" % COLLECTOR_PID]:
            return False
        if mode == "none":
            return True
        return read_proc("/proc/1/task/1/children").split() == [b"%d" % me]
    except OSError:
        return False


def kill_all(mode):
    """Kill everything the program started; True when nothing is left within a second.

    Passes repeat until none is found: a process forked during one pass is
    found by the next, and the process bounds keep the count finite.
    """
    if alone(mode):
        return True
    deadline = time.monotonic() + 1.0
    while True:
        for pid in others(mode):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        reap()
        if not others(mode):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.002)


def empty(directory):
    with os.scandir(directory) as entries:
        doomed = [(entry.path, entry.is_dir(follow_symlinks=False)) for entry in entries]
    for path, is_dir in doomed:
        remove_tree(path) if is_dir else os.unlink(path)


def marks(workdir):
    """Change times of the writable directories: a change means the program left something to delete."""
    return tuple(os.stat(d).st_ctime_ns for d in (workdir, SHM) if d)


def reset(path, state):
    """Put a writable directory back as it was made: its mode, no extended attributes, its access and change times.

    A program may ``chmod`` the folder shut (every later program would fail to
    write), or leave a value in its xattrs or its times for the next program to
    read.  Only the owner may do this, so it runs as the owner.  Its inode
    change time cannot be set back: it says when the folder was last reset
    (``docs/sandbox.md``, what remains).
    """
    mode, atime, mtime = state
    os.chmod(path, mode)
    for name in os.listxattr(path):
        os.removexattr(path, name)
    os.utime(path, ns=(atime, mtime))


def as_made(path, state):
    found = os.stat(path)
    return ((found.st_mode & 0o7777, found.st_atime_ns, found.st_mtime_ns) == state
            and not os.listxattr(path))


def cleanup(workdir, drop_uid, made):
    """Empty and reset the work dir and /dev/shm (``made``: how each was made); True when both are as made.

    The work dir belongs to the programs' uid when they run as another, so
    that part runs in a fork as that uid; /dev/shm (root's, sticky) and
    everything in ``user`` mode belong to the server.
    """
    def work():
        empty(workdir)
        reset(workdir, made[workdir])

    ok = True
    if not drop_uid:
        work()
    else:
        pid = os.fork()
        if pid == 0:
            try:
                os.setgroups([])
                os.setgid(NOBODY)
                os.setuid(NOBODY)
                work()
                if SHM:
                    empty(SHM)
            except BaseException:
                os._exit(1)
            os._exit(0)
        ok = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    if SHM:
        if not drop_uid:
            empty(SHM)
        reset(SHM, made[SHM])
    return ok and all(as_made(path, state) for path, state in made.items())


def dir_states(workdir):
    """How the writable directories were made (mode, access and modification times), to reset them to."""
    return {path: (st.st_mode & 0o7777, st.st_atime_ns, st.st_mtime_ns)
            for path in (workdir, SHM) if path for st in (os.stat(path),)}


LIMITS = tuple(getattr(resource, name) for name in dir(resource) if name.startswith("RLIMIT_"))
IOPRIO_GET = {"x86_64": 252, "aarch64": 31}.get(os.uname().machine)
SCHED_GETATTR = {"x86_64": 315, "aarch64": 275}.get(os.uname().machine)
SCHED_ATTR_SIZE = 56  # struct sched_attr with its utilisation clamps (SCHED_ATTR_SIZE_VER1)
PROC_ATTRIBUTES = ("oom_score_adj", "coredump_filter", "autogroup")


def proc_attribute(pid, name):
    """A /proc attribute a process of the same uid may write (None where this kernel has none or hides it)."""
    try:
        return read_proc(f"/proc/{pid}/{name}")
    except OSError:
        return None


def sched_attributes(pid):
    """``sched_getattr``: policy, flags, nice, priority, deadline parameters and utilisation clamps together, which
    ``sched_setattr`` sets where ``sched_setscheduler`` cannot look (a lowered ``util_max`` is inherited too)."""
    if SCHED_GETATTR is None:
        return None
    import ctypes  # already loaded by primitives: no library is mapped for it

    buffer = ctypes.create_string_buffer(SCHED_ATTR_SIZE)
    if libc.syscall(SCHED_GETATTR, pid, buffer, SCHED_ATTR_SIZE, 0) != 0:
        return None
    return buffer.raw


def process_state(pid):
    """What a process of the same uid could change in the server or the collector and every later program would
    inherit, suffer or read back: rlimits (``prlimit``), nice, scheduling policy, priority and every other
    scheduling attribute (``sched_getattr``), CPU affinity, I/O priority, and the /proc attributes its owner may
    write (OOM score adjustment, core dump filter, its autogroup's nice)."""
    state = [resource.prlimit(pid, which) for which in LIMITS]
    state += [os.getpriority(os.PRIO_PROCESS, pid), os.sched_getscheduler(pid), os.sched_getparam(pid).sched_priority,
              sorted(os.sched_getaffinity(pid)), sched_attributes(pid)]
    if IOPRIO_GET is not None:
        state.append(libc.syscall(IOPRIO_GET, 1, pid))  # IOPRIO_WHO_PROCESS
    return state + [proc_attribute(pid, name) for name in PROC_ATTRIBUTES]


class Baseline:
    """The sandbox as it was before any program: checked after every program, which must leave it so.

    Whatever a program changed that the server can reset (its work folder and
    /dev/shm: contents, mode, xattrs, times) is reset; whatever it cannot
    (a raised nice, a lowered rlimit, SCHED_IDLE or a clamp of the server or
    the collector, its OOM score or core dump filter, which programs of the
    same uid may set in ``user`` mode; sockets left in flight) makes the run unclean, so the host builds a new
    sandbox before the next program.
    """

    def __init__(self, mode, drop_uid, workdir, collector_pid):
        self.mode, self.drop_uid, self.workdir = mode, drop_uid, workdir
        self.dirs = dir_states(workdir)
        self.sockets = unix_sockets() if mode != "none" else None
        # programs of another uid (root mode, none mode dropping to 65534) cannot touch these processes
        self.pids = () if drop_uid else (os.getpid(), collector_pid)
        self.processes = [process_state(pid) for pid in self.pids]

    def restore(self, changed):
        """Reset what can be reset (``changed``: the directories' change times moved); True when all holds."""
        clean = cleanup(self.workdir, self.drop_uid, self.dirs) if changed else True
        if self.sockets is not None and unix_sockets() != self.sockets:
            clean = False
        try:
            return clean and [process_state(pid) for pid in self.pids] == self.processes
        except OSError:  # the collector is gone: no reply comes, and the host rebuilds
            return False


# ---------------------------------------------------------------- one request


def run(req, inbox, collector, mode, drop_uid, workdir, baseline):
    """One request: one program, or for literal calls one program per group of calls, one after another, each
    seeing only its own group's arguments (``docs/sandbox.md``); the collector reads them and replies.

    Between two groups' programs the sandbox is put back as it was (every
    process killed, folders emptied and reset, the baseline checked); after
    a timeout, an output limit or what cannot be put back, the remaining
    groups fail unrun.  The payload is the tests (literal calls), then per
    program its source and, for calls, its group's calls or, for scripts,
    the tests (for the judge of a script case).
    """
    kind = req["kind"]
    members = req.get("members") or [[]]
    collector.stale_events()
    with contextlib.suppress(OSError):  # a dead collector sends no reply: the host rebuilds the sandbox
        send(collector.control, {"kind": kind, "cap": req["max_output"], "members": members})
    if kind == "calls":
        collector.give_plan(inbox, req["tests_len"])
    segments = req.get("calls_lens") or [req.get("tests_len", 0)]
    budget = float(req["budget"])  # the whole request's, in the backstop's clock: spent as its programs run
    outcome = {"status": "exited", "exit_code": None, "seconds": 0.0, "clean": True, "cpu": 0.0}
    for group, segment in enumerate(segments):
        if outcome["status"] != "exited" or not outcome["clean"]:
            forward(inbox, None, req["code_len"] + segment)  # unrun: its payload is consumed all the same
            continue
        before = marks(workdir)
        status, exit_code, seconds, clean, nonce, backstop, spent, cpu = run_one(
            req, inbox, collector, mode, drop_uid, workdir, segment, group, budget)
        budget -= spent
        try:
            clean = baseline.restore(marks(workdir) != before) and clean
        except Exception:  # e.g. a tree too deep to remove: the host builds a new sandbox
            clean = False
        outcome = {"status": status or "exited", "exit_code": exit_code, "seconds": outcome["seconds"] + seconds,
                   "clean": clean, "nonce": nonce.hex() if nonce else None, "backstop": backstop,
                   "cpu": outcome.get("cpu", 0.0) + cpu}
        if group < len(segments) - 1 and not collector.boundary(group):
            outcome["clean"] = False  # the collector is gone or hangs: no reply comes, the host rebuilds
    collector.finish(outcome)


def start_script(req, inbox, collector, mode, drop_uid, workdir, segment):
    """A script case's two processes: the program's, then the judge's; returns (judge pid, program pid, token).

    Both are forks of the server.  The program gets its source, the pipe of
    requests and the pipe of answers, its stdout and stderr going to the
    judge (which forwards them to its own, so tests may capture either):
    never the tests, the token or the result channel.  The token is made after the program's fork, so no copy of it
    is in the program's memory; the judge gets it and the tests (spliced,
    never in the server's memory) on one pipe, and the collector's result
    channel.
    """
    code_r, code_w = os.pipe()
    requests_r, requests_w = os.pipe()
    answers_r, answers_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    devnull = os.open("/dev/null", os.O_RDONLY)
    program = os.fork()
    if program == 0:
        child(req, drop_uid, workdir, (devnull, out_w, err_w, answers_w, code_r, requests_r),
              0 if mode == "root" else 1)  # the judge has the program's uid unless the sandbox is root's
    nonce = os.urandom(TOKEN_BYTES)
    tests_r, tests_w = os.pipe()
    judge = os.fork()
    if judge == 0:
        judge_process(req, mode, drop_uid, workdir, (devnull, collector.out_w, collector.err_w, collector.res_w,
                                                     tests_r, requests_w, answers_r, out_r, err_r))
    for fd in (code_r, requests_r, requests_w, answers_r, answers_w, out_r, out_w, err_r, err_w, devnull, tests_r):
        os.close(fd)
    forward(inbox, code_w, req["code_len"])
    os.close(code_w)
    try:
        os.write(tests_w, nonce)
        sent = True
    except OSError:
        sent = False
    forward(inbox, tests_w if sent else None, segment)
    os.close(tests_w)
    return judge, program, nonce


def run_one(req, inbox, collector, mode, drop_uid, workdir, segment, group, budget):
    """One program (with, for a script case, its judge): fork, feed, bound it, kill what it left; returns
    (status, exit code, seconds, clean, token, backstop, spent, cpu): the exit code and the end are the judge's
    for a script case; ``backstop``: the timeout was the wall clock's (the backstop, or ``budget`` spent: both
    count wall seconds not spent waiting for a CPU, :class:`ProgramClock`); ``spent``: what it took of
    ``budget``; ``cpu``: the CPU seconds its processes used."""
    kind = req["kind"]
    stdin_data = (req.get("stdin") or "").encode() if kind == "io" else b""
    start = time.monotonic()
    clock = ProgramClock(mode, start, reaped_cpu(mode))  # before the fork: nothing of the program's has run
    program = nonce = stdin_w = None
    if kind == "script":
        pid, program, nonce = start_script(req, inbox, collector, mode, drop_uid, workdir, segment)
    else:
        stdin_r, stdin_w = os.pipe() if kind == "io" else (os.open("/dev/null", os.O_RDONLY), None)
        code_r, code_w = os.pipe()
        tests_r, tests_w = os.pipe() if kind == "calls" else (None, None)
        pid = os.fork()
        if pid == 0:
            results = collector.res_w if kind == "calls" else None
            child(req, drop_uid, workdir, (stdin_r, collector.out_w, collector.err_w, results, code_r, tests_r))
        for fd in (stdin_r, code_r, tests_r):
            if fd is not None:
                os.close(fd)
        if group:
            collector.stale_events()  # an earlier group's ticks and alerts
        forward(inbox, code_w, req["code_len"])
        os.close(code_w)
        if kind == "calls":
            forward(inbox, tests_w, segment)
            os.close(tests_w)
    pidfd = os.pidfd_open(pid)
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    poller.register(collector.alerts, select.POLLIN)
    poller.register(inbox, 0)  # POLLHUP only: the host is gone
    if stdin_w is not None:
        os.set_blocking(stdin_w, False)
        if stdin_data:
            poller.register(stdin_w, select.POLLOUT)
        else:
            os.close(stdin_w)
            stdin_w = None
    timeout = float(req["timeout"])
    backstop = timeout * float(req.get("backstop", 1.0))
    clock.watch([p for p in (pid, program) if p is not None])
    spent = 0.0  # of the budget, by the backstop's clock, before the clock's last restart
    status, exited, hangup, done, over = None, False, False, False, None
    sent = 0
    mine = b"D%d;" % group
    while not exited and status is None and not done:
        over = clock.look(timeout, backstop, budget - spent)
        if over is not None and (tick := collector.last_tick()) is not None:
            spent += clock.awake()
            clock.restart(tick)  # answered calls since the last look: each earns the next one a full timeout
            spent -= clock.awake()  # what the restart gave back was counted already
            continue
        if over is not None:
            status = "timeout"
            break
        for fd, _ in poller.poll(clock.next_look(timeout, backstop, budget - spent) * 1000):
            if fd == pidfd:
                exited = True
            elif fd == inbox:
                hangup = True
            elif fd == collector.alerts:
                alert = os.read(fd, CHUNK)
                if b"L" in alert:
                    status = "output_limit"
                elif mine in alert:  # the result channel is broken: nothing more to wait for
                    done = True
            elif fd == stdin_w:
                try:
                    sent += os.write(stdin_w, stdin_data[sent:sent + CHUNK])
                except OSError:  # the program closed its stdin
                    sent = len(stdin_data)
                if sent >= len(stdin_data):
                    poller.unregister(stdin_w)
                    os.close(stdin_w)
                    stdin_w = None
        if hangup:
            break
    seconds = time.monotonic() - start
    if not exited:
        os.kill(pid, signal.SIGKILL)
    wstatus = os.waitpid(pid, 0)[1]
    if program is not None:  # the judge is done: its program too
        os.kill(program, signal.SIGKILL)
        os.waitpid(program, 0)
    clock.watch([])  # reaped: their pids may be another process's now, and the wall is all they had
    settled = alone(mode)  # nothing left, all reaped: their CPU is in what the server and init reaped
    clean = settled or kill_all(mode)
    if stdin_w is not None:
        os.close(stdin_w)
    os.close(pidfd)
    if hangup:
        raise Hangup
    return (status, os.waitstatus_to_exitcode(wstatus), seconds, clean, nonce, over in ("backstop", "budget"),
            spent + clock.awake(), clock.used(settled))


def warm_up():
    """Load here, once, what every program would otherwise pay for after its fork.

    Modules most programs import (not ``random``: it reseeds itself after
    every fork, which would cost every program ~0.4 ms); the first
    ``compile``/``exec``/text-file set-up (they initialise lazily); then
    ``gc.freeze()`` so the children's garbage collections do not touch, and
    copy, the whole inherited heap.
    """
    import gc

    for name in ("bisect", "collections", "functools", "heapq", "io", "itertools", "math", "re", "string", "traceback",
                 "typing"):
        __import__(name)
    warm = compile("import sys\nx = [i for i in range(3)]\nassert x\n", "warm.py", "exec")
    exec(warm, {"__builtins__": __builtins__})
    STDIO.update(program_stdio())
    plain.decode(plain.encode([(1, 2.5), {"a": b"x"}]))
    gc.collect()
    gc.freeze()


def program_stdio():
    """The programs' ``sys.stdin``, ``sys.stdout`` and ``sys.stderr``, made once here rather than in every program
    (three text files cost a fresh fork ~0.4 ms, nearly all of it in copied pages).

    A text file asks its descriptor once, when made, whether it can seek, and
    a program's are pipes (stdin: ``/dev/null`` but for ``io`` programs), so
    each is made while its descriptor is one; a fork then puts the program's
    own descriptor under it (:func:`place`).  The server never uses them: each
    program gets them as new, empty buffers and all.
    """
    streams = {"null": open(0, encoding="utf-8", errors="replace", closefd=False)}  # noqa: SIM115 - fd 0: /dev/null
    saved = [os.dup(fd) for fd in (0, 1, 2)]
    read, write = os.pipe()
    try:
        for fd, end in ((0, read), (1, write), (2, write)):
            os.dup2(end, fd)
        streams["io"] = open(0, encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115
        streams["out"] = open(1, "w", encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115
        streams["err"] = open(2, "w", encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115
    finally:
        for fd, old in enumerate(saved):
            os.dup2(old, fd)
            os.close(old)
        os.close(read)
        os.close(write)
    return streams


def set_up(config):
    """Mounts, namespace and capabilities, then the seccomp filter; returns the programs' work folder."""
    global SHM
    mode, drop_uid = config["mode"], config["drop_uid"]
    if mode == "none":
        SHM = None  # the host's /dev/shm is not ours to empty
        os.chmod(config["work_root"], 0o755)  # only the server writes here; programs get the work dir inside
        workdir = os.path.join(config["work_root"], "work")
        os.mkdir(workdir, 0o700)
        if drop_uid:
            os.chown(workdir, NOBODY, NOBODY)
    else:
        workdir = WORK
        owner = f",uid={NOBODY},gid={NOBODY}" if drop_uid else ""
        mount_tmpfs(WORK, f"size={config['work_bytes']},nr_inodes={config['work_inodes']},mode=0700{owner}")
        mount_tmpfs(SHM, f"size={config['shm_bytes']},nr_inodes={config['shm_inodes']},mode=1777")
        if mode == "user":
            nest_user_namespace()
        set_caps(ROOT_CAPS if mode == "root" else ())
    if config.get("seccomp"):
        load_filter(bytes.fromhex(config["seccomp"]))
    return workdir


def main():
    global CPUS, NPROC_BASE, plain
    config = json.loads(sys.argv[1])
    CPUS = max(int(config.get("cpus") or 1), os.cpu_count() or 1)
    mode, drop_uid = config["mode"], config["drop_uid"]
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import plain as codec

    del sys.path[0]
    plain = codec
    workdir = set_up(config)
    # tempfile's choice for every program (/tmp is not theirs to write), set here once: os.environ's own code, run in
    # each program instead, cost it some twenty copied pages; a script case's judge takes it off (judge_process)
    os.environ["TMPDIR"] = workdir
    inbox, outbox = take_channel()
    for stream in (sys.stdout, sys.stderr):  # a script case's judge writes the tests' output on them
        stream.reconfigure(errors="replace")
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)  # programs (same uid in "user" mode) cannot read the server's memory
    if mode == "none":
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    warm_up()
    collector = Collector(drop_uid, mode != "none", outbox)
    if mode == "none" or not drop_uid:  # RLIMIT_NPROC counts every process of the uid, not only the program's
        NPROC_BASE = count_processes(NOBODY if drop_uid else os.getuid())
    baseline = Baseline(mode, drop_uid, workdir, collector.pid)
    send(outbox, {"ready": True, "mode": mode, "uid": os.getuid(), "pid": os.getpid()})
    try:
        while True:
            try:
                req = receive(inbox)
            except EOFError:
                return
            run(req, inbox, collector, mode, drop_uid, workdir, baseline)
    except Hangup:
        return
    finally:
        kill_all(mode)
        collector.close()
        if mode == "none":
            with contextlib.suppress(OSError):
                remove_tree(config["work_root"])


if __name__ == "__main__":
    main()
