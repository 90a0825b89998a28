"""Moved to :mod:`grpo_host.discovery.settings`; this name stays for one release so existing imports keep working."""

import sys

from .discovery import settings as _moved

sys.modules[__name__] = _moved
