"""``grpo_host.integrations.openenv`` with openenv-core 0.3.0 itself: its ``Rubric`` machinery, its server
(``create_app`` under uvicorn, in a subprocess) and its own client (``GenericEnvClient``) stepping the environment."""

from __future__ import annotations

import pytest
from openenv.core.generic_client import GenericEnvClient
from openenv_server import openenv_server

from grpo_host import UserError
from grpo_host.integrations.openenv import CompletionAction, SpecRubric, environment_factory

SPEC = "math:2, r1_strict_format:0.5"
GOOD = "<think>\nadd\n</think>\n<answer>\n4\n</answer>"
TOOLS = [{"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {
            "name": "python", "arguments": '{"code": "print(2+2)"}'}}]},
         {"role": "tool", "tool_call_id": "c1", "content": "4\n"},
         {"role": "assistant", "content": "<answer>\n4\n</answer>", "reasoning_content": "add"}]


def test_rubric_total_and_each_reward_as_a_child():
    rubric = SpecRubric(SPEC)
    assert rubric(CompletionAction(completion=GOOD), {"prompt": "What is 2+2?", "answer": "4"}) == 2.5
    assert {name: r.last_score for name, r in rubric.named_rubrics()} == {"math": 1.0, "r1_strict_format": 1.0}
    assert rubric.last_score == 2.5 and rubric.last_error is None


def test_rubric_reads_a_tool_using_trajectory_as_its_final_text():
    rubric = SpecRubric(SPEC)
    assert rubric(CompletionAction(completion=TOOLS), {"answer": "4"}) == 2.5


def test_rubric_gives_none_not_zero_for_a_row_it_cannot_score():
    rubric = SpecRubric("math")
    assert rubric(GOOD, {"prompt": "q"}) is None  # no answer: the data check refuses the row before math runs
    assert rubric.last_error == "openenv action: reward 'math' needs column 'answer': missing"
    assert rubric.math.last_score is None


def test_bad_rows_are_refused_before_the_environment_exists():
    with pytest.raises(UserError, match=r"reward 'math', column 'answer': empty in 1 rows \(first: row 2\)"):
        environment_factory(SPEC, [{"prompt": "a", "answer": "1"}, {"prompt": "b", "answer": ""}])


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """OpenEnv's own server for a grpo-host spec over two rows, as ``uvicorn server:app`` runs it."""
    with openenv_server(tmp_path_factory.mktemp("openenv"), SPEC, [
            {"prompt": "What is 2+2?", "answer": "4"}, {"prompt": "What is 2+3?", "answer": "5"}]) as url:
        yield url


def test_openenv_client_steps_the_served_environment(server):
    with GenericEnvClient(base_url=server).sync() as env:
        first = env.reset(seed=1)
        assert first.observation["prompt"] == "What is 2+3?" and first.reward is None and not first.done
        result = env.step({"completion": GOOD.replace("4", "5")})
        assert result.done and result.reward == 2.5
        assert result.observation["rewards"] == {"math": 1.0, "r1_strict_format": 1.0}
        env.reset(seed=0)
        assert env.step({"completion": GOOD.replace("4", "5")}).reward == 0.5  # wrong answer, right format
        env.reset(seed=0)
        assert env.step(CompletionAction(completion=TOOLS).model_dump()).reward == 2.5


def test_an_unscored_completion_is_reported_with_no_reward(server):
    """An empty message list is no completion: OpenEnv's reward is None (never 0.0), and the error says why."""
    with GenericEnvClient(base_url=server).sync() as env:
        env.reset(seed=0)
        result = env.step({"completion": []})
    assert result.reward is None and result.done
    assert result.observation["error"] == "line 1: no 'completion' to score"  # the file's line


def test_the_pinned_openenv_declares_no_validation_graders():
    """Why grpo-host registers no ``openenv.validation.graders`` (docs/frameworks.md, "Not yet"): openenv-core 0.3.0
    has no ``openenv.validation`` package, and nothing declares the group.  When the pin moves to a release that has
    them, this fails, and the audit's gold self-check and probes can be mapped onto what it declares."""
    import importlib.metadata
    import importlib.util

    assert importlib.metadata.version("openenv-core") == "0.3.0"
    assert importlib.util.find_spec("openenv.validation") is None
    assert not importlib.metadata.entry_points(group="openenv.validation.graders")
