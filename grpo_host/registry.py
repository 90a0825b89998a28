"""What plugins registered, and which plugin registered it.

The registrar handed to each hook is bound to one plugin, so every reward
and host is stamped with the distribution (name, version) it came from.  A
name claimed twice is not silently overwritten, and neither claim wins by
load order: the name is marked as a conflict naming both packs, asking for
it raises that error, and every other reward of both packs keeps working.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from .rewards import Reward

__all__ = ["DuplicateNameError", "Registrar", "Registry", "UnknownNameError"]


class DuplicateNameError(Exception):
    """Two plugins registered the same reward (or host) name."""


class UnknownNameError(KeyError):
    """No registered reward (or host) has that name; the message lists the names there are."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


@dataclass(frozen=True)
class Host:
    """A training host: ``run(config)`` trains and returns a summary."""

    name: str
    run: Callable[[Any], Any]
    plugin: str
    version: str


@dataclass
class Registry:
    """Rewards and hosts by name, plus the names more than one plugin claimed."""

    rewards: dict[str, Reward] = field(default_factory=dict)
    hosts: dict[str, Host] = field(default_factory=dict)
    conflicts: dict[str, str] = field(default_factory=dict)

    def reward(self, name: str) -> Reward:
        return self._get(self.rewards, name, "reward")

    def host(self, name: str) -> Host:
        return self._get(self.hosts, name, "training host")

    def _get(self, table: dict, name: str, kind: str):
        if name in self.conflicts:
            raise DuplicateNameError(self.conflicts[name])
        try:
            return table[name]
        except KeyError:
            available = ", ".join(sorted(table)) or "none (no plugin loaded)"
            raise UnknownNameError(f"unknown {kind} {name!r}; available: {available}") from None

    def __iter__(self) -> Iterator[Reward]:
        return iter(sorted(self.rewards.values(), key=lambda r: r.name))


@dataclass
class Registrar:
    """The ``register`` object handed to one plugin's hooks.

    ``register(reward)`` for ``register_rewards``; ``register(name, run)`` for
    ``register_hosts``.  A duplicate name is recorded in ``registry.conflicts``;
    ``names`` keeps every name this plugin asked for, to attribute conflicts.
    """

    registry: Registry
    plugin: str
    version: str
    names: list[str] = field(default_factory=list)

    def __call__(self, item: Reward | str, run: Callable[[Any], Any] | None = None) -> None:
        if isinstance(item, Reward):
            self._add(self.registry.rewards, item.name, replace(item, plugin=self.plugin, version=self.version))
        elif isinstance(item, str) and callable(run):
            self._add(self.registry.hosts, item, Host(item, run, self.plugin, self.version))
        else:
            raise TypeError(
                f"register() takes a grpo_host.Reward (made with @reward) or (name, run) for a host, "
                f"got {type(item).__name__}"
            )

    def _add(self, table: dict, name: str, value: Reward | Host) -> None:
        self.names.append(name)
        if name in table:
            first = table[name]
            msg = (
                f"name {name!r} is registered by two packs: {first.plugin} {first.version} "
                f"and {self.plugin} {self.version}; uninstall or disable one "
                f"(GRPO_HOST_DISABLE_PLUGINS)"
            )
            self.registry.conflicts[name] = msg
            return
        table[name] = value
