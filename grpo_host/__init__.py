"""grpo-host: reward functions as plugins, checked data, weighted ensembles, GRPO on TRL or MLX.

The public API is small and is what the CLI itself uses::

    from grpo_host import reward, hookimpl, list_rewards, get_reward, Ensemble

Importing this package loads no plugin and imports no torch, transformers,
mlx or sympy; plugins are discovered on the first call that needs them.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from typing import TYPE_CHECKING

from .hookspecs import hookimpl
from .plugins import Plugins, default_plugins, load_plugins
from .rewards import Reward, RewardError, completion_text, reward

if TYPE_CHECKING:
    from .ensemble import Ensemble, Member, RewardMetrics, ScoreResult

_LAZY = {"Ensemble", "Member", "RewardMetrics", "ScoreResult"}


def __getattr__(name: str):
    """Import the ensemble (worker processes, spec parsing) on first use, not when a plugin imports us."""
    if name in _LAZY:
        from . import ensemble

        return getattr(ensemble, name)
    raise AttributeError(f"module 'grpo_host' has no attribute {name!r}")

try:
    __version__ = version("grpo-host")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = [
    "Ensemble",
    "Member",
    "Plugins",
    "Reward",
    "RewardError",
    "RewardMetrics",
    "ScoreResult",
    "__version__",
    "completion_text",
    "default_plugins",
    "get_reward",
    "hookimpl",
    "list_rewards",
    "load_plugins",
    "reward",
]


def list_rewards(plugins: Plugins | None = None) -> list[Reward]:
    """Every registered reward, sorted by name (from the installed plugins unless ``plugins`` is given)."""
    return list((plugins or default_plugins()).registry)


def get_reward(name: str, plugins: Plugins | None = None) -> Reward:
    """The reward registered as ``name``; raises with the available names when there is none."""
    return (plugins or default_plugins()).registry.reward(name)
