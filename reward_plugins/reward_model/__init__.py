"""The ``reward_model`` pack: a trained outcome reward model (sequence classification) scores each whole answer.

* :mod:`~reward_plugins.reward_model.rewards`: the ``reward_model`` reward, its parameters, its row check and the
  per-group normalisation (the entry point; imports neither torch nor transformers).
* :mod:`~reward_plugins.reward_model.scoring`: loading a model once per process and scoring conversations in batches.
"""
