"""Moved to :mod:`grpo_host.training.builtin_model`; this name stays for one release so existing imports work."""

import sys

from .training import builtin_model as _moved

sys.modules[__name__] = _moved
