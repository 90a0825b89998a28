"""Run by tests/adapter_parity.py in a venv holding verifiers 0.4.0 or eval-protocol 0.3.33: the parity rows scored
through that framework's own call path, each row as the framework hands it to its reward (verifiers: ``Task.score``
on a trace, every trace of the set at once as concurrent rollouts score; eval-protocol: the ``@reward_function``
call, row after row).  Argument: the framework, the rows (JSONL), the spec.  Prints one JSON object: each row's
``{"rewards", "total"}`` as the framework recorded it (None: unscored) and the seconds the rows took after one
warm-up row."""

import asyncio
import json
import sys
import time

from grpo_host.integrations.verifiers import reward_function

grpo_reward = reward_function(sys.argv[3])
"""The verifiers reward, at module level: verifiers loads it by path (``fn = "this_file.py:grpo_reward"``)."""


def verifiers_runner(spec):
    import verifiers.v1 as vf
    from verifiers.v1.graph import MessageNode
    from verifiers.v1.state import State
    from verifiers.v1.trace import AgentInfo, TraceTask

    from grpo_host.integrations import scorer

    weights = scorer.weights(spec)

    class MathData(vf.TaskData):
        answer: str | None = None

    class MathTask(vf.Task[MathData, vf.State, vf.TaskConfig]):
        pass

    config = vf.TaskConfig(rewards={"grpo_host": vf.RewardFunctionConfig(fn=f"{__file__}:grpo_reward")})

    async def one(i, row):
        task = MathTask(MathData(idx=i, prompt=row["prompt"], answer=row.get("answer")), config=config)
        nodes = [MessageNode(message=vf.UserMessage(content=row["prompt"])),
                 MessageNode(parent=0, message=vf.AssistantMessage(content=row["completion"]), sampled=True)]
        trace = vf.Trace(task=TraceTask(type="MathTask", data=task.data, key=task.key, hash=task.hash),
                         state=State(), agent=AgentInfo(config=vf.AgentConfig()), nodes=nodes)
        try:
            await task.score(trace)
        except vf.TaskError as exc:  # a row that failed the data check: verifiers fails the trace
            assert "needs column 'answer'" in str(exc), exc  # and no other reason
            return {"rewards": dict.fromkeys(weights), "total": None}
        recorded = {k: r.score for k, r in trace.rewards.items() if r is not None}
        return {"rewards": {name: recorded[name] / w if name in recorded else None for name, w in weights.items()},
                "total": trace.reward if recorded else None}

    def run(rows):
        async def everything():
            return await asyncio.gather(*(one(i, row) for i, row in enumerate(rows)))

        return asyncio.run(everything())

    return run


def eval_protocol_runner(spec):
    from grpo_host.integrations import scorer
    from grpo_host.integrations.eval_protocol import reward_function

    evaluate = reward_function(spec)
    names = list(scorer.weights(spec))

    def run(rows):
        out = []
        for row in rows:
            result = evaluate(messages=[{"role": "user", "content": row["prompt"]},
                                        {"role": "assistant", "content": row["completion"]}],
                              ground_truth=row.get("answer"))
            metrics = result.metrics or {}  # none for a row that failed the data check
            out.append({"rewards": {name: metrics[name].score if name in metrics and metrics[name].is_score_valid
                                    else None for name in names},
                        "total": result.score if result.is_score_valid else None})
        return out

    return run


if __name__ == "__main__":
    framework, path, spec = sys.argv[1:4]
    with open(path) as lines:
        rows = [json.loads(line) for line in lines]
    run = {"verifiers": verifiers_runner, "eval_protocol": eval_protocol_runner}[framework](spec)
    run(rows[:1])  # the ensemble and the plugins load here, outside the clock
    start = time.perf_counter()
    results = run(rows)
    print(json.dumps({"results": results, "seconds": time.perf_counter() - start}))
