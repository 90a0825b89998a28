"""verl itself, installed, driving the adapter: its reward loop, its four managers, its ``DataProto``.

``tests/vendored/`` holds verl's call sites because ``pip install verl``
cannot go into the project's environment (verl 0.9.1 pins transformers
5.10.4 and antlr4 4.9.3).  Installed in a venv of its own it works, and
this script runs there against the real modules::

    python3 -m venv /tmp/verl-venv && /tmp/verl-venv/bin/pip install verl
    /tmp/verl-venv/bin/pip install "pluggy>=1.5" "math-verify>=0.9" "pyseccomp>=0.1.2" "jsonschema-rs>=0.61" \\
        "typer>=0.12,<0.29" "copier>=9.0"
    /tmp/verl-venv/bin/pip install --no-deps --no-build-isolation -e .
    /tmp/verl-venv/bin/python benchmarks/serve_verl.py [--task math|code] [--rows 1152] [--repeats 3] [--json]

(grpo-host comes from this checkout, installed without its pins so that
verl's stay; the packages before it are grpo-host's own dependencies that
verl lacks, and the editable install gives the packs' entry points.)  What
it does, all with verl's code:

* the config is verl's generated trainer config, overridden with the keys
  docs/scaling.md gives (``reward.custom_reward_function.*``), the model
  path the built-in tiny model (its tokenizer, EOS ``</s>``);
* **check** (the first ``--check-rows``): the rows as a real ``DataProto`` through the reward loop
  (``RewardLoopWorker.compute_score_batch``: it loads the function and its
  manager with ``load_reward_manager``; Ray is not started, the worker is
  the class the Ray actor wraps) and through the ``naive``, ``batch`` and
  ``prime`` managers of ``verl.workers.reward_manager``; each must give the
  batch API's totals (``Ensemble.score_rows`` on the same rows, a row no
  reward scored 0.0);
* **throughput** (``--repeats``): rows/s of (a) the reward loop around a
  ``compute_score`` that does nothing, (b) the loop through the adapter,
  (c) the batch API, the loop's executor 32 threads as on a verl node; each
  repeat's ratios a/c, b/c, b/a.

``tests/test_verl.py`` runs it with ``--rows 16 --repeats 0`` where a verl
interpreter is found (``GRPO_HOST_VERL_PYTHON``), and skips otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from serve import dataset_rows, rollouts  # noqa: E402  (benchmarks/serve.py: the same rows as the vendored runs)

SPECS = {"math": "math, r1_strict_format:0.5", "code": "code"}


def nothing(data_source=None, solution_str=None, ground_truth=None, extra_info=None, **_):
    """verl's loop's own cost per row: a compute_score that does no work."""
    return {"score": 0.0}


def config_for(spec: str, path: str, name: str):
    """verl's own generated trainer config, with the reward function's keys set as Hydra overrides would."""
    import verl
    from omegaconf import OmegaConf

    from grpo_host.training.builtin_model import tiny_model_dir

    config = OmegaConf.load(Path(verl.__file__).parent / "trainer" / "config" / "_generated_ppo_trainer.yaml")
    OmegaConf.set_struct(config, True)
    for key, value in (("reward.custom_reward_function.path", path), ("reward.custom_reward_function.name", name),
                       ("+reward.custom_reward_function.reward_kwargs.rewards", spec),
                       ("actor_rollout_ref.model.path", str(tiny_model_dir()))):
        OmegaConf.update(config, key.lstrip("+"), value, force_add=key.startswith("+"))
    return config


def data_proto(batch, tokenizer):
    """The rows as verl hands them to a reward: prompt and response token ids (the response ending in EOS, then
    padding), the attention mask, and the non-tensor columns."""
    import numpy as np
    import torch
    from verl import DataProto

    pad, eos = tokenizer.pad_token_id, tokenizer.eos_token_id
    ids = [tokenizer(response, add_special_tokens=False)["input_ids"] + [eos] for _, _, response in batch]
    width = max(map(len, ids))
    return DataProto.from_dict(
        tensors={"prompts": torch.full((len(batch), 1), pad),
                 "responses": torch.tensor([i + [pad] * (width - len(i)) for i in ids]),
                 "attention_mask": torch.tensor([[1] + [1] * len(i) + [0] * (width - len(i)) for i in ids])},
        non_tensors={"data_source": np.array(["openai/gsm8k"] * len(batch), dtype=object),
                     "reward_model": np.array([{"ground_truth": truth} for _, truth, _ in batch], dtype=object),
                     "extra_info": np.array([{"index": i} for i in range(len(batch))], dtype=object)})


def reward_loop(config):
    """verl's ``RewardLoopWorker`` (the class its Ray actor wraps), its event loop's executor 32 threads."""
    from verl.experimental.reward_loop.reward_loop import RewardLoopWorker

    worker = RewardLoopWorker(config)
    worker.loop.set_default_executor(ThreadPoolExecutor(32))
    return lambda data: [out["reward_score"]
                         for out in worker.loop.run_until_complete(worker.compute_score_batch(data))]


def managers(config, tokenizer) -> dict:
    """verl's three legacy managers around the function verl's loader loads from ``config``."""
    from verl.trainer.ppo.reward import get_custom_reward_fn
    from verl.workers.reward_manager import BatchRewardManager, NaiveRewardManager, PrimeRewardManager

    fn = get_custom_reward_fn(config)

    def scores(manager):
        return lambda data: manager(data, return_dict=True)["reward_tensor"].sum(-1).tolist()

    return {"naive": scores(NaiveRewardManager(tokenizer, 0, fn)),
            "batch": scores(BatchRewardManager(tokenizer, 0, fn)),
            "prime": scores(PrimeRewardManager(tokenizer, 0, fn))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", choices=sorted(SPECS), default="math")
    parser.add_argument("--rows", type=int, default=1152, help="rows per throughput repeat")
    parser.add_argument("--check-rows", type=int, default=64,
                        help="rows of the managers' check (prime runs them in a pool of 64 processes)")
    parser.add_argument("--repeats", type=int, default=3, help="throughput repeats (0: the check only)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    import verl
    from transformers import AutoTokenizer

    from grpo_host import Ensemble
    from grpo_host.training.builtin_model import tiny_model_dir

    spec = SPECS[args.task]
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir())
    batch = rollouts(args.rows, args.task)
    data, rows = data_proto(batch, tokenizer), dataset_rows(batch)
    checked = min(args.check_rows, args.rows)
    adapter = config_for(spec, "pkg://grpo_host.integrations.verl", "compute_score")
    # both loops first: prime's manager runs on an event loop of its own, which it closes, and verl's
    # get_event_loop would hand a worker made after it that closed loop
    loop = reward_loop(adapter)
    ceiling = reward_loop(config_for(spec, str(Path(__file__).resolve()), "nothing"))
    report: dict = {"verl": verl.__version__, "task": args.task, "spec": spec, "rows": args.rows, "checked": checked,
                    "machine": f"{os.cpu_count()} cores", "load_before": round(os.getloadavg()[0], 1)}
    with Ensemble.from_spec(spec) as ensemble:
        want = [t if t is not None else 0.0 for t in ensemble.score_rows(rows[:checked]).total]
        part = data[:checked]
        got = {"reward_loop": loop(part), **{k: f(part) for k, f in managers(adapter, tokenizer).items()}}
        differ = {k: [i for i, (v, w) in enumerate(zip(values, want, strict=False)) if round(v, 6) != round(w, 6)]
                  for k, values in got.items()}
        report["same_as_batch_api"] = {k: not rows_ for k, rows_ in differ.items()}
        report["differing_rows"] = {k: [(i, got[k][i], want[i]) for i in rows_[:5]] for k, rows_ in differ.items()
                                    if rows_}
        report["scored_nonzero"] = sum(w != 0.0 for w in want)
        rates: dict[str, list[float]] = {"ceiling": [], "adapter": [], "batch_api": []}
        for _ in range(args.repeats):
            for key, run in (("batch_api", lambda: ensemble.score_rows(rows)), ("adapter", lambda: loop(data)),
                             ("ceiling", lambda: ceiling(data))):
                start = time.perf_counter()
                run()
                rates[key].append(args.rows / (time.perf_counter() - start))
    if args.repeats:
        ratios = [{"ceiling_vs_batch_api": f / b, "adapter_vs_batch_api": a / b, "adapter_vs_ceiling": a / f}
                  for f, a, b in zip(rates["ceiling"], rates["adapter"], rates["batch_api"], strict=False)]
        report.update({f"{k}_rows_per_s": [round(r) for r in v] for k, v in rates.items()})
        report["ratios"] = [{k: round(v, 3) for k, v in r.items()} for r in ratios]
        report.update({k: round(statistics.median(r[k] for r in ratios), 3) for k in ratios[0]})
    report["load_after"] = round(os.getloadavg()[0], 1)
    if args.json:
        print(json.dumps(report))
        return
    print(f"verl {report['verl']}, task {args.task} ({spec!r}), {args.rows} rows, {report['machine']}, load "
          f"{report['load_before']} -> {report['load_after']}")
    print(f"on {checked} rows, same totals as the batch API: {report['same_as_batch_api']}; rows scoring non-zero: "
          f"{report['scored_nonzero']}{'; differing (row, got, want): ' if report['differing_rows'] else ''}"
          f"{report['differing_rows'] or ''}")
    if args.repeats:
        print(f"rows/s: (a) reward loop, no-op compute_score {report['ceiling_rows_per_s']}, (b) reward loop through "
              f"the adapter {report['adapter_rows_per_s']}, (c) batch API {report['batch_api_rows_per_s']}")
        print(f"medians of each repeat's ratios: a/c {report['ceiling_vs_batch_api']:.0%}, b/c "
              f"{report['adapter_vs_batch_api']:.0%}, b/a {report['adapter_vs_ceiling']:.0%}")


if __name__ == "__main__":
    main()
