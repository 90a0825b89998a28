"""Judging one program on one problem: a warm sandbox per set of toolchains, a compile cache, per-test verdicts.

The sandbox is the one the code pack runs Python in
(:mod:`reward_plugins.sandbox.bwrap`): the same bwrap namespaces, empty
read-only root, scrubbed environment, seccomp filter and cgroup; inside it
runs this pack's own server (:mod:`reward_plugins.contest.jail`) instead of
the Python fork server.  What differs, and why (``docs/contest.md``): programs ``execve``
(a compiler runs several programs, a binary is one); the toolchain of the
row's language is bound read-only, and only in a sandbox made for that
language; checkers and interactors run as a second unprivileged uid that
the contestant cannot signal, trace or write to.

Verdicts, as judges define them: CPU time (user + system, from ``wait4``,
and the CPU of every orphan the program left, which the server reaps as
their subreaper) against the time limit, with a wall-clock bound (twice
that plus a second under the default rules, :mod:`reward_plugins.contest.rules`)
for programs that sleep or block (less the time the
program's processes waited for a CPU: :class:`reward_plugins.contest.jail.Awake`,
so a busy machine changes no verdict); memory, the program's
peak RSS (``ru_maxrss``) and what the sandbox's cgroup grew by while it ran
(all its processes and every file it wrote), against the memory limit, with
``RLIMIT_AS`` (or the runtime's heap flag) stopping the allocation itself;
output against its cap (``RLIMIT_FSIZE``).  The checker (built in, or the
row's own, run in the sandbox) decides WA or AC.

The compile cache is content-addressed (a hash of the language, its
command, the toolchain's paths and every source file): a GRPO group's
identical programs, and every test of one program, compile once; the
artifact stays in the sandbox (root-owned, unreachable from programs) and
the host remembers what it holds.  A rebuilt sandbox starts empty, and a
program whose sandbox was rebuilt between two of its tests is compiled
again before the next one.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
import select
import signal
import struct
import subprocess
import sys
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from reward_plugins.sandbox import bwrap
from reward_plugins.sandbox.cgroup import Cgroup
from reward_plugins.sandbox.output import same_output
from reward_plugins.sandbox.seccomp import bpf, program_bpf

from . import dmoj
from .graders import PY_CHECK, link
from .languages import LANGUAGES, Language, binds, java_entry, tool_paths, version
from .rules import RULES, Rules

__all__ = ["Checker", "Group", "Jail", "JailUnavailable", "Problem", "Program", "Report", "Case", "judge",
           "token_match"]

JAIL = Path(__file__).with_name("jail.py")
TESTLIB = Path(__file__).with_name("testlib")
WORK_BYTES = 1 << 30
WORK_INODES = 8192
MIB = 1 << 20
RESERVE = 320 * MIB  # the cgroup's room beyond the program: the server, the tmpfs (cache, files), the judge
JUDGE_MEMORY = 512 * MIB
JUDGE_SECONDS = 10.0
GRACE = 5.0  # seconds the host waits beyond a request's own limits for the server's answer
PATIENCE = 10.0
"""The host waits this many times a request's wall bound (and :data:`GRACE`) for the server's answer: the server's
bounds do not count the time its programs spent waiting for a CPU, so on a busy machine its answer comes later
by the wall clock than the bound says; a server that never answers is still given up on."""
PCH = "/tmp/work/pch"  # the sandbox's precompiled headers (jail.PCH), one folder per compiler version and flags
PCH_LIMITS = {"cpu": 60.0, "wall": 120.0, "memory": 2048 * MIB, "fsize": 256 * MIB, "processes": 32, "files": 256}
"""Bounds of one header's precompiling (``bits/stdc++.h`` is about 100 MiB precompiled, past a program's 64)."""
CACHE_ARTIFACTS = 64
AGAIN = ("no_room", "held")  # replies of a sandbox that an earlier program left unfit: ask a fresh one
CACHE_BYTES = 512 * MIB  # the artifacts a sandbox keeps, in all (its tmpfs pages are charged to its cgroup)
SMALL_MEMORY = 16 * MIB
"""Below this memory limit a program's peak RSS cannot be told from the server's image it was forked from (about
12 MiB, :func:`reward_plugins.contest.jail.image`): the sandbox cgroup's growth decides, with the runtime's RSS
allowance and a MiB for the server's own growth, rather than the runtimes' address-space allowances."""
DEVICES = ("null", "zero", "urandom")  # the only device nodes a contest sandbox has, as judges allow
OOM_SIGNS = ("std::bad_alloc", "memory allocation of", "MemoryError", "java.lang.OutOfMemoryError",
             "heap out of memory", "Cannot allocate memory", "out of memory", "failed to allocate memory",
             "Allowed memory size of", "OutOfMemoryException", "Heap exhausted", "Runtime error 203",
             "xmalloc: cannot allocate", "xrealloc: cannot allocate")  # the last two: Bash's

Verdict = Literal["AC", "PC", "WA", "TLE", "MLE", "RE", "OLE", "CE", "JE", "SKIP"]
Protocol = Literal["testlib", "kattis", "cms", "default", "coci", "peg", "dmoj"]
Aggregate = Literal["min", "mul", "sum"]
CPP_SOURCES = (".cpp", ".cc", ".cxx", ".c++")
PROCESSES = 8
"""Most user processes of a Communication task (CMS's ``num_processes``): process 0 runs as the contestant's uid,
each other one as a uid of its own (sandbox 65532 down), so none reaches another's FIFOs, memory or signals."""
PEER_UIDS = 3_000_000_000  # host uids of processes 1.. (past the programs' and the judges' spans, below 2**32 - 1)
POINTS_EXIT = 7  # testlib's ``quitp``: exit 7, "points <value> <message>" on stderr (testlib.h POINTS_EXIT_CODE)


def _tools(lang: Language) -> dict[str, str]:
    """The language's tool paths, which the reward checked are there before any program of it is built."""
    paths = tool_paths(lang)
    assert paths is not None, f"{lang.name}: a tool is missing"
    return paths


class JailUnavailable(RuntimeError):
    """No contest sandbox can be had here (or the one started stopped answering)."""


@dataclass(frozen=True)
class Compile:
    """Compile-time bounds (per compiler process: CPU, address space; in all: wall clock, output, processes)."""

    seconds: float = 30.0
    memory: int = 2048 * MIB
    output: int = 64 * MIB
    processes: int = 32


MULTI_FILE = frozenset({"c", "cpp", "cpp14", "cpp20", "java", "python", "pypy3"})
"""The languages a submission of several source files is judged in (:mod:`reward_plugins.contest.submission`): as
DOMjudge's and Kattis's compile scripts take them, C and C++ compile every source together, Java compiles every
``.java`` file and runs the class that declares ``main``, Python runs its entry file with the others beside it."""
PY_ENTRY = re.compile(r"main\.", re.IGNORECASE)  # problemtools' ``mainfile`` candidates


@dataclass(frozen=True)
class Program:
    language: Language
    source: str
    """The program's text: its one file, or a multi-file program's sources one after another (what Java's main
    class and the language's refusals are read from)."""
    named: tuple[tuple[str, str], ...] = ()
    """A multi-file submission's files (sources, C and C++ headers), by the names the completion gave them; empty:
    one file, which the language names."""

    def files(self) -> dict[str, str]:
        return dict(self.named) or {self.language.source_name(self.source): self.source}

    def sources(self) -> list[str]:
        """The files compiled: every source a multi-file submission has (not its headers), or the one file."""
        if not self.named:
            return [self.language.source_name(self.source)]
        ext = os.path.splitext(self.language.source)[1]
        cpp = self.language.source == "main.cpp"
        return [name for name, _ in self.named if name.endswith(CPP_SOURCES + (".C",) if cpp else (ext,))]

    def entry(self) -> str:
        """The file a multi-file Python program runs: the one named ``main.*``, else the first by name (Kattis
        problemtools' ``mainfile``; DOMjudge asks the submitter)."""
        sources = sorted(self.sources())
        return next((name for name in sources if PY_ENTRY.match(name)), sources[0])

    def compile_argv(self) -> list[str]:
        """The compile command, every source in the place of the language's one; with precompiled headers, their
        folder first on the include path.  A multi-file Python program: every file checked for syntax."""
        lang, sources = self.language, self.sources()
        tools = _tools(lang)
        if self.named and lang.source == "main.py":
            at = lang.compile.index("-c")
            return [*(part.format(**tools) for part in lang.compile[:at]), "-c", PY_CHECK, *sources]
        argv: list[str] = []
        for part in lang.compile:
            named = part in (lang.source, "{source}")
            argv += sources if named else [part.format(**tools, source=sources[0])]
        if (pch := self.pch()) is not None:
            at = argv.index("-o")
            argv[at:at] = ["-I", f"{PCH}/{pch['key']}"]
        return argv

    def run_argv(self, argv: list[str]) -> list[str]:
        """The language's run command for this program: a multi-file Python program runs its :meth:`entry` with its
        folder on ``sys.path`` (``-E -s`` for ``-I``, which would leave it off, as a grader's Python runs)."""
        if not self.named or self.language.source != "main.py":
            return argv
        swapped = {self.language.source: [self.entry()], "-I": ["-E", "-s"]}
        return [new for part in argv for new in swapped.get(part, [part])]

    def pch(self) -> dict | None:
        """What the sandbox precompiles for this language (:func:`reward_plugins.contest.jail.ensure_pch`): the
        compile command before its ``-o main <source>``, keyed by it and the compiler's version, so another
        dialect, flag or compiler gets a build of its own; None without (or without a version to key it by)."""
        lang = self.language
        if not lang.pch or (found := version(lang)) is None:
            return None
        argv = [part.format(**_tools(lang), source="") for part in lang.compile[:-3]]
        return {"key": _key("pch", found, argv, lang.pch), "argv": argv, "headers": list(lang.pch),
                "limits": PCH_LIMITS}


@dataclass(frozen=True)
class Checker:
    """A special judge: C++ sources (``testlib.h`` on the include path), C (``.c``) or Rust (``.rs``) sources, or
    a Python program (no C++ source and a ``.py`` file, or one file whose ``#!`` line names python, as CMS's and
    Kattis's Python checkers come; other files beside it are data it may read), or the language ``lang`` declares
    (DMOJ's bridged ``lang``); and a protocol (``testlib``, ``kattis``, ``cms``, or DMOJ's ``default``, ``coci``,
    ``peg`` and ``dmoj``, :func:`_checker_verdict`).  ``flags``: preprocessor flags for a C or C++ judge (DMOJ's
    ``flags``); ``points``: the point value a ``dmoj`` ``check()`` module is told (the row's ``score_max``)."""

    files: tuple[tuple[str, str], ...]
    protocol: Protocol = "testlib"
    lang: str | None = None
    flags: tuple[str, ...] = ()
    points: float = 1.0

    @property
    def language(self) -> str:
        """``python``, ``cpp``, ``c`` or ``rust``: what the judge is written in."""
        names = [name for name, _ in self.files]
        if self.lang is not None:
            return self.lang
        if any(n.endswith(CPP_SOURCES) for n in names):
            return "cpp"
        for suffix, language in ((".c", "c"), (".rs", "rust")):
            if any(n.endswith(suffix) for n in names):
                return language
        first = self.files[0][1].split("\n", 1)[0] if len(self.files) == 1 else ""
        python = any(n.endswith(".py") for n in names) or (first.startswith("#!") and "python" in first)
        return "python" if python else "cpp"

    def compile_argv(self) -> list[str]:
        """g++ as judges build checkers: C++17, -O2, the vendored testlib.h on the include path (gcc's C17 for C,
        rustc -O for Rust, as DMOJ builds bridged judges); a Python judge's entry is checked for syntax (a judge that
        does not build is a judge error either way)."""
        if self.language == "python":
            return [sys.executable, "-I", "-S", "-B", "-c", PY_CHECK, self._entry()]
        if self.language == "rust":
            rust = next(name for name, _ in self.files if name.endswith(".rs"))
            return [_tools(LANGUAGES["rust"])["rustc"], "-O", "-C", "debuginfo=0", "-o", "main", rust]
        if self.language == "c":
            sources = [name for name, _ in self.files if name.endswith(".c")]
            return [_tools(LANGUAGES["c"])["gcc"], "-std=gnu17", "-O2", "-pipe", *self.flags, "-I", str(TESTLIB),
                    "-o", "main", *sources, "-lm"]
        sources = [name for name, _ in self.files if name.endswith(CPP_SOURCES)]
        return [_tools(LANGUAGES["cpp"])["g++"], "-std=gnu++17", "-O2", "-pipe", *self.flags, "-I", str(TESTLIB),
                "-o", "main", *sources]

    def run_argv(self) -> list[str]:
        """The judge's command, ``{bin}`` for its folder in the sandbox: the binary, or Python on the entry file
        (``validate.py`` or ``checker.py`` where there are several files, else the first)."""
        if self.language != "python":
            return ["{bin}/main"]
        if self.protocol == "dmoj":  # DMOJ's check() module, imported by the runner (dmoj.RUNNER)
            return [sys.executable, "-I", "-B", "-c", dmoj.RUNNER, f"{{bin}}/{self._entry()}", repr(self.points)]
        return [sys.executable, "-I", "-B", f"{{bin}}/{self._entry()}"]  # with site: the builtins exit() and quit(),
        # which judges' Python validators call (DOMjudge's jumble), as ``python3 validate.py`` has them

    def _entry(self) -> str:
        """A Python judge's entry file: ``validate.py`` or ``checker.py`` where there are several files, else the
        first ``.py`` (else the first file)."""
        names = [name for name, _ in self.files]
        return next((n for n in ("validate.py", "checker.py", "interactor.py") if n in names),
                    next((n for n in names if n.endswith(".py")), names[0]))


@dataclass(frozen=True)
class Case:
    input: str
    answer: str


@dataclass(frozen=True)
class Group:
    """A subtask: its points, its tests, and how its tests' scores (each a fraction of the test's worth) make the
    group's: ``min`` (CMS ``GroupMin``, Kattis ``grader_flags: min``; with no partial credit, all or nothing, the
    IOI rule), ``mul`` (CMS ``GroupMul``), ``sum`` (CMS ``Sum``, Kattis's default ``sum``: the points are shared
    evenly by the tests).  The group earns ``points`` times that aggregate."""

    points: float
    tests: tuple[int, ...]
    aggregate: Aggregate = "min"

    def earned(self, scores: list[float]) -> float:
        mine = [scores[i] for i in self.tests]
        if self.aggregate == "sum":
            return self.points * sum(mine) / len(mine)
        return self.points * (math.prod(mine) if self.aggregate == "mul" else min(mine))


@dataclass(frozen=True)
class Problem:
    tests: tuple[Case, ...]
    time_limit: float = 2.0
    memory: int = 256 * MIB
    output: int = 16 * MIB
    compare: Literal["token", "lines", "exact", "float", "easy", "linecount", "sorted", "unordered", "rstripped",
                     "identical"] = "token"
    """The built-in checker: :func:`token_match`'s, or one of DMOJ's (:func:`reward_plugins.contest.dmoj.compare`)."""
    float_abs: float = 1e-6
    float_rel: float = 1e-6
    case_sensitive: bool = True
    checker: Checker | None = None
    interactor: Checker | None = None
    groups: tuple[Group, ...] = ()
    """Subtasks; empty: every test is worth the same."""
    grader: tuple[tuple[str, str], ...] = ()
    """Files compiled with the submission, one of them the program's ``main`` (:mod:`reward_plugins.contest.graders`);
    empty: the submission is the whole program."""
    submission_name: str = "solution"
    """With a grader: the submission's file stem, which the grader includes or imports (CMS: the task's name)."""
    submission_files: tuple[str, ...] = ()
    """The stems of the files the submission must be (CMS's submission format: ``user1.%l``, ``user2.%l`` are
    ``("user1", "user2")``), each a fenced block named by its file (:mod:`reward_plugins.contest.submission`), compiled
    with the ``grader`` where there is one; empty: the submission is one file (``submission_name`` with a grader),
    or, without a grader, whatever sources the completion names."""
    input_file: str | None = None
    """File I/O: the file in the program's folder that holds the test's input (stdin is then empty), as CMS's
    Batch ``input_filename`` and USACO's ``<name>.in``."""
    output_file: str | None = None
    """File I/O: the file the program writes its output to (stdout is then thrown away), the only file it may
    write; created empty before it runs, as CMS does, so one that writes nothing has an empty output (WA)."""
    score_max: float = 1.0
    """What a checker's full credit for one test is, in its own units (a Kattis ``score.txt``, testlib's ``quitp``
    points, a CMS outcome): a test's score is the checker's over this."""
    writable: bool = False
    """File I/O: the program may create files in its folder (judges forbid it for batch problems, so by default
    its folder is read-only)."""
    manager: Checker | None = None
    """CMS's Communication: the manager the program talks to through FIFOs (:func:`reward_plugins.contest.jail.
    do_communicate`); its outcome, a number on stdout, is the test's score (the ``cms`` protocol)."""
    user_io: Literal["std_io", "fifo_io"] = "std_io"
    """Communication: the program's stdin and stdout are the FIFOs (``std_io``), or their paths are its arguments,
    manager-to-user first (``fifo_io``, with a stub linked as the ``grader``)."""
    processes: int = 1
    """Communication: how many instances of the program talk to the manager at once (CMS's ``num_processes``), each
    through its own FIFOs and given its 0-based index as its last argument where there are several; their CPU
    seconds are summed against the time limit (CMS)."""
    passes: int = 1
    """Kattis multi-pass (``validation_passes``, problemtools ``judge/execute.py``): above 1, an accepting output
    validator may write ``nextpass.in``, the program's input for another pass, up to this many (:func:`_passes`)."""
    two_steps: bool = False
    """CMS's TwoSteps: the program (the ``grader``, CMS's ``manager.%l``, linked with the submission) runs as two
    instances at once, ``0`` reading the input and ``1`` writing the output, joined by a FIFO whose path is their
    second argument (:func:`reward_plugins.contest.jail.do_two_steps`); their CPU seconds are summed."""
    output_only: bool = False
    """CMS's OutputOnly: the submission is each test's output file itself; no program runs
    (:mod:`reward_plugins.contest.outputs`)."""


@dataclass
class Report:
    verdicts: list[Verdict]
    score: float
    compile_log: str = ""
    cached: bool = False
    details: list[str] = field(default_factory=list)
    stopped: bool = False
    """Tests were left unrun because the completion's budget (its CPU seconds, or the wall deadline) was spent: the
    score is not the program's verdict."""
    scores: list[float] = field(default_factory=list)
    """Each test's score, a fraction of its worth: 1 for AC (or what the checker awarded), the checker's fraction for
    PC, 0 for a failure or a test not run."""
    group_scores: list[float] = field(default_factory=list)
    """The points each subtask earned (:meth:`Group.earned`), in the row's order; empty without subtasks."""

    def __post_init__(self) -> None:
        if not self.scores:  # a report decided before any test ran (CE, a checker that does not build): all 0
            self.scores = [0.0] * len(self.verdicts)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for v in self.verdicts:
            out[v.lower()] = out.get(v.lower(), 0) + 1
        return out


def _cpu(outcome: dict) -> float:
    """The CPU seconds a reply says its processes used (0.0 where it says none: a cached build, a judge error)."""
    cpu = outcome.get("cpu")
    return float(cpu) if isinstance(cpu, int | float) and math.isfinite(cpu) and cpu > 0 else 0.0


def _key(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode("utf-8", "surrogatepass")).hexdigest()[:40]


class Jail:
    """One warm sandbox with the toolchains of ``languages`` bound, running :mod:`jail`; rebuilt when unclean."""

    def __init__(self, languages: frozenset[str]) -> None:
        found = bwrap.isolation()
        if found.mode != "root":
            why = found.reason or "not root: the unprivileged mode has one uid, which a checker would share"
            raise JailUnavailable(
                f"the contest reward needs the code sandbox in root mode (scoring as root, with bubblewrap); here "
                f"it is {found.mode!r} ({why}). Remedy: {found.remedy or 'score as root (CI, a container)'}")
        self.languages = languages
        self.process: subprocess.Popen | None = None
        self.cgroup: Cgroup | None = None
        self._watch: int | None = None
        self.starts = 0
        self.host_uids: tuple[int, int] | None = None
        self.artifacts: OrderedDict[str, dict] = OrderedDict()  # what the running sandbox holds, oldest first
        self.pch_bytes = 0  # what its precompiled headers hold (tmpfs pages, charged to its cgroup)
        self.compiles = 0

    def start(self) -> None:
        if self.process is not None:
            return
        host_uid = bwrap.host_uid()
        self.host_uids = (host_uid, host_uid + bwrap.HOST_UID_SPAN)  # the contestant's and the judge's
        peers = tuple(PEER_UIDS + ((host_uid - bwrap.HOST_UID_BASE) * (PROCESSES - 1) + k) % 1_290_000_000
                      for k in range(PROCESSES - 1))  # distinct per sandbox, as the programs' own uid is
        userns = bwrap.Namespace.create("root", *self.host_uids, peers=peers)
        config = {"seccomp": bpf().hex(), "program_seccomp": program_bpf().hex(), "work_bytes": WORK_BYTES,
                  "work_inodes": WORK_INODES, "processes": PROCESSES}
        toolchains = {p for lang in self.languages for p in binds(LANGUAGES[lang])}
        command = [sys.executable, "-I", "-B", str(JAIL), json.dumps(config)]
        found = bwrap.isolation().bwrap
        assert found is not None  # the contest reward refuses to bind without a sandbox
        argv = bwrap.bwrap_argv(found, "root", userns, command, (str(JAIL.parent),),
                                tuple(sorted(toolchains)), ("CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER"), DEVICES)
        fds = userns.fds
        self.cgroup = Cgroup.create()
        if self.cgroup is not None:
            watch, self._watch = os.pipe()
            argv = ["/bin/sh", "-c", bwrap.KEEPER, "sh", str(watch), "-", *map(str, self.cgroup.dirs), "--",
                    *argv]
            fds = (*fds, watch)
        try:
            self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            stderr=subprocess.PIPE, pass_fds=fds, env={}, start_new_session=True)
        finally:
            userns.close()
            if self.cgroup is not None:
                os.close(fds[-1])
        self.starts += 1
        self.artifacts.clear()
        self.pch_bytes = 0
        hello = self._receive(time.monotonic() + bwrap.START_TIMEOUT)
        if not (hello and hello[0].get("ready")):
            raise JailUnavailable(f"the contest sandbox did not start: {self.close() or hello!r}")

    @property
    def cache_bytes(self) -> int:
        return sum(record.get("bytes", 0) for record in self.artifacts.values()) + self.pch_bytes

    def request(self, header: dict, data: list[bytes], seconds: float, memory: int,
                processes: int) -> tuple[dict, bytes]:
        """One operation; a dead, silent or unclean server is closed (so rebuilt next time).

        What an earlier program left can stop an operation before it runs: a
        cgroup bound that cannot be lowered below what the sandbox holds
        (``held``), or a work folder that holds more than the cache
        (``no_room``).  Neither is this operation's doing: the sandbox is
        closed, and the caller asks a fresh one again (:data:`AGAIN`)."""
        try:
            self.start()
            if self.cgroup is not None:
                try:
                    self.cgroup.limit(memory + RESERVE + self.cache_bytes, processes + 16)
                except OSError as exc:  # held above the bound (by what an earlier program left): start afresh
                    return {"status": "held", "error": f"cgroup: {exc}; {self.close()}"}, b""
                if header["op"] == "run":
                    self.cgroup.mark()
            body = json.dumps({**header, "blobs": [len(d) for d in data]}).encode()
            assert self.process is not None and self.process.stdin is not None  # started, with a pipe for its input
            try:
                self.process.stdin.write(struct.pack(">I", len(body)) + body + b"".join(data))
                self.process.stdin.flush()
            except OSError:
                pass
            answer = self._receive(time.monotonic() + seconds * PATIENCE + GRACE)
            if answer is None:
                return {"status": "jail_error", "error": self.close() or "no answer"}, b""
            reply, payload = answer
            if header["op"] == "run" and self.cgroup is not None:
                reply["grown"] = self.cgroup.grown()
            if not reply.get("clean"):
                self.close()
            return reply, payload
        except BaseException:
            self.close()
            raise

    def _receive(self, deadline: float) -> tuple[dict, bytes] | None:
        head = self._read(4, deadline)
        if head is None or (size := struct.unpack(">I", head)[0]) > 16 * MIB:
            return None
        body = self._read(size, deadline)
        try:
            reply = json.loads(body) if body is not None else None
        except ValueError:
            return None
        if not isinstance(reply, dict):
            return None
        sizes = reply.get("blobs", [])
        if not (isinstance(sizes, list) and all(type(n) is int and 0 <= n <= 1 << 30 for n in sizes)):
            return None
        payload = b""
        for n in sizes:
            chunk = self._read(n, deadline) if n else b""
            if chunk is None:
                return None
            payload += chunk
        return reply, payload

    def _read(self, n: int, deadline: float) -> bytes | None:
        assert self.process is not None and self.process.stdout is not None  # started, with a pipe for its output
        fd, parts, got = self.process.stdout.fileno(), [], 0
        while got < n:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, min(n - got, 1 << 20))
            if not chunk:
                return None
            parts.append(chunk)
            got += len(chunk)
        return b"".join(parts)

    def compile(self, language: Language, files: dict[str, str], argv: list[str], limits: Compile, *,
                judge: bool = False, pch: dict | None = None) -> dict:
        """Compile (or find in the cache) ``files`` with ``argv``, the system headers ``pch`` names precompiled
        first (:meth:`Program.pch`); returns the artifact's record (``status`` ``ok``/``CE``/``JE``, the compiler's
        ``log``, its ``key``, whether it was ``cached``)."""
        key = _key(language.name, argv, sorted(files.items()), judge)
        if key in self.artifacts and self.process is not None:
            self.artifacts.move_to_end(key)
            return {**self.artifacts[key], "cached": True, "cpu": 0.0}
        blobs = [text.encode("utf-8", "surrogatepass") for text in files.values()]
        memory = 0 if language.heap_flag else limits.memory
        header = {"op": "compile", "key": key, "argv": argv, "files": list(files), "judge": judge, "pch": pch,
                  "env": dict(language.env), "max_bytes": limits.output,
                  "limits": {"cpu": limits.seconds, "wall": limits.seconds * 2, "memory": memory,
                             "fsize": limits.output, "processes": limits.processes, "files": 256}}
        for _ in range(2):
            reply, log = self.request(header, blobs, limits.seconds * 2, limits.memory, limits.processes)
            if reply.get("status") not in AGAIN:
                break
        self.compiles += not reply.get("cached", False)
        if isinstance(reply.get("pch_bytes"), int):
            self.pch_bytes = reply["pch_bytes"]
        status = {"ok": "ok", "error": "CE", "timeout": "CE"}.get(reply.get("status") or "", "JE")
        record = {"status": status, "log": log.decode("utf-8", "replace") or reply.get("error", ""), "key": key,
                  "cached": bool(reply.get("cached")), "bytes": int(reply.get("bytes") or 0), "cpu": _cpu(reply)}
        if reply.get("status") in ("ok", "error") and reply.get("clean"):  # a compile error is as cacheable as a
            # binary, from a sandbox verified fresh before and after; a compiler stopped by a limit (a busy
            # machine's wall clock), one that could not start, or a judge error is not
            self.artifacts[key] = record
            self._evict()
        return record

    def _evict(self) -> None:
        """Drop the oldest artifacts beyond :data:`CACHE_ARTIFACTS` or :data:`CACHE_BYTES` in all."""
        old = []
        while len(self.artifacts) > 1 and (len(self.artifacts) > CACHE_ARTIFACTS or self.cache_bytes > CACHE_BYTES):
            old.append(self.artifacts.popitem(last=False)[0])
        if old:
            self.request({"op": "forget", "keys": old}, [], 10, 0, 0)

    def close(self) -> str:
        process, self.process = self.process, None
        if self._watch is not None:
            os.close(self._watch)
            self._watch = None
        tail = ""
        if process is not None:
            with contextlib.suppress(OSError):
                os.killpg(process.pid, signal.SIGKILL)
            process.kill()
            process.wait()
            tail = bwrap.tail(process)
            for stream in (process.stdin, process.stdout):
                with contextlib.suppress(OSError):
                    if stream is not None:
                        stream.close()
        if self.cgroup is not None:
            self.cgroup.kill()
            self.cgroup.close()
            self.cgroup = None
        self.artifacts.clear()
        return tail

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()


_jails: dict[frozenset[str], Jail] = {}


def jail_for(languages: frozenset[str]) -> Jail:
    """This process's warm sandbox for a set of languages (a handful at most: one per language, plus C++)."""
    if languages not in _jails:
        _jails[languages] = Jail(languages)
    return _jails[languages]


_C_FLOAT = re.compile(r"""[+-]?(?:
      (?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?                                  # decimal
    | 0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?\d+)?   # hexadecimal
    | inf(?:inity)? | nan(?:\([0-9A-Za-z_]*\))?)""", re.VERBOSE | re.IGNORECASE)


def c_float(token: str) -> float | None:
    """The token's value if all of it is a floating-point number as C's ``strtod`` reads one (DOMjudge's compare
    asks ``sscanf("%Lf%s") == 1``): decimal, hexadecimal, ``inf``/``infinity`` and ``nan`` in any case, signed;
    not Python's extras (``1_000``), which no judge reads as a number."""
    if _C_FLOAT.fullmatch(token) is None:
        return None
    body = token.lstrip("+-").lower()
    if body.startswith("nan"):
        return math.nan
    if body.startswith("0x"):
        return float.fromhex(token)
    return float(token)


def _float_equal(value: float, expected: float, problem: Problem) -> bool:
    """DOMjudge's ``compare_float``: finite values within the absolute or the relative tolerance; NaN equals NaN;
    infinities equal when their signs match; values of different classes differ."""
    if math.isfinite(value) and math.isfinite(expected):
        error = abs(value - expected)
        return error <= problem.float_abs or error <= problem.float_rel * abs(expected)
    if math.isnan(value) or math.isnan(expected):
        return math.isnan(value) and math.isnan(expected)
    return value == expected  # both infinite with one sign, or one finite and one not: never equal


def token_match(output: str, answer: str, problem: Problem) -> bool:
    """The built-in checkers: ``exact`` (byte-equal but for a final newline), ``lines`` (each line's trailing
    whitespace and trailing blank lines ignored), ``token`` (whitespace-separated tokens equal), ``float``
    (tokens; where the answer's token is a number, the output's must be one within ``float_abs`` absolute or
    ``float_rel`` relative error; NaN and infinities as DOMjudge's compare reads them, :func:`_float_equal`)."""
    if problem.compare == "exact":
        return output.removesuffix("\n") == answer.removesuffix("\n")
    if problem.compare == "lines":
        return same_output(output, answer)
    got, want = output.split(), answer.split()
    if len(got) != len(want):
        return False
    if not problem.case_sensitive:
        got, want = [t.lower() for t in got], [t.lower() for t in want]
    if problem.compare == "token":
        return got == want
    for g, w in zip(got, want, strict=False):
        expected = c_float(w)
        if expected is None:
            if g != w:
                return False
            continue
        value = c_float(g)
        if value is None or not _float_equal(value, expected, problem):
            return False
    return True


def classify(outcome: dict, language: Language, problem: Problem) -> Verdict | None:
    """A run's verdict from its resources, or None when it ran cleanly (its output is then checked)."""
    if outcome.get("status") == "jail_error" or not isinstance(outcome.get("cpu"), int | float):
        return "JE"
    signum, code = outcome.get("signal"), outcome.get("exit")
    if outcome.get("start_error"):  # the server's word, on a pipe the program never holds
        return "JE"
    failed = signum is not None or code != 0
    oom = failed and any(sign in str(outcome.get("stderr", "")) for sign in OOM_SIGNS + language.oom_signs)
    small = problem.memory < SMALL_MEMORY
    if small and not isinstance(outcome.get("grown"), int):
        return "JE"  # below the floor only the cgroup's growth measures the program, and here there is none
    rss = outcome.get("rss", 0)
    own_rss = 0 if small and rss <= outcome.get("image_rss", math.inf) else rss  # below the floor: the image's
    tree_allowance = language.rss_allowance + MIB if small else language.memory_slack
    if own_rss > problem.memory + language.rss_allowance or oom \
            or _tree_memory(outcome) > problem.memory + tree_allowance:
        return "MLE"
    if signum == signal.SIGXCPU or outcome["cpu"] > problem.time_limit * language.time_factor \
            or outcome.get("wall_killed"):
        return "TLE"
    if "truncated" in outcome:  # output past the cap was thrown away (DOMjudge): a crash first, then OLE
        return "RE" if failed else ("OLE" if outcome["truncated"] else None)
    if signum == signal.SIGXFSZ or outcome.get("out_bytes", 0) >= problem.output:
        return "OLE"
    return "RE" if failed else None


def _tree_memory(outcome: dict) -> int:
    """What the program's whole tree held at its peak, files included: the sandbox cgroup's growth while it ran,
    less what the server itself wrote there for it (the input file, the output file and its copy in the reply).

    A judge counts every process of the program and what it stored (DOMjudge, CMS and DMOJ do); ``ru_maxrss``
    counts one process, so children that each stay under the limit, or files, would pass.  An estimate from above:
    the server's own growth counts too, a few hundred KiB, within every language's allowance."""
    grown = outcome.get("grown")
    if not isinstance(grown, int):
        return 0
    return grown - int(outcome.get("in_bytes", 0)) - 2 * int(outcome.get("out_bytes", 0))


def _checker_verdict(result: dict, protocol: str, score_max: float) -> tuple[Verdict, float, str]:
    """A special judge's word on one test: (verdict, the test's score as a fraction of its worth, why).

    * testlib: exit 0 ok, 1 wrong answer, 2 presentation error (WA), 7 ``quitp`` points (stderr ``points <value>``,
      testlib.h's ``_points``: PC, AC at full points, WA at none), anything else a failure of the checker (JE);
    * kattis: 42 accepted, 43 wrong answer (problemtools ``judge/validate.py``); an accepted test's score is
      ``feedback/score.txt`` where the validator wrote one (AC whatever its value, as Kattis says), and a
      ``score.txt`` beside a rejection or one that is not a number is a judge error, as there;
    * cms: exit 0 and a number on the first line of stdout, the outcome (``cms/grading/steps/trusted.py``
      ``extract_outcome_and_text``): 1 correct (AC), 0 not correct (WA), between them partially correct (PC);
      a non-zero exit or an outcome that is not a number is a judge error (CMS's failed trusted step);
    * DMOJ's ``default``, ``coci``, ``peg`` and ``dmoj`` (a ``check()`` module): :func:`reward_plugins.contest.dmoj.
      verdict`.

    Every score is the checker's over ``score_max``; one outside [0, 1] is a judge error (a reward is a fraction)."""
    if result.get("status") == "jail_error" or result.get("wall_killed") or result.get("signal"):
        return "JE", 0.0, "the checker failed (killed, or the sandbox)"
    code = result.get("exit")
    if not isinstance(code, int):
        return "JE", 0.0, "the checker did not exit"
    if protocol in dmoj.PROTOCOLS:
        return dmoj.verdict(result, protocol, score_max)
    said: str | None
    if protocol == "kattis":
        said = result.get("score_txt")
        if code == 43:
            return ("JE", 0.0, 'score.txt beside a rejection') if said is not None else ("WA", 0.0, "")
        if code != 42:
            return "JE", 0.0, f"the validator exited {code}"
        verdict: Verdict = "AC"
    elif protocol == "cms":
        if code != 0:
            return "JE", 0.0, f"the checker exited {code}"
        said, verdict = str(result.get("stdout", "")).split("\n", 1)[0].strip(), "PC"
    else:
        if code in (0, 1, 2):
            return ("AC", 1.0, "") if code == 0 else ("WA", 0.0, "")
        if code != POINTS_EXIT:
            return "JE", 0.0, f"the checker exited {code}"
        found = re.search(r"^points\s+(\S+)", str(result.get("message", "")), re.MULTILINE)
        said, verdict = (found[1] if found else ""), "PC"
    if said is None:  # a Kattis accept without a score: the test's full worth
        return "AC", 1.0, ""
    try:
        fraction = float(said) / score_max
    except ValueError:
        return "JE", 0.0, f"the checker's score {said[:40]!r} is not a number"
    if not 0.0 <= fraction <= 1.0:
        return "JE", 0.0, f"the checker's score {said[:40]!r} is outside [0, {score_max:g}]"
    if verdict == "PC":
        verdict = "AC" if fraction == 1.0 else "WA" if fraction == 0.0 else "PC"
    return verdict, fraction, ""


def _program_limits(language: Language, problem: Problem, rules: Rules) -> dict:
    seconds = problem.time_limit * language.time_factor
    return {"cpu": seconds, "wall": rules.wall_limit(seconds), "fsize": problem.output, "processes": language.processes,
            "files": language.files, "memory": 0 if language.heap_flag else problem.memory + language.memory_slack,
            "stack": None if rules.unlimited_stack else min(problem.memory, 1 << 30)}


JUDGE_LIMITS: dict[str, Any] = {"cpu": JUDGE_SECONDS, "wall": JUDGE_SECONDS * 2, "fsize": 64 * MIB, "processes": 4,
                "memory": JUDGE_MEMORY, "stack": 256 * MIB}


@dataclass
class _Run:
    """What every test of one judged program shares, and how to build its artifacts again in a rebuilt sandbox."""

    jail: Jail
    program: Program
    problem: Problem
    compile_limits: Compile
    argv: list[str]
    limits: dict
    key: str = ""
    keys: dict[str, str] = field(default_factory=dict)  # the special judges' artifact keys, by role
    log: str = ""  # the compiler's messages
    cached: bool = False  # the program's build came from the cache
    spent: float = 0.0  # CPU seconds its compiles, runs and checks used: the completion's budget counts them
    truncate: bool = False  # output past the cap is thrown away and the program runs on (the rules' truncate_output)
    sources: dict[str, str] = field(default_factory=dict)  # what is compiled: the submission, and a grader's files
    build_argv: list[str] = field(default_factory=list)  # the compiler's command
    pch: dict | None = None  # the precompiled headers its command reads (:meth:`Program.pch`); None with a grader

    @property
    def language(self) -> Language:
        return self.program.language

    def build(self) -> Report | None:
        """Compile the program and the row's special judges (or find them in the cache); None when all are built,
        else the report every test gets (CE, or JE for a special judge that does not build)."""
        jail, n = self.jail, len(self.problem.tests)
        built = jail.compile(self.language, self.sources, self.build_argv, self.compile_limits, pch=self.pch)
        self.key, self.log, self.cached = built["key"], built["log"], built["cached"]
        self.spent += built["cpu"]
        if built["status"] != "ok":
            return Report([built["status"]] * n, 0.0, built["log"], built["cached"])
        for role in ("checker", "interactor", "manager"):
            if (source := getattr(self.problem, role)) is not None:
                made = jail.compile(LANGUAGES[source.language], dict(source.files), source.compile_argv(),
                                    self.compile_limits,
                                    judge=True)
                self.spent += made["cpu"]
                if made["status"] != "ok":
                    return Report(["JE"] * n, 0.0, f"{role}: {made['log']}", built["cached"])
                self.keys[role] = made["key"]
        return None

    def ready(self) -> bool:
        """Whether the sandbox holds every artifact of this program, building them again where it was rebuilt
        since (what a program left in the middle of another's tests is no reason for a judge error)."""
        if self.jail.process is not None and all(k in self.jail.artifacts for k in (self.key, *self.keys.values())):
            return True
        return self.build() is None

    def ask(self, header: dict, data: list[bytes], seconds: float, memory: int, processes: int) -> tuple[dict, bytes]:
        """One request about this program, in a sandbox that holds its artifacts; asked twice when a sandbox an
        earlier program left unfit refused it."""
        for _ in range(2):
            if not self.ready():
                return {"status": "jail_error", "error": "the program's artifacts could not be built again"}, b""
            reply, payload = self.jail.request(header, data, seconds, memory, processes)
            if reply.get("status") not in AGAIN:
                break
        judged = reply.get("judge")
        self.spent += _cpu(reply) + (_cpu(judged) if isinstance(judged, dict) else 0.0)
        return reply, payload


def judge(program: Program, problem: Problem, *, deadline: float, compile_limits: Compile = Compile(),
          stop_on_failure: bool = False, cpu_budget: float = math.inf, rules: Rules = RULES["kattis"]) -> Report:
    """Compile ``program`` and run it on every test (every group's, in order); the score is the mean of the tests'
    scores (1 for AC, the checker's fraction for partial credit, else 0), or with groups the points the groups
    earned (:meth:`Group.earned`) over all points.  A ``min`` or ``mul`` group stops at its first test that scores
    0 (its other tests SKIP), a ``sum`` group runs every test; everything stops once the budget is spent: the wall-clock
    ``deadline`` (monotonic) is past, or the compiles, runs and checks have used ``cpu_budget`` CPU seconds
    (the report is then ``stopped``).  ``rules``: whose policy decides where the reference judges differ
    (:mod:`reward_plugins.contest.rules`)."""
    judges = {source.language for source in (problem.checker, problem.interactor, problem.manager)
              if source is not None}
    languages = frozenset({program.language.name} | judges)
    if (refused := _refusal(program, rules)) is not None:
        return Report(["CE"] * len(problem.tests), 0.0, refused)
    lang = program.language
    main = java_entry(program.source)[3] if rules.java_public_class and lang.name == "java" else lang.main(
        program.source)  # DMOJ runs the public class, which the refusal above made sure of
    argv = program.run_argv([part.format(**_tools(lang), memory_mb=problem.memory // MIB, main=main, source="")
                             for part in lang.run])
    sources, build_argv, pch = program.files(), program.compile_argv(), program.pch()
    if problem.grader:  # the grader's command, without the precompiled headers' folder
        pch = None
        submitted = program.files() if program.named else {
            problem.submission_name + os.path.splitext(lang.source)[1]: program.source}
        linked = link(lang, submitted, problem.grader, _tools(lang), problem.memory // MIB)
        if isinstance(linked, str):
            return Report(["CE"] * len(problem.tests), 0.0, linked)
        sources, build_argv, argv = linked
    run = _Run(jail_for(languages), program, problem, compile_limits, argv, _program_limits(lang, problem, rules),
               truncate=rules.truncate_output, sources=sources, build_argv=build_argv, pch=pch)
    failed = run.build()
    if failed is not None:
        return failed
    return grade(problem, lambda i: _one(run, problem.tests[i]),
                 lambda: time.monotonic() > deadline or run.spent >= cpu_budget, stop_on_failure, run.log, run.cached)


def grade(problem: Problem, one: Callable[[int], tuple[Verdict, float, str]], spent: Callable[[], bool],
          stop_on_failure: bool, log: str = "", cached: bool = False) -> Report:
    """Every group's tests judged by ``one`` (test index: verdict, score, why) in order, and the report: a ``min`` or
    ``mul`` group stops at its first test that scores 0 (its other tests SKIP), a ``sum`` group runs every test;
    everything stops once ``spent()`` says the budget is (the report is then ``stopped``).  Shared by programs and
    output-only submissions (:mod:`reward_plugins.contest.outputs`)."""
    n = len(problem.tests)
    groups = problem.groups or tuple(Group(1.0, (i,)) for i in range(n))
    verdicts: list[Verdict] = ["SKIP"] * n
    scores, details = [0.0] * n, [""] * n
    stopped = False
    for group in groups:
        for i in group.tests:
            if verdicts[i] == "SKIP":  # a test in two groups runs once
                if spent():
                    stopped = True
                    break
                verdicts[i], scores[i], details[i] = one(i)
            if stop_on_failure and verdicts[i] != "AC":
                break
            if problem.groups and group.aggregate != "sum" and scores[i] == 0.0:
                break  # the group's score can only be 0 now: its other tests SKIP
        if stopped or (stop_on_failure and any(v not in ("AC", "SKIP") for v in verdicts)):
            break
    total = sum(group.points for group in groups)
    earned = [group.earned(scores) for group in groups]
    return Report(verdicts, sum(earned) / total if total > 0 else 0.0, log, cached, details, stopped, scores,
                  earned if problem.groups else [])


def _bound(limits: dict) -> float:
    """The seconds a run may take by the server's clocks, from which the host's patience grows: its wall bound, and
    never less than twice its CPU limit plus a second.  A program that works ends at its CPU limit, which on a busy
    machine (its own processes sharing a CPU) comes later by the wall clock than a tight wall bound (DOMjudge's
    rules) says; the host must not give up on it first (a judge error)."""
    return max(limits["wall"], 2 * limits["cpu"] + 1)


def _refusal(program: Program, rules: Rules) -> str | None:
    """A compile error decided before the compiler runs: the language's own (:meth:`Language.refusal`), or under
    ``java_public_class`` rules a Java program without a public top-level class (DMOJ's ``find_class``)."""
    if (refused := program.language.refusal(program.source)) is not None:
        return refused
    if rules.java_public_class and program.language.name == "java" and not java_entry(program.source)[3]:
        return f'error: no public class: the main class must be declared as a "public class" ({rules.name} rules)'
    return None


def _one(run: _Run, test: Case) -> tuple[Verdict, float, str]:
    """One test: run (or interact), classify the resources used, then check; (verdict, score, why)."""
    data = [test.input.encode("utf-8", "surrogatepass"), test.answer.encode("utf-8", "surrogatepass")]
    problem, lang, limits = run.problem, run.language, run.limits
    memory = max(limits["memory"] or problem.memory + lang.memory_slack, JUDGE_MEMORY)
    checked = problem.checker is not None
    if problem.manager is not None:
        return _communicate(run, data[0], memory)
    if problem.interactor is not None:
        header: dict[str, Any] = {
            "op": "interact", "key": run.key, "argv": run.argv, "limits": limits, "judge_key": run.keys["interactor"],
            "judge_argv": problem.interactor.run_argv(), "judge_limits": JUDGE_LIMITS,
            "protocol": problem.interactor.protocol,
            "env": dict(lang.env), "writable": problem.writable or lang.scratch, "keep_output": checked}
        outcome, _ = run.ask(header, data, _bound(limits) + JUDGE_LIMITS["wall"], memory * 2,
                             limits["processes"] + JUDGE_LIMITS["processes"])
        judged: dict[str, Any] = (outcome["judge"] if isinstance(outcome.get("judge"), dict)
                                  else {"status": "jail_error"})
        said, score, why = _checker_verdict(judged, problem.interactor.protocol, problem.score_max)
        message = (why + " " + str(judged.get("message", ""))[-500:]).strip()
        failed = classify(outcome, lang, problem)
        if said == "WA" and judged.get("order") == 0:
            return "WA", 0.0, message  # the interactor rejected first: the program's later end is not its verdict
        if failed is not None:
            return failed, 0.0, message
        if said not in ("AC", "PC") or problem.checker is None:
            return said, score, message
        return _check(run, data)[:3]  # the interactor's own output file, checked as testlib does
    if problem.passes > 1:
        return _passes(run, data, memory)
    verdict, score, why, _ = _batch(run, data, memory)
    return verdict, score, why


def _batch(run: _Run, data: list[bytes], memory: int, feedback: dict | None = None
           ) -> tuple[Verdict, float, str, dict]:
    """One run of a batch program on ``data`` (input, answer) and its check; the checker's reply too (a multi-pass
    validator's ``nextpass`` and ``feedback``, where ``feedback`` is given: the files it left before)."""
    problem, lang, limits = run.problem, run.language, run.limits
    checked = problem.checker is not None
    header = {"op": "run", "key": run.key, "argv": run.argv, "limits": limits, "return_output": not checked,
              "keep_output": checked, "env": dict(lang.env), "writable": problem.writable or lang.scratch,
              "truncate": run.truncate, "input_file": problem.input_file, "output_file": problem.output_file}
    n = 1
    if problem.two_steps:  # CMS's TwoSteps: two instances at once (jail.do_two_steps)
        header["op"], n = "two_steps", 2
    outcome, output = run.ask(header, data[:1], _bound(limits) * n, memory * n, limits["processes"] * n)
    outcome["in_bytes"] = len(data[0])
    failed = classify(outcome, lang, problem)
    if failed is not None:
        return failed, 0.0, str(outcome.get("stderr", ""))[-500:], {}
    if problem.checker is None and problem.compare in dmoj.COMPARES:
        passed, share = dmoj.compare(problem.compare, output, data[1])
        return (("AC" if share == 1.0 else "PC") if passed else "WA"), share, "", {}
    if problem.checker is None:
        same = token_match(output.decode("utf-8", "replace"), data[1].decode("utf-8", "surrogatepass"), problem)
        return ("AC", 1.0, "", {}) if same else ("WA", 0.0, "", {})
    return _check(run, data, feedback)


def _passes(run: _Run, data: list[bytes], memory: int) -> tuple[Verdict, float, str]:
    """Kattis multi-pass, as problemtools ``judge/execute.py`` ``_run_multipass`` (commit ``a185fe9``) runs it:
    each pass runs the program on the pass's input and the validator on that input, the test's answer and the
    feedback folder kept from the passes before; a rejection ends the test (a judge error with a ``nextpass.in``
    beside it), an acceptance without ``nextpass.in`` is the verdict, one with it makes that file the next pass's
    input; no verdict within ``passes`` passes is a judge error."""
    feedback: dict = {}
    for _ in range(run.problem.passes):
        verdict, score, why, result = _batch(run, data, memory, feedback)
        nextpass = result.get("nextpass")
        if verdict not in ("AC", "PC"):
            return ("JE", 0.0, "nextpass.in beside a rejection") if nextpass else (verdict, score, why)
        if not nextpass:
            return verdict, score, why
        data, feedback = [result["nextpass_bytes"], data[1]], result.get("feedback") or {}
    return "JE", 0.0, f"the validator gave no verdict within {run.problem.passes} passes"


def _communicate(run: _Run, data: bytes, memory: int) -> tuple[Verdict, float, str]:
    """One test of a Communication task: the program's failure (TLE, MLE, RE: of any of its processes, or their CPU
    seconds summed past the limit) scores 0, as CMS's outcome 0.0 for a user process that did not end well; else the
    manager's outcome (the ``cms`` protocol), a judge error where the manager failed."""
    problem, lang, limits = run.problem, run.language, run.limits
    assert problem.manager is not None
    header = {"op": "communicate", "key": run.key, "argv": run.argv, "limits": limits,
              "judge_key": run.keys["manager"], "judge_argv": problem.manager.run_argv(), "judge_limits": JUDGE_LIMITS,
              "env": dict(lang.env), "writable": problem.writable or lang.scratch, "user_io": problem.user_io,
              "processes": problem.processes}
    n = problem.processes
    outcome, _ = run.ask(header, [data], _bound(limits) * n + JUDGE_LIMITS["wall"], memory * (n + 1),
                         limits["processes"] * n + JUDGE_LIMITS["processes"])
    judged: dict[str, Any] = outcome["judge"] if isinstance(outcome.get("judge"), dict) else {"status": "jail_error"}
    message = str(judged.get("message", ""))[-500:]
    failed = classify(outcome, lang, problem)
    if failed is not None:
        return failed, 0.0, str(outcome.get("stderr", ""))[-500:]
    said, score, why = _checker_verdict(judged, "cms", problem.score_max)
    return said, score, (why + " " + message).strip()


def _check(run: _Run, data: list[bytes], feedback: dict | None = None) -> tuple[Verdict, float, str, dict]:
    """The row's checker on the output the run (or the interactor) just kept; in the same sandbox, or there is no
    output to check (a sandbox rebuilt in between: a judge error)."""
    assert run.problem.checker is not None  # only a problem with a checker is checked
    source = run.program.source if run.problem.checker.protocol == "dmoj" else None  # DMOJ's submission_source
    result = check(run.jail, run.problem, run.keys["checker"], data, feedback, source)
    run.spent += _cpu(result)
    verdict, score, why = _checker_verdict(result, run.problem.checker.protocol, run.problem.score_max)
    return verdict, score, (why + " " + str(result.get("message", ""))[-500:]).strip(), result


def check(jail: Jail, problem: Problem, key: str, data: list[bytes], feedback: dict | None = None,
          source: str | None = None) -> dict:
    """The ``check`` request: the checker built as ``key`` on ``data`` (input, answer, and for an output-only
    submission the output itself; else the output the last run kept); the server's reply.  With ``feedback``
    (multi-pass) the validator's feedback folder starts with those files, and the reply carries its
    ``nextpass.in`` (``nextpass``, ``nextpass_bytes``) and its files (``feedback``).  ``source``: the submission,
    which the judge's folder then holds as ``source`` (what DMOJ passes a ``check()`` module)."""
    assert problem.checker is not None
    header: dict[str, Any] = {"op": "check", "judge_key": key, "judge_argv": problem.checker.run_argv(),
                              "judge_limits": JUDGE_LIMITS, "protocol": problem.checker.protocol}
    if feedback is not None:
        header |= {"multi_pass": True, "feedback": feedback}
    if source is not None:
        header["source"] = source
    result, payload = jail.request(header, data, JUDGE_LIMITS["wall"], JUDGE_MEMORY, JUDGE_LIMITS["processes"])
    return {**result, "nextpass_bytes": payload}
