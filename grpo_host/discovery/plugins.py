"""Finding and loading plugins: a manager per call, each pack loaded on its own.

``load_plugins()`` is the factory: it builds a fresh pluggy manager, loads
every entry point of the ``grpo_host`` group one at a time (so one broken pack
is recorded, with its distribution and version, and the rest still load),
runs ``check_pending()`` so a misspelled hook is an error, and calls each
plugin's hooks with a registrar bound to it.  Nothing happens at import time;
the CLI and the module-level API share one lazily built default.
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType
from typing import Literal

import pluggy

from ..errors import ConfigError
from ..scoring.contract import Reward
from . import hookspecs
from .registry import Registrar, Registry
from .settings import plugin_names, strict_plugins

__all__ = ["PluginRecord", "Plugins", "default_plugins", "get_reward", "import_plugin", "list_rewards", "load_plugins",
           "plugins_for"]

GROUP = "grpo_host"
DIST = "grpo-host"
HOOKS = tuple(name for name, spec in vars(hookspecs).items() if hasattr(spec, f"{hookspecs.PROJECT}_spec"))
"""The hooks a plugin may implement, read off the hook specs themselves."""


@dataclass
class PluginRecord:
    """One plugin as ``grpo-host plugins list`` shows it."""

    name: str
    dist: str
    version: str
    source: Literal["built-in", "entry point", "direct"]
    status: Literal["loaded", "failed", "disabled"] = "loaded"
    error: str | None = None
    hooks: list[str] = field(default_factory=list)
    rewards: list[str] = field(default_factory=list)
    monitors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def fail(self, exc: BaseException) -> None:
        self.status, self.error = "failed", f"{type(exc).__name__}: {exc}"


@dataclass
class Plugins:
    """A loaded plugin set: what it registered, and per-plugin records."""

    registry: Registry
    records: list[PluginRecord]


def load_plugins(
    *,
    entry_points_group: str | None = GROUP,
    plugins: Iterable[ModuleType | object] = (),
    strict: bool | None = None,
    env: Mapping[str, str] | None = None,
    only: Collection[str] | None = None,
) -> Plugins:
    """Build a plugin manager, load plugins and collect what they register.

    :param entry_points_group: the entry-point group to discover (None: none).
    :param plugins: extra plugin objects (modules) registered directly, as
        tests and embedding applications do.
    :param strict: re-raise the first plugin failure instead of recording it;
        defaults to ``GRPO_HOST_STRICT_PLUGINS=1``.
    :param env: where to read ``GRPO_HOST_LOAD_PLUGINS`` (unset: all; empty:
        none; ``a,b``: only these) and ``GRPO_HOST_DISABLE_PLUGINS`` (a block
        list); both match entry-point or distribution names.
    :param only: entry-point names: no other entry point is looked at (on top of the variables' selection);
        what :func:`plugins_for` passes.
    """
    env = os.environ if env is None else env
    loading = _Loading(strict_plugins(env) if strict is None else strict)
    if entry_points_group:
        loading.discover(entry_points_group, allow=plugin_names(env.get("GRPO_HOST_LOAD_PLUGINS")),
                         block=plugin_names(env.get("GRPO_HOST_DISABLE_PLUGINS")) or set(), only=only)
    loading.add(plugins)
    loading.register()
    return loading.collect()


class _Loading:
    """One load of the plugins: the pluggy manager, a record per plugin, and the one place a plugin's failure is
    recorded on its record (or, when strict, raised)."""

    def __init__(self, strict: bool) -> None:
        self.strict = strict
        self.pm = pluggy.PluginManager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self.records: dict[str, PluginRecord] = {}
        self.candidates: list[tuple[PluginRecord, object]] = []

    def failed(self, record: PluginRecord, exc: BaseException) -> None:
        record.fail(exc)
        if self.strict:
            exc.add_note(f"while loading grpo_host plugin {record.name!r} ({record.dist} {record.version})")
            raise exc

    def discover(self, group: str, *, allow: set[str] | None, block: set[str],
                 only: Collection[str] | None = None) -> None:
        """Import every entry point of ``group`` that the selection lets through, each on its own."""
        for ep in entry_points(group=group):
            if only is not None and ep.name not in only:
                continue
            dist, version = (ep.dist.name, ep.dist.version) if ep.dist else ("?", "?")
            record = PluginRecord(ep.name, dist, version, "built-in" if dist == DIST else "entry point")
            if allow is not None and not {ep.name, dist} & allow:
                continue
            self.records[ep.name] = record
            if {ep.name, dist} & block:
                record.status = "disabled"
                self.pm.set_blocked(ep.name)
                continue
            try:
                self.candidates.append((record, ep.load()))
            except Exception as exc:  # an ImportError, or anything the pack's import raises
                self.failed(record, exc)

    def add(self, plugins: Iterable[ModuleType | object]) -> None:
        """Plugin objects handed over directly (tests, embedding applications)."""
        for obj in plugins:
            name = getattr(obj, "__name__", type(obj).__name__)
            version = str(getattr(obj, "__version__", "0"))
            self.records[name] = record = PluginRecord(name, name, version, "direct")
            self.candidates.append((record, obj))

    def register(self) -> None:
        """Register every candidate with pluggy; one whose hooks do not match the specs fails alone."""
        for record, obj in self.candidates:
            try:
                self.pm.register(obj, name=record.name)
            except Exception as exc:  # PluginValidationError: hookimpl arguments not in the spec
                self.failed(record, exc)
        while True:  # check_pending raises for the first bad plugin; drop it and look again
            try:
                self.pm.check_pending()
                break
            except pluggy.PluginValidationError as exc:
                name = self.pm.get_name(exc.plugin)
                assert name is not None  # the plugin it reports is registered, under its record's name
                self.pm.unregister(exc.plugin)
                self.failed(self.records[name], exc)

    def collect(self) -> Plugins:
        """Call every hook of every loaded plugin with its own registrar, then note on each record what it
        provides: a hook that raises discards everything its pack registered."""
        registry = Registry()
        registrars: dict[str, Registrar] = {}
        for hook in HOOKS:
            for impl in getattr(self.pm.hook, hook).get_hookimpls():
                record = self.records[impl.plugin_name]
                if record.status != "loaded":
                    continue
                record.hooks.append(hook)
                register = registrars.setdefault(
                    record.name, Registrar(registry, record.dist, record.version, owner=record.name))
                try:
                    impl.function(register=register)
                except Exception as exc:
                    registry.discard(record.name)  # a half-registered pack is not used, and claims no name
                    self.failed(record, exc)
        conflicts, usable, watching = registry.conflicts, set(registry.names("reward")), set(registry.names("monitor"))
        for name, register in registrars.items():
            record = self.records[name]
            if record.status == "loaded":
                record.rewards = sorted(n for n in set(register.names) if n in usable)
                record.monitors = sorted(n for n in set(register.names) if n in watching)
                record.warnings = [conflicts[n] for n in dict.fromkeys(register.names) if n in conflicts]
        return Plugins(registry, list(self.records.values()))


@functools.cache
def default_plugins() -> Plugins:
    """The plugin set of this process, loaded on first use from the installed entry points."""
    return load_plugins()


def plugins_for(rewards: Iterable[str], monitors: Iterable[str] | None = None) -> Plugins:
    """The plugins a command that knows its names needs: only those that registered these rewards and monitors
    (None: every monitor), as the stored reward catalog says (:func:`~grpo_host.discovery.catalog.owners_of`).

    A pack that holds none of them is never imported, so neither its import time nor its failure reaches the
    command.  Where the catalog cannot say (it is out of date and the load that rebuilds it is this one, a name
    it does not hold, ``GRPO_HOST_STRICT_PLUGINS``), every plugin loads, as :func:`default_plugins` does, and an
    unknown or doubly claimed name gets the same error as before."""
    from .catalog import owners_of

    needed = owners_of(rewards, monitors)
    if needed is None:
        return default_plugins()
    chosen = _only(frozenset(needed))  # a pack that failed now (after loading when the catalog was stored): all
    return chosen if all(rec.status == "loaded" for rec in chosen.records) else default_plugins()


@functools.cache
def _only(names: frozenset[str]) -> Plugins:
    return load_plugins(only=names)


def plugins_of(specs: Sequence[str]) -> Plugins:
    """The installed packs plus the plugin modules a run config names under ``plugins`` (see :func:`import_plugin`):
    what ``train``, ``eval`` and ``rescore`` score a run with."""
    return load_plugins(plugins=[import_plugin(str(spec)) for spec in specs]) if specs else default_plugins()


def list_rewards(plugins: Plugins | None = None) -> list[Reward]:
    """Every registered reward, sorted by name (from the installed plugins unless ``plugins`` is given)."""
    return list((plugins or default_plugins()).registry)


def get_reward(name: str, plugins: Plugins | None = None) -> Reward:
    """The reward registered as ``name``; raises with the available names when there is none."""
    return (plugins or default_plugins()).registry.reward(name)


def import_plugin(spec: str) -> ModuleType:
    """A plugin module a run config names under ``plugins``: a ``.py`` file (its folder joins ``sys.path``, so worker
    processes can import it too) or a dotted module name."""
    try:
        if spec.endswith(".py") or os.sep in spec:
            path = Path(spec).resolve()
            if not path.is_file():
                raise ConfigError(f"config key 'plugins': no such file {spec!r}")
            if str(path.parent) not in sys.path:
                sys.path.insert(0, str(path.parent))
            return importlib.import_module(path.stem)
        return importlib.import_module(spec)
    except ImportError as exc:
        raise ConfigError(f"config key 'plugins': cannot import {spec!r}: {exc}") from None
    except SyntaxError as exc:
        raise ConfigError(f"config key 'plugins': {exc.filename or spec} line {exc.lineno}: {exc.msg}") from None
    except Exception as exc:  # the module raised while it was imported: the user's code, reported, not a traceback
        raise ConfigError(f"config key 'plugins': importing {spec!r} raised {type(exc).__name__}: {exc}") from None
