"""``grpo-host eval --environment``: every sample an episode of the agent loop, with the test agent pack's ``notes``.

Real subprocesses of the CLI generate with the real ``builtin:tiny-tools``
(transformers, or mlx-lm where it is installed) on CPU; the episodes run
the pack's real environment through the guarded sessions the trainers use,
and the record they leave is read back with the reader ``report`` uses.
The untrained model rarely calls a tool, so the tests that need a call use
the model the agent training tests warm up to open with ``read``
(:func:`agent_helpers.shared_warm_up`).  Episodes against an endpoint are
``tests/test_eval_endpoint_episodes.py``'s.
"""

from __future__ import annotations

import json
import socket
import subprocess
from pathlib import Path

import pytest
from agent_helpers import ROWS, shared_warm_up
from conftest import GRPO_HOST, write_jsonl

from grpo_host.runs.record import read_record

ROOT = Path(__file__).resolve().parents[1]


def eval_cmd(model: str, data: Path, out: Path, *extra: str) -> list[str]:
    return [GRPO_HOST, "eval", model, str(data), "--environment", "notes", "-r", "seen_tools:1", "-o", str(out),
            "--max-completion-length", "40", "--max-tool-calls", "1", *extra]


def run(cmd: list[str], env: dict[str, str], packs: dict[str, Path], **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=600,
                          env={**env, "PYTHONPATH": str(packs["agentpack"]), **extra})


@pytest.fixture
def rows(tmp_path) -> Path:
    return write_jsonl(tmp_path / "rows.jsonl", ROWS)


@pytest.mark.slow  # loads and runs a model: about 9 s
def test_each_sample_is_an_episode_scored_with_the_environment_s_reward_too(env, packs, rows, tmp_path):
    out = tmp_path / "ev"
    proc = run(eval_cmd("builtin:tiny-tools", rows, out, "-k", "2", "--json"), env, packs)
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    assert (found["prompts"], found["samples"]) == (2, 4)
    assert found["environment"] == {"name": "notes", "params": {}} and found["max_tool_calls"] == 1
    # the environment's own reward, named after its session class with weight 1, as both trainers add it
    assert set(found["metrics"]) == {"seen_tools", "NotesSession", "total"} and found["weights"]["NotesSession"] == 1
    assert found["metrics"]["total"]["threshold"] == 2.0  # seen_tools' 1 and NotesSession's 1
    table = read_record(out).to_pylist()
    assert len(table) == 4
    for r in table:
        trajectory = json.loads(r["trajectory"])  # kept: the episode's messages, not a text completion
        assert trajectory and trajectory[0]["role"] == "assistant"
        assert r["reward/NotesSession"] == 0.0  # no note was written
        assert r["total"] == r["reward/seen_tools"] + r["reward/NotesSession"]
        assert 0 < r["length"] <= 40


@pytest.mark.slow  # several eval runs: about 13 s
def test_an_evaluation_of_an_environment_resumes_and_refuses_other_episode_settings(env, packs, rows, tmp_path):
    out = tmp_path / "ev"
    cmd = eval_cmd("builtin:tiny-tools", rows, out, "-k", "1", "--batch-size", "1")
    first = run(cmd, env, packs)
    assert first.returncode == 0, first.stderr
    parts = sorted((out / "rollouts").glob("*.parquet"))
    assert len(parts) == 2
    parts[1].unlink()  # as if killed after the first prompt
    resumed = run([*cmd, "--resume", "--json"], env, packs)
    assert resumed.returncode == 0, resumed.stderr
    found = json.loads(resumed.stdout)
    assert (found["resumed_prompts"], found["generated_prompts"], found["samples"]) == (1, 1, 2)
    other = run([*cmd, "--max-tool-calls", "2", "--resume"], env, packs)  # the last value counts
    assert other.returncode == 2 and "max_tool_calls 1 -> 2" in other.stderr, other.stderr
    plain = run([GRPO_HOST, "eval", "builtin:tiny-tools", str(rows), "-r", "seen_tools:1", "-o", str(out),
                 "--max-completion-length", "40", "-k", "1", "--resume"], env, packs)
    assert plain.returncode == 2 and "environment {'name': 'notes', 'params': {}} -> None" in plain.stderr, (
        plain.stderr)


@pytest.mark.slow  # loads and runs a model: about 6 s
def test_a_row_naming_its_environment_runs_episodes_without_the_option(env, packs, tmp_path):
    data, out = write_jsonl(tmp_path / "rows.jsonl", [{**r, "environment": "notes"} for r in ROWS]), tmp_path / "ev"
    proc = run([GRPO_HOST, "eval", "builtin:tiny-tools", str(data), "-r", "seen_tools:1", "-o", str(out), "-k", "1",
                "--max-completion-length", "24", "--json"], env, packs)
    assert proc.returncode == 0, proc.stderr
    assert "NotesSession" in json.loads(proc.stdout)["metrics"]  # as train reads the column
    assert all(r["trajectory"] for r in read_record(out).to_pylist())


def test_the_environment_s_data_check_runs_before_anything_is_generated(env, packs, tmp_path):
    rows = [dict(r) for r in ROWS]
    del rows[1]["answer"]  # seen_tools needs no answer; the notes environment does
    data, out = write_jsonl(tmp_path / "broken.jsonl", rows), tmp_path / "ev"
    with socket.socket() as closed:  # an endpoint nothing listens on: anything past the checks would fail there
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}/v1"
    proc = run(eval_cmd(url, data, out, "--served-model", "m"), env, packs)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "line 2" in proc.stderr and "answer" in proc.stderr and "notes" in proc.stderr, proc.stderr
    assert not (out / "rollouts").exists()
    text = write_jsonl(tmp_path / "text.jsonl", [{"prompt": "Check your notes.", "answer": "1"}])
    proc = run(eval_cmd("builtin:tiny-tools", text, tmp_path / "ev-text"), env, packs)
    assert proc.returncode == 1 and "line 1" in proc.stderr and "list of chat messages" in proc.stderr, proc.stderr


@pytest.mark.parametrize(("option", "expected"), [
    ("nosuch", "--environment 'nosuch'"),
    ("notes:2", "expected one environment"),
])
def test_a_bad_environment_option_is_refused_naming_it(env, packs, rows, tmp_path, option, expected):
    cmd = eval_cmd("builtin:tiny-tools", rows, tmp_path / "ev")
    proc = run([*cmd[:5], option, *cmd[6:]], env, packs)
    assert proc.returncode == 2 and expected in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "ev" / "rollouts").exists()


# --- the warmed-up model calls its tool --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def warm(tmp_path_factory, packs):
    return shared_warm_up(tmp_path_factory, packs["agentpack"])


@pytest.mark.slow  # the SFT warm-up of builtin:tiny-tools (shared with the agent training tests): minutes on a CPU
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("backend", ["trl", "mlx"])
def test_the_warmed_up_model_s_tool_calls_run_in_the_environment(warm, env, packs, rows, tmp_path, backend):
    if backend == "mlx":
        pytest.importorskip("mlx_lm")
    out, seen = tmp_path / "ev", tmp_path / "seen.jsonl"
    proc = run(eval_cmd(str(warm), rows, out, "-k", "2", "--temperature", "0", "--backend", backend,
                        "--max-completion-length", "120", "--json"), env, packs, SEEN_FILE=str(seen))
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    # greedy, the warmed-up model opens every episode with its read call: seen_tools is 1 on every sample
    assert found["metrics"]["seen_tools"]["pass@1"]["value"] == 1.0
    assert found["metrics"]["NotesSession"]["mean@k"]["value"] == 0.0
    saw = [json.loads(line) for line in seen.read_text().splitlines()]
    assert len(saw) == 4 and all(s["calls"][0] == ["read", {}] and s["results"][0] == "" for s in saw)
    for r in read_record(out).to_pylist():
        messages = json.loads(r["trajectory"])
        assert messages[0]["tool_calls"][0]["function"] == {"name": "read", "arguments": {}}
        assert messages[1] == {"role": "tool", "name": "read", "content": ""}


def test_a_run_s_checkpoint_is_evaluated_in_the_run_s_environment(tmp_path):
    """What the command line does not say comes from the run's config.yaml: its environment and max_tool_calls as
    well as its rewards and sampling; a run that generated through a rollout function is refused."""
    import yaml

    from grpo_host.errors import UserError
    from grpo_host.training.eval_episodes import environment_option
    from grpo_host.training.evaluate import EvalSettings, resolve

    run_dir = tmp_path / "run"
    (run_dir / "checkpoint-2").mkdir(parents=True)
    config = {"model": "builtin:tiny-tools", "rewards": "seen_tools:1", "environment": {"name": "notes",
              "params": {}}, "max_tool_calls": 3, "temperature": 0.7, "backend": "mlx"}
    (run_dir / "config.yaml").write_text(yaml.safe_dump(config))
    model = resolve(str(run_dir / "checkpoint-2"))
    filled = EvalSettings(model.given, "rows.jsonl").filled(model)
    assert (filled.environment.name, filled.max_tool_calls, filled.temperature, filled.backend) == (
        "notes", 3, 0.7, "mlx")
    given = EvalSettings(model.given, "rows.jsonl", environment=environment_option("notes(x=1)"),
                         max_tool_calls=0).filled(model)
    assert (given.environment.params, given.max_tool_calls) == ({"x": 1}, 0)  # the command line wins
    (run_dir / "config.yaml").write_text(yaml.safe_dump({**config, "environment": None, "rollout": "scripted"}))
    with pytest.raises(UserError, match="rollout function"):
        EvalSettings(model.given, "rows.jsonl").filled(model)


def test_a_run_s_per_turn_environment_is_evaluated_under_the_run_s_turn_reward(packs, monkeypatch, tmp_path):
    """A run's checkpoint is evaluated with its turn_reward (the command line's wins); the environment's sessions
    make their per-turn reward one number by it, as in training."""
    import yaml

    from grpo_host.discovery.plugins import load_plugins
    from grpo_host.training.config import EnvironmentSettings, RunConfig
    from grpo_host.training.eval_episodes import episodes_for
    from grpo_host.training.evaluate import EvalSettings, resolve
    from grpo_host.training.train import Row

    run_dir = tmp_path / "run"
    (run_dir / "checkpoint-2").mkdir(parents=True)
    config = {"model": "builtin:tiny-tools", "rewards": "turn_calls", "environment": "step_notes",
              "turn_reward": "discounted:0.5"}
    (run_dir / "config.yaml").write_text(yaml.safe_dump(config))
    model = resolve(str(run_dir / "checkpoint-2"))
    assert EvalSettings(model.given, "rows.jsonl").filled(model).turn_reward == "discounted:0.5"
    assert EvalSettings(model.given, "rows.jsonl", turn_reward="sum").filled(model).turn_reward == "sum"
    assert EvalSettings("builtin:tiny-tools", "rows.jsonl", rewards="x").filled(
        resolve("builtin:tiny-tools")).turn_reward == "episode"
    # eval_k with an environment is a run config train accepts: it evaluates in the run's environment
    assert RunConfig.model_validate({**config, "data": "rows.jsonl", "eval_k": 2}).eval_k == 2

    monkeypatch.syspath_prepend(str(packs["agentpack"]))
    plugins = load_plugins(env={"GRPO_HOST_LOAD_PLUGINS": "agentpack"})
    episodes = episodes_for(EnvironmentSettings(name="step_notes"), [Row("line 1", {**ROWS[0], "answer": "1"})],
                            plugins, turn_reward="discounted:0.5")
    assert episodes is not None
    session = episodes.factories[None]()
    session.reset(_grpo_host_row=0)
    session.write(text="it is 1")
    session.read()
    session.read()
    assert session._reward() == 0.25 + 0.5 * 0.25 + 0.25 * 1.0  # turns [0.25, 0.25, 1.0]
