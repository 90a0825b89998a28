"""A third-party pack that uses the helpers a reward needs inside the host's executors, from ``grpo_host`` only.

``budget_answer`` runs in a worker process (``executor="process"``): it
reads the time its item has left, does a one-time set-up under
``uninterrupted()`` that leaves a marker in its own cache folder, and
splits off the reasoning and the trailing end token before comparing the
answer.  Its counters say what it saw, so a test can check each helper
from outside, through ``grpo-host score`` and a training run.
"""

from __future__ import annotations

import os

from grpo_host import (
    Scored,
    cache_dir,
    hookimpl,
    in_worker,
    reward,
    split_reasoning,
    strip_end_tokens,
    time_left,
    uninterrupted,
)

TIMEOUT = 20.0
_ready = False


def _set_up() -> None:
    """The first item's one-time set-up: a marker in this pack's cache folder, written whole."""
    global _ready
    if not _ready:
        with uninterrupted():
            folder = cache_dir() / "grpo-test-worker"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"ready-{os.getpid()}").write_text("ready\n")
            _ready = True


@reward(name="budget_answer", requires={"answer": str}, executor="process", timeout=TIMEOUT)
def budget_answer(completion: str, *, answer: str, **_) -> Scored:
    """1.0 when the answer after the reasoning (end tokens stripped) equals the row's ``answer``; its counters
    say whether it ran in a worker and within its item's time."""
    _set_up()
    left = time_left()
    # time_left(): the wall seconds to the item's backstop, 10 x its (CPU) timeout
    counts = {"in_worker": float(in_worker()), "timed": float(left is not None and TIMEOUT < left <= 10 * TIMEOUT)}
    text = strip_end_tokens(split_reasoning(completion).answer, ("</s>",)).strip()
    return Scored(float(text == answer.strip()), counts=counts)


@hookimpl
def register_rewards(register):
    register.add_reward(budget_answer)
