"""Rendering a new reward pack from ``plugin_template/`` (``grpo-host new-plugin``).

The template itself is a copier template.  What lives here is what a template
cannot do well: check the names before anything is written, derive the
distribution, module and reward names in one place, refuse to render over
existing work, and render into a scratch directory first, so that a failure
leaves nothing behind in the target.
"""

from __future__ import annotations

import keyword
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .errors import ScaffoldError

__all__ = ["TEMPLATE", "PackNames", "pack_names", "render_pack"]

TEMPLATE = Path(__file__).resolve().parent.parent / "plugin_template"
"""The template: next to ``grpo_host/`` in a source checkout and in an installed wheel alike."""

# PEP 508 distribution names: letters, digits, and . _ - inside.
_DIST_NAME = re.compile(r"^([A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])$", re.IGNORECASE)
_TAKEN = {"grpo_host", "reward_plugins", "plugin_template", "tests", "test"}
MAX_NAME = 64
"""The longest pack, reward or monitor name: each becomes a folder or file name (255 bytes at most on common file
systems, with suffixes added) and is typed in specs, so a longer one is refused before anything is written."""


@dataclass(frozen=True)
class PackNames:
    """The names of a new pack, all derived from the one the author typed."""

    dist: str
    """Normalised distribution name (PEP 503): what ``pip install`` takes; also the entry-point name."""
    module: str
    """Import name of the pack's package: the distribution name with ``-`` as ``_``."""
    reward: str
    """Name of the example reward, as written in specs; also its function's name."""


def pack_names(name: str, reward: str | None = None) -> PackNames:
    """Check ``name`` (and ``reward``) and derive the pack's names, or raise :class:`ScaffoldError`.

    The distribution name is normalised (``My_Pack`` becomes ``my-pack``) so
    that the entry-point name, the distribution name and what
    ``GRPO_HOST_LOAD_PLUGINS`` matches are one string.  The module name must
    be importable, and must not shadow the standard library or grpo-host.
    The example reward defaults to ``<module>_contains_answer``: reward names
    are global across installed packs, so the default carries the pack's name.
    """
    for what, value in (("pack", name), ("reward", reward)):
        if value is not None and len(value) > MAX_NAME:
            raise ScaffoldError(f"{what} name of {len(value)} characters is too long (at most {MAX_NAME}): "
                                f"{value[:40]!r}...")
    if not _DIST_NAME.match(name):
        raise ScaffoldError(
            f"pack name {name!r} is not a valid distribution name: use letters, digits, '-', '_' or '.', "
            "starting and ending with a letter or digit (e.g. grpo-rewards-chess)"
        )
    dist = re.sub(r"[-_.]+", "-", name).lower()
    module = dist.replace("-", "_")
    if not module.isidentifier() or keyword.iskeyword(module):
        raise ScaffoldError(
            f"pack name {name!r} gives the module name {module!r}, which Python cannot import; "
            "start the name with a letter"
        )
    if module in sys.stdlib_module_names or module in _TAKEN:
        raise ScaffoldError(
            f"pack name {name!r} gives the module name {module!r}, which the standard library or grpo-host "
            "already uses; choose another"
        )
    reward = reward if reward is not None else f"{module}_contains_answer"
    if not reward.isidentifier() or keyword.iskeyword(reward):
        raise ScaffoldError(
            f"reward name {reward!r} must be a Python identifier (letters, digits, '_'; not starting with a digit): "
            "it names the reward in specs and its function"
        )
    return PackNames(dist, module, reward)


def render_pack(
    name: str,
    target: str | Path | None = None,
    *,
    reward: str | None = None,
    monitor: str | None = None,
    environment: str | None = None,
    interactive: bool = False,
    template: Path = TEMPLATE,
) -> Path:
    """Render the template into ``target`` (default ``./<dist name>``) and return its path.

    :param name: the pack's distribution name, e.g. ``grpo-rewards-chess``.
    :param target: the directory to create; it must not exist or be empty.
    :param reward: the example reward's name (see :func:`pack_names`).
    :param monitor: also render an example run monitor of this name (a
        Python identifier), registered through ``register_monitors``.
    :param environment: also render an example tool-calling environment of
        this name (a Python identifier), registered through
        ``register_environments``, with tests that drive it as the host does.
    :param interactive: ask for the description and author (needs a
        terminal); otherwise use the template's defaults.
    :param template: the copier template to render.

    Raises :class:`ScaffoldError` for a bad name, an occupied target or a
    question that cannot be asked, before anything is written.  The pack is rendered into a
    scratch directory and copied into place only once rendering succeeded.
    """
    names = pack_names(name, reward)
    for what, value in (("monitor", monitor), ("environment", environment)):
        if value is not None and len(value) > MAX_NAME:
            raise ScaffoldError(f"{what} name of {len(value)} characters is too long (at most {MAX_NAME})")
        if value is not None and (not value.isidentifier() or keyword.iskeyword(value)):
            raise ScaffoldError(f"{what} name {value!r} must be a Python identifier (letters, digits, '_')")
    target = Path(target if target is not None else names.dist)
    try:
        occupied = target.exists() and (not target.is_dir() or any(target.iterdir()))
    except OSError as exc:  # a name too long for the file system, a folder that cannot be listed
        raise ScaffoldError(f"target {str(target)!r} cannot be used: {exc.strerror or exc}") from None
    if occupied:
        raise ScaffoldError(f"target {str(target)!r} exists and is not an empty directory; choose another with --dir")
    if interactive and not sys.stdin.isatty():
        raise ScaffoldError("cannot ask for the description and author: input is not a terminal; pass --no-input")
    if not (template / "copier.yml").is_file():
        raise ScaffoldError(f"the reward-pack template is missing: no copier.yml in {template}")

    from copier import run_copy  # imported here: copier is only needed to render

    from . import __version__

    data = {
        "dist_name": names.dist,
        "module": names.module,
        "reward_name": names.reward,
        "monitor_name": monitor or "",
        "environment_name": environment or "",
        # its class: `word_guess` -> `WordGuessEnvironment` (the suffix keeps it clear of the module's imports)
        "environment_class": "".join(p[:1].upper() + p[1:] for p in (environment or "").split("_")) + "Environment",
        "grpo_host_version": str(__version__).split("+")[0],  # the lower bound the new pack depends on
    }
    with tempfile.TemporaryDirectory(prefix="grpo-host-new-plugin-") as scratch:
        rendered = Path(scratch) / "pack"
        run_copy(str(template), rendered, data=data, defaults=not interactive, quiet=True, unsafe=False)
        try:
            shutil.copytree(rendered, target, dirs_exist_ok=True)
        except OSError as exc:  # shutil.Error included: an unwritable or full target
            shutil.rmtree(target, ignore_errors=True)
            raise ScaffoldError(f"cannot write the pack into {str(target)!r}: {exc}") from None
    return target
