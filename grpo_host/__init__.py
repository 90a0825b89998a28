"""grpo-host: reward functions as plugins, checked data, weighted ensembles, GRPO on TRL or MLX.

This module is the public API: every name a pack, a script or a test may import from grpo-host, listed in
``__all__`` and pinned by ``tests/test_api.py``.  A pack imports nothing deeper (``tests/test_pack_api.py``
checks the built-in packs and the template); anything else in ``grpo_host`` may move without notice, while
these names change only with a deprecation and a ``CHANGELOG.md`` entry.  ``docs/pack-api.md`` documents them
for pack authors; :mod:`grpo_host.testing` adds the helpers and pytest plugin for a pack's own tests.

Importing this package loads no plugin and imports no torch, transformers, mlx or sympy: every name is imported
on first use (PEP 562), so a cached ``grpo-host rewards list`` runs without pluggy, importlib.metadata or
pydantic, and a pack that imports ``reward`` does not pay for the ensemble's worker machinery.
"""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from .data import check_rows, read_rows
    from .discovery.build import Ensemble
    from .discovery.hookspecs import hookimpl
    from .discovery.plugins import Plugins, default_plugins, get_reward, list_rewards, load_plugins
    from .discovery.settings import cache_dir
    from .errors import (
        AuditFailed,
        ConfigError,
        DataCheckFailed,
        DataError,
        DataRefused,
        DuplicateNameError,
        GrpoHostError,
        MonitorStopped,
        OutputError,
        RecordError,
        Refused,
        RewardError,
        RewardUnusable,
        RolloutError,
        ScaffoldError,
        SpecError,
        Stopped,
        UnknownNameError,
        UnscoredRowsError,
        UserError,
        WorkerError,
    )
    from .kinds.environment import (
        Environment,
        Rollout,
        Session,
        ToolError,
        ToolLimits,
        environment,
        rollout,
    )
    from .kinds.monitor import Alert, Batch, Monitor, Report, monitor
    from .kinds.probe import Probe, Target, probe
    from .scoring.contract import Reward, Scored, reward, score_row
    from .scoring.ensemble import Member, ScoreResult
    from .scoring.special_tokens import COMMON_END_TOKENS, end_tokens, strip_end_tokens
    from .scoring.stats import Moments, RewardMetrics
    from .scoring.trajectory import (
        Parts,
        ToolCall,
        Trajectory,
        answer_blocks,
        completion_text,
        fenced_blocks,
        split_reasoning,
    )
    from .scoring.worker import in_worker, time_left, uninterrupted
    from .training.backends.contract import TrainingBackend
    from .training.train import Job, Summary

_LAZY = {
    # declaring what a pack adds
    **dict.fromkeys(["Reward", "Scored", "reward", "score_row"], "scoring.contract"),
    "hookimpl": "discovery.hookspecs",
    **dict.fromkeys(["Alert", "Batch", "Monitor", "Report", "monitor"], "kinds.monitor"),
    **dict.fromkeys(["Environment", "Rollout", "Session", "ToolError", "ToolLimits", "environment", "rollout"],
                    "kinds.environment"),
    **dict.fromkeys(["Probe", "Target", "probe"], "kinds.probe"),
    "TrainingBackend": "training.backends.contract",
    **dict.fromkeys(["Job", "Summary"], "training.train"),
    # reading a completion
    **dict.fromkeys(["Parts", "ToolCall", "Trajectory", "answer_blocks", "completion_text", "fenced_blocks",
                     "split_reasoning"],
                    "scoring.trajectory"),
    **dict.fromkeys(["COMMON_END_TOKENS", "end_tokens", "strip_end_tokens"], "scoring.special_tokens"),
    # inside the host's executors
    **dict.fromkeys(["in_worker", "time_left", "uninterrupted"], "scoring.worker"),
    "cache_dir": "discovery.settings",
    # using rewards from a script
    **dict.fromkeys(["Plugins", "default_plugins", "get_reward", "list_rewards", "load_plugins"], "discovery.plugins"),
    "Ensemble": "discovery.build",
    **dict.fromkeys(["Member", "ScoreResult"], "scoring.ensemble"),
    **dict.fromkeys(["Moments", "RewardMetrics"], "scoring.stats"),
    **dict.fromkeys(["check_rows", "read_rows"], "data"),
    # errors
    **dict.fromkeys(["AuditFailed", "ConfigError", "DataCheckFailed", "DataError", "DataRefused",
                     "DuplicateNameError", "GrpoHostError", "MonitorStopped", "OutputError", "RecordError", "Refused",
                     "RewardError", "RewardUnusable", "RolloutError", "ScaffoldError", "SpecError", "Stopped",
                     "UnknownNameError", "UnscoredRowsError", "UserError", "WorkerError"], "errors"),
}

__all__ = [
    "Alert", "AuditFailed", "Batch", "COMMON_END_TOKENS", "ConfigError", "DataCheckFailed", "DataError",
    "DataRefused", "DuplicateNameError", "Ensemble", "Environment", "GrpoHostError", "Job", "Member", "Moments",
    "Monitor", "MonitorStopped", "OutputError", "Parts", "Plugins", "Probe", "RecordError", "Refused", "Report",
    "Reward", "RewardError", "RewardMetrics", "RewardUnusable", "Rollout", "RolloutError", "ScaffoldError",
    "ScoreResult", "Scored", "Session", "SpecError", "Stopped", "Summary", "Target", "ToolCall", "ToolError",
    "ToolLimits", "TrainingBackend", "Trajectory", "UnknownNameError", "UnscoredRowsError", "UserError",
    "WorkerError", "__version__", "answer_blocks", "cache_dir", "check_rows", "completion_text", "default_plugins",
    "end_tokens", "environment", "fenced_blocks", "get_reward", "hookimpl", "in_worker", "list_rewards",
    "load_plugins", "monitor", "probe", "read_rows", "reward", "rollout", "score_row", "split_reasoning",
    "strip_end_tokens", "time_left", "uninterrupted",
]
"""The public API; every name is one of :data:`_LAZY`'s, imported on first use."""


def __getattr__(name: str) -> object:
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            value: object = version("grpo-host")
        except PackageNotFoundError:  # running from a source tree that was never installed
            value = "0+unknown"
    elif name in _LAZY:
        value = getattr(_importlib.import_module(f".{_LAZY[name]}", __name__), name)
    else:
        raise AttributeError(f"module 'grpo_host' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public names only (and the module's own dunders): what ``dir()`` shows is what may be used."""
    return sorted({*(name for name in globals() if name.startswith("__")), *__all__})
