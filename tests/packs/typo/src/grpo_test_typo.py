"""A pack with a misspelled hook name: check_pending() must catch it."""

from grpo_host import hookimpl, reward


@reward
def typo_reward(completion, **_):
    return 1.0


@hookimpl
def register_reward(register):  # should be register_rewards
    register(typo_reward)
