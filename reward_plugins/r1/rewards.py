"""The R1 family: answer and format rewards from DeepSeek-R1-style GRPO recipes.

These are the rewards of the widely copied R1 / GSM8K GRPO recipes (and
open-r1's format rewards), normalised so each scores in [0, 1]; scale them
with weights in the spec.  They are pure string checks: cheap, inline.

The expected layout is::

    <think>
    ...reasoning...
    </think>
    <answer>
    ...final answer...
    </answer>

``reasoning_tag`` switches ``think`` to another tag (``reasoning`` in the
original GSM8K recipe).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from grpo_host import COMMON_END_TOKENS, answer_blocks, hookimpl, reward, strip_end_tokens

INTEGER = re.compile(r"[+-]?\d+")


class FormatParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reasoning_tag: str = Field("think", pattern=r"^[A-Za-z_][\w-]*$", description="tag around the reasoning")


def extract_answer(text: str) -> str | None:
    """The content of the last ``<answer>`` block (to its close or the end), stripped; None without one."""
    found = answer_blocks(text)
    return found[-1][1].strip() if found else None


@reward(
    name="accuracy",
    requires={"answer": str},
    examples=[
        {"completion": "<think>2+2</think>\n<answer>4</answer>", "answer": "4", "score": 1.0},
        {"completion": "<answer>5</answer>", "answer": "4", "score": 0.0},
        {"completion": "4", "answer": "4", "score": 0.0},
    ],
)
def accuracy(completion: str, *, answer: str, **_) -> float | None:
    """1.0 when the last <answer>...</answer> block, stripped, equals the gold `answer` stripped; 0.0 otherwise
    (also when there is no <answer> block).  None when the gold is empty.  Exact string match: use `math`
    for equivalence."""
    gold = str(answer).strip()
    if not gold:
        return None
    return float(extract_answer(completion) == gold)


@reward(
    name="r1_int",
    examples=[{"completion": "<answer>-12</answer>", "score": 1.0},
              {"completion": "<answer>12.5</answer>", "score": 0.0}],
)
def r1_int(completion: str, **_) -> float:
    """1.0 when the last <answer> block holds an integer (optional sign, digits only), else 0.0."""
    found = extract_answer(completion)
    return float(found is not None and INTEGER.fullmatch(found) is not None)


def _body(tag: str) -> str:
    """A block's content: any text holding none of the four tags in any case or spacing (``</Think >``, ``<ANSWER>``),
    so a match is exactly one block of each."""
    return rf"(?:(?!(?i:<\s*/?\s*(?:{tag}|answer)\s*>)).)*"


@lru_cache(maxsize=32)
def _strict(tag: str) -> re.Pattern[str]:
    return re.compile(rf"<{tag}>\n{_body(tag)}\n</{tag}>\n<answer>\n{_body(tag)}\n</answer>\n?", re.S)


@lru_cache(maxsize=32)
def _soft(tag: str) -> re.Pattern[str]:
    return re.compile(rf"\s*<{tag}>{_body(tag)}</{tag}>\s*<answer>{_body(tag)}</answer>\s*", re.S)


def _one_block_each(pattern: re.Pattern[str], completion: str) -> float:
    """1.0 when the completion, less a run of end-of-turn markers at its very end (``<|im_end|>``, ``</s>``: the
    tokenizer's, not the model's text), matches ``pattern`` whole.  An empty answer block is still the format (the
    audit's ``format_only`` probe: correctness is the other rewards' to judge)."""
    return float(pattern.fullmatch(strip_end_tokens(completion, COMMON_END_TOKENS)) is not None)


@reward(
    name="r1_strict_format",
    params=FormatParams,
    examples=[
        {"completion": "<think>\nsteps\n</think>\n<answer>\n4\n</answer>\n", "score": 1.0},
        {"completion": "<think>steps</think><answer>4</answer>", "score": 0.0},
        {"completion": "<think>\na\n</think>\n<answer>\n3\n</answer>\n<think>\nb\n</think>\n<answer>\n4\n</answer>",
         "score": 0.0},
    ],
)
def r1_strict_format(completion: str, *, params: FormatParams, **_) -> float:
    """1.0 when the whole completion is exactly one `<think>\\n...\\n</think>` block then one
    `<answer>\\n...\\n</answer>` block, with an optional final newline (each tag on its own line, nothing before,
    between or after them, and neither block holding a think or answer tag in any case or spacing), else 0.0.  A
    run of end-of-turn markers at the very end (`<|im_end|>`, `</s>`) is not text."""
    return _one_block_each(_strict(params.reasoning_tag), completion)


@reward(
    name="r1_soft_format",
    params=FormatParams,
    examples=[{"completion": "<think>steps</think> <answer>4</answer>", "score": 1.0},
              {"completion": "<answer>4</answer>", "score": 0.0}],
)
def r1_soft_format(completion: str, *, params: FormatParams, **_) -> float:
    """1.0 when the completion is one <think>...</think> block followed by one <answer>...</answer> block, with any
    whitespace around and between them (neither block holding a think or answer tag in any case or spacing), else
    0.0; a run of end-of-turn markers at the very end is not text."""
    return _one_block_each(_soft(params.reasoning_tag), completion)


@reward(
    name="r1_xmlcount",
    params=FormatParams,
    examples=[
        {"completion": "<think>\nsteps\n</think>\n<answer>\n4\n</answer>\n", "score": 1.0},
        {"completion": "<think>\nsteps\n</think>\n<answer>\n4\n</answer>\ntrailing text", "score": 0.948},
        {"completion": "<think>\nsteps\n</think>\n<answer>\n4\n</answer>", "score": 0.916},
    ],
)
def r1_xmlcount(completion: str, *, params: FormatParams, **_) -> float:
    """Partial credit per tag, as in the R1 GSM8K recipe (doubled to a maximum of 1.0): +0.25 for each of
    `<think>\\n`, `\\n</think>\\n`, `\\n<answer>\\n`, `\\n</answer>` appearing exactly once; minus 0.002 per
    character after the final `\\n</answer>` (the recipe's penalty for trailing text, less one character for the
    final newline), and, with the `\\n<answer>\\n` credit, minus 0.002 per character after `\\n</answer>\\n`: when
    that is absent (no newline after the closing tag) the recipe counts the whole completion, kept here for
    parity, so end the answer block with a newline.  Can go below 0."""
    tag, score = params.reasoning_tag, 0.0
    if completion.count(f"<{tag}>\n") == 1:
        score += 0.25
    if completion.count(f"\n</{tag}>\n") == 1:
        score += 0.25
    if completion.count("\n<answer>\n") == 1:
        score += 0.25
        score -= len(completion.split("\n</answer>\n")[-1]) * 0.002
    if completion.count("\n</answer>") == 1:
        score += 0.25
        score -= (len(completion.split("\n</answer>")[-1]) - 1) * 0.002
    return score


class ThinkParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    prefilled: Literal["auto", "yes", "no"] = Field(
        "auto",
        description="whether the chat template already wrote <think> into the prompt: auto accepts both shapes",
    )


THINK_OPEN = re.compile(r"^\s*<think>(?P<body>(?:(?!<think>).)*?)</think>(?P<rest>.*)$", re.S)
THINK_PREFILLED = re.compile(r"^(?P<body>(?:(?!<think>).)*?)</think>(?P<rest>.*)$", re.S)


@reward(
    name="think_format",
    params=ThinkParams,
    examples=[
        {"completion": "<think>\nreasoning\n</think>\nThe answer is 4.", "score": 1.0},
        {"completion": "reasoning\n</think>\nThe answer is 4.", "score": 1.0},
        {"completion": "The answer is 4.", "score": 0.0},
    ],
)
def think_format(completion: str, *, params: ThinkParams, **_) -> float:
    """1.0 when the completion holds exactly one non-empty reasoning block closed by </think>, followed by
    text with no further think tags; 0.0 otherwise.  The block opens with <think> (prefilled=no), or opens
    in the prompt because the chat template pre-fills <think> (prefilled=yes: the completion starts inside
    the block, so it must not contain <think>), or either (prefilled=auto)."""
    shapes = {"no": (THINK_OPEN,), "yes": (THINK_PREFILLED,), "auto": (THINK_OPEN, THINK_PREFILLED)}
    for pattern in shapes[params.prefilled]:
        m = pattern.match(completion)
        if m and m["body"].strip() and "<think>" not in m["rest"] and "</think>" not in m["rest"]:
            return 1.0
    return 0.0


@hookimpl
def register_rewards(register):
    for item in (accuracy, r1_int, r1_strict_format, r1_soft_format, r1_xmlcount, think_format):
        register(item)
