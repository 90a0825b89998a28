"""Moved to :mod:`grpo_host.training.train`; this name stays for one release so existing imports keep working."""

import sys

from .training import train as _moved

sys.modules[__name__] = _moved
