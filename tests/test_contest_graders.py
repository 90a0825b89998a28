"""Graders and communication stubs in every language CMS links one for: C++14, C++20, Pascal, PyPy, C# and Java.

``tests/data/contest/cms/`` (``SOURCE.md``): cmstestsuite's ``batch_fileio_managed`` (a grader with ``main`` calls the
submission's ``userfunc``; ``grader.pas`` ``uses`` it as a unit, ``grader.cs`` calls ``Batchfileiomanaged.Userfunc``)
and ``communication_{stdio,fifoio}_stubbed`` (a stub linked with the submission talks to a Python manager), with
the submissions ``Tests.py`` runs in ``MANAGER_LANGUAGES`` / ``COMMUNICATION_LANGUAGES``, each expected to score
what its ``CheckOverallScore`` says (100 or 0).  Each row goes through the whole reward (the fence tag picks the
language, as a completion names it).  Real sandboxes and compilers; each language skipped, naming its package,
where its toolchain is missing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from contest_suites import cms_batch_row as batch_row
from contest_suites import cms_communication_row as communication_row

from grpo_host.testing import score_rows
from reward_plugins.contest.graders import GRADED
from reward_plugins.contest.languages import LANGUAGES, missing
from reward_plugins.sandbox.bwrap import isolation

CODE = Path(__file__).parent / "data" / "contest" / "cms" / "code"
NEW = {"cpp14": ".cpp", "cpp20": ".cpp", "pascal": ".pas", "pypy3": ".py", "csharp": ".cs"}
"""The languages this file adds graders for, and their submissions' extension (``Tests.py``'s ``%l``)."""
COMMUNICATION = {**{lang: ext for lang, ext in NEW.items() if lang != "csharp"}, "java": ".java"}
"""``COMMUNICATION_LANGUAGES`` (CMS has no C# stub) beyond C, C++ and Python, which test_contest_communication runs."""

pytestmark = pytest.mark.skipif(isolation().mode != "root", reason=f"the contest judge needs the code sandbox in "
                                f"root mode: {isolation().mode} ({isolation().reason or 'not root'})")


def _installed(lang: str) -> None:
    if problem := missing(LANGUAGES[lang]):
        pytest.skip(problem)


def _scores(row: dict, lang: str, stem: str, ext: str) -> list[float | None]:
    sources = [(CODE / f"{stem}-{kind}{ext}").read_text() for kind in ("correct", "incorrect")]
    return score_rows("contest", [{**row, "prompt": "Write userfunc.", "completion": f"```{lang}\n{source}\n```"}
                                  for source in sources])


# slow: two compiles (fpc, mcs, g++ with the grader) and four runs in the sandbox per language, 2-6 s each
@pytest.mark.slow
@pytest.mark.parametrize(("lang", "ext"), NEW.items(), ids=NEW)
def test_cms_grader_submissions_score_what_tests_py_expects(lang, ext):
    """``managed-correct`` 100, ``managed-incorrect`` 0 (``Tests.py``), linked with the task's grader."""
    _installed(lang)
    assert _scores(batch_row("batch_fileio_managed"), lang, "managed", ext) == [1.0, 0.0]


# slow: two compiles with the stub and four runs against a Python manager per language and task, 2-6 s each
@pytest.mark.slow
@pytest.mark.parametrize("task", ["communication_stdio_stubbed", "communication_fifoio_stubbed"])
@pytest.mark.parametrize(("lang", "ext"), COMMUNICATION.items(), ids=COMMUNICATION)
def test_cms_stubbed_communication_scores_what_tests_py_expects(task, lang, ext):
    """``communication-stubbed-correct`` 100, ``-incorrect`` 0, linked with the task's stub in that language."""
    _installed(lang)
    assert _scores(communication_row(task), lang, "communication-stubbed", ext) == [1.0, 0.0]


def test_every_language_cms_links_a_grader_for_links_one():
    """CMS's ``MANAGER_LANGUAGES`` that the reward runs (all but Haskell, PHP, Rust, which CMS does not link)."""
    assert {"c", "cpp", "cpp14", "cpp20", "java", "python", "pypy3", "pascal", "csharp"} <= set(GRADED)
    assert not {"haskell", "php", "rust"} & set(GRADED)
