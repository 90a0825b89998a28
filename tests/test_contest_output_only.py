"""CMS's OutputOnly tasks judged through the contest reward: the completion is each test's output file.

``tests/data/contest/cms/`` (``SOURCE.md``): cmstestsuite's ``outputonly`` (white diff) and
``outputonly_comparator`` (a Python comparator, CMS's checker protocol) tasks, two tests worth 50 each
(``score_type: Sum``), and the submitted files of ``cmstestsuite/Tests.py``'s OutputOnly tests with the scores it
expects of them.  Then attacks: file names that climb out of a folder, a program in place of the files, another
task kind's columns.  Real sandboxes; skipped, naming why, where the sandbox is missing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from contest_suites import OUTPUT_ONLY_TESTS_PY as TESTS_PY
from contest_suites import cms_output_only_row as task
from contest_suites import output_only_completion as completion
from contest_suites import submitted

from grpo_host.testing import data_check, score_rows
from reward_plugins.contest.outputs import output_files
from reward_plugins.sandbox.bwrap import isolation

SUITE = Path(__file__).parent / "data" / "contest" / "cms"
CODE = SUITE / "code"

sandbox = pytest.mark.skipif(isolation().mode != "root", reason=f"the contest judge needs the code sandbox in root "
                             f"mode: {isolation().mode} ({isolation().reason or 'not root'})")

@sandbox
@pytest.mark.parametrize("name", ["outputonly", "outputonly_comparator"])
def test_cms_outputonly_tests_score_what_tests_py_expects(name):
    rows = [{**task(name), "completion": completion(files)} for _, files, _ in TESTS_PY]
    assert score_rows("contest", rows) == [expected for _, _, expected in TESTS_PY]


@sandbox
def test_a_file_not_submitted_scores_0_for_its_test_and_a_program_is_not_run():
    correct = (CODE / "correct-outputonly-000.txt").read_text()
    only_first = submitted(("output_000.txt", correct))
    program = "```python\nprint(123)\n```\n"
    twice = submitted(("output_000.txt", "999\n"), ("output_000.txt", correct), ("output_001.txt", "1234\n"))
    assert score_rows("contest", [{**task("outputonly"), "completion": c} for c in (only_first, program, twice)]) \
        == [0.5, 0.0, 1.0]  # the last block named output_000.txt counts


def test_file_names_that_leave_the_folder_or_are_not_the_tasks_are_not_read(tmp_path):
    escape = tmp_path / "output_000.txt"
    names = ["../output_000.txt", "./output_000.txt", str(escape), "output_000.txt/..", "output_002.txt",
             "output_0.txt", "OUTPUT_000.TXT", "output_000.txt\x00", "output_-01.txt"]
    assert output_files(submitted(*((n, "123\n") for n in names)), 2) == {}
    assert not escape.exists()
    assert output_files(submitted(("output_001.txt", "1234")), 2) == {1: "1234\n"}


@sandbox
def test_path_traversal_names_score_as_files_not_submitted(tmp_path):
    attack = submitted(("../output_000.txt", "123\n"), (f"{tmp_path}/output_001.txt", "1234\n"))
    assert score_rows("contest", [{**task("outputonly"), "completion": attack}]) == [0.0]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("column", "value"), [("interactor", "int main() {}"), ("grader", {"grader.cpp": "x"}),
                                               ("input_file", "input.txt"), ("file_io", True)])
def test_an_output_only_row_with_a_programs_column_is_named_by_data_check(column, value):
    assert data_check("contest", [task("outputonly"), task("outputonly_comparator")]).ok
    report = data_check("contest", [{**task("outputonly"), column: value}])
    assert not report.ok and f"column {column!r}: an output-only task runs no program" in str(report.as_dict())
