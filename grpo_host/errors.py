"""The error a user's input causes, as one type every layer raises, so the CLI tells it from a bug.

``grpo-host`` prints a :class:`UserError` (and the few other named errors in
``cli._errors``: an unknown or doubly registered name, a reward or rollout
that failed, a worker that could not start) as one ``error:`` line and exits 2.
Any other exception is a bug, in grpo-host or in a pack, and keeps its
traceback (exit 1).  The specific user errors subclass it: ``SpecError``,
``ConfigError``, ``DataError``, ``RecordError``, ``OutputError``,
``ScaffoldError``.

It is a :class:`ValueError`, so code that caught the plain ``ValueError``\\ s
these were before still catches them, and pydantic turns one raised in a
validator into a validation error as before.  This module imports nothing:
every layer, the scoring core included, may raise it.
"""

__all__ = ["UserError"]


class UserError(ValueError):
    """Input that cannot work (a spec, a setting, a file, an option); the message says which and why."""
