"""The run configuration: our defaults, YAML + --set, and every error path (each names the key).

The CLI-level error paths run ``grpo-host train`` for real in a subprocess
and check that nothing heavy (torch, transformers, trl) was imported and no
model was built: config, reward and data errors stop the run before any
model is loaded.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import clean_env, write_jsonl

from grpo_host.errors import ConfigError
from grpo_host.training.config import RunConfig, load_config

BASE = {"model": "builtin:tiny", "data": "rows.jsonl", "rewards": "accuracy:2, r1_soft_format:0.5"}


def test_defaults_are_ours_and_explicit():
    config = load_config(data=BASE)
    assert (config.temperature, config.top_p, config.top_k, config.min_p) == (1.0, 1.0, 0, 0.0)
    assert (config.beta, config.epsilon, config.loss_type, config.importance_sampling_level) == (
        0.0, 0.2, "bnpo", "token")
    assert config.epsilon_high == config.epsilon  # resolved, so the written config says what ran
    assert config.lora is None  # absent: full fine-tune
    assert config.backend == "trl" and config.report_to == []
    resolved = config.resolved()
    assert resolved["rewards"] == [
        {"name": "accuracy", "weight": 2.0, "params": {}, "on_error": "auto", "timeout": None},
        {"name": "r1_soft_format", "weight": 0.5, "params": {}, "on_error": "auto", "timeout": None},
    ]
    assert RunConfig.model_validate(resolved) == config  # the resolved config is itself a valid config


def test_yaml_with_overrides_and_backend(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump({**BASE, "lora": {"r": 4}, "data": {"train": "a.jsonl", "val": "b.jsonl"}}))
    config = load_config(path, ["lora.alpha=8", "temperature=0.7", "trl.use_vllm=true", "report_to=[wandb]",
                                "rewards=[accuracy, 'r1_int:0.5']"], backend="mlx")
    assert config.lora.r == 4 and config.lora.alpha == 8.0
    assert config.temperature == 0.7 and config.trl == {"use_vllm": True} and config.report_to == ["wandb"]
    assert [(r.name, r.weight) for r in config.rewards] == [("accuracy", 1.0), ("r1_int", 0.5)]
    assert config.backend == "mlx"
    assert config.eval_every == config.save_every  # a val set is evaluated at the save cadence by default
    config = load_config(data=BASE, overrides=["data.val=v.jsonl"])  # `data: rows.jsonl` is {train: rows.jsonl}
    assert (config.data.train, config.data.val) == ("rows.jsonl", "v.jsonl")


def test_rewards_as_a_yaml_list():
    config = load_config(data={**BASE, "rewards": [{"name": "r1_soft_format", "weight": 0.5,
                                                    "params": {"reasoning_tag": "reasoning"}, "on_error": "skip"}]})
    item = config.rewards[0]
    assert (item.name, item.weight, item.params, item.on_error) == (
        "r1_soft_format", 0.5, {"reasoning_tag": "reasoning"}, "skip")


@pytest.mark.parametrize(
    ("raw", "overrides", "expected"),
    [
        ({**BASE, "temprature": 1.0}, [], "unknown config key 'temprature' (did you mean 'temperature'?)"),
        ({**BASE, "lora": {"rank": 8}}, [], "unknown config key 'lora.rank'"),
        ({**BASE, "data": {"trian": "x.jsonl"}}, [], "unknown config key 'data.trian' (did you mean 'data.train'?)"),
        ({**BASE, "top_p": 2}, [], "config key 'top_p': Input should be less than or equal to 1 (got 2)"),
        ({**BASE, "loss_type": "ppo"}, [],
         "config key 'loss_type': Input should be 'grpo', 'bnpo', 'dr_grpo' or 'dapo'"),
        ({**BASE, "importance_sampling_level": "step"}, [], "config key 'importance_sampling_level'"),
        ({**BASE, "group_size": 1}, [], "config key 'group_size': Input should be greater than or equal to 2"),
        ({**BASE, "lora": {"dropout": 1.5}}, [], "config key 'lora.dropout'"),
        ({k: v for k, v in BASE.items() if k != "model"}, [], "config key 'model' is required"),
        ({**BASE, "eval_every": 10}, [], "config key '(top level)': eval_every is set but data.val is not"),
        ({**BASE, "eval_k": 2, "rollout": "scripted"}, [],
         "eval_k is set, but the run generates through a rollout function"),
        (BASE, ["temperature=hot"], "--set temperature=hot: config key 'temperature': Input should be a valid number"),
        (BASE, ["lora.r=0"], "--set lora.r=0: config key 'lora.r': Input should be greater than or equal to 1"),
        (BASE, ["seeed=1"], "--set seeed=1: unknown config key 'seeed' (did you mean 'seed'?)"),
    ],
)
def test_bad_keys_and_values_name_the_key(raw, overrides, expected):
    with pytest.raises(ConfigError) as info:
        load_config(data=raw, overrides=overrides)
    assert expected in str(info.value)


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        ("temperature", "--set 'temperature': expected key=value"),
        ("=0.5", "--set '=0.5': expected key=value"),
        ("lora..r=1", "--set 'lora..r=1': expected key=value"),
        ("model.name=x", "--set 'model.name=x': 'model' is not a section"),
        ("lora.targets=[q_proj", "--set 'lora.targets=[q_proj': the value is not valid YAML"),
    ],
)
def test_bad_set_syntax(override, expected):
    with pytest.raises(ConfigError) as info:
        load_config(data=BASE, overrides=[override])
    assert expected in str(info.value)


@pytest.mark.parametrize(
    ("rewards", "expected"),
    [
        ("accuracy(:2", "cannot parse 'accuracy(:2' in reward spec"),
        ("accuracy:heavy", "weight 'heavy' of 'accuracy' is not a number"),
        ("", "empty reward spec"),
        ([], "empty reward spec"),
        ("accuracy, accuracy:2", "reward 'accuracy' appears twice"),
        ([{"name": "accuracy", "wieght": 2}], "reward spec entry 'accuracy'"),
        (3, "config key 'rewards'"),
    ],
)
def test_bad_rewards_spec(rewards, expected):
    with pytest.raises(ConfigError) as info:
        load_config(data={**BASE, "rewards": rewards})
    assert "config key 'rewards'" in str(info.value) and expected in str(info.value)


def test_file_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such config file"):
        load_config(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("model: [unclosed\n")
    with pytest.raises(ConfigError, match="bad.yaml: not valid YAML"):
        load_config(bad)
    bad.write_text("- a list\n- not a mapping\n")
    with pytest.raises(ConfigError, match="a run configuration is a mapping of keys, got list"):
        load_config(bad)
    bad.write_text(yaml.safe_dump({**BASE, "betta": 0.1}))
    with pytest.raises(ConfigError, match=r"bad.yaml: unknown config key 'betta' \(did you mean 'beta'\?\)"):
        load_config(bad)


# --- the same errors through the real CLI: exit code, message, and no model loaded -----------------------

PROBE = """
import sys
from grpo_host.cli import app
try:
    app(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
heavy = sorted(m for m in ('torch', 'transformers', 'trl', 'peft') if m in sys.modules)
print('EXIT', code, 'HEAVY', heavy, file=sys.stderr)
"""


def _train(tmp_path: Path, config: dict, *args: str) -> tuple[int, str, str]:
    """``grpo-host train`` in a fresh interpreter; returns (exit code, stdout+stderr, heavy modules imported)."""
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(config))
    env = clean_env(GRPO_HOST_CACHE=str(tmp_path / "cache"), COLUMNS="200")
    proc = subprocess.run([sys.executable, "-c", PROBE, "train", str(path), *args], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=120)
    last = proc.stderr.strip().splitlines()[-1]
    code, heavy = last.split(" HEAVY ")
    return int(code.split()[1]), proc.stdout + proc.stderr, heavy


@pytest.fixture
def rows(tmp_path) -> Path:
    return write_jsonl(tmp_path / "rows.jsonl", [{"prompt": "2+2?", "answer": "4"}, {"prompt": "3+3?", "answer": "6"}])


@pytest.mark.parametrize(
    ("change", "args", "expected"),
    [
        ({"learning_rat": 1e-5}, [], "unknown config key 'learning_rat' (did you mean 'learning_rate'?)"),
        ({"max_steps": "many"}, [], "config key 'max_steps': Input should be a valid integer"),
        ({}, ["--set", "beta"], "--set 'beta': expected key=value"),
        ({}, ["--set", "lora.r=-1"], "--set lora.r=-1: config key 'lora.r'"),
        ({"rewards": "accuracy(:1"}, [], "config key 'rewards': cannot parse"),
        ({"rewards": "no_such_reward:1"}, [], "unknown reward 'no_such_reward'; available:"),
        ({"rewards": "r1_soft_format(reasoning_tag='<bad>')"}, [], "bad parameters for reward 'r1_soft_format'"),
        ({}, ["--backend", "nope"], "unknown training backend 'nope'; available: "),
        ({"plugins": ["missing_rewards.py"]}, [], "config key 'plugins': no such file 'missing_rewards.py'"),
        ({"plugins": ["no_such_module_xyz"]}, [], "config key 'plugins': cannot import 'no_such_module_xyz'"),
        ({"data": "missing.jsonl"}, [], "no such dataset: missing.jsonl"),
    ],
)
def test_cli_config_errors_stop_before_any_model(tmp_path, rows, change, args, expected):
    code, output, heavy = _train(tmp_path, {**BASE, "output_dir": "out", **change}, *args)
    assert code == 2, output
    assert expected in " ".join(output.split()), output
    assert heavy == "[]", f"a config error imported {heavy}"
    assert not (tmp_path / "cache").exists() and not (tmp_path / "out" / "config.json").exists()


def test_cli_failing_data_check_stops_with_its_report(tmp_path):
    write_jsonl(tmp_path / "rows.jsonl", [{"prompt": "2+2?", "answer": "4"}, {"prompt": "3+3?"}, {"prompt": "x"}])
    code, output, heavy = _train(tmp_path, {**BASE, "output_dir": "out"})
    assert code == 1, output
    assert "data check failed: rows.jsonl: 3 rows" in output
    assert "accuracy" in output and "answer" in output and "missing" in output and "line 2, line 3" in output
    assert heavy == "[]" and not (tmp_path / "cache").exists() and not (tmp_path / "out").exists()


def test_cli_val_set_is_checked_too(tmp_path, rows):
    write_jsonl(tmp_path / "val.jsonl", [{"prompt": "1+1?", "answer": ""}])
    code, output, heavy = _train(tmp_path, {**BASE, "data": {"train": "rows.jsonl", "val": "val.jsonl"}})
    assert code == 1 and "data check failed: val.jsonl" in output and "empty" in output, output
    assert heavy == "[]"


def test_cli_mixed_prompt_shapes_name_the_row(tmp_path):
    write_jsonl(tmp_path / "rows.jsonl", [{"prompt": "2+2?", "answer": "4"},
                                          {"prompt": [{"role": "user", "content": "3+3?"}], "answer": "6"}])
    code, output, heavy = _train(tmp_path, BASE)
    assert code == 1 and "line 2: prompts of the train set mix strings and message lists" in output, output
    assert heavy == "[]"


def test_a_refused_run_writes_nothing_and_records_come_before_training(tmp_path, rows, monkeypatch):
    """A run refused for its output_dir (checkpoints, no resume) leaves that folder as it was, and is refused
    before any model is built; a run that gets past the checks has config.yaml and packs.json before the host
    starts."""
    (tmp_path / "out" / "checkpoint-3").mkdir(parents=True)
    (tmp_path / "out" / "checkpoint-3" / "trainer_state.json").write_text(json.dumps({"global_step": 3}))
    code, output, _ = _train(tmp_path, {**BASE, "output_dir": "out"})
    assert code == 2 and "already holds checkpoint-3: set resume: true" in " ".join(output.split()), output
    assert not (tmp_path / "cache").exists()
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["checkpoint-3"]
    from grpo_host.training.train import prepare

    monkeypatch.chdir(tmp_path)
    job = prepare(load_config(data={**BASE, "output_dir": "fresh"}), echo=False)
    job.ensemble.close()
    resolved = yaml.safe_load((tmp_path / "fresh" / "config.yaml").read_text())
    assert resolved["epsilon_high"] == 0.2 and resolved["temperature"] == 1.0 and resolved["model"] == "builtin:tiny"
    packs = {p["name"]: p for p in json.loads((tmp_path / "fresh" / "packs.json").read_text())}
    assert packs["r1"]["distribution"] == "grpo-host" and packs["r1"]["version"]
    assert "accuracy" in packs["r1"]["rewards"]
