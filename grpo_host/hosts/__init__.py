"""Moved to :mod:`grpo_host.training.backends`; this name stays for one release so existing imports keep working.

A package, so its modules are re-exported too: ``grpo_host.hosts.trl`` is
``grpo_host.training.backends.trl`` itself (one module object, one set of classes), not a second copy.
"""

import importlib
import sys

for _name in ("contract", "mlx", "reward_funcs", "steps", "trackio_reports", "trl"):
    sys.modules[f"{__name__}.{_name}"] = importlib.import_module(f"grpo_host.training.backends.{_name}")
sys.modules[__name__] = importlib.import_module("grpo_host.training.backends")
