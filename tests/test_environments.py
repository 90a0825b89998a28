"""Environments: declaration, the tools an engine sees, and a hostile policy's tool calls, each bounded and counted."""

from __future__ import annotations

import inspect

import pytest
from conftest import cli_json, run_cli

from grpo_host.discovery.plugins import load_plugins
from grpo_host.kinds.environment import Session, ToolError, ToolLimits, environment


@pytest.fixture
def notes(packs, monkeypatch):
    """The `notes` environment of the pip-laid-out test pack `agentpack`, found through its entry point."""
    monkeypatch.syspath_prepend(str(packs["agentpack"]))
    return load_plugins(env={"GRPO_HOST_LOAD_PLUGINS": "agentpack"}).registry.environment("notes")


def nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


def started(env, row=None) -> Session:
    session = env.session_class()(rows=[{"answer": "42"} if row is None else row])
    assert session.reset(_grpo_host_row=0) == "You can write notes."
    return session


def test_the_tools_keep_their_names_signatures_and_docstrings_for_the_chat_template(notes):
    session = started(notes)
    write = session.write
    assert write.__name__ == "write" and "Store a note." in write.__doc__
    assert list(inspect.signature(write).parameters) == ["text"]
    from transformers.utils import get_json_schema  # what TRL and chat templates read

    schema = get_json_schema(write)
    assert schema["function"]["name"] == "write"
    assert schema["function"]["parameters"]["properties"]["text"]["type"] == "string"


def test_a_rollout_uses_its_tools_and_the_environment_scores_it(notes):
    session = started(notes)
    assert session.write(text="the answer is 42") == "stored note 1"
    assert session.read() == "the answer is 42"
    assert session.get_reward() == 1.0
    assert started(notes).get_reward() == 0.0  # a fresh rollout starts from reset


@pytest.mark.parametrize(("call", "message"), [
    (lambda s: s.write(text="x" * 100_000), "over 65536"),
    (lambda s: s.write(text=["not", "text"]), "argument 'text'"),
    (lambda s: s.write(), "missing arguments ['text']"),
    (lambda s: s.write(text="a", path="/etc/passwd"), "unknown arguments ['path']"),
    (lambda s: s.wait(seconds=30), "did not answer within 10 s"),  # waiting, not working: the backstop
    (lambda s: s.write(text=nested(100_000)), "not JSON values"),
])
def test_a_hostile_call_is_refused_or_bounded_with_a_message_the_model_reads(notes, call, message):
    session = started(notes)
    with pytest.raises(ToolError, match=message.replace("[", r"\[").replace("]", r"\]")):  # a 30 s wait would answer
        call(session)
    assert session.write(text="still alive") == "stored note 1"  # the rollout goes on


def test_output_is_cut_to_the_cap(notes):
    session = started(notes)
    for _ in range(20):
        session.write(text="0123456789")
    text = session.read()
    assert text.startswith("0123456789\n") and text.endswith("more characters cut]") and len(text) < 120


def test_an_environment_that_cannot_reset_answers_every_call_with_that_error(notes):
    session = notes.session_class()(rows=[{"no answer": 1}])
    assert session.reset(_grpo_host_row=0) is None
    with pytest.raises(ToolError, match="could not start: KeyError"):
        session.read()
    assert session.get_reward() is None


def test_a_declaration_the_model_could_not_read_is_refused():
    with pytest.raises(TypeError, match="needs a reset"):
        environment("x")(type("X", (), {"tool": lambda self: "1"}))

    class Untyped:
        def reset(self, row):
            return None

        def look(self, where):
            """Look somewhere."""
            return where

    with pytest.raises(TypeError, match=r"tool 'look' needs type hints for \['where'\]"):
        environment("untyped")(Untyped)

    class Undocumented:
        def reset(self, row):
            return None

        def look(self, where: str) -> str:
            return where

    with pytest.raises(TypeError, match="tool 'look' needs a docstring"):
        environment("undocumented", limits=ToolLimits(timeout=1))(Undocumented)


def test_environments_list_and_show_from_an_installed_pack(packs):
    [row] = [r for r in cli_json("environments", "list", pythonpath=[packs["agentpack"]]) if r["name"] == "notes"]
    assert (row["pack"], row["requires"], row["reward"]) == ("grpo-test-agent", {"answer": "str"}, True)
    assert [t["call"] for t in row["tools"]] == ["read()", "wait(seconds)", "write(text)"]
    listed = run_cli("environments", "list", pythonpath=[packs["agentpack"]], env={"COLUMNS": "80"})
    lines = listed.stdout.splitlines()
    assert listed.returncode == 0 and all(len(line) <= 80 for line in lines)
    assert any(line.startswith("notes ") and "write(text)" in line for line in lines)
    shown = run_cli("environments", "show", "notes", pythonpath=[packs["agentpack"]])
    assert shown.returncode == 0 and "Store a note." in shown.stdout and "at most 1 s" in shown.stdout
    unknown = run_cli("environments", "show", "nope", pythonpath=[packs["agentpack"]])
    assert unknown.returncode == 2 and "unknown environment 'nope'; available:" in unknown.stderr


def test_each_row_gets_its_environment_checked_before_any_model_is_loaded(notes, packs, monkeypatch):
    from types import SimpleNamespace

    from grpo_host.errors import ConfigError, DataError
    from grpo_host.training.backends.steps import rollout_environments
    from grpo_host.training.config import load_config
    from grpo_host.training.train import Row

    monkeypatch.syspath_prepend(str(packs["agentpack"]))
    plugins = load_plugins(env={"GRPO_HOST_LOAD_PLUGINS": "agentpack"})

    def job(rows, **config):
        cfg = load_config(data={"model": "builtin:tiny", "data": "x.jsonl", "rewards": "seen_tools", **config})
        return SimpleNamespace(config=cfg, plugins=plugins,
                               rows=[Row(f"line {i}", {"prompt": "p", **r}) for i, r in enumerate(rows, 1)])

    assert rollout_environments(job([{"answer": "1"}])) == ({}, [None])
    factories, choices = rollout_environments(job([{"answer": "1"}, {"answer": "2", "environment": "notes"}],
                                                  environment="notes"))
    assert choices == [None, "notes"] and factories[None]().reset(_grpo_host_row=0) == "You can write notes."
    with pytest.raises(DataError, match=r"line 2: environment 'notes' \(column 'environment'\) needs column 'answer'"):
        rollout_environments(job([{"answer": "1", "environment": "notes"}, {"environment": "notes"}]))
    with pytest.raises(DataError, match="line 1: column 'environment': unknown environment 'nope'"):
        rollout_environments(job([{"environment": "nope"}]))
    with pytest.raises(DataError, match="line 2: this row names no environment"):
        rollout_environments(job([{"answer": "1", "environment": "notes"}, {"answer": "2"}]))
    with pytest.raises(ConfigError, match="config key 'environment': unknown environment 'nope'"):
        rollout_environments(job([{"answer": "1"}], environment="nope"))
    with pytest.raises(ConfigError, match="config key 'environment.params'.*takes no parameters"):
        rollout_environments(job([{"answer": "1"}], environment={"name": "notes", "params": {"x": 1}}))
