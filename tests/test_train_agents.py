"""Agents on the TRL host: an environment from an installed pack, tool calls executed, trajectories scored.

The policy is ``builtin:tiny-tools`` after a short SFT warm-up on one
demonstration (open with a ``read`` tool call), so that a real
``trl.GRPOTrainer`` run generates real tool calls: TRL parses them with its
own response schema for the model's Qwen3 chat template, calls the
environment's guarded tools, and hands the rewards whole trajectories.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import GRPO_HOST, write_jsonl
from train_helpers import read_metrics

pytestmark = pytest.mark.slow

ROWS = [{"prompt": [{"role": "user", "content": "What is in your notes?"}], "answer": "1"},
        {"prompt": [{"role": "user", "content": "Check your notes."}], "answer": "2"}]
CALL = '<tool_call>\n{"name": "read", "arguments": {}}\n</tool_call><|im_end|>'
OBSERVATION = "You can write notes."  # what the notes environment's reset appends to the prompt


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


@pytest.fixture(scope="module")
def agent_run(tmp_path_factory, packs, env):
    root = tmp_path_factory.mktemp("agent")
    model = warm_up(root / "warm", packs["agentpack"])
    write_jsonl(root / "rows.jsonl", ROWS)
    config = {"model": str(model), "data": "rows.jsonl", "rewards": "seen_tools:1, r1_strict_format:0",
              "environment": "notes", "max_tool_calls": 2, "group_size": 2, "batch_size": 2, "max_steps": 2,
              "max_completion_length": 120, "temperature": 0.3, "learning_rate": 1e-5, "output_dir": "out",
              "audit": "off"}
    (root / "run.yaml").write_text(yaml.safe_dump(config))
    run_env = {**env, "PYTHONPATH": str(packs["agentpack"]), "SEEN_FILE": str(root / "seen.jsonl"),
               "TRL_EXPERIMENTAL_SILENCE": "1"}
    proc = subprocess.run([GRPO_HOST, "train", "run.yaml"], capture_output=True, text=True, env=run_env, cwd=root,
                          timeout=900)
    return root, proc, run_env


def test_the_rewards_receive_the_trajectories_trl_generated(agent_run):
    root, proc, _ = agent_run
    assert proc.returncode == 0, proc.stdout + proc.stderr
    seen = [json.loads(line) for line in (root / "seen.jsonl").read_text().splitlines()]
    assert len(seen) == 2 * 2 * 2  # 2 steps x 2 prompts x 2 completions, each scored once
    called = [s for s in seen if s["calls"]]
    assert called, seen  # the warmed-up policy opens with its tool call
    for rollout in called:  # exactly what the environment's tool returned for the call TRL parsed
        assert rollout["calls"][0] == ["read", {}] and rollout["results"][0] == ""
    records = [r for r in read_metrics(root / "out") if "reward" in r]
    assert [r["step"] for r in records] == [1, 2]
    assert all(r["tools/call_frequency"] > 0 for r in records)  # TRL's own count agrees that tools were called
    assert sum(r["rewards/seen_tools/mean"] for r in records) > 0
    assert all("rewards/NotesSession/mean" in r for r in records)  # the environment's own reward, through TRL


def test_the_same_config_on_mlx_is_refused_before_any_data_is_read(agent_run, tmp_path):
    root, _, run_env = agent_run
    config = yaml.safe_load((root / "run.yaml").read_text())
    (tmp_path / "run.yaml").write_text(yaml.safe_dump({**config, "data": "no-such-rows.jsonl"}))
    proc = subprocess.run([GRPO_HOST, "train", "run.yaml", "--backend", "mlx"], capture_output=True, text=True,
                          env=run_env, cwd=tmp_path, timeout=120)
    assert proc.returncode == 2 and "the mlx backend has no multi-turn rollout loop" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and "no-such-rows" not in proc.stderr


@pytest.mark.parametrize(("rollout", "code", "expected"), [
    ("scripted", 0, "2 steps in"),
    ("one_short", 2, "rollout 'one_short' (pack grpo-test-agent 0.4.0) returned 3 prompt_ids for 4 prompts"),
])
def test_a_packs_rollout_function_generates_and_its_counts_are_checked(packs, env, tmp_path, rollout, code, expected):
    write_jsonl(tmp_path / "rows.jsonl", [{"prompt": "2+2?", "answer": "4"}, {"prompt": "3+1?", "answer": "4"}])
    config = {"model": "builtin:tiny", "data": "rows.jsonl", "rewards": "accuracy", "rollout": rollout,
              "group_size": 2, "batch_size": 2, "max_steps": 2, "max_completion_length": 32, "output_dir": "out",
              "audit": "off"}
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(config))
    proc = subprocess.run([GRPO_HOST, "train", "run.yaml"], capture_output=True, text=True, cwd=tmp_path, timeout=600,
                          env={**env, "PYTHONPATH": str(packs["agentpack"]), "TRL_EXPERIMENTAL_SILENCE": "1"})
    assert proc.returncode == code and expected in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    if code == 0:  # the rewards scored what the rollout function generated
        assert all(r["rewards/accuracy/mean"] == 1.0 for r in read_metrics(tmp_path / "out") if "reward" in r)
