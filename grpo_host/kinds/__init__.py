"""What a pack declares besides rewards: run monitors, tool-calling environments and rollouts, audit probes.

* :mod:`~grpo_host.kinds.monitor`: ``@monitor``, ``Monitor``, the ``Batch`` a monitor sees, ``Alert``, ``Report``,
  and ``MonitorSet``, which runs the chosen monitors over every scored batch.
* :mod:`~grpo_host.kinds.environment`: ``@environment``, ``Environment``, ``Session`` (the guarded tool calls of
  one episode), ``ToolLimits``, ``ToolError``, and ``@rollout`` for an external agent framework's rollout.
* :mod:`~grpo_host.kinds.probe`: ``@probe``, ``Probe``, ``Target``: the exploits ``grpo-host audit`` tries.

Each sits just above the scoring core and below the plugin machinery, which registers them; a pack imports them
through :mod:`grpo_host`.  This ``__init__`` imports nothing.
"""
