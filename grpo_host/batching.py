"""Moved to :mod:`grpo_host.serving.batching`; this name stays for one release so existing imports keep working."""

import sys

from .serving import batching as _moved

sys.modules[__name__] = _moved
