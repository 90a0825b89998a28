"""Ensembles built from a spec whose names are looked up in the installed plugins: :class:`grpo_host.Ensemble`.

The scoring core's :class:`~grpo_host.scoring.ensemble.Ensemble` resolves a
spec's names only in a registry it is given, so it never imports the plugin
layer.  Finding the installed plugins is this layer's job: the subclass here
is what ``grpo_host.Ensemble`` names, and its :meth:`Ensemble.from_spec`
defaults ``plugins`` to :func:`~grpo_host.discovery.plugins.default_plugins`.
It adds nothing else, so an instance is a scoring-core ensemble in every other
respect (``isinstance`` included).  ``score``, ``train``, ``audit``,
``rescore`` and the testing helpers build theirs with it; ``serve`` passes the
installed plugins to the scoring core's own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..scoring import ensemble as core
from ..scoring.spec import SpecItem
from ..scoring.turns import TurnRule
from .plugins import Plugins, default_plugins

__all__ = ["Ensemble"]


class Ensemble(core.Ensemble):
    """A weighted ensemble of rewards (see :class:`grpo_host.scoring.ensemble.Ensemble`), built from a spec
    against the installed plugins unless ``plugins`` says otherwise."""

    @classmethod
    def from_spec(
        cls,
        spec: str | Sequence[Mapping[str, Any] | str] | Sequence[SpecItem],
        *,
        plugins: Plugins | Any = None,
        strict: bool = False,
        workers: int | None = None,
        pool: str = "local",
        turn_reward: str | TurnRule = "episode",
    ) -> Ensemble:
        """Build an ensemble from a spec string or YAML-style list, looking names up in ``plugins``.

        :param plugins: a :class:`~grpo_host.discovery.plugins.Plugins` (or anything with a
            ``registry``); defaults to the installed plugins.
        The other parameters, and what a bad spec raises, are those of the scoring core's
        :meth:`~grpo_host.scoring.ensemble.Ensemble.from_spec`.
        """
        return super().from_spec(spec, plugins=default_plugins() if plugins is None else plugins,
                                 strict=strict, workers=workers, pool=pool, turn_reward=turn_reward)
