"""The plugin machinery: what a plugin may implement, how plugins are found and loaded, what they registered.

* :mod:`~grpo_host.discovery.hookspecs`: the hooks a plugin implements (``register_rewards``, ...).
* :mod:`~grpo_host.discovery.plugins`: finding the entry points of the ``grpo_host`` group and loading each
  on its own (``load_plugins``, ``default_plugins``).
* :mod:`~grpo_host.discovery.registry`: what the plugins registered, each item stamped with its pack.
* :mod:`~grpo_host.discovery.catalog`: the stored listing ``rewards list`` reads without loading a pack.
* :mod:`~grpo_host.discovery.settings`: the environment variables (plugin selection, the cache folder).
* :mod:`~grpo_host.discovery.build`: :class:`grpo_host.Ensemble`, whose ``from_spec`` looks names up in the
  installed plugins (the scoring core only in the registry it is given).

This layer sits above the scoring core (it imports the reward contract; ``grpo_host.scoring`` never
imports it).  This ``__init__`` imports nothing, so the cached listing pays only for ``catalog`` and
``settings``.
"""
