"""Kattis multi-pass validation judged through the contest reward (``validation_passes``).

problemtools' ``judge/execute.py`` ``_run_multipass`` (commit ``a185fe9``) is the reference: the program runs again
on the ``nextpass.in`` an accepting validator wrote, the validator sees each pass's input, the test's answer and a
feedback folder kept across passes; a rejection with ``nextpass.in`` beside it, or no verdict within the passes,
is a judge error.  DOMjudge's example problem ``jumble`` (``tests/data/contest/domjudge``, GPL-2.0, ``SOURCE.md``;
``validation: custom multi-pass``, a Python validator) is imported with ``grpo-host``'s Kattis importer and its
submissions judged as their folders say.  Real sandboxes; skipped, naming why, where the sandbox is missing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from grpo_host.testing import data_check, score_rows
from reward_plugins.contest.packages import kattis
from reward_plugins.sandbox.bwrap import isolation

JUMBLE = Path(__file__).parent / "data" / "contest" / "domjudge" / "jumble"

pytestmark = pytest.mark.skipif(isolation().mode != "root", reason=f"the contest judge needs the code sandbox in "
                                f"root mode: {isolation().mode} ({isolation().reason or 'not root'})")

COUNTING = """import os, sys
# Counts its passes in the feedback folder; hands the program its number + 1 until 3, then accepts only if this
# is its third pass (the folder was kept).  The answer file says how to misbehave.
input_file, answer_file, feedback = sys.argv[1:4]
state = os.path.join(feedback, "state.txt")
passes = (int(open(state).read()) if os.path.exists(state) else 0) + 1
open(state, "w").write(str(passes))
value, mode = int(open(input_file).read()), open(answer_file).read().strip()
if int(sys.stdin.read().split()[0]) != value:
    sys.exit(43)
if value < 3 or mode == "forever":
    open(os.path.join(feedback, "nextpass.in"), "w").write(f"{value + 1}\\n")
    sys.exit(43 if mode == "reject-with-next" else 42)
sys.exit(42 if passes == 3 else 43)
"""


def counting(answer: str, passes: int) -> dict:
    return {"prompt": "Echo.", "tests": [{"input": "1\n", "output": answer}], "checker": {"validate.py": COUNTING},
            "checker_protocol": "kattis", "validation_passes": passes,
            "completion": "```python\nprint(input())\n```"}


def test_passes_keep_the_feedback_folder_and_a_validator_without_a_verdict_is_a_judge_error():
    rows = [counting("normal\n", 3), counting("normal\n", 2), counting("reject-with-next\n", 3),
            counting("forever\n", 5)]
    assert score_rows("contest", rows) == [1.0, 0.0, 0.0, 0.0]
    report = data_check("contest", [{**counting("normal\n", 3), "checker_protocol": "testlib"}])
    assert not report.ok and "column 'validation_passes': multi-pass needs a Kattis output validator" in str(
        report.as_dict())


def submissions(verdict: str) -> list[str]:
    return sorted(p.read_text() for p in (JUMBLE / "submissions" / verdict).glob("*.py"))


@pytest.mark.slow  # nine Python submissions, each on 18 tests of two passes with a Python validator: about 10 s
def test_domjudges_jumble_imports_as_multi_pass_and_its_submissions_are_judged_as_their_folders_say():
    row = kattis(JUMBLE)
    assert row.items() >= {"validation_passes": 2, "checker_protocol": "kattis"}.items()
    assert data_check("contest", [row]).ok
    accepted, wrong = submissions("accepted"), submissions("wrong_answer")
    scores = score_rows("contest", [{**row, "completion": f"```python\n{s}\n```"} for s in accepted + wrong])
    assert scores[:len(accepted)] == [1.0] * len(accepted)
    assert all(score is not None and score < 1.0 for score in scores[len(accepted):]), scores
