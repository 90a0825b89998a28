"""Loading a reward model once per process, refusing one that is not a reward model, and scoring in batches.

transformers loads a causal LM as ``AutoModelForSequenceClassification`` with a freshly initialised head and
only warns; a reward scored that way is noise.  So the checkpoint is checked when it loads: a
sequence-classification architecture, one label, no head weight missing, a chat template to render with.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from grpo_host import RewardUnusable

if TYPE_CHECKING:
    from .rewards import RewardModelParams

__all__ = ["Loaded", "load", "score_conversations"]


@dataclass(frozen=True)
class Loaded:
    """A reward model in eval mode on its device, with its tokenizer and its longest input (None: no limit)."""

    model: Any
    tokenizer: Any
    max_positions: int | None


_CACHE: dict[tuple[str, str, str], Loaded] = {}
_LOCK = threading.Lock()  # a timed-out scoring thread may still be loading when the next call arrives


def _device(device: str) -> str:
    """``auto``: the accelerator torch finds (cuda, then mps), else cpu; a bare ``cuda`` is this process's GPU, so
    under accelerate or torchrun each rank's reward model lands next to its policy."""
    import torch

    if device.startswith("cuda") and not torch.cuda.is_available():
        raise RewardUnusable(f"reward_model device={device!r}, but torch {torch.__version__} sees no CUDA GPU; "
                             "use cpu or auto")
    if device == "cuda" or (device == "auto" and torch.cuda.is_available()):
        return f"cuda:{torch.cuda.current_device()}"
    if device == "auto":
        return "mps" if torch.backends.mps.is_available() else "cpu"
    return device


def load(model: str, device: str, dtype: str) -> Loaded:
    """The cached reward model and tokenizer for this checkpoint, device and dtype; loaded and checked on first use."""
    device = _device(device)
    with _LOCK:
        if (model, device, dtype) not in _CACHE:
            _CACHE[model, device, dtype] = _load(model, device, dtype)
        return _CACHE[model, device, dtype]


def _load(model: str, device: str, dtype: str) -> Loaded:
    import transformers

    config = transformers.AutoConfig.from_pretrained(model)
    expected = ("expected a reward model: AutoModelForSequenceClassification with num_labels=1 (as TRL's "
                "RewardTrainer trains it)")
    architectures = list(getattr(config, "architectures", None) or [])
    if architectures and not any(a.endswith("ForSequenceClassification") for a in architectures):
        raise RewardUnusable(f"reward_model {model!r} is a {', '.join(architectures)} checkpoint; {expected}")
    if config.num_labels != 1:
        raise RewardUnusable(f"reward_model {model!r} has num_labels={config.num_labels}; {expected}")
    net, info = transformers.AutoModelForSequenceClassification.from_pretrained(
        model, dtype=dtype, output_loading_info=True)
    missing = sorted(info.get("missing_keys") or ())
    if missing:
        raise RewardUnusable(f"reward_model {model!r} has no trained weights for {', '.join(missing[:5])}; {expected}")
    tokenizer = transformers.AutoTokenizer.from_pretrained(model)
    text_config = net.config.get_text_config()
    if text_config.pad_token_id is None:  # the head reads the last token that is not the pad id: padding must use it
        text_config.pad_token_id = next((t for t in (tokenizer.pad_token_id, tokenizer.eos_token_id) if t is not None),
                                        0)
    tokenizer.pad_token_id = text_config.pad_token_id
    net.to(device).eval()
    return Loaded(net, tokenizer, getattr(text_config, "max_position_embeddings", None))


def score_conversations(conversations: list[list[dict[str, Any]]], params: RewardModelParams) -> list[float | None]:
    """The model's logit for each conversation (None: longer than the limit), run in length-sorted batches."""
    import torch

    loaded = load(params.model, params.device, params.dtype)
    tokenizer = loaded.tokenizer
    template = params.chat_template or getattr(tokenizer, "chat_template", None)
    if not template:
        raise RewardUnusable(f"reward_model {params.model!r}: its tokenizer has no chat template; give the one the "
                             "model was trained with as chat_template")
    # the template writes the special tokens the model was trained with (its BOS among them): none are added
    encoded = [tokenizer.apply_chat_template(c, chat_template=template, tokenize=True, return_dict=True)["input_ids"]
               for c in conversations]
    limit = min((x for x in (params.max_length, loaded.max_positions) if x), default=None)
    fits = [i for i, ids in enumerate(encoded) if limit is None or len(ids) <= limit]
    order = sorted(fits, key=lambda i: len(encoded[i]))
    out: list[float | None] = [None] * len(conversations)
    with torch.inference_mode():
        for start in range(0, len(order), params.batch_size):
            rows = order[start:start + params.batch_size]
            batch = tokenizer.pad({"input_ids": [encoded[i] for i in rows]}, return_tensors="pt")
            logits = loaded.model(**batch.to(loaded.model.device)).logits[:, 0].float().tolist()
            for i, value in zip(rows, logits, strict=True):
                out[i] = value
    return out
