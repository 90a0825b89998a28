"""verl's custom reward function: score verl's rows with a grpo-host ensemble.

Point verl's config at this module and say which rewards score which data
source (verl ≥ 0.9; before 0.9 the same keys without the ``reward.``
prefix, see ``docs/scaling.md``)::

    reward.custom_reward_function.path=pkg://grpo_host.integrations.verl
    reward.custom_reward_function.name=compute_score
    +reward.custom_reward_function.reward_kwargs.rewards='math:1, r1_strict_format:0.2'

verl calls it in three ways, and each works:

* **one response per call**, with keywords (``data_source=, solution_str=,
  ground_truth=, extra_info=``): the reward loop's workers (from a thread
  pool, 32 threads at once) and the ``naive`` manager;
* **a batch per call** (``data_sources=, solution_strs=, ground_truths=,
  extra_infos=``): the ``batch`` manager; the reply is a list;
* **positionally** (``data_source, solution_str, ground_truth, extra_info``)
  from a process pool: the ``prime`` manager, which reads a number (it
  indexes anything else with ``[0]``), so that call returns the total.

Calls from many threads are not serialised: each process keeps one
ensemble per spec behind a micro-batcher (:mod:`grpo_host.integrations.scorer`,
shared by every adapter), which gathers the rows of concurrent calls into
micro-batches, so 32 one-row calls cost about what one 32-row batch does.

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
checked like ``grpo-host score`` checks a row.  verl's code datasets carry
their tests in ``ground_truth`` as prime_code JSON (``{"inputs": [...],
"outputs": [...]}``, with ``"fn_name"`` for call-based problems); when a
reward needs ``tests`` and the row has none, those become its ``tests``
(:func:`grpo_host.data.prime_code_tests`).  Trailing EOS/pad strings are stripped from the
response first (``reward_kwargs`` ``tokenizer=`` a path or hub id, or
``end_tokens=`` a list; by default the common ones, see
:mod:`grpo_host.scoring.special_tokens`).

verl needs a number for every response and the same keys from every call,
so the reply is always ``{"score": total, "grpo_host/<reward>": value, ...,
"grpo_host/scored": 1.0}`` over every reward any configured spec names.  A
row no reward scored, or one that lacks what a reward needs, scores 0.0 with
``grpo_host/scored`` 0.0, and its reason is logged (a warning naming the
data source and reward): a bad row never stops a verl run.  A data source no
spec covers raises :class:`~grpo_host.RewardUnusable`: that is a
configuration mistake, and every row of it would score nothing.
"""

from __future__ import annotations

import functools
import json
import logging
import os
from collections.abc import Sequence
from typing import Any

from grpo_host.scoring.spec import parse_spec  # here, not on first call: 32 threads' first calls raced the import
from grpo_host.scoring.special_tokens import strip_end_tokens

from . import scorer

__all__ = ["DATA_SOURCES", "ENV", "compute_score"]

ENV = "GRPO_HOST_VERL_REWARDS"
DATA_SOURCES: dict[str, str] = {}
"""``{data_source: spec}``; ``"*"`` covers any other data source."""

_log = logging.getLogger(__name__)
_tokens: dict[tuple[str | None, tuple[str, ...]], tuple[str, ...]] = {}


def _env_mapping() -> dict[str, str]:
    return _parse_env(os.environ.get(ENV, "").strip())


@functools.lru_cache(maxsize=8)
def _parse_env(raw: str) -> dict[str, str]:
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
        f"no grpo-host rewards for data_source {data_source!r}: set reward.custom_reward_function.reward_kwargs."
        f"rewards, {ENV} (a spec, or JSON {{data_source: spec}}) or grpo_host.integrations.verl.DATA_SOURCES")


def _all_names(rewards: str | None) -> list[str]:
    """Every reward name any configured spec names: the keys each reply carries, whatever its data source."""
    return list(_names(tuple([rewards] if rewards else [*DATA_SOURCES.values(), *_env_mapping().values()])))


@functools.lru_cache(maxsize=64)
def _names(specs: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(item.name for spec in specs for item in parse_spec(spec)))


@functools.lru_cache(maxsize=64)
def _needs_tests(batcher: Any) -> bool:
    """Whether a reward of the batcher's ensemble reads ``tests`` (then prime_code ground truths become tests)."""
    return any("tests" in col.names for r in batcher.owners[0].rewards for col in r.requires)


def _end_tokens(tokenizer: str | None, end_tokens: Any) -> tuple[str, ...]:
    listed = tuple(end_tokens.split(",")) if isinstance(end_tokens, str) else tuple(end_tokens or ())
    key = (tokenizer, listed)
    if key not in _tokens:
        from grpo_host.scoring.special_tokens import end_tokens as find

        try:
            _tokens[key] = find(tokenizer, listed)
        except ValueError as exc:
            raise _unusable(str(exc)) from None
    return _tokens[key]


def _plain(value: Any) -> Any:
    """What JSON cannot write as it is: numpy arrays and scalars (verl's non-tensor batch holds them) as Python
    values, anything else as its text."""
    tolist = getattr(value, "tolist", None)
    return tolist() if callable(tolist) else str(value)


def _row(solution_str: Any, ground_truth: Any, extra_info: Any, tokens: tuple[str, ...], needs_tests: bool) -> dict:
    row: dict[str, Any] = {**(extra_info if isinstance(extra_info, dict) else {}),
                           "completion": strip_end_tokens(solution_str, tokens)}
    if ground_truth is not None:
        row["answer"] = ground_truth if isinstance(ground_truth, str) else json.dumps(ground_truth, default=_plain)
        if needs_tests and row.get("tests") is None:
            from grpo_host.data import prime_code_tests

            tests = prime_code_tests(ground_truth)
            if tests is not None:
                row["tests"] = tests
    return row


def _reply(line: dict[str, Any], data_source: Any, names: list[str]) -> dict[str, float]:
    reply = {"score": 0.0, **{f"grpo_host/{name}": 0.0 for name in names}, "grpo_host/scored": 0.0}
    if "error" in line:
        _log.warning("grpo-host: data_source %r: %s; %s", data_source, line["error"],
                     "this response scores 0.0" if "rewards" not in line else "that reward scores 0.0")
    for name, value in (line.get("rewards") or {}).items():
        reply[f"grpo_host/{name}"] = value if value is not None else 0.0
    if line.get("total") is not None:
        reply["score"], reply["grpo_host/scored"] = line["total"], 1.0
    return reply


def _score(items: list[tuple[Any, Any, Any, Any]], rewards: str | None, tokenizer: str | None,
           end_tokens: Any) -> list[dict[str, float]]:
    """Score ``(data_source, solution_str, ground_truth, extra_info)`` items: one part per spec, all at once."""
    tokens = _end_tokens(tokenizer, end_tokens)
    names = _all_names(rewards)
    by_spec: dict[str, list[int]] = {}
    for i, (data_source, *_) in enumerate(items):
        by_spec.setdefault(_spec_for(data_source, rewards), []).append(i)
    replies: dict[int, dict[str, float]] = {}
    waits = []
    for spec, indices in by_spec.items():
        batcher = scorer.batcher(spec)
        needs_tests = _needs_tests(batcher)
        part = [(f"{items[i][0]} response", _row(items[i][1], items[i][2], items[i][3], tokens, needs_tests))
                for i in indices]
        waits.append((indices, batcher.submit(part)))
    for indices, future in waits:
        for i, line in zip(indices, future.result(), strict=True):  # score_file_rows: one line per row
            replies[i] = _reply(line, items[i][0], names)
    return [replies[i] for i in range(len(items))]  # every index is in one spec's part


def compute_score(*args: Any, data_source: Any = None, solution_str: Any = None, ground_truth: Any = None,
                  extra_info: dict | None = None, data_sources: Sequence[Any] | None = None,
                  solution_strs: Sequence[Any] | None = None, ground_truths: Sequence[Any] | None = None,
                  extra_infos: Sequence[Any] | None = None, rewards: str | None = None, tokenizer: str | None = None,
                  end_tokens: Any = None, **_: Any) -> Any:
    """Score verl responses: one (keywords), a batch (plural keywords), or one positionally (a float for prime).

    :param rewards: a spec for every data source (verl passes it from ``reward_kwargs``).
    :param tokenizer: a path or hub id whose EOS/pad strings are stripped from responses.
    :param end_tokens: strings stripped from the end of responses (a list, or comma-separated).
    Other keyword arguments verl may add (``reward_router_address``) are accepted and unused.
    """
    if solution_strs is not None:  # BatchRewardManager (its lists may be numpy arrays: no truth tests on them)
        n = len(solution_strs)
        columns = [c if c is not None else [None] * n for c in (data_sources, ground_truths, extra_infos)]
        lengths = {"solution_strs": n, **{k: len(c) for k, c in zip(("data_sources", "ground_truths", "extra_infos"),
                                                                     columns, strict=True)}}
        if len(set(lengths.values())) > 1:
            raise ValueError(f"grpo-host verl adapter: a batch call needs one entry per response in each list, got "
                             f"{lengths}")
        items = list(zip(columns[0], solution_strs, columns[1], columns[2], strict=True))  # lengths checked above
        return _score(items, rewards, tokenizer, end_tokens)
    if args:  # PrimeRewardManager: evaluation_func(task, completion, reference, task_extra_info); reads a number
        positional = (list(args) + [None] * 4)[:4]
        return _score([tuple(positional)], rewards, tokenizer, end_tokens)[0]["score"]
    return _score([(data_source, solution_str, ground_truth, extra_info)], rewards, tokenizer, end_tokens)[0]
