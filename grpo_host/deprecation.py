"""What stays for one release after a rename: the old name still works, warns, and names the new one.

A :class:`DeprecationWarning` (shown under pytest and ``python -W``, hidden by
default elsewhere) is all a caller of an old name sees; the value is the new
name's.  Like :mod:`grpo_host.errors` this module imports nothing of
grpo-host, so every layer (the scoring core included) may use it.
"""

from __future__ import annotations

import warnings
from typing import Any

__all__ = ["deprecated", "renamed"]


def deprecated(old: str, new: str, *, stacklevel: int = 3) -> None:
    """Warn that ``old`` goes in the next release and ``new`` replaces it."""
    warnings.warn(f"{old} is deprecated and goes in the next release; use {new}", DeprecationWarning,
                  stacklevel=stacklevel)


class renamed:  # noqa: N801  (used like a decorator-made attribute: ``plugin = renamed("pack")``)
    """A read-only class attribute kept for one release after its rename: reading it warns and returns the new
    attribute's value (an unannotated class attribute, so a dataclass does not take it for a field)."""

    def __init__(self, new: str) -> None:
        self.new = new

    def __set_name__(self, owner: type, name: str) -> None:
        self.old, self.owner = name, owner.__name__

    def __get__(self, obj: Any, objtype: type | None = None) -> Any:
        if obj is None:
            return self
        deprecated(f"{self.owner}.{self.old}", f"{self.owner}.{self.new}")
        return getattr(obj, self.new)
