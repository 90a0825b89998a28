"""The parity reward as it should be: 1.0 when the completion is an even integer (rescore's recorded version)."""

from grpo_host import hookimpl, reward


@reward(description="1.0 when the completion is an even integer, 0.0 when odd; None when it is not an integer")
def parity(completion, **_):
    try:
        return float(int(completion.strip()) % 2 == 0)
    except ValueError:
        return None


@hookimpl
def register_rewards(register):
    register.add_reward(parity)
