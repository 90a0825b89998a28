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

The imports are measured too: the ``openenv`` environment (a grpo-host
agent's rollout slot stepping OpenEnv's own server of the spec on 127.0.0.1,
a ``reset`` and a ``step`` per row), against the same baseline; and the
``eval_protocol`` reward, eval-protocol's own ``accuracy_reward`` through
``grpo-host score``'s path against eval-protocol's own call of it, row for row
(``tests/peer_scripts/eval_protocol_import.py``).

    python benchmarks/adapters.py --rows 1000 --repeats 3
"""

from __future__ import annotations

import argparse
import contextlib
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
    from openenv_server import openenv_server
    from peers import peer_python
    from test_serve import Server

    data = p.rows(args.rows)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        server = Server(folder, folder / "serve.log", p.SPEC)
        stack = contextlib.ExitStack()
        # a session per repeat: a run's slot may outlive it until the collector frees it
        openenv_url = stack.enter_context(openenv_server(folder, p.SPEC, p.served_rows(data), sessions=args.repeats))
        peers = {"verifiers": peer_python("verifiers==0.4.0"), "eval_protocol": peer_python("eval-protocol==0.3.33")}
        runners = {
            "score": lambda: p.via_scorer(data),
            "verifiers": lambda: p.via_peer("verifiers", peers["verifiers"], data, folder),
            "openenv": lambda: p.via_openenv(data),
            "eval_protocol": lambda: p.via_peer("eval_protocol", peers["eval_protocol"], data, folder),
            "atropos": lambda: p.via_atropos(data),
            "nemo_gym_verify": lambda: p.via_nemo_gym(data, server.url),
            "skyrl": lambda: p.via_skyrl(data),
            "openenv_environment": lambda: p.via_openenv_environment(data, openenv_url),
        }
        best: dict[str, float] = {}
        imported: dict[str, float] = {}  # eval-protocol's accuracy_reward: through the eval_protocol reward, and alone
        load = [os.getloadavg()[0]]
        try:
            reference = None
            for _ in range(args.repeats):
                for name, run in runners.items():
                    results, seconds = run()
                    reference = reference or results
                    assert results == reference, f"{name} gave other values than grpo-host score's path"
                    best[name] = min(best.get(name, seconds), seconds)
                found = p.via_eval_protocol_import(peers["eval_protocol"], data, folder)
                assert found["grpo_host"] == found["eval_protocol"], "eval_protocol differs from its own call"
                for side in ("grpo_host", "eval_protocol"):
                    imported[side] = min(imported.get(side, found[f"{side}_seconds"]), found[f"{side}_seconds"])
                load.append(os.getloadavg()[0])
        finally:
            server.stop()
            stack.close()
    base = best["score"] / len(data) * 1000
    print(json.dumps({
        "machine": f"{platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}",
        "load_average_1min": [round(x, 1) for x in load],
        "rows": len(data), "repeats": args.repeats, "spec": p.SPEC,
        "ms_per_row": {name: round(s / len(data) * 1000, 4) for name, s in best.items()},
        "x_score": {name: round(s / len(data) * 1000 / base, 1) for name, s in best.items() if name != "score"},
        "eval_protocol_import_ms_per_row": {side: round(s / len(data) * 1000, 4) for side, s in imported.items()},
    }, indent=2))


if __name__ == "__main__":
    main()
