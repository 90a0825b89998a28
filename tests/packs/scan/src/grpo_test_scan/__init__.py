"""A pack that finds its rewards by scanning a folder, as packs with many rewards do: a new file is a new reward."""

import importlib
import pkgutil

from grpo_host import hookimpl

from . import rewards


@hookimpl
def register_rewards(register):
    for info in pkgutil.iter_modules(rewards.__path__):
        register(importlib.import_module(f"{rewards.__name__}.{info.name}").REWARD)
