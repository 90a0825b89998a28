"""Adapters that let other trainers and frameworks call grpo-host rewards the way they call their own.

* :mod:`grpo_host.integrations.verl`: ``compute_score`` for verl's
  ``custom_reward_function``.
* :mod:`grpo_host.integrations.verifiers`: verifiers v1 task rewards.
* :mod:`grpo_host.integrations.openenv`: an OpenEnv rubric and a single-step
  environment behind OpenEnv's server.
* :mod:`grpo_host.integrations.eval_protocol`: eval-protocol reward functions.
* :mod:`grpo_host.integrations.atropos`: an Atropos ``RewardFunction``.
* :mod:`grpo_host.integrations.skyrl`: a SkyRL-Gym environment.
* NeMo Gym and OpenRLHF need no module here: they post to a URL, and
  ``grpo-host serve`` answers at ``/verify`` (NeMo Gym's verify protocol,
  :mod:`grpo_host.serving.nemo_gym`) and ``/get_reward``
  (:mod:`grpo_host.serving.endpoints`).

Each turns the framework's sample into a row and scores it through
:mod:`grpo_host.integrations.scorer`, the path ``grpo-host score`` takes.
``docs/frameworks.md`` has an example for each.
"""
