"""``builtin:tiny``: a small Llama with a character-level tokenizer, built locally.

The README's first command, the CI tests and the benchmarks need a causal LM
that exists on a fresh machine with no internet.  This module writes one
from nothing: random weights (numpy, fixed seed) in safetensors, a Llama
``config.json`` and a ``tokenizer.json`` whose vocabulary is printable ASCII
plus a few special tokens, with a chat template.  It imports neither torch
nor transformers nor mlx, so every backend loads the same files with its own
engine (``transformers.AutoModelForCausalLM`` or ``mlx_lm.load``).

Why these choices:

* ``llama``, not ``qwen2``: transformers rebuilds a saved tokenizer for some
  model types (qwen2) from its own defaults; for ``llama`` with
  ``tokenizer_class: PreTrainedTokenizerFast`` it loads ``tokenizer.json``
  as written.
* ``rope_theta`` sits at the top level of ``config.json`` (next to
  transformers 5's ``rope_parameters``) so mlx-lm, which reads the top-level
  key, uses the same value as transformers.
* One token per character: a model this small can learn to emit characters
  that a reward asks for within a few hundred GRPO steps on a CPU.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from ..discovery import settings
from ..errors import UserError

__all__ = ["TINY", "TINY_CONFIG", "TINY_TOOLS", "build_tiny", "is_builtin", "resolve_model", "tiny_model_dir",
           "tiny_vocab"]

TINY = "builtin:tiny"
TINY_TOOLS = "builtin:tiny-tools"
"""The same model with Qwen3's chat template (TRL's copy, read from the installed trl when the model is built) and
``<|im_start|>``/``<|im_end|>`` as single tokens: a template TRL can parse tool calls from (``add_response_schema``
knows it), for agent runs on a machine with no downloads, on TRL or on the MLX backend's agent loop."""
VERSION = 1  # bump when the files change, so old caches are not reused

SPECIAL = ["<pad>", "<s>", "</s>", "<unk>", "<|system|>", "<|user|>", "<|assistant|>"]
TOOLS_SPECIAL = ["<pad>", "<s>", "<|im_end|>", "<unk>", "<|im_start|>"]
TINY_CONTEXT = 512
"""Positions of the plain tiny model."""
TOOLS_CONTEXT = 4096
"""Positions of the tools variant: the template's tool descriptions alone run to hundreds of characters."""
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|' + message['role'] + '|>' + message['content'] + '</s>' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>' }}{% endif %}"
)
"""Each turn is ``<|role|>content</s>``; the generation prompt opens an assistant turn, which ends at ``</s>`` (EOS)."""

TINY_CONFIG = {
    "hidden_size": 64,
    "intermediate_size": 256,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 4,
    "max_position_embeddings": TINY_CONTEXT,
    "rope_theta": 10000.0,
    "rms_norm_eps": 1e-5,
}


def tiny_vocab(special: list[str] = SPECIAL) -> dict[str, int]:
    """Special tokens first, then newline, tab and printable ASCII: one id per character."""
    chars = ["\n", "\t"] + [chr(c) for c in range(32, 127)]
    return {tok: i for i, tok in enumerate(special + chars)}


def is_builtin(model: str) -> bool:
    return model.startswith("builtin:")


def resolve_model(model: str, cache_dir: str | Path | None = None) -> str:
    """The path or hub id an engine should load: ``builtin:tiny`` becomes its (built on demand) folder."""
    if not is_builtin(model):
        return model
    if model not in (TINY, TINY_TOOLS):
        raise UserError(f"unknown built-in model {model!r}; available: {TINY}, {TINY_TOOLS}")
    return str(tiny_model_dir(cache_dir, tools=model == TINY_TOOLS))


def tiny_model_dir(cache_dir: str | Path | None = None, *, tools: bool = False) -> Path:
    """The cached ``builtin:tiny`` (or, with ``tools``, ``builtin:tiny-tools``) folder, built the first time
    (atomically: concurrent runs are safe).

    The folder lies under :func:`grpo_host.discovery.settings.cache_dir`.
    """
    root = Path(cache_dir) if cache_dir is not None else settings.cache_dir()
    target = root / f"tiny-llama{'-tools' if tools else ''}-v{VERSION}"
    if (target / "config.json").exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".tiny-", dir=target.parent))
    try:
        build_tiny(staging, tools=tools)
        try:
            staging.rename(target)
        except OSError:  # another process finished first; its files are identical
            if not (target / "config.json").exists():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def build_tiny(path: str | Path, *, seed: int = 0, tools: bool = False) -> Path:
    """Write the model (config.json, model.safetensors) and tokenizer files into ``path`` (``tools``: TINY_TOOLS)."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    special = TOOLS_SPECIAL if tools else SPECIAL
    vocab = tiny_vocab(special)
    eos = special[2]
    _write_tokenizer(path, vocab, special, eos, _qwen3_template() if tools else CHAT_TEMPLATE,
                     TOOLS_CONTEXT if tools else TINY_CONTEXT)
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "vocab_size": len(vocab),
        **TINY_CONFIG,
        **({"max_position_embeddings": TOOLS_CONTEXT} if tools else {}),
        "rope_parameters": {"rope_type": "default", "rope_theta": TINY_CONFIG["rope_theta"]},
        "hidden_act": "silu",
        "attention_bias": False,
        "mlp_bias": False,
        "tie_word_embeddings": False,
        "initializer_range": 0.02,
        "bos_token_id": vocab["<s>"],
        "eos_token_id": vocab[eos],
        "pad_token_id": vocab["<pad>"],
        "torch_dtype": "float32",
        "dtype": "float32",
    }
    (path / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    generation = {"bos_token_id": vocab["<s>"], "eos_token_id": vocab[eos], "pad_token_id": vocab["<pad>"]}
    (path / "generation_config.json").write_text(json.dumps(generation, indent=2) + "\n")
    _write_weights(path / "model.safetensors", config, seed)
    return path


def _write_weights(file: Path, config: dict, seed: int) -> None:
    """Llama parameter names and shapes, normal(0, initializer_range) like transformers' own init."""
    import numpy as np
    from safetensors.numpy import save_file

    rng = np.random.default_rng(seed)
    h, inter, vocab = config["hidden_size"], config["intermediate_size"], config["vocab_size"]
    kv = h // config["num_attention_heads"] * config["num_key_value_heads"]
    std = config["initializer_range"]

    def normal(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * std).astype(np.float32)

    tensors = {"model.embed_tokens.weight": normal(vocab, h), "model.norm.weight": np.ones(h, np.float32),
               "lm_head.weight": normal(vocab, h)}
    for i in range(config["num_hidden_layers"]):
        p = f"model.layers.{i}."
        tensors.update({
            p + "self_attn.q_proj.weight": normal(h, h),
            p + "self_attn.k_proj.weight": normal(kv, h),
            p + "self_attn.v_proj.weight": normal(kv, h),
            p + "self_attn.o_proj.weight": normal(h, h),
            p + "mlp.gate_proj.weight": normal(inter, h),
            p + "mlp.up_proj.weight": normal(inter, h),
            p + "mlp.down_proj.weight": normal(h, inter),
            p + "input_layernorm.weight": np.ones(h, np.float32),
            p + "post_attention_layernorm.weight": np.ones(h, np.float32),
        })
    save_file(tensors, str(file), metadata={"format": "pt"})


def _qwen3_template() -> str:
    """Qwen3's chat template exactly as the installed TRL ships it (TRL recognises templates by their text)."""
    from importlib.resources import files

    return (files("trl") / "chat_templates" / "qwen3.jinja").read_text()


def _write_tokenizer(path: Path, vocab: dict[str, int], special: list[str], eos: str, chat_template: str,
                     context: int) -> None:
    """A ``tokenizers`` WordLevel model over single characters, with the special tokens as added tokens."""
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers

    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    tok.decoder = decoders.Fuse()
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in special])
    tok.save(str(path / "tokenizer.json"))
    tokenizer_config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": "<s>",
        "eos_token": eos,
        "pad_token": "<pad>",
        "unk_token": "<unk>",
        "model_max_length": context,
        "padding_side": "left",
        "clean_up_tokenization_spaces": False,
        "chat_template": chat_template,
    }
    (path / "tokenizer_config.json").write_text(json.dumps(tokenizer_config, indent=2) + "\n")
    special_map = {k: tokenizer_config[k] for k in ("bos_token", "eos_token", "pad_token", "unk_token")}
    (path / "special_tokens_map.json").write_text(json.dumps(special_map, indent=2) + "\n")
