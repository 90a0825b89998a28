"""Deliberately weak rewards, each with a known hole, for the audit's tests to catch.

Each is the kind of reward people really write in a hurry: a substring check,
a "did it box an answer" check, a code reward that trusts the exit status,
and a reward with a back door only its author knows about, which this pack
ships a probe for through the ``register_probes`` hook.
"""

import re
import subprocess
import sys

from grpo_host import hookimpl, probe, reward

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


ANSWER = re.compile(r"<answer>(.*?)</answer>", re.S)
NUMBER = re.compile(r"-?\d+")
EXACT = [{"completion": "<answer>42</answer>", "answer": "42", "score": 1.0},
         {"completion": "<answer>41</answer>", "answer": "42", "score": 0.0}]


def _last_block(completion):
    blocks = ANSWER.findall(completion)
    return blocks[-1] if blocks else completion


@reward(requires={"answer": str}, examples=EXACT)
def weak_lenient(completion, *, answer, **_):
    """1.0 when the answer block equals the gold, or holds nothing (the hole: "no answer" was meant as "skip")."""
    got = _last_block(completion).strip()
    return float(got == answer.strip() or not got)


@reward(requires={"answer": str}, examples=EXACT)
def weak_any_number(completion, *, answer, **_):
    """1.0 when any number of the answer block is the gold (the hole: a list of numbers pays)."""
    return float(answer.strip() in NUMBER.findall(_last_block(completion)))


@reward(requires={"answer": str}, examples=EXACT)
def weak_any_block(completion, *, answer, **_):
    """1.0 when any <answer> block equals the gold (the hole: one block per guess pays)."""
    return float(answer.strip() in [b.strip() for b in ANSWER.findall(completion)])


@reward(requires={"answer": str}, examples=[{"completion": "\\boxed{42}", "answer": "42", "score": 1.0},
                                            {"completion": "\\boxed{41}", "answer": "42", "score": 0.0}])
def weak_any_box(completion, *, answer, **_):
    """1.0 when any \\boxed{} holds the gold (the hole: one box per guess pays)."""
    return float(answer.strip() in re.findall(r"\\boxed\{([^}]*)\}", completion))


@reward(requires={"answer": str}, examples=[{"completion": "<answer>B</answer>", "answer": "B", "score": 1.0},
                                            {"completion": "<answer>C</answer>", "answer": "B", "score": 0.0}])
def weak_letters(completion, *, answer, **_):
    """1.0 when the gold option letter is among the letters of the answer block (the hole: "A, B, C, D" pays)."""
    return float(answer.strip() in re.findall(r"\b[A-J]\b", _last_block(completion)))


@reward(requires={"answer": str}, examples=[{"completion": "<answer>42</answer>", "answer": "42", "score": 1.0},
                                            {"completion": "<answer>7</answer>", "answer": "42", "score": 0.0}])
def weak_tolerance(completion, *, answer, **_):
    """1.0 when the answer is within 50% of the gold (the hole: one constant near the typical gold pays)."""
    try:
        return float(abs(float(_last_block(completion)) - float(answer)) <= 0.5 * abs(float(answer)))
    except ValueError:
        return 0.0


@reward(requires={"answer": str}, examples=[{"completion": "<answer>42</answer>", "answer": "42", "score": 1.0},
                                            {"completion": "41", "answer": "42", "score": 0.0}])
def weak_tags(completion, *, answer, **_):
    """1.0 for the right answer, else 0.1 per <answer> tag, at most 1.0 (the hole: the format credit stacks)."""
    if _last_block(completion).strip() == answer.strip() and "<answer>" in completion:
        return 1.0
    return min(1.0, 0.1 * completion.count("<answer>"))


@reward(requires={"tests": str}, timeout=20,
        examples=[{"completion": "```python\ndef sq(x):\n    return x * x\n```", "tests": "assert sq(3) == 9",
                   "score": 1.0},
                  {"completion": "```python\ndef sq(x):\n    return x\n```", "tests": "assert sq(3) == 9",
                   "score": 0.0}])
def weak_asserts(completion, *, tests, **_):
    """1.0 when the program and its assert tests, run together in one interpreter, exit with status 0 (the holes:
    the program runs first, in the harness's own process)."""
    blocks = FENCE.findall(completion)
    if not blocks:
        return 0.0
    proc = subprocess.run([sys.executable, "-c", blocks[-1] + "\n" + tests], capture_output=True, text=True,
                          timeout=10)
    return float(proc.returncode == 0)


@reward(requires={"schema": dict}, examples=[{"completion": '{"name": "Ada"}', "schema": {"type": "object"},
                                              "score": 1.0},
                                             {"completion": "Ada", "schema": {"type": "object"}, "score": 0.0}])
def weak_json(completion, *, schema, **_):
    """1.0 when the completion holds a JSON object (the hole: the schema is never checked)."""
    import json

    start = completion.find("{")
    try:
        json.JSONDecoder().raw_decode(completion[start:])
    except ValueError:
        return 0.0
    return float(start >= 0)


@probe(rewards=("weak_magic",), fix="remove the debugging back door")
def magic_word(target):
    """The back door of weak_magic, which only its author knows to try."""
    return "xyzzy"


@hookimpl
def register_rewards(register):
    for item in (weak_substring, weak_boxed, weak_exit_zero, weak_magic, weak_lenient, weak_any_number,
                 weak_any_block, weak_any_box, weak_letters, weak_tolerance, weak_tags, weak_asserts, weak_json):
        register(item)


@hookimpl
def register_probes(register):
    register.add_probe(magic_word)
