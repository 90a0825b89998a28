"""The built-in ``math`` pack: :mod:`.rewards` (the rule, parameters, the reward), :mod:`.find` (where the answer
is stated), :mod:`.read` (its text as a value), :mod:`.compare` (are two values equal)."""
