"""The ``openenv`` environment (``reward_plugins/openenv_client``): a real OpenEnv server (openenv-core 0.3.0's own
``create_app`` under uvicorn on 127.0.0.1, serving a grpo-host spec) stepped through openenv-core's own client, as a
grpo-host agent rollout drives it: the environment found through the entry point, each rollout a ``Session``."""

from __future__ import annotations

import json

import pytest
from openenv_server import free_port, openenv_server

from grpo_host import Session, ToolError, load_plugins

SPEC = "accuracy:2, r1_strict_format:0.5"
GOOD = "<think>\nadd\n</think>\n<answer>\n{}\n</answer>"
ROWS = [{"prompt": "What is 2+2?", "answer": "4"}, {"prompt": "What is 2+3?", "answer": "5"}]

pytestmark = pytest.mark.slow  # each module starts an OpenEnv server (a uvicorn process) and waits for it


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with openenv_server(tmp_path_factory.mktemp("openenv"), SPEC, ROWS, sessions=16) as url:  # a slot per test
        yield url


def session(url: str, **params) -> Session:
    """A rollout slot as the host makes one: the registered environment's session class, the run's rows."""
    environment = load_plugins().registry.environment("openenv")
    rows = [{"prompt": "q", "seed": 0}, {"prompt": "q", "seed": 1}, {"prompt": "q"}]
    return environment.session_class()({"url": url, "reset_columns": ["seed"], **params}, rows=rows)


def test_a_rollout_acts_in_the_server_and_earns_its_reward(server):
    slot = session(server)
    shown = slot.reset(**{Session.ROW_KEY: 1})
    assert shown.startswith('\nThe environment\'s first observation: {"prompt": "What is 2+3?"')
    assert '"required": ["completion"]' in shown  # the action's schema, from the server's /schema
    step = json.loads(slot.step(action={"completion": GOOD.format(5)}))
    assert step["reward"] == 2.5 and step["done"]
    assert step["observation"]["rewards"] == {"accuracy": 1.0, "r1_strict_format": 1.0}
    assert slot.get_reward() == 2.5
    with pytest.raises(ToolError, match="the episode is over: no more actions"):
        slot.step(action={"completion": GOOD.format(5)})
    slot.reset(**{Session.ROW_KEY: 0})  # the next rollout: a new episode on the same session
    assert json.loads(slot.step(action={"completion": GOOD.format(5)}))["reward"] == 0.5  # wrong, well formed
    assert slot.get_reward() == 0.5


def test_no_reward_is_none_never_zero(server):
    slot = session(server)
    slot.reset(**{Session.ROW_KEY: 0})
    assert slot.get_reward() is None  # a rollout that never acted
    assert json.loads(slot.step(action={"completion": []}))["reward"] is None  # the server scored nothing
    assert slot.get_reward() is None


def test_a_refused_action_is_a_tool_error_and_the_rollout_goes_on(server):
    slot = session(server)
    slot.reset(**{Session.ROW_KEY: 0})
    with pytest.raises(ToolError, match=r"the environment refused the action: Server error: Invalid message "
                                        r"\(code: VALIDATION_ERROR\)"):
        slot.step(action={"answer": "4"})
    with pytest.raises(ToolError, match="argument 'action'"):  # not a JSON object: the guard refuses it first
        slot.step(action="4")
    assert json.loads(slot.step(action={"completion": GOOD.format(4)}))["reward"] == 2.5


def test_a_row_without_its_reset_column_fails_that_rollout_only(server):
    slot = session(server)
    assert slot.reset(**{Session.ROW_KEY: 2}) is None
    assert slot.failure == ("environment 'openenv' could not start: ValueError: the row has no column 'seed' "
                            "(params.reset_columns)")
    with pytest.raises(ToolError, match="the row has no column 'seed'"):
        slot.step(action={"completion": "4"})
    assert slot.get_reward() is None
    slot.reset(**{Session.ROW_KEY: 0})
    assert json.loads(slot.step(action={"completion": GOOD.format(4)}))["reward"] == 2.5


def test_a_server_that_is_down_is_named(tmp_path):
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    slot = session(url)
    assert slot.reset(**{Session.ROW_KEY: 0}) is None
    assert slot.failure.startswith(f"environment 'openenv' could not start: ConnectionError: OpenEnv server {url}: "
                                   f"reset failed: ConnectionError: Failed to connect to ws://127.0.0.1:")
    with pytest.raises(ToolError, match=f"OpenEnv server {url}: reset failed"):
        slot.step(action={"completion": "4"})
    assert slot.get_reward() is None


def test_a_connection_lost_mid_episode_is_named_and_the_next_reset_reconnects(tmp_path):
    with openenv_server(tmp_path, SPEC, ROWS) as url:
        slot = session(url)
        slot.reset(**{Session.ROW_KEY: 0})
    with pytest.raises(ToolError, match=f"OpenEnv server {url}: step failed: "):
        slot.step(action={"completion": GOOD.format(4)})  # the server is gone
    assert slot.get_reward() is None
    with openenv_server(tmp_path, SPEC, ROWS) as again:
        slot.instance.params.url = again  # the same slot, pointed at a server that is up again
        slot.reset(**{Session.ROW_KEY: 0})
        assert json.loads(slot.step(action={"completion": GOOD.format(4)}))["reward"] == 2.5


def test_the_model_reads_one_documented_tool():
    from transformers.utils import get_json_schema

    environment = load_plugins().registry.environment("openenv")
    assert environment.tools == ("step",) and environment.has_reward
    schema = get_json_schema(environment.session_class().step)["function"]
    assert schema["parameters"]["properties"]["action"]["type"] == "object"
    assert schema["description"].startswith("Act once: send an action")
