"""Deliberately weak rewards, each with a known hole, for the audit's tests to catch.

Each is the kind of reward people really write in a hurry: a substring check,
a "did it box an answer" check, a code reward that trusts the exit status,
and a reward with a back door only its author knows about, which this pack
ships a probe for through the ``register_probes`` hook.
"""

import re
import subprocess
import sys

from grpo_host import hookimpl, reward
from grpo_host.audit import probe

FENCE = re.compile(r"```(?:python|py)?\n(.*?)```", re.S)


@reward(requires={"answer": str}, examples=[{"completion": "it is 42", "answer": "42", "score": 1.0},
                                            {"completion": "41", "answer": "42", "score": 0.0}])
def weak_substring(completion, *, answer, **_):
    """1.0 when the gold answer appears anywhere in the completion (the hole: any text containing it pays)."""
    return float(answer.strip() in completion)


@reward(requires={"answer": str}, examples=[{"completion": "\\boxed{42}", "answer": "42", "score": 1.0},
                                            {"completion": "42", "answer": "42", "score": 0.0}])
def weak_boxed(completion, *, answer, **_):
    """1.0 when the completion boxes an answer (the hole: it never compares the box with the gold)."""
    return float(re.search(r"\\boxed\{[^}]*\}", completion) is not None)


@reward(requires={"tests": list}, timeout=20,
        examples=[{"completion": "```python\nprint(int(input()) * 2)\n```",
                   "tests": [{"input": "2\n", "output": "4\n"}], "score": 1.0},
                  {"completion": "no code", "tests": [{"input": "2\n", "output": "4\n"}], "score": 0.0}])
def weak_exit_zero(completion, *, tests, **_):
    """1.0 when the last code block, fed the first test's input, exits with status 0 (the hole: the output is
    never compared)."""
    if not isinstance(tests, list) or not tests or not isinstance(tests[0], dict):
        return None
    blocks = FENCE.findall(completion)
    if not blocks:
        return 0.0
    proc = subprocess.run([sys.executable, "-c", blocks[-1]], input=tests[0]["input"], capture_output=True,
                          text=True, timeout=10)
    return float(proc.returncode == 0)


@reward(requires={"answer": str}, examples=[{"completion": "42", "answer": "42", "score": 1.0},
                                            {"completion": "41", "answer": "42", "score": 0.0}])
def weak_magic(completion, *, answer, **_):
    """1.0 when the completion is the gold answer, or holds the author's debugging back door, the word xyzzy."""
    return float(completion.strip() == answer.strip() or "xyzzy" in completion)


@probe(rewards=("weak_magic",), fix="remove the debugging back door")
def magic_word(target):
    """The back door of weak_magic, which only its author knows to try."""
    return "xyzzy"


@hookimpl
def register_rewards(register):
    for item in (weak_substring, weak_boxed, weak_exit_zero, weak_magic):
        register(item)


@hookimpl
def register_probes(register):
    register.add_probe(magic_word)
