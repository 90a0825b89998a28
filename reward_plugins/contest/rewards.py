"""The ``contest`` reward: the completion's program judged as a competitive-programming judge would.

The completion's last closed code fence names the language (```` ```cpp ````,
```` ```java ````, ```` ```python ````; an untagged fence takes the row's
``language`` column, else the ``language`` parameter); a program of several
files is fenced blocks named by their files (```` ```user1.cpp ````,
:mod:`reward_plugins.contest.submission`).  The program is
compiled (cached by content) and run on every test in the sandbox of
:mod:`reward_plugins.contest.judge`, under the row's time and memory limits
per test; the checker (built in, or the row's testlib/Kattis special judge
or interactor, run in the sandbox as another uid) decides each test.

Score: the mean of the tests' scores (1 accepted, the checker's fraction
for partial credit, 0 failed), or with ``subtasks`` the points the groups
earned (``min``, ``mul`` or ``sum`` of their tests' scores) over all points;
``pass_fail`` gives 1.0 only when every test earns its full worth.  Counters
(``contest/ac``, ``contest/pc`` partially correct, ``contest/wa``,
``contest/tle``, ``contest/mle``, ``contest/re``, ``contest/ole``,
``contest/je`` a checker or sandbox failure, ``contest/skip``) count tests;
``contest/ce`` counts programs that did not compile (and ``contest/bad_files``
those whose files a judge would not take), ``contest/cached``
programs whose build came from the cache.

Budget: a completion's compiles, runs and checks may use :data:`ITEM_TIMEOUT`
CPU seconds in all (less a margin), within the host's wall-clock backstop for
the item; one stopped by it scores None and is counted (``contest/budget``),
never scored as failing the tests it did not run.

No sandbox, no run: the parameters do not bind where the sandbox cannot be
had in root mode, naming why; a language whose toolchain is not installed
scores None and is counted (``contest/no_toolchain``), with the system
package to install in the log and in ``data check``.
"""

from __future__ import annotations

import functools
import logging
import math
import time
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from grpo_host import Scored, hookimpl, reward, time_left

from .judge import Compile, JailUnavailable, Report, judge
from .languages import LANGUAGES, by_tag, missing
from .outputs import judge_outputs, output_files
from .rows import TEST_COLUMNS, RowProblem, problem_from_row
from .rules import RULES
from .submission import extract_program, program_of

__all__ = ["ContestParams", "check_row", "contest", "extract_program"]

log = logging.getLogger(__name__)

ITEM_TIMEOUT = 600.0
BUDGET_MARGIN = 5.0
MAX_SOURCE = 256 << 10  # judges cap a submission's size (Codeforces: 64 KiB); bounded hostile input


class ContestParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    language: str = Field("cpp", description="the language of an untagged code fence when the row has no "
                                             "`language` column (c, cpp, cpp14, cpp20, rust, go, java, kotlin, "
                                             "javascript, python, pypy3, ruby, php, pascal, csharp, haskell)")
    time_limit: float = Field(2.0, gt=0, le=60, description="CPU seconds per test when the row gives none")
    memory_mb: int = Field(256, ge=1, le=16384, description="memory per test in MiB when the row gives none")
    output_mb: int = Field(16, ge=1, le=256, description="largest output of a test, in MiB (more: OLE)")
    compare: str = Field("token", pattern="^(token|lines|exact|float)$",
                         description="built-in checker when the row has no `checker`: token (whitespace-separated "
                                     "tokens), lines, exact, float (tokens, numbers within float_tolerance)")
    float_tolerance: float = Field(1e-6, ge=0, description="absolute or relative error a number may have "
                                                           "(compare=float)")
    pass_fail: bool = Field(False, description="1.0 only when every test passes, else 0.0")
    stop_on_failure: bool = Field(False, description="stop at the first failed test (the rest count as skip), as "
                                                     "ICPC judges do; groups always stop at their first failure")
    compile_seconds: float = Field(30.0, gt=0, le=300, description="CPU seconds a compilation may take")
    compile_memory_mb: int = Field(2048, ge=64, le=16384, description="memory of one compiler process, in MiB")
    rules: Literal["kattis", "domjudge", "dmoj"] = Field(
        "kattis", description="whose rules decide where the reference judges differ: kattis (output stopped at the "
                              "cap: OLE; the stack is the memory limit; a Java class with main runs, public or not; "
                              "a sleeping program stopped at 2x its limit + 1 s), domjudge (output past the cap "
                              "thrown away and the program runs on: a flood is TLE, OLE only for one that ends; "
                              "unlimited stack, under the memory limit; stopped at its limit + max(1 s, 10%)), dmoj "
                              "(output stopped at the cap: OLE; unlimited stack; Java needs a public class, which "
                              "runs, else CE; stopped at 3x its limit); docs/contest.md")

    @model_validator(mode="after")
    def _sandbox(self) -> ContestParams:
        from reward_plugins.sandbox.bwrap import isolation

        found = isolation()
        if found.mode != "root":
            raise ValueError(
                f"the contest reward refuses to run: it needs the code sandbox in root mode (score as root, with "
                f"bubblewrap); here it is {found.mode!r}{': ' + found.reason if found.reason else ''}. "
                f"Remedy: {found.remedy or 'run the scoring process as root (CI, a container)'}")
        if by_tag(self.language) is None:
            raise ValueError(f"language {self.language!r} is not one of {', '.join(LANGUAGES)}")
        return self


def _problem(row: Mapping[str, Any], params: ContestParams):
    return problem_from_row(row, time_limit=params.time_limit, memory_mb=params.memory_mb,
                            output_mb=params.output_mb, compare=params.compare,
                            float_tolerance=params.float_tolerance)


def check_row(row: Mapping[str, Any]) -> str | None:
    """``grpo-host data check``: the tests, limits, checker and subtasks columns can be used, the row's language
    is known and its toolchain installed."""
    language = row.get("language")
    if language not in (None, ""):
        lang = by_tag(language)
        if lang is None:
            return f"column 'language': {language!r} is not one of {', '.join(LANGUAGES)}"
        if problem := missing(lang):
            return f"column 'language': {problem}"
    try:
        _problem(row, ContestParams.model_construct())
    except RowProblem as exc:
        return str(exc)
    return None


@functools.cache
def _note(problem: str) -> None:
    log.warning("contest reward: %s", problem)


def _deadline() -> float:
    """The wall-clock end of this completion's budget: inside the host's backstop for the item (:func:`time_left`,
    which time spent waiting for a CPU only lengthens); none outside an item the host timed.  The budget itself is
    the work's CPU seconds (:data:`ITEM_TIMEOUT` less :data:`BUDGET_MARGIN`): the compiles, runs and checks run in
    the sandbox, not in the worker whose CPU the host's item timeout counts."""
    left = time_left()
    return math.inf if left is None else time.monotonic() + left - BUDGET_MARGIN


@reward(
    name="contest",
    requires={TEST_COLUMNS: Any},
    params=ContestParams,
    executor="process",
    timeout=ITEM_TIMEOUT,
    check_row=check_row,
    examples=[
        {"completion": "```cpp\n#include <cstdio>\nint main(){long long a,b;scanf(\"%lld%lld\",&a,&b);"
                       "printf(\"%lld\\n\",a+b);}\n```",
         "tests": [{"input": "1 2\n", "output": "3\n"}, {"input": "5 5\n", "output": "10\n"}], "score": 1.0},
        {"completion": "```python\na, b = map(int, input().split())\nprint(a * b)\n```",
         "tests": [{"input": "2 2\n", "output": "4\n"}, {"input": "1 2\n", "output": "3\n"}], "score": 0.5},
        {"completion": "no code", "tests": [{"input": "", "output": "3"}], "score": 0.0},
    ],
)
def contest(completion: str, *, params: ContestParams, language: Any = None, **row: Any) -> Scored:
    """Judges the completion's last fenced code block (```cpp, ```c, ```rust, ```go, ```java, ```javascript, ```python;
    untagged: the row's `language`, else the `language` parameter) as a contest judge would: compiled in a sandbox
    (cached by content), run on each test under the row's CPU-time and memory limits (time_limit, memory_limit;
    CodeContests, TACO and LiveCodeBench columns are read too), its output checked by the row's testlib, Kattis or
    CMS `checker` (which may award partial credit per test), its `interactor`, or the built-in `compare` (token by
    default); the program may create files only where the row says `file_io` (true), as judges rule for batch tasks.
    Several source files: fenced blocks named by their files (```user1.cpp), compiled together (C, C++, Java; Python
    runs main.py), or with the row's `grader` where `submission_files` (["user1.%l", "user2.%l"]) names them.
    Task kinds: `output_only` (the completion's fenced blocks named output_000.txt, ... are the outputs; no program),
    `manager` (CMS communication through FIFOs; its printed outcome scores the test; `num_processes` instances at
    once), `two_steps` (CMS TwoSteps: the grader-linked program runs twice, joined by a FIFO), `validation_passes`
    (Kattis multi-pass: the program runs again on the validator's nextpass.in).
    Returns the mean of the tests' scores (1 accepted, a checker's fraction, 0 failed), or with `subtasks`
    ([{"points", "tests", "aggregate": min|mul|sum}]) the points the groups earned over all points; pass_fail=true:
    1.0 only when every test earns its full worth. 0.0 without a code block, in an unknown language, or when it does
    not compile. None when the row cannot be judged (named by data check) or the language's toolchain is not
    installed, or when the completion's budget (CPU seconds of its compiles, runs and checks) ran out before every
    test ran. Where the reference judges differ (an output flood, the stack, a Java class that is not public, the
    wall clock of a sleeping program), `rules` (kattis, domjudge, dmoj) says whose policy applies. Verdicts are
    counted: contest/ac, pc, wa, tle, mle, re, ole, je, skip (tests), ce, cached, budget (programs)."""
    row = {**row, "language": language}
    try:
        problem = _problem(row, params)
    except RowProblem as exc:
        _note(str(exc))
        return Scored(None, {"bad_row": 1})
    limits = Compile(seconds=params.compile_seconds, memory=params.compile_memory_mb << 20)
    if problem.output_only:  # the completion is the output files themselves: no program
        files = output_files(completion, len(problem.tests))
        if not files:
            return Scored(0.0, {"no_program": 1})
        try:
            report = judge_outputs(files, problem, deadline=_deadline(), compile_limits=limits,
                                   stop_on_failure=params.stop_on_failure, cpu_budget=ITEM_TIMEOUT - BUDGET_MARGIN)
        except JailUnavailable as exc:
            _note(str(exc))
            return Scored(None, {"je": 1})
        return _scored(report, report.counts(), params)
    program = program_of(completion, language or params.language,
                         problem.submission_files or ((problem.submission_name,) if problem.grader else ()),
                         tuple(name for name, _ in problem.grader))
    if isinstance(program, str):  # files a judge would not take (docs/contest.md, "Multi-file submissions")
        return Scored(0.0, {"ce": 1, "bad_files": 1})
    if program is None or sum(len(text.encode("utf-8", "surrogatepass"))
                              for text in program.files().values()) > MAX_SOURCE:
        return Scored(0.0, {"no_program": 1})
    if problem_text := missing(program.language):
        _note(problem_text)
        return Scored(None, {"no_toolchain": 1})
    try:
        report = judge(program, problem, deadline=_deadline(), compile_limits=limits,
                       stop_on_failure=params.stop_on_failure, cpu_budget=ITEM_TIMEOUT - BUDGET_MARGIN,
                       rules=RULES[params.rules])
    except JailUnavailable as exc:
        _note(str(exc))
        return Scored(None, {"je": 1})
    counts = {"ce": 1} if report.verdicts and report.verdicts[0] == "CE" else report.counts()
    counts["cached"] = int(report.cached)
    return _scored(report, counts, params)


def _scored(report: Report, counts: dict[str, int], params: ContestParams) -> Scored:
    """The report as the reward's score: None where the budget stopped it, else its score (or pass/fail)."""
    if report.stopped:  # tests left unrun are no failures of the program's: no score, counted
        return Scored(None, {**counts, "budget": 1})
    if params.pass_fail:  # every test accepted at its full worth
        return Scored(float(all(s == 1.0 for s in report.scores)), counts)
    return Scored(report.score, counts)


@hookimpl
def register_rewards(register):
    register(contest)


@hookimpl
def register_importers(register):
    """``grpo-host data import kattis|cms``: problem packages read into rows this reward judges
    (:mod:`reward_plugins.contest.packages`)."""
    from .packages import cms, kattis

    register.add_importer("kattis", kattis, "a Kattis/ICPC problem package folder (problem.yaml, data/, "
                                            "output_validators/)")
    register.add_importer("cms", cms, "a CMS task folder in the Italian YAML format (task.yaml, input/, output/, "
                                      "gen/GEN)")
