"""Moved to :mod:`grpo_host.scoring.spec`; this name stays for one release so existing imports keep working."""

import sys

from .scoring import spec as _moved

sys.modules[__name__] = _moved
