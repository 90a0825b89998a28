"""Moved to :mod:`grpo_host.runs.rescore`; this name stays for one release so existing imports keep working."""

import sys

from .runs import rescore as _moved

sys.modules[__name__] = _moved
