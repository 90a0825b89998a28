"""An environment's episode against an OpenAI-compatible chat endpoint (vLLM, SGLang, ``transformers serve``).

The token-level loop (:mod:`grpo_host.training.agent_loop`) renders the
prompt with the model's chat template and parses each turn with TRL's
parser; a chat endpoint renders and parses on its server, so an episode
against one speaks the chat API instead, the protocol verifiers' ``ToolEnv``
and every agent framework use with a served model.  What stays the same as
the token loop, so the same rewards and per-turn rules score both:

* the prompt is the row's messages with the session's ``reset`` observation
  appended to the last one, and the session's tools are offered as
  ``tools``, each the JSON schema transformers' ``get_json_schema`` makes of
  it (what a chat template is given in the token loop);
* every tool call of a turn is run in the guarded session by
  :func:`~grpo_host.training.agent_loop.call_tools`, so a bad call (arguments
  that are not a JSON object, an unknown tool, a type other than
  ``function``, a tool that fails or times out) becomes the same
  ``{'error': ...}`` tool result the token loop writes and
  :class:`~grpo_host.scoring.trajectory.Trajectory` counts; a call without an
  id is given one (``call_<turn>_<i>``), since the server pairs results with
  calls by id;
* the episode ends when a turn calls no tool, after ``max_tool_calls``
  rounds (a turn past them keeps its calls unrun), or when
  ``max_completion_length`` is spent, generated and tool-result tokens
  together, as the server counts them: each answer's ``usage`` gives its
  ``completion_tokens``, and the growth of ``prompt_tokens`` since the first
  request is what the earlier turns and the tool results took.  Results that
  leave no room are dropped and the episode ends, as the token loop drops
  them; a turn asked for more room than the results left is asked again
  with what is left (same messages, same seed).  An endpoint that reports no
  ``usage`` cannot count the budget, and is an error naming it;
* the record is the trajectory the token loop keeps: the assistant turns as
  the server sent them (content, ``tool_calls`` with their ids and
  JSON-text arguments) and the tool results (``name``, ``tool_call_id``,
  ``content``).

Each request is one chat turn with the sample's seed; the tools run on a
worker thread, so the other episodes' requests go on meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import UserError
from .agent_loop import call_tools, session_tools

__all__ = ["ChatEpisode", "Reply", "read_calls", "reply_of", "run_chat_episode", "tool_schemas"]


@dataclass
class Reply:
    """One answer of the endpoint: the assistant message and the token counts of its ``usage``."""

    message: dict[str, Any]
    prompt_tokens: int
    completion_tokens: int


Ask = Callable[[list[dict[str, Any]], list[dict[str, Any]], int], Awaitable[Reply]]
"""``ask(messages, tools, max_tokens)``: one chat turn from the endpoint."""


@dataclass
class ChatEpisode:
    """One episode: the completion as rewards see it, its length in the server's tokens, its calls and failures."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    length: int = 0
    calls: int = 0
    failures: int = 0


def tool_schemas(session: Any) -> list[dict[str, Any]]:
    """The session's tools as the chat API's ``tools``: transformers' ``get_json_schema`` of each (what the chat
    template renders in the token loop), from the tools' type hints and Google-style docstrings."""
    try:
        from transformers.utils import get_json_schema
    except ImportError:
        raise UserError("transformers is not installed: an environment's tools are described to an endpoint by "
                        "transformers' get_json_schema (pip install 'grpo-host[trl]')") from None
    return [get_json_schema(tool) for tool in session_tools(session)]


def reply_of(answer: Any, url: str) -> Reply:
    """The first choice's message and the usage of an OpenAI chat answer; anything else names the endpoint."""
    try:
        message = answer["choices"][0]["message"]
        usage = answer.get("usage") or {}
        prompt, completion = _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens"))
        content, calls = message.get("content"), message.get("tool_calls")
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        raise UserError(f"endpoint {url}: an answer that is not an OpenAI chat completion ({exc!r})") from None
    if prompt is None or completion is None:
        raise UserError(f"endpoint {url}: its answer gives no usage (prompt_tokens, completion_tokens), which an "
                        "episode's --max-completion-length is counted in")
    out: dict[str, Any] = {"role": "assistant", "content": content if isinstance(content, str | list) else ""}
    if calls:
        out["tool_calls"] = calls
    reasoning = message.get("reasoning_content")
    if isinstance(reasoning, str) and reasoning:
        out["reasoning_content"] = reasoning
    return Reply(out, prompt, completion)


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def read_calls(raw: Any, turn: int) -> tuple[list[dict[str, Any]], list[Any]]:
    """A turn's tool calls as they are sent back and recorded (OpenAI's shape, each with an id and its arguments as
    JSON text) and as :func:`call_tools` runs them (the arguments parsed where they are a JSON object)."""
    if not raw:
        return [], []
    sent, run = [], []
    for i, call in enumerate(raw if isinstance(raw, list) else [raw]):
        function = call.get("function") if isinstance(call, Mapping) else None
        given = call.get("id") if isinstance(call, Mapping) else None
        name = function.get("name") if isinstance(function, Mapping) else None
        arguments = function.get("arguments") if isinstance(function, Mapping) else None
        parsed = arguments
        if isinstance(arguments, str):
            with contextlib.suppress(ValueError, RecursionError):  # else kept as text: call_tools answers that the
                parsed = json.loads(arguments)                     # arguments are not a JSON object
        text = arguments if isinstance(arguments, str) else json.dumps(arguments, default=str)
        sent.append({"id": given if isinstance(given, str) and given else f"call_{turn}_{i}", "type": "function",
                     "function": {"name": name if isinstance(name, str) else "", "arguments": text}})
        if isinstance(function, Mapping):
            call = {"type": call.get("type", "function"), "function": {"name": name, "arguments": parsed}}
        run.append(call)
    return sent, run


async def run_chat_episode(ask: Ask, session: Any, prompt: Sequence[Mapping[str, Any]], row_id: int, *,
                           max_tokens: int, max_tool_calls: int | None) -> ChatEpisode:
    """Run one episode of ``session`` for row ``row_id`` from ``prompt`` (a message list); see the module docstring.

    :param max_tokens: ``max_completion_length``: the turns and the tool results together, in the server's tokens.
    :param max_tool_calls: rounds of tool calls (None: until the model stops calling tools or the budget is spent).
    """
    observation = await asyncio.to_thread(session.reset, **{session.ROW_KEY: row_id})
    messages = [dict(m) for m in prompt]
    if observation is not None:
        messages[-1] = {**messages[-1], "content": f"{messages[-1].get('content') or ''}{observation}"}
    tools = tool_schemas(session)
    episode, sent = ChatEpisode(), list[dict[str, Any]]()
    results: list[dict[str, Any]] = []
    first: int | None = None
    rounds = 0
    while True:
        reply = await ask(messages + sent, tools, max_tokens - episode.length)
        first = reply.prompt_tokens if first is None else first
        before = max(0, reply.prompt_tokens - first)  # the earlier turns and the results just appended
        if before + reply.completion_tokens > max_tokens:
            if before >= max_tokens:  # the results fill the budget: no turn fits after them
                if before > max_tokens:  # nor do they: dropped, as the token loop drops them
                    del episode.messages[len(episode.messages) - len(results):]
                else:
                    episode.length = before
                break
            reply = await ask(messages + sent, tools, max_tokens - before)
        episode.length = before + reply.completion_tokens
        calls, runnable = read_calls(reply.message.get("tool_calls"), rounds)
        turn = {**reply.message, **({"tool_calls": calls} if calls else {})}
        episode.messages.append(turn)
        sent.append({key: turn[key] for key in ("role", "content", "tool_calls") if key in turn})
        if not calls or (max_tool_calls is not None and rounds >= max_tool_calls):
            break
        results, failures = await asyncio.to_thread(call_tools, session, runnable)
        episode.calls += len(calls)
        episode.failures += failures
        if episode.length >= max_tokens:  # the turn spent the budget: its results cannot fit, and are dropped
            break
        for call, result in zip(calls, results, strict=True):
            result["tool_call_id"] = call["id"]
            sent.append({"role": "tool", "tool_call_id": call["id"], "content": result["content"]})
        episode.messages += results
        rounds += 1
    return episode
