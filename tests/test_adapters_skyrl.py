"""``grpo_host.integrations.skyrl`` in skyrl-gym 0.4.0's own registry: made by ``skyrl_gym.make`` from SkyRL's row
shape (``extras`` with ``reward_spec`` and ``extra_info``), started with ``init`` and stepped as SkyRL's generator
steps it, its metrics averaged by SkyRL-Gym's own aggregation."""

from __future__ import annotations

import logging

import pytest
import skyrl_gym
from omegaconf import DictConfig
from skyrl_gym.envs.base_text_env import BaseTextEnv

from grpo_host import UserError
from grpo_host.integrations.skyrl import register

GOOD = "<think>\nadd\n</think>\n<answer>\n4\n</answer>"
PROMPT = [{"role": "user", "content": "What is 2+2?"}]


@pytest.fixture(scope="module", autouse=True)
def registered():
    register("accuracy:2, r1_strict_format:0.5")
    yield
    skyrl_gym.registry.pop("grpo_host")


def extras(gold, index=3) -> dict:
    return {"reward_spec": {"method": "rule", "ground_truth": gold}, "extra_info": {"index": index}, "max_turns": 1}


def episode(reply: str, env_id: str = "grpo_host", env_config=None, **row):
    env = skyrl_gym.make(env_id, env_config=env_config or DictConfig({}), extras=row or extras("4"))
    assert isinstance(env, BaseTextEnv)
    observation, _ = env.init(PROMPT)
    assert observation == PROMPT
    return env, env.step(reply)


def test_made_from_skyrl_registry_and_stepped_once():
    env, out = episode(GOOD)
    assert (out["reward"], out["done"], out["observations"]) == (2.5, True, [])
    assert out["metadata"]["grpo_host"] == {"rewards": {"accuracy": 1.0, "r1_strict_format": 1.0}, "total": 2.5,
                                            "scored": True, "error": None}
    _, wrong = episode(GOOD.replace("4", "5"))
    assert wrong["reward"] == 0.5
    assert env.get_metrics() == {"grpo_host/scored": 1.0, "grpo_host/accuracy": 1.0, "grpo_host/r1_strict_format": 1.0}


def test_the_spec_may_come_from_skyrls_config():
    register(id="grpo_host_configured")
    try:
        _, out = episode(GOOD, "grpo_host_configured", DictConfig({"rewards": "r1_strict_format"}))
    finally:
        skyrl_gym.registry.pop("grpo_host_configured")
    assert out["reward"] == 1.0 and out["metadata"]["grpo_host"]["rewards"] == {"r1_strict_format": 1.0}


def test_a_row_lacking_a_column_fails_at_init_naming_row_reward_and_column():
    env = skyrl_gym.make("grpo_host", env_config=DictConfig({}), extras={"extra_info": {"index": 9}})
    with pytest.raises(UserError, match=r"accuracy.*answer") as caught:
        env.init(PROMPT)
    assert "skyrl row 9" in str(caught.value) and "\n" not in str(caught.value)  # one line
    with pytest.raises(RuntimeError, match="call init"):
        env.step(GOOD)


def test_an_unscored_reply_is_not_silent(caplog):
    """No reward applied (an empty gold: accuracy None, and the spec has nothing else): SkyRL's float is 0.0, but the
    metadata, a warning and the metrics say it was not scored."""
    register("accuracy", id="grpo_host_accuracy")
    try:
        with caplog.at_level(logging.WARNING, logger="grpo_host.integrations.skyrl"):
            env, out = episode(GOOD, "grpo_host_accuracy", **extras("  ", index=5))
    finally:
        skyrl_gym.registry.pop("grpo_host_accuracy")
    assert out["reward"] == 0.0 and out["metadata"]["grpo_host"]["scored"] is False
    assert out["metadata"]["grpo_host"]["rewards"] == {"accuracy": None}
    assert "skyrl row 5: no reward of the spec applied" in caplog.text
    metrics = [env.get_metrics(), episode(GOOD)[0].get_metrics()]
    assert BaseTextEnv.aggregate_metrics(metrics)["grpo_host/scored"] == 0.5  # SkyRL's average over episodes
