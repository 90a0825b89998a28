"""The ``code`` reward: run the completion's Python against the row's tests, sandboxed.

The completion's last fenced code block (```` ```python ```` or a bare
```` ``` ````) is run once per test in a warm sandbox (see
:mod:`reward_plugins.code.sandbox`).  Tests come in the two shapes coding
datasets use: stdin/stdout cases (APPS, CodeContests, TACO) or Python assert
statements run after the code (MBPP, HumanEval).

The reward runs with ``executor="process"``: each grpo-host worker process
keeps one warm sandbox of its own, so completions are scored on every core,
and the worker's outer timeout (SIGALRM inside, SIGKILL from outside) bounds
a whole completion on top of the per-program limits the sandbox enforces.
A killed worker takes its sandbox with it (``--die-with-parent``).
"""

from __future__ import annotations

import ast
import functools
import logging
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator
from typing_extensions import TypedDict  # pydantic needs this one before Python 3.12

from grpo_host import hookimpl, reward

from .sandbox import Limits, Sandbox, SandboxUnavailable, isolation

__all__ = ["CodeParams", "IOCase", "code", "extract_code", "same_output"]

log = logging.getLogger(__name__)

PYTHON = frozenset({"python", "python3", "py", "py3"})


class IOCase(TypedDict):
    """One stdin/stdout case: the program reads ``input`` and must print ``output``."""

    input: str
    output: str


Tests = list[IOCase] | str
"""The ``tests`` column: stdin/stdout cases, or Python source with assert statements."""

_CASES = TypeAdapter(list[IOCase])


class CodeParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pass_fail: bool = Field(False, description="1.0 only when every test passes, else 0.0 (no partial credit)")
    timeout: float = Field(5.0, gt=0, le=300, description="wall-clock seconds each test program may run")
    memory_mb: int = Field(1024, ge=32, le=1 << 20, description="address-space limit of each program, in MiB")
    max_processes: int = Field(
        16, ge=1, le=4096, description="processes and threads a program may have at once (RLIMIT_NPROC)"
    )
    max_file_mb: int = Field(16, ge=0, le=1 << 20, description="largest file a program may write, in MiB")
    max_output_kb: int = Field(
        1024, ge=1, le=1 << 20, description="stdout+stderr read per program, in KiB; a program printing more fails"
    )
    require_isolation: bool = Field(
        False, description="refuse to run (an error) where no bubblewrap sandbox is available, instead of warning"
    )

    @model_validator(mode="after")
    def _isolation_available(self) -> CodeParams:
        if self.require_isolation and not isolation().isolated:
            raise ValueError(f"require_isolation=true but no sandbox is available here: {isolation().reason}")
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
    """The last closed fenced block tagged python/py/python3 or untagged; None without one.

    A line-by-line scan (linear in the completion's length): a fence opens on
    a line starting with three backticks and closes on a line of only them.
    """
    found, block, tag = None, None, ""
    for line in text.splitlines():
        stripped = line.strip()
        if block is None:
            if stripped.startswith("```"):
                info = stripped[3:].strip().lower()
                tag, block = (info.split()[0] if info else ""), []
        elif stripped.startswith("```") and not stripped.strip("`"):
            if tag == "" or tag in PYTHON:
                found = "\n".join(block)
            block = None
        else:
            block.append(line)
    return found


def same_output(actual: str, expected: str) -> bool:
    """Equal line by line after stripping trailing whitespace from each line, ignoring trailing blank lines."""
    return _lines(actual) == _lines(expected)


def _lines(text: str) -> list[str]:
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


@dataclass(frozen=True)
class _Case:
    stdin: str | None = None
    output: str | None = None
    tests: str | None = None


@functools.lru_cache(maxsize=1024)
def _assert_cases(tests: str) -> tuple[_Case, ...]:
    """Split assert-style tests into one case per top-level ``assert``.

    Each case runs the top-level statements that are not asserts and come
    before it (imports, helpers, set-up), then the assert.  Source without a
    top-level assert (e.g. HumanEval's ``def check(candidate): ...`` plus a
    call) is a single case.  Cached: a group shares one row's tests.
    Raises SyntaxError when the tests do not compile.
    """
    tree = ast.parse(tests)
    asserts = [i for i, node in enumerate(tree.body) if isinstance(node, ast.Assert)]
    if not asserts:
        return (_Case(tests=tests),)
    cases = []
    for i in asserts:
        body = [node for node in tree.body[:i] if not isinstance(node, ast.Assert)] + [tree.body[i]]
        cases.append(_Case(tests=ast.unparse(ast.Module(body=body, type_ignores=[]))))
    return tuple(cases)


def _cases(tests: Any) -> tuple[_Case, ...]:
    if isinstance(tests, str):
        return _assert_cases(tests)
    try:
        return tuple(_Case(stdin=c["input"], output=c["output"]) for c in _CASES.validate_python(tests))
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


def check_row(row: dict[str, Any]) -> str | None:
    """``grpo-host data check``: the language is Python and assert tests compile."""
    problem = _language_problem(row.get("language"))
    if problem:
        return problem
    tests = row.get("tests")
    if isinstance(tests, str):
        try:
            _assert_cases(tests)
        except SyntaxError as exc:
            return f"tests do not compile: {exc.msg} (line {exc.lineno})"
    return None


_sandbox: Sandbox | None = None


def shared_sandbox(require_isolation: bool = False) -> Sandbox:
    """This process's warm sandbox (one per worker process), made on first use."""
    global _sandbox
    if _sandbox is None:
        _sandbox = Sandbox(require_isolation=require_isolation)
    elif require_isolation and not _sandbox.isolated:
        raise SandboxUnavailable(f"require_isolation=true but this process runs code unisolated: {_sandbox.reason}")
    return _sandbox


@reward(
    name="code",
    requires={"tests": Tests},
    params=CodeParams,
    executor="process",
    timeout=120.0,
    check_row=check_row,
    examples=[
        {"completion": "```python\nprint(sum(map(int, input().split())))\n```",
         "tests": [{"input": "1 2\n", "output": "3\n"}, {"input": "5 5\n", "output": "10"}]},
        {"completion": "```python\ndef add(a, b):\n    return a + b if a else 0\n```",
         "tests": "assert add(1, 2) == 3\nassert add(0, 5) == 5"},
        {"completion": "print(3)", "tests": [{"input": "", "output": "3"}]},
    ],
)
def code(completion: str, *, tests: Any, params: CodeParams, language: Any = None, **_) -> float | None:
    """Runs the completion's last fenced code block (```python or bare ```) once per test in a sandbox and
    returns the fraction of tests passed (pass_fail=true: 1.0 only when all pass, else 0.0).  `tests` is either a
    list of {"input", "output"} cases (the program gets `input` on stdin and passes when it exits with status 0
    and its stdout equals `output` line by line, trailing whitespace of each line and trailing blank lines
    ignored) or Python source with assert statements (each top-level assert is one test, run after the code and
    after the non-assert statements before it, with stdin closed; it passes when the asserts run to the end).
    A program that times out, exceeds a limit or prints more than max_output_kb fails.  0.0 without a code
    block; None when the row's `language` is not Python or its assert tests do not compile."""
    problem = _language_problem(language)
    if problem:
        _note_language(problem)
        return None
    try:
        cases = _cases(tests)
    except SyntaxError:
        return None
    if not cases:
        return None
    source = extract_code(completion)
    if source is None:
        return 0.0
    sandbox = shared_sandbox(params.require_isolation)
    limits = params.limits()
    passed = 0
    for case in cases:
        result = sandbox.run(source, tests=case.tests, stdin=case.stdin, limits=limits)
        if case.tests is not None:
            ok = result.passed_asserts
        else:
            ok = result.ok and same_output(result.stdout, case.output or "")
        if ok:
            passed += 1
        elif params.pass_fail:
            return 0.0
    return passed / len(cases)


@hookimpl
def register_rewards(register):
    register(code)
