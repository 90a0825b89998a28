"""The ``contest`` reward through its entry point and the CLI: rows of every shape, verdict counters, the compile
cache, subtasks, checkers, and refusal without a sandbox.  Real sandboxes and compilers throughout."""

from __future__ import annotations

import base64
import json
import pickle
import time
import zlib

import pytest
from conftest import run_cli, write_jsonl

from grpo_host import get_reward
from grpo_host.testing import HEAVY_MODULES, assert_discovered, assert_listing_is_light
from reward_plugins.contest.judge import Case, Problem, Program, jail_for, judge, token_match
from reward_plugins.contest.languages import LANGUAGES, Language, by_tag, missing
from reward_plugins.contest.rewards import check_row, extract_program
from reward_plugins.contest.rows import RowProblem, problem_from_row
from reward_plugins.sandbox.bwrap import isolation

needs_root_sandbox = pytest.mark.skipif(isolation().mode != "root", reason="the contest judge needs the code "
                                        f"sandbox in root mode: {isolation().mode} ({isolation().reason})")

ADD_CPP = "```cpp\n#include <cstdio>\nint main(){long long a,b;scanf(\"%lld%lld\",&a,&b);printf(\"%lld\\n\",a+b);}\n```"
ADD_TESTS = [{"input": "1 2\n", "output": "3\n"}, {"input": "10 -4\n", "output": "6\n"},
             {"input": "0 0\n", "output": "0\n"}]
DEFAULTS = {"time_limit": 2.0, "memory_mb": 256, "output_mb": 16, "compare": "token", "float_tolerance": 1e-6}


def test_installed_pack_registers_contest_and_listing_stays_light():
    assert_discovered("contest", ["contest"])
    assert_listing_is_light("contest", HEAVY_MODULES)


def test_the_fence_names_the_language_and_an_untagged_one_falls_back():
    assert extract_program("x\n```python\nprint(1)\n```\n```C++\nint main(){}\n```", "cpp") == ("C++",
                                                                                                 "int main(){}\n")
    assert extract_program("```\nputs\n```", "ruby") == ("ruby", "puts\n")
    assert extract_program("```cpp\nunclosed", "cpp") == (None, None)
    assert by_tag("C++").name == "cpp" and by_tag("py3").name == "python" and by_tag("cobol") is None


def test_a_missing_toolchain_names_its_package():
    absent = Language("fortran", ("f90",), "main.f90", ("gfortran-not-installed",), "gfortran", (), ())
    assert "apt-get install gfortran" in missing(absent)


@pytest.mark.parametrize("shape", ["tests", "codecontests", "taco", "livecodebench", "livecodebench-packed"])
def test_dataset_row_shapes_map_onto_the_same_problem(shape):
    cases = [("1 2\n", "3\n"), ("5 5\n", "10\n")]
    lcb = json.dumps([{"input": i, "output": o, "testtype": "stdin"} for i, o in cases])
    row = {
        "tests": {"tests": [{"input": i, "output": o} for i, o in cases], "time_limit": 1.5, "memory_limit": 64},
        "codecontests": {"public_tests": {"input": [cases[0][0]], "output": [cases[0][1]]},
                         "private_tests": {"input": [cases[1][0]], "output": [cases[1][1]]},
                         "time_limit": {"seconds": 1, "nanos": 500_000_000}, "memory_limit_bytes": 64 << 20},
        "taco": {"input_output": json.dumps({"inputs": [c[0] for c in cases], "outputs": [c[1] for c in cases]}),
                 "time_limit": "1.5 seconds", "memory_limit": "64 megabytes"},
        "livecodebench": {"public_test_cases": lcb, "time_limit": 1.5, "memory_limit": 64},
        "livecodebench-packed": {"private_test_cases": base64.b64encode(zlib.compress(pickle.dumps(lcb))).decode(),
                                 "time_limit": 1.5, "memory_limit": 64},
    }[shape]
    problem = problem_from_row(row, **DEFAULTS)
    assert [(t.input, t.answer) for t in problem.tests] == cases
    assert (problem.time_limit, problem.memory) == (1.5, 64 << 20)


def test_a_pickled_object_in_a_row_is_refused_not_loaded():
    class Boom:
        def __reduce__(self):
            return (print, ("ran code from a row",))

    packed = base64.b64encode(zlib.compress(pickle.dumps(Boom()))).decode()
    with pytest.raises(RowProblem, match="private_test_cases"):
        problem_from_row({"private_test_cases": packed}, **DEFAULTS)


@pytest.mark.parametrize(("row", "column"), [
    ({"tests": [{"input": "1"}]}, "tests"),
    ({"tests": ADD_TESTS, "time_limit": "soon"}, "time_limit"),
    ({"tests": ADD_TESTS, "memory_limit": 0.5}, "memory_limit"),
    ({"tests": ADD_TESTS, "subtasks": [{"points": 5, "tests": [0, 3]}]}, "subtasks"),
    ({"tests": ADD_TESTS, "checker": {"../x.cpp": "int main(){}"}}, "checker"),
    ({"tests": ADD_TESTS, "checker": "int main(){}", "checker_protocol": "polygon"}, "checker_protocol"),
    ({"tests": ADD_TESTS, "compare": "fuzzy"}, "compare"),
    ({"tests": ADD_TESTS, "file_io": "yes"}, "file_io"),
    ({"tests": ADD_TESTS, "language": "cobol"}, "language"),
    ({"input_output": json.dumps({"inputs": ["1"], "outputs": ["1"], "fn_name": "f"})}, "input_output"),
    ({"public_test_cases": json.dumps([{"input": "1", "output": "1", "testtype": "functional"}])},
     "public_test_cases"),
])
def test_check_row_names_the_column(row, column):
    problem = check_row(row)
    assert problem is not None and f"'{column}'" in problem, problem


def test_builtin_checkers():
    token = Problem((), compare="token")
    assert token_match("3  4\n\n", "3 4", token) and not token_match("3 4 5", "3 4", token)
    assert token_match("a\n", "a", Problem((), compare="exact")) and not token_match("a ", "a",
                                                                                       Problem((), compare="exact"))
    assert token_match("x  \n\n", "x", Problem((), compare="lines"))
    floats = Problem((), compare="float", float_abs=1e-6, float_rel=1e-6)
    assert token_match("3.1415927 yes", "3.14159265 yes", floats)
    assert token_match("1.0000001e9", "1e9", floats)  # relative error 1e-7
    assert not token_match("3.15 yes", "3.14159265 yes", floats) and not token_match("nan", "1.0", floats)


@pytest.fixture(scope="module")
def contest():
    """The installed reward, where it can run here: the sandbox in root mode, g++ (most programs below are C++)."""
    if isolation().mode != "root":
        pytest.skip(f"the contest judge needs the code sandbox in root mode: {isolation().reason or 'not root'}")
    if problem := missing(LANGUAGES["cpp"]):
        pytest.skip(problem)
    return get_reward("contest")


def _score(reward, completion, **row):
    return reward.fn(completion, params=reward.params(), **row)


def test_scores_and_counts_verdicts(contest):
    full = _score(contest, ADD_CPP, tests=ADD_TESTS)
    assert full.value == 1.0 and full.counts["ac"] == 3
    wrong = _score(contest, ADD_CPP, tests=[*ADD_TESTS[:2], {"input": "1 1\n", "output": "3\n"}])
    assert wrong.value == pytest.approx(2 / 3) and wrong.counts["wa"] == 1 and wrong.counts["cached"] == 1
    assert _score(contest, "```cpp\nint main( {\n```", tests=ADD_TESTS).counts == {"ce": 1, "cached": 0}
    assert _score(contest, "no code at all", tests=ADD_TESTS).value == 0.0
    assert _score(contest, ADD_CPP, tests=[{"input": "1"}]).value is None  # a bad row: None, named by data check


@pytest.mark.slow
def test_tle_mle_re_ole_are_told_apart(contest):
    row = {"tests": ADD_TESTS[:1], "time_limit": 0.5, "memory_limit": 64}
    programs = {
        "tle": "int main(){volatile unsigned long x=0;for(;;)x++;}",
        "mle": "#include <vector>\n#include <cstdio>\nint main(){std::vector<char> v(200<<20, 1);printf(\"%d\",v[9]);}",
        "re": "int main(){volatile int *p=0;return *p;}",
        "ole": "#include <cstdio>\nint main(){for(;;)puts(\"spam spam spam spam\");}",
    }
    for verdict, source in programs.items():
        scored = _score(contest, f"```cpp\n{source}\n```", **row)
        assert scored.value == 0.0 and scored.counts.get(verdict) == 1, (verdict, scored)


def test_subtasks_sum_the_points_of_fully_passed_groups(contest):
    tests = [*ADD_TESTS, {"input": "1 1\n", "output": "3\n"}]
    scored = _score(contest, ADD_CPP, tests=tests,
                    subtasks=[{"points": 30, "tests": [0, 1]}, {"points": 70, "tests": [2, 3]}])
    assert scored.value == pytest.approx(0.3) and scored.counts["wa"] == 1


def test_float_compare_from_the_row(contest):
    area = "```python\nimport math\nr = float(input())\nprint(math.pi * r * r)\n```"
    tests = [{"input": "2\n", "output": "12.566370614\n"}]
    assert _score(contest, area, tests=tests, compare="float").value == 1.0
    assert _score(contest, area, tests=tests).value == 0.0  # token by default: the digits differ


@needs_root_sandbox
@pytest.mark.skipif(bool(missing(LANGUAGES["cpp"])), reason=str(missing(LANGUAGES["cpp"])))
def test_a_group_of_identical_programs_compiles_once():
    jail = jail_for(frozenset({"cpp"}))
    before = jail.compiles
    problem = Problem(tuple(Case(t["input"], t["output"]) for t in ADD_TESTS))
    source = ADD_CPP.split("\n", 1)[1].rsplit("```", 1)[0] + "// group member\n"
    reports = [judge(Program(LANGUAGES["cpp"], source), problem, deadline=time.monotonic() + 60) for _ in range(8)]
    assert all(r.score == 1.0 for r in reports)
    assert jail.compiles - before == 1 and [r.cached for r in reports] == [False] + [True] * 7


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_score_cli_reports_the_counters(tmp_path, contest):
    data = write_jsonl(tmp_path / "rows.jsonl", [
        {"prompt": "add", "completion": ADD_CPP, "tests": ADD_TESTS},
        {"prompt": "add", "completion": "```python\nprint(3)\n```", "tests": ADD_TESTS},
    ])
    proc = run_cli("score", str(data), "--rewards", "contest", "--json", "--out", str(tmp_path / "out.jsonl"))
    assert proc.returncode == 0, proc.stderr
    counts = json.loads(proc.stdout)["rewards"]["contest"]["counts"]
    assert counts["ac"] == 4 and counts["wa"] == 2, counts


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_without_a_sandbox_data_check_and_score_refuse(tmp_path):
    data = write_jsonl(tmp_path / "rows.jsonl", [{"prompt": "add", "completion": ADD_CPP, "tests": ADD_TESTS}])
    for args in (("data", "check", str(data)), ("score", str(data), "--out", "-")):
        proc = run_cli(*args, "--rewards", "contest", env={"GRPO_HOST_BWRAP": "off"})
        text = " ".join(proc.stderr.split())
        assert proc.returncode != 0 and "contest reward refuses to run" in text and "Remedy:" in text, text
        assert proc.stdout.strip() == ""


def test_a_file_io_row_lets_its_program_write_files(contest):
    """Files in the program's folder only where the row declares file I/O (a batch program's folder is read-only, as
    the reference judges rule)."""
    scratch = ("```cpp\n#include <cstdio>\nint main(){long long a,b;scanf(\"%lld%lld\",&a,&b);"
               "FILE*f=fopen(\"t\",\"w\");if(!f)return 1;fprintf(f,\"%lld\",a+b);fclose(f);f=fopen(\"t\",\"r\");"
               "long long s;fscanf(f,\"%lld\",&s);printf(\"%lld\\n\",s);}\n```")
    assert _score(contest, scratch, tests=ADD_TESTS).counts.get("re") == len(ADD_TESTS)
    assert _score(contest, scratch, tests=ADD_TESTS, file_io=True).value == 1.0
