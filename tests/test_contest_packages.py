"""Problem packages as data: ``grpo-host data import kattis|cms`` rows, judged by the ``contest`` reward.

The vendored packages (Kattis problemtools' examples, ``tests/data/contest/kattis``; DOMjudge's example problems,
``benchmarks/data/contest_judges/domjudge``, Kattis-format; task-maker-rust's CMS task,
``tests/data/contest/cms``) are imported through the command a user runs, the rows pass ``data check``, and each
package's own submissions are judged on its row through the reward: an accepted one scores 1.0, a rejected one
less (DOMjudge's ``@EXPECTED_RESULTS@`` tag, where a source has one, says which it is, as
``benchmarks/contest_agreement.py`` reads it).  Then what the import must refuse or reject, each naming the
package and the file or feature.  Real sandboxes and compilers; judging skips, naming why, where the sandbox or a
toolchain is missing.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import HERE, run_cli

from grpo_host import DataError
from grpo_host.testing import data_check, score_rows
from reward_plugins.contest.judge import token_match
from reward_plugins.contest.languages import LANGUAGES, missing
from reward_plugins.contest.packages import cms, kattis
from reward_plugins.contest.rows import problem_from_row
from reward_plugins.sandbox.bwrap import isolation

KATTIS = HERE / "data" / "contest" / "kattis"
DOMJUDGE = HERE.parent / "benchmarks" / "data" / "contest_judges" / "domjudge"
CMS = HERE / "data" / "contest" / "cms"
TAGS = {".c": "c", ".cc": "cpp", ".cpp": "cpp", ".c++": "cpp", ".java": "java", ".js": "javascript",
        ".py": "python", ".rs": "rust", ".go": "go"}
REJECTED = {"wrong_answer", "time_limit_exceeded", "run_time_error", "memory_limit_exceeded", "compiler_error",
            "no_output", "output_limit"}

QUICK = {"different/submissions/accepted/different.cc", "different/submissions/wrong_answer/different_int.cc",
         "guess/submissions/accepted/guess.cc", "guess/submissions/wrong_answer/guess_0.cc",
         "hello/submissions/accepted/hello.cc", "hello/submissions/wrong_answer/hello.cc",
         "oddecho/submissions/accepted/echo.cpp"}
"""One accepted and one rejected C++ submission per vendored Kattis example, where it has them."""

sandbox = pytest.mark.skipif(isolation().mode != "root", reason=f"the contest judge needs the code sandbox in root "
                             f"mode: {isolation().mode} ({isolation().reason or 'not root'})")


def imported(fmt: str, *folders: Path, tmp_path: Path) -> list[dict]:
    """``grpo-host data import FORMAT FOLDER... --out rows.jsonl`` as a user runs it; the rows it wrote."""
    out = tmp_path / f"{fmt}.jsonl"
    proc = run_cli("data", "import", fmt, *map(str, folders), "--out", str(out), pythonpath=[HERE.parent])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"{len(folders)} rows from {fmt} packages" in proc.stdout and "0 refused" in proc.stdout
    return [json.loads(line) for line in out.read_text().splitlines()]


def expected(path: Path) -> bool | None:
    """Accepted (True), rejected (False), or neither said (None): the source's DOMjudge tag, else its folder."""
    found = re.search(r"@EXPECTED_(?:RESULTS|SCORE)@:\s*([A-Z_, -]+)", path.read_text(errors="replace"))
    if found:
        verdicts = {v.strip() for v in found[1].split(",") if v.strip()}
        return True if verdicts == {"CORRECT"} else False if "CORRECT" not in verdicts else None
    return True if path.parent.name == "accepted" else False if path.parent.name in REJECTED else None


def submissions(root: Path, row: dict, quick: bool) -> list[tuple[str, dict, bool]]:
    """(name, row with the submission as its completion, accepted?) for each submission the reward can run."""
    found = []
    for path in sorted(p for p in (root / "submissions").glob("*/*") if p.is_file()):  # one file per program
        tag, verdict = TAGS.get(path.suffix), expected(path)
        if tag is None or verdict is None or path.stem.endswith("_py2") or missing(LANGUAGES[tag]):
            continue  # a language the reward does not run or whose toolchain is missing, Python 2, no verdict
        if quick and str(path.relative_to(root.parent)) not in QUICK:
            continue
        completion = f"```{tag}\n{path.read_text(errors='replace')}\n```"
        found.append((str(path.relative_to(root.parent)), {**row, "completion": completion}, verdict))
    return found


def judged(spec: str, cases: list[tuple[str, dict, bool]]) -> list[str]:
    """Every case whose score is not what its verdict says: 1.0 when accepted, less when rejected."""
    scores = score_rows(spec, [row for _, row, _ in cases])
    return [f"{name}: {score}" for (name, _, accepted), score in zip(cases, scores, strict=True)
            if score is None or (score == 1.0) != accepted]


def test_the_vendored_packages_import_and_pass_data_check(tmp_path):
    ours = imported("kattis", *sorted(p for p in KATTIS.iterdir() if p.is_dir()), tmp_path=tmp_path)
    domjudge = imported("kattis", *sorted(p for p in DOMJUDGE.iterdir() if p.is_dir()), tmp_path=tmp_path)
    [task] = imported("cms", CMS / "without_gen", tmp_path=tmp_path)
    assert [(r["problem"], len(r["tests"])) for r in ours] == [("different", 3), ("guess", 10), ("hello", 1),
                                                               ("oddecho", 16)]
    assert [(r["problem"], len(r["tests"])) for r in domjudge] == [("boolfind", 8), ("fltcmp", 4), ("hello", 1)]
    rows = [*ours, *domjudge, task]
    by_name = {(r["package_format"], r["problem"], len(r["tests"])): r for r in rows}
    different, guess, oddecho = (by_name[("kattis", n, k)] for n, k in (("different", 3), ("guess", 10),
                                                                          ("oddecho", 16)))
    assert set(different["checker"]) == {"validate.cc", "validate.h"} and different["checker_protocol"] == "kattis"
    assert set(guess["interactor"]) == {"validate.cc", "validate.h"} and "checker" not in guess
    assert oddecho["subtasks"] == [{"points": 50.0, "aggregate": "min", "tests": [0, 1, 2]},
                                   {"points": 50.0, "aggregate": "min", "tests": list(range(3, 16))}]
    assert by_name[("kattis", "fltcmp", 4)].items() >= {"compare": "float", "float_tolerance": 1e-6,
                                                       "time_limit": 5.0}.items()
    assert task.items() >= {"time_limit": 1.0, "memory_limit": 64.0, "compare": "lines",
                            "title": "Testing task-maker"}.items()
    assert all(r["statement"] is None and r["problem"] in r["prompt"] for r in rows)  # none ships a statement
    report = data_check("contest", rows)
    assert report.ok, report.as_dict()


@pytest.mark.slow  # compiles two validators and seven programs in the sandbox: about 20 s on two cores
@sandbox
def test_imported_rows_judge_a_quick_sample_of_the_packages_submissions(tmp_path):
    rows = imported("kattis", *sorted(p for p in KATTIS.iterdir() if p.is_dir()), tmp_path=tmp_path)
    cases = [c for row in rows for c in submissions(KATTIS / row["problem"], row, quick=True)]
    assert sorted(name for name, _, _ in cases) == sorted(QUICK) or missing(LANGUAGES["cpp"])
    assert judged("contest", cases) == []


PACKAGES = [*(("contest(output_mb=8)", p) for p in sorted(KATTIS.iterdir()) if p.is_dir()),
            *(("contest(rules=domjudge, output_mb=8)", p) for p in sorted(DOMJUDGE.iterdir()) if p.is_dir())]
"""Each vendored Kattis-format package, with the rules of the judge whose suite it comes from and its output limit
(Kattis's and DOMjudge's default, 8 MiB: a row has no output limit of its own)."""


@pytest.mark.slow  # every submission of the package, the judges' time-limit and stress tests included: minutes
@pytest.mark.timeout(1800)
@sandbox
@pytest.mark.parametrize(("spec", "root"), PACKAGES, ids=[f"{r.parent.name}-{r.name}" for _, r in PACKAGES])
def test_imported_rows_judge_every_packages_submissions_as_its_judge_does(tmp_path, spec, root):
    [row] = imported("kattis", root, tmp_path=tmp_path)
    cases = submissions(root, row, quick=False)
    assert cases or missing(LANGUAGES["cpp"])
    assert judged(spec, cases) == []


@pytest.mark.slow  # compiles and runs a Python program on 16 tests in the sandbox: several seconds
@sandbox
def test_an_imported_scoring_problem_gives_a_partial_solution_its_groups_points(tmp_path):
    [oddecho] = imported("kattis", KATTIS / "oddecho", tmp_path=tmp_path)
    partial = (KATTIS / "oddecho" / "submissions" / "partially_accepted" / "sol.py").read_text()
    assert score_rows("contest", [{**oddecho, "completion": f"```python\n{partial}\n```"}]) == [0.5]  # 1 group of 2


@pytest.mark.slow  # compiles three C++ programs in the sandbox: several seconds
@sandbox
def test_the_cms_tasks_solutions_score_what_task_maker_expects(tmp_path):
    """task-maker-rust's own test expects 100, 50 and 0 out of 100 for these three."""
    [row] = imported("cms", CMS / "without_gen", tmp_path=tmp_path)
    sol = CMS / "without_gen" / "sol"
    rows = [{**row, "completion": f"```cpp\n{(sol / name).read_text()}\n```"}
            for name in ("soluzione.cpp", "wa.cpp", "wrong_file.cpp")]
    assert score_rows("contest", rows) == [1.0, 0.5, 0.0]


# What the import refuses, or cannot read: the package and the file or feature named


def kattis_package(root: Path, problem_yaml: str | None = "name: Toy\n", *, grouped: bool = False, **files: str
                   ) -> Path:
    """A package with ``files``, and a test case ``data/secret/1`` unless its tests are all in groups."""
    root.mkdir(parents=True, exist_ok=True)
    if problem_yaml is not None:
        (root / "problem.yaml").write_text(problem_yaml)
    case = {} if grouped else {"data/secret/1.in": "1\n", "data/secret/1.ans": "1\n"}
    for name, text in {**case, **files}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def cms_task(root: Path, task_yaml: str = 'name: toy\ntitle: Toy\ninfile: ""\noutfile: ""\n', **files: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "task.yaml").write_text(task_yaml)
    for name, text in {"input/input0.txt": "1\n", "output/output0.txt": "1\n", **files}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


@pytest.mark.parametrize(("files", "problem_yaml", "message"), [
    ({}, None, r"kattis package 'toy' \(.*\): problem.yaml: missing"),
    ({"data/secret/2.in": "2\n"}, "name: Toy\n", r"'toy' .*data/secret/2.in: no answer file 2.ans beside it"),
    ({"data/sample/3.ans": "3\n"}, "name: Toy\n", r"'toy' .*data/sample/3.ans: an answer without its input 3.in"),
    ({}, "name: [unclosed\n", r"'toy' .*problem.yaml: not valid YAML"),
    ({}, "type: pass-fail sorting\n", r"problem.yaml: type: unknown sorting"),
    ({}, "validation: custom\n", r"'toy' .*the problem asks for a custom validator and has none"),
])
def test_a_kattis_package_that_cannot_be_read_is_an_error_naming_package_and_file(tmp_path, files, problem_yaml,
                                                                                   message):
    with pytest.raises(DataError, match=message):
        kattis(kattis_package(tmp_path / "toy", problem_yaml, **files))


def test_an_unreadable_validator_is_an_error_naming_its_file(tmp_path):
    root = kattis_package(tmp_path / "toy", "validation: custom\n")
    (root / "output_validators" / "v").mkdir(parents=True)
    (root / "output_validators" / "v" / "validate.cc").write_bytes(b"int main() { return 42; }\xff\xfe\n")
    with pytest.raises(DataError, match=r"'toy' .*output_validators/v/validate.cc: not UTF-8 text"):
        kattis(root)


def test_a_link_out_of_the_package_is_refused(tmp_path):
    (tmp_path / "secret.txt").write_text("not the package's\n")
    root = kattis_package(tmp_path / "toy", "name: Toy\n")
    (root / "data" / "secret" / "1.ans").unlink()
    (root / "data" / "secret" / "1.ans").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(DataError, match=r"data/secret/1.ans: a symbolic link that leads out of the package"):
        kattis(root)


@pytest.mark.parametrize(("problem_yaml", "files", "feature"), [
    ("type: [multi-pass, interactive]\n", {}, r"interactive multi-pass validation"),
    ("type: submit-answer\n", {}, r"output-only submissions"),
    ("validation: custom score\n", {"output_validators/v/validate.py": "print()\n"},
     r"scores from a custom validator in a problem that is not type: scoring"),
    ("validation: custom\n", {"output_validators/v/validate.sh": "exit 42\n"},
     r"an output validator that is neither C\+\+ nor Python \(output_validators/v/validate.sh\)"),
    ("validation: custom\nvalidator_flags: float_tolerance 1e-6\n", {"output_validators/v/validate.cc": ""},
     r"validator flags passed to a custom validator"),
    ("validator_flags: float_relative_tolerance 1e-6\n", {}, r"a float tolerance that is only relative"),
    ("validator_flags: ignore_trailing\n", {}, r"the default validator's flag 'ignore_trailing'"),
    ("name: Toy\n", {"data/secret/g/testdata.yaml": "output_validator_flags: case_sensitive\n"},
     r"output validator flags that differ by test group \(data/secret/g/testdata.yaml\)"),
    ("type: scoring\n", {}, r"a scoring problem's test case outside a group \(data/secret/1\)"),
    ("limits:\n  output: 32\n", {}, r"a per-problem output limit \(limits.output: 32 MiB;"),
    ("type: scoring\n", {"grouped": True, "data/secret/g/1.in": "1\n", "data/secret/g/1.ans": "1\n",
                         "data/secret/g/testdata.yaml": "accept_score: 10\n"},
     r"a summed scoring group that stops at its first rejection \(data/secret/g: on_reject 'break'"),
    ("type: scoring\n", {"grouped": True, "data/secret/g/1.in": "1\n", "data/secret/g/1.ans": "1\n",
                         "data/secret/g/testdata.yaml": "grader_flags: avg\n"},
     r"a scoring group's grader_flags 'avg'"),
    ("type: scoring\nvalidation: custom score\n", {
        "grouped": True, "output_validators/v/validate.py": "", "data/secret/testdata.yaml": "on_reject: continue\n",
        **{f"data/secret/{g}/1.{e}": "1\n" for g in "ab" for e in ("in", "ans")},
        "data/secret/a/testdata.yaml": "accept_score: 10\n", "data/secret/b/testdata.yaml": "accept_score: 20\n"},
     r"validator scores \(validation: custom score\) in groups of different worth \(accept_score 10, 20;"),
])
def test_what_the_reward_cannot_judge_refuses_the_kattis_package_naming_the_feature(tmp_path, problem_yaml, files,
                                                                                     feature):
    root = kattis_package(tmp_path / "toy", problem_yaml, **files)
    with pytest.raises(DataError, match=rf"kattis package 'toy' .*the contest reward cannot judge {feature}"):
        kattis(root)


def test_kattis_flags_limits_groups_and_the_statement_become_columns(tmp_path):
    root = kattis_package(tmp_path / "toy", "problem_format_version: 2023-07-draft\nname: {en: Toy, sv: Leksak}\n"
                          "type: [scoring]\nlimits: {time_limit: 1.5, memory: 128}\n", grouped=True, **{
                              "data/sample/1.in": "0\n", "data/sample/1.ans": "0\n",
                              "data/testdata.yaml": "output_validator_args: [float_tolerance, '1e-4']\n",
                              "data/secret/g1/a.in": "1\n", "data/secret/g1/a.ans": "1\n",
                              "data/secret/g1/testdata.yaml": "grader_flags: min\naccept_score: 30\n",
                              "data/secret/g2/x/b.in": "2\n", "data/secret/g2/x/b.ans": "2\n",
                              "data/secret/g2/c.in": "3\n", "data/secret/g2/c.ans": "3\n",
                              "data/secret/g2/testdata.yaml": "grader_flags: min\naccept_score: 70\n",
                              "problem_statement/problem.sv.md": "Summera talen.\n",
                              "problem_statement/problem.en.tex": "\\problemname{Toy}\nAdd the numbers.\n"})
    row = kattis(root)
    assert row["tests"] == [{"input": "1\n", "output": "1\n"}, {"input": "3\n", "output": "3\n"},
                            {"input": "2\n", "output": "2\n"}]  # a group's cases and subgroups by name: c, x/b
    assert row.items() >= {"title": "Toy", "statement": "problem_statement/problem.en.tex", "time_limit": 1.5,
                           "memory_limit": 128.0, "compare": "float", "float_tolerance": 1e-4,
                           "subtasks": [{"points": 30.0, "aggregate": "min", "tests": [0]},
                                        {"points": 70.0, "aggregate": "min", "tests": [1, 2]}]}.items()
    assert row["prompt"] == "\\problemname{Toy}\nAdd the numbers.\n"
    assert data_check("contest", [row]).ok


def test_a_legacy_package_with_a_validator_folder_but_default_validation_compares_tokens(tmp_path):
    """Legacy packages say `validation: custom`; 2023-07 ones have no `validation` and the folder says it."""
    files = {"output_validators/v/validate.cc": "int main() { return 42; }\n", "output_validators/v/.gitignore": "a\n"}
    legacy = kattis(kattis_package(tmp_path / "legacy", "name: Toy\n", **files))
    assert legacy["compare"] == "token" and "checker" not in legacy
    new = kattis(kattis_package(tmp_path / "new", "problem_format_version: 2023-07-draft\n", **files))
    assert new["checker"] == {"validate.cc": "int main() { return 42; }\n"} and "compare" not in new


@pytest.mark.parametrize(("task_yaml", "files", "feature"), [
    ('name: toy\nnum_processes: 9\n', {"check/manager": "#!/usr/bin/python3\n"},
     r"communication with 9 processes \(num_processes; 1 to 8 are judged\)"),
    ('name: toy\ninfile: ""\noutfile: ""\n', {"cor/correttore": "\x7fELF"},
     r"a CMS correttore that is neither a Python script nor beside its C\+\+ source \(cor/correttore\)"),
    ('name: toy\ninfile: ""\noutfile: ""\nscore_type: GroupThreshold\nscore_type_parameters: [[50, 1, 0.5]]\n'
     'n_input: 1\n', {}, r"score_type 'GroupThreshold'"),
])
def test_what_the_reward_cannot_judge_refuses_the_cms_task_naming_the_feature(tmp_path, task_yaml, files, feature):
    with pytest.raises(DataError, match=rf"cms package 'toy' .*the contest reward cannot judge {feature}"):
        cms(cms_task(tmp_path / "toy", task_yaml, **files))


def test_cms_subtasks_come_from_gen_and_a_missing_output_is_named(tmp_path):
    gen = "# ST: 40\n1\n# a comment\n#COPY: hard.txt\n# ST: 60\n3\n"
    files = {f"input/input{i}.txt": f"{i}\n" for i in range(3)} | {f"output/output{i}.txt": f"{i}\n" for i in range(3)}
    row = cms(cms_task(tmp_path / "toy", **files, **{"gen/GEN": gen, "statement/statement.md": "Echo.\n"}))
    assert row["subtasks"] == [{"points": 40.0, "tests": [0, 1]}, {"points": 60.0, "tests": [2]}]
    assert (row["prompt"], row["statement"], len(row["tests"])) == ("Echo.\n", "statement/statement.md", 3)
    (tmp_path / "toy" / "output" / "output2.txt").unlink()
    with pytest.raises(DataError, match=r"cms package 'toy' .*output/output2.txt: missing \(the task has 3 test"):
        cms(tmp_path / "toy")
    (tmp_path / "toy" / "gen" / "GEN").write_text("1\n# ST: 100\n2\n")
    with pytest.raises(DataError, match=r"cms package 'toy' .*gen/GEN: 1 test cases before the first #ST: line"):
        cms(tmp_path / "toy")
    (tmp_path / "nothing").mkdir()
    with pytest.raises(DataError, match=r"cms package 'nothing' .*task.yaml: missing"):
        cms(tmp_path / "nothing")


def test_data_import_writes_what_it_can_and_names_each_refused_package(tmp_path):
    good = kattis_package(tmp_path / "good", "name: Good\n")
    bad = kattis_package(tmp_path / "bad", "type: submit-answer\n")
    out = tmp_path / "rows.jsonl"
    proc = run_cli("data", "import", "kattis", str(good), str(bad), "--out", str(out), pythonpath=[HERE.parent])
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "refused: kattis package 'bad'" in proc.stderr and "output-only submissions" in proc.stderr
    assert "1 rows from kattis packages" in proc.stdout and "1 refused" in proc.stdout
    assert [json.loads(line)["problem"] for line in out.read_text().splitlines()] == ["good"]
    proc = run_cli("data", "import", "polygon", str(good), "--out", str(out), pythonpath=[HERE.parent])
    assert proc.returncode == 2 and "unknown importer 'polygon'; available: cms, kattis" in proc.stderr


# What the import carries now that the reward judges it


VALIDATE_PY = """import sys
# problemtools' contract: validate input judge_answer feedback_dir < team_output; the score in score.txt
value = int(sys.stdin.read().split()[0])
open(sys.argv[3] + "/score.txt", "w").write(str(min(max(value, 0), 10)))
sys.exit(42)
"""


def scoring_package(root: Path) -> Path:
    """Two groups worth 10 a test: ``a`` sums its two tests (``on_reject: continue``), ``b`` takes the least; a
    Python validator scores each test by the number printed, at most 10."""
    return kattis_package(root, "type: scoring\nvalidation: custom score\n", grouped=True, **{
        "output_validators/v/validate.py": VALIDATE_PY,
        "data/secret/testdata.yaml": "accept_score: 10\n",
        "data/secret/a/testdata.yaml": "on_reject: continue\n",
        "data/secret/a/1.in": "4\n", "data/secret/a/1.ans": "\n", "data/secret/a/2.in": "12\n",
        "data/secret/a/2.ans": "\n", "data/secret/b/testdata.yaml": "grader_flags: min\n",
        "data/secret/b/1.in": "7\n", "data/secret/b/1.ans": "\n"})


def test_kattis_python_validators_summed_groups_and_validator_scores_become_columns(tmp_path):
    row = kattis(scoring_package(tmp_path / "toy"))
    assert row.items() >= {"checker": {"validate.py": VALIDATE_PY}, "checker_protocol": "kattis", "score_max": 10.0,
                           "subtasks": [{"points": 20.0, "aggregate": "sum", "tests": [0, 1]},
                                        {"points": 10.0, "aggregate": "min", "tests": [2]}]}.items()
    assert data_check("contest", [row]).ok


@pytest.mark.slow  # runs a Python program and a Python validator on three tests in the sandbox: several seconds
@sandbox
def test_an_imported_kattis_scoring_problem_sums_its_python_validators_scores(tmp_path):
    """Kattis would give 4 + 10 for group a (summed) and 7 for group b (the least), 21 of 30."""
    [row] = imported("kattis", scoring_package(tmp_path / "toy"), tmp_path=tmp_path)
    assert score_rows("contest", [{**row, "completion": "```python\nprint(input())\n```"}]) == [pytest.approx(0.7)]


def cms_managed_task(root: Path) -> Path:
    """cmstestsuite's ``batch_fileio_managed`` laid out as ``italy_yaml`` reads a task: file I/O, a grader per
    language with its header, a Python comparator, two tests worth 50 each."""
    data, managers = CMS / "batch_fileio_managed" / "data", CMS / "batch_fileio_managed" / "managers"
    files = {f"input/input{i}.txt": (data / f"{i + 1}.in").read_text() for i in range(2)}
    files |= {f"output/output{i}.txt": (data / f"{i + 1}.out").read_text() for i in range(2)}
    files |= {f"sol/{p.name}": p.read_text() for p in managers.iterdir() if p.name != "checker"}
    files["check/checker"] = (managers / "checker").read_text()
    return cms_task(root, "name: batchfileiomanaged\ntitle: Managed\ninfile: input.txt\noutfile: output.txt\n"
                    "time_limit: 0.5\nmemory_limit: 128\nn_input: 2\n", **files)


def test_a_cms_task_with_file_io_a_grader_and_a_python_comparator_becomes_columns(tmp_path):
    row = cms(cms_managed_task(tmp_path / "batchfileiomanaged"))
    assert row.items() >= {"input_file": "input.txt", "output_file": "output.txt", "checker_protocol": "cms",
                           "submission_name": "batchfileiomanaged"}.items()
    assert set(row["grader"]) == {"grader.c", "grader.cpp", "grader.cs", "grader.java", "grader.pas", "grader.py",
                                  "task.h"}
    assert list(row["checker"]) == ["checker.py"] and "compare" in row
    assert data_check("contest", [row]).ok
    mul = cms(cms_task(tmp_path / "mul", 'name: toy\ninfile: ""\noutfile: ""\nscore_type: GroupMul\n'
                       'score_type_parameters: [[100, 1]]\nn_input: 1\n'))
    assert mul["subtasks"] == [{"points": 100.0, "tests": [0], "aggregate": "mul"}]
    oo = cms(cms_task(tmp_path / "oo", "name: oo\noutput_only: true\n", **{"check/checker": "#!/usr/bin/python3\n"}))
    assert oo.items() >= {"output_only": True, "checker_protocol": "cms"}.items() and "input_file" not in oo
    assert data_check("contest", [oo]).ok
    comm = cms(cms_task(tmp_path / "comm", "name: comm\nuser_io: std_io\n", **{
        "cor/manager": "#!/usr/bin/python3\nprint(1)\n", "sol/stub.c": "int main() {}\n", "sol/grader.c": "x"}))
    assert comm.items() >= {"manager": {"manager.py": "#!/usr/bin/python3\nprint(1)\n"}, "user_io": "std_io",
                            "grader": {"stub.c": "int main() {}\n"}, "submission_name": "comm"}.items()
    assert "input_file" not in comm and "checker" not in comm and data_check("contest", [comm]).ok
    cpp = cms(cms_task(tmp_path / "cpp", **{"check/checker": "\x7fELF", "check/checker.cpp": "int main() {}\n"}))
    assert cpp["checker"] == {"checker.cpp": "int main() {}\n"} and cpp["checker_protocol"] == "cms"


@pytest.mark.slow  # compiles and runs three graded programs and a Python comparator in the sandbox: several seconds
@sandbox
def test_an_imported_cms_managed_task_scores_cms_own_submissions_as_tests_py_expects(tmp_path):
    """cmstestsuite's Tests.py: managed-correct 100, managed-incorrect 0 (``suite.json``)."""
    [row] = imported("cms", cms_managed_task(tmp_path / "batchfileiomanaged"), tmp_path=tmp_path)
    code = CMS / "code"
    cases = [("cpp", "managed-correct.cpp"), ("cpp", "managed-incorrect.cpp"), ("python", "managed-incorrect.py")]
    rows = [{**row, "completion": f"```{tag}\n{(code / name).read_text()}\n```"} for tag, name in cases]
    assert score_rows("contest", rows) == [1.0, 0.0, 0.0]


@pytest.mark.slow  # runs two Python programs against a Python manager on two tests in the sandbox: several seconds
@sandbox
def test_an_imported_cms_communication_task_scores_cms_own_submissions_as_tests_py_expects(tmp_path):
    """cmstestsuite's ``communication_fifoio_stubbed`` laid out as ``italy_yaml`` reads it (``check/manager``,
    ``sol/stub.*``, ``user_io: fifo_io``): communication-stubbed-correct 100, -incorrect 0."""
    source = CMS / "communication_fifoio_stubbed"
    files = {f"input/input{i}.txt": (source / "data" / f"{i + 1}.in").read_text() for i in range(2)}
    files |= {f"output/output{i}.txt": (source / "data" / f"{i + 1}.out").read_text() for i in range(2)}
    files |= {f"sol/{p.name}": p.read_text() for p in (source / "managers").glob("stub.*")}
    files["check/manager"] = (source / "managers" / "manager").read_text()
    root = cms_task(tmp_path / "communication", 'name: communication\ninfile: ""\noutfile: ""\ntime_limit: 1\n'
                    "memory_limit: 128\nn_input: 2\nuser_io: fifo_io\n", **files)
    [row] = imported("cms", root, tmp_path=tmp_path)
    rows = [{**row, "completion": f"```python\n{(CMS / 'code' / name).read_text()}\n```"}
            for name in ("communication-stubbed-correct.py", "communication-stubbed-incorrect.py")]
    assert score_rows("contest", rows) == [1.0, 0.0]


@pytest.mark.parametrize(("flags", "cased"), [("", False), ("validator_flags: case_sensitive\n", True),
                                              ("validator_flags: float_tolerance 1e-6\n", False)])
def test_the_default_validator_ignores_case_unless_the_package_says_case_sensitive(tmp_path, flags, cased):
    """problemtools' default validator (and DOMjudge's compare) compare letters ignoring case by default: a row
    that compared them exactly would reject what the judge accepts (DOMjudge's R hello prints ``Hello World!``)."""
    row = kattis(kattis_package(tmp_path / "toy", "name: Toy\n" + flags))
    assert row["case_sensitive"] is cased
    problem = problem_from_row(row, time_limit=1.0, memory_mb=256, output_mb=16, compare="token",
                               float_tolerance=1e-6)
    assert token_match("Hello World!\n", "Hello world!\n", problem) is not cased
    assert not token_match("Hello there!\n", "Hello world!\n", problem)


def test_a_case_sensitive_column_that_is_not_a_boolean_is_named(tmp_path):
    row = {**kattis(kattis_package(tmp_path / "toy", "name: Toy\n")), "case_sensitive": "no"}
    with pytest.raises(ValueError, match=r"column 'case_sensitive': 'no' is not true or false"):
        problem_from_row(row, time_limit=1.0, memory_mb=256, output_mb=16, compare="token", float_tolerance=1e-6)
