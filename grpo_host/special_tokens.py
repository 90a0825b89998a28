"""Moved to :mod:`grpo_host.scoring.special_tokens`; this name stays for one release so existing imports keep working."""

import sys

from .scoring import special_tokens as _moved

sys.modules[__name__] = _moved
