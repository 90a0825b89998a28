"""Bash as a contest language, as DOMjudge's ``bash`` run script runs it (``bash -n`` at compile time, then
``bash main.sh``), in the same sandbox as every other language.

DOMjudge's example problem ``hello`` (``tests/data/contest/domjudge/hello``, GPL-2.0, ``SOURCE.md``) is imported with
``grpo-host``'s Kattis importer and its one-file Bash submissions judged against their ``@EXPECTED_RESULTS@`` tags:
a hello world (twice), a program that compares its root with ``/proc/1/root`` (RE: it cannot see init's root), one
that looks for files only root may read (WA: it finds none readable).  ``test-chroot-escape.sh`` is the one that
differs (:data:`DIFFERS`).  Then what a Bash program can exec in the jail: coreutils, ``grep``, ``sed``, ``awk`` and
``bc``, and nothing else on ``/usr/bin``.  Real sandboxes; skipped, naming why, where the sandbox is missing.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from grpo_host.testing import data_check
from reward_plugins.contest.judge import Case, Problem, Program, judge
from reward_plugins.contest.languages import LANGUAGES, binds, by_tag, version
from reward_plugins.contest.packages import kattis
from reward_plugins.contest.rows import problem_from_row
from reward_plugins.sandbox.bwrap import isolation

HELLO = Path(__file__).parent / "data" / "contest" / "domjudge" / "hello"
BASH = LANGUAGES["bash"]
VERDICTS = {"CORRECT": "AC", "WRONG-ANSWER": "WA", "RUN_TIME_ERROR": "RE"}
DEFAULTS = {"time_limit": 1.0, "memory_mb": 256, "output_mb": 16, "compare": "token", "float_tolerance": 1e-6}
DIFFERS = {"run_time_error/test-chroot-escape.sh": "AC"}
"""Verdicts that differ from DOMjudge's, and why: ``test-chroot-escape.sh`` runs ``ischroot`` and, only if that says
it is jailed, tries ``chroot /proc/1/root`` and fails (RE).  Here ``ischroot`` is not there to run, and could not
tell either (``/proc/1/root`` is unreadable, and ``/`` is inode 2 of a tmpfs, its fallback's sign of no chroot), so
the program prints the answer and is accepted; the escape it never tries is refused anyway: no ``chroot`` to exec,
and no ``CAP_SYS_CHROOT`` for the contestant's uid."""

pytestmark = pytest.mark.skipif(isolation().mode != "root", reason=f"the contest judge needs the code sandbox in "
                                f"root mode: {isolation().mode} ({isolation().reason or 'not root'})")


def _expected(path: Path) -> str:
    tag = re.search(r"@EXPECTED_RESULTS@: (\S+)", path.read_text())
    assert tag is not None, path
    return VERDICTS[tag.group(1).split(",")[0]]


def submissions() -> list:
    return [pytest.param(path, id=str(path.relative_to(HELLO / "submissions")))
            for path in sorted((HELLO / "submissions").rglob("*.sh"))]


@pytest.mark.parametrize("path", submissions())
def test_domjudges_bash_submissions_get_its_verdicts(path):
    row = kattis(HELLO)
    assert data_check("contest", [{**row, "completion": "```bash\necho 'Hello world!'\n```"}]).ok
    report = judge(Program(BASH, path.read_text()), problem_from_row(row, **DEFAULTS), deadline=time.monotonic() + 60)
    name = str(path.relative_to(HELLO / "submissions"))
    assert report.verdicts == [DIFFERS.get(name, _expected(path))], (report.details, report.compile_log[-300:])


def test_bash_is_chosen_by_its_fence_tags_and_reports_its_version():
    assert by_tag("bash") is by_tag("sh") is by_tag("shell") is BASH
    assert (version(BASH) or "").startswith("GNU bash")


def test_a_syntax_error_is_a_compile_error():
    report = judge(Program(BASH, "for i in 1 2; do echo $i\n"), Problem((Case("", "1\n2\n"),)),
                   deadline=time.monotonic() + 60)
    assert report.verdicts == ["CE"] and "syntax error" in report.compile_log, report.compile_log


REACH = r"""read n
seq "$n" | sort -rn | head -3 | paste -sd+ | bc
printf 'b a\na b\n' | awk '{print $2}' | sed 's/a/x/' | grep -c x
for tool in python3 perl gcc sh dash ischroot chroot su sudo mount curl; do
  command -v "$tool" >/dev/null && echo "reached $tool"
done
ls /usr/bin | wc -l
"""


def test_a_bash_program_execs_coreutils_grep_sed_awk_bc_and_nothing_else_on_the_system_path():
    """What the jail binds for Bash (``languages._SHELL_TOOLS``) works in a pipeline; the shells, compilers,
    interpreters and set-uid tools a host has are not there (the program prints ``reached <tool>`` if one is);
    ``/usr/bin`` holds what :func:`binds` names there only: Bash, the tools, ``awk``'s target (105 files on Debian
    12, fewer where a tool is missing)."""
    if not Path("/usr/bin/bc").exists():
        pytest.skip("bc is not installed: apt-get install bc (scripts/system-deps.sh)")
    expected = len([path for path in binds(BASH) if path.startswith("/usr/bin/")])
    report = judge(Program(BASH, REACH), Problem((Case("10\n", f"27\n1\n{expected}\n"),), compare="exact"),
                   deadline=time.monotonic() + 60)
    assert report.verdicts == ["AC"], (report.details, report.compile_log[-300:])


@pytest.mark.slow  # the fork bomb runs to its wall-clock bound: about 3 s
def test_a_fork_bomb_is_bounded_and_leaves_nothing_behind():
    """Bash forks for every pipeline, so the process limit is what holds a fork bomb: it is TLE at its bound, and the
    next program in the same sandbox is judged as if it had never run (every process of the uid was killed)."""
    bomb = judge(Program(BASH, ":(){ :|:& };:\nsleep 30\necho x\n"), Problem((Case("", "x\n"),), time_limit=1.0),
                 deadline=time.monotonic() + 60)
    assert bomb.verdicts == ["TLE"], bomb.details
    after = judge(Program(BASH, "echo x\n"), Problem((Case("", "x\n"),)), deadline=time.monotonic() + 60)
    assert after.verdicts == ["AC"], after.details
