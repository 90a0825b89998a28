"""What ``grpo-host serve`` costs: requests/s and p50/p99 latency against calling the ensemble in-process.

For each spec (``r1_strict_format`` and ``math`` by default) this starts a
real ``grpo-host serve`` on 127.0.0.1 (as a user would, in a subprocess),
then for each client concurrency (1, 16, 64) runs that many clients, each
posting one batch of ``--batch`` rows to ``/score`` after another for
``--seconds``, through one ``httpx.AsyncClient``.  Latency is per request,
from send to the parsed reply.  The server's ``--backlog`` is set to the
highest concurrency so that the figures show queueing, not 429s (any 429
is counted and reported).

In-process: the same batch through ``Ensemble.score_rows`` in a loop, one
caller (what a trainer does without the server), and through
:func:`grpo_host.offline.score_file_rows` (what the server runs per
request: the row checks and per-row lines on top of scoring).  The overhead
is the server's p50 at concurrency 1 minus the in-process time per batch.

The clients run on the same machine as the server and compete with it for
the same cores: on a 2-core machine the figures are a floor.

Usage: ``python benchmarks/serve.py [--seconds 5] [--batch 16] [--json]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

GOOD = "<think>\nIn May she sold 48 / 2 = 24 clips. Altogether 48 + 24 = 72.\n</think>\n<answer>\n72\n</answer>\n"


def batch_for(spec: str, n: int) -> list[dict]:
    if spec.startswith("math"):
        return [{"prompt": "q", "completion": f"so the total is \\boxed{{{i % 7 + 70}}}", "answer": "72"}
                for i in range(n)]
    return [{"prompt": "q", "completion": GOOD if i % 2 else "no tags at all", "answer": "72"} for i in range(n)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(spec: str, concurrency: int, backlog: int) -> tuple[subprocess.Popen, str]:
    import httpx

    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "GRPO_HOST_SERVE_TOKEN"}
    proc = subprocess.Popen([str(Path(sys.executable).with_name("grpo-host")), "serve", "-r", spec, "--port", str(port),
                             "--concurrency", str(concurrency), "--backlog", str(backlog)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            if httpx.get(url + "/health", timeout=1).status_code == 200:
                return proc, url
        except httpx.TransportError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit(f"grpo-host serve -r {spec!r} did not start")


async def load(url: str, rows: list[dict], clients: int, seconds: float, warm: int) -> dict:
    import httpx

    latencies: list[float] = []
    statuses: dict[int, int] = {}
    body = json.dumps({"rows": rows}).encode()
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(limits=limits, timeout=120) as client:
        # warm every ensemble the server holds: each starts its worker processes on its first batch
        await asyncio.gather(*(client.post(url + "/score", content=body) for _ in range(4 * warm)))
        stop = time.perf_counter() + seconds

        async def one_client() -> None:
            while time.perf_counter() < stop:
                t0 = time.perf_counter()
                reply = await client.post(url + "/score", content=body, headers={"Content-Type": "application/json"})
                reply.json()
                statuses[reply.status_code] = statuses.get(reply.status_code, 0) + 1
                if reply.status_code == 200:
                    latencies.append(time.perf_counter() - t0)
                else:
                    await asyncio.sleep(0.05)

        t0 = time.perf_counter()
        await asyncio.gather(*(one_client() for _ in range(clients)))
        wall = time.perf_counter() - t0
    latencies.sort()
    return {"clients": clients, "requests": len(latencies), "wall_s": wall, "req_per_s": len(latencies) / wall,
            "rows_per_s": len(latencies) * len(rows) / wall, "p50_ms": 1000 * statistics.median(latencies),
            "p99_ms": 1000 * latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))],
            "statuses": statuses}


def in_process(spec: str, rows: list[dict], seconds: float) -> dict:
    from grpo_host import Ensemble
    from grpo_host.offline import Tally, score_file_rows

    out = {}
    with Ensemble.from_spec(spec) as ensemble:
        ensemble.score_rows(rows)
        for name, call in (("score_rows", lambda: ensemble.score_rows(rows)),
                           ("score_file_rows", lambda: list(score_file_rows(
                               ((f"row {i}", r) for i, r in enumerate(rows)), ensemble, Tally(ensemble.names),
                               batch_size=len(rows))))):
            times = []
            stop = time.perf_counter() + seconds / 2
            while time.perf_counter() < stop:
                t0 = time.perf_counter()
                call()
                times.append(time.perf_counter() - t0)
            times.sort()
            out[name] = {"calls": len(times), "p50_ms": 1000 * statistics.median(times),
                         "p99_ms": 1000 * times[min(len(times) - 1, int(0.99 * len(times)))],
                         "rows_per_s": len(rows) * len(times) / sum(times)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--specs", nargs="+", default=["r1_strict_format", "math"])
    parser.add_argument("--concurrency", nargs="+", type=int, default=[1, 16, 64], help="client concurrency levels")
    parser.add_argument("--server-concurrency", type=int, default=os.cpu_count() or 1, help="serve --concurrency")
    parser.add_argument("--batch", type=int, default=16, help="rows per request")
    parser.add_argument("--seconds", type=float, default=5.0, help="seconds per measurement")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    report = {"machine": f"{platform.system()} {platform.release()}, {os.cpu_count()} cores, Python "
                         f"{platform.python_version()}", "load_before": os.getloadavg()[0], "batch": args.batch,
              "server_concurrency": args.server_concurrency, "specs": {}}
    for spec in args.specs:
        rows = batch_for(spec, args.batch)
        local = in_process(spec, rows, args.seconds)
        proc, url = start_server(spec, args.server_concurrency, max(args.concurrency))
        try:
            served = [asyncio.run(load(url, rows, c, args.seconds, args.server_concurrency)) for c in args.concurrency]
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(60)
        report["specs"][spec] = {"in_process": local, "served": served,
                                 "overhead_ms_at_1": served[0]["p50_ms"] - local["score_rows"]["p50_ms"]}
    report["load_after"] = os.getloadavg()[0]
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"{report['machine']}; batch {args.batch} rows; serve --concurrency {args.server_concurrency}; "
          f"load {report['load_before']:.1f} -> {report['load_after']:.1f}")
    for spec, res in report["specs"].items():
        loc = res["in_process"]
        print(f"\n{spec}: in-process score_rows p50 {loc['score_rows']['p50_ms']:.2f} ms "
              f"({loc['score_rows']['rows_per_s']:.0f} rows/s), score_file_rows p50 "
              f"{loc['score_file_rows']['p50_ms']:.2f} ms; overhead at concurrency 1: {res['overhead_ms_at_1']:.2f} ms")
        print("| clients | requests/s | rows/s | p50 ms | p99 ms | statuses |")
        print("|---|---|---|---|---|---|")
        for row in res["served"]:
            print(f"| {row['clients']} | {row['req_per_s']:.1f} | {row['rows_per_s']:.0f} | {row['p50_ms']:.1f} | "
                  f"{row['p99_ms']:.1f} | {row['statuses']} |")


if __name__ == "__main__":
    main()
