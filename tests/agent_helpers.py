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
OBSERVATION = "You can write notes."  # what the notes environment's reset appends to the prompt


def shared_warm_up(tmp_path_factory, pack: Path) -> Path:
    """:func:`warm_up` once per test session: the warm-up is deterministic, so the TRL and MLX agent tests (often
    on two xdist workers) share one model; the first worker to take the lock makes it in the session's folder."""
    import os

    from filelock import FileLock

    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # the session's, shared by its workers
    out = root / "warm-tiny-tools" / "model"
    with FileLock(str(root / "warm-tiny-tools.lock")):
        if not (out / "config.json").is_file():
            warm_up(out, pack)
    return out


def warm_up(out: Path, pack: Path) -> Path:
    """builtin:tiny-tools fine-tuned to answer every row's prompt (as TRL renders it) with CALL."""
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
    target = tokenizer.encode(CALL, add_special_tokens=False)
    examples = []
    for row in ROWS:
        messages = [{**row["prompt"][-1], "content": row["prompt"][-1]["content"] + OBSERVATION}]
        prompt = tokenizer.apply_chat_template(messages, tools=[getattr(session, t) for t in env.tools],
                                               add_generation_prompt=True, tokenize=False, chat_template=template)
        ids = tokenizer.encode(prompt, add_special_tokens=False)
        examples.append((torch.tensor([ids + target]), torch.tensor([[-100] * len(ids) + target])))
    torch.manual_seed(0)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    for step in range(1000):  # until greedy decoding gives CALL for every row: a step count alone did not hold
        if step % 50 == 0 and step and all(_says_call(model, ids, labels) for ids, labels in examples):
            break
        ids, labels = examples[step % len(examples)]
        model(input_ids=ids, labels=labels).loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    else:
        raise AssertionError("the warm-up did not teach builtin:tiny-tools to open with its tool call")
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
