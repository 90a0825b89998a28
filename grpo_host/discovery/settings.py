"""The environment variables grpo-host reads, each read in one place.

Kept free of heavy imports: the cached ``grpo-host rewards list`` reads
them without importing pluggy.

* ``GRPO_HOST_LOAD_PLUGINS``: unset, every plugin; empty, none; ``a,b``, only these.
* ``GRPO_HOST_DISABLE_PLUGINS``: a block list (entry-point or distribution names).
* ``GRPO_HOST_STRICT_PLUGINS=1``: a plugin that fails to load is an error, not a record.
* ``GRPO_HOST_CACHE``: where built things are kept (the ``builtin:tiny`` model, the reward catalog).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["PLUGIN_SELECTION", "cache_dir", "plugin_names", "strict_plugins"]

PLUGIN_SELECTION = ("GRPO_HOST_LOAD_PLUGINS", "GRPO_HOST_DISABLE_PLUGINS")
"""The variables that choose which plugins load (part of the reward catalog's key)."""


def strict_plugins(env: Mapping[str, str] | None = None) -> bool:
    """``GRPO_HOST_STRICT_PLUGINS`` is set to anything but ``""`` or ``0``."""
    return (os.environ if env is None else env).get("GRPO_HOST_STRICT_PLUGINS", "") not in ("", "0")


def plugin_names(value: str | None) -> set[str] | None:
    """A comma-separated list of plugin names as a set; None for an unset variable (no restriction)."""
    if value is None:
        return None
    return {part.strip() for part in value.split(",") if part.strip()}


def cache_dir() -> Path:
    """Where grpo-host and packs keep what they build or fetch once (a pack uses a folder of its own name in it):
    ``$GRPO_HOST_CACHE``, else ``$XDG_CACHE_HOME/grpo-host``, else ``~/.cache/grpo-host``."""
    if os.environ.get("GRPO_HOST_CACHE"):
        return Path(os.environ["GRPO_HOST_CACHE"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "grpo-host"
