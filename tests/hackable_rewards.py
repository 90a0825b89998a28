"""A reward a policy can only game: it pays for a completion made of one repeated character.

The tiny model's completions almost never are, so every group scores the same and the zero-advantage
monitor sees a run with no learning signal: the run the monitors exist to stop.
"""

from grpo_host import hookimpl, reward


@reward(description="1.0 when the completion is one character repeated, else 0.0")
def one_char(completion, **_):
    return float(len(set(completion)) == 1)


@hookimpl
def register_rewards(register):
    register.add_reward(one_char)
