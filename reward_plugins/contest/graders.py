"""Graders compiled with the submission: the contestant writes a function, the task's grader has ``main``.

CMS's Batch task type with ``compilation: grader`` (``cms/grading/tasktypes/Batch.py``), the IOI shape and the
shape of function-implementation datasets: the grader's sources (``grader.cpp``, ``grader.c``, ``grader.java``,
``grader.py``, ``grader.pas``, ``grader.cs``) and headers are compiled together with the submission, grader first,
into one program; the submission is the file ``<submission_name>.<ext>`` (CMS: the task's name, which a Python
grader imports, a Pascal grader ``uses`` as a unit and a Java or C# grader calls as a class).  Each language is
compiled as CMS's ``cms/grading/languages/<language>.py`` compiles a grader with a submission:

* C, C++ (every dialect), Java and C#: the compiler gets the grader's sources and the submission (``gcc``,
  ``g++``, ``javac``, ``mcs``).  A C or C++ submission that defines its own ``main`` fails to link, a compile
  error, as CMS reports it; a Java grader's class runs (``grader``), and a submission whose public class is not
  named ``<submission_name>`` does not compile; C#'s program is the one assembly, its ``Main`` the grader's.
* Pascal: ``fpc`` compiles the grader alone (CMS passes it ``source_filenames[0]``: fpc takes one source), which
  ``uses`` the submission as a unit that fpc finds by its file name, ``<submission_name>.pas``.
* Python and PyPy: the grader is the program's entry and imports the submission as a module, as CMS packs the
  grader as ``__main__``; it runs without ``-I`` (which would leave the script's folder off ``sys.path``), still
  with ``-E -s -S`` (no environment, no site).

The grader runs in the submission's process, in the program's sandbox, under the program's limits: it guards
nothing the submission could forge (CMS's Batch is the same); a task that must keep a secret from the contestant
uses an interactor.
"""

from __future__ import annotations

import os

from .languages import Language

__all__ = ["GRADED", "PY_CHECK", "link"]

_CPP = (".cpp", ".cc", ".cxx")
GRADED = {"c": (".c",), "cpp": _CPP, "cpp14": _CPP, "cpp20": _CPP, "java": (".java",), "python": (".py",),
          "pypy3": (".py",), "pascal": (".pas",), "csharp": (".cs",)}
"""The languages a grader is linked with (CMS's ``MANAGER_LANGUAGES`` that the reward runs), and the extensions of
the grader's sources in each."""
UNITS = frozenset({"pascal"})
"""Languages whose compiler gets the grader alone, which names the submission as a unit it uses (fpc)."""
PY_CHECK = "import sys\nfor name in sys.argv[1:]:\n    compile(open(name, 'rb').read(), name, 'exec')"
"""Python's compile step (a syntax check of every file named after it), for graders and Python judges alike."""
_NAMES = "C, C++, C#, Java, Pascal, Python or PyPy"


def link(lang: Language, submission: dict[str, str], grader: tuple[tuple[str, str], ...], tools: dict[str, str],
         memory_mb: int) -> tuple[dict[str, str], list[str], list[str]] | str:
    """(files, compile argv, run argv) of the submission's files (``<submission_name>.<ext>``, or the several a task
    names, CMS's ``user1.%l``, ``user2.%l``) compiled with the task's grader, or why it cannot be (a compile error:
    the task has no grader in the submission's language)."""
    if lang.name not in GRADED:
        return f"error: this task's grader is linked with {_NAMES} submissions only, not {lang.name} (CMS: a " \
               "grader per language)"
    sources = [file for file, _ in grader if file.endswith(GRADED[lang.name])]
    if not sources:
        return f"error: this task has no {lang.name} grader ({', '.join(f for f, _ in grader)})"
    files = {**dict(grader), **submission}
    if lang.source.endswith(".py"):  # the language's own syntax check, of every file; the grader runs
        check, run = lang.compile.index("-c") + 1, lang.run.index("main.py")
        compile_argv = [*(part.format(**tools) for part in lang.compile[:check]), PY_CHECK, *sources, *submission]
        flags = [flag for part in lang.run[1:run] for flag in (("-E", "-s") if part == "-I" else (part,))]
        return files, compile_argv, [lang.run[0].format(**tools), *flags, sources[0]]
    named = [sources[0]] if lang.name in UNITS else [*sources, *submission]
    compile_argv = []
    for part in lang.compile:
        is_source = part in (lang.source, "{source}")  # the submission's file in the language's command
        compile_argv += named if is_source else [part.format(**tools, source=next(iter(submission)))]
    main = os.path.splitext(sources[0])[0]  # Java: the grader's class runs, as CMS's evaluation names it
    return files, compile_argv, [part.format(**tools, source="", memory_mb=memory_mb, main=main) for part in lang.run]
