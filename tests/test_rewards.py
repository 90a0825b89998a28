"""The reward contract: declaration, return values, chat completions, TRL's calling convention."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
import sample_rewards

from grpo_host import RewardError, completion_text, reward
from grpo_host.scoring.contract import Column


def test_declaration_defaults_from_the_function():
    @reward
    def plain(completion, **_):
        """Scores 1."""
        return 1

    assert plain.name == "plain" and plain.__name__ == "plain"
    assert plain.description == "Scores 1." and plain.requires == () and not plain.batch


def test_any_of_column_groups():
    col = Column(("expected", "answer"), str)
    assert col.problem({"answer": "4"}) is None
    assert col.problem({"expected": "", "answer": "4"}) is None
    assert col.problem({"prompt": "p"}) == ("expected or answer", "missing")
    assert col.problem({"expected": None, "answer": ""}) == ("expected or answer", "empty")
    assert col.problem({"answer": 4})[1].startswith("wrong type: expected str, got int")


def test_typed_columns_use_pydantic_for_generic_types():
    col = Column(("tests",), list[dict[str, str]])
    assert col.problem({"tests": [{"input": "1", "output": "2"}]}) is None
    assert col.problem({"tests": [{"input": 1}]})[1].startswith("wrong type")
    assert Column(("score",), float).problem({"score": 3}) is None
    assert Column(("score",), float).problem({"score": True})[1].startswith("wrong type")


def test_params_are_validated_and_passed():
    bound = sample_rewards.echo.bind({"scale": 2})
    assert bound.score_one("1.5", answer="x") == 3.0
    with pytest.raises(ValueError, match=r"bad parameters for reward 'echo'[\s\S]*scale \(number, default 1.0\)"):
        sample_rewards.echo.bind({"scael": 2})
    with pytest.raises(ValueError, match="takes no parameters"):
        sample_rewards.misbehave.bind({"x": 1})


@pytest.mark.parametrize(("text", "expected"), [("nan", None), ("2", 2.0)])
def test_nan_is_none(text, expected):
    assert sample_rewards.misbehave(prompts=["p"], completions=[text]) == [expected]


@pytest.mark.parametrize(("text", "message"), [("inf", "returned inf"), ("text", "returned str '1.0'")])
def test_inf_and_non_numbers_are_errors_naming_the_reward(text, message):
    with pytest.raises(RewardError, match=f"reward 'misbehave' \\(pack \\? \\?\\) {message}"):
        sample_rewards.misbehave(prompts=["p"], completions=[text])


def test_batch_reward_wrong_count_is_an_error():
    assert sample_rewards.batch_count(prompts=["p"] * 3, completions=["a", "b", "a"]) == [2.0, 1.0, 2.0]
    with pytest.raises(RewardError, match="returned 1 values for 2 completions"):
        sample_rewards.batch_count(prompts=["p", "p"], completions=["short", "x"])


def test_chat_completions_reduce_to_the_last_assistant_message():
    chat = [{"role": "assistant", "content": "first"}, {"role": "tool", "content": "t"},
            {"role": "assistant", "content": "<answer>4</answer>"}]
    assert completion_text(chat) == "<answer>4</answer>"
    assert completion_text([{"role": "assistant",
                             "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]) == "ab"
    with pytest.raises(TypeError):
        completion_text(42)


@pytest.mark.slow  # over 2 s: a real GRPOTrainer
def test_a_reward_is_a_trl_reward_function_called_by_grpo_trainer_itself():
    """Run TRL's own GRPOTrainer._calculate_rewards over our Reward objects, an async one among them
    (TRL gathers async reward functions on its own event loop)."""
    pytest.importorskip("trl")
    from accelerate import Accelerator
    from transformers import TrainerState
    from trl import GRPOTrainer
    from trl.trainer.utils import shutdown_event_loop_in_daemon, start_event_loop_in_daemon

    from grpo_host import get_reward

    accuracy, think = get_reward("accuracy"), get_reward("think_format").bind({"prefilled": "no"})
    funcs = [accuracy, think, sample_rewards.echo, sample_rewards.waits_batch]
    thread, loop, ready = start_event_loop_in_daemon(name="test-trl-async")
    ready.wait()
    trainer = SimpleNamespace(
        accelerator=Accelerator(cpu=True),
        reward_funcs=funcs,
        reward_processing_classes=[None] * len(funcs),
        reward_func_names=[f.__name__ for f in funcs],
        state=TrainerState(),
        args=SimpleNamespace(report_to=[]),
        environments=None,
        async_loop=loop,
        _log_completion_extra=lambda column, values: None,
        _log_metric=lambda name, value: None,
    )
    inputs = [
        {"prompt": [{"role": "user", "content": "2+2?"}], "answer": "4", "meta": {"id": 1}},
        {"prompt": [{"role": "user", "content": "3+3?"}], "answer": "6", "meta": {"id": 2, "x": 0}},
    ]
    completions = [
        [{"role": "assistant", "content": "<think>add</think>\n<answer>4</answer>"}],
        [{"role": "assistant", "content": "2.5"}],
    ]
    try:
        rewards = GRPOTrainer._calculate_rewards(trainer, inputs, [i["prompt"] for i in inputs], completions,
                                                 [[1], [2]])
    finally:
        shutdown_event_loop_in_daemon(thread, loop)
    assert trainer.reward_func_names == ["accuracy", "think_format", "echo", "waits_batch"]
    assert rewards.shape == (2, 4)
    assert rewards[0, :2].tolist() == [1.0, 1.0] and math.isnan(rewards[0, 2].item())  # None reaches TRL as NaN
    assert rewards[1, :3].tolist() == [0.0, 0.0, 2.5]
    assert rewards[:, 3].tolist() == [37.0, 3.0]  # the async batch reward, awaited by TRL: completion lengths


def test_columns_of_the_wrong_length_are_not_forwarded():
    seen = {}

    @reward
    def spy(completion, **columns):
        seen.update(columns)
        return 0.0

    spy(prompts=["p", "q"], completions=["a", "b"], answer=["1", "2"], trainer_state=object(), short=["x"])
    assert set(seen) == {"prompt", "answer"}


def test_a_params_model_names_the_columns_its_parameters_make_the_reward_read():
    """``requires()`` on the params model: ``bind`` adds those columns, so the data check refuses a row lacking one
    before the reward runs (the ``eval_protocol`` reward names its function's columns this way)."""
    from pydantic import BaseModel

    from grpo_host import check_rows, reward

    class Params(BaseModel):
        column: str = "unit"

        def requires(self) -> dict:
            return {self.column: str}

    @reward(name="reads_a_named_column", params=Params)
    def reads_a_named_column(completion: str, *, params: Params, **columns) -> float:
        return float(columns[params.column] in completion)

    bound = reads_a_named_column.bind({"column": "label"})
    assert [c.names for c in bound.requires] == [("label",)] and reads_a_named_column.requires == ()
    report = check_rows([("row 1", {"prompt": "p", "label": "x"}), ("row 2", {"prompt": "p"})], [bound])
    assert [(p.reward, p.column, p.problem) for p in report.problems] == [("reads_a_named_column", "label", "missing")]
