"""A pack whose hook raises halfway through registering."""

from grpo_host import hookimpl, reward


@reward
def raising_first(completion, **_):
    return 1.0


@hookimpl
def register_rewards(register):
    register(raising_first)
    raise RuntimeError("this pack's hook is broken")
