"""Moved to :mod:`grpo_host.scoring.contract`; this name stays for one release so existing imports keep working."""

import sys

from .scoring import contract as _moved

sys.modules[__name__] = _moved
