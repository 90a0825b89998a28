"""Dataset rows as problems: the contest reward's own columns, and the shapes CodeContests, TACO/APPS and
LiveCodeBench publish, mapped onto them.

Columns (all but the tests optional):

* tests, one of: ``tests`` (a list of ``{"input", "output"}``), CodeContests'
  ``public_tests`` / ``private_tests`` / ``generated_tests`` (``{"input": [...],
  "output": [...]}``, all used, in that order), TACO's and APPS'
  ``input_output`` (JSON ``{"inputs": [...], "outputs": [...]}``; a
  ``fn_name`` means call-based tests, which this reward does not judge),
  LiveCodeBench's ``public_test_cases`` / ``private_test_cases`` (JSON lists
  of ``{"input", "output", "testtype"}``; the private ones may be
  base64-zlib-pickled, unpickled here with no class allowed: a string only);
* ``time_limit``: seconds (a number, ``"2 seconds"``, or CodeContests'
  ``{"seconds", "nanos"}``); ``memory_limit``: MiB (a number or
  ``"256 megabytes"``), or ``memory_limit_bytes`` (CodeContests);
* ``checker`` / ``interactor``: C++ source (a string, or ``{file name:
  source}`` for several files) and ``checker_protocol`` (``testlib``, the
  default, ``kattis``, or ``cms`` for a checker; DMOJ's ``default``,
  ``coci``, ``peg`` for a checker, ``default`` and ``coci`` for an
  interactor, ``dmoj`` for a Python ``check()`` module); ``score_max``: a
  checker's full credit for one test in its own units (default 1);
  ``checker_language`` (``c``, ``cpp``, ``python``, ``rust``, or DMOJ's
  ``lang`` names) where the files' suffixes do not say it, and
  ``checker_flags`` (``-D``/``-U`` flags for a C or C++ judge);
* ``compare`` (``token``, ``lines``, ``exact``, ``float``, or DMOJ's ``easy``,
  ``linecount``, ``sorted``, ``unordered``, ``rstripped``, ``identical``), ``float_tolerance``;
  ``case_sensitive`` (default true; false: ``token`` and ``float`` compare
  letters ignoring case, as Kattis's default validator and DOMjudge's compare do by default);
* ``subtasks``: ``[{"points": 30, "tests": [0, 1, 2], "aggregate": "min"}, ...]``
  (``aggregate``: ``min``, the default, ``mul`` or ``sum``);
* ``file_io``: true when the task reads or writes files of its own (its
  program may then create files in its folder; by default it may not, as
  judges rule for batch tasks);
* ``input_file`` / ``output_file``: file I/O as CMS and USACO run it: the
  test's input is that file in the program's folder (stdin empty), its
  output is what it wrote to that file (stdout thrown away);
* ``grader``: ``{file name: source}`` compiled with the submission (CMS's
  Batch with a grader: ``grader.cpp``, ``grader.c``, ``grader.py``, headers),
  and ``submission_name``, the submission's file stem the grader includes or
  imports (default ``solution``);
* ``submission_files``: the files a submission must be, as CMS's submission
  format names them (``["user1.%l", "user2.%l"]``, ``%l`` the language's
  extension; 1 to 8 plain names), each a fenced block named by its file
  (:mod:`reward_plugins.contest.submission`), compiled with the ``grader``
  (CMS's Communication with several processes, TwoSteps' ``first.%l``,
  ``second.%l``); instead of ``submission_name``;
* ``manager``: CMS's Communication: the manager's files (C++, or a Python
  script), which talks to the program through FIFOs and prints the test's
  outcome; ``user_io``: ``std_io`` (the program's stdin and stdout, the
  default without a ``grader``) or ``fifo_io`` (the FIFOs' paths as its
  arguments, the default with a ``grader``: CMS's stub, linked with the
  submission as a grader is); ``num_processes``: how many instances of
  the program talk to the manager at once (1 to 8, default 1), each with
  FIFOs of its own and its 0-based index as its last argument where there
  are several, their CPU seconds summed against the time limit (CMS);
* ``two_steps``: true for CMS's TwoSteps tasks: the ``grader`` (CMS's
  ``manager.%l`` and headers) linked with the submission runs as two
  instances joined by a FIFO, the first reading the input, the second
  writing the output that is checked;
* ``validation_passes``: Kattis multi-pass: the most passes (2 or more);
  the ``checker``, a Kattis output validator, may write ``nextpass.in``,
  the program's input for the next pass;
* ``output_only``: true for CMS's OutputOnly tasks: the completion is each
  test's output file, ``output_000.txt``, ``output_001.txt``, ... as fenced
  blocks named so (:mod:`reward_plugins.contest.outputs`); no program runs;
* ``language``: the program's language when its code fence names none.
"""

from __future__ import annotations

import base64
import dataclasses
import io
import json
import math
import pickle
import re
import zlib
from collections.abc import Mapping
from typing import Any

from . import dmoj
from .graders import GRADED
from .judge import MIB, PROCESSES, SMALL_MEMORY, Case, Checker, Group, Problem

__all__ = ["TEST_COLUMNS", "problem_from_row"]

TEST_COLUMNS = ("tests", "public_tests", "private_tests", "generated_tests", "input_output", "public_test_cases",
                "private_test_cases")
MAX_TESTS = 10_000


class RowProblem(ValueError):
    """A row that cannot be judged; the message names the column."""


class _NoClasses(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"a pickled {module}.{name}: only plain data is accepted")


def _json(value: Any, column: str) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        pass
    try:  # LiveCodeBench's private tests: base64(zlib(pickle(json string)))
        text = _NoClasses(io.BytesIO(zlib.decompress(base64.b64decode(value, validate=True)))).load()
        return json.loads(text)
    except Exception as exc:
        raise RowProblem(f"column {column!r}: neither JSON nor LiveCodeBench's packed form ({exc})") from None


def _text(value: Any, column: str) -> str:
    if isinstance(value, list):  # TACO keeps some inputs as a list of lines
        value = "\n".join(map(str, value)) + "\n"
    if not isinstance(value, str):
        raise RowProblem(f"column {column!r}: a test's input or output is {type(value).__name__}, not text")
    return value


def _pairs(inputs: Any, outputs: Any, column: str) -> list[Case]:
    if not (isinstance(inputs, list) and isinstance(outputs, list)) or len(inputs) != len(outputs):
        raise RowProblem(f"column {column!r}: expected equally long lists of inputs and outputs")
    return [Case(_text(i, column), _text(o, column)) for i, o in zip(inputs, outputs, strict=False)]


def tests_of(row: Mapping[str, Any]) -> list[Case]:
    tests: list[Case] = []
    if (value := row.get("tests")) is not None:
        if not isinstance(value, list) or not all(isinstance(t, Mapping) and {"input", "output"} <= t.keys()
                                                  for t in value):
            raise RowProblem("column 'tests': expected a list of {\"input\", \"output\"} cases")
        tests += [Case(_text(t["input"], "tests"), _text(t["output"], "tests")) for t in value]
    for column in ("public_tests", "private_tests", "generated_tests"):
        if (value := row.get(column)) is not None:
            value = _json(value, column)
            if not isinstance(value, Mapping):
                raise RowProblem(f"column {column!r}: expected {{\"input\": [...], \"output\": [...]}}")
            tests += _pairs(value.get("input", []), value.get("output", []), column)
    if (value := row.get("input_output")) not in (None, ""):
        value = _json(value, "input_output")
        if not isinstance(value, Mapping):
            raise RowProblem("column 'input_output': expected {\"inputs\": [...], \"outputs\": [...]}")
        if value.get("fn_name"):
            raise RowProblem(f"column 'input_output': call-based tests (fn_name {value['fn_name']!r}) are not judged "
                             "by the contest reward (use the code reward)")
        tests += _pairs(value.get("inputs", []), value.get("outputs", []), "input_output")
    for column in ("public_test_cases", "private_test_cases"):
        if (value := row.get(column)) not in (None, ""):
            value = _json(value, column)
            if not isinstance(value, list) or not all(isinstance(t, Mapping) for t in value):
                raise RowProblem(f"column {column!r}: expected a list of {{\"input\", \"output\"}} cases")
            if any(t.get("testtype", "stdin") != "stdin" for t in value):
                raise RowProblem(f"column {column!r}: functional (call-based) tests are not judged by the contest "
                                 "reward (use the code reward)")
            tests += [Case(_text(t.get("input"), column), _text(t.get("output"), column)) for t in value]
    if not tests:
        raise RowProblem(f"no tests: none of the columns {', '.join(TEST_COLUMNS)} holds a case")
    if len(tests) > MAX_TESTS:
        raise RowProblem(f"{len(tests)} tests: more than {MAX_TESTS}")
    return tests


def _seconds(value: Any) -> float:
    if isinstance(value, Mapping):
        return float(value.get("seconds", 0)) + float(value.get("nanos", 0)) / 1e9
    if isinstance(value, str):
        found = re.fullmatch(r"\s*([\d.]+)\s*(s|sec|secs|second|seconds)?\s*", value)
        if not found:
            raise ValueError(value)
        return float(found[1])
    return float(value)


def _mib(value: Any) -> float:
    if isinstance(value, str):
        found = re.fullmatch(r"\s*([\d.]+)\s*(m|mb|mib|megabytes?)?\s*", value.lower())
        if not found:
            raise ValueError(value)
        return float(found[1])
    return float(value)


PROTOCOLS = {"checker": ("testlib", "kattis", "cms", "default", "coci", "peg", "dmoj"),
             "interactor": ("testlib", "kattis", "default", "coci"), "manager": ("cms",)}
JUDGE_LANGUAGES = ("c", "cpp", "python", "rust")
_FLAG = re.compile(r"-[DU][A-Za-z_][A-Za-z0-9_]*(=[^\s]*)?")
AGGREGATES = ("min", "mul", "sum")


def _judge_options(row: Mapping[str, Any]) -> dict[str, Any]:
    """A checker's or interactor's declared language and flags (DMOJ's bridged ``lang`` and ``flags``)."""
    lang = row.get("checker_language")
    if lang is not None:
        lang = dmoj.LANGS.get(lang, lang)
        if lang not in JUDGE_LANGUAGES:
            raise RowProblem(f"column 'checker_language': {str(row.get('checker_language'))[:40]!r} is not one of "
                             f"{', '.join(JUDGE_LANGUAGES)} (or DMOJ's {', '.join(dmoj.LANGS)})")
    flags = row.get("checker_flags") or []
    if not isinstance(flags, list) or not all(isinstance(f, str) and _FLAG.fullmatch(f) for f in flags):
        raise RowProblem(f"column 'checker_flags': {str(flags)[:60]!r} is not a list of -D/-U preprocessor flags")
    return {"lang": lang, "flags": tuple(flags)}


def _judge_program(value: Any, column: str, protocol: str, **options: Any) -> Checker:
    if isinstance(value, str):
        files: tuple[tuple[str, str], ...] = (("main.cpp", value),)
    elif isinstance(value, Mapping) and value and all(isinstance(k, str) and isinstance(v, str)
                                                       for k, v in value.items()):
        if any("/" in k or k.startswith(".") for k in value):
            raise RowProblem(f"column {column!r}: file names must be plain names")
        files = tuple(value.items())
    else:
        raise RowProblem(f"column {column!r}: expected C++ source, or {{file name: source}}")
    if protocol not in PROTOCOLS[column]:
        raise RowProblem(f"column 'checker_protocol': {protocol!r} is not one of {', '.join(PROTOCOLS[column])} "
                         f"for the {column}")
    return Checker(files, protocol, **options)  # type: ignore[arg-type]


def problem_from_row(row: Mapping[str, Any], *, time_limit: float, memory_mb: int, output_mb: int, compare: str,
                     float_tolerance: float) -> Problem:
    """The row's problem, the reward's parameters filling what the row leaves out; :class:`RowProblem` names the
    column that cannot be used."""
    tests = tests_of(row)
    try:
        seconds = _seconds(row["time_limit"]) if row.get("time_limit") not in (None, "", 0) else time_limit
    except (TypeError, ValueError):
        raise RowProblem(f"column 'time_limit': {row.get('time_limit')!r} is not a number of seconds") from None
    try:
        if row.get("memory_limit_bytes"):
            memory = int(row["memory_limit_bytes"])
        elif row.get("memory_limit") not in (None, "", 0):
            memory = int(_mib(row["memory_limit"]) * MIB)
        else:
            memory = memory_mb * MIB
    except (TypeError, ValueError):
        raise RowProblem(f"column 'memory_limit': {row.get('memory_limit')!r} is not a number of MiB") from None
    if not (0 < seconds <= 60):
        raise RowProblem(f"column 'time_limit': {seconds} s is outside (0, 60]")
    if not (MIB <= memory <= 16384 * MIB):
        raise RowProblem(f"column 'memory_limit': {memory / MIB:g} MiB is outside [1, 16384]")
    mode = row.get("compare") or compare
    if mode not in ("token", "lines", "exact", "float", *dmoj.COMPARES):
        raise RowProblem(f"column 'compare': {mode!r} is not one of token, lines, exact, float, "
                         f"{', '.join(dmoj.COMPARES)}")
    tolerance = float(row.get("float_tolerance") or float_tolerance)
    protocol = row.get("checker_protocol") or "testlib"
    options = _judge_options(row)
    checker = _judge_program(row["checker"], "checker", protocol, **options) if row.get("checker") else None
    interactor = (_judge_program(row["interactor"], "interactor", protocol, **options) if row.get("interactor")
                  else None)
    manager = _judge_program(row["manager"], "manager", "cms") if row.get("manager") else None
    user_io = row.get("user_io") or ("fifo_io" if row.get("grader") else "std_io")
    if manager is not None:
        if user_io not in ("std_io", "fifo_io"):
            raise RowProblem(f"column 'user_io': {str(user_io)[:40]!r} is not std_io or fifo_io")
        processes = row.get("num_processes") or 1
        if isinstance(processes, bool) or not isinstance(processes, int) or not 1 <= processes <= PROCESSES:
            raise RowProblem(f"column 'num_processes': {str(processes)[:40]!r} is not a number of processes from 1 "
                             f"to {PROCESSES}")
        if processes > 1 and row.get("file_io"):
            raise RowProblem("column 'file_io': the processes of a communication task have no folder of their own "
                             "to write in (num_processes above 1)")
        if clash := next((c for c in ("checker", "interactor", "input_file", "output_file", "output_only")
                          if row.get(c) not in (None, "", {}, False)), None):
            raise RowProblem(f"column {clash!r}: a communication task's manager decides the test (column 'manager')")
        if memory < SMALL_MEMORY:
            raise RowProblem(f"column 'memory_limit': {memory / MIB:g} MiB, below {SMALL_MEMORY // MIB} MiB, is "
                             "measured for batch tasks only, not with a manager")
    groups = _groups(row.get("subtasks"), len(tests))
    submission_files = _submission_files(row.get("submission_files"), row.get("submission_name"))
    grader, submission_name = _grader(row.get("grader"), row.get("submission_name"), submission_files)
    named = {column: _file_name(row[column], column) for column in ("input_file", "output_file")
             if row.get(column) not in (None, "")}
    if interactor is not None and memory < SMALL_MEMORY:
        raise RowProblem(f"column 'memory_limit': {memory / MIB:g} MiB, below {SMALL_MEMORY // MIB} MiB, is measured "
                         "for batch tasks only (the cgroup's growth), not with an interactor")
    if interactor is not None and named:
        raise RowProblem(f"column {next(iter(named))!r}: file I/O is for batch tasks, not with an interactor")
    if len(set(named.values())) < len(named):
        raise RowProblem("columns 'input_file' and 'output_file' name the same file")
    score_max = row.get("score_max", 1.0)
    if isinstance(score_max, bool) or not isinstance(score_max, int | float) or not 0 < score_max < math.inf:
        raise RowProblem(f"column 'score_max': {score_max!r} is not a positive number")
    if checker is not None and checker.protocol == "dmoj" and checker.language != "python":
        raise RowProblem("column 'checker': checker_protocol dmoj is a Python check() module, not "
                         f"{checker.language}")
    if checker is not None and checker.protocol == "dmoj":  # the point value DMOJ tells a check() module
        checker = dataclasses.replace(checker, points=float(score_max))
    writable = False if row.get("file_io") is None else row["file_io"]
    if not isinstance(writable, bool):
        raise RowProblem(f"column 'file_io': {writable!r} is not true or false")
    case_sensitive = True if row.get("case_sensitive") is None else row["case_sensitive"]
    if not isinstance(case_sensitive, bool):
        raise RowProblem(f"column 'case_sensitive': {case_sensitive!r} is not true or false")
    output_only = False if row.get("output_only") is None else row["output_only"]
    if not isinstance(output_only, bool):
        raise RowProblem(f"column 'output_only': {output_only!r} is not true or false")
    if output_only and (clash := next((c for c in ("interactor", "grader", "input_file", "output_file", "file_io")
                                       if row.get(c) not in (None, "", {}, False)), None)):
        raise RowProblem(f"column {clash!r}: an output-only task runs no program (column 'output_only')")
    two_steps = False if row.get("two_steps") is None else row["two_steps"]
    if not isinstance(two_steps, bool):
        raise RowProblem(f"column 'two_steps': {str(two_steps)[:40]!r} is not true or false")
    if two_steps and not row.get("grader"):
        raise RowProblem("column 'two_steps': a two-step task needs its manager as the 'grader' (CMS's manager.%l)")
    if two_steps and (clash := next((c for c in ("interactor", "manager", "input_file", "output_file", "file_io",
                                                 "output_only", "validation_passes")
                                     if row.get(c) not in (None, "", {}, False, 1)), None)):
        raise RowProblem(f"column {clash!r}: a two-step task is two batch runs joined by a FIFO (column 'two_steps')")
    if two_steps and memory < SMALL_MEMORY:
        raise RowProblem(f"column 'memory_limit': {memory / MIB:g} MiB, below {SMALL_MEMORY // MIB} MiB, is measured "
                         "for batch tasks only, not for two steps")
    passes = row.get("validation_passes") or 1
    if isinstance(passes, bool) or not isinstance(passes, int) or not 1 <= passes <= 100:
        raise RowProblem(f"column 'validation_passes': {str(passes)[:40]!r} is not a number of passes from 1 to 100")
    if passes > 1 and (checker is None or checker.protocol != "kattis" or interactor is not None or manager
                       is not None or output_only):
        raise RowProblem("column 'validation_passes': multi-pass needs a Kattis output validator as the 'checker' "
                         "(checker_protocol kattis) and a batch task (no interactor, manager or output_only)")
    return Problem(tuple(tests), seconds, memory, output_mb * MIB, mode, tolerance, tolerance,  # type: ignore[arg-type]
                   checker=checker, interactor=interactor, groups=groups, writable=writable,
                   case_sensitive=case_sensitive,
                   score_max=float(score_max), grader=grader, submission_name=submission_name,
                   input_file=named.get("input_file"), output_file=named.get("output_file"),
                   output_only=output_only, manager=manager, passes=passes,
                   user_io="fifo_io" if user_io == "fifo_io" else "std_io",
                   processes=processes if manager is not None else 1, two_steps=two_steps,
                   submission_files=submission_files)


def _file_name(value: Any, column: str) -> str:
    """A plain file name in the program's folder: no folder, no leading dot, at most 255 bytes."""
    if not isinstance(value, str) or "/" in value or "\0" in value or value.startswith(".") \
            or len(value.encode("utf-8", "surrogatepass")) > 255:
        raise RowProblem(f"column {column!r}: {str(value)[:40]!r} is not a plain file name")
    return value


MAX_SUBMISSION_FILES = 8


def _submission_files(value: Any, name: Any) -> tuple[str, ...]:
    """The stems of CMS's submission format (``["user1.%l", "user2.%l"]``): distinct plain names (Python module
    names, which a Python stub imports), each with ``.%l``."""
    if value in (None, "", []):
        return ()
    value = _json(value, "submission_files")
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_SUBMISSION_FILES:
        raise RowProblem(f"column 'submission_files': expected a list of 1 to {MAX_SUBMISSION_FILES} file names "
                         "(\"user1.%l\")")
    stems = []
    for item in value:
        stem = item.removesuffix(".%l") if isinstance(item, str) else ""
        if not (isinstance(item, str) and item.endswith(".%l") and stem.isidentifier()):
            raise RowProblem(f"column 'submission_files': {str(item)[:40]!r} is not a plain name ending in .%l "
                             "(\"user1.%l\")")
        stems.append(stem)
    if len(set(stems)) < len(stems):
        raise RowProblem(f"column 'submission_files': a file comes twice ({', '.join(value)})")
    if name not in (None, ""):
        raise RowProblem("column 'submission_name': a task with 'submission_files' names its files there")
    return tuple(stems)


def _grader(value: Any, name: Any, submitted: tuple[str, ...] = ()) -> tuple[tuple[tuple[str, str], ...], str]:
    """The grader's files and the submission's stem (a Python module name, which a Python grader imports); no
    grader file may be named as a submitted source is (``submitted``, else the stem; a header may share its stem, as
    TwoSteps' ``first.h`` does ``first.%l``'s)."""
    stem = "solution" if name in (None, "") else name
    if not isinstance(stem, str) or not stem.isidentifier():
        raise RowProblem(f"column 'submission_name': {str(stem)[:40]!r} is not a plain name (letters, digits, _)")
    if value in (None, "", {}):
        return (), stem
    value = _json(value, "grader")
    if not (isinstance(value, Mapping) and all(isinstance(v, str) for v in value.values())):
        raise RowProblem("column 'grader': expected {file name: source}")
    files = tuple((_file_name(k, "grader"), v) for k, v in value.items())
    if not any(k.endswith(ext) for k, _ in files for exts in GRADED.values() for ext in exts):
        raise RowProblem(f"column 'grader': no C, C++, C#, Java, Pascal or Python source among "
                         f"{', '.join(k for k, _ in files)}")
    sources = {ext for exts in GRADED.values() for ext in exts}
    if clash := next((k for k, _ in files for s in submitted or (stem,) if k in {s + ext for ext in sources}),
                     None):
        raise RowProblem(f"column 'grader': {clash!r} is named like the submission's file ('submission_name', "
                         "'submission_files')")
    return files, stem


def _groups(value: Any, n: int) -> tuple[Group, ...]:
    if value in (None, "", []):
        return ()
    value = _json(value, "subtasks")
    if not isinstance(value, list):
        raise RowProblem("column 'subtasks': expected a list of {\"points\", \"tests\"}")
    groups = []
    for k, group in enumerate(value):
        if not isinstance(group, Mapping) or not isinstance(group.get("tests"), list) or not group["tests"]:
            raise RowProblem(f"column 'subtasks': group {k} has no list of test indices")
        members = group["tests"]
        if not all(type(i) is int and 0 <= i < n for i in members):
            raise RowProblem(f"column 'subtasks': group {k} names a test outside 0..{n - 1}")
        points = group.get("points", 1)
        if isinstance(points, bool) or not isinstance(points, int | float) or not 0 <= points < math.inf:
            raise RowProblem(f"column 'subtasks': group {k}'s points are not a non-negative number")
        aggregate = group.get("aggregate", "min")
        if aggregate not in AGGREGATES:
            raise RowProblem(f"column 'subtasks': group {k}'s aggregate {aggregate!r} is not one of "
                             f"{', '.join(AGGREGATES)}")
        groups.append(Group(float(points), tuple(members), aggregate))
    if sum(g.points for g in groups) <= 0:
        raise RowProblem("column 'subtasks': the groups' points add up to 0")
    return tuple(groups)
