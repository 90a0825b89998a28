"""Partial credit per test from a judge's own suite, not a checker of ours.

None of the suites vendored so far has one: cmstestsuite's comparators print only 1.0 or 0.0 (its "half-correct"
tests are half of the tests right), and DOMjudge's and Kattis's example problems score by groups (``oddecho``,
``tests/test_contest_packages.py``), none by a ``score.txt`` per test.  DMOJ's judge-server test suite has one:
``testlib_partial`` (``tests/data/contest/dmoj``, AGPL-3.0, ``SOURCE.md``), a testlib checker that ends with
``quitp`` on 5 of the case's 10 points, which DMOJ's ``testlib`` contrib module (``dmoj/contrib/testlib.py``: exit
7, ``points <n>`` on stderr, out of the case's points) turns into a score of 5, as its ``test.yml`` expects.  Its
checker and its own copy of ``testlib.h`` (0.9.21) go into the row as they are, the case's points as
``score_max``.  Real sandboxes, real g++; skipped, naming why, where either is missing.
"""

from __future__ import annotations

import pytest
import yaml
from contest_suites import DMOJ_PARTIAL as PROBLEM
from contest_suites import dmoj_partial_row as row

from grpo_host.testing import score_rows
from reward_plugins.contest.languages import LANGUAGES, missing
from reward_plugins.sandbox.bwrap import isolation

pytestmark = [
    pytest.mark.skipif(isolation().mode != "root", reason=f"the contest judge needs the code sandbox in root mode: "
                       f"{isolation().mode} ({isolation().reason or 'not root'})"),
    pytest.mark.skipif(bool(missing(LANGUAGES["cpp"])), reason=str(missing(LANGUAGES["cpp"]))),
]


@pytest.mark.slow  # compiles the checker with DMOJ's own testlib.h (no precompiled header): about 10 s
@pytest.mark.parametrize("test", sorted(p.name for p in (PROBLEM / "tests").iterdir()))
def test_dmojs_testlib_partial_scores_what_its_test_yml_expects(test):
    """``score: 5`` of the case's ``points: 10`` (DMOJ's verdict for it is AC with partial points; here PC, the
    same score).  DMOJ runs it as Python 2; ``pass`` is Python 3 too."""
    spec = yaml.safe_load((PROBLEM / "tests" / test / "test.yml").read_text())
    source = (PROBLEM / "tests" / test / spec["source"]).read_text()
    task = {**row(), "time_limit": spec["time"], "memory_limit": spec["memory"] // 1024}
    [score] = score_rows("contest", [{**task, "completion": f"```python\n{source}\n```"}])
    assert score == spec["score"] / task["score_max"]
