"""Trailing EOS and pad strings taken off a completion before it is scored.

Trainers hand rewards text that still carries the tokenizer's end markers:
OpenRLHF's query is ``decode(prompt_ids + action_ids,
skip_special_tokens=False)``, so most responses end in ``<|im_end|>`` or
``</s>`` (and padding after it); a ``$``-anchored format reward then fails a
well-formed answer, and an unclosed tag swallows the marker.  The reward
should see the response the model meant, so the end markers are stripped
before scoring, never anything inside the text: only a run of marker strings
(and the whitespace between and after them) at the very end goes.

Which strings: the tokenizer's own EOS and pad tokens (a local path or a hub
id, loaded with ``transformers.AutoTokenizer`` only for its special tokens),
any listed explicitly, or, when neither is given, :data:`COMMON_END_TOKENS`,
the end markers of the widely used chat families.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..errors import UserError

__all__ = ["COMMON_END_TOKENS", "end_tokens", "strip_end_tokens"]

COMMON_END_TOKENS: tuple[str, ...] = (
    "<|im_end|>", "<|endoftext|>", "</s>", "<|eot_id|>", "<|end_of_text|>", "<|end|>", "<eos>", "<end_of_turn>",
    "<pad>", "<|EOT|>", "<｜end▁of▁sentence｜>", "<|return|>",
)
"""EOS and pad strings of the Qwen/ChatML, Llama 2/3, Mistral, Phi, Gemma, DeepSeek and gpt-oss tokenizers."""


def end_tokens(tokenizer: str | None = None, tokens: Iterable[str] = ()) -> tuple[str, ...]:
    """The strings to strip: ``tokenizer``'s EOS and pad tokens plus ``tokens``; :data:`COMMON_END_TOKENS` when
    neither is given.  A tokenizer that cannot be loaded raises ``ValueError`` naming it (a start-up error)."""
    found = [t for t in tokens if t]
    if tokenizer:
        try:
            from transformers import AutoTokenizer

            loaded = AutoTokenizer.from_pretrained(tokenizer)
        except Exception as exc:  # OSError for a missing path or hub id, ValueError for a folder without one
            raise UserError(f"tokenizer {tokenizer!r} cannot be loaded for its special tokens: {exc}") from None
        found += [t for t in (loaded.eos_token, loaded.pad_token) if isinstance(t, str) and t]
    elif not found:
        found = list(COMMON_END_TOKENS)
    return tuple(dict.fromkeys(found))


def strip_end_tokens(text: str, tokens: Sequence[str]) -> str:
    """``text`` without the run of ``tokens`` at its end (and the whitespace after each stripped token).

    Whitespace before the first stripped token stays: ``"</answer>\\n<|im_end|>"`` becomes ``"</answer>\\n"``.
    """
    if not tokens or not isinstance(text, str):
        return text
    while True:
        end = text.rstrip()
        for token in tokens:
            if end.endswith(token):
                text = end[:-len(token)]
                break
        else:
            return text
