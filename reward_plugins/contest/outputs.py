"""Output-only tasks: the completion is each test's output file itself, judged as CMS's ``OutputOnly`` judges it.

CMS (cms-dev/cms ``cms/grading/tasktypes/OutputOnly.py``, commit ``c3659b810cfd1fab37904f6c6148d460f2854eff``):
no program is compiled or run; the submission is a set of files named ``output_<codename>.txt``, one per test
(``USER_OUTPUT_FILENAME_TEMPLATE``); a test whose file was not submitted scores 0 ("File not submitted"); a
submitted one is compared with the test's answer by the white diff or by the task's comparator
(``eval_output`` in ``cms/grading/tasktypes/util.py``), as a Batch task's output is.  A test's codename is its
index in three digits (``000``, ``001``, ...), as ``cmscontrib/loaders/italy_yaml.py`` names them.

A completion carries the files as fenced blocks whose info string is the file's name::

    ```output_000.txt
    123
    ```

The block's lines are the file (a final newline added, as a file's last line ends); where a name comes twice the
last block counts, as the last code block does for a program.  Only the names the task expects are read: any
other block (a name with a folder, ``..``, or another test's number) is ignored, and nothing is written under a
name the completion chose; the files reach the checker as the server's own ``output`` file.
"""

from __future__ import annotations

import math
import time

from .judge import Compile, Problem, Report, Verdict, _checker_verdict, _cpu, check, grade, jail_for, token_match
from .languages import LANGUAGES
from .submission import named_blocks

__all__ = ["file_name", "judge_outputs", "output_files"]


def file_name(test: int) -> str:
    """The file a test's output is submitted as (CMS: ``output_%s.txt`` % the test's codename)."""
    return f"output_{test:03d}.txt"


def output_files(completion: str, tests: int) -> dict[int, str]:
    """The submitted outputs by test index: the last fenced block named ``output_<codename>.txt`` for each test."""
    wanted = {file_name(i): i for i in range(tests)}
    found: dict[int, str] = {}
    for name, text in named_blocks(completion):  # the reader a multi-file program's sources are read by too
        if name in wanted:
            found[wanted[name]] = text
    return found


def judge_outputs(files: dict[int, str], problem: Problem, *, deadline: float, compile_limits: Compile,
                  stop_on_failure: bool = False, cpu_budget: float = math.inf) -> Report:
    """Each test's submitted output checked against its answer (the row's checker, run in the sandbox as the judge's
    uid, or the built-in comparison; no sandbox without a checker); a missing file is WA with score 0, a file over
    the output cap OLE.  Groups, the budget and ``stop_on_failure`` as :func:`reward_plugins.contest.judge.judge`
    has them."""
    spent = [0.0]
    checker = problem.checker
    jail = jail_for(frozenset({checker.language})) if checker is not None else None

    def build() -> dict:
        """The checker built (or found in the sandbox's cache: a sandbox rebuilt since builds it again)."""
        assert checker is not None and jail is not None
        made = jail.compile(LANGUAGES[checker.language], dict(checker.files), checker.compile_argv(),
                            compile_limits, judge=True)
        spent[0] += made["cpu"]
        return made

    if checker is not None and (made := build())["status"] != "ok":
        return Report(["JE"] * len(problem.tests), 0.0, f"checker: {made['log']}")

    def one(i: int) -> tuple[Verdict, float, str]:
        output = files.get(i)
        if output is None:
            return "WA", 0.0, f"file not submitted ({file_name(i)})"
        data = output.encode("utf-8", "surrogatepass")
        if len(data) > problem.output:
            return "OLE", 0.0, f"{file_name(i)}: {len(data)} bytes, over the output cap"
        test = problem.tests[i]
        if checker is None:
            return ("AC", 1.0, "") if token_match(output, test.answer, problem) else ("WA", 0.0, "")
        if (made := build())["status"] != "ok":
            return "JE", 0.0, f"checker: {made['log']}"
        assert jail is not None and checker is not None
        result = check(jail, problem, made["key"], [test.input.encode("utf-8", "surrogatepass"),
                                            test.answer.encode("utf-8", "surrogatepass"), data])
        spent[0] += _cpu(result)
        verdict, score, why = _checker_verdict(result, checker.protocol, problem.score_max)
        return verdict, score, (why + " " + str(result.get("message", ""))[-500:]).strip()

    return grade(problem, one, lambda: time.monotonic() > deadline or spent[0] >= cpu_budget, stop_on_failure)

