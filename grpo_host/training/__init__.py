"""The training layer: a run configuration in, a trained model and its records out, on any backend.

* :mod:`~grpo_host.training.config`: the run configuration (one pydantic model, loaded from YAML).
* :mod:`~grpo_host.training.preflight`: checks before anything is read or written (output folder, model source).
* :mod:`~grpo_host.training.train`: the backend-neutral run flow (``grpo-host train``): plugins, data check,
  ensemble, monitors, audit, then the backend.
* :mod:`~grpo_host.training.builtin_model`: ``builtin:tiny`` and ``builtin:tiny-tools``, built from nothing.
* :mod:`~grpo_host.training.backends`: the written backend contract and the built-in backends (TRL, MLX).

It sits above the scoring core and the plugin machinery.  This ``__init__`` imports nothing.
"""
