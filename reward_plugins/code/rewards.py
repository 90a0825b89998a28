"""The ``code`` reward: run the completion's Python against the row's tests, sandboxed, fail closed.

The completion's last fenced code block (```` ```python ```` or a bare
```` ``` ````) is run in a warm sandbox (see :mod:`reward_plugins.code.sandbox`
and ``docs/sandbox.md``).  Tests come in the two shapes coding datasets use:
stdin/stdout cases (APPS, CodeContests, TACO), compared on the host, or
Python assert statements (MBPP, HumanEval).  Asserts are never run in the
program's process: those whose only use of the program is a call with
literal arguments are decided by the sandbox's collector from the calls'
plain results; any other assert tests run in a judge process of their own
that calls the program's process over a pipe and gets plain data or proxies
back.  Either way the program cannot forge a pass (``docs/sandbox.md``).

No sandbox, no run: where bubblewrap cannot isolate programs the parameters
do not bind (so ``data check``, ``score`` and ``train`` stop before any model
loads) with the cause and the remedy, unless unisolated runs are asked for
explicitly (``unsafe_unisolated=true`` or ``GRPO_HOST_CODE_UNISOLATED=1``);
then every run says so on stderr and every row is counted as
``code/unisolated``.

The reward runs with ``executor="process"``: each grpo-host worker process
keeps one warm sandbox of its own, so completions are scored on every core.
A completion has a budget inside the worker's own item bound (the wall
seconds :func:`grpo_host.time_left` gives, the host's backstop, since the
worker itself only waits): once a case times out or the budget is spent,
the remaining cases fail without running, so a hanging program is
penalised (0.0, or the share passed so far) rather than left unscored by
the outer timeout.  A case's ``timeout`` counts the CPU seconds of its
program, with a wall-clock backstop of three times that for a program that
waits (``Limits.backstop``): a busy machine does not fail a program a quiet
one passes.  A completion whose program was stopped so is counted, as
``code/program_timeouts`` (its CPU time) or ``code/program_backstops``
(waiting).
"""

from __future__ import annotations

import functools
import logging
import os
import time
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator
from typing_extensions import TypedDict  # pydantic needs this one before Python 3.12

from grpo_host import Scored, fenced_blocks, hookimpl, in_worker, reward, time_left
from reward_plugins.sandbox.output import same_output

from . import shapes
from .sandbox import Execution, Limits, Sandbox, announce_unisolated, isolation
from .shapes import Calls

__all__ = ["CodeParams", "IOCase", "code", "extract_code"]

log = logging.getLogger(__name__)

PYTHON = frozenset({"python", "python3", "py", "py3"})
UNISOLATED_ENV = "GRPO_HOST_CODE_UNISOLATED"
ITEM_TIMEOUT = 120.0
BUDGET_MARGIN = 2.0  # seconds kept back from the item timeout: a sandbox rebuild and the answer's grace
MAX_TESTS_BYTES = 1 << 20  # larger tests are a dataset's mistake: refused (None), not run


class IOCase(TypedDict):
    """One stdin/stdout case: the program reads ``input`` and must print ``output``."""

    input: str
    output: str


Tests = list[IOCase] | str
"""The ``tests`` column: stdin/stdout cases, or Python source with assert statements."""

_CASES = TypeAdapter(list[IOCase])


def unisolated_opt_in() -> bool:
    """``GRPO_HOST_CODE_UNISOLATED=1`` (or true/yes): the machine-wide opt-in to unisolated runs."""
    return os.environ.get(UNISOLATED_ENV, "").strip().lower() in ("1", "true", "yes")


class CodeParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pass_fail: bool = Field(False, description="1.0 only when every test passes, else 0.0 (no partial credit)")
    timeout: float = Field(5.0, gt=0, le=300, description="CPU seconds each test (each call, for literal-call "
                                                           "asserts) may use; one that waits instead (a sleep, a "
                                                           "blocked read) is stopped at 3 times that, wall clock")
    memory_mb: int = Field(1024, ge=32, le=1 << 20, description="memory of a program, in MiB: per process "
                                                               "(address space) and, where a cgroup can be had, in "
                                                               "total over all its processes")
    max_processes: int = Field(
        16, ge=1, le=4096, description="processes and threads a program may have at once (RLIMIT_NPROC and, where "
                                       "a cgroup can be had, pids.max)"
    )
    max_file_mb: int = Field(16, ge=0, le=1 << 20, description="largest file a program may write, in MiB")
    max_output_kb: int = Field(
        1024, ge=1, le=1 << 20, description="stdout+stderr read per program, in KiB; a program printing more fails"
    )
    unsafe_unisolated: bool = Field(
        False, description="where no sandbox can be had, run programs UNISOLATED (they can read and write your files "
                           "and reach your network) instead of refusing; same as GRPO_HOST_CODE_UNISOLATED=1; said on "
                           "stderr and counted per row as code/unisolated"
    )

    @model_validator(mode="after")
    def _sandbox_or_explicit_opt_in(self) -> CodeParams:
        found = isolation()
        if found.isolated:
            return self
        if not (self.unsafe_unisolated or unisolated_opt_in()):
            raise ValueError(
                f"the code reward refuses to run: no sandbox can isolate programs here ({found.reason}). "
                f"Remedy: {found.remedy}. To run completions' code UNISOLATED anyway, on this machine as this user, "
                f"set unsafe_unisolated=true in the reward's parameters or {UNISOLATED_ENV}=1"
            )
        announce_unisolated(found.reason)
        return self

    def limits(self) -> Limits:
        return Limits(
            timeout=self.timeout,
            memory=self.memory_mb << 20,
            processes=self.max_processes,
            file_size=self.max_file_mb << 20,
            max_output=self.max_output_kb << 10,
        )


def extract_code(text: str) -> str | None:
    """The last closed fenced block tagged python/py/python3 (in any case) or untagged; None without one."""
    found = [body for tag, body in fenced_blocks(text) if tag == "" or tag.lower() in PYTHON]
    return found[-1] if found else None


def _io_cases(tests: Any) -> tuple[IOCase, ...]:
    try:
        return tuple(_CASES.validate_python(tests))
    except ValidationError as exc:
        raise ValueError(
            f"column 'tests': expected a list of {{input, output}} strings or assert code: {exc}"
        ) from None


def _language_problem(language: Any) -> str | None:
    if language is None or str(language).strip() == "":
        return None
    if str(language).strip().lower() in PYTHON:
        return None
    return f"language {language!r} is not supported: the code reward runs Python only (such rows score None)"


@functools.cache
def _note_language(problem: str) -> None:
    log.warning("code reward: %s", problem)


def _tests_problem(tests: str) -> str | None:
    if len(tests.encode("utf-8", "surrogatepass")) > MAX_TESTS_BYTES:
        return f"tests are larger than {MAX_TESTS_BYTES >> 20} MiB (such rows score None)"
    try:
        shapes.test_names(tests)
    except SyntaxError as exc:
        return f"tests do not compile: {exc.msg} (line {exc.lineno})"
    except (ValueError, RecursionError, MemoryError) as exc:  # a null byte; nesting too deep for the parser
        return f"tests do not compile: {type(exc).__name__}: {exc}"
    if not shapes.owned(tests):
        return ("tests use no name of the program (only builtins and their own names), so they test nothing it "
                "wrote (such rows score None)")
    problem = shapes.problem(tests)
    return f"{problem} (such rows score None)" if problem else None


def check_row(row: Mapping[str, Any]) -> str | None:
    """``grpo-host data check``: the language is Python and assert tests compile (and fit)."""
    problem = _language_problem(row.get("language"))
    if problem:
        return problem
    tests = row.get("tests")
    return _tests_problem(tests) if isinstance(tests, str) else None


_sandbox: Sandbox | None = None


def shared_sandbox() -> Sandbox:
    """This process's warm sandbox (one per worker process), made on first use."""
    global _sandbox
    if _sandbox is None:
        _sandbox = Sandbox(owner=_scoring_process())
    return _sandbox


def _scoring_process() -> int | None:
    """In a grpo-host worker process, the process that started it: its end ends the programs at once.

    A worker notices its parent's end only when it next reads a task, after
    the current one (a program may have up to its row's whole timeout);
    the sandbox watches the parent itself.
    """
    return os.getppid() if in_worker() else None


def _budget() -> float:
    """Seconds this completion may take: what the host left of the item's timeout when it times the item, else
    the default."""
    left = time_left()
    return (ITEM_TIMEOUT if left is None else left) - BUDGET_MARGIN


@reward(
    name="code",
    requires={"tests": Tests},
    params=CodeParams,
    executor="process",
    timeout=ITEM_TIMEOUT,
    check_row=check_row,
    examples=[
        {"completion": "```python\nprint(sum(map(int, input().split())))\n```",
         "tests": [{"input": "1 2\n", "output": "3\n"}, {"input": "5 5\n", "output": "10"}], "score": 1.0},
        {"completion": "```python\ndef add(a, b):\n    return a + b if a else 0\n```",
         "tests": "assert add(1, 2) == 3\nassert add(0, 5) == 5", "score": 0.5},
        {"completion": "print(3)", "tests": [{"input": "", "output": "3"}], "score": 0.0},
    ],
)
def code(completion: str, *, tests: Any, params: CodeParams, language: Any = None, **_) -> Scored:
    """Runs the completion's last fenced code block (```python or bare ```) against the row's tests in a sandbox
    and returns the fraction of tests passed (pass_fail=true: 1.0 only when all pass, else 0.0).  `tests` is either a
    list of {"input", "output"} cases (the program gets `input` on stdin and passes when it exits with status 0
    and its stdout equals `output` line by line, trailing whitespace of each line and trailing blank lines
    ignored) or Python source with assert statements: each top-level assert is one test, a HumanEval-style
    `def check(candidate)` plus `check(f)` is one.  Asserts that only call the program with literal arguments are
    judged outside the program from its results, which must be builtin values (numbers, strings, bytes, None, and
    lists, tuples, sets and dicts of them; anything else fails), each function's calls in a process of its own;
    other asserts run in a judge process of their own that calls the program's process over a pipe: results come
    back as plain copies or as proxies of the program's objects (attributes and method calls only; equality by
    identity, no truth value, length or operators of the program's).  A test that times out, exceeds a limit or
    prints more than max_output_kb fails, and so does every test after it.  0.0 without a code block or when it does not
    compile; None when the row's `language` is not Python or its assert tests do not compile or use no name of
    the program (only builtins and their own).  The shape of a row comes from its tests alone: a program that
    re-binds a builtin (set = set, def sorted) changes neither the shape nor the tests' builtins.  Refuses to bind
    where no sandbox can be had unless unsafe_unisolated=true (rows then counted as code/unisolated)."""
    problem = _language_problem(language)
    if problem:
        _note_language(problem)
        return Scored(None)
    if isinstance(tests, str) and _tests_problem(tests):
        return Scored(None)
    io_cases = None if isinstance(tests, str) else _io_cases(tests)
    if io_cases == ():
        return Scored(None)
    deadline = time.monotonic() + _budget()
    source = extract_code(completion)
    if source is None:
        return Scored(0.0)
    sandbox = shared_sandbox()
    counts = {} if sandbox.isolated else {"unisolated": 1}
    limits = params.limits()
    if io_cases is not None:
        outcomes, stopped = _run_each(sandbox, source, [{"stdin": c["input"]} for c in io_cases], limits, deadline,
                                      lambda r, i: r.ok and same_output(r.stdout, io_cases[i]["output"]))
    else:
        if not shapes.compiles(source):  # every test fails, nothing needs to run
            return Scored(0.0, counts)
        plan = shapes.plan(tests)  # from the tests alone: nothing the program defines moves the row's shape
        if isinstance(plan, Calls):
            result = sandbox.run(source, calls=plan, limits=limits, budget=deadline - time.monotonic())
            outcomes, stopped = list(result.cases), result if result.status == "timeout" else None
        else:
            runs = [{"tests": case, "names": plan.names} for case in plan.cases]
            outcomes, stopped = _run_each(sandbox, source, runs, limits, deadline, lambda r, i: r.passed_asserts)
    if stopped is not None:  # a program stopped by its time limit: by its CPU seconds, or waiting at the backstop
        counts["program_backstops" if stopped.backstop else "program_timeouts"] = 1
    passed = sum(outcomes)
    if params.pass_fail:
        return Scored(float(passed == len(outcomes)), counts)
    return Scored(passed / len(outcomes), counts)


def _run_each(sandbox: Sandbox, source: str, runs: list[dict], limits: Limits, deadline: float,
              passed) -> tuple[list[bool], Execution | None]:
    """One program per case, in order; after a timeout, or with the budget spent, the remaining cases fail unrun.
    Returns the cases' verdicts and the run that timed out, if one did."""
    outcomes = []
    for i, run in enumerate(runs):
        left = deadline - time.monotonic()
        if left <= 0:
            break
        result = sandbox.run(source, limits=limits, budget=left, **run)
        outcomes.append(bool(passed(result, i)))
        if result.status == "timeout":
            return outcomes + [False] * (len(runs) - len(outcomes)), result
    return outcomes + [False] * (len(runs) - len(outcomes)), None


@hookimpl
def register_rewards(register):
    register(code)


@hookimpl
def register_probes(register):
    """The attacks ``grpo-host audit`` tries on code rewards (reward_plugins/code/probes.py) and the reference."""
    from . import probes

    for item in (probes.early_exit, probes.hard_exit, probes.harness_patching, probes.shadow_builtins,
                 probes.print_expected, probes.code_solution):
        register.add_probe(item)
