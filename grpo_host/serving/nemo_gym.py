"""NeMo Gym's resources-server verify protocol: ``POST /verify`` on ``grpo-host serve`` (the endpoint is in
:mod:`grpo_host.serving.endpoints`; this module maps the shapes).

A NeMo Gym agent ends a rollout by posting the task's row to its resources
server's ``/verify``: ``responses_create_params`` (the Responses API request
the rollout started from), ``response`` (the Responses API response: its
``output`` items are the rollout) and the dataset row's own fields.  It
reads back the request with ``reward`` added (``BaseVerifyResponse``) and,
from a server with several objectives, ``reward_components``
(``BaseMultiRewardVerifyResponse``).  So a NeMo Gym config can name a
``grpo-host serve`` as its resources server and train on grpo-host rewards
without glue.

The request becomes a grpo-host row:

* ``prompt``: ``responses_create_params.input`` (text, or its messages as
  ``{role, content}`` with the text parts joined), after ``instructions``
  as a system message;
* ``completion``: the ``response.output`` items as chat messages, read as a
  :class:`grpo_host.Trajectory`: an assistant ``message`` is a turn (its
  ``output_text`` and ``refusal`` parts joined), ``function_call`` items are
  that turn's ``tool_calls`` (a turn of their own when no message precedes
  them), a ``function_call_output`` is a ``tool`` message, and a
  ``reasoning`` item (its ``content`` texts, else its ``summary`` texts) is
  the ``reasoning_content`` of the turn after it.  Other items (hosted tools:
  web search, MCP, ...) carry nothing a grpo-host reward reads and are
  skipped;
* every other top-level field is a column; NeMo Gym's ``expected_answer``
  is the ``answer`` column, over a field of that name (as JSON text when it
  is not a string: a number's gold ``4`` is ``"4"``).

The answer is the request with ``reward`` (the spec's weighted total) and
``reward_components`` (each reward's value, for the rewards that applied).
A row that no reward scored, or that lacks what a reward needs, is not paid
0: its ``reward`` is 0.0 because NeMo Gym's schema requires a float, but it
carries ``mask_sample: true`` (the field NeMo Gym's trainers read to leave a
rollout out of the loss) and ``_ng_failure_class`` (``grpo_host_bad_row`` or
``grpo_host_unscored``, with ``_ng_failure_terminal``: retrying gives the
same answer), so NeMo Gym's rollout collection files it with the failures,
out of the metrics; ``grpo_host_error`` says why, naming the reward and the
column.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["BAD_ROW", "UNSCORED", "row_of", "verify_response"]

BAD_ROW = "grpo_host_bad_row"
"""``_ng_failure_class`` of a row that lacks what a reward needs (or has no completion)."""
UNSCORED = "grpo_host_unscored"
"""``_ng_failure_class`` of a row that no reward of the spec applied to."""

PROTOCOL = ("responses_create_params", "response")
"""The request's fields that are the rollout, not the task's columns."""


def row_of(body: Any) -> dict[str, Any]:
    """The grpo-host row of a NeMo Gym verify request (see the module docstring).

    Raises ValueError naming the field when the request is not of the protocol's shape.
    """
    if not isinstance(body, dict):
        raise ValueError("the body must be a NeMo Gym verify request: an object with 'responses_create_params' and "
                         "'response'")
    params, response = body.get("responses_create_params"), body.get("response")
    if not isinstance(params, dict):
        raise ValueError("'responses_create_params' must be an object (the Responses API request of the rollout)")
    if not isinstance(response, dict) or not isinstance(response.get("output"), list):
        raise ValueError("'response' must be an object whose 'output' is a list of Responses API output items")
    row = {k: v for k, v in body.items() if k not in PROTOCOL}
    gold = body.get("expected_answer")
    if gold is not None:  # the protocol's gold, over a dataset's own `answer` field (as SkyRL's ground_truth)
        row["answer"] = gold if isinstance(gold, str) else json.dumps(gold)
    prompt = _prompt(params)
    if prompt is not None or "prompt" not in row:  # an empty input keeps a prompt the request carries as a field
        row["prompt"] = prompt
    row["completion"] = _messages(response["output"])
    return row


def _text(content: Any, kinds: tuple[str, ...] = ("input_text", "output_text", "text")) -> str:
    """A content's text: a string as it is, or the text of its parts of ``kinds`` (and refusals) joined."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    out = []
    for part in content:
        if isinstance(part, Mapping):
            if part.get("type") in kinds and isinstance(part.get("text"), str):
                out.append(part["text"])
            elif part.get("type") == "refusal" and isinstance(part.get("refusal"), str):
                out.append(part["refusal"])
    return "".join(out)


def _prompt(params: Mapping[str, Any]) -> str | list[dict[str, Any]] | None:
    """``instructions`` and ``input`` as grpo-host's prompt column."""
    given = params.get("input")
    instructions = params.get("instructions")
    if isinstance(given, str) and not instructions:
        return given
    messages = [{"role": "system", "content": instructions}] if isinstance(instructions, str) and instructions else []
    if isinstance(given, str):
        messages.append({"role": "user", "content": given})
    elif isinstance(given, list):
        messages += [{"role": item["role"], "content": _text(item.get("content"))} for item in given
                     if isinstance(item, Mapping) and isinstance(item.get("role"), str)]
    return messages or None


def _reasoning(item: Mapping[str, Any]) -> str:
    """A reasoning item's text: its full ``content`` when the server sent it, else its ``summary``."""
    for key in ("content", "summary"):
        parts = item.get(key)
        if isinstance(parts, list):
            texts = [p["text"] for p in parts if isinstance(p, Mapping) and isinstance(p.get("text"), str)]
            if texts:
                return "\n".join(texts)
    return ""


def _messages(output: list[Any]) -> list[dict[str, Any]]:
    """Responses API output items as chat messages (see the module docstring)."""
    messages: list[dict[str, Any]] = []
    reasoning: list[str] = []
    open_turn: dict[str, Any] | None = None  # the assistant turn that function calls join until a tool result

    def turn(content: str) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if reasoning:
            message["reasoning_content"] = "\n".join(reasoning)
            reasoning.clear()
        messages.append(message)
        return message

    for i, item in enumerate(output):
        if not isinstance(item, Mapping):
            raise ValueError(f"'response.output[{i}]' must be an object (a Responses API output item), "
                             f"not {type(item).__name__}")
        kind = item.get("type")
        if kind == "reasoning":
            if text := _reasoning(item):
                reasoning.append(text)
        elif kind == "message" and item.get("role", "assistant") == "assistant":
            open_turn = turn(_text(item.get("content"), ("output_text", "input_text", "text")))
        elif kind == "function_call":
            if open_turn is None or reasoning:
                open_turn = turn("")
            open_turn.setdefault("tool_calls", []).append(
                {"id": item.get("call_id"), "type": "function",
                 "function": {"name": item.get("name"), "arguments": item.get("arguments")}})
        elif kind == "function_call_output":
            output_ = item.get("output")
            messages.append({"role": "tool", "tool_call_id": item.get("call_id"),
                             "content": output_ if isinstance(output_, str) else _text(output_)})
            open_turn = None
    if reasoning:  # the model thought and stopped: a final turn with no answer
        turn("")
    return messages


def verify_response(body: Mapping[str, Any], line: Mapping[str, Any]) -> dict[str, Any]:
    """NeMo Gym's ``BaseMultiRewardVerifyResponse`` for ``body``, from its ``grpo-host score`` result ``line``."""
    values = line.get("rewards")
    total = line.get("total")
    out: dict[str, Any] = {**body, "reward": 0.0 if total is None else total,
                           "reward_components": {k: v for k, v in (values or {}).items() if v is not None}}
    if values is None or total is None:
        out.update({"mask_sample": True, "_ng_failure_class": BAD_ROW if values is None else UNSCORED,
                    "_ng_failure_terminal": True})
    if "error" in line:
        out["grpo_host_error"] = line["error"] if values is not None else f"{line['row']}: {line['error']}"
    elif total is None:
        out["grpo_host_error"] = f"{line['row']}: no reward of the spec applied"
    return out
