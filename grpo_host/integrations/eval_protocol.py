"""eval-protocol (reward-kit's successor) reward functions from a grpo-host spec.

eval-protocol calls a pointwise reward function with one conversation,
``fn(messages=[...], ground_truth=..., **row)``, and reads an
``EvaluateResult``.  :func:`reward_function` makes one from a spec, wrapped
in eval-protocol's own ``@reward_function`` (which checks the result's shape)::

    from grpo_host.integrations.eval_protocol import reward_function

    evaluate = reward_function("accuracy:1, r1_strict_format:0.5")
    result = evaluate(messages=[{"role": "user", "content": "2+2?"},
                                {"role": "assistant", "content": "<answer>4</answer>"}], ground_truth="4")

The messages before the first assistant turn are the ``prompt``; that turn
and everything after it (tool calls, tool results, the final answer, its
``reasoning_content``) are the ``completion``, read as a
:class:`grpo_host.Trajectory`.  ``ground_truth`` is the ``answer`` column
(JSON text when it is not a string); the other keyword arguments are columns.
The row is checked and scored as ``grpo-host score`` does it
(:mod:`grpo_host.integrations.scorer`).

The result: ``score`` is the weighted total; each reward is a metric (its
value, ``is_score_valid`` false where it did not apply) with its weight in
``data``.  A row that no reward scored, or that lacks what a reward needs,
has ``is_score_valid`` false, a ``score`` of 0.0 that eval-protocol's
contract requires and that must not be trained on, and the reason (row,
reward, column) in ``reason`` and ``error``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from eval_protocol.models import EvaluateResult, MetricResult
from eval_protocol.typed_interface import reward_function as ep_reward_function

from . import scorer

__all__ = ["reward_function", "row_of"]


def reward_function(spec: str) -> Callable[..., EvaluateResult]:
    """An eval-protocol pointwise reward function ``(messages, ground_truth=None, **row) -> EvaluateResult``."""

    def grpo_host_reward(messages: list[Any], ground_truth: Any = None, **kwargs: Any) -> EvaluateResult:
        line = scorer.score(spec, [("eval-protocol row", row_of(messages, ground_truth, kwargs))])[0]
        if "rewards" not in line:
            error = f"{line['row']}: {line['error']}"
            return EvaluateResult(score=0.0, is_score_valid=False, reason=error, error=error)
        metrics = {name: MetricResult(score=line["rewards"][name] or 0.0,
                                      is_score_valid=line["rewards"][name] is not None,
                                      reason="scored" if line["rewards"][name] is not None else "did not apply",
                                      data={"weight": weight})
                   for name, weight in scorer.weights(spec).items()}
        total = line["total"]
        reason = line.get("error") or ("no reward applied" if total is None else f"grpo-host rewards {spec!r}")
        return EvaluateResult(score=total if total is not None else 0.0, is_score_valid=total is not None,
                              reason=reason, metrics=metrics, error=line.get("error"))

    grpo_host_reward.__doc__ = f"grpo-host rewards {spec!r} as an eval-protocol reward function."
    return ep_reward_function(grpo_host_reward, mode="pointwise")


def row_of(messages: list[Any], ground_truth: Any, columns: Mapping[str, Any]) -> dict[str, Any]:
    """The grpo-host row of one eval-protocol conversation (see the module docstring)."""
    plain = [m.model_dump(exclude_none=True) if hasattr(m, "model_dump") else dict(m) for m in messages]
    first = next((i for i, m in enumerate(plain) if m.get("role") == "assistant"), len(plain))
    row = dict(columns)
    if ground_truth is not None:
        row["answer"] = ground_truth if isinstance(ground_truth, str) else json.dumps(ground_truth, default=str)
    prompt = [{"role": m.get("role"), "content": m.get("content") or ""} for m in plain[:first]]
    row["prompt"] = prompt or None
    row["completion"] = plain[first:]
    return row
