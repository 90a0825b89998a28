"""eval_protocol_import: an eval-protocol ``@reward_function``, named by import path, as the ``eval_protocol``
reward."""
