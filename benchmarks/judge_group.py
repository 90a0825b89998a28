"""The group judge against a simulated judge with a position bias: requests per completion and the bias left over.

Run:  python benchmarks/judge_group.py [--groups 32] [--size 8] [--bias 3] [--delay 0.2] [--json]

No judge model runs here (the project's machines have none), so the judge is
simulated and what is measured is the mechanism, not a model's taste: a
Starlette server under uvicorn in a thread answers every request after
``--delay`` seconds.  Each completion carries its true quality (0..8); the
server reads the numbered response blocks the reward sends and answers each
with its quality plus a position bias that falls linearly from ``--bias``
points at the first place to 0 at the last (a judge that favours what it
reads first), plus the same for ``judge``'s single-response requests at
position one (so its bias is a constant and does not reorder anything).

For ``--groups`` groups of ``--size`` completions with distinct qualities:

* **pointwise** ``judge``: one request per completion;
* ``judge_group`` with ``orders=1`` and ``orders=2``: one request per group
  and order.

Reported per variant: requests per completion and wall seconds (all requests
in flight at once), and how well the scores recover the true order within
each group: the share of the group's pairs ranked as their qualities are
(1.0: perfect), the mean absolute error of the score against quality/10 after
removing the group's mean (a bias common to the whole group does not change
GRPO's advantages), and the position-bias counters the reward reports.

Figures are from one run on one machine; they are documentation, never a test.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import random
import re
import socket
import sys
import threading
import time


class BiasedJudge:
    """The simulated judge (see the module docstring), run by uvicorn in a thread."""

    def __init__(self, bias: float, delay: float) -> None:
        self.bias, self.delay = bias, delay

    async def chat(self, request):
        from starlette.responses import JSONResponse

        body = await request.json()
        await asyncio.sleep(self.delay)
        system, user = body["messages"][0]["content"], body["messages"][1]["content"]
        qualities = [int(q) for q in re.findall(r"\(quality (\d+)\)", user)]
        n = len(qualities)
        if "<scores>" in system:
            lines = [f"Response {p + 1}: {q + self.bias * (n - 1 - p) / max(n - 1, 1):.2f}"
                     for p, q in enumerate(qualities)]
            content = "Compared side by side.\n<scores>\n" + "\n".join(lines) + "\n</scores>"
        else:
            content = f"Judged alone.\n<score>{min(10.0, qualities[0] + self.bias):.2f}</score>"
        return JSONResponse({"id": "b", "object": "chat.completion", "model": body["model"], "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 200, "completion_tokens": 10, "total_tokens": 210}})

    def start(self) -> str:
        import uvicorn
        from starlette.applications import Starlette
        from starlette.routing import Route

        app = Starlette(routes=[Route("/v1/chat/completions", self.chat, methods=["POST"])])
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        server = uvicorn.Server(uvicorn.Config(app, log_level="error", backlog=4096))
        threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True).start()
        while not server.started:
            time.sleep(0.01)
        return f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


def rows(groups: int, size: int) -> tuple[list[str], list[str], list[int]]:
    """``groups`` prompts with ``size`` completions each, of distinct qualities 0..size-1 in a random order."""
    rng = random.Random(0)
    texts, prompts, qualities = [], [], []
    for g in range(groups):
        for q in rng.sample(range(size), size):
            texts.append(f"Answer {g}.{q}: the sky scatters blue light (quality {q}).")
            prompts.append(f"Why is the sky blue? (prompt {g})")
            qualities.append(q)
    return texts, prompts, qualities


def recovery(values: list[float], prompts: list[str], qualities: list[int]) -> dict:
    """Pairs ranked as their qualities are, and the error of the group-centred score against quality/10."""
    by_group: dict[str, list[int]] = {}
    for i, p in enumerate(prompts):
        by_group.setdefault(p, []).append(i)
    right = pairs = 0
    errors = []
    for members in by_group.values():
        for i, j in itertools.combinations(members, 2):
            pairs += 1
            right += (values[i] - values[j]) * (qualities[i] - qualities[j]) > 0
        mean_v = sum(values[i] for i in members) / len(members)
        mean_q = sum(qualities[i] for i in members) / len(members) / 10
        errors += [abs((values[i] - mean_v) - (qualities[i] / 10 - mean_q)) for i in members]
    return {"pairs_ranked_right": right / pairs, "centred_abs_error": sum(errors) / len(errors)}


def run(base_url: str, name: str, params: dict, texts: list[str], prompts: list[str], qualities: list[int]) -> dict:
    import reward_plugins.judge.rewards as judge_pack
    from grpo_host import Ensemble
    from grpo_host.discovery.plugins import load_plugins

    plugins = load_plugins(entry_points_group=None, plugins=[judge_pack])
    spec = [{"name": name, "params": {"base_url": base_url, "model": "m", "cache": False, "concurrency": 1024,
                                      **params}}]
    with Ensemble.from_spec(spec, plugins=plugins) as e:
        start = time.perf_counter()
        result = e.score(texts, prompts)
        seconds = time.perf_counter() - start
    values = [v for v in result.values[name] if v is not None]
    assert len(values) == len(texts), result.metrics[name]
    counts = result.metrics[name].counts
    out = {"requests_per_completion": counts["calls"] / len(texts), "seconds": round(seconds, 3),
           **recovery(values, prompts, qualities)}
    if "position_pairs" in counts and counts["position_pairs"]:
        out["reported_position_gap"] = counts["position_gap"] / counts["position_pairs"]
        out["reported_rank_flips"] = counts["rank_flips"] / counts["rank_pairs"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--groups", type=int, default=32)
    parser.add_argument("--size", type=int, default=8)
    parser.add_argument("--bias", type=float, default=3.0, help="points added at the first place, 0 at the last")
    parser.add_argument("--delay", type=float, default=0.2, help="seconds the server takes per reply")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    base_url = BiasedJudge(args.bias, args.delay).start()
    texts, prompts, qualities = rows(args.groups, args.size)
    report = {
        "pointwise judge": run(base_url, "judge", {}, texts, prompts, qualities),
        "judge_group orders=1": run(base_url, "judge_group", {"orders": 1}, texts, prompts, qualities),
        "judge_group orders=2": run(base_url, "judge_group", {"orders": 2}, texts, prompts, qualities),
        "setup": {**vars(args), "machine": f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, "
                  f"Python {sys.version.split()[0]}"},
    }
    if args.json:
        print(json.dumps(report, indent=1))
        return
    for name, figures in report.items():
        print(f"{name}: {figures}")


if __name__ == "__main__":
    main()
