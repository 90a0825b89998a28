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

import pytest
import yaml
from agent_helpers import ROWS, shared_warm_up
from conftest import GRPO_HOST, write_jsonl
from train_helpers import read_metrics

pytestmark = pytest.mark.slow

@pytest.fixture(scope="module")
def agent_run(tmp_path_factory, packs, env):
    root = tmp_path_factory.mktemp("agent")
    model = shared_warm_up(tmp_path_factory, packs["agentpack"])
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
