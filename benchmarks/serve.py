"""The trainers' own per-sample calls against grpo-host: OpenRLHF's client on ``serve``, verl's reward loop on the
adapter.

**OpenRLHF.** A real ``grpo-host serve -r SPEC`` on 127.0.0.1 with its default
options.  OpenRLHF's current client (``SingleTurnAgentExecutor`` from
``tests/vendored/openrlhf_agent.py``, its code at 3c3be6234e0c) runs
``--rollouts`` rollouts at once, as one step does: each tokenizes its prompt,
takes its fixed response from a replaying engine, decodes prompt + response
with ``skip_special_tokens=False`` (so the text ends in the tokenizer's EOS)
and posts that one rollout to ``/get_reward`` with aiohttp; then OpenRLHF's
own ``Experience.concat_experiences`` merges the step (it raises on a
missing reward).  Measured: rewards lost, rows/s over the step (first call
to last answer), each rollout's latency (p50, p99) and, on the same server
in the same run, the rows/s of one ``/score`` request holding all the rows.
The rewards are then compared with ``grpo-host score`` on the responses
without the EOS string.  **The ceiling**: in each repeat the same step also
runs against the no-work server of ``benchmarks/serve_ceiling.py`` (a
trivial ASGI app on uvicorn answering a constant reward), which is what
OpenRLHF's own client reaches here whatever the server does; each repeat
gives (a) no-work server, (b) ``grpo-host serve``, (c) one ``/score``, and
its ratios a/c, b/c and b/a.

**verl.** verl's reward loop (``RewardLoopWorker.compute_score_batch`` and
its ``NaiveRewardManager``, ``tests/vendored/verl_managers.py``, verl at
1dda039b9c63) calls the adapter once per response from the event loop's
thread pool, 32 threads as on a verl node, with the function loaded by verl's
own ``get_custom_reward_fn`` from the config keys docs/scaling.md gives.
Against it: the batch API, ``Ensemble.score_rows`` on the same rows with the
same spec, in the same run, alternating, ``--repeats`` times each; and, for
what verl's loop costs by itself (its ceiling), the same loop around a
``compute_score`` that does nothing; the same three ratios per repeat.  For OpenRLHF the CPU seconds per rollout
of the client (this process) and of the server (with its worker processes) say where a
step's time goes.

The tokenizer is the built-in tiny one (EOS ``</s>``): no download.  Every
client runs on the same machine as what it measures, so on a small machine
the figures are a floor.

Two tasks: ``math`` (GSM8K-style responses, rewards ``math,
r1_strict_format:0.5``: cheap per row, so what is left is each call's own
cost) and ``code`` (stdin/stdout programs with prime_code labels, reward
``code``: a sandboxed run per test case, the kind of reward a server is for).

Usage: ``python benchmarks/serve.py [--task math|code] [--spec SPEC] [--rollouts 1024] [--verl-rows 1152]
[--repeats 3] [--json]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the vendored trainer code

GRPO_HOST = str(Path(sys.executable).with_name("grpo-host"))
SHAPES = [
    "<think>\nIn May she sold 48 / 2 = 24 clips. Altogether 48 + 24 = 72.\n</think>\n<answer>\n72\n</answer>\n",
    "<think>\n48 + 24\n</think>\n<answer>\n71\n</answer>\n",
    "She sold 72 clips in all, so the answer is \\boxed{72}.",
    "<think>\nadd them\n</think>\n<answer>\n72",  # unclosed: the EOS string would end up inside the answer
]


CODE_LABEL = json.dumps({"inputs": ["1 2\n", "5 5\n", "-3 3\n"], "outputs": ["3\n", "10\n", "0\n"]})
CODE_SHAPES = [
    "Read both numbers.\n```python\na, b = map(int, input().split())\nprint(a + b)\n```",
    "```python\nprint(3)\n```",
    "The sum of the two numbers.",
    "```python\nprint(int(input()) + 1)\n```",  # raises on every case
]
TASKS = {"math": (SHAPES, "72"), "code": (CODE_SHAPES, CODE_LABEL)}


def rollouts(n: int, task: str = "math") -> list[tuple[str, str, str]]:
    """(prompt, label, response) for ``n`` rollouts of ``task``; the response shapes cycle."""
    shapes, label = TASKS[task]
    return [(f"Q{i}: Natalia sold clips to 48 friends... How many? " if task == "math" else f"Q{i}: add two ints. ",
             label, shapes[i % len(shapes)]) for i in range(n)]


def dataset_rows(batch) -> list[dict]:
    """The rows ``grpo-host score`` and the batch API get: the label as ``answer``, prime_code labels as ``tests``."""
    from grpo_host.data import prime_code_tests

    rows = []
    for prompt, label, response in batch:
        row = {"prompt": prompt, "completion": response, "answer": label}
        tests = prime_code_tests(label)
        if tests is not None:
            row["tests"] = tests
        rows.append(row)
    return rows


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(spec: str | None) -> tuple[subprocess.Popen, str]:
    """``grpo-host serve -r SPEC`` with its default options, or (``spec`` None) the no-work server of
    ``benchmarks/serve_ceiling.py``; returns the process and its URL once ``/health`` answers."""
    import httpx

    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRPO_HOST_")}
    command = ([GRPO_HOST, "serve", "-r", spec, "--port", str(port)] if spec is not None else
               [sys.executable, str(ROOT / "benchmarks" / "serve_ceiling.py"), "--port", str(port)])
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            if httpx.get(url + "/health", timeout=1).status_code == 200:
                return proc, url
        except httpx.TransportError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit(f"{' '.join(command)} did not start")


class ReplayEngine:
    """vLLM's part in OpenRLHF's executor: the fixed response's token ids, ending in EOS."""

    def __init__(self, tokenizer, responses: dict[str, str]) -> None:
        self.tokenizer = tokenizer
        self.ids = {p: tokenizer(r, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
                    for p, r in responses.items()}

    async def generate(self, prompt_token_ids, sampling_params, multi_modal_data=None):
        prompt = self.tokenizer.decode(prompt_token_ids, skip_special_tokens=False)
        return SimpleNamespace(outputs=[SimpleNamespace(token_ids=self.ids[prompt], finish_reason="stop",
                                                        logprobs=None)])


def openrlhf_step(url: str, tokenizer, batch) -> dict:
    from vendored.openrlhf_agent import Experience, SingleTurnAgentExecutor, process_response_into_experience

    engine = ReplayEngine(tokenizer, {p: r for p, _, r in batch})
    executor = SingleTurnAgentExecutor(url + "/get_reward")
    params = SimpleNamespace(max_tokens=512, logprobs=None)
    latencies: list[float] = []

    async def one(prompt, label):
        t0 = time.perf_counter()
        out = await executor.execute(prompt, label, params, 2048, tokenizer, engine)
        latencies.append(time.perf_counter() - t0)
        return out

    async def step():
        return await asyncio.gather(*(one(p, a) for p, a, _ in batch))

    t0 = time.perf_counter()
    outputs = asyncio.run(step())
    wall = time.perf_counter() - t0
    lost = sum(out["reward"] is None for out in outputs)
    merged = None
    if not lost:
        merged = Experience.concat_experiences([process_response_into_experience(o, max_len=2048) for o in outputs],
                                               tokenizer.pad_token_id).rewards.flatten().tolist()
    latencies.sort()
    return {"lost": lost, "wall_s": wall, "rows_per_s": len(batch) / wall,
            "p50_ms": 1000 * statistics.median(latencies),
            "p99_ms": 1000 * latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))], "rewards": merged}


def one_score_request(url: str, batch) -> dict:
    import httpx

    rows = dataset_rows(batch)
    t0 = time.perf_counter()
    reply = httpx.post(url + "/score", json={"rows": rows}, timeout=600)
    wall = time.perf_counter() - t0
    reply.raise_for_status()
    return {"wall_s": wall, "rows_per_s": len(rows) / wall}


def cli_totals(spec: str, batch) -> list[float | None]:
    with tempfile.TemporaryDirectory() as tmp:
        data, out = Path(tmp) / "rows.jsonl", Path(tmp) / "out.jsonl"
        data.write_text("".join(json.dumps(row) + "\n" for row in dataset_rows(batch)))
        subprocess.run([GRPO_HOST, "score", str(data), "-r", spec, "--out", str(out)], capture_output=True,
                       timeout=600)
        return [json.loads(line)["total"] for line in out.read_text().splitlines()]


def measured_step(url: str, proc: subprocess.Popen, tokenizer, batch) -> dict:
    """One OpenRLHF step against ``url``, with the CPU milliseconds per rollout of the client (this process) and
    of the server (``proc`` and its worker processes)."""
    server_cpu, client_cpu = cpu_seconds(proc.pid), resource.getrusage(resource.RUSAGE_SELF)
    step = openrlhf_step(url, tokenizer, batch)
    after = resource.getrusage(resource.RUSAGE_SELF)
    step["server_cpu_ms_per_rollout"] = 1000 * (cpu_seconds(proc.pid) - server_cpu) / len(batch)
    step["client_cpu_ms_per_rollout"] = 1000 * (after.ru_utime + after.ru_stime - client_cpu.ru_utime
                                                - client_cpu.ru_stime) / len(batch)
    return step


def openrlhf(spec: str, task: str, n: int, repeats: int, tokenizer) -> dict:
    """Per repeat, back to back: one ``n``-row ``/score`` (c), then OpenRLHF's step against ``serve`` (b) and
    against the no-work server (a), in turns; each ratio is taken within its repeat."""
    batch = rollouts(n, task)
    proc, url = start_server(spec)
    noop, noop_url = start_server(None)
    try:
        openrlhf_step(url, tokenizer, batch[:64])  # warm: every ensemble starts its worker processes
        openrlhf_step(noop_url, tokenizer, batch[:64])
        one_score_request(url, batch[:64])
        steps, singles, ceilings, loads = [], [], [], []
        for i in range(repeats):  # (a) and (b) take turns going first: neither always runs after the other
            loads.append(os.getloadavg()[0])
            singles.append(one_score_request(url, batch))
            for which in ((0, 1) if i % 2 else (1, 0)):
                if which:
                    steps.append(measured_step(url, proc, tokenizer, batch))
                else:
                    ceilings.append(measured_step(noop_url, noop, tokenizer, batch))
    finally:
        for p in (proc, noop):
            p.send_signal(signal.SIGTERM)
            p.wait(60)
    import numpy as np

    want = cli_totals(spec, batch)  # as OpenRLHF holds them: float32 tensors, a row no reward scored 0.0
    same = all(s["rewards"] == [float(np.float32(w if w is not None else 0.0)) for w in want] for s in steps)
    ratios = [{"ceiling_vs_score": a["rows_per_s"] / c["rows_per_s"],
               "serve_vs_score": b["rows_per_s"] / c["rows_per_s"],
               "serve_vs_ceiling": b["rows_per_s"] / a["rows_per_s"]}
              for a, b, c in zip(ceilings, steps, singles, strict=True)]

    def median(key: str, runs: list[dict]) -> float:
        return statistics.median(r[key] for r in runs)

    return {"rollouts": n, "repeats": repeats, "load": [round(x, 1) for x in loads],
            "lost": sum(s["lost"] for s in steps), "ceiling_lost": sum(s["lost"] for s in ceilings),
            "same_as_score": same,
            "ceiling_rows_per_s": [round(s["rows_per_s"]) for s in ceilings],
            "step_rows_per_s": [round(s["rows_per_s"]) for s in steps],
            "score_request_rows_per_s": [round(s["rows_per_s"]) for s in singles],
            "ratios": [{k: round(v, 3) for k, v in r.items()} for r in ratios],
            **{k: median(k, ratios) for k in ratios[0]},
            "p50_ms": median("p50_ms", steps), "p99_ms": max(s["p99_ms"] for s in steps),
            "server_cpu_ms_per_rollout": median("server_cpu_ms_per_rollout", steps),
            "client_cpu_ms_per_rollout": median("client_cpu_ms_per_rollout", steps),
            "ceiling_server_cpu_ms_per_rollout": median("server_cpu_ms_per_rollout", ceilings),
            "ceiling_client_cpu_ms_per_rollout": median("client_cpu_ms_per_rollout", ceilings)}


def cpu_seconds(pid: int) -> float:
    """CPU seconds of a process and its children (the server and its reward workers) so far."""
    import psutil

    procs = [psutil.Process(pid)]
    procs += procs[0].children(recursive=True)
    total = 0.0
    for p in procs:
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.NoSuchProcess:
            pass
    return total


def verl(spec: str, task: str, n: int, repeats: int, tokenizer) -> dict:
    import numpy as np
    import omegaconf
    import torch
    from vendored import verl_managers, verl_reward

    from grpo_host import Ensemble

    config = omegaconf.OmegaConf.load(ROOT / "tests" / "vendored" / "verl_ppo_trainer.yaml")
    omegaconf.OmegaConf.set_struct(config, True)
    for key, value in (("reward.custom_reward_function.path", "pkg://grpo_host.integrations.verl"),
                       ("reward.custom_reward_function.name", "compute_score"),
                       ("+reward.custom_reward_function.reward_kwargs.rewards", spec)):
        omegaconf.OmegaConf.update(config, key.lstrip("+"), value, force_add=key.startswith("+"))
    fn = verl_reward.get_custom_reward_fn(config)
    batch = rollouts(n, task)
    pad, eos = tokenizer.pad_token_id, tokenizer.eos_token_id
    width = max(len(r) for _, _, r in batch) + 1

    def item(i: int):
        _, truth, response = batch[i]
        ids = tokenizer(response, add_special_tokens=False)["input_ids"] + [eos]
        mask = [1] + [1] * len(ids) + [0] * (width - len(ids))
        return SimpleNamespace(
            batch={"prompts": torch.tensor([[pad]]), "responses": torch.tensor([ids + [pad] * (width - len(ids))]),
                   "attention_mask": torch.tensor([mask])},
            non_tensor_batch={"data_source": np.array(["openai/gsm8k"], dtype=object),
                              "reward_model": np.array([{"ground_truth": truth}], dtype=object),
                              "extra_info": np.array([{"index": i}], dtype=object)})

    class Proto:  # the DataProto surface compute_score_batch and run_single use: len, a slice, item 0
        def __init__(self, items):
            self.items = items

        def __len__(self):
            return len(self.items)

        def __getitem__(self, i):
            if isinstance(i, slice):
                return Proto(self.items[i])
            one = self.items[i]
            return SimpleNamespace(batch={k: v[0] for k, v in one.batch.items()},
                                   non_tensor_batch={k: v[0] for k, v in one.non_tensor_batch.items()})

    data = Proto([item(i) for i in range(n)])
    rows = dataset_rows(batch)

    async def loop_once(d, score_fn=fn):
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(32))
        manager = verl_managers.LoopNaiveRewardManager(config, tokenizer, score_fn)
        return await verl_managers.RewardLoopWorker(config, manager).compute_score_batch(d)

    def nothing(**_):  # verl's own cost per call: the loop around a reward that costs nothing
        return {"score": 0.0}

    asyncio.run(loop_once(data[:64]))  # warm: the adapter builds its ensemble and starts its workers
    loop_rates, batch_rates, floor_rates, loads = [], [], [], []
    with Ensemble.from_spec(spec) as ensemble:
        ensemble.score_rows(rows[:64])
        for _ in range(repeats):
            loads.append(os.getloadavg()[0])
            t0 = time.perf_counter()
            want = ensemble.score_rows(rows).total
            batch_rates.append(n / (time.perf_counter() - t0))
            t0 = time.perf_counter()
            got = [o["reward_score"] for o in asyncio.run(loop_once(data))]
            loop_rates.append(n / (time.perf_counter() - t0))
            t0 = time.perf_counter()
            asyncio.run(loop_once(data, nothing))
            floor_rates.append(n / (time.perf_counter() - t0))
    same = got == [w if w is not None else 0.0 for w in want]
    ratios = [{"ceiling_vs_batch_api": f / b, "adapter_vs_batch_api": a / b, "adapter_vs_ceiling": a / f}
              for a, b, f in zip(loop_rates, batch_rates, floor_rates, strict=False)]
    return {"rows": n, "repeats": repeats, "load": [round(x, 1) for x in loads], "same_as_batch_api": same,
            "loop_rows_per_s": [round(r) for r in loop_rates], "batch_api_rows_per_s": [round(r) for r in batch_rates],
            "loop_with_no_op_reward_rows_per_s": [round(r) for r in floor_rates],
            "ratios": [{k: round(v, 3) for k, v in r.items()} for r in ratios],
            **{k: statistics.median(r[k] for r in ratios) for k in ratios[0]}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", choices=sorted(TASKS), default="math", help="rollouts of a math or a code task")
    parser.add_argument("--spec", help="rewards (default: 'math, r1_strict_format:0.5' for math, 'code' for code)")
    parser.add_argument("--rollouts", type=int, default=1024)
    parser.add_argument("--verl-rows", type=int, default=1152)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from transformers import AutoTokenizer

    from grpo_host.training.builtin_model import tiny_model_dir

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir())
    args.spec = args.spec or {"math": "math, r1_strict_format:0.5", "code": "code"}[args.task]
    report = {"machine": f"{platform.system()} {platform.release()}, {os.cpu_count()} cores, Python "
                         f"{platform.python_version()}", "task": args.task, "spec": args.spec,
              "load_before": os.getloadavg()[0]}
    report["openrlhf"] = openrlhf(args.spec, args.task, args.rollouts, args.repeats, tokenizer)
    report["verl"] = verl(args.spec, args.task, args.verl_rows, args.repeats, tokenizer)
    report["load_after"] = os.getloadavg()[0]
    if args.json:
        print(json.dumps(report, indent=2))
        return
    o, v = report["openrlhf"], report["verl"]
    print(f"{report['machine']}; task {args.task}, spec {args.spec!r}; load {report['load_before']:.1f} -> "
          f"{report['load_after']:.1f}")
    print(f"OpenRLHF current client, {o['rollouts']} rollouts at once x{o['repeats']} (load {o['load']}): lost "
          f"{o['lost']} (no-work server: {o['ceiling_lost']}), same as grpo-host score: {o['same_as_score']}")
    print(f"  step rows/s: (a) no-work server {o['ceiling_rows_per_s']}, (b) grpo-host serve {o['step_rows_per_s']}; "
          f"(c) one /score request {o['score_request_rows_per_s']}")
    print(f"  medians of each run's ratios: a/c {o['ceiling_vs_score']:.0%}, b/c {o['serve_vs_score']:.0%}, "
          f"b/a {o['serve_vs_ceiling']:.0%}; latency p50 {o['p50_ms']:.0f} ms, p99 {o['p99_ms']:.0f} ms")
    print(f"  CPU per rollout: client {o['client_cpu_ms_per_rollout']:.2f} ms, server "
          f"{o['server_cpu_ms_per_rollout']:.2f} ms (no-work server: client "
          f"{o['ceiling_client_cpu_ms_per_rollout']:.2f} ms, server {o['ceiling_server_cpu_ms_per_rollout']:.2f} ms)")
    print(f"verl reward loop, 32 threads, {v['rows']} rows x{v['repeats']} (load {v['load']}), same values: "
          f"{v['same_as_batch_api']}")
    print(f"  rows/s: (a) around a no-op compute_score {v['loop_with_no_op_reward_rows_per_s']}, (b) through the "
          f"adapter {v['loop_rows_per_s']}; (c) batch API {v['batch_api_rows_per_s']}")
    print(f"  medians of each run's ratios: a/c {v['ceiling_vs_batch_api']:.0%}, b/c {v['adapter_vs_batch_api']:.0%}, "
          f"b/a {v['adapter_vs_ceiling']:.0%}")


if __name__ == "__main__":
    main()
