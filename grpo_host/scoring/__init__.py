"""The scoring core: everything between a reward function and a scored batch, one module per idea.

* :mod:`~grpo_host.scoring.contract`: the reward contract (``@reward``, :class:`~grpo_host.Reward`,
  :class:`~grpo_host.Scored`, the errors a reward may raise).
* :mod:`~grpo_host.scoring.spec`: reward specs (``"math:2, code [timeout=60]"`` and the YAML list).
* :mod:`~grpo_host.scoring.calls`: the one place a reward call's failure is caught and classified.
* :mod:`~grpo_host.scoring.policy`: the error policy (``on_error``: auto, skip, raise; the bug streak).
* :mod:`~grpo_host.scoring.executors`: where items run (inline thread, worker processes, event loop),
  and :mod:`~grpo_host.scoring.ray_pool` on a Ray cluster.
* :mod:`~grpo_host.scoring.stats`: per-reward statistics, their metric names, the tally ``score`` reports.
* :mod:`~grpo_host.scoring.ensemble`: members and weights; ``score() = run, account, total``.
* :mod:`~grpo_host.scoring.batch`: the scored batch, built once per pass, and the sinks every pass feeds.

Nothing here imports the plugin layer, a training engine or an HTTP stack (``tests/test_layers.py``
checks): names in a spec are looked up in the registry the caller passes, and
:class:`grpo_host.Ensemble` (:mod:`grpo_host.discovery.build`) is the one that finds the installed
plugins.  This ``__init__`` imports nothing, so a pack importing ``grpo_host.reward`` pays for the
contract alone.
"""
