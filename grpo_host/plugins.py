"""Moved to :mod:`grpo_host.discovery.plugins`; this name stays for one release so existing imports keep working."""

import sys

from .discovery import plugins as _moved

sys.modules[__name__] = _moved
