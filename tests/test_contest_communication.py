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

import time
from pathlib import Path

import pytest
from contest_suites import cms_communication_row as task

from grpo_host.testing import data_check, score_rows
from reward_plugins.contest.judge import Program, judge
from reward_plugins.contest.languages import LANGUAGES, missing
from reward_plugins.contest.packages import cms
from reward_plugins.contest.rows import problem_from_row
from reward_plugins.sandbox.bwrap import isolation

SUITE = Path(__file__).parent / "data" / "contest" / "cms"
CODE = SUITE / "code"
TAGS = {".c": "c", ".cpp": "cpp", ".py": "python"}

pytestmark = pytest.mark.skipif(isolation().mode != "root", reason=f"the contest judge needs the code sandbox in "
                                f"root mode: {isolation().mode} ({isolation().reason or 'not root'})")


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
                    ("/tmp/work/fifo0/m_to_u0", os.O_WRONLY | os.O_NONBLOCK),  # forge the manager's words
                    ("/tmp/work/fifo0/u0_to_m", os.O_RDONLY | os.O_NONBLOCK),  # read its own words back
                    ("/tmp/work/fifo0/u1_to_m", os.O_WRONLY | os.O_CREAT)]:    # a channel of its own making
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
    ("num_processes", 9, "column 'num_processes': '9' is not a number of processes from 1 to 8"),
    ("num_processes", "2", "column 'num_processes': '2' is not a number of processes from 1 to 8"),
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


def many(name: str, kind: str, ext: str) -> dict:
    """A ``communication_many_*`` row and Tests.py's submission ``communication-many-<kind>-user{1,2}.%l``: two files
    upstream (``user1.%l``, ``user2.%l``), one source here (the reward judges one file per completion; C and C++
    only, since Python's stub imports ``user1`` and ``user2`` as two modules)."""
    source = "\n".join((CODE / f"communication-many-{kind}-user{i}{ext}").read_text() for i in (1, 2))
    return {**task(name), "submission_name": "user1_user2", "completion": f"```{TAGS[ext]}\n{source}\n```"}


COMPILED = [ext for ext in LANGS if ext != ".py"]


@pytest.mark.slow  # compiles and runs four programs, each as two processes talking to a Python manager: about 10 s
@pytest.mark.parametrize("name", ["communication_many_fifoio_stubbed", "communication_many_stdio_stubbed"])
def test_cms_two_process_communication_scores_what_tests_py_expects(name):
    rows = [many(name, kind, ext) for ext in COMPILED for kind in ("correct", "incorrect")]
    assert score_rows("contest", rows) == [1.0, 0.0] * len(COMPILED)


NOSY = r'''#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
/* Process 0 and process 1 each try the other's FIFOs (to read the manager's words to it, to forge its words to
   the manager), then every other process's memory and signals; every attempt must be refused for want of
   permission (a miss, ENOENT, would mean the attack aimed at nothing), else the process exits 1 and scores 0. */
static void refused(const char *path, int flags) {
    int fd = open(path, flags | O_NONBLOCK);
    if (fd >= 0 || (errno != EACCES && errno != EPERM)) {
        fprintf(stderr, "%s: %s\n", path, fd >= 0 ? "opened" : strerror(errno));
        exit(1);
    }
}
static int checked = 0;
static void attack(int me) {
    char path[64];
    int other = 1 - me;
    if (checked++) return;
    snprintf(path, sizeof path, "/tmp/work/fifo%d/m_to_u%d", other, other);
    refused(path, O_RDONLY);
    snprintf(path, sizeof path, "/tmp/work/fifo%d/u%d_to_m", other, other);
    refused(path, O_WRONLY);
    DIR *proc = opendir("/proc");
    struct dirent *entry;
    while ((entry = readdir(proc)) != NULL) {
        int pid = atoi(entry->d_name);
        if (pid <= 0 || pid == getpid()) continue;
        snprintf(path, sizeof path, "/proc/%d/mem", pid);
        int fd = open(path, O_RDONLY);
        if (fd >= 0 || (errno != EACCES && errno != EPERM && errno != ENOENT)) exit(1);
        if (kill(pid, 0) == 0 || errno == EINVAL) exit(1);  /* a signal, a channel; ESRCH: gone meanwhile */
    }
}
int userfunc1(int x) { attack(0); return x; }
int userfunc2(int x) { attack(1); return -x; }
'''


@pytest.mark.slow  # two processes of a C program against a Python manager on two tests: a few seconds
@pytest.mark.skipif(bool(missing(LANGUAGES["c"])), reason="no C toolchain")
def test_a_process_cannot_reach_another_processs_fifos_memory_or_signals():
    row = {**task("communication_many_fifoio_stubbed"), "submission_name": "user1_user2",
           "completion": f"```c\n{NOSY}\n```"}
    assert score_rows("contest", [row]) == [1.0]  # every attempt refused, then the honest protocol


BURN = r'''#include <time.h>
/* Each process spends SECONDS of CPU once, then answers right: alone under the 1 s limit, summed maybe not. */
static void burn(void) {
    static int done = 0;
    if (done++) return;
    while ((double)clock() / CLOCKS_PER_SEC < SECONDS) {}
}
int userfunc1(int x) { burn(); return x; }
int userfunc2(int x) { burn(); return -x; }
'''


@pytest.mark.slow  # two C programs, each as two processes spending CPU on two tests: several seconds
@pytest.mark.skipif(bool(missing(LANGUAGES["c"])), reason="no C toolchain")
def test_the_processes_cpu_seconds_are_summed_against_the_limit_as_cms_does():
    """CMS (``Communication.evaluate``): each process under the limit alone, but their sum past it, is a timeout."""
    rows = [{**task("communication_many_fifoio_stubbed"), "submission_name": "user1_user2",
             "completion": f"```c\n#define SECONDS {seconds}\n{BURN}\n```"} for seconds in (0.7, 0.2)]
    assert score_rows("contest", rows) == [0.0, 1.0]


@pytest.mark.slow  # two C programs, each as two processes talking to a Python manager on two tests: several seconds
@pytest.mark.skipif(bool(missing(LANGUAGES["c"])), reason="no C toolchain")
def test_an_imported_two_process_cms_task_keeps_num_processes_and_scores_as_tests_py_expects(tmp_path):
    """``communication_many_stdio_stubbed`` laid out as ``italy_yaml`` reads it (``num_processes: 2``): the row
    keeps the count, and Tests.py's submissions score 100 and 0."""
    source, root = SUITE / "communication_many_stdio_stubbed", tmp_path / "user1_user2"
    files = {f"input/input{i}.txt": (source / "data" / f"{i + 1}.in").read_text() for i in range(2)}
    files |= {f"output/output{i}.txt": (source / "data" / f"{i + 1}.out").read_text() for i in range(2)}
    files |= {f"sol/{p.name}": p.read_text() for p in (source / "managers").glob("stub.*")}
    files |= {"check/manager": (source / "managers" / "manager").read_text(),
              "task.yaml": 'name: user1_user2\ninfile: ""\noutfile: ""\ntime_limit: 1\nmemory_limit: 128\n'
                           "n_input: 2\nuser_io: std_io\nnum_processes: 2\n"}
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    row = cms(root)
    assert row["num_processes"] == 2 and data_check("contest", [row]).ok
    rows = [{**row, "completion": many("communication_many_stdio_stubbed", kind, ".c")["completion"]}
            for kind in ("correct", "incorrect")]
    assert score_rows("contest", rows) == [1.0, 0.0]


@pytest.mark.slow  # a C program as two processes against a Python manager on two tests: a few seconds
@pytest.mark.skipif(bool(missing(LANGUAGES["c"])), reason="no C toolchain")
def test_one_failing_process_fails_the_test_with_its_own_verdict():
    """CMS: any user process that does not end well makes the outcome 0, whatever the manager says (here the
    manager would print 0 anyway; the verdict is the crash's, RE, not the manager's WA)."""
    crash = "#include <stdlib.h>\nint userfunc1(int x) { return x; }\nint userfunc2(int x) { abort(); }\n"
    row = {**task("communication_many_fifoio_stubbed"), "submission_name": "user1_user2"}
    problem = problem_from_row(row, time_limit=1.0, memory_mb=256, output_mb=16, compare="token",
                               float_tolerance=1e-6)
    report = judge(Program(LANGUAGES["c"], crash), problem, deadline=time.monotonic() + 120)
    assert (report.verdicts, report.score) == (["RE", "RE"], 0.0), report.details
