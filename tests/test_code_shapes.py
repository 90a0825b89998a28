"""Which assert tests are judged outside the program, and the plain data that crosses the sandbox's wall.

:mod:`reward_plugins.code.shapes` decides, per row and from its tests alone, whether a
row's asserts can be split into calls (run by the program) and checks (run
by the judge); :mod:`reward_plugins.code.plain` is the only form a call's
result may take on its way out.  Both are pure functions, tested here on the
shapes real datasets use (MBPP asserts, HumanEval's ``check``).
"""

from __future__ import annotations

import collections
import contextlib
import json
import marshal
import math
import typing

import pytest
from hypothesis import given, settings  # the fuzzing at the end of the module only
from hypothesis import strategies as st

from reward_plugins.code import plain, shapes


def plan_for(tests: str, program: str = ""):
    """The plan of ``tests``; ``program`` is only there to say that it does not matter."""
    return shapes.plan(tests)


def test_mbpp_asserts_become_calls_and_the_judges_checks():
    tests = ("import math\nassert f(1, [2, 3]) == 6\nassert math.isclose(f(0.5, x=2), 1.0)\n"
             "assert set(f('ab')) == {'a', 'b'}, 'a message'\n")
    plan = plan_for(tests)
    assert isinstance(plan, shapes.Calls) and plan.cases == 3
    assert [[(name, plain.decode(args), plain.decode(kwargs)) for name, args, kwargs in call]
            for call in plan.calls] == [[("f", (1, [2, 3]), {})], [("f", (0.5,), {"x": 2})], [("f", ("ab",), {})]]
    judge = json.loads(plan.plan)
    assert judge["setup"] == "import math"
    assert judge["cases"] == [[["__grpo_r[0] == 6"], [0]], [["math.isclose(__grpo_r[1], 1.0)"], [1]],
                              [["set(__grpo_r[2]) == {'a', 'b'}"], [2]]]
    assert "6" not in "".join(args for (_, args, _), in plan.calls)  # the program never sees an expected value


def test_a_method_chain_on_the_programs_object_is_one_call():
    tests = "assert Solution().two_sum([2, 7, 11], 9) == [0, 1]\nassert f(3)[0] == 1\n"
    plan = plan_for(tests, "class Solution:\n    pass\ndef f(x):\n    pass\n")
    assert isinstance(plan, shapes.Calls)
    assert [[step[0] for step in call] for call in plan.calls] == [["Solution", "two_sum"], ["f"]]
    assert json.loads(plan.plan)["cases"] == [[["__grpo_r[0] == [0, 1]"], [0]], [["__grpo_r[1][0] == 1"], [1]]]


def test_humaneval_check_is_one_case_with_the_candidate_resolved():
    tests = ("METADATA = {'author': 'x'}\n\ndef check(candidate):\n    '''doc'''\n    import math\n"
             "    assert candidate([1, 2]) == 3\n    assert abs(candidate([]) - 0) < 1e-6\n    assert True\n\n"
             "check(total)\n")
    plan = plan_for(tests, "def total(xs):\n    return sum(xs)\n")
    assert isinstance(plan, shapes.Calls) and plan.cases == 1
    assert [[name for name, _, _ in call] for call in plan.calls] == [["total"], ["total"]]
    judge = json.loads(plan.plan)
    assert judge["setup"].splitlines() == ["METADATA = {'author': 'x'}", "import math"]
    assert judge["cases"] == [[["__grpo_r[0] == 3", "abs(__grpo_r[1] - 0) < 1e-06", "True"], [0, 1]]]


def test_arithmetic_on_literals_is_a_literal_argument_as_the_compiler_folds_it():
    """HumanEval/16, /25, /31, /75, /90, /108 write ``candidate(3 * 19)``, ``candidate([1, 0**0])``,
    ``candidate('abcde' + 'cade')``: the same values at run time, so the rows are literal calls (issue 39: a
    script case costs a second process and a round trip per call); /129's stray ``print`` does nothing."""
    tests = ("def check(candidate):\n    print\n    assert candidate(3 * 5 * 7) == True\n"
             "    assert candidate([1, 0**0], k=-(2 + 1)) == None\n    assert candidate('ab' + 'c' * 2) == 1\n"
             "    assert candidate((1, 2) + (3,)) == 6\n\ncheck(f)\n")
    plan = plan_for(tests)
    assert isinstance(plan, shapes.Calls) and plan.cases == 1
    assert [[(plain.decode(args), plain.decode(kwargs)) for _, args, kwargs in call] for call in plan.calls] == [
        [((105,), {})], [(([1, 1],), {"k": -3})], [(("abcc",),  {})], [(((1, 2, 3),), {})]]


@pytest.mark.parametrize("argument", [
    "2 ** 10 ** 10",  # the compiler does not fold what would be huge: neither do the plans
    "'a' * 10 ** 6",
    "1 / 0",  # raises at run time: the tests' own error, in a script
    "x * 2",
    "{1, 2} | {3}",
    "len('ab') + 1",
])
def test_arithmetic_the_compiler_does_not_fold_stays_a_script(argument):
    plan = plan_for(f"x = 1\nassert f({argument}) == 1\n")
    assert isinstance(plan, shapes.Scripts)


def test_a_chain_with_a_name_in_it_stays_a_script_and_one_of_constants_folds():
    """A name at the bottom of a chain stops the folding at its first link (``_Fold`` compiles only operations on
    constants), whatever is stacked on it; a chain of constants folds whole."""
    chain = "x" + " + 1" * 40
    assert isinstance(plan_for(f"x = 1\nassert f({chain}) == 1\nassert f(-(-{chain})) == 1\n"), shapes.Scripts)
    assert isinstance(plan_for("assert f(" + " + ".join(["1"] * 40) + ") == 1\n"), shapes.Calls)


def test_a_stray_name_in_check_is_inert_only_when_it_is_a_builtin():
    tests = "def check(candidate):\n    {name}\n    assert candidate(1) == 1\n\ncheck(f)\n"
    assert isinstance(plan_for(tests.format(name="print")), shapes.Calls)
    assert isinstance(plan_for(tests.format(name="helper")), shapes.Scripts)  # a name of the program's, or unbound


@pytest.mark.parametrize("tests", [
    "for x in [1, 2]:\n    assert f(x) == x\n",  # a loop: the argument is not a literal
    "x = 3\nassert f(x) == 3\n",  # a name as argument
    "y = f(2)\nassert y == 2\n",  # set-up that calls the program
    "def helper():\n    return f(1)\nassert helper() == 1\n",  # a helper of the tests that calls the program
    "assert f(1) == f\n",  # the program's function used as a value
    "assert Solution().size == 3\n",  # an attribute of the program's object: not plain data
    "s = Solution()\nassert s.f(1) == 1\n",  # set-up that makes the program's object
    "assert f(1) == 1\n__grpo_r = 1\n",  # the judge's own name taken by the tests
    "def check(candidate):\n    for x in [1]:\n        assert candidate(x) == x\n\ncheck(f)\n",
    "import math\nprint('no asserts at all')\n",
])
def test_any_other_shape_runs_as_scripts(tests):
    plan = plan_for(tests)
    assert isinstance(plan, shapes.Scripts)
    top_level_asserts = sum(line.startswith("assert") for line in tests.splitlines())
    assert len(plan.cases) == max(top_level_asserts, 1)


@pytest.mark.parametrize("tests", [
    "assert set(f(1)) == set((1, 2))\n",
    "assert sorted(f([2, 1])) == [1, 2]\n",
    "def check(candidate):\n    assert abs(candidate(1.5) - 0.5) < 1e-6\n\ncheck(f)\n",
    "for x in [1, 2]:\n    assert abs(f(x)) == x\n",
])
def test_the_shape_comes_from_the_tests_alone_whatever_the_program_rebinds(tests):
    """``set = set``, ``def sorted``, ``def abs`` in a program neither move a row to script mode nor make the
    tests' ``set``, ``sorted`` or ``abs`` the program's: the builtins are never the program's names."""
    assert shapes.owned(tests) == {"f"}
    plan = shapes.plan(tests)
    assert type(plan) is (shapes.Scripts if tests.startswith("for") else shapes.Calls)
    if isinstance(plan, shapes.Calls):
        assert {step[0] for call in plan.calls for step in call} == {"f"}
    else:
        assert plan.names == ("f",) and "abs(f(x)) == x" in plan.cases[0]


def test_tests_that_use_no_name_of_the_program_own_nothing():
    assert shapes.owned("assert max(3, 1) == 3\nassert sorted([2, 1]) == [1, 2]\n") == frozenset()
    assert shapes.owned("import math\ndef g(x):\n    return x\nassert g(math.pi) > 3\n") == frozenset()


def test_script_cases_are_the_tests_own_text_one_assert_each():
    """Script mode needs no rewriting: the judge binds the program's names to proxies.  Each top-level assert is a
    case, with the statements before it."""
    tests = "import math\ns = Stack()\nassert s.size() == 0\nx = 3\nassert math.isclose(f(x), 3)\n"
    plan = shapes.plan(tests)
    assert plan.names == ("Stack", "f")
    assert plan.cases == ("import math\ns = Stack()\nassert s.size() == 0",
                          "import math\ns = Stack()\nx = 3\nassert math.isclose(f(x), 3)")


PLAIN_VALUES = [None, True, False, 0, -7, 10**40, 1.5, -0.0, math.inf, "é\n\ud800", b"\x00\xff", 2 + 3j, [1, [2]],
                (1, (2.5, "x")), {1, "a"}, frozenset({(1, 2)}), {"k": [1], 2: (3,), (1, 2): {"n": None}}, [], (),
                bytearray(b"\x00a"), 7 ** 9000, -(2 ** 5000)]


def value_id(value) -> str:
    """A parametrize id that is the same in every process (a set's repr follows the process's hash seed, and
    xdist workers must collect the same ids)."""
    if isinstance(value, set | frozenset):
        return f"{type(value).__name__}{sorted(map(repr, value))}"
    if type(value) is int and value.bit_length() > 1024:  # no decimal repr beyond 4300 digits
        return f"int of {value.bit_length()} bits"
    return repr(value)


@pytest.mark.parametrize("value", PLAIN_VALUES, ids=value_id)
def test_plain_values_cross_exactly(value):
    text = plain.encode(value)
    assert "\n" not in text
    back = plain.decode(text)
    assert back == value and type(back) is type(value)
    assert value_id(back) == value_id(value)  # -0.0 stays -0.0


@pytest.mark.parametrize("value", PLAIN_VALUES, ids=value_id)
def test_marshal_carries_a_plain_value_exactly_or_is_not_used(value):
    """Literal calls' arguments reach the program's process by ``marshal`` (version 2) when every part is of a type
    it reads back as itself, in the same order; a bytearray (read back as bytes), a set (built in the writer's
    order) or a stdlib container goes as plain text instead."""
    if not plain.marshallable(value):
        assert type(value) in (bytearray, set, frozenset)
        return
    back = marshal.loads(marshal.dumps(value, 2))
    assert back == value and type(back) is type(value) and value_id(back) == value_id(value)


def test_marshal_is_refused_for_what_it_would_change_and_shares_no_object():
    assert not plain.marshallable([1, (bytearray(b"x"),)])
    assert not any(plain.marshallable(v) for v in (collections.Counter(a=1), collections.OrderedDict(),
                                                   collections.deque(), POINT(1, 2), int, [{1: int}], ({1},)))
    deep = []
    for _ in range(plain.MAX_DEPTH):
        deep = [deep]
    assert not plain.marshallable(deep)
    shared = [0]
    first, second = marshal.loads(marshal.dumps([shared, shared], 2))
    first.append(1)  # one call's argument changed in place never changes another's (decode makes each afresh)
    assert second == [0]


POINT = collections.namedtuple("Point", "x y")


class Typed(typing.NamedTuple):
    x: int
    y: str = "y"


T = typing.TypeVar("T")


class Generic(typing.NamedTuple, typing.Generic[T]):
    x: T


class Slotted(POINT):
    __slots__ = ()


@pytest.mark.parametrize("value", [
    collections.Counter("abracadabra"), collections.OrderedDict([(2, "b"), (1, "a")]),
    collections.deque([1, (2,)], maxlen=4), collections.deque(), POINT(1, [2]), Typed(1), Generic(2), Slotted(3, 4),
    collections.namedtuple("Renamed", ["ok", "def", "ok"], rename=True)(1, 2, 3),
    collections.defaultdict(list, {"k": [1]}), [POINT(0, collections.Counter({"k": 0}))]], ids=repr)
def test_the_stdlib_containers_honest_programs_return_cross_as_themselves(value):
    """Rebuilt fresh as the same standard type (a namedtuple class from its names), so each compares as the
    program's own would: a Counter ignores zero counts only against a Counter, an OrderedDict minds order only
    against an OrderedDict, a deque never equals a list."""
    back = plain.decode(plain.encode(value))
    assert back == value and type(back).__name__ == type(value).__name__ and repr(back) == repr(value)
    if isinstance(value, tuple):
        assert back._fields == value._fields and back == tuple(value)


def test_a_defaultdict_keeps_a_builtin_factory_only_and_the_containers_keep_their_equality():
    counts = plain.decode(plain.encode(collections.defaultdict(int, a=1)))
    assert type(counts) is collections.defaultdict and counts.default_factory is int and counts == {"a": 1}
    coded = collections.defaultdict(lambda: 0, a=1)  # a factory of the program's is code: a plain dict crosses
    assert type(plain.decode(plain.encode(coded))) is dict and plain.decode(plain.encode(coded)) == {"a": 1}
    ordered = plain.decode(plain.encode(collections.OrderedDict([(1, 1), (2, 2)])))
    assert ordered != collections.OrderedDict([(2, 2), (1, 1)]) and ordered == {2: 2, 1: 1}
    assert plain.decode(plain.encode(collections.deque([1]))) != [1]
    assert plain.decode(plain.encode(collections.Counter(a=1, b=0))) == collections.Counter(a=1)
    assert plain.decode(plain.encode(collections.Counter(a=1, b=0))) != {"a": 1}
    assert plain.key(collections.Counter(a=1)) == plain.key({"a": 1}) != plain.key([("a", 1)])
    # a Counter equals one with an extra zero count: the theft rule must see a thief that adds one (red team F1)
    assert plain.key(collections.Counter(a=1, z=0)) == plain.key(collections.Counter(a=1)) == plain.key({"a": 1})
    assert plain.key(POINT(1, 2)) == plain.key((1, 2)) != plain.key(collections.deque([1, 2])) != plain.key([1, 2])


class Methodical(typing.NamedTuple):
    x: int

    def norm(self):
        return abs(self.x)


class Counted(collections.Counter):
    pass


@pytest.mark.parametrize("value", [Methodical(1), Counted("a"), type("P", (POINT,), {})(1, 2),
                                   type("D", (collections.deque,), {})()], ids=lambda v: type(v).__name__)
def test_a_subclass_or_a_namedtuple_with_methods_is_the_programs_object(value):
    with pytest.raises(plain.NotPlain):
        plain.encode(value)


@pytest.mark.parametrize("text", [
    '{"n":["P x",["x"],[1]]}', '{"n":["P",["x"],[1,2]]}', '{"n":["P",[1],[1]]}', '{"n":[1,["x"],[1]]}',
    '{"n":["Point","xy",[0]]}', '{"q":[[1],"a"]}', '{"q":[[1],-1]}', '{"q":[1]}', '{"k":[[[1],2]]}', '{"o":[[1]]}',
    '{"e":["print",[]]}', '{"e":[null,[]]}', '{"e":["list",[[[1],2]]]}',
    '{"n":["P",[' + ",".join(f'"f{i}"' for i in range(300)) + '],[]]}',
    json.dumps([{"n": [f"N{i}", ["x"], [i]]} for i in range(plain.NEW_CLASSES + 1)])], ids=lambda t: t[:40])
def test_crafted_container_nodes_are_refused(text):
    """Also a value of more new namedtuple classes than one value may make: each is compiled, in a collector
    every program shares (red team F4)."""
    with pytest.raises(ValueError):
        plain.decode(text)


def test_builtin_classes_cross_by_name_and_nothing_else_does():
    """``remove_datatype(t, int)`` (MBPP 533): the class ``int`` crosses as its name, and each side gets its own
    interpreter's class; a name that is not a builtin class's is refused."""
    assert plain.decode(plain.encode([int, (str, ValueError)])) == [int, (str, ValueError)]
    assert plain.decode(plain.encode(bool)) is bool and plain.key(int) is int
    for text in ('{"T":"os"}', '{"T":"print"}', '{"T":"__import__"}', '{"T":1}', '{"T":"Point"}'):
        with pytest.raises(ValueError):
            plain.decode(text)
    with pytest.raises(plain.NotPlain):
        plain.encode(type("int", (), {}))  # a class of the program's named like one


def test_a_field_string_cannot_poison_the_class_cache():
    """``namedtuple`` splits a string of fields: a node with ``"xy"`` for fields would have cached a one-field
    class under the key of ``["x", "y"]`` for every later program of the collector (red team F3)."""
    with pytest.raises(ValueError):
        plain.decode('{"n":["Point","xy",[0]]}')
    point = plain.decode('{"n":["Point",["x","y"],[1,2]]}')
    assert point._fields == ("x", "y") and point == (1, 2)
    assert len(plain.decode(json.dumps([{"n": ["Same", ["x"], [i]]} for i in range(1000)]))) == 1000  # one class
    renamed = plain.decode('{"n":["P",["x","def","x"],[1,2,3]]}')  # as namedtuple(..., rename=True) names them
    assert renamed._fields == ("x", "_1", "_2")


def test_nan_crosses_as_nan():
    assert math.isnan(plain.decode(plain.encode(math.nan)))


class Anything:
    def __eq__(self, other):
        return True

    def __repr__(self) -> str:  # a stable test id (pytest-xdist's workers must collect the same ids)
        return "Anything()"


class Int(int):
    pass


@pytest.mark.parametrize("value", [Anything(), Int(3), [1, Int(2)], {"k": Anything()}, range(3),
                                   type("L", (list,), {})(), print], ids=repr)
def test_anything_but_exact_builtin_values_is_refused(value):
    with pytest.raises(plain.NotPlain):
        plain.encode(value)


def test_what_is_not_plain_crosses_only_as_a_reference_where_one_is_given():
    """Script mode's pipes: an object that is not plain data becomes ``{"h": n}`` (the caller's ``ref``), and a
    reference decodes only through the other side's ``deref``; never the object itself."""
    thing, objects = Anything(), []

    def ref(value):
        objects.append(value)
        return len(objects) - 1

    node = plain.tag([1, thing, {"k": Int(2)}], ref)
    assert node == [1, {"h": 0}, {"d": [["k", {"h": 1}]]}] and objects[0] is thing
    assert plain.untag(node, lambda handle: ("proxy", handle)) == [1, ("proxy", 0), {"k": ("proxy", 1)}]
    with pytest.raises(ValueError):
        plain.untag(node)  # no deref: plain data only
    with pytest.raises(ValueError):
        plain.untag({"h": "0"}, lambda handle: handle)


def test_self_containing_and_too_deep_values_are_refused():
    loop: list = []
    loop.append(loop)
    with pytest.raises(plain.NotPlain):
        plain.encode(loop)
    deep: list = []
    for _ in range(plain.MAX_DEPTH + 1):
        deep = [deep]
    with pytest.raises(plain.NotPlain):
        plain.encode(deep)


@pytest.mark.parametrize("text", ['{"x": 1}', '{"s": [[1]]}', '{"d": [[[1], 2]]}', '{"f": 3}', '{"t": [], "s": []}',
                                  "!", "", '{"b": "zz"}', "[" * 200 + "]" * 200])
def test_decoding_accepts_only_what_encoding_writes(text):
    with pytest.raises(ValueError):
        plain.decode(text)


@pytest.mark.parametrize("tests", [
    "def check(candidate):\n    assert candidate(1) == 2\n",
    "METADATA = {}\ndef check(candidate):\n    assert candidate(1) == 2\nx = f\n",
    "class TestAdd:\n    def test_a(self):\n        assert f(1) == 2\n",
    "def test_a(tmp_path):\n    assert f(1) == 2\n",
], ids=["check never called", "check never called, program name used", "pytest class", "pytest fixture"])
def test_tests_that_run_no_check_are_refused(tests):
    """F3: tests that define checks but never run one would pass a program that does nothing: the row scores None
    and ``data check`` says why."""
    from reward_plugins.code.rewards import check_row

    assert shapes.problem(tests)
    assert "score None" in check_row({"tests": tests})


@pytest.mark.parametrize("tests", [
    "def check(candidate):\n    assert candidate(1) == 2\ncheck(f)\n",
    "def check(candidate):\n    assert candidate(1) == 2\nif __name__ == '__main__':\n    check(f)\n",
    "def test_a():\n    assert f(1) == 2\n",
    "import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n        self.assertEqual(f(1), 2)\n",
    "for x in [1]:\n    assert f(x) == 2\n",
    "def test_case(a, b):\n    assert f(a) == b\ntest_case(1, 2)\n",
], ids=["check called", "__main__ block", "pytest function", "TestCase", "loop", "a test_ helper the tests call"])
def test_tests_that_run_their_checks_are_taken(tests):
    assert shapes.problem(tests) is None


def test_a_test_helper_the_tests_call_is_not_run_again_as_a_pytest_test():
    plan = shapes.plan("def test_case(a, b):\n    assert f(a) == b\nx = 1\ntest_case(1, 2)\n")
    assert isinstance(plan, shapes.Scripts) and len(plan.cases) == 1


def test_statements_after_the_last_assert_are_in_the_last_case():
    plan = shapes.plan("assert f(1)\nfor n in [4, 6]:\n    assert not f(n)\nx = 1\n")
    assert isinstance(plan, shapes.Scripts) and len(plan.cases) == 1 and plan.cases[0].endswith("x = 1")


# fuzzing plain.decode with hypothesis
_TAGS = st.sampled_from(["f", "b", "y", "i", "c", "t", "s", "z", "d", "h", "x", ""])
_HEX = st.one_of(st.text("0123456789abcdefxXpP.-+ninfa", max_size=12),
                 st.sampled_from(["0x1p99999", "-0x1p99999", "0x1.fffffffffffffp+1023", "inf", "nan", "0x"]))
_LEAF = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), _HEX, st.text(max_size=5))
_NODES = st.recursive(_LEAF, lambda inner: st.one_of(
    st.lists(inner, max_size=4),
    st.dictionaries(_TAGS, inner, min_size=1, max_size=2),
    st.builds(lambda k, v: {k: v}, _TAGS, st.lists(inner, max_size=3))), max_leaves=20)


@settings(max_examples=400, deadline=None)
@given(_NODES)
def test_decoding_crafted_json_raises_only_value_error(node):
    """F10: whatever JSON a program writes (float.fromhex overflowing, unhashable keys, malformed pairs, bad
    hex), decoding it either gives a value or raises ValueError: nothing else that could end the collector or
    the judge."""
    text = json.dumps(node)
    for decode in (plain.decode, lambda t: plain.untag(json.loads(t), lambda h: h)):
        with contextlib.suppress(ValueError):
            decode(text)


@pytest.mark.parametrize("text", ['{"f":"0x1p99999"}', '{"c":["0x1p99999","0x0p0"]}', '{"s":[[1]]}',
                                  '{"d":[[1]]}', '{"d":[[[1],2]]}', '{"f":5}', '[' * 5000 + ']' * 5000])
def test_known_crafted_lines_raise_value_error(text):
    with pytest.raises(ValueError):
        plain.decode(text)
