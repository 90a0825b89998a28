"""``grpo-host train --backend mlx``: mlx-lm-lora's GRPO trainer end to end, through the real CLI, on CPU.

Every run here is a real subprocess training the real ``builtin:tiny``
model with ``mlx_lm_lora``'s ``train_grpo`` (mlx[cpu] on Linux); the tiny
model is built once per session into a temporary cache.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import BIN, GRPO_HOST, write_jsonl
from train_helpers import EXPECTED_SEEN, QUICK, kill_and_resume, meta_config, read_metrics, tenths

from grpo_host.runs.record import RolloutRecord, read_record

pytestmark = pytest.mark.slow  # left out of the fast lane (-m "not slow"): tiny-model training runs

pytest.importorskip("mlx_lm_lora", reason="the mlx extra is not installed")

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "letters.yaml"
MLX = ["--backend", "mlx"]
REWARD_KEYS = ("mean", "std", "coverage", "errors", "timeouts", "seconds")


def train(env, *args: str, cwd: Path = ROOT, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([GRPO_HOST, "train", *args, *MLX], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=timeout)


def _finite_reward_records(out: Path) -> list[dict]:
    records = [r for r in read_metrics(out) if "reward" in r]
    for r in records:
        keys = ["reward", "loss", "kl", "learning_rate", "unscored"]
        keys += [f"rewards/{n}/{k}" for n in ("letter_share", "lowercase_share") for k in REWARD_KEYS]
        for key in keys:
            assert isinstance(r[key], float) and math.isfinite(r[key]), (key, r)
    return records


def test_trains_the_embedded_default_through_the_cli(env, tmp_path):
    out = tmp_path / "run"
    proc = train(env, str(EXAMPLE), *QUICK, "--set", "max_steps=3", "--set", "save_every=2",
                 "--set", f"output_dir={out}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "step 3/3  reward " in proc.stdout and "letter_share " in proc.stdout and "lowercase_share " in proc.stdout
    assert "3 steps in" in proc.stdout and "(mlx)" in proc.stdout
    for name in ("model.safetensors", "config.json", "tokenizer.json", "tokenizer_config.json", "config.yaml",
                 "packs.json", "metrics.jsonl", "summary.json", "checkpoint-2/adapters.safetensors",
                 "checkpoint-2/optimizer.safetensors", "checkpoint-2/trainer_state.json"):
        assert (out / name).exists(), name
    assert not (out / "adapters.safetensors").exists()  # full fine-tune: the model folder holds the weights
    records = _finite_reward_records(out)
    assert [r["step"] for r in records] == [1, 2, 3]
    assert all(r["rewards/letter_share/coverage"] == 1.0 and r["unscored"] == 0.0 for r in records)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["steps"] == 3 and summary["backend"] == "mlx" and summary["seconds"] > 0
    assert set(summary["rewards"]) == {"reward", "letter_share", "lowercase_share"}
    assert summary["rewards"]["letter_share"]["first"] == records[0]["rewards/letter_share/mean"]
    packs = {p["name"]: p for p in json.loads((out / "packs.json").read_text())}
    assert packs["letters_rewards"]["rewards"] == ["letter_share", "lowercase_share"]
    assert packs["backends"]["version"]
    # the saved model loads back with mlx-lm, and its tokenizer is still character-level
    from mlx_lm import load

    model, tokenizer = load(str(out))
    assert len(tokenizer.encode("letter c", add_special_tokens=False)) == len("letter c")
    assert len(model.layers) == 2


def test_lora_run_killed_after_a_checkpoint_resumes_to_the_same_step(env, tmp_path):
    out = tmp_path / "lora"
    args = [str(EXAMPLE), *QUICK, "--set", "max_steps=4", "--set", "save_every=2", "--set", "lora={r: 4, alpha: 8}",
            "--set", f"output_dir={out}"]
    kill_and_resume(env, [*args, *MLX], out, steps=4)

    # the optimizer state went on: its step counter is the global step
    import mlx.core as mx

    assert mx.load(str(out / "checkpoint-4" / "optimizer.safetensors"))["step"].item() == 4

    # mlx-lm's adapter format: the base model plus this folder loads the trained adapter
    adapter = json.loads((out / "adapter_config.json").read_text())
    assert adapter["fine_tune_type"] == "lora" and adapter["lora_parameters"]["rank"] == 4
    assert adapter["lora_parameters"]["scale"] == 2.0 and "self_attn.q_proj" in adapter["lora_parameters"]["keys"]
    assert (out / "adapters.safetensors").exists() and not (out / "model.safetensors").exists()
    from mlx_lm import load

    from grpo_host.training.builtin_model import tiny_model_dir

    model, _ = load(str(tiny_model_dir(env["GRPO_HOST_CACHE"])), adapter_path=str(out))
    assert type(model.layers[0].self_attn.q_proj).__name__ == "LoRALinear"

    refused = train(env, *args)  # without resume, a folder with checkpoints is not overwritten
    assert refused.returncode == 2 and "set resume: true" in refused.stderr


def test_validation_reference_model_and_accumulation_map_onto_the_trainer(env, tmp_path):
    """val set, beta > 0 (a frozen reference copy), 2 micro-steps per update, GSPO-style sequence ratios, dr_grpo."""
    out = tmp_path / "mapped"
    val = write_jsonl(tmp_path / "val.jsonl", [{"prompt": [{"role": "user", "content": f"letter {c}"}], "answer": c}
                                              for c in "ab"])
    proc = train(env, str(EXAMPLE), *QUICK, "--set", "max_steps=2", "--set", f"data.val={val}",
                 "--set", "eval_every=2", "--set", "beta=0.5", "--set", "gradient_accumulation_steps=2",
                 "--set", "importance_sampling_level=sequence", "--set", "loss_type=dr_grpo",
                 "--set", f"output_dir={out}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    records = read_metrics(out)
    train_records = _finite_reward_records(out)
    assert [r["step"] for r in train_records] == [1, 2]
    assert train_records[1]["kl"] > 0  # the reference model is loaded and the policy moved away from it
    evals = [r for r in records if "eval_loss" in r]
    assert [r["step"] for r in evals] == [0, 1]  # at iterations 1 and 4 (the last), each before its update
    for r in evals:
        for key in ("eval_reward", "eval_rewards/letter_share/mean", "eval_rewards/lowercase_share/coverage"):
            assert isinstance(r[key], float) and math.isfinite(r[key]), (key, r)
    assert "step 2/2" in proc.stdout and "eval at step 0/2" in proc.stdout


def _meta_run(env, tmp_path, **overrides) -> tuple[subprocess.CompletedProcess, Path]:
    config = meta_config(tmp_path, **overrides)
    seen = tmp_path / "seen.jsonl"
    return train({**env, "SEEN_FILE": str(seen)}, str(config), cwd=tmp_path), seen


def test_row_metadata_arrives_intact_and_unscored_rows_do_not_stop_the_run(env, tmp_path):
    """Row ids as ``types`` carry every row exactly; mlx-lm-lora alone would raise on rows no reward scored."""
    proc, seen_file = _meta_run(env, tmp_path, rewards="meta_intact:0, never:1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    seen = [json.loads(line) for line in seen_file.read_text().splitlines()]
    assert len(seen) == 8  # 4 rows x 2 completions, each scored once
    assert sorted(json.dumps(s, sort_keys=True) for s in seen) == EXPECTED_SEEN
    # no weighted reward scored anything: every completion is counted, none stops the run
    record = next(r for r in read_metrics(tmp_path / "out") if "rewards/never/coverage" in r)
    assert record["unscored"] == 8.0 and record["rewards/never/coverage"] == 0.0
    assert record["rewards/meta_intact/coverage"] == 1.0
    assert "reward" not in record  # like TRL: the mean reward leaves out completions no reward scored


def test_strict_stops_on_unscored_rows(env, tmp_path):
    proc, _ = _meta_run(env, tmp_path, rewards="meta_intact:0, never:1", strict=True)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "rows were scored by no reward (strict)" in proc.stderr


def test_an_unscored_completion_gets_no_advantage_and_leaves_the_baseline_alone(tmp_path, monkeypatch):
    """The fill-in reward, through mlx-lm-lora's own advantage computation."""
    from mlx_lm_lora.trainer.grpo_trainer import calculate_rewards_and_advantages

    from grpo_host.training.backends.mlx import MlxRewardFuncs, RewardStats
    from grpo_host.training.config import load_config
    from grpo_host.training.train import prepare

    monkeypatch.chdir(tmp_path)
    meta_config(tmp_path)
    (tmp_path / "half.py").write_text(
        "from grpo_host import hookimpl, reward\n"
        "@reward(name='half')\n"
        "def half(completion, **_):\n"
        "    return None if completion == 'skip' else float(len(completion))\n"
        "@hookimpl\n"
        "def register_rewards(register):\n"
        "    register(half)\n")
    config = load_config(tmp_path / "run.yaml", ["plugins=[half.py]", "rewards=half:2", "group_size=3", "batch_size=3"],
                         backend="mlx")
    job = prepare(config, echo=False)
    stats = RewardStats()
    record = RolloutRecord(tmp_path / "rollouts", job.ensemble.names)
    record.population = True  # as the backend sets it
    rewards = MlxRewardFuncs(job, len(job.train), stats, record)
    completions = ["a", "abc", "skip", "ab", "skip", "skip"]  # row 0: three completions, one unscored; row 1: none
    row_ids = [0, 0, 0, 1, 1, 1]
    advantages, _ = calculate_rewards_and_advantages(
        rewards.funcs, ["p"] * 6, completions, [""] * 6, row_ids, row_ids, [0, 1], rewards.weights)
    adv = advantages.tolist()
    assert adv[2] == pytest.approx(0.0, abs=1e-6)  # the unscored completion
    assert adv[0] < 0 < adv[1] and adv[0] == pytest.approx(-adv[1])  # baseline: the mean of 2.0 and 6.0
    assert adv[3:] == pytest.approx([0.0] * 3, abs=1e-6)  # row 1: one scored completion gives no signal alone
    metrics = stats.take("train")
    assert metrics["unscored"] == 3.0 and metrics["rewards/half/coverage"] == pytest.approx(0.5)
    assert metrics["reward"] == pytest.approx((2.0 + 6.0 + 4.0) / 3)  # scored completions only
    # the record holds the advantages mlx-lm-lora trained on (none for an unscored completion, which trains on 0)
    recorded = [r["advantage"] for r in read_record(tmp_path / "rollouts").to_pylist()]
    assert [0.0 if a is None else a for a in recorded] == pytest.approx(adv, abs=1e-6)
    job.ensemble.close()


def _cli(env, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([GRPO_HOST, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=120)


@pytest.mark.parametrize(("override", "message"), [
    ("loss_type=dapo", "config key 'loss_type': 'dapo' is not implemented by mlx-lm-lora"),
    ("report_to=tensorboard", "config key 'report_to': 'tensorboard' is not a tracker mlx-lm can report to"),
    ("mlx={use_vllm: true}", "config key 'mlx.use_vllm': not an option of the mlx backend"),
    ("mlx={max_grad_norm: big}", "config key 'mlx.max_grad_norm': expected float"),
    ("rewards=meta_intact:1, meta_intact:0.5", "'meta_intact' appears twice"),
    ("rollout=scripted", "config key 'rollout': a rollout function has TRL's rollout_func contract"),
])
def test_settings_mlx_cannot_honour_fail_before_data_is_read(env, tmp_path, override, message):
    config = meta_config(tmp_path, data="missing.jsonl")  # the data is never reached
    proc = _cli(env, "train", str(config), "--backend", "mlx", "--set", override, cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr and "missing.jsonl" not in proc.stderr


def test_too_few_rows_for_a_batch_is_an_error_naming_the_key(env, tmp_path):
    config = meta_config(tmp_path, batch_size=8)
    proc = _cli(env, "train", str(config), "--backend", "mlx", cwd=tmp_path)
    assert proc.returncode == 2 and "config key 'data.train': 4 rows" in proc.stderr, proc.stderr


def test_lora_targets_that_name_no_module_are_an_error_listing_the_modules(env, tmp_path):
    config = meta_config(tmp_path, lora={"targets": ["q_proj", "qkv"]})
    proc = _cli(env, "train", str(config), "--backend", "mlx", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "config key 'lora.targets': no module named ['qkv']" in proc.stderr and "'q_proj'" in proc.stderr


@pytest.mark.parametrize(("ours", "theirs"), [("constant", "constant_with_warmup"), ("linear", "linear"),
                                              ("cosine", "cosine")])
def test_learning_rate_schedules_match_trl(ours, theirs):
    """The learning rate of every optimizer step, against the transformers scheduler the TRL host uses."""
    import torch
    from transformers import get_scheduler

    from grpo_host.training.backends.mlx import _schedule
    from grpo_host.training.config import load_config

    config = load_config(data={"model": "builtin:tiny", "data": "x.jsonl", "rewards": "accuracy", "max_steps": 10,
                               "warmup_steps": 3, "learning_rate": 1e-3, "lr_scheduler": ours})
    torch_opt = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))], lr=1e-3)
    scheduler = get_scheduler(theirs, torch_opt, num_warmup_steps=3, num_training_steps=10)
    expected = []
    for _ in range(10):
        expected.append(scheduler.get_last_lr()[0])
        torch_opt.step()
        scheduler.step()
    schedule = _schedule(config)
    assert [float(schedule(step)) for step in range(10)] == pytest.approx(expected, abs=1e-9)


def test_grpo_args_get_every_value_explicitly():
    from grpo_host.training.backends.mlx import grpo_args
    from grpo_host.training.config import load_config

    config = load_config(data={"model": "builtin:tiny", "data": "x.jsonl", "rewards": "accuracy:2, r1_int:0.5",
                               "min_p": 0.05, "top_k": 7, "beta": 0.04, "epsilon_high": 0.28, "save_every": 5,
                               "gradient_accumulation_steps": 3, "log_every": 2, "loss_type": "dr_grpo",
                               "importance_sampling_level": "sequence", "gradient_checkpointing": True})
    args = grpo_args(config, adapter_file="a.safetensors", max_seq_length=33, iters=30, weights=[2.0, 0.5, 1.0],
                     world_size=2)
    for ours, theirs in (("temperature", "temperature"), ("top_p", "top_p"), ("top_k", "top_k"), ("beta", "beta"),
                         ("min_p", "min_p"), ("epsilon", "epsilon"), ("epsilon_high", "epsilon_high"),
                         ("loss_type", "grpo_loss_type"), ("group_size", "group_size"),
                         ("importance_sampling_level", "importance_sampling_level"),
                         ("max_completion_length", "max_completion_length"),
                         ("gradient_checkpointing", "grad_checkpoint"),
                         ("gradient_accumulation_steps", "gradient_accumulation_steps")):
        assert getattr(args, theirs) == getattr(config, ours), ours
    assert args.batch_size == 8  # 4 prompts per process x 2 processes: the trainer counts global prompts
    assert (args.steps_per_save, args.steps_per_report, args.steps_per_eval) == (15, 6, 15)  # x3 micro-steps
    assert args.reward_weights == [2.0, 0.5, 1.0] and args.val_batches == -1 and args.max_seq_length == 33


@pytest.mark.slow
def test_reward_rises_on_the_example(env, tmp_path):
    """The README's first command on MLX, cut to 60 of its 150 steps (an MLX step on a CPU takes four times a
    TRL one, and TRL's test runs all 150): with a fixed seed, the last tenth's mean reward is at least twice the
    first's (0.21 -> 0.71 when written)."""
    out = tmp_path / "letters"
    proc = train(env, str(EXAMPLE), "--set", f"output_dir={out}", "--set", "max_steps=60", timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    records = _finite_reward_records(out)
    first, last = tenths(records)
    assert last >= 2 * first, (first, last)
    for name in ("letter_share", "lowercase_share"):
        first_r, last_r = tenths(records, f"rewards/{name}/mean")
        assert last_r > first_r, (name, first_r, last_r)


@pytest.mark.slow
def test_two_processes_under_mlx_launch(env, tmp_path):
    """``mlx.launch`` of the same command: two local processes (ring backend, CPU) share each batch."""
    launcher = BIN / "mlx.launch"
    if not launcher.exists() or not shutil.which("bash"):
        pytest.skip("mlx.launch is not installed")
    out = tmp_path / "two"
    proc = subprocess.run(
        [str(launcher), "-n", "2", "--backend", "ring", "--", GRPO_HOST, "train", str(EXAMPLE), *MLX, *QUICK,
         "--set", "max_steps=2", "--set", "save_every=2", "--set", f"output_dir={out}"],
        capture_output=True, text=True, env={**env, "PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}"}, cwd=ROOT,
        timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Node 0 of 2" in proc.stdout + proc.stderr and "Node 1 of 2" in proc.stdout + proc.stderr
    records = _finite_reward_records(out)
    assert [r["step"] for r in records] == [1, 2]  # written once, by the main process
    assert (out / "checkpoint-2" / "optimizer.safetensors").exists() and (out / "model.safetensors").exists()
    assert not list(out.glob("*_adapters.safetensors"))
