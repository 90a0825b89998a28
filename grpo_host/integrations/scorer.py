"""One ensemble per spec and process, behind a micro-batcher: the scoring every adapter shares.

Other frameworks call a reward once per sample, from many threads or
coroutines at once (verl's reward loop, verifiers' and OpenEnv's rollouts,
eval-protocol's evaluators).  Each adapter turns the peer's sample into a
row and hands it here; the row takes the path ``grpo-host score`` takes
(:func:`grpo_host.batches.score_file_rows`: the row's columns checked
against every reward's ``requires`` before any reward is called, then
scored), so an adapter and ``grpo-host score`` give the same values for the
same rows.  Concurrent callers' rows are gathered into micro-batches by a
:class:`~grpo_host.serving.batching.MicroBatcher`: 32 one-row calls cost
about what one 32-row batch does.

A result is ``grpo-host score``'s line for the row: ``{"row", "rewards",
"total"}`` (``total`` None when no reward applied, ``rewards[name]`` None
where that reward did not), plus ``"error"`` naming the row and the reward
that failed; a row that lacks what a reward needs is ``{"row", "error"}``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

__all__ = ["ascore", "batcher", "ensemble", "score", "weights"]

Row = tuple[str, dict[str, Any]]
"""``(where, row)``: the label errors name, and the row as a dataset holds it."""

_locks: dict[int, threading.Lock] = {}  # per process: guards the creation of batchers only, never scoring
_batchers: dict[tuple[int, str], Any] = {}  # per process: a forked child builds its own


def _score_parts(ensemble: Any, parts: list[Sequence[Row]]) -> list[list[dict[str, Any]]]:
    """One micro-batch of the callers' rows through ``grpo-host score``'s row checks and scoring."""
    from grpo_host.batches import score_file_rows
    from grpo_host.scoring.stats import Tally

    rows = [row for part in parts for row in part]
    lines = list(score_file_rows(rows, ensemble, Tally(ensemble.names), batch_size=max(len(rows), 1)))
    out, start = [], 0
    for part in parts:
        out.append(lines[start:start + len(part)])
        start += len(part)
    return out


def batcher(spec: str) -> Any:
    """This process's batcher for ``spec``: keyed by pid, since a forked child inherits the dict but not the threads.

    A bad spec raises here, on the first call, naming what is wrong with it.
    """
    key = (os.getpid(), spec)
    found = _batchers.get(key)
    if found is None:
        with _locks.setdefault(key[0], threading.Lock()):
            found = _batchers.get(key)
            if found is None:
                from grpo_host import Ensemble
                from grpo_host.serving.batching import MicroBatcher

                found = _batchers[key] = MicroBatcher([Ensemble.from_spec(spec, workers=_pool_workers())],
                                                      _score_parts, name="grpo-host-adapter")
    return found


def _pool_workers() -> int | None:
    """Worker processes for this process's ensemble: the default (one per core) in a trainer's own processes, one
    in a child of a process pool.  verl's ``prime`` manager calls its function in a pool of 64 processes; each built
    an ensemble with a worker per core (64 x cores processes: load 50 on 2 cores, and orphaned workers when prime
    terminates its pool)."""
    import multiprocessing

    return 1 if multiprocessing.parent_process() is not None else None


def score(spec: str, rows: Sequence[Row]) -> list[dict[str, Any]]:
    """``rows`` scored by ``spec``'s ensemble: one result line per row, in order (blocks the calling thread)."""
    return batcher(spec).submit(rows).result()


async def ascore(spec: str, rows: Sequence[Row]) -> list[dict[str, Any]]:
    """:func:`score` for a coroutine: the rows are scored on the batcher's thread, never on the event loop."""
    return await batcher(spec).submit_async(rows)


def ensemble(spec: str) -> Any:
    """The :class:`grpo_host.Ensemble` that scores ``spec`` in this process (for its rewards, names and weights)."""
    return batcher(spec).owners[0]


def weights(spec: str) -> dict[str, float]:
    """Each reward of ``spec`` with its weight, in the spec's order."""
    return {m.name: m.weight for m in ensemble(spec).members}
