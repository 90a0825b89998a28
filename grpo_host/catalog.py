"""Moved to :mod:`grpo_host.discovery.catalog`; this name stays for one release so existing imports keep working."""

import sys

from .discovery import catalog as _moved

sys.modules[__name__] = _moved
