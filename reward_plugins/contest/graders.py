"""Graders compiled with the submission: the contestant writes a function, the task's grader has ``main``.

CMS's Batch task type with ``compilation: grader`` (``cms/grading/tasktypes/Batch.py``), the IOI shape and the
shape of function-implementation datasets: the grader's sources (``grader.cpp``, ``grader.c``, ``grader.java``,
``grader.py``) and
headers are compiled together with the submission, grader first, into one program; the submission is the file
``<submission_name>.<ext>`` (CMS: the task's name, which a Python grader imports and a Java grader calls as a
class).  A C or C++ submission that defines its own ``main`` fails to link, a compile error, as CMS reports it; a
Java grader's class runs (``grader``), and a submission whose public class is not named ``<submission_name>``
does not compile.  A Python grader is the program's
entry and imports the submission as a module, as CMS's Python packs the grader as ``__main__``; it runs without
``-I`` (which would leave the script's folder off ``sys.path``), still with ``-E -s -S`` (no environment, no site).

The grader runs in the submission's process, in the program's sandbox, under the program's limits: it guards
nothing the submission could forge (CMS's Batch is the same); a task that must keep a secret from the contestant
uses an interactor.
"""

from __future__ import annotations

import os

from .languages import Language

__all__ = ["GRADED", "PY_CHECK", "link"]

GRADED = {"c": (".c",), "cpp": (".cpp", ".cc", ".cxx"), "java": (".java",), "python": (".py",)}
"""The languages a grader is linked with, and the extensions of the grader's sources in each."""
PY_CHECK = "import sys\nfor name in sys.argv[1:]:\n    compile(open(name, 'rb').read(), name, 'exec')"
"""Python's compile step (a syntax check of every file named after it), for graders and Python judges alike."""


def link(lang: Language, submission: dict[str, str], grader: tuple[tuple[str, str], ...], tools: dict[str, str],
         memory_mb: int) -> tuple[dict[str, str], list[str], list[str]] | str:
    """(files, compile argv, run argv) of the submission's files (``<submission_name>.<ext>``, or the several a task
    names, CMS's ``user1.%l``, ``user2.%l``) compiled with the task's grader, or why it cannot be (a compile error:
    the task has no grader in the submission's language)."""
    if lang.name not in GRADED:
        return (f"error: this task's grader is linked with C, C++, Java or Python submissions only, not "
                f"{lang.name} (CMS: a grader per language)")
    sources = [file for file, _ in grader if file.endswith(GRADED[lang.name])]
    if not sources:
        return f"error: this task has no {lang.name} grader ({', '.join(f for f, _ in grader)})"
    files = {**dict(grader), **submission}
    if lang.name == "python":
        compile_argv = [tools["python"], "-I", "-S", "-B", "-c", PY_CHECK, *sources, *submission]
        return files, compile_argv, [tools["python"], "-E", "-s", "-S", "-B", sources[0]]
    compile_argv = []
    for part in lang.compile:
        named = part in (lang.source, "{source}")  # the submission's file in the language's command
        compile_argv += [*sources, *submission] if named else [part.format(**tools, source=next(iter(submission)))]
    main = os.path.splitext(sources[0])[0]  # Java: the grader's class runs, as CMS's evaluation names it
    return files, compile_argv, [part.format(**tools, source="", memory_mb=memory_mb, main=main) for part in lang.run]
