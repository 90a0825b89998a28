"""Process reward models (PRMs): a transformers model scores every reasoning step.

An outcome reward (math, accuracy) says whether the final answer is right; a
PRM says how sound each step was, so a solution that reaches the right answer
through a broken step can be told apart.  The ``prm`` reward splits a
completion into steps, asks the model for P(step is good) at each step, and
aggregates those probabilities into one score in [0, 1] that an ensemble can
weigh against math, format and length rewards.

Three model families are supported, each fed the input format it was trained
on (see :data:`DESCRIPTION`).  The model runs in the main process on the
chosen device (a batch reward, never a CPU worker pool) and is loaded once per
process: see :mod:`reward_plugins.prm.loading`.  This module imports neither
torch nor transformers, so listing rewards stays fast.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from grpo_host import hookimpl, reward

__all__ = ["PRMParams", "aggregate", "prm", "prompt_text", "split_steps"]

Kind = Literal["token_classification", "math_shepherd", "sequence_classification"]
Aggregation = Literal["min", "mean", "last", "product"]


class PRMParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str = Field(description="local directory or Hugging Face hub id of the PRM checkpoint")
    kind: Kind = Field(
        "token_classification",
        description="token_classification (the format of TRL's former PRMTrainer), math_shepherd (causal LM with "
        "a step tag) or "
        "sequence_classification (a reward model scored on each step prefix)",
    )
    step_separator: str = Field(
        "\n\n",
        min_length=1,
        description="text that divides the completion into steps: '\\n\\n' splits on blank lines, '\\n' on lines; "
        "steps are stripped and empty ones dropped",
    )
    model_separator: str | None = Field(
        None,
        min_length=1,
        description="text placed after each step in the model input (token_classification: the PRMConfig "
        "step_separator the model was trained with; math_shepherd: between a step's tag and the next step); "
        "None: '\\n' for those two kinds (TRL's and Math-Shepherd's default), step_separator for "
        "sequence_classification",
    )
    step_tag: str = Field("ки", min_length=1, description="math_shepherd: the tag token after each step")
    good_token: str = Field("+", min_length=1, description="math_shepherd: the token meaning 'this step is good'")
    bad_token: str = Field("-", min_length=1, description="math_shepherd: the token meaning 'this step is bad'")
    aggregation: Aggregation = Field(
        "min", description="how step probabilities become one score: min, mean, last, product"
    )
    batch_size: int = Field(8, ge=1, description="sequences per forward pass")
    device: str = Field(
        "auto",
        pattern=r"^(auto|cpu|mps|cuda(:\d+)?)$",
        description="cpu, cuda (this process's current GPU), cuda:N, mps, or auto (cuda > mps > cpu)",
    )
    max_length: int = Field(
        2048,
        ge=8,
        description="tokens per model input (at most the model's max_position_embeddings); longer inputs lose "
        "tokens from the left so the last steps survive",
    )
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = Field(
        "auto", description="weights dtype; auto: float32 on cpu, bfloat16 on cuda when supported (else float16)"
    )


def split_steps(completion: str, separator: str) -> list[str]:
    """The completion's steps: split on ``separator``, each stripped, empty ones dropped.

    Stripping and dropping empties makes ``"\\n\\n"`` behave as "one or more
    blank lines", so a run of blank lines never creates an empty step.
    """
    return [part.strip() for part in completion.split(separator) if part.strip()]


def prompt_text(prompt: Any) -> str:
    """The prompt as the plain question text PRMs are trained on.

    A string passes through; a chat prompt (list of messages) gives the content
    of its last user message; None gives "" (score the steps alone).
    """
    if prompt is None:
        return ""
    if isinstance(prompt, str):
        return prompt
    for message in reversed(prompt):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content", "")
            if isinstance(content, list):  # multimodal content parts
                return "".join(p.get("text", "") for p in content if isinstance(p, dict))
            return str(content or "")
    return ""


def aggregate(probs: Sequence[float], how: Aggregation) -> float | None:
    """One score from the step probabilities (None when there are none)."""
    if not probs:
        return None
    if how == "min":
        return min(probs)
    if how == "mean":
        return math.fsum(probs) / len(probs)
    if how == "last":
        return probs[-1]
    return math.prod(probs)


DESCRIPTION = """\
A process reward model scores each reasoning step; the score is the steps' P(good) aggregated.

Steps: the completion is split on `step_separator` (default "\\n\\n", blank lines; "\\n" for lines), each part
stripped, empty parts dropped.  A completion with no steps scores None.  The prompt is part of the model input
as each family was trained (a chat prompt contributes its last user message; no prompt: the steps alone).

kind=token_classification (AutoModelForTokenClassification, num_labels=2, as the PRMTrainer of earlier TRL
releases trained it: trl.PRMTrainer, then trl.experimental.prm, removed in huggingface/trl#7133; TRL 1.16 ships
no PRM trainer, so such checkpoints come from those releases or a trainer that keeps their format): the
input is exactly that trainer's: [BOS if the tokenizer has one] + tokens(prompt) + for each step tokens(step) +
tokens(model_separator, default "\\n"), each piece tokenized without special tokens.  P(good) of a step is
softmax(logits)[1] (TRL's label for a correct step is 1) at the last token of that step's separator.

kind=math_shepherd (a causal LM trained on Math-Shepherd-style data): the input is
"{prompt} {step1} {step_tag}{model_separator}{step2} {step_tag}..." tokenized with special tokens (the
step_tag, default "ки", is first removed from the completion); P(good) at each step-tag position is
softmax(logit(good_token), logit(bad_token))[0], defaults "+" and "-".

kind=sequence_classification (a reward model, AutoModelForSequenceClassification, num_labels=1, e.g. from TRL's
RewardTrainer) is run once per step prefix (steps 1..k joined by model_separator, default step_separator),
fed as RewardTrainer feeds it: prompt text + prefix + EOS, or for a chat prompt (when the tokenizer has a chat
template) the template over the prompt messages plus the prefix as the assistant turn.  P(good) of step k is
sigmoid(logit of prefix k).

Inputs longer than max_length (capped at the model's max_position_embeddings) lose tokens from the left (BOS
kept) so the last steps survive; a step whose scoring position was cut off is left out of the aggregate.

aggregation: min = the weakest step (default), mean = arithmetic mean, last = the final step's P(good),
product = the product of all P(good) (P(every step is good) under independence).  Every score is in [0, 1].

The model loads once per process on `device` and stays cached, keyed by (model, kind, device, dtype); a
checkpoint that does not fit the kind (another head, wrong num_labels, a missing step tag or good/bad token) is
an error when it loads that says what was expected.  Inputs are sorted by length and run `batch_size` at a time,
right-padded, so a score does not depend on its batch.  One call scores the whole batch within the reward's
timeout (600 s, which covers the first load; set `timeout:` in a YAML spec for a large model on a slow disk).
Needs the `prm` extra: pip install 'grpo-host[prm]'."""


@reward(name="prm", params=PRMParams, batch=True, timeout=600.0, description=DESCRIPTION)
def prm(completions: list[str], *, prompts: list[Any], params: PRMParams, **_) -> list[float | None]:
    from .scoring import score_completions

    return score_completions(completions, prompts, params)


@hookimpl
def register_rewards(register):
    register(prm)
