"""Model inputs per PRM kind, batched forward passes, per-step probabilities.

Each kind's encoder mirrors the input format its family is trained on (the
reference for each is named in its docstring), because a PRM scored on a
format it never saw returns confident nonsense.  An encoder turns one
completion into :class:`Input` records: token ids plus the positions whose
logits hold a step's verdict (none for sequence classification, whose head
pools the last token itself).  Inputs are sorted by length before batching so
padding stays small; padding is on the right with an attention mask, so a
row's logits do not depend on what it was batched with.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .loading import Loaded, PRMModelError, load
from .rewards import PRMParams, aggregate, prompt_text, split_steps

__all__ = ["Input", "encode", "score_completions", "step_probabilities"]

DEFAULT_MODEL_SEPARATOR = "\n"  # TRL's former PRMConfig.step_separator default; Math-Shepherd's line break


@dataclass
class Input:
    """One model input: ``ids``, and the ``positions`` scored (token kinds) in step order."""

    owner: int
    ids: list[int]
    positions: list[int]


def _truncate_left(item: Input, max_length: int, bos: int | None) -> Input:
    """Drop tokens after the BOS (when the input starts with one) until ``max_length`` fit; drop lost positions."""
    cut = len(item.ids) - max_length
    if cut <= 0:
        return item
    keep = 1 if bos is not None and item.ids[:1] == [bos] else 0
    ids = item.ids[:keep] + item.ids[keep + cut:]
    return Input(item.owner, ids, [p - cut for p in item.positions if p - cut >= keep])


def _token_classification(owner: int, completion: str, prompt: Any, loaded: Loaded, params: PRMParams) -> list[Input]:
    """The former TRL ``PRMTrainer.tokenize_row``: BOS + prompt + (step + separator) per step, no special tokens;
    each step is scored at the last token of its separator."""
    tok = loaded.tokenizer
    steps = split_steps(completion, params.step_separator)
    if not steps:
        return []
    sep = tok(params.model_separator or DEFAULT_MODEL_SEPARATOR, add_special_tokens=False)["input_ids"]
    ids = [tok.bos_token_id] if tok.bos_token_id is not None else []
    ids += tok(prompt_text(prompt), add_special_tokens=False)["input_ids"]
    positions = []
    for step_ids in tok(steps, add_special_tokens=False)["input_ids"]:
        ids += step_ids + sep
        positions.append(len(ids) - 1)
    return [Input(owner, ids, positions)]


def _single_token(tok: Any, text: str) -> int | None:
    """The one non-whitespace token ``text`` encodes to, or None."""
    ids = [t for t in tok(text, add_special_tokens=False)["input_ids"] if tok.decode([t]).strip()]
    return ids[0] if len(ids) == 1 and ids[0] != tok.unk_token_id and text in tok.decode(ids) else None


def shepherd_tokens(loaded: Loaded, params: PRMParams) -> tuple[int, int, int]:
    """(tag, good, bad) token ids, as Math-Shepherd picks them; PRMModelError when one is not a single token."""
    tok = loaded.tokenizer
    found = {name: _single_token(tok, getattr(params, name)) for name in ("step_tag", "good_token", "bad_token")}
    bad = [f"{name}={getattr(params, name)!r}" for name, tid in found.items() if tid is None]
    tag = found["step_tag"]
    if tag is not None and tok(f"1 {params.step_tag}\n2 {params.step_tag}")["input_ids"].count(tag) != 2:
        bad.append(f"step_tag={params.step_tag!r} (merges with the text around it)")
    if bad:
        raise PRMModelError(
            f"PRM {params.model!r} (kind=math_shepherd): the tokenizer has no single token for {', '.join(bad)}; "
            "expected a Math-Shepherd-style causal LM whose vocabulary holds the step tag and the good/bad tokens "
            "(set step_tag, good_token, bad_token to the ones it was trained with)"
        )
    good, wrong = found["good_token"], found["bad_token"]
    assert tag is not None and good is not None and wrong is not None  # a None is in `bad`, raised above
    if good == wrong:
        raise PRMModelError(f"PRM {params.model!r}: good_token and bad_token encode to the same token")
    return tag, good, wrong


def _math_shepherd(owner: int, completion: str, prompt: Any, loaded: Loaded, params: PRMParams) -> list[Input]:
    """Math-Shepherd: ``f"{question} {output}"`` where each step of the output ends with `` ки``, encoded with
    special tokens; each step is scored at its tag."""
    tok, tag = loaded.tokenizer, params.step_tag
    steps = split_steps(completion.replace(tag, ""), params.step_separator)
    if not steps:
        return []
    body = (params.model_separator or DEFAULT_MODEL_SEPARATOR).join(f"{step} {tag}" for step in steps)
    question = prompt_text(prompt)
    ids = tok(f"{question} {body}" if question else body)["input_ids"]
    tag_id = _single_token(tok, tag)
    positions = [i for i, t in enumerate(ids) if t == tag_id]
    if len(positions) != len(steps):
        raise ValueError(
            f"PRM {params.model!r}: found {len(positions)} step tags {tag!r} for {len(steps)} steps in the input "
            "(the tag merges with neighbouring text in this tokenizer)"
        )
    return [Input(owner, ids, positions)]


def _sequence_classification(
    owner: int, completion: str, prompt: Any, loaded: Loaded, params: PRMParams
) -> list[Input]:
    """TRL ``RewardTrainer``: prompt + prefix + EOS for a text prompt, the chat template over the prompt messages
    plus the prefix as the assistant turn for a chat prompt; one input per step prefix."""
    tok = loaded.tokenizer
    steps = split_steps(completion, params.step_separator)
    joiner = params.model_separator or params.step_separator
    chat = isinstance(prompt, list) and bool(getattr(tok, "chat_template", None))
    out = []
    for k in range(1, len(steps) + 1):
        prefix = joiner.join(steps[:k])
        if chat:
            messages = [*prompt, {"role": "assistant", "content": prefix}]
            ids = tok.apply_chat_template(messages, tokenize=True, return_dict=True)["input_ids"]
        else:
            ids = tok(prompt_text(prompt) + prefix + (tok.eos_token or ""))["input_ids"]
        out.append(Input(owner, list(ids), []))
    return out


ENCODERS: dict[str, Callable[..., list[Input]]] = {
    "token_classification": _token_classification,
    "math_shepherd": _math_shepherd,
    "sequence_classification": _sequence_classification,
}


def encode(completions: list[str], prompts: list[Any], loaded: Loaded, params: PRMParams) -> list[Input]:
    """Every completion's inputs, truncated from the left to ``max_length`` (at most the model's positions)."""
    bos = loaded.tokenizer.bos_token_id
    encoder = ENCODERS[params.kind]
    limit = min(params.max_length, loaded.max_positions or params.max_length)
    return [
        _truncate_left(item, limit, bos)
        for i, (completion, prompt) in enumerate(zip(completions, prompts, strict=False))
        for item in encoder(i, completion, prompt, loaded, params)
    ]


def step_probabilities(inputs: list[Input], loaded: Loaded, params: PRMParams) -> list[list[float]]:
    """P(good) for each scored step of each input, in step order (one value per input for sequence classification)."""
    import torch

    pick = _PICKERS[params.kind](loaded, params)
    order = sorted(range(len(inputs)), key=lambda i: len(inputs[i].ids))
    out: list[list[float]] = [[] for _ in inputs]
    with torch.inference_mode():
        for start in range(0, len(order), params.batch_size):
            rows = order[start:start + params.batch_size]
            width = max(len(inputs[i].ids) for i in rows)
            ids = torch.full((len(rows), width), loaded.pad_id, dtype=torch.long)
            mask = torch.zeros((len(rows), width), dtype=torch.long)
            for r, i in enumerate(rows):
                ids[r, : len(inputs[i].ids)] = torch.tensor(inputs[i].ids)
                mask[r, : len(inputs[i].ids)] = 1
            chunk = [inputs[i] for i in rows]
            for i, probs in zip(rows, pick(ids.to(loaded.device), mask.to(loaded.device), chunk), strict=False):
                out[i] = probs
    return out


def _token_classification_picker(loaded: Loaded, params: PRMParams):
    def pick(ids, mask, chunk):
        logits = loaded.model(input_ids=ids, attention_mask=mask).logits.float()
        return [logits[r, x.positions].softmax(-1)[:, 1].tolist() for r, x in enumerate(chunk)]

    return pick


def _math_shepherd_picker(loaded: Loaded, params: PRMParams):
    import torch

    _, good, bad = shepherd_tokens(loaded, params)
    sliced = "logits_to_keep" in inspect.signature(loaded.model.forward).parameters

    def pick(ids, mask, chunk):
        kwargs: dict[str, Any] = {}
        keep = sorted({p for x in chunk for p in x.positions})
        if sliced and keep:  # the LM head only on the tag positions: [B, T, vocab] logits never materialise
            kwargs["logits_to_keep"] = torch.tensor(keep, device=ids.device)
        logits = loaded.model(input_ids=ids, attention_mask=mask, **kwargs).logits[..., [good, bad]].float()
        column = {p: j for j, p in enumerate(keep)} if "logits_to_keep" in kwargs else None
        return [
            logits[r, [column[p] for p in x.positions] if column else x.positions].softmax(-1)[:, 0].tolist()
            for r, x in enumerate(chunk)
        ]

    return pick


def _sequence_classification_picker(loaded: Loaded, params: PRMParams):
    def pick(ids, mask, chunk):
        logits = loaded.model(input_ids=ids, attention_mask=mask).logits.float()
        return [[p] for p in logits[:, 0].sigmoid().tolist()]

    return pick


_PICKERS = {
    "token_classification": _token_classification_picker,
    "math_shepherd": _math_shepherd_picker,
    "sequence_classification": _sequence_classification_picker,
}


def score_completions(completions: list[str], prompts: list[Any], params: PRMParams) -> list[float | None]:
    """The ``prm`` reward: load (cached), check, encode, run in batches, aggregate per completion."""
    loaded = load(params.model, params.kind, params.device, params.dtype)
    if params.kind == "math_shepherd":
        shepherd_tokens(loaded, params)  # a missing tag or good/bad token is a load-time error, even with no steps
    inputs = encode(completions, prompts, loaded, params)
    per_completion: list[list[float]] = [[] for _ in completions]
    for item, probs in zip(inputs, step_probabilities(inputs, loaded, params), strict=False):
        per_completion[item.owner].extend(probs)
    return [aggregate(probs, params.aggregation) for probs in per_completion]
