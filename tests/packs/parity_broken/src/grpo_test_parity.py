"""The parity reward as a broken release ships it: it reads the last digit and forgets 8, so every even number
ending in 8 scores 0.0 (what ``grpo-host rescore`` must count exactly)."""

from grpo_host import hookimpl, reward


@reward(description="1.0 when the completion ends in 0, 2, 4 or 6 (broken: 8 is missing)")
def parity(completion, **_):
    text = completion.strip()
    if not text.lstrip("-").isdigit():
        return None
    return float(text[-1] in "0246")


@hookimpl
def register_rewards(register):
    register.add_reward(parity)
