"""Moved to :mod:`grpo_host.training.config`; this name stays for one release so existing imports keep working."""

import sys

from .training import config as _moved

sys.modules[__name__] = _moved
