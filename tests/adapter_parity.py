"""The same rows through ``grpo-host score`` and through every framework adapter, each called as its framework calls
it: shared by tests/test_adapters_parity.py (same values, row for row) and benchmarks/adapters.py (ms per row).

The rows are real GSM8K completions (``tests/data/math/real_completions.jsonl``)
laid out four ways, so both rewards of the spec take both values: as written
(no tags), in R1's strict layout with the completion's last number as the
answer, in a loose layout with the gold as the answer, and in the strict
layout with the gold.  Every 37th row's gold is blank (``accuracy`` gives
None: only the format reward applies) and every 97th row has no gold at all
(a bad row: no adapter may pay it).

Each runner returns, per row, ``{"rewards": {name: value or None}, "total":
value or None}`` read from what the framework itself received (None where
the framework was told the row is unscored: NaN for Atropos, ``mask_sample``
for NeMo Gym, ``is_score_valid`` false for eval-protocol, a failed trace for
verifiers, ``scored`` false or a failed ``init`` for SkyRL), and the seconds
the rows took after one warm-up row.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
SPEC = "accuracy:2, r1_strict_format:0.5"
Result = dict[str, Any]


def rows(n: int = 1000) -> list[dict[str, Any]]:
    """``n`` rows (see the module docstring), in a fixed order."""
    source = [json.loads(line) for line in (HERE / "data" / "math" / "real_completions.jsonl").open()]
    out = []
    for i in range(n):
        real = source[i % len(source)]
        text, gold = real["completion"].strip(), str(real["gold"]).strip()
        numbers = re.findall(r"-?\d+(?:\.\d+)?", text)
        completion = [text, f"<think>\n{text}\n</think>\n<answer>\n{numbers[-1] if numbers else ''}\n</answer>",
                      f"<think>{text}</think> <answer>{gold}</answer>",
                      f"<think>\n{text}\n</think>\n<answer>\n{gold}\n</answer>\n"][i % 4]
        row: dict[str, Any] = {"prompt": f"GSM8K problem {real['id']}", "completion": completion, "answer": gold}
        if i % 37 == 36:
            row["answer"] = "  "
        if i % 97 == 96:
            del row["answer"]
        out.append(row)
    return out


def _names() -> list[str]:
    from grpo_host.integrations import scorer

    return list(scorer.weights(SPEC))


def _timed(each: Callable[[list[dict[str, Any]]], list[Result]], data: list[dict[str, Any]]
           ) -> tuple[list[Result], float]:
    each(data[:1])
    start = time.perf_counter()
    results = each(data)
    return results, time.perf_counter() - start


def via_score(data: list[dict[str, Any]], folder: Path) -> list[Result]:
    """``grpo-host score --out`` on the rows: the reference."""
    from conftest import run_cli

    path = folder / "parity.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in data))
    out = folder / "parity.out.jsonl"
    run_cli("score", str(path), "--rewards", SPEC, "--out", str(out))
    names = _names()
    return [{"rewards": line.get("rewards") or dict.fromkeys(names), "total": line.get("total")}
            for line in map(json.loads, out.read_text().splitlines())]


def via_scorer(data: list[dict[str, Any]]) -> tuple[list[Result], float]:
    """The rows in one call of the path ``grpo-host score`` takes, in process: the benchmark's baseline."""
    from grpo_host.integrations import scorer

    names = _names()

    def each(part: list[dict[str, Any]]) -> list[Result]:
        lines = scorer.score(SPEC, [(f"row {i}", row) for i, row in enumerate(part)])
        return [{"rewards": line.get("rewards") or dict.fromkeys(names), "total": line.get("total")} for line in lines]

    return _timed(each, data)


def via_atropos(data: list[dict[str, Any]], group: int = 8) -> tuple[list[Result], float]:
    """Atropos's registry creates the reward; each group of ``group`` completions is one call, as an environment
    scores a group."""
    from atroposlib.envs.reward_fns import registry

    from grpo_host.integrations.atropos import register

    register()
    reward = registry.create({"type": "grpo_host", "rewards": SPEC})

    def each(part: list[dict[str, Any]]) -> list[Result]:
        out: list[Result] = []
        for start in range(0, len(part), group):
            chunk = part[start:start + group]
            scores = reward([r["completion"] for r in chunk], prompt=[r["prompt"] for r in chunk],
                            ground_truth=[r.get("answer") for r in chunk])
            for j, total in enumerate(scores):
                out.append({"rewards": {n: v[j] for n, v in reward.last_values.items()},
                            "total": None if math.isnan(total) else total})
        return out

    return _timed(each, data)


def via_openenv(data: list[dict[str, Any]]) -> tuple[list[Result], float]:
    """OpenEnv's rubric call, ``rubric(action, observation)``, one row at a time."""
    from grpo_host.integrations.openenv import CompletionAction, SpecRubric

    rubric = SpecRubric(SPEC)

    def each(part: list[dict[str, Any]]) -> list[Result]:
        out = []
        for row in part:
            total = rubric(CompletionAction(completion=row["completion"]),
                           {k: v for k, v in row.items() if k != "completion"})
            out.append({"rewards": dict(rubric.last_values), "total": total})
        return out

    return _timed(each, data)


def via_skyrl(data: list[dict[str, Any]]) -> tuple[list[Result], float]:
    """SkyRL-Gym's ``make``, ``init`` and ``step`` per row, with the row in SkyRL's dataset shape."""
    import skyrl_gym
    from omegaconf import DictConfig

    from grpo_host import UserError
    from grpo_host.integrations.skyrl import register

    register(SPEC)
    names = _names()

    def each(part: list[dict[str, Any]]) -> list[Result]:
        out: list[Result] = []
        for i, row in enumerate(part):
            extras = {"extra_info": {"index": i}}
            if "answer" in row:
                extras["reward_spec"] = {"method": "rule", "ground_truth": row["answer"]}
            env = skyrl_gym.make("grpo_host", env_config=DictConfig({}), extras=extras)
            try:
                env.init([{"role": "user", "content": row["prompt"]}])
            except UserError:  # the data check refuses the row before any step
                out.append({"rewards": dict.fromkeys(names), "total": None})
                continue
            meta = env.step(row["completion"])["metadata"]["grpo_host"]
            out.append({"rewards": meta["rewards"], "total": meta["total"] if meta["scored"] else None})
        return out

    return _timed(each, data)


def via_nemo_gym(data: list[dict[str, Any]], url: str, threads: int = 8) -> tuple[list[Result], float]:
    """``POST /verify`` per rollout, in NeMo Gym's schema (its own models build each request), from ``threads``
    concurrent clients as NeMo Gym's rollout collection posts them."""
    import httpx
    import nemo_gym_verify as ng

    names = _names()

    def request(row: dict[str, Any]) -> dict[str, Any]:
        body = ng.BaseVerifyRequest(
            responses_create_params={"input": [{"role": "user", "content": row["prompt"]}]},
            response={"id": "r", "created_at": 0, "model": "policy", "object": "response", "parallel_tool_calls": True,
                      "tool_choice": "auto", "tools": [],
                      "output": [{"type": "message", "id": "m", "role": "assistant", "status": "completed",
                                  "content": [{"type": "output_text", "text": row["completion"],
                                               "annotations": []}]}]}).model_dump(mode="json")
        return {**body, **({"expected_answer": row["answer"]} if "answer" in row else {})}

    def each(part: list[dict[str, Any]]) -> list[Result]:
        bodies = [request(r) for r in part]
        with httpx.Client(base_url=url, timeout=60) as client, ThreadPoolExecutor(threads) as pool:
            answers = list(pool.map(lambda b: client.post("/verify", json=b).raise_for_status().json(), bodies))
        return [{"rewards": {n: a["reward_components"].get(n) for n in names},
                 "total": None if a.get(ng.MASK_SAMPLE_KEY) else a["reward"]} for a in answers]

    return _timed(each, data)


def via_peer(framework: str, python: Path, data: list[dict[str, Any]], folder: Path) -> tuple[list[Result], float]:
    """verifiers or eval-protocol, in their own venv (tests/peers.py), through ``peer_scripts/parity_rows.py``."""
    from peers import run_in

    path = folder / f"parity-{framework}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in data))
    found = run_in(python, HERE / "peer_scripts" / "parity_rows.py", framework, str(path), SPEC, timeout=900)
    return found["results"], found["seconds"]


def served_rows(data: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows an OpenEnv server of ``SPEC`` can serve (its data check refuses the rows without a gold at start):
    each row's columns without the completion, which the agent's action brings."""
    return [{k: v for k, v in row.items() if k != "completion"} for row in data if "answer" in row]


def via_openenv_environment(data: list[dict[str, Any]], url: str) -> tuple[list[Result], float]:
    """The ``openenv`` environment stepping OpenEnv's own server of ``SPEC`` over :func:`served_rows` (``url``), as
    a grpo-host agent rollout does: one rollout slot, a ``reset`` (the row's ``seed`` picks the served row) and one
    ``step`` whose action is the completion, per row.  A row the server's data check refused is unscored."""
    from grpo_host import Session, load_plugins

    names = _names()
    served = [i for i, row in enumerate(data) if "answer" in row]
    seeds = {i: {"seed": j} for j, i in enumerate(served)}
    slot = load_plugins().registry.environment("openenv").session_class()(
        {"url": url, "reset_columns": ["seed"], "show_schema": False},
        rows=[seeds.get(i, {}) for i in range(len(data))])

    def each(part: list[dict[str, Any]]) -> list[Result]:
        out: list[Result] = []
        for i, row in enumerate(part):
            if i not in seeds:
                out.append({"rewards": dict.fromkeys(names), "total": None})
                continue
            slot.reset(**{Session.ROW_KEY: i})
            step = json.loads(slot.step(action={"completion": row["completion"]}))
            out.append({"rewards": step["observation"]["rewards"], "total": slot.get_reward()})
        return out

    return _timed(each, data)


def via_eval_protocol_import(python: Path, data: list[dict[str, Any]], folder: Path) -> dict[str, Any]:
    """eval-protocol's ``accuracy_reward`` on the rows through the grpo-host ``eval_protocol`` reward and through
    eval-protocol's own call, in its venv (``peer_scripts/eval_protocol_import.py parity``): each row's value (None:
    unscored) and the seconds each took."""
    from peers import run_in

    path = folder / "parity-eval-protocol-import.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in data))
    return run_in(python, HERE / "peer_scripts" / "eval_protocol_import.py", "parity", str(path), timeout=900)
