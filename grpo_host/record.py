"""Moved to :mod:`grpo_host.runs.record`; this name stays for one release so existing imports keep working."""

import sys

from .runs import record as _moved

sys.modules[__name__] = _moved
