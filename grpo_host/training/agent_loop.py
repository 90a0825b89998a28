"""The multi-turn agent loop, for engines that have none of their own (the MLX backend).

TRL runs its own loop (``GRPOTrainer._tool_call_loop``) over the sessions the
TRL backend hands it (:func:`~grpo_host.training.backends.steps.rollout_environments`).
An engine without one drives the same sessions through :func:`run_episode`,
which follows TRL's rules step for step, so an environment trains the same
way on either backend:

* the prompt is the row's messages with the environment's ``reset``
  observation appended to the last one, rendered by the model's chat
  template with the session's tools (TRL's prefix-preserving training
  template where the model's own is not);
* each turn is parsed with TRL's ``parse_response`` (the tokenizer's
  response template, set by TRL's ``add_response_schema``), the parser the
  TRL path uses;
* every tool call of a turn is run in the session (guarded: arguments,
  timeouts, output caps); a failure becomes ``{'error': ...}`` in the tool
  message, as TRL writes it, so :class:`~grpo_host.scoring.trajectory.Trajectory`
  counts it;
* the tool results are appended as the chat template renders them (TRL's
  ``_get_tool_suffix_ids``), their tokens masked out of the loss (0 in
  :attr:`Episode.mask`), and the model continues;
* the episode ends when a turn calls no tool, after ``max_tool_calls``
  rounds, or when a tool result would push the completion past
  ``max_completion_length`` (or the model's context): that result is dropped,
  as TRL drops it.

The engine supplies only ``generate(context_ids, max_tokens) -> new ids``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ChatTools", "Episode", "call_tools", "run_episode", "session_tools"]

Generate = Callable[[list[int], int], list[int]]
"""The engine's sampler: ``generate(context_ids, max_tokens)`` returns the new tokens (the stop token included)."""


def session_tools(session: Any) -> list[Callable[..., Any]]:
    """A session's tools as TRL collects them: its public methods other than ``reset`` and ``get_reward``."""
    return [getattr(session, name) for name, _ in inspect.getmembers(type(session), predicate=inspect.isfunction)
            if name not in ("reset", "get_reward") and not name.startswith("_")]


class ChatTools:
    """The model's chat template for tool use, read and written with TRL's own utilities.

    :param tokenizer: a transformers tokenizer (mlx-lm's ``TokenizerWrapper`` holds one).
    :raises ValueError: the template cannot render a tool conversation, or TRL knows no response parser for it.
    """

    def __init__(self, tokenizer: Any) -> None:
        from trl.chat_template_utils import (
            add_response_schema,
            get_training_chat_template,
            is_chat_template_prefix_preserving,
            supports_tool_calling,
        )

        if not supports_tool_calling(tokenizer):
            raise ValueError("the chat template cannot render a tool-calling conversation")
        if not any(getattr(tokenizer, key, None) is not None for key in ("response_template", "response_schema")):
            tokenizer = add_response_schema(tokenizer)
        self.tokenizer = tokenizer
        self.template = None if is_chat_template_prefix_preserving(tokenizer) else get_training_chat_template(tokenizer)

    def render(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Any] = (), *,
               generation_prompt: bool = True) -> list[int]:
        ids = self.tokenizer.apply_chat_template(list(messages), tools=list(tools) or None, tokenize=True,
                                                 add_generation_prompt=generation_prompt,
                                                 chat_template=self.template, return_dict=False)
        return [int(i) for i in ids]

    def parse(self, ids: list[int], prefix: list[int], tools: Sequence[Any]) -> dict[str, Any]:
        """One assistant turn as a message (TRL's ``parse_response``: plain text when the tool call is malformed)."""
        from trl.chat_template_utils import parse_response

        return parse_response(self.tokenizer, ids, prefix=prefix, tools=list(tools))

    def tool_suffix(self, tool_messages: list[dict[str, Any]]) -> list[int]:
        """The tokens the template puts after an assistant turn for these tool results, up to the next assistant
        header: TRL's ``_get_tool_suffix_ids``, which renders a minimal conversation with and without them."""
        calls = [{"type": "function", "function": {"name": tool_messages[0]["name"], "arguments": {}}}]
        dummy: list[dict[str, Any]] = [{"role": "user", "content": "dummy"},
                                       {"role": "assistant", "content": "", "tool_calls": calls}]
        prefix = self.render(dummy, generation_prompt=False)
        full = self.render(dummy + tool_messages)
        eos = [i for i, token in enumerate(prefix) if token == self.tokenizer.eos_token_id]
        if eos:  # templates that render "<|im_end|>\n" after a turn: cut at the end-of-turn token
            prefix = prefix[:eos[-1] + 1]
        if full[:len(prefix)] != prefix:
            raise ValueError("the chat template does not render tool results as a continuation of the conversation")
        return full[len(prefix):]


def call_tools(session: Any, calls: Sequence[Any]) -> tuple[list[dict[str, Any]], int]:
    """Run an assistant turn's tool calls in ``session``; the tool messages and how many failed (TRL's rules)."""
    tools = {fn.__name__: fn for fn in session_tools(session)}
    messages, failures = [], 0
    for call in calls:
        function = call.get("function") if isinstance(call, Mapping) else None
        name = function.get("name", "unknown") if isinstance(function, Mapping) else "unknown"
        try:
            if not isinstance(call, Mapping) or call.get("type") != "function" or not isinstance(function, Mapping):
                kind = call.get("type") if isinstance(call, Mapping) else type(call).__name__
                raise ValueError(f"Unsupported tool call type: {kind}")
            if name not in tools:
                raise ValueError(f"Tool {name} not found.")
            arguments = function.get("arguments")
            if not isinstance(arguments, Mapping):
                raise ValueError(f"tool {name}: the arguments are not a JSON object")
            result: Any = tools[name](**arguments)
        except Exception as exc:  # the session's guard already turned the tool's own failures into ToolError
            failures += 1
            result = {"error": str(exc)}
        messages.append({"role": "tool", "name": name, "content": result if isinstance(result, list) else str(result)})
    return messages, failures


@dataclass
class Episode:
    """One rollout: the prompt it ran from, the completion as rewards see it, and its tokens with the loss mask."""

    prompt_ids: list[int]
    messages: list[dict[str, Any]] = field(default_factory=list)
    """The completion: assistant turns and tool results, as TRL hands a trajectory to rewards."""
    ids: list[int] = field(default_factory=list)
    """Every completion token after the prompt: generated ones and tool results."""
    mask: list[int] = field(default_factory=list)
    """Per token of :attr:`ids`: 1 generated by the model (trained on), 0 a tool result (masked out of the loss)."""
    calls: int = 0
    failures: int = 0


def run_episode(chat: ChatTools, session: Any, prompt: Sequence[Mapping[str, Any]], row_id: int, generate: Generate,
                *, max_tokens: int, max_tool_calls: int | None, context: int | None = None) -> Episode:
    """Run one rollout of ``session`` for row ``row_id`` from ``prompt`` (a message list); see the module docstring.

    :param max_tokens: ``max_completion_length``: generated and tool-result tokens together.
    :param max_tool_calls: rounds of tool calls (None: until the model stops calling tools or the budget is spent).
    :param context: the model's context length; a tool result that would fill it ends the episode.
    """
    observation = session.reset(**{session.ROW_KEY: row_id})
    messages = [dict(m) for m in prompt]
    if observation is not None:
        messages[-1] = {**messages[-1], "content": f"{messages[-1].get('content') or ''}{observation}"}
    tools = session_tools(session)
    episode = Episode(chat.render(messages, tools))
    new = generate(episode.prompt_ids, max_tokens)
    episode.ids, episode.mask = list(new), [1] * len(new)
    turn = chat.parse(new, episode.prompt_ids, tools) if new else {}
    if turn:
        episode.messages.append(turn)
    rounds = 0
    while turn.get("tool_calls") and (max_tool_calls is None or rounds < max_tool_calls):
        results, failures = call_tools(session, turn["tool_calls"])
        episode.calls += len(turn["tool_calls"])
        episode.failures += failures
        suffix = chat.tool_suffix(results)
        used = len(episode.ids) + len(suffix)
        if used > max_tokens or (context is not None and len(episode.prompt_ids) + used >= context):
            break  # the results would not fit: dropped, and the episode ends as it is
        episode.messages += results
        before = episode.prompt_ids + episode.ids + suffix
        new = generate(before, max_tokens - used)
        episode.ids += suffix + new
        episode.mask += [0] * len(suffix) + [1] * len(new)
        turn = chat.parse(new, before, tools) if new else {}
        if turn:
            episode.messages.append(turn)
        rounds += 1
    return episode
