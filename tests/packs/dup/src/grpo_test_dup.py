"""A pack that registers a name the built-in R1 pack already has, and one of its own."""

from grpo_host import hookimpl, reward


@reward(name="accuracy")
def my_accuracy(completion, **_):
    return 1.0


@reward(name="dup_only")
def dup_only(completion, **_):
    return 1.0


@hookimpl
def register_rewards(register):
    register(dup_only)
    register(my_accuracy)
