"""Run by tests/test_adapters_verifiers.py in a venv holding verifiers 0.4.0: verifiers' own ``Task.score`` on
traces built from verifiers' own message classes, with a grpo-host spec plugged in as the task's reward by path
(``fn = "this_file.py:grpo_reward"``, as a verifiers config names it).  Prints one JSON object."""

import asyncio
import json

import verifiers.v1 as vf
from verifiers.v1.graph import MessageNode
from verifiers.v1.state import State
from verifiers.v1.trace import AgentInfo, TraceTask

from grpo_host.integrations.verifiers import reward_function

grpo_reward = reward_function("math:2, r1_strict_format:0.5, r1_xmlcount:0")
math_only = reward_function("math")


class MathData(vf.TaskData):
    answer: str | None = None


class MathTask(vf.Task[MathData, vf.State, vf.TaskConfig]):
    pass


def score(answer, *messages, fn="grpo_reward"):
    """A trace whose prompt is a user turn and whose sampled turns are ``messages``, scored by verifiers."""
    config = vf.TaskConfig(rewards={"grpo_host": vf.RewardFunctionConfig(fn=f"{__file__}:{fn}")})
    task = MathTask(MathData(idx=7, prompt="What is 2+2?", answer=answer), config=config)
    nodes = [MessageNode(message=vf.UserMessage(content="What is 2+2?"))]
    for message in messages:
        nodes.append(MessageNode(parent=len(nodes) - 1, message=message, sampled=message.role == "assistant"))
    trace = vf.Trace(task=TraceTask(type="MathTask", data=task.data, key=task.key, hash=task.hash), state=State(),
                     agent=AgentInfo(config=vf.AgentConfig()), nodes=nodes)
    try:
        asyncio.run(task.score(trace))
    except vf.TaskError as exc:  # what a rollout records on the trace
        trace.record_error(exc)
    return {"rewards": {k: None if r is None else [r.score, r.weight] for k, r in trace.rewards.items()},
            "metrics": trace.metrics, "reward": trace.reward, "ok": not trace.errors,
            "errors": [e.message for e in trace.errors]}


if __name__ == "__main__":
    final = "<answer>\n4\n</answer>"
    call = vf.ToolCall(id="c1", name="python", arguments='{"code": "print(2+2)"}')
    print(json.dumps({
        "text": score("4", vf.AssistantMessage(content=f"<think>\nadd\n</think>\n{final}")),
        "tools": score("4", vf.AssistantMessage(content="", reasoning_content="use the tool", tool_calls=[call]),
                       vf.ToolMessage(tool_call_id="c1", content="4\n"),
                       vf.AssistantMessage(content=final, reasoning_content="add")),
        "wrong": score("5", vf.AssistantMessage(content=f"<think>\nadd\n</think>\n{final}")),
        "no_gold": score(None, vf.AssistantMessage(content=final)),
        "unparsed_gold": score("\\frac{", vf.AssistantMessage(content=final), fn="math_only"),
        "no_reply": score("4"),
    }))
