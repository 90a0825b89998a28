"""CMS's TwoSteps tasks judged through the contest reward: the task's manager, linked with the submission's two
functions, runs as two instances joined by a FIFO.

``tests/data/contest/cms/`` (``SOURCE.md``): cmstestsuite's ``twosteps`` (white diff) and ``twosteps_comparator``
(a Python comparator), time 1 s, memory 128 MiB, two tests worth 50 each (the tasks' ``__init__.py``).  Each
submission is scored as ``cmstestsuite/Tests.py`` expects (``CheckOverallScore`` over 100), in C, Tests.py's only
language; its two files (``first.c``, ``second.c``) are joined into one source, as a completion holds one.  Real
sandboxes and compilers; skipped, naming why, where the sandbox or the C toolchain is missing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from contest_suites import cms_two_steps_row as task

from grpo_host.testing import data_check, score_rows
from reward_plugins.contest.languages import LANGUAGES, missing
from reward_plugins.sandbox.bwrap import isolation

SUITE = Path(__file__).parent / "data" / "contest" / "cms"
CODE = SUITE / "code"

pytestmark = [
    pytest.mark.skipif(isolation().mode != "root", reason=f"the contest judge needs the code sandbox in root mode: "
                       f"{isolation().mode} ({isolation().reason or 'not root'})"),
    pytest.mark.skipif(bool(missing(LANGUAGES["c"])), reason="no C toolchain"),
]


def submission(first: str) -> str:
    source = "\n".join((CODE / f"twosteps-{stem}.c").read_text() for stem in (f"{first}-first", "correct-second"))
    return f"```c\n{source}\n```"


@pytest.mark.slow  # compiles and runs three C programs, each as two instances on two tests: several seconds
@pytest.mark.parametrize("name", ["twosteps", "twosteps_comparator"])
def test_cms_two_steps_tests_score_what_tests_py_expects(name):
    """twosteps(-comparator)-correct 100, -half-correct 50, -incorrect 0."""
    assert data_check("contest", [task(name)]).ok
    rows = [{**task(name), "completion": submission(first)} for first in ("correct", "half-correct", "incorrect")]
    assert score_rows("contest", rows) == [1.0, 0.5, 0.0]


@pytest.mark.parametrize(("column", "value", "message"), [
    ("grader", None, "column 'two_steps': a two-step task needs its manager as the 'grader'"),
    ("input_file", "input.txt", "column 'input_file': a two-step task is two batch runs joined by a FIFO"),
    ("two_steps", "yes", "column 'two_steps': 'yes' is not true or false"),
])
def test_a_two_steps_row_that_cannot_be_judged_is_named_by_data_check(column, value, message):
    report = data_check("contest", [{**task("twosteps"), column: value}])
    assert not report.ok and message in str(report.as_dict())
