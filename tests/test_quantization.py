"""The ``quantization`` block: the config itself, the TRL host's bitsandbytes mapping and refusal, and QLoRA on MLX.

The MLX runs are real subprocesses training ``builtin:tiny`` on a base
quantized by mlx-lm (mlx[cpu]), killed and resumed, and their adapter
loaded back for generation.  On the TRL side, always: the exact
``BitsAndBytesConfig`` built, and the refusal before any data is read where
bitsandbytes cannot run.  Where it can (a CUDA GPU, or bitsandbytes' CPU
backend: ``pip install bitsandbytes``, not a dev dependency), real 4- and
8-bit loads and a QLoRA run killed and resumed; skipped elsewhere.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
from importlib.util import find_spec
from pathlib import Path

import pytest
import yaml
from train_helpers import GRPO_HOST, QUICK, kill_and_resume, read_metrics

from grpo_host.errors import ConfigError
from grpo_host.training.config import RunConfig, load_config

pytestmark = pytest.mark.slow  # left out of the fast lane (-m "not slow"): quantized training runs

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "letters.yaml"
BASE = {"model": "builtin:tiny", "data": "x.jsonl", "rewards": "accuracy"}


def config(**keys) -> RunConfig:
    return load_config(data={**BASE, **keys})


def cli(env, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([GRPO_HOST, "train", *args], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=timeout)


# --- the config block -------------------------------------------------------------------------------------------


def test_a_quantized_base_needs_lora():
    with pytest.raises(ConfigError, match=r"config key 'quantization': a quantized base cannot be trained itself.*"
                                          r"set lora too"):
        config(quantization={"bits": 4})
    assert config(quantization={"bits": 4}, lora={"r": 4}).quantization.bits == 4


def test_the_block_is_strict_and_points_misplaced_keys_to_their_section():
    with pytest.raises(ConfigError, match=r"'quantization.bits': Input should be 4 or 8 \(got 3\)"):
        config(quantization={"bits": 3}, lora={})
    with pytest.raises(ConfigError, match=r"unknown config key 'quantization.group_size' "
                                          r"\(did you mean 'quantization.mlx.group_size'\?\)"):
        config(quantization={"bits": 4, "group_size": 64}, lora={})
    with pytest.raises(ConfigError, match=r"'quantization.trl.double_quant'\?"):
        config(quantization={"bits": 4, "double_quant": False}, lora={})
    with pytest.raises(ConfigError, match=r"'quantization.mlx.group_size': Input should be 32, 64 or 128"):
        config(quantization={"bits": 4, "mlx": {"group_size": 48}}, lora={})
    with pytest.raises(ConfigError, match=r"'quantization.trl': quant_type applies to 4-bit bases only, and bits is 8"):
        config(quantization={"bits": 8, "trl": {"quant_type": "fp4"}}, lora={})


def test_the_resolved_config_is_a_valid_config_with_every_quantization_option():
    for bits in (4, 8):
        resolved = config(quantization={"bits": bits}, lora={}).resolved()
        assert resolved["quantization"] == {
            "bits": bits, "trl": {"quant_type": "nf4", "double_quant": True, "compute_dtype": "auto"},
            "mlx": {"group_size": None}}
        assert RunConfig.model_validate(yaml.safe_load(yaml.safe_dump(resolved))).quantization.bits == bits


def test_every_quantization_key_is_described_and_documented():
    from grpo_host.training.config import BitsAndBytesSettings, MlxQuantSettings, QuantizationSettings

    guide = (ROOT / "docs" / "training.md").read_text()
    for prefix, model in (("", QuantizationSettings), ("trl.", BitsAndBytesSettings), ("mlx.", MlxQuantSettings)):
        for name, field in model.model_fields.items():
            assert field.description, f"quantization.{prefix}{name} has no description"
            if name not in ("trl", "mlx"):
                assert f"| `{prefix}{name}` |" in guide, f"quantization.{prefix}{name} is not in docs/training.md"


# --- TRL: bitsandbytes --------------------------------------------------------------------------------------------


def _bnb_fields(bnb) -> dict:
    keys = ("load_in_4bit", "load_in_8bit", "bnb_4bit_quant_type", "bnb_4bit_use_double_quant",
            "bnb_4bit_compute_dtype")
    return {k: bnb.to_dict()[k] for k in keys}


def test_the_bitsandbytes_config_trl_gets():
    import torch

    from grpo_host.training.backends.trl import bitsandbytes_config, quantization_record

    qlora = bitsandbytes_config(config(quantization={"bits": 4, "trl": {"compute_dtype": "bfloat16"}}, lora={}))
    assert _bnb_fields(qlora) == {"load_in_4bit": True, "load_in_8bit": False, "bnb_4bit_quant_type": "nf4",
                                  "bnb_4bit_use_double_quant": True, "bnb_4bit_compute_dtype": "bfloat16"}
    assert quantization_record(qlora, "0.48.2") == {"engine": "bitsandbytes", "version": "0.48.2", "bits": 4,
                                                    "quant_type": "nf4", "double_quant": True,
                                                    "compute_dtype": "bfloat16"}
    fp4 = bitsandbytes_config(config(quantization={"bits": 4, "trl": {"quant_type": "fp4", "double_quant": False,
                                                                     "compute_dtype": "float16"}}, lora={}))
    assert _bnb_fields(fp4) == {"load_in_4bit": True, "load_in_8bit": False, "bnb_4bit_quant_type": "fp4",
                                "bnb_4bit_use_double_quant": False, "bnb_4bit_compute_dtype": "float16"}
    int8 = bitsandbytes_config(config(quantization={"bits": 8}, lora={}))
    assert int8.load_in_8bit and not int8.load_in_4bit
    assert quantization_record(int8, "0.48.2") == {"engine": "bitsandbytes", "version": "0.48.2", "bits": 8}
    # auto: bfloat16 where the GPU has it, float16 on older GPUs, float32 without CUDA
    auto = bitsandbytes_config(config(quantization={"bits": 4}, lora={})).to_dict()["bnb_4bit_compute_dtype"]
    if not torch.cuda.is_available():
        assert auto == "float32"
    else:
        assert auto == ("bfloat16" if torch.cuda.is_bf16_supported() else "float16")


@pytest.mark.parametrize(("installed", "supported", "available", "message"), [
    (None, set(), {"cpu"}, "needs bitsandbytes, which is not installed: pip install 'bitsandbytes>=0.46.1' "
                           "(with a CUDA GPU, or a bitsandbytes build with a CPU backend)"),
    ("0.45.5", {"cuda"}, {"cpu", "cuda"}, "bitsandbytes 0.45.5 is installed, and transformers needs 0.46.1 or newer"),
    ("0.48.2", {"cuda"}, {"cpu"}, "bitsandbytes 0.48.2 runs on cuda, and this machine has cpu; no CUDA GPU is visible"),
    ("0.48.2", {"cuda", "cpu"}, {"cpu"}, None),  # a CPU backend: transformers loads it on the CPU
    ("0.48.2", {"cuda"}, {"cpu", "cuda"}, None),
])
def test_where_bitsandbytes_cannot_run(installed, supported, available, message):
    from grpo_host.training.backends.trl import bitsandbytes_refusal

    assert bitsandbytes_refusal(installed, "0.46.1", supported, available) == message


def test_trl_model_init_kwargs_cannot_quantize_behind_the_block():
    from grpo_host.training.backends.trl import grpo_config_kwargs

    for key in ("quantization_config", "load_in_4bit"):
        with pytest.raises(ConfigError, match=rf"'trl.model_init_kwargs.{key}': .* use that instead"):
            grpo_config_kwargs(config(trl={"model_init_kwargs": {key: True}}), [1.0])


@pytest.mark.skipif(find_spec("bitsandbytes") is not None, reason="bitsandbytes is installed here")
def test_trl_refuses_a_quantized_base_without_bitsandbytes_before_reading_data(env, tmp_path):
    out = tmp_path / "never"
    proc = cli(env, str(EXAMPLE), "--set", "data=missing.jsonl", "--set", "quantization={bits: 4}", "--set", "lora={}",
               "--set", f"output_dir={out}")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert ("config key 'quantization': a 4-bit base on the trl backend needs bitsandbytes, which is not installed"
            in proc.stderr and "does not fall back to full precision" in proc.stderr)
    assert "missing.jsonl" not in proc.stderr and "Traceback" not in proc.stderr and not out.exists()


def _skip_unless_bitsandbytes_runs() -> None:
    """These load real bitsandbytes models: a CUDA GPU, or bitsandbytes' CPU backend (0.46.1+, not a dev dependency)."""
    from grpo_host.training.backends.trl import bitsandbytes_problem

    problem = bitsandbytes_problem()
    if problem is not None:
        pytest.skip(f"bitsandbytes cannot run here: {problem}")


@pytest.mark.parametrize(("bits", "layer", "storage"),
                         [(4, "Linear4bit", "Params4bit"), (8, "Linear8bitLt", "Int8Params")])
def test_trl_loads_the_base_quantized_and_prepared_for_kbit_training(env, tmp_path, monkeypatch, bits, layer, storage):
    """The model the host hands to GRPOTrainer: bitsandbytes layers, the base frozen, unquantized parts in float32."""
    _skip_unless_bitsandbytes_runs()
    import torch
    from trl import GRPOConfig

    from grpo_host.training.backends.trl import _quantized_model, bitsandbytes_config, grpo_config_kwargs
    from grpo_host.training.train import prepare

    monkeypatch.setenv("GRPO_HOST_CACHE", env["GRPO_HOST_CACHE"])
    run = load_config(EXAMPLE, [f"quantization={{bits: {bits}}}", "lora={r: 4}", f"output_dir={tmp_path}",
                                f"data={ROOT / 'examples' / 'letters.jsonl'}",
                                f"plugins=[{ROOT / 'examples' / 'letters_rewards.py'}]"])
    job = prepare(run, echo=False)
    try:
        args = GRPOConfig(**grpo_config_kwargs(run, job.ensemble.weights))
        model = _quantized_model(job, args, bitsandbytes_config(run))
    finally:
        job.ensemble.close()
    assert getattr(model, f"is_loaded_in_{bits}bit")
    q_proj = model.model.layers[0].self_attn.q_proj
    assert type(q_proj).__name__ == layer and type(q_proj.weight).__name__ == storage
    assert not any(p.requires_grad for p in model.parameters())
    assert {p.dtype for n, p in model.named_parameters() if "norm" in n or "embed" in n} == {torch.float32}


@pytest.mark.slow
def test_trl_qlora_run_killed_after_a_checkpoint_resumes_and_records_its_quantization(env, tmp_path):
    """4-bit NF4 through the CLI, killed after step 2 and resumed to 4 (90 s on bitsandbytes' CPU backend, 2 cores)."""
    _skip_unless_bitsandbytes_runs()
    from importlib.metadata import version

    out = tmp_path / "qlora"
    args = [str(EXAMPLE), *QUICK, "--set", "max_steps=4", "--set", "save_every=2", "--set", "lora={r: 4, alpha: 8}",
            "--set", "quantization={bits: 4, trl: {compute_dtype: float32}}", "--set", f"output_dir={out}"]
    summary = kill_and_resume(env, args, out, steps=4)
    assert summary["quantization"] == {"engine": "bitsandbytes", "version": version("bitsandbytes"),
                                       "bits": 4, "quant_type": "nf4", "double_quant": True,
                                       "compute_dtype": "float32"}
    assert (out / "adapter_model.safetensors").exists() and not (out / "model.safetensors").exists()


# --- MLX: mlx-lm quantization -------------------------------------------------------------------------------------

mlx_only = pytest.mark.skipif(find_spec("mlx_lm_lora") is None, reason="the mlx extra is not installed")
MLX = ["--backend", "mlx"]


def _tiny(env) -> str:
    from grpo_host.training.builtin_model import tiny_model_dir

    return str(tiny_model_dir(env["GRPO_HOST_CACHE"]))


def _params(model) -> dict:
    from mlx.utils import tree_flatten

    return dict(tree_flatten(model.parameters()))


@mlx_only
def test_mlx_quantizes_at_load_trains_lora_resumes_and_the_adapter_generates(env, tmp_path):
    """4-bit at load (group 32), beta > 0 so the reference is quantized too; killed after step 2, resumed to 4."""
    import mlx.core as mx
    from mlx_lm import load, stream_generate
    from mlx_lm.convert import convert

    from grpo_host.training.backends.mlx import quantize_base

    out = tmp_path / "q4"
    args = [str(EXAMPLE), *MLX, *QUICK, "--set", "max_steps=4", "--set", "save_every=2", "--set", "beta=0.1",
            "--set", "lora={r: 4, alpha: 8}", "--set", "quantization={bits: 4, mlx: {group_size: 32}}",
            "--set", f"output_dir={out}"]
    summary = kill_and_resume(env, args, out, steps=4)
    record = {"engine": "mlx-lm", "bits": 4, "group_size": 32, "mode": "affine", "source": "quantized at load"}
    assert summary["quantization"] == record
    assert yaml.safe_load((out / "config.yaml").read_text())["quantization"]["mlx"] == {"group_size": 32}
    for folder in (out, out / "checkpoint-4"):
        assert json.loads((folder / "adapter_config.json").read_text())["base_quantization"] == record
    records = [r for r in read_metrics(out) if "reward" in r]
    assert all(math.isfinite(r["kl"]) and math.isfinite(r["loss"]) for r in records)

    # resuming with another quantization would put the adapter on a base it was not trained on
    refused = cli(env, *args, "--set", "resume=true", "--set", "max_steps=6", "--set", "quantization={bits: 8}")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "checkpoint-4 was trained on a base with quantization" in refused.stderr
    assert "[INFO] Quantized model with" in refused.stdout  # mlx-lm's quantize_model ran at load, before the check

    # the documented way back to that base: mlx_lm.convert with the same bits and group size gives the very weights
    base = _tiny(env)
    converted = tmp_path / "tiny-4bit"
    convert(base, str(converted), quantize=True, q_bits=4, q_group_size=32)
    model, _, model_config = load(base, return_config=True)
    quantize_base(model, model_config, record)
    expected, got = _params(model), _params(load(str(converted))[0])
    assert sorted(expected) == sorted(got) and all(mx.array_equal(expected[k], got[k]).item() for k in expected)

    tuned, tokenizer = load(str(converted), adapter_path=str(out))
    q_proj = tuned.layers[0].self_attn.q_proj
    assert type(q_proj).__name__ == "LoRALinear" and type(q_proj.linear).__name__ == "QuantizedLinear"
    assert any(mx.any(v != 0).item() for k, v in _params(tuned).items() if k.endswith("lora_b"))  # trained
    plain = load(str(converted))[0]
    prompt = mx.array([tokenizer.encode("letter c")])
    assert not mx.allclose(tuned(prompt), plain(prompt)).item()  # the adapter changes the quantized model's output
    steps = list(stream_generate(tuned, tokenizer, "letter c", max_tokens=4))  # mlx_lm.generate's own loop
    assert 1 <= len(steps) <= 4 and steps[-1].generation_tokens == len(steps)


@mlx_only
def test_mlx_trains_an_already_quantized_folder_as_it_is(env, tmp_path):
    """An 8-bit folder from mlx_lm.convert is trained without requantizing; a contradicting block or no LoRA is not."""
    from mlx_lm.convert import convert

    folder = tmp_path / "tiny-8bit"
    convert(_tiny(env), str(folder), quantize=True, q_bits=8, q_group_size=64)
    out = tmp_path / "q8"
    common = [str(EXAMPLE), *MLX, *QUICK, "--set", f"model={folder}", "--set", "max_steps=2", "--set", "save_every=2",
              "--set", f"output_dir={out}"]
    proc = cli(env, *common, "--set", "lora={r: 4}", "--set", "quantization={bits: 8}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["steps"] == 2 and summary["quantization"] == {
        "engine": "mlx-lm", "bits": 8, "group_size": 64, "mode": "affine", "source": "model folder"}
    assert "Quantized model with" not in proc.stdout  # mlx-lm's quantize_model did not run again

    never = tmp_path / "never"
    for override, message in (
        (["--set", "lora={r: 4}", "--set", "quantization={bits: 4}"],
         "config key 'quantization': the model .* is already quantized \\(bits 8, group_size 64\\)"),
        (["--set", "lora={r: 4}", "--set", "quantization={bits: 8, mlx: {group_size: 32}}"], "is already quantized"),
        ([], "config key 'lora': the model .* is quantized \\(bits 8\\), so its weights cannot be trained"),
    ):
        proc = cli(env, *common, "--set", "data=missing.jsonl", "--set", f"output_dir={never}", *override)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert re.search(message, proc.stderr), proc.stderr
        assert "missing.jsonl" not in proc.stderr and not never.exists()  # refused before any data is read
