"""Moved to :mod:`grpo_host.scoring.ray_pool`; this name stays for one release so existing imports keep working."""

import sys

from .scoring import ray_pool as _moved

sys.modules[__name__] = _moved
