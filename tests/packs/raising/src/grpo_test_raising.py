"""A pack whose hook raises halfway through registering, after claiming a name a healthy pack also uses."""

from grpo_host import hookimpl, reward


@reward
def raising_first(completion, **_):
    return 1.0


@reward(name="contains_expected")
def shadow(completion, **_):
    return 0.0


@hookimpl
def register_rewards(register):
    register.add_reward(raising_first)
    register.add_reward(shadow)  # the good pack's name: this failed pack must not take it from it
    raise RuntimeError("this pack's hook is broken")
