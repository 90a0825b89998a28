"""What each framework adapter costs per row, against ``grpo-host score``'s own path, on the parity rows.

The rows and the calls are those of ``tests/test_adapters_parity.py``
(``tests/adapter_parity.py``): 1,000 real GSM8K completions, spec
``accuracy:2, r1_strict_format:0.5``, each framework calling the adapter as
it calls a reward (Atropos a group of 8 per call; OpenEnv's rubric, SkyRL's
``make``/``init``/``step`` and eval-protocol's ``@reward_function`` one row
per call; verifiers' ``Task.score`` on every trace at once; NeMo Gym one
``POST /verify`` per rollout from 8 client threads to a real ``grpo-host
serve``).  The baseline is the same rows in one call of the path ``grpo-host
score`` takes (:mod:`grpo_host.integrations.scorer`, in process).  Each
figure is the best of ``--repeats`` runs after one warm-up row, and every run
is checked against the baseline's values first.  verifiers and eval-protocol
run in venvs of their own (``tests/peers.py``), so their seconds are measured
there, by ``tests/peer_scripts/parity_rows.py``.

    python benchmarks/adapters.py --rows 1000 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the parity rows and runners, the peers' venvs
sys.path.insert(0, str(ROOT / "tests" / "vendored"))  # NeMo Gym's schema


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    import adapter_parity as p
    from peers import peer_python
    from test_serve import Server

    data = p.rows(args.rows)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        server = Server(folder, folder / "serve.log", p.SPEC)
        peers = {"verifiers": peer_python("verifiers==0.4.0"), "eval_protocol": peer_python("eval-protocol==0.3.33")}
        runners = {
            "score": lambda: p.via_scorer(data),
            "verifiers": lambda: p.via_peer("verifiers", peers["verifiers"], data, folder),
            "openenv": lambda: p.via_openenv(data),
            "eval_protocol": lambda: p.via_peer("eval_protocol", peers["eval_protocol"], data, folder),
            "atropos": lambda: p.via_atropos(data),
            "nemo_gym_verify": lambda: p.via_nemo_gym(data, server.url),
            "skyrl": lambda: p.via_skyrl(data),
        }
        best: dict[str, float] = {}
        load = [os.getloadavg()[0]]
        try:
            reference = None
            for _ in range(args.repeats):
                for name, run in runners.items():
                    results, seconds = run()
                    reference = reference or results
                    assert results == reference, f"{name} gave other values than grpo-host score's path"
                    best[name] = min(best.get(name, seconds), seconds)
                load.append(os.getloadavg()[0])
        finally:
            server.stop()
    base = best["score"] / len(data) * 1000
    print(json.dumps({
        "machine": f"{platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}",
        "load_average_1min": [round(x, 1) for x in load],
        "rows": len(data), "repeats": args.repeats, "spec": p.SPEC,
        "ms_per_row": {name: round(s / len(data) * 1000, 4) for name, s in best.items()},
        "x_score": {name: round(s / len(data) * 1000 / base, 1) for name, s in best.items() if name != "score"},
    }, indent=2))


if __name__ == "__main__":
    main()
