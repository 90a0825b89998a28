"""Which shape a row's assert tests have, and how each shape is run.

No assert ever runs in the program's process; how the tests are kept apart
from it depends on their shape.  The cheapest way fits the shape MBPP and
HumanEval use: every use of the program is a call with literal
arguments inside an assert, ``assert f(1, [2]) == 3`` or, HumanEval's,
``def check(candidate): assert candidate("x") == ...`` plus ``check(f)``.
Such tests become :class:`Calls`: the program's process gets only the calls
(the function's name and its literal arguments, never the expected values)
and the judge gets the tests with each call replaced by its result
(``__grpo_r[0] == 3``) and with the tests' own set-up (imports, helpers,
constants), which must not mention the program at all.

Anything else (a loop over cases, a helper that calls the program, a call
whose argument is not a literal, an object of the program's used across
method calls) is :class:`Scripts`: one script per top-level assert (with the
non-assert statements before it), each run by a judge process that never
executes program code, with each of the program's names bound to a proxy
that calls the program's process over a pipe (:mod:`runner`: every result
comes back as plain data or as a further proxy, which compares by identity
only).  Neither shape can be forged from the program's process.

Which names are the program's is decided from the tests alone, never from
the program: a name the tests use but do not bind, and that is not a
builtin.  A program that re-binds a builtin (``set = set``, ``def sorted``,
``def abs``) changes neither the shape of the row nor what the tests' own
``sorted`` or ``abs`` is: both judges run in processes of their own, with
their own builtins.  Tests that use no name of the program test nothing it
wrote: :func:`owned` is empty and the reward scores such rows None.
"""

from __future__ import annotations

import ast
import builtins
import dis
import functools
import json
from dataclasses import dataclass

from . import plain

__all__ = ["Calls", "Scripts", "compiles", "owned", "plan", "problem", "test_names"]

RESULTS = "__grpo_r"
"""The judge's list of call results; each literal call in an assert becomes ``__grpo_r[i]``."""

BUILTINS = frozenset(dir(builtins))


@dataclass(frozen=True)
class Calls:
    """Literal-call tests: what the program computes (``calls``) and what the judge decides with (``plan``)."""

    calls: tuple[tuple[tuple[str, str, str], ...], ...]
    """Per call, its steps: the program's function, then any methods called on what it returned, each with its
    positional and keyword arguments as :mod:`plain` text."""
    plan: bytes
    """JSON for the judge: ``setup`` (the tests' own statements), ``cases`` (asserts rewritten, call indices) and
    ``args`` (each call's arguments, to find results that merely repeat another call's argument)."""
    cases: int
    groups: tuple[tuple[int, ...], ...] = ()
    """Call indices per program: the calls of one function run in one process, each function's in its own, so
    no call ever sees another function's arguments (an encode those of its decode)."""

    @functools.cached_property
    def values(self) -> tuple[list | None, ...]:
        """Per call, its steps with their arguments decoded, for :mod:`marshal` to carry to the program's process
        (which then runs no codec of its own: a fork pays for every page such code touches); None for a call with
        an argument that is not of :data:`plain.MARSHAL_TYPES` (a ``Counter`` a script's rerun found), or that is
        not plain text.  Made once per plan (plans are cached, and a group's rows share theirs); only
        ``marshal.dumps`` reads them."""
        return tuple(_values(steps) for steps in self.calls)


def _values(steps: tuple[tuple[str, str, str], ...]) -> list | None:
    try:
        decoded = [(name, plain.decode(args), plain.decode(kwargs)) for name, args, kwargs in steps]
    except ValueError:  # the program's process refuses it as text, as before, and the case fails
        return None
    return decoded if plain.marshallable(decoded) else None


@dataclass(frozen=True)
class Scripts:
    """Arbitrary assert tests: one script per case, each run by a judge process against the program's process."""

    cases: tuple[str, ...]
    names: tuple[str, ...] = ()
    """The program's names the tests use: the judge binds each to a proxy of the program's object (or to a plain
    copy of its value)."""


@functools.lru_cache(maxsize=1024)
def test_names(tests: str) -> tuple[ast.Module, frozenset[str], frozenset[str]]:
    """The tests parsed, the names they use, and the names they bind anywhere (cached: a group shares a row).

    Raises SyntaxError when the tests do not compile.
    """
    tree = ast.parse(tests)
    used: set[str] = set()
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (used if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
    return tree, frozenset(used), frozenset(bound)


@functools.lru_cache(maxsize=4096)
def compiles(source: str) -> bool:
    """Whether a program parses (checked before anything runs: one that does not fails every test unrun)."""
    try:
        ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # a null byte; nesting too deep for the parser
        return False
    return True


def owned(tests: str) -> frozenset[str]:
    """The names in ``tests`` that refer to the program: used, not bound by the tests, not builtins, not dunders
    (``__file__``, ``__builtins__``: the judge's own, never a program's)."""
    _, used, bound = test_names(tests)
    return frozenset(n for n in used - bound if n not in BUILTINS and not n.startswith("__"))


@functools.lru_cache(maxsize=4096)
def plan(tests: str) -> Calls | Scripts:
    """How to run ``tests`` (see the module's docstring); decided from the tests alone."""
    tree, used, bound = test_names(tests)
    program = owned(tests)
    calls = None if RESULTS in used | bound else _calls(tree, program)
    return calls or Scripts(_scripts(tree), tuple(sorted(program)))


def _scripts(tree: ast.Module) -> tuple[str, ...]:
    """The cases of a script-shaped row: no statement of the tests is left unrun.

    One case per top-level assert, with the statements before it that are
    not asserts; the last one also runs every statement after it (a
    trailing ``check(f)``, ``try``/``except`` or loop is part of the tests).
    Without a top-level assert, the whole tests are one case (they run as
    ``__main__``, so an ``if __name__ == "__main__":`` block runs).  Checks
    a test framework would run are run as it would: each top-level pytest
    ``def test_*()`` is called, each ``unittest.TestCase`` class's tests are
    loaded and run in the judge, one case each.
    """
    body = tree.body
    asserts = [i for i, node in enumerate(body) if isinstance(node, ast.Assert)]
    rest = [node for node in body if not isinstance(node, ast.Assert)]
    cases = []
    for n, i in enumerate(asserts):
        prefix = [node for node in body[:i] if not isinstance(node, ast.Assert)]
        tail = body[i + 1:] if n == len(asserts) - 1 else []
        cases.append(_unparse(prefix + [body[i]] + tail))
    if not asserts and not _framework(body):
        cases.append(_unparse(body))
    for kind, name in _framework(body):
        cases.append(_unparse(rest) + "\n" + (f"{name}()\n" if kind == "test" else _UNITTEST.format(name)))
    return tuple(cases)


_UNITTEST = (  # one TestCase class's tests, run by unittest's own loader and runner in the judge
    "import sys as __grpo_sys, unittest as __grpo_unittest\n"
    "__grpo_run = __grpo_unittest.TextTestRunner(stream=__grpo_sys.stderr, verbosity=0).run("
    "__grpo_unittest.defaultTestLoader.loadTestsFromTestCase({0}))\n"
    "assert __grpo_run.wasSuccessful() and __grpo_run.testsRun, 'unittest: {0} failed or ran no test'\n"
)


def _unparse(body: list[ast.stmt]) -> str:
    return ast.unparse(ast.Module(body=body, type_ignores=[]))


def _framework(body: list[ast.stmt]) -> list[tuple[str, str]]:
    """The checks pytest or unittest would run: top-level ``def test_*`` (``("test", name)``) that the tests do
    not call themselves (``def test_case(a, b)`` called as ``test_case(1, 2)`` is a helper) and ``TestCase``
    subclasses (``("unittest", name)``), in order (a name defined twice counts once, as its last)."""
    called = {n.id for node in body for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    found = {}
    for node in body:
        if (isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test")
                and node.name not in called):
            found[node.name] = "test"
        elif isinstance(node, ast.ClassDef) and any(
                (isinstance(b, ast.Name) and b.id.endswith("TestCase"))
                or (isinstance(b, ast.Attribute) and b.attr.endswith("TestCase")) for b in node.bases):
            found[node.name] = "unittest"
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.pop(node.name, None)
    return [(kind, name) for name, kind in found.items()]


@functools.lru_cache(maxsize=4096)
def problem(tests: str) -> str | None:
    """Why script tests would check nothing, or None: tests that define checks but never run one.

    Pytest's ``def test_*`` and unittest's ``TestCase`` classes are run (see
    :func:`_scripts`), so they count as run; a pytest test that takes
    arguments (fixtures) cannot be, and is refused.  Otherwise the top-level
    code (``if __name__ == "__main__":`` blocks included; function and class
    bodies not) must hold an assert or a raise, or use a function or class the
    tests define (``check(candidate)`` called as ``check(f)``): tests that
    only define ``def check(candidate)`` would pass a program that does
    nothing, so such rows score None and ``data check`` names them.
    """
    tree, _, _ = test_names(tests)
    tests_run = {name for kind, name in _framework(tree.body) if kind == "test"}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in tests_run:
            a = node.args
            if len(a.posonlyargs) + len(a.args) > len(a.defaults) or None in a.kw_defaults:
                return f"tests: pytest test {node.name}() takes arguments (fixtures), which nothing here provides"
    if isinstance(plan(tests), Calls) or _framework(tree.body):
        return None
    defined = {node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef
                                                               | ast.ClassDef)}
    pending: list[ast.AST] = [node for node in tree.body if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef
                                                                          | ast.ClassDef)]
    while pending:
        walked = pending.pop()
        if isinstance(walked, ast.Assert | ast.Raise) or (
                isinstance(walked, ast.Name) and isinstance(walked.ctx, ast.Load) and walked.id in defined):
            return None
        if not isinstance(walked, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            pending.extend(ast.iter_child_nodes(walked))
    return ("tests define checks but run none (no top-level assert, no call of a check they define, no pytest "
            "test_* function or unittest.TestCase class): any program would pass them")


def _calls(tree: ast.Module, program: frozenset[str]) -> Calls | None:
    body = list(tree.body)
    check, target = _check_call(body, program)
    if check is not None:
        body = body[:-1]
    calls: list[tuple[tuple[str, str, str], ...]] = []
    setup: list[ast.stmt] = []
    cases: list[tuple[list[str], list[int]]] = []
    for node in body:
        if node is check:
            continue
        if isinstance(node, ast.Assert):
            case = _rewrite([node], program, {}, calls)
            if case is None:
                return None
            cases.append(case)
        elif any(isinstance(n, ast.Name) and n.id in program for n in ast.walk(node)):
            return None  # set-up that touches the program would run the program's code in the judge
        else:
            setup.append(node)
    if check is not None:
        asserts = []
        for stmt in check.body:
            if isinstance(stmt, ast.Assert):
                asserts.append(stmt)
            elif isinstance(stmt, ast.Import | ast.ImportFrom):
                setup.append(stmt)
            elif not (isinstance(stmt, ast.Pass) or (isinstance(stmt, ast.Expr) and _inert(stmt.value))):
                return None
        case = _rewrite(asserts, program, {check.args.args[0].arg: target}, calls) if asserts else None
        if case is None:
            return None
        cases.append(case)
    if not cases:
        return None
    text = json.dumps({"setup": ast.unparse(ast.Module(body=setup, type_ignores=[])), "cases": cases,
                       "args": [[[args, kwargs] for _, args, kwargs in steps] for steps in calls]})
    by_function: dict[str, list[int]] = {}
    for i, steps in enumerate(calls):
        by_function.setdefault(steps[0][0], []).append(i)
    return Calls(tuple(calls), text.encode(), len(cases), tuple(tuple(g) for g in by_function.values()))


def _inert(value: ast.expr) -> bool:
    """A statement of ``check`` that does nothing: a docstring or constant, or a builtin named and not called
    (HumanEval/129's stray ``print``; never a program's name, which is no builtin: :func:`owned`)."""
    return isinstance(value, ast.Constant) or (isinstance(value, ast.Name) and value.id in BUILTINS)


def _check_call(body: list[ast.stmt], program: frozenset[str]) -> tuple[ast.FunctionDef | None, str]:
    """HumanEval's ending: ``check(f)`` calling a ``def check(candidate)`` of the tests with a program's name."""
    if not body or not isinstance(last := body[-1], ast.Expr) or not isinstance(call := last.value, ast.Call):
        return None, ""
    if not isinstance(call.func, ast.Name) or call.keywords or len(call.args) != 1:
        return None, ""
    if not isinstance(arg := call.args[0], ast.Name) or arg.id not in program:
        return None, ""
    defs = [n for n in body[:-1] if isinstance(n, ast.FunctionDef) and n.name == call.func.id]
    if len(defs) != 1:
        return None, ""
    args = defs[0].args
    if (len(args.args) != 1 or args.posonlyargs or args.kwonlyargs or args.vararg or args.kwarg
            or defs[0].decorator_list):
        return None, ""
    return defs[0], arg.id


def _literal(node: ast.expr) -> object:
    """A call argument's value when it is a literal, or arithmetic on literals that Python itself folds to a
    constant (HumanEval writes ``candidate(3 * 5 * 7)``, ``candidate([1, 0**0])``, ``'abcde' + 'cade'``); such an
    argument is the same value at run time, so the row keeps the cheap shape.  Which operations fold, and up to
    what size (``2**10**10`` or ``'a' * 10**6`` do not), is the compiler's own rule; raises ValueError otherwise."""
    try:
        return ast.literal_eval(node)
    except ValueError:
        if not any(isinstance(n, ast.BinOp | ast.UnaryOp) for n in ast.walk(node)):
            raise
    return ast.literal_eval(_Fold().visit(ast.parse(ast.unparse(node), mode="eval").body))


class _Fold(ast.NodeTransformer):
    """Each operation whose compiled form is a single constant becomes that constant (the compiler's folding).

    Only an operation on constants (or tuples of them) is compiled, once its operands are folded: one whose operand
    stayed an expression cannot fold, and compiling it anyway would compile a long chain (``x + 1 + 1 ...`` in a
    row's tests) once per link."""

    def _fold(self, node: ast.BinOp | ast.UnaryOp) -> ast.expr:
        self.generic_visit(node)
        operands = [node.left, node.right] if isinstance(node, ast.BinOp) else [node.operand]
        if not all(isinstance(o, ast.Constant) or isinstance(o, ast.Tuple)
                   and all(isinstance(e, ast.Constant) for e in o.elts) for o in operands):
            return node
        code = compile(ast.Expression(node), "<argument>", "eval")
        ops = [i for i in dis.get_instructions(code) if i.opname not in ("RESUME", "NOP", "CACHE")]
        if [i.opname for i in ops] != ["LOAD_CONST", "RETURN_VALUE"]:
            return node
        return ast.copy_location(ast.Constant(ops[0].argval), node)

    visit_BinOp = visit_UnaryOp = _fold


class _Replace(ast.NodeTransformer):
    """Every literal-argument call of a program's function becomes ``__grpo_r[i]``; records the call.

    A chain of literal-argument method calls on what the program returned,
    ``Solution().two_sum([2, 7], 9)`` (LeetCode-style tests), is one call:
    the program's process runs the whole chain and hands out only its end.
    An attribute of a program's object that is not called stays as it is,
    so the program's name is left in and the shape is refused.
    """

    def __init__(self, program: frozenset[str], alias: dict[str, str], calls: list, used: list[int]) -> None:
        self.program, self.alias, self.calls, self.used = program, alias, calls, used

    def _chain(self, node: ast.AST) -> list[tuple[str, str, str]] | None:
        """The steps of ``f(...)`` or ``f(...).m(...)...`` with literal arguments, from the program's ``f``."""
        steps = []
        while isinstance(node, ast.Call):
            try:
                args = tuple(_literal(a) for a in node.args)
                kwargs = {k.arg: _literal(k.value) for k in node.keywords}
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                return None  # not literal
            if None in kwargs:  # **mapping
                return None
            func = node.func
            if isinstance(func, ast.Name) and (func.id in self.program or func.id in self.alias):
                steps.append((self.alias.get(func.id, func.id), plain.encode(args), plain.encode(kwargs)))
                return steps[::-1]
            if not isinstance(func, ast.Attribute):
                return None
            steps.append((func.attr, plain.encode(args), plain.encode(kwargs)))
            node = func.value
        return None

    def visit_Call(self, node: ast.Call) -> ast.AST:
        steps = self._chain(node)
        if steps is None:
            return self.generic_visit(node)  # not a literal call of the program's: if its name is inside, it stays
        self.used.append(len(self.calls))
        self.calls.append(tuple(steps))
        index = ast.Subscript(ast.Name(RESULTS, ast.Load()), ast.Constant(len(self.calls) - 1), ast.Load())
        return ast.copy_location(index, node)

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if self._chain(node.value) is not None:
            return node  # an attribute of the program's object, not called: not plain data, refused
        return self.generic_visit(node)


def _rewrite(asserts: list[ast.Assert], program: frozenset[str], alias: dict[str, str],
             calls: list) -> tuple[list[str], list[int]] | None:
    """The asserts' conditions with the calls replaced, and the calls they use; None if the program is left in."""
    used: list[int] = []
    start = len(calls)
    exprs = []
    for node in asserts:
        test = _Replace(program, alias, calls, used).visit(ast.parse(ast.unparse(node.test), mode="eval").body)
        names = {n.id for n in ast.walk(test) if isinstance(n, ast.Name)}
        if names & (program | set(alias)):
            del calls[start:]
            return None
        exprs.append(ast.unparse(test))
    return exprs, used
