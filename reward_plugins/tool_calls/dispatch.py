"""Executing parsed calls against BFCL's backends: what the vendored multi-turn checker runs instead of ``eval``.

BFCL's ``execute_multi_turn_func_call`` turns each call into a string
(``cd(folder='document')``), prefixes every word before a ``(`` that names a
backend method with the instance's global name, and ``eval``s the string,
after refusing a short list of names (``kill``, ``exit``, ``remove``...).
Evaluating a policy's output is running its code: any builtin, any attribute
walk.  Here a call is data: a :class:`Call` (a name, positional and keyword
arguments of plain JSON-like values) that is looked up among the public
methods of the turn's involved classes and called with those arguments.
Everything BFCL's string route gives a well-formed call is kept: the same
method (when two classes share a name, the later class in
``involved_classes`` wins, as upstream's mapping does), fresh copies of the
arguments for every call (as ``eval`` builds them), the same refused
names and their message, the same result text (a string as returned, a dict
as JSON, anything else through ``str``), an exception as ``Error during
execution: ...``.  What differs: a name that is not such a method (a
builtin, a private ``_load_scenario``, a dotted path) is refused with the
``NameError`` text ``eval`` gives an unknown name, where upstream would run a
builtin; and upstream's textual rewrite also rewrites ``word(`` inside a
string argument, which data passes through untouched.

Each check keeps its instances in a dict of its own (``instances``), so two
rollouts of one row never share a backend.  ``MathAPI`` sets mpmath's and
``decimal``'s precision process-wide; each call runs, and its result is
turned into text, inside contexts that restore both, which is what upstream
sees (it stringifies at once) without leaving the precision changed for the
process's other rewards.
"""

from __future__ import annotations

import ast
import copy
import decimal
import importlib
import inspect
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["BACKENDS", "BLOCKED", "Call", "backend", "execute_multi_turn_func_call", "parse_call"]

BACKENDS = {
    "GorillaFileSystem": "gorilla_file_system",
    "MathAPI": "math_api",
    "MessageAPI": "message_api",
    "TwitterAPI": "posting_api",
    "TicketAPI": "ticket_api",
    "TradingBot": "trading_bot",
    "TravelAPI": "travel_booking",
    "VehicleControlAPI": "vehicle_control",
}
"""BFCL's multi-turn classes and their modules under ``bfcl_backends`` (upstream's ``CLASS_FILE_PATH_MAPPING``,
less the web-search and memory classes of its agentic categories)."""

STATELESS = frozenset({"MathAPI"})
"""Classes without a scenario to load (upstream's ``STATELESS_CLASSES``)."""

BLOCKED = ("kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run")
"""The names upstream refuses before it evaluates a call."""


@dataclass(frozen=True)
class Call:
    """One call as data: the method's name and its arguments."""

    name: str
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    args: tuple[Any, ...] = ()


def parse_call(text: str) -> Call:
    """A call written as Python (``sort('a.txt')``, ``mv(source='a', destination='b')``), its arguments read as
    literals (:func:`ast.literal_eval`): how BFCL's ground truth spells its calls.  ``ValueError`` for anything
    else (an expression, a name, ``**kwargs``)."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, RecursionError, MemoryError) as exc:
        raise ValueError(f"not a call: {text!r}") from exc
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise ValueError(f"not a call of a named function: {text!r}")
    if any(k.arg is None for k in node.keywords):
        raise ValueError(f"a call with **arguments: {text!r}")
    try:
        args = tuple(ast.literal_eval(a) for a in node.args)
        kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg is not None}
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError) as exc:
        raise ValueError(f"an argument that is not a literal in {text!r}") from exc
    return Call(node.func.id, kwargs, args)


def backend(class_name: str) -> type:
    module = importlib.import_module(f"{__package__}.bfcl_backends.{BACKENDS[class_name]}")
    return getattr(module, class_name)


def execute_multi_turn_func_call(func_call_list: list[Call], initial_config: dict, involved_classes: list,
                                 instances: dict, long_context: bool = False) -> tuple[list[str], dict]:
    """Run ``func_call_list`` in order on the involved classes' instances (made and loaded with their scenario the
    first time a check needs them, kept in ``instances``); return each call's result as text, and the instances."""
    methods: dict[str, Callable[..., Any]] = {}
    involved = {}
    for class_name in involved_classes:
        instance = instances.get(class_name)
        if instance is None:
            instance = instances[class_name] = backend(class_name)()
            if class_name not in STATELESS:
                instance._load_scenario(copy.deepcopy(initial_config.get(class_name, {})), long_context=long_context)
        involved[class_name] = instance
        for name, method in inspect.getmembers(instance, predicate=inspect.ismethod):
            if not name.startswith("_"):
                methods[name] = method
    return [_execute(call, methods) for call in func_call_list], involved


def _execute(call: Call, methods: Mapping[str, Callable[..., Any]]) -> str:
    import mpmath  # MathAPI's own dependency (through sympy); imported here, not when the pack is listed

    if call.name in BLOCKED:
        return f"Error during execution: Function call {call.name} is not allowed."
    method = methods.get(call.name)
    if method is None:
        return f"Error during execution: name {call.name!r} is not defined"
    try:
        with mpmath.workdps(mpmath.mp.dps), decimal.localcontext():
            # fresh arguments each time, as upstream's eval makes them: a backend keeps (and later changes) a list
            # it was given, which must not change the call, a ground truth shared by every rollout of the row
            return _text(method(*copy.deepcopy(call.args), **copy.deepcopy(dict(call.kwargs))))
    except Exception as exc:  # any failure of the call is its result, as upstream records it
        return f"Error during execution: {exc}"


def _text(result: Any) -> str:
    """Upstream's rendering of a result: a string as it is, a dict as JSON (``str`` when it is not JSON), else
    ``str``."""
    if type(result) is str:
        return result
    if type(result) is dict:
        try:
            return json.dumps(result)
        except Exception:  # upstream: a bare except; a value json cannot write is written by str
            return str(result)
    return str(result)
