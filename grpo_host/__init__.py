"""grpo-host: reward functions as plugins, checked data, weighted ensembles, GRPO on TRL or MLX.

The public API is small and is what the CLI itself uses::

    from grpo_host import reward, hookimpl, list_rewards, get_reward, Ensemble

Importing this package loads no plugin and imports no torch, transformers,
mlx or sympy; plugins are discovered on the first call that needs them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .discovery.build import Ensemble
    from .discovery.hookspecs import hookimpl
    from .discovery.plugins import Plugins, default_plugins, get_reward, list_rewards, load_plugins
    from .errors import RewardError, RewardUnusable
    from .monitoring import monitor
    from .scoring.contract import Reward, Scored, completion_text, reward
    from .scoring.ensemble import Member, ScoreResult
    from .scoring.stats import RewardMetrics

# Every name is imported on first use (PEP 562): a cached ``grpo-host rewards
# list`` runs without pluggy, importlib.metadata or pydantic, and a pack that
# imports ``reward`` does not pay for the ensemble's worker machinery.
_LAZY = {
    "hookimpl": "discovery.hookspecs", "monitor": "monitoring",
    "Plugins": "discovery.plugins", "default_plugins": "discovery.plugins", "load_plugins": "discovery.plugins",
    "list_rewards": "discovery.plugins", "get_reward": "discovery.plugins",
    "Reward": "scoring.contract", "RewardError": "errors", "RewardUnusable": "errors",
    "Scored": "scoring.contract", "completion_text": "scoring.contract", "reward": "scoring.contract",
    "Ensemble": "discovery.build", "Member": "scoring.ensemble", "ScoreResult": "scoring.ensemble",
    "RewardMetrics": "scoring.stats",
}


def __getattr__(name: str):
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            value = version("grpo-host")
        except PackageNotFoundError:  # running from a source tree that was never installed
            value = "0+unknown"
    elif name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    else:
        raise AttributeError(f"module 'grpo_host' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "Ensemble",
    "Member",
    "Plugins",
    "Reward",
    "RewardError",
    "RewardMetrics",
    "RewardUnusable",
    "ScoreResult",
    "Scored",
    "__version__",
    "completion_text",
    "default_plugins",
    "get_reward",
    "hookimpl",
    "list_rewards",
    "load_plugins",
    "monitor",
    "reward",
]

