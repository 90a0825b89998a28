"""The calls of a rollout as BFCL decodes them: step by step, a response whose calls cannot be read counting as none.

BFCL scores what its model handler decodes from each response (one
assistant message, a *step*).  A function-calling handler reads the
structured ``tool_calls``: each call's arguments are ``json.loads``-ed, and
when one of them is not JSON, or is JSON but not an object, the whole
response decodes to no call (a decoding error, or an output
``is_empty_output`` calls empty).  In prompting mode the handler reads the
calls from the message's text (``[f(a=1), g(b=2)]``, a JSON list or XML, its
``ReturnFormat``) with the parser vendored in :mod:`.bfcl_decode`; text that
does not parse is no call.  :func:`steps` gives the same reading, so the
rewards count "no call" where BFCL does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from grpo_host import Trajectory

from . import bfcl_decode
from .dispatch import Call

__all__ = ["TextCalls", "steps", "turns"]

TextCalls = Literal["off", "python", "json", "verbose_xml", "concise_xml"]
"""How calls written as text are read: not at all, or in one of BFCL's prompting formats."""


def steps(messages: Sequence[Mapping[str, Any]], text_calls: TextCalls = "off") -> list[list[Call]]:
    """The calls of each assistant message that decodes to at least one call, in order (BFCL's decoded steps)."""
    out = []
    for message in messages:
        if message.get("role", "assistant") == "assistant":
            calls = _decode(message, text_calls)
            if calls:
                out.append(calls)
    return out


def turns(messages: Sequence[Mapping[str, Any]]) -> list[list[Mapping[str, Any]]]:
    """The rollout split at its user messages: one list of messages per user turn (a completion that starts with
    the user's message does not open an empty turn before it)."""
    out: list[list[Mapping[str, Any]]] = [[]]
    for message in messages:
        if message.get("role") == "user":
            if out[-1] or len(out) > 1:
                out.append([])
        elif message.get("role") != "system":
            out[-1].append(message)
    return out


def _decode(message: Mapping[str, Any], text_calls: TextCalls) -> list[Call]:
    raw = message.get("tool_calls")
    if isinstance(raw, list) and raw:
        calls = Trajectory.of([message]).tool_calls
        if not calls or not all(call.parsed for call in calls):
            return []
        return [Call(call.name, call.arguments) for call in calls]
    content = message.get("content")
    if text_calls == "off" or not isinstance(content, str):
        return []
    try:
        decoded = bfcl_decode.default_decode_ast_prompting(content, bfcl_decode.ReturnFormat(text_calls))
    except Exception:  # BFCL: text that does not decode is a response without calls
        return []
    if not isinstance(decoded, list) or not all(isinstance(d, dict) and len(d) == 1 for d in decoded):
        return []
    read = [Call(str(name), arguments) for d in decoded for name, arguments in d.items()]
    return read if all(isinstance(c.kwargs, dict) for c in read) else []
