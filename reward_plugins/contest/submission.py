"""A completion's program: its last code block, or several source files, each a fenced block named by its file.

One grammar for every file a completion carries, the one output-only tasks read their outputs by
(:mod:`reward_plugins.contest.outputs`): a fenced block whose info string's first word is a file name (it has a
dot or a slash and is no language tag) is that file::

    ```user1.cpp
    int userfunc1(int x) { return x; }
    ```

Where a completion has blocks named like sources or headers (``.c``, ``.cpp``, ``.cc``, ``.java``, ``.py``, ``.h``,
...), they are the program, in the language their extension names (the row's or the parameter's dialect where it
is of that language: ``cpp20`` for ``.cpp``, ``pypy3`` for ``.py``); a block named otherwise (``notes.txt``) is not
part of it, as DOMjudge ignores a submission's file of no known extension.  Without named blocks the program is
the last code block, as before.  Judges' semantics for the files (``docs/contest.md``, "Multi-file submissions"):

* a task that names its files (the row's ``submission_files``, CMS's submission format ``user1.%l``,
  ``user2.%l``; a task with a ``grader``: ``submission_name``) takes exactly those, compiled with its grader or stub
  into one program, as CMS's ``Communication`` and ``TwoSteps`` compile them;
* otherwise every source is compiled together (DOMjudge's and Kattis's C and C++: all the sources; Java: all the
  ``.java`` files, run from the class that declares ``main``), and a Python program runs its entry file: the one
  named ``main.*``, else the first by name (problemtools ``mainfile``), with the others importable beside it.

Names are hostile input: a name with a folder, ``..``, a leading dot or a NUL, two blocks of one name, a name the
task's grader already has, more than :data:`MAX_FILES` files, sources in two languages, or a multi-file program in a
language judged one file at a time are refused as a compile error naming the file; nothing is written under a name
that is not a plain file name in the program's folder.
"""

from __future__ import annotations

import os

from grpo_host import fenced_blocks

from .judge import MULTI_FILE, Program
from .languages import LANGUAGES, Language, by_tag

__all__ = ["MAX_FILES", "extract_program", "named_blocks", "program_of"]

MAX_FILES = 16
CPP_EXTENSIONS = (".cpp", ".cc", ".cxx", ".c++", ".C")  # problemtools' C++ files
HEADERS = (".h", ".hpp", ".hh", ".hxx")
SOURCES: dict[str, str] = {**{os.path.splitext(lang.source)[1]: lang.name for lang in reversed(LANGUAGES.values())},
                           **dict.fromkeys(CPP_EXTENSIONS, "cpp")}
"""The language each source extension names: the first in :data:`LANGUAGES` with it (``.py`` Python, not PyPy)."""


def named_blocks(completion: str) -> list[tuple[str, str]]:
    """Every closed fenced block named by a file, in order: (the name as written, the file's text: the block's lines
    with a final newline, or empty)."""
    return [(tag, body + "\n" if body else "") for tag, body in fenced_blocks(completion)
            if tag and by_tag(tag) is None and any(c in tag for c in "./\\")]


def extract_program(text: str, fallback: str | None) -> tuple[str | None, str | None]:
    """(language tag, source) of the last closed fenced block; the tag is ``fallback`` for an untagged fence."""
    blocks = fenced_blocks(text)
    if not blocks:
        return None, None
    tag, body = blocks[-1]
    return tag or fallback, body + "\n"


def _family(lang: Language) -> str | None:
    """The language an extension names for ``lang``'s files (``cpp`` for every C++ dialect, ``python`` for PyPy)."""
    return SOURCES.get(os.path.splitext(lang.source)[1])


def _plain(name: str) -> bool:
    """A file name in the program's folder: no folder, no ``..``, no leading dot, no NUL, at most 255 bytes."""
    return not any(c in name for c in "/\\\0") and not name.startswith(".") and 0 < len(
        name.encode("utf-8", "surrogatepass")) <= 255


def program_of(completion: str, fallback: str | None, expected: tuple[str, ...] = (),
               grader: tuple[str, ...] = ()) -> Program | str | None:
    """The completion's program; a ``str``: why its files are refused (a compile error); None: it has none (no code
    block, or one in no language).  ``expected``: the stems of the files the task names (empty: any); ``grader``:
    the names of the task's own files, which a submitted file may not take."""
    files = [(name, text) for name, text in named_blocks(completion)
             if (ext := os.path.splitext(name)[1]) in SOURCES or ext in HEADERS]
    if not files:
        tag, source = extract_program(completion, fallback)
        lang = by_tag(tag)
        if source is None or lang is None:
            return None
        if len(expected) > 1:
            ext = os.path.splitext(lang.source)[1]
            return (f"error: this task's submission is {len(expected)} files ({', '.join(s + ext for s in expected)}),"
                    f" each a fenced block named by its file (```{expected[0]}{ext})")
        return Program(lang, source)
    names = [name for name, _ in files]
    if bad := next((n for n in names if not _plain(n)), None):
        return f"error: {bad[:60]!r} is not a plain file name (no folder, no '..', no leading dot)"
    if twice := next((n for n in names if names.count(n) > 1), None):
        return f"error: the file {twice!r} comes twice"
    if len(files) > MAX_FILES:
        return f"error: {len(files)} files: a submission has at most {MAX_FILES}"
    if clash := next((n for n in names if n in grader), None):
        return f"error: {clash!r} is a file of the task's own (its grader)"
    sources = [(n, t) for n, t in files if os.path.splitext(n)[1] in SOURCES]
    families = sorted({SOURCES[os.path.splitext(n)[1]] for n, _ in sources})
    if not families:
        return f"error: no source file among {', '.join(names)}"
    if len(families) > 1:
        return f"error: the files are in several languages ({', '.join(families)}): a submission is in one"
    chosen = by_tag(fallback)
    lang = chosen if chosen is not None and _family(chosen) == families[0] else LANGUAGES[families[0]]
    headers = [n for n in names if os.path.splitext(n)[1] in HEADERS]
    if headers and families[0] not in ("c", "cpp"):
        return f"error: {headers[0]!r}: a header goes with C or C++ sources, not {lang.name}"
    if expected:
        wanted = {stem: stem + os.path.splitext(lang.source)[1] for stem in expected}
        if extra := next((n for n in names if os.path.splitext(n)[0] not in wanted or n in headers), None):
            return f"error: {extra!r} is not one of this task's files ({', '.join(wanted.values())})"
        if absent := next((f for s, f in wanted.items() if s not in {os.path.splitext(n)[0] for n in names}), None):
            return f"error: {absent!r} was not submitted (this task's files: {', '.join(wanted.values())})"
    elif len(sources) > 1 and lang.name not in MULTI_FILE:
        return (f"error: a {lang.name} program is one file here ({', '.join(n for n, _ in sources)}); several are "
                f"judged in {', '.join(sorted(MULTI_FILE))}")
    if lang.name not in MULTI_FILE and not grader:
        return Program(lang, sources[0][1])
    return Program(lang, "\n".join(text for _, text in sources), tuple(files))
