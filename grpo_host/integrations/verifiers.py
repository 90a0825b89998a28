"""verifiers (v1) reward functions from a grpo-host spec: a task scored by grpo-host rewards in verifiers' own loop.

verifiers names a task's extra rewards by import path in its config
(``[env.taskset.task.rewards.NAME] fn = "module:function"``) and calls each
as ``fn(task=..., trace=...)`` (by parameter name) after a rollout, awaiting
what it returns.  :func:`reward_function` makes such a function from a
spec; assign it in a module of yours and point verifiers at it::

    # my_rewards.py
    from grpo_host.integrations.verifiers import reward_function

    math_and_format = reward_function("math:2, r1_strict_format:0.5")

The rollout becomes a grpo-host row: the final branch's messages up to the
first sampled one are the ``prompt``, the sampled turns and tool results
after it are the ``completion`` (a message list, read as a
:class:`grpo_host.Trajectory`: text rewards see the final answer with its
reasoning, trajectory rewards see the tool calls), and every field a
task's data class adds to verifiers' ``TaskData`` (``answer``, ``tests``,
...) is a column.  The row is checked and scored as ``grpo-host score``
checks and scores it (:mod:`grpo_host.integrations.scorer`: concurrent
rollouts share micro-batches, off the event loop).

What verifiers records, by grpo-host's rules:

* each reward that applied, under its name, as ``weight x value``; verifiers
  adds the plugged function's own weight (1 unless the config says) and sums
  them into ``trace.reward``, which is then grpo-host's total;
* a weight-0 reward (log it, do not train on it) as a metric, not a reward;
* a reward that did not apply (None) is left out, never recorded as 0; a row
  no reward scored returns no keys, which verifiers reads as unscored;
* a reward that failed on the row (the error policy counts it) is left out
  too, with a warning naming the row, the reward and the failure;
* a row that lacks what a reward needs raises an error naming the row, the
  reward and the column: verifiers marks that trace failed
  (``trace.errors``) instead of paying it.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from . import scorer

__all__ = ["reward_function", "row_of"]

_log = logging.getLogger(__name__)


def reward_function(spec: str) -> Callable[..., Awaitable[dict[str, float]]]:
    """A verifiers v1 reward function ``(task, trace) -> dict`` that scores a rollout by ``spec``.

    It asks for no ``runtime``, so verifiers also runs it offline (``vf-replay``).  The spec is parsed, and its
    rewards looked up, on the first call: a mistake there fails that call with the spec's error.
    """

    async def grpo_host_reward(task: Any, trace: Any) -> dict[str, float]:
        where = f"verifiers task {task.id if task.id is not None else task.idx}"
        line = (await scorer.ascore(spec, [(where, row_of(task, trace))]))[0]
        if "rewards" not in line:  # the row could not be scored at all: say why, as a failed trace
            raise ValueError(f"grpo-host: {line['row']}: {line['error']}")
        if "error" in line:  # a reward failed on this row: it is left out, the others count
            _log.warning("grpo-host: %s", line["error"])
        out = {}
        for name, weight in scorer.weights(spec).items():
            value = line["rewards"][name]
            if value is None:
                continue
            if weight == 0:
                trace.record_metric(name, value)
            else:
                out[name] = weight * value
        return out

    grpo_host_reward.__doc__ = f"grpo-host rewards {spec!r} as a verifiers reward function."
    return grpo_host_reward


def row_of(task: Any, trace: Any) -> dict[str, Any]:
    """The grpo-host row of a verifiers rollout: ``prompt``, ``completion`` (messages) and the task's own fields."""
    from verifiers.v1 import TaskData

    branches = trace.branches
    nodes = branches[-1].nodes if branches else []
    first = next((i for i, node in enumerate(nodes) if node.sampled), len(nodes))
    prompt = [{"role": n.message.role, "content": _text(n.message.content)} for n in nodes[:first]]
    row = {name: getattr(task, name) for name in type(task).model_fields if name not in TaskData.model_fields}
    row.update(task.model_extra or {})
    row["prompt"] = prompt or task.prompt_text or None
    row["completion"] = [n.message.model_dump(mode="json", exclude_none=True) for n in nodes[first:]]
    return row


def _text(content: Any) -> str:
    """A prompt message's content as text (its text parts joined), as grpo-host's prompts hold it."""
    if isinstance(content, str):
        return content
    return "\n".join(part.text for part in content or [] if getattr(part, "type", None) == "text")
