"""Moved to :mod:`grpo_host.discovery.hookspecs`; this name stays for one release so existing imports keep working."""

import sys

from .discovery import hookspecs as _moved

sys.modules[__name__] = _moved
