"""The built-in training backends, registered through the same ``register_backends`` hook a pack uses.

This module is the ``backends`` entry point of grpo-host.  Listing plugins
imports it, so it must stay light: each backend's engine (torch, transformers,
trl; mlx) is imported only when that backend runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...discovery.hookspecs import hookimpl

if TYPE_CHECKING:
    from ..train import Job, Summary


def run_trl(job: Job) -> Summary:
    """Train with ``trl.GRPOTrainer`` (PyTorch); see :mod:`grpo_host.training.backends.trl`."""
    from .trl import run

    return run(job)


def run_mlx(job: Job) -> Summary:
    """Train with mlx-lm-lora's ``train_grpo`` (MLX); see :mod:`grpo_host.training.backends.mlx`."""
    from .mlx import run

    return run(job)


def validate_trl(config) -> None:
    """A base bitsandbytes cannot quantize here fails before data is read; see :func:`.trl.validate`."""
    from .trl import validate

    validate(config)


def validate_mlx(config) -> None:
    """Settings mlx-lm-lora cannot honour fail before any data is read; see :func:`.mlx.validate`."""
    from .mlx import validate

    validate(config)


@hookimpl
def register_backends(register):
    register.add_backend("trl", run_trl, validate=validate_trl)
    register.add_backend("mlx", run_mlx, validate=validate_mlx)
