"""What plugins registered, and which plugin registered it.

The registrar handed to each hook is bound to one plugin, so every reward,
backend, monitor, probe, environment and importer is stamped with the pack (the
distribution: name, version) it came from.  It has one method per kind of
thing (``add_reward``, ``add_backend``, ``add_monitor``, ``add_probe``,
``add_environment``, ``add_rollout``, ``add_importer``), as tox's registrar does, so a hook
says what it adds.

The registry keeps every *claim* on a name rather than a winner: a name
claimed by one plugin resolves to it; a name claimed by two is a conflict
naming both packs (neither wins by load order), and every other reward of
both packs keeps working.  Because claims are kept per plugin,
:meth:`Registry.discard` can take back everything a pack registered, name
claims included, when its hook fails halfway: a broken pack leaves no trace.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import DuplicateNameError, UnknownNameError
from ..kinds.environment import Environment, Rollout
from ..kinds.monitor import Monitor
from ..kinds.probe import Probe
from ..scoring.contract import Reward

__all__ = ["Backend", "Importer", "Registrar", "Registry"]


@dataclass(frozen=True)
class Backend:
    """A training backend (an engine that runs GRPO: TRL, MLX, ...): ``run(job)`` trains and returns a summary.

    ``validate(config)``, when given, is called before any data is read or
    model loaded, so settings the engine cannot honour fail at once.
    """

    name: str
    run: Callable[[Any], Any]
    pack: str
    version: str
    validate: Callable[[Any], None] | None = None


@dataclass(frozen=True)
class Importer:
    """A problem-folder format ``grpo-host data import`` reads: ``read(folder) -> row`` (a dict of JSON values).

    ``read`` raises :class:`grpo_host.DataError` naming the folder and the file for a folder it cannot read or
    whose problem the pack's reward cannot judge.
    """

    name: str
    read: Callable[[Any], dict[str, Any]]
    description: str
    pack: str
    version: str


_KINDS = {"reward": "reward", "backend": "training backend", "monitor": "monitor", "probe": "audit probe",
          "environment": "environment", "rollout": "rollout", "importer": "importer"}


@dataclass
class Registry:
    """Everything the plugins registered, by kind and name, from every plugin's claims."""

    _claims: dict[str, dict[str, list[tuple[str, Any]]]] = field(
        default_factory=lambda: {k: {} for k in _KINDS})

    def add(self, kind: str, name: str, item: Any, owner: str) -> None:
        """Record ``owner``'s (a plugin's) claim on ``name``; only :class:`Registrar` calls this."""
        self._claims[kind].setdefault(name, []).append((owner, item))

    def discard(self, owner: str) -> None:
        """Forget every claim the plugin ``owner`` made: a pack that failed while loading leaves no trace."""
        for table in self._claims.values():
            for name in list(table):
                table[name] = [claim for claim in table[name] if claim[0] != owner]
                if not table[name]:
                    del table[name]

    def reward(self, name: str) -> Reward:
        return self._get("reward", name)

    def backend(self, name: str) -> Backend:
        return self._get("backend", name)

    def monitor(self, name: str) -> Monitor:
        return self._get("monitor", name)

    def environment(self, name: str) -> Environment:
        return self._get("environment", name)

    def rollout(self, name: str) -> Rollout:
        return self._get("rollout", name)

    def probe(self, name: str) -> Probe:
        return self._get("probe", name)

    def importer(self, name: str) -> Importer:
        return self._get("importer", name)

    def _get(self, kind: str, name: str) -> Any:
        claims = self._claims[kind].get(name)
        if not claims:
            available = ", ".join(sorted(self.names(kind))) or "none (no plugin loaded)"
            raise UnknownNameError(f"unknown {_KINDS[kind]} {name!r}; available: {available}")
        if len(claims) > 1:
            raise DuplicateNameError(_conflict(name, claims))
        return claims[0][1]

    def owners(self, kind: str) -> dict[str, str]:
        """Each name that resolves, with the plugin that claimed it: what the reward catalog keeps, so that a
        command that knows its names loads only the plugins that hold them."""
        return {name: claims[0][0] for name, claims in self._claims[kind].items() if len(claims) == 1}

    def names(self, kind: str = "reward") -> list[str]:
        """Names that resolve (claimed by exactly one plugin), sorted."""
        return sorted(name for name, claims in self._claims[kind].items() if len(claims) == 1)

    @property
    def conflicts(self) -> dict[str, str]:
        """Each name more than one plugin claimed, with the message that names them all."""
        return {name: _conflict(name, claims) for table in self._claims.values()
                for name, claims in table.items() if len(claims) > 1}

    def __iter__(self) -> Iterator[Reward]:
        """The usable rewards, sorted by name."""
        return iter([self.reward(name) for name in self.names("reward")])


def _conflict(name: str, claims: list[tuple[str, Any]]) -> str:
    packs = " and ".join(f"{item.pack} {item.version}" for _, item in claims)
    return f"name {name!r} is registered by two packs: {packs}; uninstall or disable one (GRPO_HOST_DISABLE_PLUGINS)"


@dataclass
class Registrar:
    """The ``register`` object handed to one plugin's hooks, with one method per kind of thing.

    ``register(reward)`` is short for ``register.add_reward(reward)``, the
    common case of a reward pack.  ``pack`` and ``version`` are the
    distribution's, stamped on everything registered; ``owner`` is the
    plugin's own name (its entry point: one pack may have several); ``names``
    keeps every name this plugin asked for, to attribute conflicts.
    """

    registry: Registry
    pack: str
    version: str
    owner: str = ""
    names: list[str] = field(default_factory=list)

    def add_reward(self, reward: Reward) -> None:
        """Register a :class:`grpo_host.Reward` (made with :func:`grpo_host.reward`) under its name."""
        if not isinstance(reward, Reward):
            raise TypeError(f"add_reward() takes a grpo_host.Reward (made with @reward), got {type(reward).__name__}")
        self._add("reward", reward.name, replace(reward, pack=self.pack, version=self.version))

    __call__ = add_reward

    def add_backend(self, name: str, run: Callable[[Any], Any], validate: Callable[[Any], None] | None = None
                    ) -> None:
        """Register a training backend: ``run(job) -> Summary``, and ``validate(config)`` run before any data is
        read."""
        if not isinstance(name, str) or not name or not callable(run):
            raise TypeError("add_backend() takes a name and a callable run(job)")
        if validate is not None and not callable(validate):
            raise TypeError("add_backend(validate=...) takes a callable validate(config)")
        self._add("backend", name, Backend(name, run, self.pack, self.version, validate))

    def add_monitor(self, monitor: Monitor) -> None:
        """Register a :class:`grpo_host.kinds.monitor.Monitor` (a class declared with :func:`grpo_host.monitor`)."""
        if not isinstance(monitor, Monitor):
            raise TypeError(f"add_monitor() takes a monitor made with @monitor, got {type(monitor).__name__}")
        self._add("monitor", monitor.name, replace(monitor, pack=self.pack, version=self.version))

    def add_probe(self, probe: Probe) -> None:
        """Register a :class:`grpo_host.audit.Probe` (made with :func:`grpo_host.audit.probe`) for
        ``grpo-host audit``."""
        if not isinstance(probe, Probe):
            raise TypeError(f"add_probe() takes a probe made with @probe, got {type(probe).__name__}")
        self._add("probe", probe.name, replace(probe, pack=self.pack, version=self.version))

    def add_environment(self, environment: Environment) -> None:
        """Register a :class:`grpo_host.kinds.environment.Environment` (a class declared with
        :func:`grpo_host.kinds.environment.environment`) under its name."""
        if not isinstance(environment, Environment):
            raise TypeError(f"add_environment() takes an environment made with @environment, "
                            f"got {type(environment).__name__}")
        self._add("environment", environment.name, replace(environment, pack=self.pack, version=self.version))

    def add_rollout(self, rollout: Rollout) -> None:
        """Register a :class:`grpo_host.kinds.environment.Rollout` (a function declared with
        :func:`grpo_host.kinds.environment.rollout`: TRL's ``rollout_func`` from an external agent framework)."""
        if not isinstance(rollout, Rollout):
            raise TypeError(f"add_rollout() takes a function made with @rollout, got {type(rollout).__name__}")
        self._add("rollout", rollout.name, replace(rollout, pack=self.pack, version=self.version))

    def add_importer(self, name: str, read: Callable[[Any], dict[str, Any]], description: str = "") -> None:
        """Register a problem-folder format for ``grpo-host data import``: ``read(folder) -> row``."""
        if not isinstance(name, str) or not name or not callable(read) or not isinstance(description, str):
            raise TypeError("add_importer() takes a name, a callable read(folder) and a description")
        self._add("importer", name, Importer(name, read, description, self.pack, self.version))

    def _add(self, kind: str, name: str, item: Any) -> None:
        self.names.append(name)
        self.registry.add(kind, name, item, self.owner or self.pack)
