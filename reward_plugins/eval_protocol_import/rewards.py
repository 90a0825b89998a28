"""eval_protocol: an eval-protocol (reward-kit) ``@reward_function`` named by import path, as a grpo-host reward.

eval-protocol's reward functions take one conversation and return an
``EvaluateResult``: ``fn(messages=[...], ground_truth=..., **kwargs)``.
Rewriting one as a grpo-host reward would drift from the function its
authors keep, so this reward calls it::

    grpo-host score rows.jsonl --rewards \\
        "eval_protocol(function=eval_protocol.rewards.format:format_reward), accuracy:2"

* ``messages`` is the row's prompt (text as one user turn, or its chat
  messages) followed by the completion's messages (a text completion is one
  assistant turn; a rollout's tool calls, tool results and
  ``reasoning_content`` pass as they are);
* ``ground_truth`` is the ``answer`` column (eval-protocol's name for the
  gold; as for the export in ``grpo_host.integrations.eval_protocol``), or
  with ``ground_truth=messages`` that text as one assistant message in a
  list (eval-protocol's ``accuracy_reward`` reads a list of messages, and
  pays a plain string 0.0 as "invalid ground truth" while saying the score
  is valid);
  the columns in ``columns`` go as keyword arguments under their own names.
* What the function reads is checked before it is called: ``columns``, and
  ``answer`` when the function's ``ground_truth`` has no default, are the
  reward's required columns (``data check`` names a row lacking one, and
  such a row never reaches the function).
* The value: ``score`` when ``is_score_valid``; None when it is false (the
  function said it could not score the row: never paid as 0).  Each valid
  metric of the result is a counter (``eval_protocol/<metric>``, summed over
  a batch, beside the mean, as ``grpo-host score`` and training logs show
  counters), and ``invalid`` counts the rows the function declined.

A function that raises, or returns something that is not an
``EvaluateResult``, is a reward error naming the function (the spec's
``on_error`` decides what follows).  A ``function`` that cannot be imported
or is not callable is refused when the spec is read, naming the path.  One
function per spec (a spec names a reward once).  An ``async`` function is
run to completion on the scoring thread.  Needs eval-protocol installed where
the rewards run: ``pip install 'grpo-host[eval-protocol]'``.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import math
from collections.abc import Callable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from grpo_host import Scored, Trajectory, hookimpl, reward


class EvalProtocolParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    function: str = Field(description="the reward function's import path, module:name (an eval-protocol "
                          "@reward_function)")
    columns: list[str] = Field(default_factory=list, description="row columns the function reads, passed as "
                               "keyword arguments and required by data check")
    ground_truth: Literal["text", "messages"] = Field("text", description="how the answer column goes as "
                                                      "ground_truth: as it is, or as one assistant message in a "
                                                      "list (what accuracy_reward reads)")
    _fn: Callable[..., Any] = PrivateAttr()
    _needs_gold: bool = PrivateAttr()

    @model_validator(mode="after")
    def _imported(self) -> EvalProtocolParams:
        """Import the function now, so a wrong path is an error of the spec, before any row is scored."""
        module, _, name = self.function.partition(":")
        if not module or not name:
            raise ValueError(f"function {self.function!r}: expected module:name")
        try:
            found: Any = importlib.import_module(module)
            for part in name.split("."):
                found = getattr(found, part)
        except (ImportError, AttributeError) as exc:
            raise ValueError(f"function {self.function!r} cannot be imported: {type(exc).__name__}: {exc}") from None
        if not callable(found):
            raise ValueError(f"function {self.function!r} is a {type(found).__name__}, not a function")
        self._fn = found
        gold = inspect.signature(found).parameters.get("ground_truth")
        self._needs_gold = gold is not None and gold.default is inspect.Parameter.empty
        return self

    def requires(self) -> dict[str, Any]:
        """The columns this function reads (see the module docstring): checked by ``data check``."""
        return {**({"answer": Any} if self._needs_gold else {}), **dict.fromkeys(self.columns, Any)}


def _messages(prompt: Any, rollout: Trajectory) -> list[dict[str, Any]]:
    """The conversation eval-protocol reads: the prompt's turns, then the completion's."""
    if isinstance(prompt, str):
        head = [{"role": "user", "content": prompt}]
    elif isinstance(prompt, list):
        head = [dict(m) for m in prompt if isinstance(m, Mapping)]
    else:
        head = []
    return head + [dict(m) for m in rollout.messages]


def _field(result: Any, name: str, default: Any = None) -> Any:
    return result.get(name, default) if isinstance(result, Mapping) else getattr(result, name, default)


@reward(name="eval_protocol", params=EvalProtocolParams, trajectory=True)
def eval_protocol(rollout: Trajectory, *, params: EvalProtocolParams, prompt: Any = None, answer: Any = None,
                  **columns: Any) -> Scored:
    """An eval-protocol reward function (params.function, module:name) on the row's conversation (the prompt's turns,
    then the completion's), with the answer column as ground_truth and params.columns as keywords: its
    EvaluateResult.score, or None when is_score_valid is false; its valid metrics are counters.
    Needs pip install 'grpo-host[eval-protocol]'."""
    extra = {name: columns[name] for name in params.columns if name in columns and name != "answer"}
    if "answer" in params.columns:
        extra["answer"] = answer
    gold = {} if answer is None else {"ground_truth": answer if params.ground_truth == "text" else [
        {"role": "assistant", "content": answer if isinstance(answer, str) else str(answer)}]}
    result = params._fn(messages=_messages(prompt, rollout), **gold, **extra)
    if inspect.isawaitable(result):
        result = asyncio.run(_finished(result))
    score = _field(result, "score")
    if isinstance(score, bool) or not isinstance(score, int | float):
        raise TypeError(f"{params.function} returned {type(result).__name__} with score {score!r}, not an "
                        "EvaluateResult")
    if _field(result, "is_score_valid", True) is False:
        return Scored(None, {"invalid": 1.0})
    counts = {}
    for name, metric in (_field(result, "metrics") or {}).items():
        value = _field(metric, "score")
        if _field(metric, "is_score_valid", True) is not False and isinstance(value, int | float) \
                and math.isfinite(value):
            counts[str(name)] = float(value)
    return Scored(float(score), counts)


async def _finished(awaitable: Any) -> Any:
    return await awaitable


@hookimpl
def register_rewards(register):
    register(eval_protocol)
