"""Adapters that let other trainers call grpo-host rewards the way those trainers call their own.

* :mod:`grpo_host.integrations.verl`: ``compute_score`` for verl's
  ``custom_reward_function``.
* OpenRLHF needs no module here: it posts to a URL, and ``grpo-host serve``
  answers at ``/get_reward`` (see :mod:`grpo_host.serving.endpoints`).
"""
