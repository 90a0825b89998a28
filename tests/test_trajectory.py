"""Completions as rewards read them: text with reasoning restored, whole trajectories, hostile message lists."""

from __future__ import annotations

from pathlib import Path

import pytest

from grpo_host import Ensemble, completion_text, reward
from grpo_host.scoring.ensemble import Member
from grpo_host.scoring.trajectory import Trajectory
from reward_plugins.r1.rewards import r1_strict_format, think_format

TOOL_ROLLOUT = [
    {"role": "assistant", "reasoning_content": "I should compute", "content": "",
     "tool_calls": [{"type": "function", "function": {"name": "python", "arguments": {"code": "print(6*7)"}}}]},
    {"role": "tool", "name": "python", "content": "42\n"},
    {"role": "assistant", "reasoning_content": "it printed 42", "content": "<answer>\n42\n</answer>"},
]


def test_a_string_is_its_own_text_and_a_one_turn_trajectory():
    t = Trajectory.of("<answer>4</answer>")
    assert completion_text("<answer>4</answer>") == t.text == "<answer>4</answer>"
    assert (t.turns, t.tool_calls, t.finished) == (1, (), True)


def test_the_final_answer_gets_its_reasoning_back_in_the_r1_shape():
    t = Trajectory.of(TOOL_ROLLOUT)
    assert t.text == "<think>\nit printed 42\n</think>\n<answer>\n42\n</answer>"
    assert (t.turns, len(t.tool_calls), t.tool_results, t.tool_errors) == (2, 1, ("42\n",), 0)
    assert t.tool_calls[0].name == "python" and t.tool_calls[0].arguments == {"code": "print(6*7)"}


def test_a_rollout_ending_in_a_tool_call_has_no_final_answer():
    t = Trajectory.of(TOOL_ROLLOUT[:2])
    assert (t.finished, t.text, t.counts["unfinished"]) == (False, "", 1.0)
    assert Trajectory.of([]).finished is False and Trajectory.of([]).text == ""


def test_hostile_message_lists_are_read_as_far_as_they_go():
    t = Trajectory.of([
        "not a message", 7, {"role": "assistant", "content": None,
                            "tool_calls": [{"function": {"name": 3, "arguments": "{not json"}}, "junk",
                                           {"name": "flat", "arguments": "[" * 100_000}]},
        {"role": "tool", "content": "{'error': 'Tool nope not found.'}"},
        {"role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "image"}, {"text": 5}]},
    ])
    assert t.text == "a" and t.turns == 2 and t.tool_errors == 1
    assert [(c.name, c.parsed) for c in t.tool_calls] == [("", False), ("flat", False)]
    with pytest.raises(TypeError, match="string or a list of chat messages"):
        Trajectory.of(42)


@reward(trajectory=True)
def tool_calls_made(rollout, **_):
    """The number of tool calls in the rollout."""
    return float(len(rollout.tool_calls))


@pytest.mark.parametrize("executor", ["inline", "process"])
def test_a_trajectory_reward_sees_the_whole_rollout_and_a_text_reward_the_final_text(executor):
    import dataclasses

    calls = dataclasses.replace(tool_calls_made, executor=executor, pack="tests", version="0")
    with Ensemble([Member(calls), Member(r1_strict_format)]) as e:
        r = e.score([TOOL_ROLLOUT, "<think>\nx\n</think>\n<answer>\n4\n</answer>"])
    assert r.values == {"tool_calls_made": [1.0, 0.0], "r1_strict_format": [1.0, 1.0]}


@pytest.mark.slow
@pytest.mark.parametrize("text", [
    "<think>\nsteps\n</think>\n<answer>\n4\n</answer>\n",
    "<think>\nsteps\n</think>\nThe answer is 4.",
    "no reasoning at all <answer>4</answer>",
])
def test_think_rewards_score_a_tool_rollout_as_the_same_text_parsed_without_tools(text):
    """TRL parses every completion with the tokenizer's response schema (tools or not) and moves <think> into
    reasoning_content; the final text a reward sees must not depend on whether tools were called first."""
    trl = pytest.importorskip("trl")
    from transformers import AutoTokenizer
    from trl.chat_template_utils import add_response_schema, parse_response

    from grpo_host.training.builtin_model import tiny_model_dir

    tokenizer = AutoTokenizer.from_pretrained(str(tiny_model_dir()))
    tokenizer.chat_template = (Path(trl.__file__).parent / "chat_templates" / "qwen3.jinja").read_text()
    add_response_schema(tokenizer)
    prefix = tokenizer.encode(tokenizer.apply_chat_template([{"role": "user", "content": "2+2?"}],
                                                            add_generation_prompt=True, tokenize=False))

    def parsed(output: str) -> dict:
        return parse_response(tokenizer, tokenizer.encode(output, add_special_tokens=False), prefix=prefix)

    call = parsed('<think>\nuse the tool\n</think>\n<tool_call>\n{"name": "python", "arguments": {"code": "1"}}\n'
                  '</tool_call>')
    assert call["tool_calls"][0]["function"]["name"] == "python"
    alone = [parsed(text)]
    with_tools = [call, {"role": "tool", "name": "python", "content": "1"}, parsed(text)]
    for fn in (r1_strict_format, think_format):
        assert fn.score_one(with_tools) == fn.score_one(alone)
    assert completion_text(with_tools) == completion_text(alone)


def test_score_reads_trajectory_rows_as_trainers_write_them(tmp_path):
    """OpenAI-style message lists (tool calls with JSON-text arguments, tool results, reasoning_content) score
    through ``grpo-host score`` as they do in training."""
    import json

    from conftest import run_cli, write_jsonl

    data = write_jsonl(tmp_path / "rollouts.jsonl", [
        {"prompt": "2+2?", "answer": "4", "completion": [
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "python", "arguments": '{"code": "print(4)"}'}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "4"},
            {"role": "assistant", "reasoning_content": "it printed 4", "content": "<answer>\n4\n</answer>"}]},
        {"prompt": "2+2?", "answer": "4", "completion": TOOL_ROLLOUT[:2]},  # ended in a tool call
    ])
    proc = run_cli("score", str(data), "--rewards", "accuracy, r1_strict_format", "--out", "-")
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert proc.returncode == 0, proc.stderr
    assert [line["rewards"] for line in lines] == [{"accuracy": 1.0, "r1_strict_format": 1.0},
                                                   {"accuracy": 0.0, "r1_strict_format": 0.0}]


def test_fenced_blocks_are_the_closed_ones_in_order_with_their_tags_as_written():
    from grpo_host import fenced_blocks

    text = "intro\n```Python extra\nprint(1)\n```\nprose ``` not a fence\n```\nbare\n```\n```cpp\nint main(){}\n"
    assert fenced_blocks(text) == [("Python", "print(1)"), ("", "bare")]  # the last block never closed
    assert fenced_blocks("````\nx\n`````\n") == [("`", "x")] and fenced_blocks("") == []
