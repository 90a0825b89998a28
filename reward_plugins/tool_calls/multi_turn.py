"""``tool_call_state``: a multi-turn rollout checked as BFCL's multi-turn checker checks it, state and responses.

BFCL's multi-turn categories (base, long context, missing function, missing
parameter) give the model stateful tools (a file system, a trading bot, a
vehicle...) over several user turns.  Its checker does not match calls: it
runs the model's calls of each turn on the backends, runs the ground truth's
calls of that turn on a second set, and after every turn whose ground truth
is not empty asks two things: is every backend's public state equal to the
ground truth's, and is every result the ground truth's calls returned in
this turn among the results the model's calls have returned so far.  So
order matters where it changes the state or a result (moving a file before
its folder exists), extra calls that read and do not change anything pay,
and the expected calls all made in the first turn fail the later turns'
state.  The checker is BFCL's own, vendored with its backends
(:mod:`.bfcl_multi_turn`, :mod:`.bfcl_backends`); the calls are dispatched
as data, never ``eval``-ed (:mod:`.dispatch` says how that differs).

A row is BFCL's entry: ``initial_config`` (each class's scenario),
``involved_classes``, and ``ground_truth``, a list per user turn of the calls
that turn should make as BFCL writes them (``"mv(source='a', destination='b')"``;
``[]`` for a turn where no call can do what is asked); ``id``, when the row
has it, says as BFCL's ids do whether the scenario is the long-context one.
The rollout's turns are its stretches between ``user`` messages, its steps
the assistant messages with calls (:mod:`.calls`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from grpo_host import Trajectory, reward

from . import bfcl_multi_turn
from .calls import TextCalls, steps, turns
from .dispatch import BACKENDS, Call, parse_call
from .tools import MAX_COLUMN_CHARS, ToolsProblem

__all__ = ["StateParams", "check_state_row", "tool_call_state"]


class StateParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    text_calls: TextCalls = Field("off", description="also read calls written as text in an assistant message "
                                                     "without structured tool_calls, in one of BFCL's prompting "
                                                     "formats: python, json, verbose_xml or concise_xml")


def _column(value: Any, column: str) -> Any:
    if isinstance(value, str):
        if len(value) > MAX_COLUMN_CHARS:
            raise ToolsProblem(f"column {column!r} is longer than {MAX_COLUMN_CHARS:,} characters")
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            raise ToolsProblem(f"column {column!r} is text that is not JSON") from None
    return value


@lru_cache(maxsize=256)
def _ground_truth(text: str) -> tuple[tuple[Call, ...], ...]:
    truth = _column(text, "ground_truth")
    if not isinstance(truth, list) or not all(isinstance(t, list) and all(isinstance(c, str) for c in t)
                                              for t in truth):
        raise ToolsProblem("column 'ground_truth' must be a list of turns, each a list of calls as text")
    try:
        return tuple(tuple(parse_call(c) for c in t) for t in truth)
    except ValueError as exc:
        raise ToolsProblem(f"column 'ground_truth': {exc}") from None


def _entry(initial_config: Any, involved_classes: Any, row_id: Any) -> dict:
    """BFCL's test entry: what its checker reads of the row."""
    config = _column(initial_config, "initial_config")
    classes = _column(involved_classes, "involved_classes")
    if not isinstance(config, Mapping):
        raise ToolsProblem("column 'initial_config' must be an object of each class's scenario")
    if not isinstance(classes, list) or not classes or not all(isinstance(c, str) for c in classes):
        raise ToolsProblem("column 'involved_classes' must be a non-empty list of class names")
    unknown = sorted(set(classes) - set(BACKENDS))
    if unknown:
        raise ToolsProblem(f"column 'involved_classes' names {unknown}; the backends are {sorted(BACKENDS)}")
    return {"initial_config": config, "involved_classes": classes, "id": row_id if isinstance(row_id, str) else ""}


def check_state_row(row: Mapping[str, Any]) -> str | None:
    """``data check``: the classes are BFCL's backends and every ground-truth call is a call with literal
    arguments."""
    try:
        _entry(row.get("initial_config"), row.get("involved_classes"), row.get("id"))
        _ground_truth(_key(row.get("ground_truth")))
    except ToolsProblem as exc:
        return str(exc)
    return None


def _key(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        raise ToolsProblem("column 'ground_truth' is not JSON data") from None


FILES = {"GorillaFileSystem": {"root": {"alice": {"type": "directory", "contents": {
    "notes.txt": {"type": "file", "content": "draft"}}}}}}


def _turn(*calls: tuple[str, dict]) -> list[dict]:
    """One user turn of a rollout: the user's message, one assistant message calling ``calls``, its results."""
    return [{"role": "user", "content": "..."},
            {"role": "assistant", "content": "", "tool_calls": [
                {"type": "function", "function": {"name": n, "arguments": a}} for n, a in calls]},
            *[{"role": "tool", "content": "..."} for _ in calls],
            {"role": "assistant", "content": "Done."}]


@reward(
    name="tool_call_state",
    requires={"initial_config": dict | str, "involved_classes": list | str, "ground_truth": list | str},
    params=StateParams,
    trajectory=True,
    executor="process",
    check_row=check_state_row,
    examples=[
        {"completion": _turn(("mkdir", {"dir_name": "old"}), ("mv", {"source": "notes.txt", "destination": "old"})),
         "initial_config": FILES, "involved_classes": ["GorillaFileSystem"],
         "ground_truth": [["mkdir(dir_name='old')", "mv(source='notes.txt', destination='old')"]], "score": 1.0},
        {"completion": _turn(("mv", {"source": "notes.txt", "destination": "old"}), ("mkdir", {"dir_name": "old"})),
         "initial_config": FILES, "involved_classes": ["GorillaFileSystem"],
         "ground_truth": [["mkdir(dir_name='old')", "mv(source='notes.txt', destination='old')"]], "score": 0.0},
        {"completion": _turn(("ls", {}), ("mkdir", {"dir_name": "old"})) + _turn(("cat", {"file_name": "notes.txt"})),
         "initial_config": FILES, "involved_classes": ["GorillaFileSystem"],
         "ground_truth": [["mkdir(dir_name='old')"], ["cat(file_name='notes.txt')"]], "score": 1.0},
        {"completion": _turn(("mkdir", {"dir_name": "old"}), ("cat", {"file_name": "notes.txt"})) + _turn(),
         "initial_config": FILES, "involved_classes": ["GorillaFileSystem"],
         "ground_truth": [["mkdir(dir_name='old')"], ["cat(file_name='notes.txt')"]], "score": 0.0},
    ],
)
def tool_call_state(rollout: Trajectory, *, initial_config: Any, involved_classes: Any, ground_truth: Any,
                    params: StateParams, **columns: Any) -> float:
    """BFCL's multi-turn verdict (its checker and backends, vendored): 1.0 when the rollout has as many user turns
    as `ground_truth` has turns and, after every turn whose ground truth is not empty, (1) the turn made at least
    one call, (2) the public state of every involved class (`involved_classes`, loaded from `initial_config`) equals
    the state the ground truth's calls reach, and (3) every result the ground truth's calls of the turn return is
    among the results of the rollout's calls so far; else 0.0.  Calls run turn by turn, in the order made, on
    BFCL's backends (GorillaFileSystem, MathAPI, MessageAPI, TwitterAPI, TicketAPI, TradingBot, TravelAPI,
    VehicleControlAPI), dispatched as data (a public method of the involved classes, plain arguments), never
    evaluated as code; an assistant message with a call whose arguments are not a JSON object makes no call, as
    BFCL decodes it; text_calls reads calls written as text.  A row's `id` containing 'long_context' loads the
    long-context scenario, as BFCL's ids do."""
    entry = _entry(initial_config, involved_classes, columns.get("id"))
    truth = [list(t) for t in _ground_truth(_key(ground_truth))]
    made = [steps(turn, params.text_calls) for turn in turns(rollout.messages)]
    if len(made) != len(truth):  # BFCL: the model was force-terminated
        return 0.0
    return float(bfcl_multi_turn.multi_turn_checker(made, truth, entry, "", "")["valid"])
