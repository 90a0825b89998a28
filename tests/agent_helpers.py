"""What the agent tests of both training hosts share: the rows, and builtin:tiny-tools warmed up to call a tool.

The policy is ``builtin:tiny-tools`` after a short SFT warm-up on one
demonstration (open with a ``read`` tool call), so that a real training run
generates real tool calls, parsed with TRL's response schema for the model's
Qwen3 chat template.
"""

from __future__ import annotations

from pathlib import Path

ROWS = [{"prompt": [{"role": "user", "content": "What is in your notes?"}], "answer": "1"},
        {"prompt": [{"role": "user", "content": "Check your notes."}], "answer": "2"}]
CALL = '<tool_call>\n{"name": "read", "arguments": {}}\n</tool_call><|im_end|>'
ANSWER = "I have no notes.<|im_end|>"
"""The other opening of the undecided warm-up (:func:`warm_up` with ``undecided``): an answer without a call."""
OBSERVATION = "You can write notes."  # what the notes environment's reset appends to the prompt


def shared_warm_up(tmp_path_factory, pack: Path, undecided: bool = False) -> Path:
    """:func:`warm_up` once per test session: the warm-up is deterministic, so the TRL and MLX agent tests (often
    on two xdist workers) share one model; the first worker to take the lock makes it in the session's folder."""
    import os

    from filelock import FileLock

    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # the session's, shared by its workers
    name = "warm-tiny-tools-undecided" if undecided else "warm-tiny-tools"
    out = root / name / "model"
    with FileLock(str(root / f"{name}.lock")):
        if not (out / "config.json").is_file():
            warm_up(out, pack, undecided)
    return out


def warm_up(out: Path, pack: Path, undecided: bool = False) -> Path:
    """builtin:tiny-tools fine-tuned to answer every row's prompt (as TRL renders it) with CALL.

    ``undecided``: with CALL or ANSWER, half and half, each written out
    sure of itself once begun (its rest at probability 0.9 or more), so
    that sampled episodes differ in one decision, whether to call: what a
    reward-rising test needs.  The plain warm-up leaves the call's 59
    characters each slightly unsure instead, so at temperature 1 about half
    the calls come out malformed at a random character, a difference GRPO
    learns little from in a few steps (benchmarks/agents.md).
    """
    import sys

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl.chat_template_utils import get_training_chat_template

    from grpo_host.discovery.plugins import load_plugins
    from grpo_host.training.builtin_model import tiny_model_dir

    sys.path.insert(0, str(pack))
    try:
        env = load_plugins(env={"GRPO_HOST_LOAD_PLUGINS": "agentpack"}).registry.environment("notes")
    finally:
        sys.path.remove(str(pack))
    session = env.session_class()(rows=[{"answer": "1"}])
    source = tiny_model_dir(out.parent / "cache", tools=True)
    tokenizer = AutoTokenizer.from_pretrained(str(source))
    model = AutoModelForCausalLM.from_pretrained(str(source))
    template = get_training_chat_template(tokenizer) or tokenizer.chat_template
    targets = [tokenizer.encode(t, add_special_tokens=False) for t in ((CALL, ANSWER) if undecided else (CALL,))]
    batches = []  # per row, its targets: one step learns both openings of a row, so neither leads at the checks
    for row in ROWS:
        messages = [{**row["prompt"][-1], "content": row["prompt"][-1]["content"] + OBSERVATION}]
        prompt = tokenizer.apply_chat_template(messages, tools=[getattr(session, t) for t in env.tools],
                                               add_generation_prompt=True, tokenize=False, chat_template=template)
        ids = tokenizer.encode(prompt, add_special_tokens=False)
        batches.append([(torch.tensor([ids + t]), torch.tensor([[-100] * len(ids) + t])) for t in targets])
    done = _sure_of_both if undecided else _says_call
    torch.manual_seed(0)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    for step in range(3000 if undecided else 1000):  # until done: a step count alone did not hold
        if step % 50 == 0 and step and all(done(model, ids, labels) for batch in batches for ids, labels in batch):
            break
        sum(model(input_ids=ids, labels=labels).loss for ids, labels in batches[step % len(batches)]).backward()
        optimizer.step()
        optimizer.zero_grad()
    else:
        raise AssertionError(f"the warm-up did not teach builtin:tiny-tools its opening (undecided: {undecided})")
    model.save_pretrained(str(out))
    tokenizer.save_pretrained(str(out))
    return out


def _says_call(model, ids, labels) -> bool:
    """Whether the model's most likely next token is the target's at every position of CALL (so greedy decoding
    writes CALL exactly)."""
    import torch

    with torch.no_grad():
        predicted = model(input_ids=ids).logits[0, :-1].argmax(-1)
    wanted = labels[0, 1:]
    return bool((predicted[wanted != -100] == wanted[wanted != -100]).all())


def _sure_of_both(model, ids, labels) -> bool:
    """Whether the target after its first token has probability 0.9 or more, and its first token between 0.2 and
    0.8 (the other target's opening takes the rest)."""
    import math

    import torch

    with torch.no_grad():
        logps = model(input_ids=ids).logits[0, :-1].log_softmax(-1)
    wanted = labels[0, 1:]
    positions = (wanted != -100).nonzero().flatten()
    picked = logps[positions, wanted[positions]]
    return bool(picked[1:].sum() >= math.log(0.9) and math.log(0.2) <= picked[0] <= math.log(0.8))
