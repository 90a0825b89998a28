"""verl's ``custom_reward_function``: score verl's rows with a grpo-host ensemble.

verl calls ``compute_score(data_source=, solution_str=, ground_truth=,
extra_info=)`` once per response, from its reward manager (the naive one,
or the reward loop's workers, which call it on threads of their own).  Point
verl's config at this module and say which rewards score which data source::

    custom_reward_function.path=pkg://grpo_host.integrations.verl
    custom_reward_function.name=compute_score
    +custom_reward_function.reward_kwargs.rewards='math:1, r1_strict_format:0.2'

Where the rewards come from, first match wins:

1. ``rewards=`` (a spec string) passed by verl from ``reward_kwargs``: one
   ensemble for every data source;
2. :data:`DATA_SOURCES`, this module's ``{data_source: spec}`` mapping, for
   code that imports this module and fills it in before training;
3. the ``GRPO_HOST_VERL_REWARDS`` environment variable: a spec for every data
   source, or a JSON object ``{"openai/gsm8k": "math", "*": "accuracy"}``
   mapping data sources (``"*"``: any other) to specs.  An environment
   variable reaches verl's reward workers on every node (Ray's
   ``runtime_env``), which module state does not.

A row becomes ``{"completion": solution_str, "answer": ground_truth,
**extra_info}`` (a ground truth that is not a string is sent as JSON text),
checked like ``grpo-host data check`` checks a row.  verl needs a number for
every response and the same keys from every call, so the reply is always
``{"score": total, "grpo_host/<reward>": value, ..., "grpo_host/scored": 1.0}``
over every reward any configured spec names.  A row no reward scored, or
one that lacks what a reward needs, scores 0.0 with ``grpo_host/scored``
0.0, and its reason is logged (a warning naming the data source and
reward): a bad row never stops a verl run.  A data source no spec covers
raises :class:`~grpo_host.RewardUnusable`: that is a configuration mistake,
and every row of it would score nothing.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from typing import Any

__all__ = ["DATA_SOURCES", "ENV", "compute_score"]

ENV = "GRPO_HOST_VERL_REWARDS"
DATA_SOURCES: dict[str, str] = {}
"""``{data_source: spec}``; ``"*"`` covers any other data source."""

_log = logging.getLogger(__name__)
_lock = threading.Lock()  # an Ensemble serves one caller at a time; verl's reward loop calls from many threads
_ensembles: dict[str, Any] = {}


def _env_mapping() -> dict[str, str]:
    raw = os.environ.get(ENV, "").strip()
    if not raw:
        return {}
    if raw.startswith("{"):
        try:
            mapping = json.loads(raw)
        except ValueError as exc:
            raise _unusable(f"{ENV} is not a JSON object: {exc}") from None
        if not isinstance(mapping, dict) or not all(isinstance(v, str) for v in mapping.values()):
            raise _unusable(f"{ENV} must map data sources to spec strings")
        return mapping
    return {"*": raw}


def _unusable(message: str) -> Exception:
    from grpo_host import RewardUnusable

    return RewardUnusable(message)


def _spec_for(data_source: str, rewards: str | None) -> str:
    if rewards:
        return rewards
    for mapping in (DATA_SOURCES, _env_mapping()):
        spec = mapping.get(data_source) or mapping.get("*")
        if spec:
            return spec
    raise _unusable(
        f"no grpo-host rewards for data_source {data_source!r}: set custom_reward_function.reward_kwargs.rewards, "
        f"{ENV} (a spec, or JSON {{data_source: spec}}) or grpo_host.integrations.verl.DATA_SOURCES")


def _all_names(rewards: str | None) -> list[str]:
    """Every reward name any configured spec names: the keys each reply carries, whatever its data source."""
    from grpo_host.reward_spec import parse_spec

    specs = [rewards] if rewards else [*DATA_SOURCES.values(), *_env_mapping().values()]
    names: list[str] = []
    for spec in specs:
        for item in parse_spec(spec):
            if item.name not in names:
                names.append(item.name)
    return names


def _ensemble(spec: str) -> Any:
    ensemble = _ensembles.get(spec)
    if ensemble is None:
        from grpo_host import Ensemble

        ensemble = _ensembles[spec] = Ensemble.from_spec(spec)
    return ensemble


def compute_score(data_source: str, solution_str: str, ground_truth: Any, extra_info: dict | None = None,
                  rewards: str | None = None, **_: Any) -> dict[str, float]:
    """Score one verl response; see the module docstring for the mapping and the reply's keys.

    :param rewards: a spec for every data source (verl passes it from ``reward_kwargs``).
    Other keyword arguments verl may add (``reward_router_address``) are accepted and unused.
    """
    from grpo_host.data import missing_column

    spec = _spec_for(data_source, rewards)
    row: dict[str, Any] = {**(extra_info or {}), "completion": solution_str}
    if ground_truth is not None:
        row["answer"] = ground_truth if isinstance(ground_truth, str) else json.dumps(ground_truth)
    reply = {"score": 0.0, **{f"grpo_host/{name}": 0.0 for name in _all_names(rewards)}, "grpo_host/scored": 0.0}
    with _lock:
        ensemble = _ensemble(spec)
        problem = missing_column(row, ensemble.rewards)
        if problem:
            _log.warning("grpo-host: data_source %r: %s; this response scores 0.0", data_source, problem)
            return reply
        result = ensemble.score_rows([row], row_ids=[f"{data_source} response"])
    for message in result.errors:
        _log.warning("grpo-host: %s", message)
    for name, values in result.values.items():
        reply[f"grpo_host/{name}"] = values[0] if values[0] is not None else 0.0
    if result.total[0] is not None:
        reply["score"], reply["grpo_host/scored"] = result.total[0], 1.0
    return reply
