"""CMS's Communication tasks judged through the contest reward: the program talks to the task's manager.

``tests/data/contest/cms/`` (``SOURCE.md``): cmstestsuite's ``communication_stdio`` (no stub, the program's stdin and
stdout are the FIFOs), ``communication_stdio_stubbed`` (a stub linked with the submission, on stdin and stdout) and
``communication_fifoio_stubbed`` (the stub opens the FIFOs by the paths it gets as arguments); one process, a
Python manager that prints 1 or 0, two tests worth 50 each, time 1 s, memory 128 MiB (the tasks' ``__init__.py``).
Each submission is scored as ``cmstestsuite/Tests.py`` expects (``CheckOverallScore`` over 100), in C, C++ and
Python.  Then attacks: a program that reads the manager's input, forges the manager's words, or reads its own
back.  Real sandboxes and compilers; skipped, naming why, where the sandbox or a toolchain is missing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from grpo_host.testing import data_check, score_rows
from reward_plugins.contest.languages import LANGUAGES, missing
from reward_plugins.sandbox.bwrap import isolation

SUITE = Path(__file__).parent / "data" / "contest" / "cms"
CODE = SUITE / "code"
TAGS = {".c": "c", ".cpp": "cpp", ".py": "python"}

pytestmark = pytest.mark.skipif(isolation().mode != "root", reason=f"the contest judge needs the code sandbox in "
                                f"root mode: {isolation().mode} ({isolation().reason or 'not root'})")


def task(name: str) -> dict:
    """The task as a row: its tests, its manager, its stub as the grader (submission ``communication.%l``)."""
    folder = SUITE / name
    managers = folder / "managers"
    row: dict = {"prompt": f"Solve {name}.", "time_limit": 1.0, "memory_limit": 128,
                 "tests": [{"input": (folder / "data" / f"{n}.in").read_text(),
                            "output": (folder / "data" / f"{n}.out").read_text()} for n in (1, 2)],
                 "manager": {"manager": (managers / "manager").read_text()},
                 "user_io": "fifo_io" if "fifoio" in name else "std_io"}
    stubs = {p.name: p.read_text() for p in managers.iterdir() if p.name.startswith("stub.")}
    if stubs:
        row |= {"grader": stubs, "submission_name": "communication"}
    return row


def judged(name: str, sources: list[str]) -> list[float | None]:
    rows = []
    for source in sources:
        path = CODE / source
        rows.append({**task(name), "completion": f"```{TAGS[path.suffix]}\n{path.read_text()}\n```"})
    return score_rows("contest", rows)


LANGS = [ext for ext, tag in TAGS.items() if not missing(LANGUAGES[tag])]


@pytest.mark.slow  # compiles and runs six programs, each talking to a Python manager on two tests: about 10 s
@pytest.mark.parametrize(("name", "stem"), [("communication_stdio", "communication-stdio"),
                                            ("communication_stdio_stubbed", "communication-stubbed"),
                                            ("communication_fifoio_stubbed", "communication-stubbed")])
def test_cms_communication_tests_score_what_tests_py_expects(name, stem):
    sources = [f"{stem}-{kind}{ext}" for ext in LANGS for kind in ("correct", "incorrect")]
    assert judged(name, sources) == [1.0, 0.0] * len(LANGS)


ATTACK = '''import errno, os, sys
# The server's layout (reward_plugins/contest/jail.py): each open must be refused for want of permission, not
# missed (ENOENT would mean the attack aimed at nothing); any that succeeds, or misses, fails the program.
for path, flags in [("/tmp/work/judge/feedback/input.txt", os.O_RDONLY),  # the manager's copy of the input
                    ("/tmp/work/judge/input", os.O_RDONLY),
                    ("/tmp/work/judge/feedback/output.txt", os.O_WRONLY | os.O_CREAT),
                    ("/tmp/work/fifo/m_to_u0", os.O_WRONLY | os.O_NONBLOCK),  # forge the manager's words
                    ("/tmp/work/fifo/u0_to_m", os.O_RDONLY | os.O_NONBLOCK),  # read its own words back
                    ("/tmp/work/fifo/u1_to_m", os.O_WRONLY | os.O_CREAT)]:    # a channel of its own making
    try:
        os.open(path, flags)
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EPERM):
            continue
        sys.exit(f"{path}: {exc}")
    sys.exit(f"{path}: opened")
while (n := int(input())) != 0:
    print("correct", n, flush=True)
'''


@pytest.mark.slow  # a Python program and a Python manager on two tests in the sandbox: several seconds
def test_a_program_cannot_read_the_managers_input_nor_forge_or_read_back_a_channel():
    row = {**task("communication_stdio"), "completion": f"```python\n{ATTACK}\n```"}
    assert score_rows("contest", [row]) == [1.0]  # every attempt refused, then the honest protocol


@pytest.mark.parametrize(("column", "value", "message"), [
    ("checker", "int main() {}", "column 'checker': a communication task's manager decides the test"),
    ("input_file", "input.txt", "column 'input_file': a communication task's manager decides the test"),
    ("num_processes", 2, "column 'num_processes': 2: communication with more than one process is not judged yet"),
    ("user_io", "pipes", "column 'user_io': 'pipes' is not std_io or fifo_io"),
])
def test_a_communication_row_that_cannot_be_judged_is_named_by_data_check(column, value, message):
    assert data_check("contest", [task("communication_stdio"), task("communication_fifoio_stubbed")]).ok
    report = data_check("contest", [{**task("communication_stdio"), column: value}])
    assert not report.ok and message in str(report.as_dict())


@pytest.mark.slow  # compiles a C program with the stub and runs it against a Python manager: a few seconds
@pytest.mark.skipif(bool(missing(LANGUAGES["c"])), reason="no C toolchain")
def test_a_communication_program_may_not_create_files_as_tests_py_expects():
    """Tests.py's write-forbidden-communication: 0 of 100 (its function answers right only if it could create a
    file)."""
    assert judged("communication_fifoio_stubbed", ["write-forbidden-communication.c"]) == [0.0]
