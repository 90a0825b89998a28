"""Rewards over a rollout's tool calls: well-formed, the expected ones (BFCL's AST match), and not too many.

All three read the :class:`~grpo_host.scoring.trajectory.Trajectory`
(``@reward(trajectory=True)``): the calls every assistant turn made, with
their arguments as the engine parsed them, the tool results and the counts.
A call is the policy's output, so nothing about it is trusted: an unknown
tool, arguments that are not a JSON object, values of any type or size are
scored (as not well-formed, or not matching), never raised.  The row's
``tools`` and expected calls are dataset values, read and checked by
:mod:`reward_plugins.tool_calls.tools`; ``data check`` reports their
problems per row, and scoring a row whose columns cannot be used raises,
so the row's error names the column.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from grpo_host import Scored, ToolCall, Trajectory, hookimpl, reward

from . import bfcl
from .calls import TextCalls, steps
from .dispatch import Call
from .multi_turn import tool_call_state
from .tools import Tool, ToolsProblem, read_tools
from .tools import expected_calls as read_expected

__all__ = ["MatchParams", "EfficiencyParams", "tool_call_format", "tool_call_match", "tool_call_state",
           "tool_efficiency"]

EXPECTED = ("expected_calls", "ground_truth")


def _call(name: str, **arguments: Any) -> dict:
    """An assistant turn calling one tool, as OpenAI-style messages carry it (for the examples)."""
    return {"role": "assistant", "content": "",
            "tool_calls": [{"type": "function", "function": {"name": name, "arguments": arguments}}]}


WEATHER = [{"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"},
                                                    "unit": {"type": "string", "enum": ["C", "F"], "default": "C"}},
                   "required": ["city"]}}}]


def _answered(*turns: dict) -> list[dict]:
    """A rollout: the given tool-calling turns, each answered, then a final answer."""
    messages = []
    for turn in turns:
        messages += [turn, {"role": "tool", "content": "12 degrees"}]
    return messages + [{"role": "assistant", "content": "It is 12 degrees."}]


def check_tools(row: Mapping[str, Any]) -> str | None:
    """``data check``: the row's ``tools`` are a list of functions whose parameters are usable JSON Schemas."""
    try:
        read_tools(row.get("tools"))
    except ToolsProblem as exc:
        return str(exc)
    return None


def check_expected(row: Mapping[str, Any]) -> str | None:
    """``data check``: the tools are usable and the expected calls name them with arguments their schemas define
    (a row expecting no call may offer no tools)."""
    try:
        tools = read_tools(row.get("tools"), empty_ok=True)
        column = next((c for c in EXPECTED if row.get(c) is not None), EXPECTED[0])
        read_expected(row.get(column), tools, column)
    except ToolsProblem as exc:
        return str(exc)
    return None


@reward(
    name="tool_call_format",
    requires={"tools": list | str},
    trajectory=True,
    check_row=check_tools,
    examples=[
        {"completion": _answered(_call("get_weather", city="Paris")), "tools": WEATHER, "score": 1.0},
        {"completion": _answered(_call("get_weather", city="Paris", unit="K"), _call("get_time", city="Paris")),
         "tools": WEATHER, "score": 0.0},
        {"completion": _answered(_call("get_weather", city="Oslo"), _call("get_weather")), "tools": WEATHER,
         "score": 0.5},
        {"completion": "No tool needed.", "tools": WEATHER, "score": None},
    ],
)
def tool_call_format(rollout: Trajectory, *, tools: Any, **_) -> Scored:
    """The share of the rollout's tool calls that are well-formed: they name one of the row's `tools` (OpenAI-style
    function schemas, or bare {name, parameters}; a list or its JSON text) and their arguments are a JSON object
    valid against that tool's `parameters` JSON Schema (jsonschema-rs, offline; BFCL's type names dict, float,
    tuple and any read as object, number, array and any type).  None when the rollout made no call.  Counted per
    row: invalid_calls."""
    known = read_tools(tools)
    calls = rollout.tool_calls
    if not calls:
        return Scored(None)
    valid = sum(_well_formed(call, known) for call in calls)
    return Scored(valid / len(calls), {"invalid_calls": len(calls) - valid})


def _well_formed(call: ToolCall, tools: dict[str, Tool]) -> bool:
    tool = tools.get(call.name)
    return tool is not None and call.parsed and tool.accepts(call.arguments)


class MatchParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    partial: bool = Field(False, description="partial credit: expected calls matched / max(expected calls, calls "
                                             "made), instead of 1.0 only when the calls are exactly the expected ones")
    dots_to_underscores: bool = Field(False, description="the model saw the tools under OpenAI-style names (a dot "
                                                         "in a function name written as an underscore, as BFCL "
                                                         "renames them for OpenAI, Mistral and Google models): a "
                                                         "call of 'math.factorial' is expected as 'math_factorial'")
    text_calls: TextCalls = Field("off", description="also read calls written as text in an assistant message "
                                                     "without structured tool_calls, in one of BFCL's prompting "
                                                     "formats: python ([f(a=1), g(b=2)]), json ([{\"function\": "
                                                     "..., \"parameters\": {...}}]), verbose_xml or concise_xml "
                                                     "(<functions><function name=...>...)")


@reward(
    name="tool_call_match",
    requires={"tools": list | str, EXPECTED: list | str},
    empty_ok=("tools", *EXPECTED),
    params=MatchParams,
    trajectory=True,
    check_row=check_expected,
    examples=[
        {"completion": _answered(_call("get_weather", city="new york")), "tools": WEATHER,
         "expected_calls": [{"name": "get_weather", "arguments": {"city": "New York"}}], "score": 1.0},
        {"completion": _answered(_call("get_weather", city="Paris", unit="F")), "tools": WEATHER,
         "expected_calls": [{"get_weather": {"city": ["Paris"], "unit": ["", "C"]}}], "score": 0.0},
        {"completion": _answered(_call("get_weather", city="Oslo"), _call("get_weather", city="Rome")),
         "tools": WEATHER, "ground_truth": [{"get_weather": {"city": ["Rome"]}}, {"get_weather": {"city": ["Oslo"]}}],
         "score": 1.0},
        {"completion": "I cannot help with that.", "tools": WEATHER, "expected_calls": [], "score": 1.0},
        {"completion": "There is no tool for that.", "tools": [], "expected_calls": [], "score": 1.0},
    ],
)
def tool_call_match(rollout: Trajectory, *, tools: Any, params: MatchParams, expected_calls: Any = None,
                    ground_truth: Any = None, **_) -> float:
    """Whether the rollout's tool calls are the row's expected calls (`expected_calls`, or BFCL's `ground_truth`),
    by BFCL's AST-match rules (its checker, vendored): in any order, each expected call matched by one call of the
    same name whose arguments BFCL accepts: every required argument given, no argument the tool or the expected call
    does not know, each value of the parameter's type (an integer accepted for a float) and among the allowed
    values, strings compared without case, spaces and the punctuation ,./-_*^, lists and dicts element by element;
    an argument the expected call allows as "" may be left out.  Expected calls are BFCL's possible answers
    [{name: {argument: [allowed values]}}] or plain [{name, arguments}] (each value the one allowed; other
    parameters optional, or their schema default).  1.0 when every call made matches one expected call and none is
    left over, else 0.0 (partial=true: matched / max(expected, made)); [] expected (BFCL's irrelevance rows, which
    may offer no tools at all): 1.0 when no call is made.  Calls are read as BFCL decodes them: an assistant
    message one of whose calls has arguments that are not a JSON object makes no call at all; text_calls reads
    calls written as text (BFCL's prompting mode); dots_to_underscores expects dotted names as OpenAI-style
    models write them."""
    column = "expected_calls" if expected_calls is not None else "ground_truth"
    known = read_tools(tools, empty_ok=True)
    expected = read_expected(expected_calls if expected_calls is not None else ground_truth, known, column)
    calls = [call for step in steps(rollout.messages, params.text_calls) for call in step]
    if not expected:
        return float(not calls)
    matched = _matched(expected, calls, known, params.dots_to_underscores)
    if params.partial:
        return matched / max(len(expected), len(calls))
    return float(matched == len(expected) == len(calls))


def _matched(expected: list[dict[str, dict]], calls: list[Call], tools: dict[str, Tool], underscores: bool) -> int:
    """How many expected calls find a call, BFCL's way (``parallel_function_checker_no_order``): each expected
    call in turn takes the first call not yet taken that BFCL's ``simple_function_checker`` accepts for it (under
    the name the model saw: with ``underscores``, BFCL's ``convert_func_name``)."""
    taken: set[int] = set()
    for answer in expected:
        ((name, _),) = answer.items()
        description = {"name": name.replace(".", "_") if underscores else name, "parameters": tools[name].parameters}
        for i, call in enumerate(calls):
            if i not in taken and _accepts(description, call, answer):
                taken.add(i)
                break
    return len(taken)


def _accepts(description: dict, call: Call, answer: dict) -> bool:
    """BFCL's verdict on one call; a value that breaks its checker (the model's, as the row was checked) fails."""
    try:
        return bfcl.simple_function_checker(description, {call.name: dict(call.kwargs)}, answer)["valid"]
    except (TypeError, KeyError, AttributeError, ValueError, IndexError, RecursionError):
        return False


class EfficiencyParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    max_calls: int = Field(2, ge=0, le=10_000, description="tool calls that cost nothing")
    max_turns: int | None = Field(None, ge=1, le=10_000, description="assistant turns that cost nothing (None: "
                                                                     "turns are not counted)")
    decay: float = Field(0.5, ge=0, le=1, description="the factor each call (and turn) beyond the free ones "
                                                      "multiplies the score by")


@reward(
    name="tool_efficiency",
    params=EfficiencyParams,
    trajectory=True,
    examples=[
        {"completion": _answered(_call("get_weather", city="Paris")), "score": 1.0},
        {"completion": _answered(*[_call("get_weather", city="Paris")] * 4), "score": 0.25},
        {"completion": [_call("get_weather", city="Paris")], "score": 0.0},
        {"completion": "It is sunny.", "score": 1.0},
    ],
)
def tool_efficiency(rollout: Trajectory, *, params: EfficiencyParams, **_) -> Scored:
    """How economically the rollout reached its answer: decay ** excess, where excess = max(0, calls - max_calls)
    (+ max(0, turns - max_turns) when max_turns is set), so 1.0 with at most max_calls tool calls, halving (decay
    0.5) with each call beyond; a failed call is a call like any other.  0.0 when the rollout ended without a final
    answer (its last turn called tools).  Counted per row: tool_errors (tool results reporting a failure) and
    unfinished."""
    counts = {"tool_errors": rollout.tool_errors, "unfinished": int(not rollout.finished)}
    if not rollout.finished:
        return Scored(0.0, counts)
    excess = max(0, len(rollout.tool_calls) - params.max_calls)
    if params.max_turns is not None:
        excess += max(0, rollout.turns - params.max_turns)
    return Scored(params.decay ** excess, counts)


@hookimpl
def register_rewards(register):
    for item in (tool_call_format, tool_call_match, tool_call_state, tool_efficiency):
        register(item)
