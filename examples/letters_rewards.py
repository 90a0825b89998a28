"""A tiny reward pack for the letters task (examples/letters.yaml).

The task is small enough that ``builtin:tiny`` (a randomly initialised
character-level Llama) visibly learns it with GRPO on a CPU in minutes:
each prompt names a letter from a to e, and the model is rewarded for
writing that letter.  A real pack lives in its own distribution with an
entry point; a run configuration can also load a module like this one
directly (``plugins: [examples/letters_rewards.py]``).
"""

from __future__ import annotations

from grpo_host import hookimpl, reward


@reward(
    name="letter_share",
    requires={"answer": str},
    examples=[{"completion": "cccc", "answer": "c", "score": 1.0}, {"completion": "c?x!", "answer": "c", "score": 0.25},
              {"completion": "", "answer": "c", "score": 0.0}],
)
def letter_share(completion: str, *, answer: str, **_) -> float:
    """The share of the completion's characters that equal the gold `answer` letter (0.0 for an empty completion)."""
    return completion.count(answer) / len(completion) if completion else 0.0


@reward(
    name="lowercase_share",
    examples=[{"completion": "abc", "score": 1.0}, {"completion": "a B?", "score": 0.25}],
)
def lowercase_share(completion: str, **_) -> float:
    """The share of the completion's characters that are lowercase letters a-z (0.0 for an empty completion)."""
    return sum("a" <= ch <= "z" for ch in completion) / len(completion) if completion else 0.0


@hookimpl
def register_rewards(register):
    register(letter_share)
    register(lowercase_share)
