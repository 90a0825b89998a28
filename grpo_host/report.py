"""Moved to :mod:`grpo_host.runs.report`; this name stays for one release so existing imports keep working."""

import sys

from .runs import report as _moved

sys.modules[__name__] = _moved
