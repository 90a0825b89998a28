"""Tiny, randomly initialised PRM checkpoints of each kind, built locally in a second.

Real PRMs are gigabytes; the pack's tests, its benchmark and anyone trying
the ``prm`` reward offline need a checkpoint of the right shape, not a good
one.  :func:`build_tiny_prm` writes a two-layer Llama with the head of the
chosen kind and a character-level tokenizer (BOS/EOS/PAD/UNK, plus the
Math-Shepherd step tag ``ки`` as one token unless ``step_tag=None``) with
``save_pretrained``, so it loads through the same ``from_pretrained`` path as a
hub checkpoint.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["CHARS", "build_tiny_prm"]

CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 \n+-*/=.,:;?!()'\""
SPECIAL = ("<pad>", "<unk>", "<s>", "</s>")
HEADS = {
    "token_classification": ("LlamaForTokenClassification", 2),
    "math_shepherd": ("LlamaForCausalLM", None),
    "sequence_classification": ("LlamaForSequenceClassification", 1),
}


def _tokenizer(step_tag: str | None):
    from tokenizers import AddedToken, Tokenizer, models, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {token: i for i, token in enumerate([*SPECIAL, *CHARS])}
    raw = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<unk>"))  # no merges: one token per character
    if step_tag is not None:
        raw.add_tokens([AddedToken(step_tag, normalized=False)])
    raw.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", vocab["<s>"])])
    return PreTrainedTokenizerFast(
        tokenizer_object=raw, bos_token="<s>", eos_token="</s>", pad_token="<pad>", unk_token="<unk>"
    )


def build_tiny_prm(
    path: str | Path,
    kind: str,
    *,
    step_tag: str | None = "ки",
    num_labels: int | None = None,
    seed: int = 0,
    hidden_size: int = 32,
    num_layers: int = 2,
    max_positions: int = 4096,
) -> Path:
    """Write a tiny random PRM of ``kind`` (its head and label count) to ``path``; return the path.

    ``num_labels`` overrides the kind's label count (to build a mismatching
    checkpoint on purpose).
    """
    import torch
    import transformers

    architecture, labels = HEADS[kind]
    tokenizer = _tokenizer(step_tag)
    config = transformers.LlamaConfig(  # type: ignore[call-arg]  # num_labels: a PretrainedConfig kwarg the stubs omit
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=max_positions,
        initializer_range=0.2,  # wide enough that step probabilities differ visibly
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        num_labels=num_labels or labels or 2,
    )
    torch.manual_seed(seed)
    model = getattr(transformers, architecture)(config)
    path = Path(path)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path
