"""The built-in reward packs of grpo-host.

Each pack is a package laid out as ``grpo-host new-plugin`` lays one out
(``rewards.py``, and ``probes.py``, ``monitors.py`` or ``environments.py``
as needed), registered through grpo-host's own
``[project.entry-points.grpo_host]``, exactly like a third-party pack, so the
built-ins can be listed, blocked (``GRPO_HOST_DISABLE_PLUGINS``) and versioned
the same way.  Heavy imports (sympy, transformers) stay inside functions:
listing plugins must stay fast.

The packs (entry point: module):

* ``r1``: ``r1.rewards``, the answer and format rewards of R1-style recipes;
* ``shaping``: ``shaping.rewards``, overlong, repetition, cosine and length;
* ``math``: ``math.rewards``, answer equivalence (``find``, ``read``, ``compare``);
* ``code``: ``code.rewards``, the completion's Python against the row's tests, sandboxed;
* ``python_tool``: ``code.environments``, the ``python`` environment: a Python tool run in the code pack's sandbox
  with the code reward's limits, a second entry point of the same pack (so it can be blocked on its own);
* ``contest``: ``contest.rewards``, competitive-programming judging, sandboxed;
* ``json_schema``: ``json_schema.rewards``, JSON against the row's schema, with its ``probes``;
* ``tool_calls``: ``tool_calls.rewards``, a rollout's tool calls against the row's tools;
* ``ifeval``: ``ifeval.rewards``, IFEval's verifiable instructions;
* ``language``: ``language.rewards``, the share written in the expected language;
* ``prm``: ``prm.rewards``, a process reward model over the reasoning steps;
* ``judge``: ``judge.rewards``, an LLM judge over an OpenAI-compatible server;
* ``remote``: ``remote.rewards``, a member scored by a ``grpo-host serve`` elsewhere;
* ``monitors``: ``monitors.monitors``, the built-in run monitors.
* ``reasoning_tasks``: ``reasoning_tasks.rewards``, reasoning-gym's tasks scored by their own checks;
* ``eval_protocol_import``: ``eval_protocol_import.rewards``, an eval-protocol ``@reward_function`` named by
  import path, as the ``eval_protocol`` reward;
* ``openenv_client``: ``openenv_client.environments``, the ``openenv`` environment: any OpenEnv server, stepped
  through openenv-core's own client.

Packs import only ``grpo_host`` and, for what they share, the shared
packages, which have public names only and no pack of their own:
``sandbox`` (the sandbox machinery of ``code`` and ``contest``) and
``schemas`` (the JSON Schema compiler of ``json_schema`` and ``tool_calls``).
``tests/test_pack_privacy.py`` holds every pack to that.
"""
