"""``grpo_host.integrations.verl.compute_score`` called exactly as verl calls a ``custom_reward_function``.

verl itself is not installed for this test: ``pip install verl`` (0.9.1)
would replace transformers 5.24 with 5.10 and pull wandb, tensorboard and
hydra into the environment the TRL tests use.  So the calls below replicate
verl's source at commit b178a3cd56f58b2d502255daba591e92833930a7
(volcengine/verl), step for step:

* loading: ``verl/trainer/ppo/reward.py`` lines 80-96 (``get_custom_reward_fn``:
  ``load_extern_object(path, name)``, then ``partial(_call_with_kwargs, raw_fn,
  reward_kwargs)``, lines 42-48), and ``verl/utils/import_utils.py`` lines
  106-108 (a ``pkg://`` path is ``importlib.import_module``);
* the naive manager: ``verl/workers/reward_manager/naive.py`` lines 77-100
  (``extra_info`` gains ``num_turns`` and ``rollout_reward_scores``; keyword
  call; a dict's ``"score"`` goes into a float tensor, every key is appended
  to ``reward_extra_info``);
* the reward loop: ``verl/experimental/reward_loop/reward_manager/naive.py``
  lines 42-84 (a sync ``compute_score`` runs through
  ``loop.run_in_executor(None, ...)``, so many rows at once on threads).
"""

from __future__ import annotations

import asyncio
import importlib
from collections import defaultdict
from functools import partial

import numpy as np
import pytest

from grpo_host import RewardUnusable

torch = pytest.importorskip("torch")

GOOD = "<think>\nadd\n</think>\n<answer>\n4\n</answer>\n"


def load_custom_reward_fn(config: dict):
    """verl/trainer/ppo/reward.py:80-96 with verl/utils/import_utils.py:106-108 for the ``pkg://`` path."""
    reward_fn_config = config.get("custom_reward_function") or {}
    module_path = reward_fn_config.get("path")
    fn_name = reward_fn_config.get("name")
    module = importlib.import_module(module_path[len("pkg://"):].replace("/", "."))
    raw_fn = getattr(module, fn_name)
    reward_kwargs = dict(reward_fn_config.get("reward_kwargs", {}))

    def _call_with_kwargs(raw_fn, extra_kwargs, *args, **kwargs):  # verl/trainer/ppo/reward.py:42-48
        merged_kwargs = {**kwargs, **extra_kwargs}
        return raw_fn(*args, **merged_kwargs)

    return partial(_call_with_kwargs, raw_fn, reward_kwargs)


def naive_manager(compute_score, items: list[dict], response_length: int = 8):
    """verl/workers/reward_manager/naive.py:54-100 on decoded items: the tensor and the extra-info lists."""
    reward_tensor = torch.zeros((len(items), response_length), dtype=torch.float32)
    reward_extra_info = defaultdict(list)
    for i, item in enumerate(items):
        ground_truth = item["reward_model"]["ground_truth"]
        data_source = item["data_source"]
        extra_info = item.get("extra_info", {})
        extra_info["num_turns"] = item.get("__num_turns__", None)
        extra_info["rollout_reward_scores"] = item.get("reward_scores", {})
        score = compute_score(data_source=data_source, solution_str=item["response"], ground_truth=ground_truth,
                              extra_info=extra_info)
        if isinstance(score, dict):
            reward = score["score"]
            for key, value in score.items():
                reward_extra_info[key].append(value)
        else:
            reward = score
        reward_tensor[i, response_length - 1] = reward
    return reward_tensor, reward_extra_info


async def reward_loop(compute_score, items: list[dict]):
    """verl/experimental/reward_loop/reward_manager/naive.py:42-97, every row at once as the loop's workers do."""
    loop = asyncio.get_running_loop()

    async def run_single(item):
        extra_info = item.get("extra_info", {})
        extra_info["num_turns"] = None
        extra_info["rollout_reward_scores"] = {}
        result = await loop.run_in_executor(None, lambda: compute_score(
            data_source=item["data_source"], solution_str=item["response"],
            ground_truth=item["reward_model"]["ground_truth"], extra_info=extra_info))
        return result["score"] if isinstance(result, dict) else result

    return await asyncio.gather(*(run_single(item) for item in items))


def item(response: str, truth, source: str = "openai/gsm8k", **extra) -> dict:
    return {"data_source": source, "response": response, "reward_model": {"ground_truth": truth},
            "extra_info": {"split": "train", "index": 0, **extra}}


CONFIG = {"custom_reward_function": {"path": "pkg://grpo_host.integrations.verl", "name": "compute_score",
                                     "reward_kwargs": {"rewards": "accuracy:1, r1_strict_format:0.5"}}}


def test_naive_manager_scores_through_reward_kwargs():
    fn = load_custom_reward_fn(CONFIG)
    items = [item(GOOD, "4"), item(GOOD, "5"), item("no tags", "4"), item(GOOD, None)]
    tensor, extra = naive_manager(fn, items)
    assert tensor[:, -1].tolist() == [1.5, 0.5, 0.0, 0.0]
    assert extra["grpo_host/accuracy"] == [1.0, 0.0, 0.0, 0.0]
    assert extra["grpo_host/r1_strict_format"] == [1.0, 1.0, 0.0, 0.0]
    # the row without a ground truth lacks accuracy's answer: a counted bad row, not a crash
    assert extra["grpo_host/scored"] == [1.0, 1.0, 1.0, 0.0]
    # what verl's trainer does with the lists next: one array per key, one entry per response
    assert {k: np.array(v).shape for k, v in extra.items()} == {k: (4,) for k in extra}


def test_data_sources_from_the_environment(monkeypatch):
    monkeypatch.setenv("GRPO_HOST_VERL_REWARDS", '{"openai/gsm8k": "accuracy", "*": "r1_strict_format"}')
    fn = load_custom_reward_fn({"custom_reward_function": {"path": "pkg://grpo_host.integrations.verl",
                                                           "name": "compute_score"}})
    tensor, extra = naive_manager(fn, [item(GOOD, "4"), item("plain", "4", source="other"), item(GOOD, "9", "x")])
    assert tensor[:, -1].tolist() == [1.0, 0.0, 1.0]
    # every reply carries every configured reward's key, whichever spec scored it
    assert set(extra) == {"score", "grpo_host/accuracy", "grpo_host/r1_strict_format", "grpo_host/scored"}
    assert extra["grpo_host/accuracy"] == [1.0, 0.0, 0.0]


def test_extra_info_becomes_columns(monkeypatch):
    from grpo_host.integrations import verl

    monkeypatch.setitem(verl.DATA_SOURCES, "echo", "r1_soft_format:1, accuracy:1")
    fn = load_custom_reward_fn({"custom_reward_function": {"path": "pkg://grpo_host.integrations.verl",
                                                           "name": "compute_score"}})
    # the gold can also arrive through extra_info: ground_truth None, extra_info {"answer": ...}
    tensor, extra = naive_manager(fn, [item(GOOD, None, source="echo", answer="4")])
    assert extra["grpo_host/accuracy"] == [1.0] and tensor[0, -1].item() == 2.0
    # a ground truth that is not text (a list, a number) reaches the answer column as JSON
    tensor, _ = naive_manager(fn, [item("<think>\n.\n</think>\n<answer>\n[1, 2]\n</answer>\n", [1, 2], "echo")])
    assert tensor[0, -1].item() == 2.0


def test_reward_loop_threads_get_their_own_answers():
    fn = load_custom_reward_fn({**CONFIG, "custom_reward_function": {
        **CONFIG["custom_reward_function"], "reward_kwargs": {"rewards": "math"}}})
    items = [item(f"the answer is \\boxed{{{n}}}", str(n if n % 3 else n + 1)) for n in range(24)]
    scores = asyncio.run(reward_loop(fn, items))
    assert scores == [0.0 if n % 3 == 0 else 1.0 for n in range(24)]


def test_an_unmapped_data_source_is_a_configuration_error(monkeypatch):
    monkeypatch.delenv("GRPO_HOST_VERL_REWARDS", raising=False)
    fn = load_custom_reward_fn({"custom_reward_function": {"path": "pkg://grpo_host.integrations.verl",
                                                           "name": "compute_score"}})
    with pytest.raises(RewardUnusable, match="no grpo-host rewards for data_source 'openai/gsm8k'"):
        naive_manager(fn, [item(GOOD, "4")])
