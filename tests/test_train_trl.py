"""``grpo-host train`` on TRL, end to end through the real CLI with the built-in tiny model on CPU.

Every run here is a real subprocess training the real ``builtin:tiny``
model with ``trl.GRPOTrainer``; the tiny model is built once per session
into a temporary cache.
"""

from __future__ import annotations

import json
import math
import signal
import subprocess
import time
from pathlib import Path

import psutil
import pytest
import yaml
from conftest import GRPO_HOST, write_jsonl
from train_helpers import EXPECTED_SEEN, QUICK, ROWS, kill_and_resume, meta_config, read_metrics, tenths

pytestmark = pytest.mark.slow  # left out of the fast lane (-m "not slow"): tiny-model training runs

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "letters.yaml"


def train(env, *args: str, cwd: Path = ROOT, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([GRPO_HOST, "train", *args], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=timeout)


def test_trains_the_embedded_default_through_the_cli(env, tmp_path):
    out = tmp_path / "run"
    proc = train(env, str(EXAMPLE), "--set", "max_steps=3", "--set", "save_every=2", "--set", f"output_dir={out}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # per-reward progress, then the summary table
    assert "step 3/3  reward " in proc.stdout and "letter_share " in proc.stdout and "lowercase_share " in proc.stdout
    assert "3 steps in" in proc.stdout and "first mean" in proc.stdout
    for name in ("model.safetensors", "config.json", "tokenizer.json", "tokenizer_config.json", "config.yaml",
                 "packs.json", "metrics.jsonl", "summary.json", "checkpoint-2/optimizer.pt",
                 "checkpoint-2/rng_state.pth"):
        assert (out / name).exists(), name
    records = [r for r in read_metrics(out) if "reward" in r]
    assert [r["step"] for r in records] == [1, 2, 3]
    for r in records:
        for key in ("reward", "rewards/letter_share/mean", "rewards/lowercase_share/mean", "loss", "grad_norm",
                    "rewards/letter_share/coverage", "rewards/letter_share/errors", "rewards/letter_share/timeouts",
                    "rewards/letter_share/seconds", "unscored"):
            assert isinstance(r[key], float) and math.isfinite(r[key]), (key, r)
        assert r["rewards/letter_share/coverage"] == 1.0 and r["unscored"] == 0.0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["steps"] == 3 and summary["backend"] == "trl" and summary["seconds"] > 0
    assert set(summary["rewards"]) == {"reward", "letter_share", "lowercase_share"}
    assert summary["rewards"]["letter_share"]["first"] == records[0]["rewards/letter_share/mean"]
    # the resolved config is a complete, valid config; the packs list has the example pack and ours
    from grpo_host.training.config import RunConfig

    resolved = RunConfig.model_validate(yaml.safe_load((out / "config.yaml").read_text()))
    assert resolved.max_steps == 3 and resolved.temperature == 1.0 and resolved.epsilon_high == 0.2
    packs = {p["name"]: p for p in json.loads((out / "packs.json").read_text())}
    assert packs["letters_rewards"]["rewards"] == ["letter_share", "lowercase_share"]
    assert packs["r1"]["version"] and packs["backends"]["distribution"] == "grpo-host"
    # the saved tokenizer is still character-level, the saved model a llama with trained weights
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    assert len(Tokenizer.from_file(str(out / "tokenizer.json")).encode("letter c").ids) == len("letter c")
    assert json.loads((out / "config.json").read_text())["model_type"] == "llama"
    assert "model.layers.0.self_attn.q_proj.weight" in load_file(out / "model.safetensors")


def test_lora_saves_an_adapter_and_evaluates_the_val_set(env, tmp_path):
    out = tmp_path / "lora"
    val = write_jsonl(tmp_path / "val.jsonl", [{"prompt": [{"role": "user", "content": f"letter {c}"}], "answer": c}
                                              for c in "abcd"])
    proc = train(env, str(EXAMPLE), *QUICK, "--set", "max_steps=2", "--set", "lora={r: 4, alpha: 8}",
                 "--set", f"data.val={val}", "--set", "eval_every=2", "--set", f"output_dir={out}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    adapter = json.loads((out / "adapter_config.json").read_text())
    assert adapter["r"] == 4 and adapter["lora_alpha"] == 8 and "q_proj" in adapter["target_modules"]
    assert (out / "adapter_model.safetensors").exists() and not (out / "model.safetensors").exists()
    evals = [r for r in read_metrics(out) if "eval_reward" in r]
    assert [r["step"] for r in evals] == [2] and math.isfinite(evals[0]["eval_rewards/letter_share/mean"])
    assert "eval at step 2/2  reward " in proc.stdout


def _meta_run(env, tmp_path, **overrides) -> tuple[subprocess.CompletedProcess, Path]:
    config = meta_config(tmp_path, **overrides)
    return train({**env, "SEEN_FILE": str(tmp_path / "seen.jsonl")}, str(config), cwd=tmp_path), tmp_path / "seen.jsonl"


def test_row_metadata_reaches_rewards_intact_and_unscored_rows_are_counted(env, tmp_path):
    proc, seen_file = _meta_run(env, tmp_path, rewards="meta_intact:0, never:1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    seen = [json.loads(line) for line in seen_file.read_text().splitlines()]
    assert len(seen) == 8  # 4 rows x 2 completions, each scored once (not once per reward function)
    assert sorted(json.dumps(s, sort_keys=True) for s in seen) == EXPECTED_SEEN
    # `never` (the only weighted reward) scored nothing: every completion is unscored, counted in TRL's logs,
    # and TRL is handed no value at all for them (not meta_intact's either), so none gets an advantage
    record = next(r for r in read_metrics(tmp_path / "out") if "unscored" in r)
    assert record["unscored"] == 8.0 and record["rewards/never/coverage"] == 0.0
    assert record["rewards/meta_intact/coverage"] == 1.0


def test_strict_stops_on_unscored_rows(env, tmp_path):
    proc, _ = _meta_run(env, tmp_path, rewards="meta_intact:0, never:1", strict=True)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "rows were scored by no reward (strict)" in proc.stderr


def test_resume_after_sigkill_ends_at_the_same_step(env, tmp_path):
    out = tmp_path / "resume"
    args = [str(EXAMPLE), *QUICK, "--set", "max_steps=12", "--set", "save_every=2", "--set", f"output_dir={out}"]
    kill_and_resume(env, args, out, steps=12)

    refused = train(env, *args)  # without resume, a folder with checkpoints is not overwritten
    assert refused.returncode == 2 and "set resume: true" in refused.stderr


@pytest.mark.slow
@pytest.mark.timeout(1800)  # about 2-3 minutes on an idle 2-core machine; generous for a busy CI runner
def test_reward_rises_on_the_example(env, tmp_path):
    """The README's first command: with a fixed seed, the last tenth's mean reward is at least twice the first's."""
    out = tmp_path / "letters"
    proc = train(env, str(EXAMPLE), "--set", f"output_dir={out}", timeout=1700)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    first, last = tenths(read_metrics(out))
    assert last >= 2 * first, (first, last)
    for name in ("letter_share", "lowercase_share"):
        first_r, last_r = tenths(read_metrics(out), f"rewards/{name}/mean")
        assert last_r > first_r, (name, first_r, last_r)


# --- the GRPOConfig the host builds (in-process: the translation itself) --------------------------------


def test_grpo_config_gets_every_value_explicitly():
    from grpo_host.errors import ConfigError
    from grpo_host.training.backends.trl import grpo_config_kwargs
    from grpo_host.training.config import load_config

    config = load_config(data={"model": "builtin:tiny", "data": "x.jsonl", "rewards": "accuracy:2, r1_int:0.5",
                               "trl": {"use_vllm": True, "vllm_mode": "colocate"}, "min_p": 0.05})
    kwargs = grpo_config_kwargs(config, [2.0, 0.5])
    assert kwargs["reward_weights"] == [2.0, 0.5] and kwargs["num_generations"] == 8
    assert kwargs["per_device_train_batch_size"] == 32  # 4 prompts x 8 completions
    for ours, theirs in (("temperature", "temperature"), ("top_p", "top_p"), ("top_k", "top_k"), ("beta", "beta"),
                         ("epsilon", "epsilon"), ("epsilon_high", "epsilon_high"), ("loss_type", "loss_type"),
                         ("min_p", "min_p"), ("importance_sampling_level", "importance_sampling_level")):
        assert kwargs[theirs] == getattr(config, ours)
    assert kwargs["use_vllm"] is True and kwargs["vllm_mode"] == "colocate"
    with pytest.raises(ConfigError, match=r"'trl.temperature': set by the run config itself; use 'temperature'"):
        grpo_config_kwargs(config.model_copy(update={"trl": {"temperature": 0.5}}), [1.0, 1.0])
    with pytest.raises(ConfigError, match=r"'trl.num_generations': .* use 'group_size'"):
        grpo_config_kwargs(config.model_copy(update={"trl": {"num_generations": 4}}), [1.0, 1.0])
    with pytest.raises(ConfigError, match=r"'trl.use_vlm': not a trl.GRPOConfig option"):
        grpo_config_kwargs(config.model_copy(update={"trl": {"use_vlm": True}}), [1.0, 1.0])


@pytest.mark.parametrize("backend", ["trl", "mlx"])
def test_a_prompt_over_max_prompt_length_is_a_data_error_naming_the_row(env, tmp_path, backend):
    out = tmp_path / "long"
    proc = train(env, str(EXAMPLE), "--backend", backend, "--set", "max_prompt_length=3", "--set", f"output_dir={out}")
    assert proc.returncode == 1, proc.stdout + proc.stderr  # a data problem, not a config one
    assert "line 1: the prompt has " in proc.stderr and "tokens, over max_prompt_length=3" in proc.stderr
    assert "Traceback" not in proc.stderr and not list(out.glob("checkpoint-*"))


ACCELERATE = ["--multi_gpu", "--num_processes", "2", "--num_machines", "1", "--mixed_precision", "no",
              "--dynamo_backend", "no", "-m", "grpo_host", "train"]
"""``accelerate launch`` of ``grpo-host train`` in two processes; on a machine without GPUs ``trl.use_cpu``
makes accelerate's multi-CPU (gloo) backend join them."""


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_two_processes_under_accelerate_launch_score_every_completion_once_and_resume(env, tmp_path):
    rows = [{**row, "expect": json.dumps(row["meta"])} for row in ROWS] * 2
    write_jsonl(tmp_path / "rows.jsonl", rows)
    out, seen = tmp_path / "out", tmp_path / "seen.jsonl"
    config = {"model": "builtin:tiny", "data": "rows.jsonl", "plugins": [str(ROOT / "tests" / "meta_rewards.py")],
              "rewards": "meta_intact:1", "group_size": 2, "batch_size": 2, "max_steps": 4, "save_every": 2,
              "max_completion_length": 4, "output_dir": str(out), "trl": {"use_cpu": True},
              "audit": "off"}  # meta_intact records every call it gets: the audit before training would call it too
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(config))
    launch = [str(Path(GRPO_HOST).with_name("accelerate")), "launch", *ACCELERATE, str(tmp_path / "run.yaml")]
    run_env = {**env, "SEEN_FILE": str(seen)}

    two = subprocess.run(launch, capture_output=True, text=True, env=run_env, cwd=tmp_path, timeout=600)
    assert two.returncode == 0, two.stdout + two.stderr
    assert two.stdout.count("4 steps in") == 1  # one summary, from rank 0
    # 4 steps x 2 processes x (2 prompts x 2 completions): each completion scored once, by the process that made it
    assert len(seen.read_text().splitlines()) == 4 * 2 * 2 * 2
    records = [r for r in read_metrics(out) if "reward" in r]
    assert [r["step"] for r in records] == [1, 2, 3, 4]
    assert all(r["rewards/meta_intact/coverage"] == 1.0 and r["unscored"] == 0.0 for r in records)

    one_out = tmp_path / "one"
    one = train(run_env, str(tmp_path / "run.yaml"), "--set", f"output_dir={one_out}", "--set", "batch_size=4",
                cwd=tmp_path)
    assert one.returncode == 0, one.stdout + one.stderr
    single = [r for r in read_metrics(one_out) if "reward" in r]
    assert {k for r in single for k in r} == {k for r in records for k in r}  # the same metrics under both
    assert all(r["rewards/meta_intact/coverage"] == 1.0 and r["unscored"] == 0.0 for r in single)

    resumed_out = tmp_path / "resumed"
    args = ["--set", f"output_dir={resumed_out}", "--set", "max_steps=6"]
    proc = subprocess.Popen([*launch, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=run_env,
                            cwd=tmp_path, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while not (resumed_out / "checkpoint-2" / "trainer_state.json").exists():
            assert proc.poll() is None and time.monotonic() < deadline, "no checkpoint before the run ended"
            time.sleep(0.05)
        # the launcher and both ranks: torch's elastic launcher starts each rank in a session of its own, so
        # killing the launcher's process group would leave them running to the end
        launcher = psutil.Process(proc.pid)
        tree = [*launcher.children(recursive=True), launcher]
        for process in tree:
            process.send_signal(signal.SIGKILL)
        psutil.wait_procs(tree, timeout=30)
    finally:
        proc.wait()
    assert not (resumed_out / "summary.json").exists()  # it really was cut short
    again = subprocess.run([*launch, *args, "--set", "resume=true"], capture_output=True, text=True, env=run_env,
                           cwd=tmp_path, timeout=600)
    assert again.returncode == 0, again.stdout + again.stderr
    summary = json.loads((resumed_out / "summary.json").read_text())
    assert summary["steps"] == 6 and summary["resumed_from"] >= 2
