"""Loading a PRM checkpoint once per process, and refusing one that does not fit its kind.

transformers happily loads a causal LM as ``AutoModelForTokenClassification``
with a freshly initialised (random) head and only prints a warning; a PRM
scored that way returns noise.  So the checkpoint is checked before and after
loading: its declared architecture must carry the head the kind reads, no
weight of the head may be missing, and the label count must be the kind's.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from grpo_host import RewardUnusable

__all__ = ["Loaded", "PRMModelError", "load", "resolve_device", "resolve_dtype"]

AUTO_CLASSES = {
    "token_classification": "AutoModelForTokenClassification",
    "math_shepherd": "AutoModelForCausalLM",
    "sequence_classification": "AutoModelForSequenceClassification",
}
ARCHITECTURE_SUFFIXES = {
    "token_classification": ("ForTokenClassification",),
    "math_shepherd": ("ForCausalLM", "LMHeadModel", "ForConditionalGeneration"),
    "sequence_classification": ("ForSequenceClassification",),
}
NUM_LABELS = {"token_classification": 2, "sequence_classification": 1}


class PRMModelError(RewardUnusable):
    """The checkpoint does not fit the chosen kind (head, labels, tokens); the message says what was expected."""


@dataclass(frozen=True)
class Loaded:
    """A model in eval mode on its device, with its tokenizer and its longest input (None: no limit)."""

    model: Any
    tokenizer: Any
    device: Any
    pad_id: int
    max_positions: int | None = None


_CACHE: dict[tuple[str, str, str, str], Loaded] = {}
_LOCK = threading.Lock()  # a timed-out scoring thread may still be loading when the next call arrives


def resolve_device(device: str) -> str:
    """``auto`` picks cuda, then mps, then cpu; a bare ``cuda`` is this process's current GPU.

    Under accelerate/torchrun every rank has set its own current device, so
    each rank's PRM lands next to its policy instead of all on GPU 0.
    """
    import torch

    if device.startswith("cuda") and not torch.cuda.is_available():
        raise RewardUnusable(f"PRM device={device!r}, but torch {torch.__version__} sees no CUDA GPU; use cpu or auto")
    if device == "cuda" or (device == "auto" and torch.cuda.is_available()):
        return f"cuda:{torch.cuda.current_device()}"
    if device != "auto":
        return device
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def resolve_dtype(dtype: str, device: str):
    import torch

    if dtype != "auto":
        return getattr(torch, dtype)
    if device.startswith("cuda"):
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return torch.float16 if device == "mps" else torch.float32


def load(model: str, kind: str, device: str, dtype: str) -> Loaded:
    """The cached (model, tokenizer) for this checkpoint, kind, device and dtype; loaded on first use."""
    device = resolve_device(device)
    key = (model, kind, device, dtype)
    with _LOCK:
        if key not in _CACHE:
            _CACHE[key] = _load(model, kind, device, resolve_dtype(dtype, device))
        return _CACHE[key]


def _load(model: str, kind: str, device: str, dtype) -> Loaded:
    import transformers

    config = transformers.AutoConfig.from_pretrained(model)
    architectures = list(getattr(config, "architectures", None) or [])
    suffixes = ARCHITECTURE_SUFFIXES[kind]
    expected = f"kind={kind} expects a {AUTO_CLASSES[kind]} checkpoint (architecture *{' or *'.join(suffixes)})"
    if architectures and not any(a.endswith(suffixes) for a in architectures):
        raise PRMModelError(f"PRM {model!r} is a {', '.join(architectures)} checkpoint; {expected}")
    wanted = NUM_LABELS.get(kind)
    if wanted is not None and config.num_labels != wanted:
        raise PRMModelError(
            f"PRM {model!r} has num_labels={config.num_labels}; {expected} with num_labels={wanted}"
            + (" (label 1 = good step, as TRL's former PRMTrainer trained)" if kind == "token_classification" else
               " (one logit per sequence, as TRL's RewardTrainer trains)")
        )
    auto = getattr(transformers, AUTO_CLASSES[kind])
    net, info = auto.from_pretrained(model, dtype=dtype, output_loading_info=True)
    missing = sorted(info.get("missing_keys") or ())
    if missing:
        raise PRMModelError(
            f"PRM {model!r} has no trained weights for {', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''} "
            f"when loaded as {type(net).__name__}; {expected}"
        )
    tokenizer = transformers.AutoTokenizer.from_pretrained(model)
    pad_id = next((t for t in (tokenizer.pad_token_id, tokenizer.eos_token_id) if t is not None), 0)
    if kind == "sequence_classification":
        # the head pools the last token that is not the config's pad id, so padding must use that id
        # (and without one it refuses batches larger than 1)
        text_config = net.config.get_text_config()
        if text_config.pad_token_id is None:
            text_config.pad_token_id = pad_id
        pad_id = text_config.pad_token_id
    net.to(device).eval()
    max_positions = getattr(net.config.get_text_config(), "max_position_embeddings", None)
    return Loaded(net, tokenizer, net.device, pad_id, max_positions)
