"""The ``prm`` pack: a process reward model scores every reasoning step.

* :mod:`~reward_plugins.prm.rewards`: the ``prm`` reward, its parameters and step aggregation (the entry point).
* :mod:`~reward_plugins.prm.loading`: loading a model once per process, by kind.
* :mod:`~reward_plugins.prm.scoring`: encoding steps in each kind's input format and reading its step scores.
* :mod:`~reward_plugins.prm.tiny_prm`: tiny local PRMs of each kind, for tests and benchmarks.
"""
