"""Audit probes: what ``grpo-host audit`` writes in place of a policy's completion, to see what a reward pays.

A probe builds one completion per dataset row.  There are three kinds, because
an audit asks two questions (can the right answer earn full marks? can a wrong
one earn anything?) and answering the first needs the formats the chosen
format rewards ask for:

* ``exploit``: an attack built from what the policy sees (the prompt, and
  dataset-wide facts such as the most common reference), never the row's
  answer: the policy has none.  ``dress=True`` wraps the attack in the format
  the chosen format rewards pay for, so a correctness reward that reads only
  the ``<answer>`` block or the last ``\\boxed{}`` sees it where it looks.
* ``reference``: the row's reference written as the answer part of a
  completion (the ``answer`` column; a code row's canonical solution in a
  fenced block; a schema's own example).  None where the row has none.
* ``format``: a layout (``<think>…</think><answer>…</answer>``, ``\\boxed{}``)
  that wraps a body; the audit picks the layout the chosen rewards pay most.

A probe reads a :class:`Target`.  ``rewards`` names the rewards a probe is
aimed at, or ``columns`` the columns its rewards read (an exploit for code
means nothing to ``math``); with neither, every chosen reward that reads a
dataset column.  Packs ship probes through
the ``register_probes`` hook; the generic ones are in
:mod:`grpo_host.audit.library`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Kind", "Probe", "Target", "probe"]

Kind = Literal["exploit", "reference", "format"]


@dataclass(frozen=True)
class Target:
    """What a probe is given for one row.

    ``prompt`` is the prompt as text (a chat prompt's messages joined);
    ``row`` the normalised row (an exploit reads only what the prompt shows
    of it, such as a schema the prompt states or a function name its tests
    call); ``common`` the most common reference in the audited sample;
    ``body`` the text a ``format`` probe wraps.  ``params`` holds the chosen
    rewards' bound parameters by reward name, so a layout can follow, e.g.,
    a ``reasoning_tag`` setting.
    """

    row: Mapping[str, Any]
    prompt: str = ""
    common: str | None = None
    body: str = ""
    params: Mapping[str, Any] = field(default_factory=dict)

    def param(self, key: str, default: Any = None) -> Any:
        """The first chosen reward's parameter ``key`` (e.g. ``reasoning_tag``), else ``default``."""
        for bound in self.params.values():
            if bound is not None and hasattr(bound, key):
                return getattr(bound, key)
        return default


@dataclass(frozen=True)
class Probe:
    """One probe: ``build(target) -> completion text or None`` (None: nothing to try on this row).

    ``fix`` is the one line the audit prints when this probe pays: what to
    change in the reward.  ``limit``: a costly probe (a flood of text) is
    tried on at most this many of the sampled rows.  ``pack``/``version``
    are stamped by the registrar.
    """

    name: str
    build: Callable[[Target], str | None]
    kind: Kind = "exploit"
    rewards: tuple[str, ...] = ()
    columns: tuple[str, ...] = ()
    dress: bool = False
    fix: str = ""
    limit: int | None = None
    description: str = ""
    pack: str = "grpo-host"
    version: str = ""

    def aims_at(self, reward: Any) -> bool:
        """Whether this probe is meant for ``reward`` (a :class:`~grpo_host.Reward`): named in ``rewards``, or
        reading one of ``columns``; with neither, every reward that reads a dataset column."""
        if self.rewards or self.columns:
            reads = {n for c in reward.requires for n in c.names}
            return reward.name in self.rewards or bool(set(self.columns) & reads)
        return bool(reward.requires)


def probe(name: str | None = None, *, kind: Kind = "exploit", rewards: tuple[str, ...] | list[str] = (),
          columns: tuple[str, ...] | list[str] = (), dress: bool = False, fix: str = "",
          limit: int | None = None) -> Callable[[Callable[[Target], str | None]], Probe]:
    """Declare ``build(target) -> str | None`` as a probe (see the module docstring for the kinds).

    :param name: the name the audit reports; defaults to the function's name.
    :param kind: ``exploit`` (default), ``reference`` or ``format``.
    :param rewards: names of the rewards it is aimed at.
    :param columns: or: it is aimed at every reward reading one of these
        columns (``tests``: every code reward, whoever wrote it).  With
        neither, an exploit is aimed at every reward that reads a column and
        the generic ``answer`` reference at those reading a reference column.
    :param dress: an exploit's text is wrapped in the chosen format layout.
    :param fix: what to change in the reward when this probe pays (one line).
    :param limit: try it on at most this many rows (for a costly probe).
    """
    if kind not in ("exploit", "reference", "format"):
        raise TypeError(f"@probe kind must be exploit, reference or format, not {kind!r}")

    def wrap(fn: Callable[[Target], str | None]) -> Probe:
        if limit is not None and (not isinstance(limit, int) or limit < 1):
            raise TypeError(f"@probe {name or fn.__name__!r}: limit must be a positive number of rows")
        return Probe(name or fn.__name__, fn, kind, tuple(rewards), tuple(columns), dress, fix, limit,
                     inspect.cleandoc(fn.__doc__ or ""))

    return wrap
