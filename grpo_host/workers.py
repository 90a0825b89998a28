"""Moved to :mod:`grpo_host.scoring.executors`; this name stays for one release so existing imports keep working."""

import sys

from .scoring import executors as _moved

sys.modules[__name__] = _moved
