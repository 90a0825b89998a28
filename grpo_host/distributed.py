"""Which process of a multi-process run this is: one summary and one record per run, written by rank 0.

A run launched with ``accelerate launch`` or ``torchrun`` (TRL) sets ``RANK``; one launched with ``mlx.launch``
sets ``MLX_RANK``.  Read here, in one place, by the training flow, the backends, the rollout record and the CLI.
"""

from __future__ import annotations

import os

__all__ = ["is_main_process"]


def is_main_process() -> bool:
    """Rank 0 of ``accelerate launch``/torchrun (``RANK``) or ``mlx.launch`` (``MLX_RANK``), or a plain run."""
    return all(os.environ.get(var, "0") == "0" for var in ("RANK", "MLX_RANK"))
