"""``report_to: [trackio]`` on the MLX backend: the run's records into trackio, a local tracker with no account.

TRL reports to trackio itself (transformers' ``TrackioCallback``); mlx-lm's
``get_reporting_callbacks`` knows only wandb and swanlab.  This is the
tracker-callback shape mlx-lm gives those (``on_train_loss_report`` and
``on_val_loss_report``, each a record with its ``iteration``), so the MLX
backend forwards trackio the same records it writes to ``metrics.jsonl``,
under the same (TRL's) names and global steps.  trackio keeps them in a
local SQLite database (``TRACKIO_DIR``, default under the Hugging Face
cache); ``trackio show --project grpo-host`` opens the dashboard.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...errors import ConfigError

__all__ = ["Trackers", "TrackioReports"]


class TrackioReports:
    """One trackio run for one training run, fed mlx-lm tracker-callback records."""

    def __init__(self, project: str, name: str, config: Mapping[str, Any]) -> None:
        try:
            import trackio
        except ImportError:
            raise ConfigError("config key 'report_to': trackio is not installed (pip install trackio)") from None
        self._trackio = trackio
        trackio.init(project=project, name=name, config=dict(config), embed=False, auto_log_cpu=False,
                     auto_log_gpu=False)

    def on_train_loss_report(self, info: Mapping[str, Any]) -> None:
        step = info.get("iteration")
        self._trackio.log({k: v for k, v in info.items() if k != "iteration"}, step=step)

    on_val_loss_report = on_train_loss_report

    def finish(self) -> None:
        self._trackio.finish()


class Trackers:
    """Several tracker callbacks as one (mlx-lm's for wandb and swanlab, ours for trackio)."""

    def __init__(self, callbacks: Sequence[Any]) -> None:
        self.callbacks = [c for c in callbacks if c is not None]

    def on_train_loss_report(self, info: Mapping[str, Any]) -> None:
        for callback in self.callbacks:
            callback.on_train_loss_report(info)

    def on_val_loss_report(self, info: Mapping[str, Any]) -> None:
        for callback in self.callbacks:
            callback.on_val_loss_report(info)

    def finish(self) -> None:
        for callback in self.callbacks:
            if callable(getattr(callback, "finish", None)):
                callback.finish()
