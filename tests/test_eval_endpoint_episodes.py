"""``grpo-host eval --environment`` against an OpenAI-compatible endpoint: episodes over the chat API.

The server is ``transformers serve`` (a real one, on 127.0.0.1) with the
model the agent tests warm up to open with a ``read`` call
(:func:`agent_helpers.shared_warm_up`), saved with the response template
TRL's ``add_response_schema`` gives its Qwen3 chat template: with it,
``transformers serve`` parses the generated call into the answer's
``tool_calls``, as vLLM's tool parser does.  The episodes run the test agent
pack's real ``notes`` environment in real subprocesses of the CLI.

The server cannot be made to send a malformed call (its parser drops what
is not JSON, and it always gives ids), so what a bad call becomes is tested
on the reading of the answer's ``tool_calls`` and the real guarded session.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from agent_helpers import ROWS, shared_warm_up
from conftest import GRPO_HOST, write_jsonl
from transformers_serve import transformers_serve

from grpo_host.errors import UserError
from grpo_host.runs.record import read_record
from grpo_host.scoring.trajectory import Trajectory
from grpo_host.training.agent_loop import call_tools
from grpo_host.training.chat_episodes import read_calls, reply_of

ROOT = Path(__file__).resolve().parents[1]
CALL_TOKENS = 59
"""The warmed-up model's first turn, ``<tool_call>...</tool_call><|im_end|>``, in the tiny vocabulary's tokens."""


@pytest.fixture(scope="module")
def served(tmp_path_factory, packs):
    """The warmed-up model behind ``transformers serve``, with its response template saved beside it."""
    from transformers import AutoTokenizer
    from trl.chat_template_utils import add_response_schema

    folder = tmp_path_factory.mktemp("served") / "model"
    shutil.copytree(shared_warm_up(tmp_path_factory, packs["agentpack"]), folder)
    add_response_schema(AutoTokenizer.from_pretrained(str(folder))).save_pretrained(str(folder))
    with transformers_serve(folder) as url:
        yield url


def evaluate(model: str, tmp_path: Path, env: dict[str, str], packs: dict[str, Path], name: str,
             *extra: str) -> tuple[dict, list[dict], list[dict]]:
    """One CLI evaluation in the notes environment: its result, its record, and what seen_tools saw."""
    rows, out, seen = write_jsonl(tmp_path / "rows.jsonl", ROWS), tmp_path / name, tmp_path / f"{name}.jsonl"
    proc = subprocess.run([GRPO_HOST, "eval", model, str(rows), "--environment", "notes", "-r", "seen_tools:1", "-o",
                           str(out), "-k", "2", "--temperature", "0", "--concurrency", "2", "--json", *extra],
                          capture_output=True, text=True, cwd=ROOT, timeout=600,
                          env={**env, "PYTHONPATH": str(packs["agentpack"]), "SEEN_FILE": str(seen)})
    assert proc.returncode == 0, proc.stderr
    saw = [json.loads(line) for line in seen.read_text().splitlines()]
    return json.loads(proc.stdout), read_record(out).to_pylist(), saw


@pytest.mark.slow  # the shared SFT warm-up (minutes on a CPU), transformers serve starting, two evaluations
@pytest.mark.timeout(1800)
def test_the_server_s_tool_calls_run_in_the_environment_and_their_results_go_back_with_the_call_id(
        served, env, packs, tmp_path, tmp_path_factory):
    found, table, saw = evaluate(served, tmp_path, env, packs, "ev", "--max-completion-length", "120",
                                 "--max-tool-calls", "1")
    assert (found["prompts"], found["samples"]) == (2, 4)
    # greedy, the model opens every episode with its read call: seen_tools is 1 on every sample
    assert found["metrics"]["seen_tools"]["pass@1"]["value"] == 1.0
    assert found["metrics"]["NotesSession"]["mean@k"]["value"] == 0.0  # no note written
    assert len(saw) == 4 and all(s["calls"] == [["read", {}]] and s["results"] == [""] for s in saw)
    for r in table:
        messages = json.loads(r["trajectory"])
        [call] = messages[0]["tool_calls"]
        assert call["function"] == {"name": "read", "arguments": "{}"}  # as the server sent it: JSON text
        assert isinstance(call["id"], str) and call["id"]
        assert messages[1] == {"role": "tool", "name": "read", "content": "", "tool_call_id": call["id"]}
        assert messages[2]["role"] == "assistant" and "tool_calls" not in messages[2]  # the round budget: 1
        # the budget counts the server's tokens: the call, the tool result as its template renders it, the rest
        assert CALL_TOKENS < r["length"] <= 120
        assert r["total"] == r["reward/seen_tools"] + r["reward/NotesSession"]
    # the same model's local episodes (the token loop, TRL's parser): the same episodes, the same lengths
    _, local, _ = evaluate(str(shared_warm_up(tmp_path_factory, packs["agentpack"])), tmp_path, env, packs, "local",
                           "--max-completion-length", "120", "--max-tool-calls", "1")
    assert [episode(r) for r in local] == [episode(r) for r in table]


def episode(r: dict) -> tuple:
    """What a rollout did, as rewards read it (ids and the arguments' JSON text aside), and its length."""
    t = Trajectory.of(json.loads(r["trajectory"]))
    return [(c.name, c.arguments) for c in t.tool_calls], t.tool_results, t.text, t.turns, r["length"]


@pytest.mark.slow  # shares the served model above
@pytest.mark.timeout(1800)
def test_an_endpoint_episode_keeps_the_token_loop_s_budgets(served, env, packs, tmp_path):
    # no round of tool calls allowed: the turn that calls a tool ends the episode with its calls unrun
    _, table, saw = evaluate(served, tmp_path, env, packs, "rounds", "--max-completion-length", "120",
                             "--max-tool-calls", "0")
    assert all(s["results"] == [] and s["calls"] == [["read", {}]] for s in saw)
    assert all(len(json.loads(r["trajectory"])) == 1 and r["length"] == CALL_TOKENS for r in table)
    # room for the call but not for its result: the result is dropped and the episode ends, as the token loop
    # drops a result that would pass max_completion_length
    _, table, saw = evaluate(served, tmp_path, env, packs, "tokens", "--max-completion-length", str(CALL_TOKENS + 5))
    assert all(s["results"] == [] for s in saw)
    assert all(len(json.loads(r["trajectory"])) == 1 and r["length"] == CALL_TOKENS for r in table)


def notes_session(packs, monkeypatch):
    from grpo_host.discovery.plugins import load_plugins

    monkeypatch.syspath_prepend(str(packs["agentpack"]))
    plugins = load_plugins(env={"GRPO_HOST_LOAD_PLUGINS": "agentpack"})
    session = plugins.registry.environment("notes").session_class()(rows=[{"answer": "1"}])
    session.reset(_grpo_host_row=0)
    return session


def test_a_bad_call_from_the_server_is_the_tool_error_the_token_loop_writes(packs, monkeypatch):
    """Arguments that are not JSON, or not an object, an unknown tool, a call that is not an object, a call without
    an id: each is answered in its tool result (and counted by Trajectory), and every call gets an id the result
    is sent back with."""
    raw = [{"id": "a", "type": "function", "function": {"name": "write", "arguments": "{\"text\": "}},
           {"id": "b", "type": "function", "function": {"name": "write", "arguments": "[1, 2]"}},
           {"id": "c", "type": "function", "function": {"name": "erase", "arguments": "{}"}},
           "read()",
           {"type": "function", "function": {"name": "write", "arguments": "{\"text\": \"it is 1\"}"}},
           {"id": "", "function": {"name": "read", "arguments": {}}}]
    sent, runnable = read_calls(raw, 3)
    assert [c["id"] for c in sent] == ["a", "b", "c", "call_3_3", "call_3_4", "call_3_5"]
    assert [c["function"]["arguments"] for c in sent] == ["{\"text\": ", "[1, 2]", "{}", "null",
                                                           "{\"text\": \"it is 1\"}", "{}"]
    results, failures = call_tools(notes_session(packs, monkeypatch), runnable)
    assert failures == 4
    assert [r["content"] for r in results] == [
        "{'error': 'tool write: the arguments are not a JSON object'}",
        "{'error': 'tool write: the arguments are not a JSON object'}",
        "{'error': 'Tool erase not found.'}",
        "{'error': 'Unsupported tool call type: str'}",
        "stored note 1",
        "it is 1"]
    trajectory = Trajectory.of([{"role": "assistant", "content": "", "tool_calls": sent}, *results])
    assert trajectory.tool_errors == 4 and len(trajectory.tool_calls) == 6


def test_an_answer_without_usage_or_not_a_chat_completion_names_the_endpoint():
    message = {"role": "assistant", "content": "hi"}
    with pytest.raises(UserError, match=r"endpoint http://e/v1: its answer gives no usage"):
        reply_of({"choices": [{"message": message}]}, "http://e/v1")
    with pytest.raises(UserError, match=r"endpoint http://e/v1: an answer that is not an OpenAI chat completion"):
        reply_of({"choices": [{"text": "hi"}], "usage": {"prompt_tokens": 1, "completion_tokens": 1}},
                 "http://e/v1")
    reply = reply_of({"choices": [{"message": {**message, "tool_calls": [], "reasoning_content": "r"}}],
                      "usage": {"prompt_tokens": 7, "completion_tokens": 2}}, "http://e/v1")
    assert (reply.message, reply.prompt_tokens, reply.completion_tokens) == (
        {"role": "assistant", "content": "hi", "reasoning_content": "r"}, 7, 2)
