"""CMS's own functional tests for Batch tasks, judged through the contest reward's rows.

``tests/data/contest/cms/`` (``SOURCE.md``): three tasks of ``cmstestsuite`` (standard I/O; file I/O with
``input.txt`` / ``output.txt``; file I/O with a grader linked with the submission and a Python comparator under
CMS's checker protocol) and their C, C++ and Python submissions, each with the score CMS's ``Tests.py`` expects of
it. The rows go through :func:`problem_from_row`, so the columns ``input_file``, ``output_file``, ``grader``,
``submission_name`` and ``checker_protocol: cms`` are what is tested; Java too for the grader. Then attacks of our
own on the same tasks. Real sandboxes, real compilers; skipped, naming why, where the sandbox or a toolchain is
missing.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from contest_suites import CMS_BATCH as TASKS
from contest_suites import cms_batch_row as row

from reward_plugins.contest.judge import Problem, Program, judge
from reward_plugins.contest.languages import LANGUAGES, missing
from reward_plugins.contest.rows import RowProblem, problem_from_row
from reward_plugins.sandbox.bwrap import isolation

SUITE = Path(__file__).parent / "data" / "contest" / "cms"
EXTENSIONS = {".c": "c", ".cpp": "cpp", ".java": "java", ".py": "python"}
DEFAULTS = {"time_limit": 1.0, "memory_mb": 256, "output_mb": 16, "compare": "token", "float_tolerance": 1e-6}
QUICK = {"batch_fileio/correct-fileio.cpp", "batch_fileio/incorrect-fileio-with-stdio.cpp",
         "batch_fileio_managed/managed-correct.cpp", "batch_fileio_managed/managed-correct.py"}

pytestmark = pytest.mark.skipif(isolation().mode != "root", reason=f"the contest judge needs the code sandbox in "
                                f"root mode: {isolation().mode} ({isolation().reason or 'not root'})")


def problem(task: str) -> Problem:
    return problem_from_row(row(task), **DEFAULTS)


def cases() -> list:
    found = []
    for task, spec in TASKS.items():
        for stem, expected in spec["expect"].items():
            for path in sorted((SUITE / "code").glob(f"{stem}.*")):
                if path.suffix not in EXTENSIONS:  # Pascal and C# graders: tests/test_contest_graders.py
                    continue
                name = f"{task}/{path.name}"
                found.append(pytest.param(task, path, expected, id=name,
                                          marks=[] if name in QUICK else [pytest.mark.slow]))
    return found


def _judge(language: str, source: str, task_problem: Problem):
    if problem_text := missing(LANGUAGES[language]):
        pytest.skip(problem_text)
    return judge(Program(LANGUAGES[language], source), task_problem, deadline=time.monotonic() + 120)


# slow (most): each compiles and runs a program in the sandbox, ~1-3 s with a C++ or C compile on one core
@pytest.mark.parametrize(("task", "path", "expected"), cases())
def test_cms_submission_gets_its_score(task, path, expected):
    report = _judge(EXTENSIONS[path.suffix], path.read_text(), problem(task))
    assert report.score == expected, (report.verdicts, report.details, report.compile_log[-400:])


def test_the_suite_covers_each_kind_in_each_language():
    """Accepted and rejected submissions in C, C++ and Python for file I/O and for a grader (and Java's)."""
    found = {(param.values[0], param.values[1].suffix, param.values[2] == 1.0) for param in cases()}
    for task in ("batch_fileio", "batch_fileio_managed"):
        for suffix in (".c", ".cpp", ".py", *([".java"] if task == "batch_fileio_managed" else [])):
            assert (task, suffix, True) in found and (task, suffix, False) in found, (task, suffix)


@pytest.mark.slow  # three compiles and runs in the sandbox
def test_a_submission_with_its_own_main_does_not_link():
    """CMS compiles the grader and the submission into one program: a C or C++ submission that defines ``main``
    too fails to link, a compile error; a Python one's ``main`` is only a function the grader never calls."""
    with_main = "int userfunc(int x) { return x; }\nint main() { return 0; }\n"
    for language in ("c", "cpp"):
        report = _judge(language, with_main, problem("batch_fileio_managed"))
        assert report.verdicts == ["CE", "CE"] and "main" in report.compile_log, report.compile_log[-400:]
    py = ("def userfunc(x):\n    return x\n\ndef main():\n    print('correct 0')\n\n"
          "if __name__ == '__main__':\n    main()\n")
    assert _judge("python", py, problem("batch_fileio_managed")).score == 1.0


def test_a_task_without_a_grader_in_the_submissions_language_is_a_compile_error():
    go = judge(Program(LANGUAGES["go"], "package main\nfunc userfunc(x int) int { return x }\n"),
               problem("batch_fileio_managed"), deadline=time.monotonic() + 60)
    assert go.verdicts == ["CE", "CE"] and "C, C++, C#, Java, Pascal, Python or PyPy" in go.compile_log
    only_cpp = problem_from_row({**row("batch_fileio_managed"), "grader": {"grader.cpp": "int main() {}"}},
                                **DEFAULTS)
    python = judge(Program(LANGUAGES["python"], "def userfunc(x):\n    return x\n"), only_cpp,
                   deadline=time.monotonic() + 60)
    assert python.verdicts == ["CE", "CE"] and "no python grader (grader.cpp)" in python.compile_log


@pytest.mark.slow  # a compile and a run per attack, in the sandbox
def test_a_submission_cannot_reach_the_answer_or_the_checker():
    """File I/O with a checker: the answer and the checker are written only after the program is dead, in the
    judge's folder; the program looks for them everywhere it can and copies what it finds to its output, else
    prints a wrong answer.  Nothing it writes beside its output file exists (its folder is not its own)."""
    thief = r"""
import glob, os
found = ''
for pattern in ('/tmp/work/judge/*', '/tmp/work/*/*', '/tmp/work/*', '../*', '../*/*', '/tmp/*', '*.out', '*'):
    for path in glob.glob(pattern):
        try:
            text = open(path).read()
        except OSError:
            continue
        if text.startswith('correct') and path != 'output.txt':
            found = text
for name in ('answer', 'correct_output.txt', 'other.txt'):
    try:
        open(name, 'w').write('correct 0\n')
    except OSError:
        pass
open('output.txt', 'w').write(found or 'wrong\n')
"""
    for task in ("batch_fileio", "batch_fileio_managed"):
        source = thief if task == "batch_fileio" else "def userfunc(x):\n    return -1\n" + thief.replace(
            "open('output.txt'", "0 and open('output.txt'")
        report = _judge("python", source, problem(task))
        assert report.score == 0.0, (task, report.verdicts, report.details)


@pytest.mark.slow  # a compile and a run in the sandbox
def test_a_program_that_writes_to_the_graders_stdout_changes_only_its_own_output():
    """A grader shares the submission's process (CMS's Batch): what the submission prints to stdout goes where the
    grader's output goes.  With file I/O the output is the file, so a submission that prints the right line to
    stdout and returns the wrong value fails; on standard I/O its extra line makes the output wrong."""
    noisy = "#include <cstdio>\nint userfunc(int x) { printf(\"correct %d\\n\", x); return x + 1; }\n"
    assert _judge("cpp", noisy, problem("batch_fileio_managed")).score == 0.0
    stdio_grader = {"grader.cpp": "#include <cstdio>\nint userfunc(int);\nint main() { int n; scanf(\"%d\", &n); "
                                  "printf(\"correct %d\\n\", userfunc(n)); }\n"}
    stdio = problem_from_row({**row("batch_stdio"), "grader": stdio_grader}, **DEFAULTS)
    honest = "int userfunc(int x) { return x; }\n"
    assert _judge("cpp", honest, stdio).score == 1.0
    extra = "#include <cstdio>\nint userfunc(int x) { printf(\"correct %d\\n\", x); return x; }\n"
    assert _judge("cpp", extra, stdio).score == 0.0


def test_rows_name_what_is_wrong_with_a_grader_or_a_file_name():
    base = row("batch_fileio_managed")
    assert problem("batch_fileio_managed").submission_name == "batchfileiomanaged"
    bad = [({"grader": {"grader.rs": "fn main() {}"}}, "no C, C++, C#, Java, Pascal or Python source"),
           ({"grader": {"../grader.cpp": "int main() {}"}}, "not a plain file name"),
           ({"grader": ["grader.cpp"]}, "expected {file name: source}"),
           ({"submission_name": "my-task"}, "column 'submission_name'"),
           ({"submission_name": "grader"}, "named like the submission"),
           ({"input_file": "../input.txt"}, "column 'input_file'"),
           ({"output_file": ".hidden"}, "column 'output_file'"),
           ({"output_file": "input.txt"}, "name the same file"),
           ({"interactor": "int main() {}", "checker": None, "checker_protocol": "kattis"}, "not with an interactor")]
    for extra, message in bad:
        with pytest.raises(RowProblem) as refused:
            problem_from_row({**base, **extra}, **DEFAULTS)
        assert message in str(refused.value), (extra, refused.value)
