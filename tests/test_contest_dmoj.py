"""DMOJ's checker kinds, judged on DMOJ judge-server's own test problems with the verdicts their ``test.yml`` expect.

The problems (``tests/data/contest/dmoj``, AGPL-3.0, ``SOURCE.md``) are read from their ``init.yml`` into rows as a
converter would, DMOJ's way: test data with ``\\r\\n`` and ``\\r`` made ``\\n`` (``dmoj/problem.py``), a case with
no files an empty input and answer, the case's points as ``score_max``.  Each covers a kind: bridged checkers of
``type`` ``default`` (in C, with ``flags``, with a header), ``coci`` (C++ partial points, and a Rust checker), ``peg``
(its argument order and its stdout ratio), bridged interactors of ``type`` ``default`` in C; Python ``check()``
modules (``normalize``: ``judge_input``; ``scroll``: ``submission_source``, ``CheckerResult``); the built-in
``easy``, ``linecount`` and ``sorted``.  DMOJ's ``PY2`` submissions are run as the Python 3 of :data:`PY3` (the
reward runs no Python 2; each prints what the Python 2 one prints); the others are DMOJ's files.  Real sandboxes,
real compilers; skipped, naming why, where one is missing.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml

from reward_plugins.contest import dmoj
from reward_plugins.contest.judge import Case, Checker, Problem, Program, Report, judge
from reward_plugins.contest.languages import LANGUAGES, missing
from reward_plugins.contest.rows import RowProblem, problem_from_row
from reward_plugins.contest.rules import RULES
from reward_plugins.sandbox.bwrap import isolation

DATA = Path(__file__).parent / "data" / "contest" / "dmoj"
PY3 = {
    ("bridged_checker", "py_ac"): "print(-1, 1)",
    ("bridged_checker", "py_pe"): "print('This is not a number')",
    ("bridged_checker", "py_wa"): "print(-1, -2)",
    ("easy", "python_echo"): "import sys\nprint(sys.stdin.read())",
    ("linecount", "python_echo"): "import sys\nprint(sys.stdin.read())",
    ("sorted", "python_echo"): "import sys\nsys.stdout.write(sys.stdin.read())",
    ("scroll", "py2_ac"): "print('バカ')",
}
"""DMOJ's Python 2 submissions as Python 3 (``print`` as a function); ``pass`` and an empty file are both."""
LANGS = {"PY2": "python", "PY3": "python", "CPP11": "cpp", "RUST": "rust"}
PROBLEMS = ("bridged_checker", "bridged_checker_flags", "bridged_checker_multifile", "bridged_checker_peg",
            "coci_partial", "rust_bridged", "bridged_interactor_flags", "bridged_interactor_multifile", "normalize",
            "scroll", "easy", "linecount", "sorted")

SANDBOX = pytest.mark.skipif(isolation().mode != "root", reason=f"the contest judge needs the code sandbox in "
                                f"root mode: {isolation().mode} ({isolation().reason or 'not root'})")


def _data(problem: Path, name: str | None) -> str:
    if name is None:
        return ""
    return (problem / name).read_bytes().replace(b"\r\n", b"\r").replace(b"\r", b"\n").decode()


def _files(problem: Path, names: str | list[str]) -> dict[str, str]:
    return {name: (problem / name).read_text() for name in ([names] if isinstance(names, str) else names)}


def row(name: str) -> dict:
    """A DMOJ problem's ``init.yml`` as a row of the reward."""
    problem = DATA / name
    init = yaml.safe_load((problem / "init.yml").read_text())
    cases = init["test_cases"]
    points = {case.get("points", 1) for case in cases}
    assert len(points) == 1, "one score_max per row"
    out: dict = {"prompt": name, "tests": [{"input": _data(problem, case.get("in")),
                                            "output": _data(problem, case.get("out"))} for case in cases],
                 "score_max": points.pop()}
    checker, judge_args = init.get("checker"), None
    if isinstance(checker, dict) and checker["name"] != "bridged":
        checker = checker["name"]  # a built-in with its arguments (linecount's feedback: none that score)
    if isinstance(checker, str) and checker.endswith(".py"):
        out |= {"checker": _files(problem, checker), "checker_protocol": "dmoj"}
    elif isinstance(checker, str):
        out["compare"] = checker
    elif checker is not None:
        judge_args, out["checker"] = checker["args"], _files(problem, checker["args"]["files"])
    if "interactive" in init:
        judge_args = init["interactive"]
        out["interactor"] = _files(problem, judge_args["files"])
    if judge_args is not None:
        out["checker_protocol"] = judge_args.get("type", "default")
        out |= {"checker_language": judge_args["lang"]} if "lang" in judge_args else {}
        out |= {"checker_flags": judge_args["flags"]} if "flags" in judge_args else {}
    return out


def _judge(name: str, language: str, source: str, seconds: float, memory_kib: int) -> Report:
    task = {**row(name), "time_limit": seconds, "memory_limit": memory_kib / 1024}
    problem = problem_from_row(task, time_limit=2, memory_mb=256, output_mb=16, compare="token", float_tolerance=1e-6)
    judges = [j for j in (problem.checker, problem.interactor) if j is not None]
    for lang in {language, *(j.language for j in judges)}:
        if missing(LANGUAGES[lang]):
            pytest.skip(str(missing(LANGUAGES[lang])))
    return judge(Program(LANGUAGES[language], source), problem, deadline=time.monotonic() + 120, rules=RULES["dmoj"])


SUITE = [(p, t.name) for p in PROBLEMS for t in sorted((DATA / p / "tests").iterdir())]


@SANDBOX
@pytest.mark.slow  # compiles a C, C++ or Rust judge and the submission in a fresh sandbox: several seconds each
@pytest.mark.parametrize(("problem", "test"), SUITE, ids=[f"{p}-{t}" for p, t in SUITE])
def test_dmoj_suite_problem_is_judged_as_its_test_yml_expects(problem, test):
    folder = DATA / problem / "tests" / test
    spec = yaml.safe_load((folder / "test.yml").read_text())
    source = PY3.get((problem, test)) or (folder / spec["source"]).read_text()
    report = _judge(problem, LANGS[spec["language"]], source, spec["time"], spec["memory"])
    points = row(problem)["score_max"] * len(report.verdicts)
    if "cases" in spec:  # per case; easy's list has one more than its cases, which DMOJ never reaches
        assert report.verdicts == spec["cases"][:len(report.verdicts)], report.details
    elif spec["expect"] == "IE":
        assert "JE" in report.verdicts and report.score == 0.0, report.details
    elif spec["expect"] == "WA":
        assert "WA" in report.verdicts and "JE" not in report.verdicts, report.details
    else:
        assert "JE" not in report.verdicts, report.details
        expected = spec.get("score", spec.get("points", points))
        assert report.score == pytest.approx(expected / points), report.details


def test_linecount_keeps_a_failed_cases_points_as_dmoj_does():
    """DMOJ's linecount: 9 of 10 lines right is a failed case worth 90 % of its points; more lines than the answer
    fail with none."""
    assert dmoj.compare("linecount", b"1\n2\n3\n", b"1\n2\n4 \n") == (False, pytest.approx(2 / 3))
    assert dmoj.compare("linecount", b"1\n2\n", b"1\n") == (False, 0.0)
    assert dmoj.compare("easy", b"A b\nc", b"cba") == (True, 1.0)
    assert dmoj.compare("sorted", b"2 1\n1 2\n", b"1 2\n2 1\n") == (True, 1.0)
    assert dmoj.compare("sorted", b"1 2\n", b"2 1\n") == (False, 0.0)  # lines compared as their tokens, in order
    assert dmoj.compare("unordered", b"1 2\n", b"2 1\n") == (True, 1.0)


@pytest.mark.parametrize(("stdout", "code", "expected"), [
    ("1\n10\n", 1, ("PC", 0.1)),  # peg: a ratio above 0 is a pass with that share, whatever the exit code
    ("0\n10\n", 1, ("WA", 0.0)),
    ("x\n1\n0\n3\n", 0, ("AC", 1.0)),  # no ratio above 0 (1/0 is skipped): the exit code decides
    ("11\n10\n", 0, ("JE", 0.0)),  # above the points: DMOJ awards them, a reward cannot be above 1
    ("1\n2\n", 3, ("JE", 0.0)),
])
def test_peg_reads_its_stdout_as_dmojs_peg_module(stdout, code, expected):
    verdict, score, _ = dmoj.verdict({"exit": code, "stdout": stdout, "message": ""}, "peg", 10.0)
    assert (verdict, score) == expected


ESCAPES = {
    "lists the compile cache": "assert __import__('os').listdir('/tmp/work/cache')",
    "reads the server's environment": "assert open('/proc/1/environ', 'rb').read()",
    "writes outside its folder": "open('/tmp/work/planted', 'w').write('x')",
    "writes into the compile cache": "open('/tmp/work/cache/planted', 'w').write('x')",
    "runs past its limit": "while True:\n        pass",
    "returns neither bool nor result": "return 'yes'",
}


@SANDBOX
@pytest.mark.slow  # one sandbox start and a checker that spins to its 10 s CPU limit
@pytest.mark.parametrize("attempt", sorted(ESCAPES))
def test_a_hostile_check_module_is_a_judge_error_never_a_pass(attempt):
    """A ``check()`` module that reaches for what DMOJ does not pass it (the compiled submissions, the sandbox
    server's environment), writes where it may not, or runs forever: a judge error (a PermissionError, the
    judge's CPU limit), never a pass.  Each returns True where its attempt
    worked, so a sandbox that let it through would show as AC."""
    if missing(LANGUAGES["python"]):
        pytest.skip(str(missing(LANGUAGES["python"])))
    body = "\n".join("    " + line for line in ESCAPES[attempt].split("\n"))
    module = f"def check(process_output, judge_output, **kwargs):\n{body}\n    return True\n"
    problem = Problem((Case("1 2\n", "3\n"),), checker=Checker((("checker.py", module),), "dmoj"))
    report = judge(Program(LANGUAGES["python"], "print(3)"), problem, deadline=time.monotonic() + 120)
    assert report.verdicts == ["JE"], report.details


@pytest.mark.parametrize(("column", "value", "named"), [
    ("checker_protocol", "peg", "checker_protocol"),  # peg has no interactor (DMOJ raises NotImplementedError)
    ("checker_language", "COBOL", "checker_language"),
    ("checker_flags", ["-fplugin=/tmp/x.so"], "checker_flags"),  # only -D/-U: a flag is row data
])
def test_a_dmoj_interactor_row_that_cannot_be_judged_names_its_column(column, value, named):
    task = {**row("bridged_interactor_flags"), column: value}
    with pytest.raises(RowProblem, match=named):
        problem_from_row(task, time_limit=2, memory_mb=256, output_mb=16, compare="token", float_tolerance=1e-6)


def test_a_check_module_row_must_be_python():
    task = {**row("bridged_checker"), "checker_protocol": "dmoj"}  # checker.c
    with pytest.raises(RowProblem, match="column 'checker': checker_protocol dmoj is a Python check"):
        problem_from_row(task, time_limit=2, memory_mb=256, output_mb=16, compare="token", float_tolerance=1e-6)


INTERACTOR_C = r"""#include <stdio.h>
int main(int argc, char **argv) {  /* DMOJ's interactor arguments: input answer */
    FILE *in = fopen(argv[1], "r"), *ans = fopen(argv[2], "r");
    int n, want, got;
    if (argc != 3 || !in || !ans || fscanf(in, "%d", &n) != 1 || fscanf(ans, "%d", &want) != 1) return 3;
    printf("%d\n", n);
    fflush(stdout);
    if (scanf("%d", &got) != 1) return 1;
    if (got == want) return 0;
    if (got > 0 && got < want) { fprintf(stderr, "partial %d/%d\n", got, want); return 7; }
    return 1;
}
"""


@SANDBOX
@pytest.mark.slow  # compiles a C interactor and runs three programs against it
@pytest.mark.parametrize(("protocol", "program", "expected"), [
    ("default", "print(2 * int(input()))", (["AC"], 1.0)),
    ("default", "print(0)", (["WA"], 0.0)),
    ("default", "print(int(input()))", (["JE"], 0.0)),  # exit 7 is no verdict of the default module's
    ("coci", "print(int(input()))", (["PC"], 0.5)),
    ("coci", "print(0)", (["WA"], 0.0)),
    ("coci", "print(2 * int(input()))", (["AC"], 1.0)),
])
def test_a_c_interactor_speaks_dmojs_default_and_coci_modules(protocol, program, expected):
    """Our C interactor, DMOJ's way: ``input answer`` as its arguments, exit 0 AC, 1 WA; ``coci`` adds exit 7 with
    ``partial a/b``; under ``default`` that exit is DMOJ's internal error (here JE, the report's verdict)."""
    if missing(LANGUAGES["c"]):
        pytest.skip(str(missing(LANGUAGES["c"])))
    task = {"tests": [{"input": "3\n", "output": "6\n"}], "interactor": {"interactor.c": INTERACTOR_C},
            "checker_protocol": protocol}
    problem = problem_from_row(task, time_limit=2, memory_mb=256, output_mb=16, compare="token", float_tolerance=1e-6)
    report = judge(Program(LANGUAGES["python"], program), problem, deadline=time.monotonic() + 120, rules=RULES["dmoj"])
    assert (report.verdicts, report.score) == expected, report.details
