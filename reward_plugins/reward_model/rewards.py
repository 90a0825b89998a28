"""An outcome reward model as a reward: the model TRL's ``RewardTrainer`` trains, over the whole answer.

TRL, verl and OpenRLHF all take a trained reward model (a sequence-classification model with one logit, such as
the Skywork-Reward family) as a GRPO reward.  The ``prm`` pack scores every step; this one scores the
conversation once: the prompt's messages plus the completion as the assistant's turn, through the chat template
the model was trained with, so the model sees exactly the input format it was trained on.

GRPO only uses rewards relative to their group, but an ensemble weighs them against 0-1 rewards, so
``normalize=group`` turns the logits into z-scores within each group (the completions of one prompt in the batch,
as the ``length`` reward groups them).  This module imports neither torch nor transformers, so listing rewards
stays fast: :mod:`~reward_plugins.reward_model.scoring` does the work.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from grpo_host import Scored, hookimpl, reward, split_reasoning

__all__ = ["TINY_MODEL", "RewardModelParams", "check_row", "conversation", "group_zscores", "reward_model"]

ROLES = frozenset({"system", "user", "assistant", "tool", "developer"})


class RewardModelParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str = Field(description="local folder, or Hugging Face hub id (read from the hub cache; fetched on first "
                                   "use unless HF_HUB_OFFLINE=1), of an AutoModelForSequenceClassification with "
                                   "num_labels=1")
    normalize: Literal["raw", "group"] = Field(
        "raw", description="raw: the model's logit; group: z-score of the logit within its group (the completions "
                           "of one prompt in the batch; sample std; 0.0 where the group's logits are all equal)")
    reasoning: Literal["drop", "keep"] = Field(
        "drop", description="drop: the model sees the answer after the last </think> (reward models are trained "
                            "on answers); keep: the whole completion")
    chat_template: str | None = Field(
        None, description="a Jinja chat template to use instead of the tokenizer's own (for a model whose "
                          "tokenizer carries none)")
    device: str = Field("auto", description="auto (cuda, then mps, then cpu), cpu, cuda, cuda:N or mps")
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = Field(
        "auto", description="weights' dtype; auto: the checkpoint's own")
    batch_size: int = Field(8, ge=1, description="conversations per forward pass (sorted by length first)")
    max_length: int | None = Field(
        None, ge=2, description="longest input in tokens (None: the model's max_position_embeddings); a longer "
                                "conversation scores None and is counted as too_long, never cut")


def conversation(prompt: Any, completion: str, reasoning: str) -> list[dict[str, Any]]:
    """The messages the model reads: a chat prompt's messages (a text prompt as one user turn), then the answer."""
    messages = [dict(m) for m in prompt] if isinstance(prompt, list) else [{"role": "user", "content": str(prompt)}]
    answer = split_reasoning(completion).answer.strip() if reasoning == "drop" else completion
    return [*messages, {"role": "assistant", "content": answer}]


def check_row(row: Mapping[str, Any]) -> str | None:
    """``data check``: every turn of a chat prompt has a role a chat template renders (the host has checked that
    turns are messages with text content)."""
    prompt = row.get("prompt")
    for i, message in enumerate(prompt if isinstance(prompt, list) else ()):
        if message.get("role") not in ROLES:
            return f"prompt message {i} has role {message.get('role')!r}, not one of {', '.join(sorted(ROLES))}"
    return None


def group_zscores(values: Sequence[float | None], prompts: Sequence[Any]) -> list[float | None]:
    """Each value's z-score among the scored values of its group (same prompt): (v - mean) / sample std."""
    groups: dict[str, list[int]] = {}
    for i, prompt in enumerate(prompts):
        groups.setdefault(json.dumps(prompt, sort_keys=True, default=str), []).append(i)
    out: list[float | None] = list(values)
    for members in groups.values():
        scored = [(i, v) for i in members if (v := values[i]) is not None]
        mean = math.fsum(v for _, v in scored) / len(scored) if scored else 0.0
        std = math.sqrt(math.fsum((v - mean) ** 2 for _, v in scored) / (len(scored) - 1)) if len(scored) > 1 else 0.0
        for i, v in scored:
            out[i] = (v - mean) / std if std > 0 else 0.0
    return out


DESCRIPTION = """\
A trained outcome reward model (AutoModelForSequenceClassification, num_labels=1, as TRL's RewardTrainer trains
it, e.g. the Skywork-Reward family) scores the whole conversation: the prompt's messages (a text prompt as one
user turn) and the completion as the assistant's turn (reasoning=drop: only the answer after the last </think>),
rendered by the model's chat template (or chat_template) and tokenized as that template says (its own BOS, no
extra special tokens).  The value is the model's logit (normalize=raw) or its z-score within the group
(normalize=group: the completions of one prompt in the batch; sample std; 0.0 when the group's logits are all
equal).  A conversation longer than max_length (default: the model's max_position_embeddings) scores None and is
counted as too_long: a cut conversation is not what the model was trained on.

The model loads once per process on `device` (auto: cuda, then mps, then cpu) and stays cached, keyed by (model,
device, dtype).  A checkpoint without a sequence-classification head, with num_labels other than 1, with head
weights missing, or whose tokenizer has no chat template (and no chat_template is given) is refused when it
loads, saying what was expected.  Conversations are sorted by length and run batch_size at a time, padded, so a
score does not depend on its batch.  Needs the `prm` extra (transformers, torch): pip install 'grpo-host[prm]'."""


TINY_MODEL = str(Path(__file__).with_name("tiny_model"))
"""A toy reward model shipped with the pack (scripts/build_tiny_reward_model.py writes it): its weights are set so
its logit is about +1 for an answer that ends a sentence ('.', '!' or '?') and -1 otherwise.  The examples name it
so that they load offline and state scores that hold for any model that orders the completions the same way."""

_TINY: dict[str, Any] = {"model": TINY_MODEL, "normalize": "group", "device": "cpu"}
"""On the CPU: ``rewards show`` must not take a GPU a run may be using for a 6 KB model."""
EXAMPLES: list[dict[str, Any]] = [
    {"prompt": "Capital of France?", "completions": ["Paris.", "Paris"], "params": _TINY,
     "scores": [2 ** -0.5, -(2 ** -0.5)]},  # two different logits: +-1/sqrt(2), whatever their size
    {"prompt": "Capital of France?", "completions": ["Paris.", "<think>Lyon?</think>paris", "It is Paris!"],
     "params": _TINY, "scores": [3 ** -0.5, -2 * 3 ** -0.5, 3 ** -0.5]},
    {"prompt": "Capital of France?", "completions": ["Paris.", "It is Paris!"], "params": _TINY,
     "scores": [0.0, 0.0]},  # a group the model cannot tell apart
    # too long for max_length: None, never cut; the rest of the group is normalised without it
    {"prompt": "Capital of France?", "completions": ["Paris.", "Paris, a city on the Seine."],
     "params": {**_TINY, "max_length": 48}, "scores": [0.0, None]},
]


@reward(name="reward_model", requires={"prompt": Any}, params=RewardModelParams, batch=True, timeout=600.0,
        check_row=check_row, description=DESCRIPTION, examples=EXAMPLES)
def reward_model(completions: list[str], *, prompts: list[Any], params: RewardModelParams, **_: Any) -> list[Scored]:
    from .scoring import score_conversations

    logits = score_conversations([conversation(p, c, params.reasoning) for p, c in zip(prompts, completions,
                                                                                       strict=True)], params)
    values = group_zscores(logits, prompts) if params.normalize == "group" else logits
    return [Scored(v, {"too_long": int(raw is None)}) for v, raw in zip(values, logits, strict=True)]


@hookimpl
def register_rewards(register):
    register(reward_model)
