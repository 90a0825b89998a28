"""Where grpo-host keeps what it builds once and reuses: the ``builtin:tiny`` model and the reward catalog."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_root"]


def cache_root(cache_dir: str | Path | None = None) -> Path:
    """``cache_dir`` if given, else ``$GRPO_HOST_CACHE``, else ``$XDG_CACHE_HOME/grpo-host``, else ``~/.cache/grpo-host``."""
    if cache_dir is not None:
        return Path(cache_dir)
    if os.environ.get("GRPO_HOST_CACHE"):
        return Path(os.environ["GRPO_HOST_CACHE"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "grpo-host"
