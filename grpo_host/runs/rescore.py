"""``grpo-host rescore``: how much of a run was trained on a wrong reward?

A reward pack gets a bug fixed or a new version; the run it scored is
already done.  The rollout record (:mod:`grpo_host.runs.record`) holds every
recorded rollout with what its rewards read (prompt, completion or
trajectory, the row's columns), so this module scores them again with the
rewards as installed now, batch by batch as they were scored (one step's
parts in memory at a time), and counts,
per reward and per step:

- **changed verdicts**: a rollout whose value differs from the recorded one
  (a value where there was none or the reverse counts too; floats equal to
  1e-9 are the same verdict);
- **advantages that changed sign**: the group-normalised advantage
  (:func:`grpo_host.runs.record.advantages`) from the new totals against the
  recorded one, where a rollout without an advantage counts as 0 (TRL gives
  an unscorable completion advantage 0) and ``|a| < 1e-6`` is 0.  A sign
  change is a rollout that was pushed the wrong way (or pushed when it
  should not have been) by the old reward.

A run's own reward modules (its config's ``plugins``) are loaded as the run loaded them, and its
``turn_reward`` makes per-turn rewards' values as in the run; a per-turn reward's verdict changed too where
a turn's value did (its recorded ``turns/<name>``).
Rewards in the spec that the record lacks are scored (their errors counted)
but have nothing to compare against; recorded rewards missing from the spec
are listed as not re-scored.  An environment's own reward (a recorded
``reward/<Session>`` that the record's parts name as one, whatever packs are
installed now; in a record from before parts named them, one of an
environment registered now) cannot be scored again, since it read the
environment's state, which is gone: the new totals add its recorded value,
as the run's totals did, so it moves no advantage.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..discovery.build import Ensemble
from ..discovery.plugins import default_plugins, plugins_of
from ..errors import RecordError
from ..scoring.batch import trained_total
from .record import (
    advantages,
    environment_rewards,
    part_step,
    read_parts,
    record_columns,
    reward_column,
    turns_column,
)

__all__ = ["rescore", "run_plugins", "run_rewards", "run_turn_reward"]

ZERO = 1e-6
"""An advantage this close to 0 has no sign."""

FAILURES = 10
"""Error messages of the re-scored rewards kept in the result (the counts cover them all)."""


def run_rewards(path: str | Path) -> Any:
    """The reward spec a training run was scored with (its ``config.yaml``), for ``rescore`` without ``--rewards``."""
    import yaml

    config = Path(path) / "config.yaml"
    if not config.is_file():
        raise RecordError(f"{path}: no config.yaml to take the rewards from; name them with --rewards")
    try:
        return yaml.safe_load(config.read_text())["rewards"]
    except (yaml.YAMLError, TypeError, KeyError) as exc:
        raise RecordError(f"{config}: cannot read its rewards ({exc}); name them with --rewards") from None


def run_plugins(path: str | Path) -> Any:
    """The plugins a training run loaded (its ``config.yaml`` ``plugins``: reward modules beside the installed
    packs), so its own rewards can be re-scored; None (the installed packs) for anything else."""
    import yaml

    config = Path(path) / "config.yaml"
    if not config.is_file():
        return None
    try:
        specs = (yaml.safe_load(config.read_text()) or {}).get("plugins") or []
    except (yaml.YAMLError, AttributeError):
        return None
    return plugins_of(specs) if specs else None


def run_turn_reward(path: str | Path) -> str:
    """The ``turn_reward`` a training run trained per-turn rewards with (its ``config.yaml``); ``episode`` (the
    default) for a run without one, or anything else."""
    import yaml

    config = Path(path) / "config.yaml"
    try:
        rule = (yaml.safe_load(config.read_text()) or {}).get("turn_reward") if config.is_file() else None
    except (yaml.YAMLError, AttributeError):
        return "episode"
    return rule if isinstance(rule, str) else "episode"


def _sign(value: float | None) -> int:
    return 0 if value is None or not math.isfinite(value) or abs(value) < ZERO else (1 if value > 0 else -1)


def _same(old: float | None, new: float | None) -> bool:
    if old is None or new is None:
        return old is None and new is None
    return math.isclose(old, new, rel_tol=1e-9, abs_tol=1e-9)


def _same_turns(old: Sequence[float | None] | None, new: Sequence[float | None] | None) -> bool:
    if old is None or new is None:
        return old is None and new is None
    return len(old) == len(new) and all(_same(a, b) for a, b in zip(old, new, strict=True))


def _loads(text: Any, what: str, where: str) -> Any:
    try:
        return json.loads(text) if isinstance(text, str) else text
    except json.JSONDecodeError as exc:
        raise RecordError(f"{where}: its {what} is not JSON text ({exc})") from None


def rescore(path: str | Path, spec: Any, *, plugins: Any = None, workers: int | None = None,
            turn_reward: str = "episode") -> dict[str, Any]:
    """Re-score the record under ``path`` with ``spec``; returns the counts described in the module docstring.

    The result: ``rollouts``, ``rewards`` (per compared reward: ``compared``, ``changed``, ``errors``,
    ``timeouts``: the rollouts it now fails on or times out on), ``new_rewards``, ``not_rescored`` (``environments``:
    those of them that are environments' own rewards, added to the totals as recorded),
    ``advantage_sign_changed``, ``steps`` (per step: ``step``, ``rollouts``, ``changed`` per reward,
    ``advantage_sign_changed``) and ``failures`` (the first :data:`FAILURES` error messages, each naming reward,
    pack and rollout).

    A damaged record (a part that cannot be read, a column of another type, a rollout whose data is not JSON) is
    a :class:`RecordError` naming the part."""
    recorded = {c.removeprefix("reward/") for c in record_columns(path) if c.startswith("reward/")}
    rollouts_read = 0
    failures: list[str] = []
    with Ensemble.from_spec(spec, plugins=plugins, workers=workers, turn_reward=turn_reward) as ensemble:
        compared = [n for n in ensemble.names if n in recorded]
        own = sorted(_environments(path, recorded, plugins) - set(ensemble.names))
        per_reward = {n: {"compared": 0, "changed": 0, "errors": 0, "timeouts": 0} for n in ensemble.names}
        steps: dict[int, dict[str, Any]] = {}
        flips_total = 0
        for (step, _), rollouts in _batches(path):
            rollouts_read += len(rollouts)
            result = _score(ensemble, rollouts)
            totals = trained_total(result.total, {n: [r.get(reward_column(n)) for r in rollouts] for n in own})
            new_adv = advantages(totals, [r["group"] for r in rollouts])
            flips = sum(_sign(r["advantage"]) != _sign(a) for r, a in zip(rollouts, new_adv, strict=True))
            entry = steps.setdefault(step, {"step": step, "rollouts": 0, "changed": dict.fromkeys(compared, 0),
                                            "advantage_sign_changed": 0})
            entry["rollouts"] += len(rollouts)
            entry["advantage_sign_changed"] += flips
            flips_total += flips
            failures += result.errors[: max(0, FAILURES - len(failures))]
            for name in ensemble.names:
                per_reward[name]["errors"] += result.metrics[name].errors
                per_reward[name]["timeouts"] += result.metrics[name].timeouts
            for name in compared:
                turns = result.turns.get(name, [None] * len(rollouts))
                changed = sum(not _same(r.get(reward_column(name)), v) or not _same_turns(r.get(turns_column(name)), t)
                              for r, v, t in zip(rollouts, result.values[name], turns, strict=True))
                per_reward[name]["compared"] += len(rollouts)
                per_reward[name]["changed"] += changed
                entry["changed"][name] += changed
    return {"rollouts": rollouts_read, "rewards": {n: per_reward[n] for n in compared},
            "new_rewards": {n: per_reward[n] for n in ensemble.names if n not in recorded},
            "not_rescored": sorted(recorded - set(ensemble.names)), "environments": own,
            "advantage_sign_changed": flips_total,
            "steps": [steps[s] for s in sorted(steps)], "failures": failures}


def _environments(path: str | Path, recorded: set[str], plugins: Any) -> set[str]:
    """The record's columns of environments' own rewards: what its parts say (:func:`environment_rewards`), so a
    pack changed or uninstalled since does not move them; for a record from before parts said, the recorded
    columns named after a session class of an environment registered now."""
    stated = environment_rewards(path)
    if stated is not None:
        return stated
    registry = (default_plugins() if plugins is None else plugins).registry
    return recorded & {registry.environment(name).session_class().__name__ for name in registry.names("environment")}


def _batches(path: str | Path) -> Iterator[tuple[tuple[int, int], list[dict[str, Any]]]]:
    """The record's batches, ``(step, batch) -> rollouts``, in order, read one step's parts at a time (parts come
    in step order), so memory holds one step, not the record."""
    held: dict[tuple[int, int], list[dict[str, Any]]] = {}
    holding = None
    for part, table in read_parts(path):
        if part_step(part) != holding:
            yield from sorted(held.items())
            held, holding = {}, part_step(part)
        for rollout in table.to_pylist():
            rollout["_part"] = part
            held.setdefault((rollout["step"], rollout["batch"]), []).append(rollout)
    yield from sorted(held.items())


def _score(ensemble: Any, rollouts: Sequence[dict[str, Any]]) -> Any:
    """One recorded batch scored again, each rollout rebuilt as the row its rewards read."""
    rows, completions = [], []
    for r in rollouts:
        where = f"{r['_part']}: a damaged rollout part: the rollout of step {r['step']}, {r['row']}"
        data = _loads(r["data"], "data", where)
        if not isinstance(data, dict):
            raise RecordError(f"{where}: its data is not a JSON object")
        rows.append({**data, "prompt": _loads(r["prompt"], "prompt", where)})
        completions.append(_loads(r["trajectory"], "trajectory", where) if r.get("trajectory") else r["completion"])
    return ensemble.score_rows(rows, completions=completions, row_ids=[f"step {r['step']}, {r['row']}"
                                                                       for r in rollouts])
