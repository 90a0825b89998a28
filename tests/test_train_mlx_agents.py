"""Agents on the MLX host: the agent loop inside mlx-lm-lora's GRPO trainer, with a real environment pack.

The policy is ``builtin:tiny-tools`` warmed up to open with a ``read`` tool
call (:mod:`agent_helpers`, as the TRL agent tests), loaded by ``mlx_lm``;
the environment is the test agent pack's ``notes`` (the CLI run's
``step_notes``: its reward per turn).  One run goes through the real CLI;
the loss mask is checked on a real episode of the same model.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml
from agent_helpers import CALL, ROWS, shared_warm_up
from conftest import GRPO_HOST, write_jsonl
from train_helpers import read_metrics

# An SFT warm-up with torch, then MLX episodes and training runs: minutes on a shared CPU, so past the suite's 600 s
# per test for the first test, whose setup does the warm-up (a limit against hangs, not a speed assertion).
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

pytest.importorskip("mlx_lm_lora", reason="the mlx extra is not installed")


@pytest.fixture(scope="module")
def warm(tmp_path_factory, packs):
    return shared_warm_up(tmp_path_factory, packs["agentpack"])


@pytest.fixture(scope="module")
def mlx_agent_run(warm, tmp_path_factory, packs, env):
    root = tmp_path_factory.mktemp("mlx-agent-run")
    write_jsonl(root / "rows.jsonl", ROWS)
    config = {"model": str(warm), "data": "rows.jsonl", "rewards": "seen_tools:1, r1_strict_format:0",
              "environment": "step_notes", "max_tool_calls": 2, "group_size": 2, "batch_size": 2, "max_steps": 2,
              "max_completion_length": 120, "temperature": 0.3, "learning_rate": 1e-5, "output_dir": "out",
              "audit": "off", "backend": "mlx"}
    (root / "run.yaml").write_text(yaml.safe_dump(config))
    run_env = {**env, "PYTHONPATH": str(packs["agentpack"]), "SEEN_FILE": str(root / "seen.jsonl")}
    proc = subprocess.run([GRPO_HOST, "train", "run.yaml"], capture_output=True, text=True, env=run_env, cwd=root,
                          timeout=900)
    return root, proc


def test_mlx_runs_the_environment_and_the_rewards_receive_the_trajectories(mlx_agent_run):
    root, proc = mlx_agent_run
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "(mlx)" in proc.stdout
    seen = [json.loads(line) for line in (root / "seen.jsonl").read_text().splitlines()]
    assert len(seen) == 2 * 2 * 2  # 2 steps x 2 prompts x 2 completions, each scored once
    called = [s for s in seen if s["calls"]]
    assert called, seen  # the warmed-up policy opens with its tool call
    for rollout in called:  # exactly what the environment's tool returned for the call parsed from the tokens
        assert rollout["calls"][0] == ["read", {}] and rollout["results"][0] == ""
    records = [r for r in read_metrics(root / "out") if "reward" in r]
    assert [r["step"] for r in records] == [1, 2]
    assert all(r["tools/call_frequency"] > 0 for r in records)  # TRL's figure, under TRL's name
    assert all(r["tools/failure_frequency"] == 0 for r in records)
    assert sum(r["rewards/seen_tools/mean"] for r in records) > 0
    assert all("rewards/StepNotesSession/mean" in r for r in records)  # the environment's own reward, as on TRL


RISE = {"rewards": "seen_tools:1", "environment": "notes", "max_tool_calls": 1, "group_size": 4, "batch_size": 2,
        "max_steps": 10, "max_completion_length": 120, "temperature": 1.0, "learning_rate": 1e-4, "seed": 1,
        "output_dir": "out", "audit": "off", "backend": "mlx"}
"""The agent run whose reward rises: the undecided warm-up (open with the call or a plain answer, half and half,
each written out surely once begun), sampled at temperature 1.0, so most groups of 4 hold both openings.  Its curves
over seeds, and why the plain warm-up teaches nothing in as many steps, are in benchmarks/agents.md."""


@pytest.fixture(scope="module")
def undecided(tmp_path_factory, packs):
    return shared_warm_up(tmp_path_factory, packs["agentpack"], undecided=True)


def test_the_reward_rises_after_the_warm_up(undecided, tmp_path, packs, env):
    """GRPO through the agent loop teaches the undecided policy to open with its tool call: the share of episodes
    calling ``read`` (``seen_tools``) over the last 3 of 10 steps is above the first 3's by 0.2 or more (seeds 1 to 5
    rose by 0.54, 0.33, 0.62, 0.33 and 0.50: benchmarks/agents.md)."""
    from grpo_host.runs.record import read_record

    write_jsonl(tmp_path / "rows.jsonl", ROWS)
    (tmp_path / "run.yaml").write_text(yaml.safe_dump({**RISE, "model": str(undecided), "data": "rows.jsonl"}))
    proc = subprocess.run([GRPO_HOST, "train", "run.yaml"], capture_output=True, text=True, cwd=tmp_path,
                          timeout=1500, env={**env, "PYTHONPATH": str(packs["agentpack"])})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rollouts = read_record(tmp_path / "out" / "rollouts").to_pylist()
    assert any(r["advantage"] for r in rollouts if r["step"] == 1)  # the warm-up left variance to learn from
    rewards = [r["rewards/seen_tools/mean"] for r in read_metrics(tmp_path / "out") if "reward" in r]
    assert len(rewards) == 10
    assert sum(rewards[-3:]) / 3 >= sum(rewards[:3]) / 3 + 0.2, rewards


def test_the_record_holds_multi_turn_trajectories_with_tool_results(mlx_agent_run):
    from grpo_host.runs.record import read_record

    root, proc = mlx_agent_run
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = read_record(root / "out" / "rollouts").to_pylist()
    assert len(rows) == 8
    trajectories = [json.loads(r["trajectory"]) for r in rows if r["trajectory"]]
    multi = [t for t in trajectories if [m["role"] for m in t][:2] == ["assistant", "tool"]]
    assert multi, trajectories
    for messages in multi:
        assert messages[0]["tool_calls"][0]["function"] == {"name": "read", "arguments": {}}
        assert messages[1] == {"role": "tool", "name": "read", "content": ""}
    assert {r["step"] for r in rows} == {1, 2}
    # the record's total is what mlx-lm-lora trained on: the environment's per-turn reward (0.25 a read) added in
    assert any(r["reward/StepNotesSession"] for r in rows)
    logged = {r["step"]: r["reward"] for r in read_metrics(root / "out") if "reward" in r}
    for step, mean in logged.items():
        totals = [r["total"] for r in rows if r["step"] == step and r["total"] is not None]
        assert mean == pytest.approx(sum(totals) / len(totals))


def test_the_loss_mask_excludes_exactly_the_tool_result_tokens(warm, packs):
    import mlx.core as mx
    from mlx_lm import load
    from mlx_lm.sample_utils import make_sampler
    from mlx_lm_lora.trainer.grpo_trainer import _prepare_grpo_inputs

    from grpo_host.discovery.plugins import load_plugins
    from grpo_host.training.agent_loop import ChatTools, Episode, run_episode
    from grpo_host.training.backends.mlx_agents import _sampling, loss_inputs

    sys.path.insert(0, str(packs["agentpack"]))
    try:
        notes = load_plugins(env={"GRPO_HOST_LOAD_PLUGINS": "agentpack"}).registry.environment("notes")
    finally:
        sys.path.remove(str(packs["agentpack"]))
    session = notes.session_class()(rows=[{"answer": "1"}])
    model, tokenizer = load(str(warm))
    chat = ChatTools(tokenizer._tokenizer)
    generate = _sampling(model, make_sampler(0.0), set(tokenizer.eos_token_ids), [])
    episode = run_episode(chat, session, ROWS[0]["prompt"], 0, generate, max_tokens=120, max_tool_calls=1)

    assert [m["role"] for m in episode.messages][:2] == ["assistant", "tool"] and episode.calls == 1
    call = tokenizer.encode(CALL, add_special_tokens=False)
    suffix = chat.tool_suffix([episode.messages[1]])
    assert episode.ids[:len(call) + len(suffix)] == call + suffix  # the call, then the tool result as rendered
    assert "<tool_response>" in tokenizer.decode(suffix)

    inputs, mask, lengths = loss_inputs([episode])
    start = len(episode.prompt_ids) - 1  # the target at position p is token p + 1
    row = [bool(x) for x in mask[0].tolist()]
    assert inputs[0].tolist()[:len(episode.prompt_ids) + len(episode.ids)] == episode.prompt_ids + episode.ids
    assert not any(row[:start]) and not any(row[start + len(episode.ids):])  # prompt and padding: out
    trained = [t for t, m in zip(episode.ids, row[start:], strict=False) if m]
    masked = [t for t, m in zip(episode.ids, row[start:start + len(episode.ids)], strict=True) if not m]
    assert masked == suffix  # the tool result's tokens, and only they, are out of the loss
    assert trained == call + episode.ids[len(call) + len(suffix):]
    assert lengths.tolist() == [len(episode.ids) - len(suffix)]

    # without tool results the layout is mlx-lm-lora's own: the same inputs and mask as _prepare_grpo_inputs
    plain = Episode(episode.prompt_ids, ids=call, mask=[1] * len(call))
    ours = loss_inputs([plain])
    theirs = _prepare_grpo_inputs(([episode.prompt_ids],), [mx.array(call, dtype=mx.int32)], [0])
    assert ours[0].tolist() == theirs[0].tolist() and ours[1].tolist() == theirs[1].tolist()


def test_validation_batches_run_episodes_too(packs, env, tmp_path):
    """The trainer takes its next training batch before it evaluates: both batches' rows stay known to the loop.

    The untrained builtin:tiny-tools is enough here (no call needs to be made), so no warm-up.
    """
    write_jsonl(tmp_path / "rows.jsonl", ROWS)
    config = {"model": "builtin:tiny-tools", "data": {"train": "rows.jsonl", "val": "rows.jsonl"},
              "rewards": "seen_tools:1", "environment": "notes", "max_tool_calls": 1, "group_size": 2,
              "batch_size": 2, "max_steps": 2, "eval_every": 1, "max_completion_length": 16, "output_dir": "out",
              "audit": "off", "backend": "mlx"}
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(config))
    proc = subprocess.run([GRPO_HOST, "train", "run.yaml"], capture_output=True, text=True, cwd=tmp_path,
                          timeout=600, env={**env, "PYTHONPATH": str(packs["agentpack"])})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    records = read_metrics(tmp_path / "out")
    evals = [r for r in records if "eval_loss" in r]
    assert evals and all("eval_tools/call_frequency" in r and "eval_rewards/NotesSession/mean" in r for r in evals)
    assert [r["step"] for r in records if "reward" in r] == [1, 2]


def test_the_policy_gradient_comes_from_the_generated_tokens_only(warm):
    """mlx-lm-lora's own ``grpo_loss`` over :func:`loss_inputs` has the gradient of the GRPO objective written out
    by hand over the generated tokens (``-mean_i(A_i * mean_t log p_it)``, on-policy, beta 0): tool-result tokens
    add nothing, and counting them in would change it."""
    import mlx.core as mx
    import mlx.nn as nn
    from mlx.utils import tree_flatten
    from mlx_lm import load
    from mlx_lm_lora.trainer import grpo_trainer

    from grpo_host.training.agent_loop import Episode
    from grpo_host.training.backends.mlx_agents import loss_inputs

    model, tokenizer = load(str(warm))
    prompt = tokenizer.encode("What is in your notes?")
    call, result, answer = (tokenizer.encode(t, add_special_tokens=False)
                            for t in (CALL, "<tool_response>\n\n</tool_response>", "none"))
    episodes = [Episode(prompt, ids=call + result + answer,
                        mask=[1] * len(call) + [0] * len(result) + [1] * len(answer)),
                Episode(prompt + prompt[:3], ids=answer, mask=[1] * len(answer))]
    advantages = mx.array([1.5, -0.5])

    def theirs(model, mask_of=lambda e: e.mask):
        saved = grpo_trainer._prepare_grpo_inputs
        grpo_trainer._prepare_grpo_inputs = lambda *_: loss_inputs(
            [Episode(e.prompt_ids, ids=e.ids, mask=mask_of(e)) for e in episodes])
        try:
            return grpo_trainer.grpo_loss(model, None, ([prompt, prompt + prompt[:3]],), completions=[None, None],
                                          batch_indices=[0, 1], advantages=advantages, beta=0.0, epsilon=0.2,
                                          max_tokens=120)[0]
        finally:
            grpo_trainer._prepare_grpo_inputs = saved

    def by_hand(model):
        total = 0.0
        for i, e in enumerate(episodes):
            sequence = mx.array([e.prompt_ids + e.ids])
            logps = nn.log_softmax(model(sequence[:, :-1])[0].astype(mx.float32), axis=-1)
            picked = [logps[len(e.prompt_ids) - 1 + t, token] for t, token in enumerate(e.ids) if e.mask[t]]
            total = total - advantages[i] * mx.stack(picked).mean()
        return total / len(episodes)

    def grads(fn):
        return dict(tree_flatten(nn.value_and_grad(model, fn)(model)[1]))

    ours, reference = grads(theirs), grads(by_hand)
    assert ours.keys() == reference.keys()
    for key, value in reference.items():
        assert mx.allclose(ours[key], value, atol=1e-5, rtol=1e-3).item(), key
    unmasked = grads(lambda m: theirs(m, lambda e: [1] * len(e.ids)))  # tool results trained on: another gradient
    assert not all(mx.allclose(unmasked[k], v, atol=1e-5, rtol=1e-3).item() for k, v in reference.items())


def test_kept_kv_caches_leave_the_episodes_as_they_were(warm, packs):
    """The agent loop's sampler keeps each episode's KV cache across its turns and shares each prompt's prefill
    across its group: greedy episodes (two turns each) have the tokens, masks and messages of a sampler that reads
    the whole context at every turn, as the loop did before."""
    import mlx.core as mx
    from mlx_lm import load
    from mlx_lm.generate import generate_step
    from mlx_lm.sample_utils import make_sampler

    from grpo_host.discovery.plugins import load_plugins
    from grpo_host.training.agent_loop import ChatTools, run_episode
    from grpo_host.training.backends.mlx_agents import _sampling

    sys.path.insert(0, str(packs["agentpack"]))
    try:
        notes = load_plugins(env={"GRPO_HOST_LOAD_PLUGINS": "agentpack"}).registry.environment("notes")
    finally:
        sys.path.remove(str(packs["agentpack"]))
    model, tokenizer = load(str(warm))
    chat, greedy, stops = ChatTools(tokenizer._tokenizer), make_sampler(0.0), set(tokenizer.eos_token_ids)

    def uncached(context: list[int], budget: int) -> list[int]:
        out: list[int] = []
        for token, _ in generate_step(mx.array(context), model, max_tokens=budget, sampler=greedy):
            out.append(int(token))
            if out[-1] in stops:
                break
        return out

    prompts: dict = {}
    for row_id, row in enumerate(ROWS):
        for _ in range(2):  # the second episode of a prompt starts from the first one's prefill
            kept, plain = (run_episode(chat, notes.session_class()(rows=[{"answer": "1"}] * 2), row["prompt"], row_id,
                                       generate, max_tokens=120, max_tool_calls=2)
                           for generate in (_sampling(model, greedy, stops, [], prompts), uncached))
            assert kept.calls >= 1 and len(kept.messages) >= 3  # a call, its result, another turn
            assert (kept.prompt_ids, kept.ids, kept.mask, kept.messages) == (
                plain.prompt_ids, plain.ids, plain.mask, plain.messages)
    assert len(prompts) == len(ROWS)
