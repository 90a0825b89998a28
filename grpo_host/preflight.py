"""Moved to :mod:`grpo_host.training.preflight`; this name stays for one release so existing imports keep working."""

import sys

from .training import preflight as _moved

sys.modules[__name__] = _moved
