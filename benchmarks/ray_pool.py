"""The Ray executor against the local worker pool: code-reward throughput, dispatch cost, and a projection to N nodes.

Measured on one machine, side by side in one run:

* **code reward end to end:** ``--n`` completions (a function and a passing
  assert, in a fenced block) through ``Ensemble.from_spec("code", workers=W,
  pool=...)`` with ``pool="local"`` (worker processes) and ``pool="ray"``
  (one actor per slot on a local Ray cluster of W CPUs), after a warm-up
  batch that starts the workers and their sandboxes;
* **dispatch alone:** ``--n`` calls of a function that returns at once (``abs``)
  through ``WorkerPool.run`` and ``RayPool.run``, for the per-item cost of
  each executor, and the driver's CPU time per item (what caps how many
  items one trainer process can hand out per second, however many nodes).

The projection to N nodes is arithmetic on these figures, not a
measurement: items/s ≈ min(N · C / t_item, 1 / d), with C cores per node,
t_item the measured wall time per item per worker on Ray, and d the
driver's CPU seconds per dispatched item.

Usage: ``python benchmarks/ray_pool.py [--n 400] [--workers 2] [--json]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SOURCE = "```python\ndef add(a, b):\n    return a + b\n```"
TEST = "assert add(2, 3) == 5\n"


def code_throughput(pool: str, workers: int, n: int) -> dict:
    from grpo_host import Ensemble

    with Ensemble.from_spec("code", workers=workers, pool=pool) as ensemble:
        ensemble.score([SOURCE] * (workers * 4), tests=[TEST] * (workers * 4))  # start workers and sandboxes
        t0 = time.perf_counter()
        result = ensemble.score([SOURCE] * n, tests=[TEST] * n)
        wall = time.perf_counter() - t0
    assert result.values["code"] == [1.0] * n, result.errors[:3]
    return {"pool": pool, "items": n, "wall_s": wall, "items_per_s": n / wall, "ms_per_item_per_worker":
            1000 * wall * workers / n}


def dispatch(pool_name: str, workers: int, n: int) -> dict:
    if pool_name == "ray":
        from grpo_host.scoring.ray_pool import RayPool as Pool
    else:
        from grpo_host.scoring.executors import WorkerPool as Pool

    pool = Pool(workers)
    try:
        pool.run([(abs, (i,), {}) for i in range(workers * 4)], 10)
        cpu0, t0 = time.process_time(), time.perf_counter()
        out = pool.run([(abs, (i,), {}) for i in range(n)], 10)
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    finally:
        pool.close()
    assert [o.value for o in out] == list(range(n))
    return {"pool": pool_name, "items": n, "ms_per_item": 1000 * wall / n, "driver_cpu_ms_per_item": 1000 * cpu / n}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=400, help="items per measurement")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    import ray

    load_before = os.getloadavg()[0]
    ray.init(num_cpus=args.workers, include_dashboard=False, logging_level="warning")
    try:
        code = [code_throughput(p, args.workers, args.n) for p in ("local", "ray")]
        calls = [dispatch(p, args.workers, args.n) for p in ("local", "ray")]
    finally:
        ray.shutdown()
    t_item = code[1]["ms_per_item_per_worker"] / 1000
    d = calls[1]["driver_cpu_ms_per_item"] / 1000
    projection = [{"nodes": nodes, "cores_per_node": cores, "items_per_s": min(nodes * cores / t_item, 1 / d)}
                  for cores in (2, 32) for nodes in (1, 4, 16, 64)]
    report = {"machine": f"{platform.system()} {platform.release()}, {os.cpu_count()} cores, Python "
                         f"{platform.python_version()}, ray {ray.__version__}", "workers": args.workers,
              "load_before": load_before, "load_after": os.getloadavg()[0], "code": code, "dispatch": calls,
              "ray_overhead_pct": 100 * (code[0]["items_per_s"] / code[1]["items_per_s"] - 1),
              "projection (arithmetic, not measured)": projection}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"{report['machine']}; {args.workers} workers; load {load_before:.1f} -> {report['load_after']:.1f}")
    print("| code reward | items | wall s | items/s | ms per item per worker |\n|---|---|---|---|---|")
    for row in code:
        print(f"| {row['pool']} | {row['items']} | {row['wall_s']:.2f} | {row['items_per_s']:.1f} | "
              f"{row['ms_per_item_per_worker']:.1f} |")
    print(f"Ray's wall time per item against the local pool's: {report['ray_overhead_pct']:+.0f}%")
    print("| dispatch (no-op) | ms per item | driver CPU ms per item |\n|---|---|---|")
    for row in calls:
        print(f"| {row['pool']} | {row['ms_per_item']:.2f} | {row['driver_cpu_ms_per_item']:.2f} |")
    print("PROJECTION (arithmetic on the figures above, not a measurement)")
    print("| nodes | cores per node | items/s |\n|---|---|---|")
    for row in projection:
        print(f"| {row['nodes']} | {row['cores_per_node']} | {row['items_per_s']:.0f} |")


if __name__ == "__main__":
    main()
