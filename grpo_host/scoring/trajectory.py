"""A completion as rewards see it: the final text, or the whole trajectory of a multi-turn rollout.

Engines hand reward functions a completion in one of two shapes: a string,
or a list of chat messages.  The list is a whole rollout when the model
called tools (TRL's ``tools``/``environment_factory``: assistant turns with
``tool_calls``, ``tool`` results, the final assistant answer), and even a
single turn arrives parsed when the tokenizer has a response schema: TRL
moves ``<think>…</think>`` into ``reasoning_content``.

:class:`Trajectory` reads either shape once.  A **text reward** (the
default) sees :attr:`Trajectory.text`, the final assistant answer with its
reasoning restored in the R1 shape format rewards expect::

    <think>\\n{reasoning}\\n</think>\\n{content}

so a tool-using rollout scores exactly as the same final text without
tools (the parser drops the whitespace around the reasoning; this is the
shape it is put back in).  A rollout that ends without a final answer (its
last assistant turn calls tools, or it has none) has ``text == ""``:
``finished`` is False and text rewards score it as the empty completion it
is, which is the documented case, not an accident.  A **trajectory reward**
(``@reward(trajectory=True)``) receives the :class:`Trajectory` itself:
every message, the tool calls with their arguments, the tool results, and
the counts (turns, calls, tool errors); a per-turn reward
(``@reward(per_turn=True)``) reads its turns in :attr:`Trajectory.by_turn`.

Everything here is adversarial input: messages that are not mappings,
contents that are not text, arguments that are not JSON are read as far as
they go and never raise; only a completion that is neither a string nor a
message list is refused (``TypeError``), which callers count as a bad row.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

__all__ = ["REASONING_KEYS", "Parts", "ToolCall", "Trajectory", "answer_blocks", "completion_text", "fenced_blocks",
           "split_reasoning"]

REASONING_KEYS = ("reasoning_content", "reasoning", "thinking")
"""Where engines and servers put an assistant turn's reasoning (TRL and vLLM; OpenAI-style servers; LFM2)."""

TOOL_ERROR_PREFIX = "{'error':"
"""How TRL writes a tool call that raised into the tool message (``str({"error": message})``)."""


@dataclass(frozen=True)
class ToolCall:
    """One tool call of an assistant turn: the tool's name and its arguments (a dict when they parsed)."""

    name: str
    arguments: Any
    """The arguments as the engine parsed them (a dict), or their raw text when they were not a JSON object."""
    id: str | None = None

    @property
    def parsed(self) -> bool:
        """Whether the arguments are a JSON object (what a tool can be called with)."""
        return isinstance(self.arguments, dict)


@dataclass(frozen=True)
class Trajectory:
    """One rollout's messages and what rewards read from them (see the module docstring)."""

    messages: tuple[Mapping[str, Any], ...]
    answer: str = ""
    """The final assistant turn's content ("" when the rollout ended without one)."""
    reasoning: str | None = None
    """The final assistant turn's reasoning, when the engine split it off."""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_results: tuple[str, ...] = ()
    turns: int = 0
    """Assistant turns."""
    tool_errors: int = 0
    """Tool results that report a failure (TRL's ``{'error': ...}``)."""
    finished: bool = True
    """False when the last assistant turn called tools (or there was none): no final answer was given."""

    @property
    def text(self) -> str:
        """The final answer with its reasoning restored in the R1 shape: what text rewards score."""
        if self.reasoning is None or not self.finished:
            return self.answer
        return f"<think>\n{self.reasoning}\n</think>\n{self.answer}"

    @property
    def by_turn(self) -> tuple[tuple[Mapping[str, Any], ...], ...]:
        """The messages cut into turns: each assistant message with the tool results that follow it, one entry per
        turn of :attr:`turns` (what a ``per_turn`` reward returns one value for; messages before the first
        assistant turn belong to none)."""
        out: list[list[Mapping[str, Any]]] = []
        for message in self.messages:
            if message.get("role", "assistant") == "assistant":
                out.append([message])
            elif out:
                out[-1].append(message)
        return tuple(tuple(turn) for turn in out)

    @property
    def counts(self) -> dict[str, float]:
        """The figures monitors and trackers log per rollout."""
        return {"turns": float(self.turns), "tool_calls": float(len(self.tool_calls)),
                "tool_errors": float(self.tool_errors), "unfinished": float(not self.finished)}

    @classmethod
    def of(cls, completion: Any) -> Trajectory:
        """Read a completion (a string or a list of chat messages); ``TypeError`` for anything else."""
        if isinstance(completion, Trajectory):
            return completion
        if isinstance(completion, str):
            return cls(({"role": "assistant", "content": completion},), answer=completion, turns=1)
        if not isinstance(completion, Sequence) or isinstance(completion, bytes | bytearray):
            raise TypeError(f"completion must be a string or a list of chat messages, got {type(completion).__name__}")
        messages = tuple(m for m in completion if isinstance(m, Mapping))
        calls: list[ToolCall] = []
        results: list[str] = []
        turns = errors = 0
        last: Mapping[str, Any] | None = None
        for message in messages:
            role = message.get("role", "assistant")
            if role == "assistant":
                turns += 1
                last = message
                calls += _calls(message.get("tool_calls"))
            elif role == "tool":
                result = _content(message.get("content"))
                results.append(result)
                errors += result.startswith(TOOL_ERROR_PREFIX)
        if last is None:
            return cls(messages, tool_results=tuple(results), tool_errors=errors, finished=False)
        finished = not _calls(last.get("tool_calls"))
        reasoning = next((r for key in REASONING_KEYS if isinstance(r := last.get(key), str) and r.strip()), None)
        return cls(messages, answer=_content(last.get("content")) if finished else "", reasoning=reasoning,
                   tool_calls=tuple(calls), tool_results=tuple(results), turns=turns, tool_errors=errors,
                   finished=finished)


def completion_text(completion: Any) -> str:
    """What a text reward scores: a string as it is; a message list's final answer, reasoning restored.

    See :class:`Trajectory` for the rule; ``TypeError`` for a completion that is neither.
    """
    if isinstance(completion, str):
        return completion
    return Trajectory.of(completion).text


def _content(content: Any) -> str:
    """A message's content as text: a string, the text parts of a multimodal list, else ""."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p["text"] for p in content if isinstance(p, Mapping) and isinstance(p.get("text"), str))
    return "" if content is None else str(content)


def _calls(raw: Any) -> list[ToolCall]:
    """The tool calls of an assistant turn, in OpenAI's shape (``{"function": {"name", "arguments"}}``) or flat."""
    if not isinstance(raw, list):
        return []
    calls = []
    for call in raw:
        if not isinstance(call, Mapping):
            continue
        inner = call.get("function")
        function = inner if isinstance(inner, Mapping) else call
        name = function.get("name")
        arguments = function.get("arguments")
        if isinstance(arguments, str):  # OpenAI sends arguments as JSON text
            with contextlib.suppress(ValueError, RecursionError):  # not JSON, or nested too deep to read: kept as text
                arguments = json.loads(arguments)
        calls.append(ToolCall(name if isinstance(name, str) else "", arguments,
                              call.get("id") if isinstance(call.get("id"), str) else None))
    return calls


class Parts(NamedTuple):
    """A completion's reasoning and its answer (:func:`split_reasoning`)."""

    reasoning: str
    answer: str


def split_reasoning(text: str, tag: str = "think") -> Parts:
    """``(reasoning, answer)``: the text before the last ``</tag>`` (without a leading ``<tag>``) and after it.

    R1-style completions put the chain of thought in ``<think>...</think>``
    and the answer after it; chat templates that pre-fill ``<think>`` leave
    only the closing tag, and :attr:`Trajectory.text` restores reasoning an
    engine moved into ``reasoning_content`` in the same form.  An
    instruction such as "no commas" is about the answer, a
    language-consistency reward may look at the reasoning: both split here.

    Without a closing tag, a text that opens with ``<tag>`` is reasoning that
    never finished (its answer is empty: nothing was answered), and any other
    text is all answer.
    """
    opening, closing = f"<{tag}>", f"</{tag}>"
    head, sep, tail = text.rpartition(closing)
    if sep:
        stripped = head.lstrip()
        return Parts(stripped[len(opening):] if stripped.startswith(opening) else head, tail)
    stripped = text.lstrip()
    if stripped.startswith(opening):
        return Parts(stripped[len(opening):], "")
    return Parts("", text)


_ANSWER = re.compile(r"<answer>(.*?)(?:</answer>|$)", re.S)


def answer_blocks(text: str) -> list[re.Match[str]]:
    """Every ``<answer>`` block of an R1-shaped completion, in order, each to its ``</answer>`` or the text's end.

    Group 1 of each match is the block's content, and its span is where the
    block stands (a reward that weighs withdrawn or repeated answers needs
    both).  The R1 answer shape is the host's, as :func:`split_reasoning`'s
    ``<think>`` is: the answer rewards read it here, and the audit's probes
    write it, so they agree.
    """
    return list(_ANSWER.finditer(text))


def fenced_blocks(text: str) -> list[tuple[str, str]]:
    """Every closed fenced block of a completion, in order, as ``(tag, body)``: ``tag`` is the first word after the
    opening backticks as written (``""`` for none), ``body`` the lines between the fences.

    A line-by-line scan, linear in the completion's length (no regular
    expression to backtrack on hostile text): a fence opens on a line that
    starts with three backticks and closes on a line of only backticks; a
    block still open at the end is not a block.  The rewards that run a
    completion's program (``code``, ``contest``) choose among these.
    """
    found: list[tuple[str, str]] = []
    block: list[str] | None = None
    tag = ""
    for line in text.splitlines():
        stripped = line.strip()
        if block is None:
            if stripped.startswith("```"):
                info = stripped[3:].strip()
                tag, block = (info.split()[0] if info else ""), []
        elif stripped.startswith("```") and not stripped.strip("`"):
            found.append((tag, "\n".join(block)))
            block = None
        else:
            block.append(line)
    return found
