"""Multi-file submissions judged through the contest reward: each source a fenced block named by its file.

Real judge suites (``tests/data/contest/cms/SOURCE.md``, ``tests/data/contest/domjudge/SOURCE.md``): CMS's
Communication with two processes (``communication_many_{fifoio,stdio}_stubbed``, submission format ``user1.%l``,
``user2.%l``, compiled with the stub) and TwoSteps (``first.%l``, ``second.%l``, compiled with the manager), each
submission scored as ``cmstestsuite/Tests.py`` expects; DOMjudge's ``hello`` submissions that are folders of
several files, each with its folder's verdict.  Then hostile file names, each refused with a message naming the
file.  Real sandboxes and compilers; skipped, naming why, where the sandbox or a toolchain is missing.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from contest_suites import cms_files_row as cms_task
from contest_suites import files_completion as completion
from contest_suites import hello_row as hello

from grpo_host.testing import data_check, score_rows
from reward_plugins.contest.judge import Case, Problem, Program, judge
from reward_plugins.contest.languages import LANGUAGES, missing
from reward_plugins.contest.submission import MAX_FILES, program_of
from reward_plugins.sandbox.bwrap import isolation

DATA = Path(__file__).parent / "data" / "contest"
CMS, HELLO = DATA / "cms", DATA / "domjudge" / "hello"
TAGS = {".c": "c", ".cpp": "cpp", ".py": "python"}

sandbox = pytest.mark.skipif(isolation().mode != "root", reason=f"the contest judge needs the code sandbox in root "
                             f"mode: {isolation().mode} ({isolation().reason or 'not root'})")


MANY_LANGS = [ext for ext, tag in TAGS.items() if not missing(LANGUAGES[tag])]


@sandbox
@pytest.mark.slow  # compiles and runs six programs, each as two processes talking to a Python manager: about 15 s
@pytest.mark.parametrize("name", ["communication_many_fifoio_stubbed", "communication_many_stdio_stubbed"])
def test_cms_two_process_communication_as_two_files_scores_what_tests_py_expects(name):
    """communication-many-correct 100, -incorrect 0, in C, C++ and Python (whose stub imports ``user1`` and
    ``user2`` as two modules, which one joined source could not be)."""
    assert data_check("contest", [cms_task(name)]).ok
    rows = [{**cms_task(name), "completion": completion(
        {f"user{i}{ext}": (CMS / "code" / f"communication-many-{kind}-user{i}{ext}").read_text() for i in (1, 2)})}
        for ext in MANY_LANGS for kind in ("correct", "incorrect")]
    assert score_rows("contest", rows) == [1.0, 0.0] * len(MANY_LANGS)


@sandbox
@pytest.mark.slow  # compiles and runs three C programs, each as two instances on two tests: several seconds
@pytest.mark.skipif(bool(missing(LANGUAGES["c"])), reason="no C toolchain")
@pytest.mark.parametrize("name", ["twosteps", "twosteps_comparator"])
def test_cms_two_steps_as_first_and_second_scores_what_tests_py_expects(name):
    """twosteps(-comparator)-correct 100, -half-correct 50, -incorrect 0: ``first.c`` and ``second.c`` compiled
    with ``manager.c`` (CMS's TwoSteps.compile), ``first.h`` beside them."""
    assert data_check("contest", [cms_task(name)]).ok
    second = (CMS / "code" / "twosteps-correct-second.c").read_text()
    rows = [{**cms_task(name), "completion": completion(
        {"first.c": (CMS / "code" / f"twosteps-{first}-first.c").read_text(), "second.c": second})}
        for first in ("correct", "half-correct", "incorrect")]
    assert score_rows("contest", rows) == [1.0, 0.5, 0.0]


HELLO_FOLDERS = [  # (folder, the verdict's score here: DOMjudge's folder, or what these rules choose where it
    # allows several)
    ("accepted/multifile-cpp", 1.0),  # main.cc, message.cc and message.hpp: every source compiled together
    ("accepted/multifile-java", 1.0),  # two public classes, each in its file; the one with main runs
    ("accepted/multifile-py", 1.0),  # main.py imports message.py beside it
    ("accepted/multifile-py-2", 1.0),
    ("accepted/invalid-header", 1.0),  # a header that is not C, included by nothing: written, never compiled
    ("multiple/mainclass-multiple", 1.0),  # CORRECT, COMPILER-ERROR or WRONG-ANSWER: the first class with main runs
    ("compiler_error/objectcode", 0.0),  # message.o is no source: message::print is never defined
    ("accepted/multifile-multipackage", 0.0),  # classes in packages are refused (docs/contest.md, What is missing)
]


@sandbox
@pytest.mark.slow  # compiles and runs a program: a JVM compile, or a C++ one that precompiles its header, up to 10 s
@pytest.mark.parametrize(("folder", "score"), HELLO_FOLDERS)
def test_domjudges_multi_file_hello_submissions_score_their_verdicts(folder, score):
    files = {p.name: p.read_text() for p in sorted((HELLO / "submissions" / folder).iterdir())}
    languages = {"cpp" if n.endswith(".cc") else "java" if n.endswith(".java") else "python" if n.endswith(".py")
                 else "c" for n in files if not n.endswith((".h", ".hpp"))}
    if absent := [lang for lang in languages if missing(LANGUAGES[lang])]:
        pytest.skip(f"no {', '.join(absent)} toolchain")
    assert score_rows("contest", [{**hello(), "completion": completion(files)}]) == [score]


def test_the_last_block_is_still_the_program_without_named_files():
    program = program_of("```python\nprint(1)\n```\n```output.txt\n1\n```\n```cpp\nint main(){}\n```", "cpp")
    assert isinstance(program, Program) and program.language.name == "cpp" and not program.named


def test_named_files_choose_the_rows_dialect_and_a_python_program_its_entry():
    program = program_of(completion({"b.cpp": "int f();", "a.cc": "int main(){}", "a.h": "", "notes.txt": "x"}),
                         "cpp20")
    assert isinstance(program, Program) and program.language.name == "cpp20"
    assert program.sources() == ["b.cpp", "a.cc"] and set(program.files()) == {"b.cpp", "a.cc", "a.h"}
    entry = program_of(completion({"util.py": "", "Main.py": "", "a.py": ""}), "cpp")
    assert isinstance(entry, Program) and entry.language.name == "python" and entry.entry() == "Main.py"


HOSTILE = [
    ({"../user1.c": "", "user2.c": ""}, "'../user1.c' is not a plain file name"),
    ({"/tmp/user1.c": ""}, "'/tmp/user1.c' is not a plain file name"),
    ({"sub/user1.c": ""}, "'sub/user1.c' is not a plain file name"),
    ({"..\\user1.c": ""}, "is not a plain file name"),
    ({".user1.c": ""}, "'.user1.c' is not a plain file name"),
    ({"x" * 300 + ".c": ""}, "is not a plain file name"),
    ({"stub.c": "int main(){}", "user1.c": "", "user2.c": ""}, "'stub.c' is a file of the task's own"),
    ({"user1.c": "", "user2.py": ""}, "the files are in several languages (c, python)"),
    ({"user1.c": "", "user2.c": "", "user3.c": ""}, "'user3.c' is not one of this task's files (user1.c, user2.c)"),
    ({"user1.c": "", "user1.h": ""}, "'user1.h' is not one of this task's files"),
    ({"user1.c": ""}, "'user2.c' was not submitted (this task's files: user1.c, user2.c)"),
]


@pytest.mark.parametrize(("files", "message"), HOSTILE)
def test_hostile_file_names_are_refused_naming_the_file(files, message):
    refused = program_of(completion(files), "c", ("user1", "user2"), ("stub.c", "stub.cpp", "stub.py"))
    assert isinstance(refused, str) and message in refused, refused


def test_duplicates_too_many_files_and_multi_file_languages_are_refused():
    twice = "```a.c\nint main(){}\n```\n```a.c\nint main(){return 1;}\n```"
    assert program_of(twice, "c") == "error: the file 'a.c' comes twice"
    many = completion({f"f{i}.c": "" for i in range(MAX_FILES + 1)})
    assert program_of(many, "c") == f"error: {MAX_FILES + 1} files: a submission has at most {MAX_FILES}"
    assert "a rust program is one file here" in str(program_of(completion({"a.rs": "", "b.rs": ""}), "c"))
    assert "a header goes with C or C++ sources" in str(program_of(completion({"a.py": "", "a.h": ""}), "c"))
    joined = program_of("```c\nint main(){}\n```", "c", ("user1", "user2"))
    assert joined == "error: this task's submission is 2 files (user1.c, user2.c), each a fenced block named by " \
                     "its file (```user1.c)"


@sandbox
def test_a_refused_or_too_large_submission_scores_0_and_writes_nothing(tmp_path):
    target = tmp_path / "escape.c"
    row = {**cms_task("communication_many_fifoio_stubbed"),
           "completion": completion({str(target): "int x;", "user1.c": "", "user2.c": ""})}
    big = {**cms_task("communication_many_fifoio_stubbed"),  # 2 x 150 KiB: past the 256 KiB a submission may have
           "completion": completion({"user1.c": "//" + "x" * (150 << 10), "user2.c": "//" + "x" * (150 << 10)})}
    assert score_rows("contest", [row, big]) == [0.0, 0.0]
    assert not target.exists()


def said(report) -> str:
    """What ``data check`` says of the rows, each problem's message."""
    return "\n".join(problem.problem for problem in report.problems)


@pytest.mark.parametrize(("value", "message"), [
    (["user1.c"], "'user1.c' is not a plain name ending in .%l"),
    (["../user1.%l"], "'../user1.%l' is not a plain name ending in .%l"),
    (["user1.%l", "user1.%l"], "a file comes twice"),
    ([], None),
    ("user1.%l", "neither JSON"),  # a string column holds JSON (a Parquet list of strings is one)
    ('{"user1.%l": 1}', "expected a list of 1 to 8 file names"),
    ([f"u{i}.%l" for i in range(9)], "expected a list of 1 to 8 file names"),
])
def test_a_submission_files_column_that_cannot_be_used_is_named_by_data_check(value, message):
    report = data_check("contest", [{**cms_task("communication_many_stdio_stubbed"), "submission_files": value}])
    if message is None:  # an empty list: no files named, the stub's one file (submission_name's default)
        assert report.ok, report.as_dict()
    else:
        assert not report.ok and f"column 'submission_files': {message}" in said(report)


def test_a_task_names_its_files_in_one_column_and_no_grader_file_takes_their_names():
    both = {**cms_task("twosteps"), "submission_name": "first_second"}
    assert "column 'submission_name': a task with 'submission_files' names its files there" in said(
        data_check("contest", [both]))
    clash = {**cms_task("twosteps"), "grader": {**cms_task("twosteps")["grader"], "first.c": "int x;"}}
    assert "column 'grader': 'first.c' is named like the submission's file" in said(data_check("contest", [clash]))


@sandbox
@pytest.mark.skipif(bool(missing(LANGUAGES["c"])), reason="no C toolchain")
def test_c_sources_compile_together_and_a_second_main_is_a_compile_error():
    problem = Problem((Case("", "7\n"),))
    two = program_of(completion({"main.c": '#include <stdio.h>\nint seven(void);\nint main(void) '
                                           '{ printf("%d\\n", seven()); }', "seven.c": "int seven(void) "
                                                                                        "{ return 7; }"}), "c")
    assert isinstance(two, Program)
    assert judge(two, problem, deadline=time.monotonic() + 120).verdicts == ["AC"]
    clash = program_of(completion({"a.c": "int main(void) { return 0; }", "b.c": "int main(void) { return 0; }"}),
                       "c")
    assert isinstance(clash, Program)
    report = judge(clash, problem, deadline=time.monotonic() + 120)
    assert report.verdicts == ["CE"] and "main" in report.compile_log
