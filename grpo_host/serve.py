"""Moved to :mod:`grpo_host.serving.server`; this name stays for one release so existing imports keep working."""

import sys

from .serving import server as _moved

sys.modules[__name__] = _moved
