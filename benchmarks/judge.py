"""The judge pack's throughput against a server that answers after a fixed delay, and its cost when cached.

Run:  python benchmarks/judge.py [--delay 0.2] [--calls 256] [--sequential-calls 32] [--json]

A judge's time is the server's: each reply takes ``--delay`` seconds (200 ms
by default, a short judgment on a warm GPU server), and the question is how
many judgments a second reach the trainer.  The server is a Starlette app
under uvicorn in a process of its own (``--serve``, this script again), so
the client and the server do not share an interpreter.

* **sequential**: a plain loop of blocking ``httpx.Client`` requests, one
  completion after another, which is how TRL's synchronous path calls a
  synchronous reward function (its items in a loop, rewards one after
  another); the same messages and parsing as the judge.
* **judge, concurrency C**: ``Ensemble.score`` over ``--calls`` distinct
  completions with ``judge(concurrency=C, cache=false)``, for C in 1, 8, 64,
  256: the path ``grpo-host score`` and both training hosts take.
* **cached**: the same completions scored again with the cache on and every
  reply already stored: what the async path (event loop, semaphores, one
  file read per item) costs per item when no request is made, beside a
  synchronous no-op reward through the same ensemble.

Figures are from one run on one machine; they are documentation, never a test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version

from grpo_host import hookimpl, reward


def serve(port: int, delay: float) -> None:
    """The fixed-delay judge server: every reply after ``delay`` seconds, always ``<score>7</score>``."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def chat(request):
        body = await request.json()
        await asyncio.sleep(delay)
        return JSONResponse({"id": "b", "object": "chat.completion", "model": body["model"], "choices": [
            {"index": 0, "finish_reason": "stop",
             "message": {"role": "assistant", "content": "It answers the question.\n<score>7</score>"}}],
            "usage": {"prompt_tokens": 200, "completion_tokens": 10, "total_tokens": 210}})

    app = Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="error", backlog=4096)


def start_server(delay: float) -> tuple[subprocess.Popen, str]:
    import httpx

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    proc = subprocess.Popen([sys.executable, __file__, "--serve", str(port), "--delay", str(delay)])
    base_url = f"http://127.0.0.1:{port}/v1"
    for _ in range(200):
        try:
            httpx.post(f"{base_url}/chat/completions", json={"model": "m", "messages": []}, timeout=5)
            return proc, base_url
        except httpx.TransportError:
            time.sleep(0.05)
    raise SystemExit("the benchmark server did not start")


PROMPT = "Explain in two sentences why the sky is blue."


def completions(n: int, salt: str) -> list[str]:
    return [f"Rayleigh scattering favours short wavelengths ({salt} {i})." for i in range(n)]


def sequential(base_url: str, n: int) -> dict:
    """TRL's synchronous path: one blocking request per completion, in a loop."""
    import httpx

    from reward_plugins.judge import prompts
    from reward_plugins.judge.rewards import POINTWISE_RUBRIC

    scores = []
    with httpx.Client(base_url=base_url + "/", timeout=60) as http:
        start = time.perf_counter()
        for text in completions(n, "sequential"):
            messages = prompts.messages(instructions=f"Rubric: {POINTWISE_RUBRIC}", verdict="score", fmt="tag",
                                        prompt=PROMPT, completion=text)
            reply = http.post("chat/completions", json={"model": "m", "messages": messages, "temperature": 0.0,
                                                        "max_tokens": 1024}).json()
            scores.append(prompts.parse(reply["choices"][0]["message"]["content"], "score", "tag"))
        seconds = time.perf_counter() - start
    assert scores == [0.7] * n
    return {"calls": n, "seconds": seconds, "per_second": n / seconds}


def ensemble_run(base_url: str, n: int, concurrency: int, *, cache: bool, salt: str, extra: str = "") -> dict:
    import reward_plugins.judge.rewards as judge_pack
    from grpo_host import Ensemble
    from grpo_host.discovery.plugins import load_plugins

    plugins = load_plugins(entry_points_group=None, plugins=[judge_pack, sys.modules[__name__]])
    spec = [{"name": "judge", "params": {"base_url": base_url, "model": "m", "concurrency": concurrency,
                                         "cache": cache}}]
    if extra:
        spec.append({"name": extra})
    texts = completions(n, salt)
    with Ensemble.from_spec(spec, plugins=plugins) as e:
        start = time.perf_counter()
        result = e.score(texts, [PROMPT] * n)
        seconds = time.perf_counter() - start
    assert result.values["judge"] == [0.7] * n, result.metrics["judge"]
    counts = result.metrics["judge"].counts
    out = {"calls": int(counts["calls"]), "cache_hits": int(counts["cache_hits"]), "seconds": seconds,
           "per_second": n / seconds, "judge_seconds": result.metrics["judge"].seconds}
    if extra:
        out[f"{extra}_seconds"] = result.metrics[extra].seconds
    return out


@reward
def noop(completion, **_):
    """1.0 for anything: a synchronous reward that costs only the ensemble's own work (the cached judge's yardstick)."""
    return 1.0


@hookimpl
def register_rewards(register):
    register(noop)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--delay", type=float, default=0.2, help="seconds the server takes per reply")
    ap.add_argument("--calls", type=int, default=256, help="completions per concurrent run")
    ap.add_argument("--sequential-calls", type=int, default=32, help="completions for the sequential loop and C=1")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    ap.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        serve(args.serve, args.delay)
        return
    os.environ["GRPO_HOST_CACHE"] = tempfile.mkdtemp(prefix="judge-bench-")
    proc, base_url = start_server(args.delay)
    try:
        results: dict = {"delay": args.delay, "machine": {
            "cpus": os.cpu_count(), "python": platform.python_version(), "load_before": os.getloadavg()[0],
            "httpx": version("httpx"), "uvicorn": version("uvicorn")}}
        results["sequential"] = sequential(base_url, args.sequential_calls)
        for c in (1, 8, 64, 256):
            n = args.sequential_calls if c == 1 else args.calls
            results[f"judge_c{c}"] = ensemble_run(base_url, n, c, cache=False, salt=f"c{c}")
        ensemble_run(base_url, args.calls, 256, cache=True, salt="cached")  # fill the cache
        results["cached"] = ensemble_run(base_url, args.calls, 256, cache=True, salt="cached", extra="noop")
        results["machine"]["load_after"] = os.getloadavg()[0]
    finally:
        proc.terminate()
        proc.wait()
    if args.json:
        print(json.dumps(results, indent=2))
        return
    seq = results["sequential"]["per_second"]
    print(f"server delay {args.delay * 1000:.0f} ms; ideal throughput at concurrency C: C / delay")
    print(f"{'path':<22}{'calls':>7}{'seconds':>9}{'calls/s':>9}{'x sequential':>14}")
    for key in ("sequential", "judge_c1", "judge_c8", "judge_c64", "judge_c256"):
        r = results[key]
        print(f"{key:<22}{r['calls']:>7}{r['seconds']:>9.2f}{r['per_second']:>9.1f}{r['per_second'] / seq:>14.1f}")
    cached = results["cached"]
    per_item = cached["judge_seconds"] / args.calls * 1e6
    print(f"cached: {args.calls} items in {cached['judge_seconds'] * 1000:.1f} ms ({per_item:.0f} us per item, "
          f"{cached['calls']} requests); a sync no-op reward beside it: "
          f"{cached['noop_seconds'] / args.calls * 1e6:.0f} us per item")


if __name__ == "__main__":
    main()
