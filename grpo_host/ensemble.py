"""Moved to :mod:`grpo_host.scoring.ensemble`; this name stays for one release so existing imports keep working."""

import sys

from .scoring import ensemble as _moved

sys.modules[__name__] = _moved
