"""The error policy: what a reward's failed call does to the run.

Two kinds of failure are told apart.  A reward that raises on one row was
most likely handed a bad row or a hostile completion: under the default
``on_error="auto"`` that row scores None, its error is kept with the row and
counted, and scoring goes on.  A reward that raises on :data:`BUG_STREAK`
rows in a row is broken, not unlucky: training on its silence would waste
the run, so scoring stops there, naming the reward, its pack and the last
error.  ``skip`` always counts and goes on; ``raise`` stops at the first
error.  A reward that raises :class:`~grpo_host.RewardUnusable` cannot score
any row as configured, so it stops scoring whatever its policy.

A reward whose items time out or kill their worker process costs a timeout
(or a new worker) per item, and under ``auto`` such items never stop a run.
Where waiting them out is not worth it (the audit, which probes a reward with
hostile text for minutes), :meth:`Policy.hung` stops calling a reward after
``in_a_row`` of them in a row or ``in_all`` in all: its remaining items are
skipped, uncalled.

Every stop raises :class:`~grpo_host.RewardError` from
:class:`~grpo_host.scoring.calls.RewardCallError`, the same chain from every
executor; the CLI turns it into exit code 2.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from ..errors import RewardError, UserError
from .calls import Failure, Outcome, RewardCallError

__all__ = ["BUG_STREAK", "ON_ERROR", "OnError", "Policy", "check_on_error", "costly"]

OnError = Literal["auto", "raise", "skip"]
ON_ERROR: tuple[str, ...] = get_args(OnError)

BUG_STREAK = 32
"""Consecutive failed rows after which ``on_error="auto"`` stops: a reward failing that often is broken."""


def check_on_error(value: Any, who: str) -> OnError:
    """``value`` if it is a policy, else a ``ValueError`` naming ``who`` and the choices."""
    if value not in ON_ERROR:
        raise UserError(f"{who}: on_error must be one of {', '.join(ON_ERROR)}, not {value!r}")
    return value


class Policy:
    """Applies each member's ``on_error`` to its failures, keeping the streak of failed rows per reward."""

    def __init__(self) -> None:
        self._streaks: dict[str, int] = {}
        self._hangs: dict[str, tuple[int, int]] = {}  # reward -> (in a row, in all)

    def hung(self, name: str, out: Outcome, in_a_row: int, in_all: int) -> bool:
        """Count one of ``name``'s outcomes as it arrives; True once ``in_a_row`` of its items in a row, or
        ``in_all`` in all, timed out or lost their worker (:func:`costly`)."""
        row, total = self._hangs.get(name, (0, 0))
        if costly(out):
            row, total = row + 1, total + 1
        elif out.status != "skipped":
            row = 0
        self._hangs[name] = (row, total)
        return row >= in_a_row or total >= in_all

    def hangs(self, name: str) -> tuple[int, int]:
        """``name``'s items that timed out or lost their worker: (in a row now, in all)."""
        return self._hangs.get(name, (0, 0))

    def succeeded(self, name: str) -> None:
        self._streaks[name] = 0

    def failed(self, member: Any, failure: Failure, where: str) -> str:
        """The message for a row ``member`` failed on; raises when its policy says this failure stops scoring."""
        message = f"reward {member.name!r} ({member.reward.origin}) failed on {where}: {failure}"
        if member.on_error == "raise":
            raise RewardError(message) from RewardCallError(failure)
        streak = self._streaks[member.name] = self._streaks.get(member.name, 0) + 1
        if member.on_error == "auto" and streak >= BUG_STREAK:
            raise RewardError(
                f"reward {member.name!r} ({member.reward.origin}) failed on {BUG_STREAK} rows in a row, so it is "
                f"broken rather than handed bad rows; stopping (set on_error=skip to go on regardless). "
                f"Last error: {message}"
            ) from RewardCallError(failure)
        return message

    @staticmethod
    def unusable(member: Any, failure: Failure) -> RewardError:
        """The error that stops scoring when ``member`` says it cannot run at all (to raise)."""
        error = RewardError(f"reward {member.name!r} ({member.reward.origin}) cannot run: {failure}")
        error.__cause__ = RewardCallError(failure)
        return error


def costly(out: Outcome) -> bool:
    """Whether an item cost a timeout or a worker: it timed out, or its worker process died."""
    return out.timed_out or (out.status == "error" and out.failure.kind == "worker died")
