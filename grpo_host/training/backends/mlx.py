"""The MLX backend: mlx-lm-lora's GRPO trainer over ``mlx_lm.load`` and mlx-lm's LoRA layers.

No GRPO code lives here: generation, advantages, the loss, gradient
accumulation, evaluation and the periodic adapter saves are
``mlx_lm_lora.trainer.grpo_trainer.train_grpo``.  This module translates
the run configuration into that trainer's arguments (every value passed
explicitly: its defaults differ from ours) and adds what the trainer cannot
carry by itself, through the three seams it offers:

* ``reward_funcs``: one function per ensemble member, named after it.  Each
  row's id travels as the row's fifth element (``types``), which the
  trainer hands to reward functions unchanged; the row itself is looked up
  by id, so metadata reaches rewards exactly as it was read.  A last,
  backend-owned function applies the unscored-row policy (see
  :class:`MlxRewardFuncs`), since the trainer stops the run when every
  reward of a completion is None.
* ``iterate_batches``: a wrapper around the trainer's own batch iterator
  that runs between iterations, to write resumable checkpoints (the
  trainer saves only weights: no optimizer state, no step) and to skip the
  batches a resumed run has already trained on.
* ``training_callback``: turns the trainer's reports into the TRL-named
  metrics every backend logs (``reward``, ``rewards/<name>/mean`` ...), with
  our per-reward coverage, errors, timeouts and seconds.

Multi-machine runs come from ``mlx.launch`` of the same command: the
trainer shards batches and averages gradients over ``mx.distributed``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ...errors import ConfigError
from ...runs.record import RolloutRecord
from ...scoring.batch import trained_total
from ...scoring.stats import Moments, reward_key
from ..config import RunConfig
from .contract import TrainingBackend
from .reward_funcs import ROW_ID, EnsembleRewardFuncs
from .steps import check_prompt_length, rollout_environments

if TYPE_CHECKING:
    from mlx_lm.tuner.callbacks import TrainingCallback

    from ...scoring.batch import ScoredBatch
    from ..train import Job, Summary
    from .mlx_agents import AgentRollouts, EnvironmentReward

__all__ = ["EXTRA_OPTIONS", "FILL_NAME", "REPORTERS", "MlxBackend", "MlxRewardFuncs", "base_quantization", "grpo_args",
           "quantize_base", "run", "validate"]

LOSS_TYPES = ("grpo", "bnpo", "dr_grpo")
"""The loss normalisations mlx-lm-lora implements (``dapo`` is not among them)."""

REPORTERS = ("wandb", "swanlab", "trackio")
"""The trackers mlx-lm's reporting callbacks know."""

EXTRA_OPTIONS: dict[str, tuple[type, Any, str]] = {
    "end_answer_token": (str, "", "a stop string besides EOS; '' (default) stops at EOS only, as TRL does"),
    "max_grad_norm": (float, 1.0, "clip the gradient to this global norm before each update (TRL's default 1.0)"),
    "reference_model_path": (str, None, "KL reference model (beta > 0); default: the trained model's own weights"),
    "val_batches": (int, -1, "validation batches per evaluation; -1: the whole validation set"),
}
"""Keys of the run config's ``mlx:`` section: ``key: (type, default, description)``."""

FILL_NAME = "grpo_host_unscored"
"""Name of the backend's own reward function that applies the unscored-row policy."""



def _require_mlx() -> None:
    """Found, not imported: importing mlx-lm (and transformers with it) takes seconds, and a config error should not."""
    from importlib.util import find_spec

    missing = [name for name in ("mlx", "mlx_lm", "mlx_lm_lora") if find_spec(name) is None]
    if missing:
        raise ConfigError(f"backend 'mlx' needs mlx, mlx-lm and mlx-lm-lora (missing: {', '.join(missing)}): "
                          "pip install 'grpo-host[mlx]'")


def _require_trl_parser() -> None:
    """Environments read tool calls with TRL's chat-template utilities (the parser the TRL path uses)."""
    from importlib.util import find_spec

    if find_spec("trl") is None:
        raise ConfigError("config key 'environment': the mlx backend reads tool calls with TRL's response parser, "
                          "and trl is not installed: pip install 'grpo-host[mlx,trl]'")


def _extra(config: RunConfig) -> dict[str, Any]:
    """The ``mlx:`` section with defaults filled in; an unknown key or a wrong type is a :class:`ConfigError`."""
    out = {}
    for key, (kind, default, _) in EXTRA_OPTIONS.items():
        value = config.mlx.get(key, default)
        if value is not None and not isinstance(value, kind) and not (kind is float and isinstance(value, int)):
            raise ConfigError(f"config key 'mlx.{key}': expected {kind.__name__}, got {value!r}")
        out[key] = value
    for key in config.mlx:
        if key not in EXTRA_OPTIONS:
            known = "; ".join(f"{k} ({d})" for k, (_, _, d) in EXTRA_OPTIONS.items())
            raise ConfigError(f"config key 'mlx.{key}': not an option of the mlx backend; options: {known}")
    return out


def validate(config: RunConfig) -> None:
    """Reject, before any data is read or model loaded, what mlx-lm-lora's trainer cannot honour.

    The engine must do what the config says or refuse: a loss type it does
    not implement, a tracker it cannot report to, a reward name it would
    log twice, a rollout function (TRL's contract), an environment without
    trl installed (its tool-call parser), or a local model folder whose
    quantization the config contradicts is a :class:`ConfigError` naming
    the key.
    """
    if config.rollout is not None:
        raise ConfigError("config key 'rollout': a rollout function has TRL's rollout_func contract (it is handed "
                          "TRL's trainer); the mlx backend runs environments with its own agent loop instead "
                          "(config key 'environment'), or train with backend: trl")
    if config.environment is not None:
        _require_trl_parser()
    if config.loss_type not in LOSS_TYPES:
        raise ConfigError(f"config key 'loss_type': {config.loss_type!r} is not implemented by mlx-lm-lora's GRPO "
                          f"trainer (it has {', '.join(LOSS_TYPES)}); use one of those with backend mlx")
    for tracker in config.report_to:
        if tracker not in REPORTERS:
            raise ConfigError(f"config key 'report_to': {tracker!r} is not a tracker mlx-lm can report to "
                              f"(it has {', '.join(REPORTERS)})")
    names = [item.name for item in config.rewards]
    for name in names:
        if names.count(name) > 1:
            raise ConfigError(f"config key 'rewards': {name!r} appears twice; mlx-lm-lora names reward functions "
                              "and their metrics by name, so each reward may appear once")
        if name == FILL_NAME:
            raise ConfigError(f"config key 'rewards': {name!r} is the name of the mlx backend's own reward function")
    _extra(config)
    local = Path(config.model) / "config.json"
    if local.is_file():  # a hub id is checked once loaded (see run)
        base_quantization(config, json.loads(local.read_text()))
    _require_mlx()


def _world_size() -> int:
    """How many ``mlx.launch`` processes share the run (1 without ``mlx.launch``)."""
    import mlx.core as mx

    return mx.distributed.init().size()


def grpo_args(config: RunConfig, *, adapter_file: str, max_seq_length: int, iters: int, weights: list[float],
              world_size: int = 1, extra: dict[str, Any] | None = None) -> Any:
    """The ``GRPOTrainingArgs`` for ``config``: every field the run config owns set explicitly.

    The trainer counts iterations (micro-steps) and global prompts per
    iteration; the run config counts optimizer steps and prompts per
    process, so cadences are multiplied by ``gradient_accumulation_steps``
    and the batch by the number of ``mlx.launch`` processes.
    """
    from mlx_lm_lora.trainer.grpo_trainer import GRPOTrainingArgs

    c, ga = config, config.gradient_accumulation_steps
    extra = extra if extra is not None else _extra(config)
    return GRPOTrainingArgs(
        batch_size=c.batch_size * world_size,
        iters=iters,
        gradient_accumulation_steps=ga,
        val_batches=extra["val_batches"],
        steps_per_report=c.log_every * ga,
        steps_per_eval=(c.eval_every or c.save_every) * ga,
        steps_per_save=c.save_every * ga,
        max_seq_length=max_seq_length,
        adapter_file=adapter_file,
        grad_checkpoint=c.gradient_checkpointing,
        group_size=c.group_size,
        beta=c.beta,
        epsilon=c.epsilon,
        epsilon_high=c.epsilon if c.epsilon_high is None else c.epsilon_high,  # the config resolved None already
        max_completion_length=c.max_completion_length,
        reference_model_path=extra["reference_model_path"],
        temperature=c.temperature,
        top_p=c.top_p,
        top_k=c.top_k,
        min_p=c.min_p,
        grpo_loss_type=c.loss_type,
        reward_weights=list(weights),
        importance_sampling_level=c.importance_sampling_level,
    )


def _schedule(config: RunConfig) -> Any:
    """The learning rate per optimizer step, shaped like TRL's schedulers (warm-up from 0, decay to 0)."""
    import mlx.optimizers as optim

    lr, warmup, steps = config.learning_rate, config.warmup_steps, config.max_steps
    decay = max(steps - warmup, 1)
    main = {
        "constant": optim.linear_schedule(lr, lr, 1),
        "linear": optim.linear_schedule(lr, 0.0, decay),
        "cosine": optim.cosine_decay(lr, decay, 0.0),
    }[config.lr_scheduler]
    if warmup == 0:
        return main
    return optim.join_schedules([optim.linear_schedule(0.0, lr, warmup), main], [warmup])


def _optimizer(config: RunConfig, max_grad_norm: float) -> Any:
    """AdamW with TRL's (torch's) settings: bias correction, no weight decay, gradient clipping at ``max_grad_norm``."""
    import mlx.optimizers as optim

    class ClippedAdamW(optim.AdamW):
        def apply_gradients(self, gradients: dict, parameters: dict) -> dict:
            gradients, _ = optim.clip_grad_norm(gradients, max_grad_norm)
            return super().apply_gradients(gradients, parameters)

    return ClippedAdamW(learning_rate=_schedule(config), betas=[0.9, 0.999], eps=1e-8, weight_decay=0.0,
                        bias_correction=True)


class RewardStats:
    """Per-reward metrics of every scoring pass, averaged per log step and over ``mlx.launch`` processes.

    Keys follow TRL (``reward``, ``reward_std``, ``rewards/<name>/mean``
    ...), so both backends log the same names.  Each figure is the mean over
    the passes (and processes) that had a value for it, as TRL averages its
    per-step figures between two log steps.
    """

    def __init__(self) -> None:
        self._sums: dict[str, dict[str, list[float]]] = {"train": {}, "eval": {}}

    def add(self, mode: str, metrics: dict[str, float | None]) -> None:
        bucket = self._sums[mode]
        for key, value in metrics.items():
            total = bucket.setdefault(key, [0.0, 0.0])
            if value is not None:
                total[0] += value
                total[1] += 1

    def take(self, mode: str) -> dict[str, float]:
        """The averages since the last ``take`` (summed over processes first), and a fresh start."""
        bucket, self._sums[mode] = self._sums[mode], {}
        keys = sorted(bucket)
        flat = [x for key in keys for x in bucket[key]]
        if _world_size() > 1:  # every process reports at the same iteration, so this collective lines up
            import mlx.core as mx

            summed = mx.distributed.all_sum(mx.array(flat, dtype=mx.float32), stream=mx.cpu)
            flat = cast("list[float]", summed.tolist())  # a 1-D array's tolist() is a list
        return {key: flat[2 * i] / flat[2 * i + 1] for i, key in enumerate(keys) if flat[2 * i + 1]}


class _Member:
    """One ensemble member with mlx-lm-lora's reward-function contract (``prompts, completions, answer, types``)."""

    def __init__(self, owner: MlxRewardFuncs, index: int, name: str) -> None:
        self.owner, self.index, self.__name__ = owner, index, name

    def __call__(self, prompts: Sequence[Any] = (), completions: Sequence[str] = (), answer: Any = None,
                 types: Sequence[Any] | None = None, **_: Any) -> list[float | None]:
        return self.owner.member(self.index, prompts, completions, types)


class _EnvironmentMember:
    """An environment's own reward with mlx-lm-lora's reward-function contract."""

    def __init__(self, owner: MlxRewardFuncs, reward: EnvironmentReward) -> None:
        self.owner, self.reward, self.__name__ = owner, reward, reward.__name__

    def __call__(self, prompts: Sequence[Any] = (), completions: Sequence[Any] = (), answer: Any = None,
                 types: Sequence[Any] | None = None, **_: Any) -> list[float | None]:
        return self.owner.environment_reward(self.reward, len(completions))


class _Fill:
    """The backend's last reward function: applies the unscored-row policy and records the pass's metrics."""

    __name__ = FILL_NAME

    def __init__(self, owner: MlxRewardFuncs) -> None:
        self.owner = owner

    def __call__(self, prompts: Sequence[Any] = (), completions: Sequence[str] = (), answer: Any = None,
                 types: Sequence[Any] | None = None, **_: Any) -> list[float]:
        return self.owner.fill(types or [])


class MlxRewardFuncs:
    """The ensemble as mlx-lm-lora reward functions, plus the backend's fill-in function.

    Members are scored through :class:`EnsembleRewardFuncs` (one
    :meth:`Ensemble.score` per batch: timeouts, workers, the error policy,
    ``strict``).  mlx-lm-lora raises when every reward of a completion is
    None; TRL instead gives such a completion no advantage and leaves it out
    of its group's baseline.  The fill-in function (weight 1, listed last)
    does the same within mlx-lm-lora's arithmetic: it is 0 for scored
    completions and, for a completion no weighted reward scored, the mean
    total of its group's scored completions (0 when none), so that
    completion's advantage is zero and its group's mean is unchanged.

    :param train_rows: how many of the rows are training rows; higher row
        ids are validation rows, whose passes are logged as ``eval_*``.
    """

    def __init__(self, job: Job, train_rows: int, stats: RewardStats, record: RolloutRecord | None = None,
                 agents: AgentRollouts | None = None) -> None:
        self.ensemble, self.train_rows, self.stats, self.agents = job.ensemble, train_rows, stats, agents
        self.scorer = EnsembleRewardFuncs(job.ensemble, job.rows, monitors=job.monitors, sinks=[self],
                                          max_length=job.config.max_completion_length, record=record,
                                          group_size=job.config.group_size)
        names = job.ensemble.names
        own = agents.rewards if agents is not None else []
        self.funcs: list[Callable[..., list]] = [_Member(self, i, n) for i, n in enumerate(names)]
        self.funcs += [_EnvironmentMember(self, reward) for reward in own] + [_Fill(self)]
        self.weights = [*job.ensemble.weights, *(1.0 for _ in own), 1.0]
        self._values: dict[int, list[float | None]] = {}
        self._own: dict[str, list[float | None]] = {}
        self._scored: ScoredBatch | None = None

    def take(self, batch: ScoredBatch) -> None:
        """The pass's scored batch (a sink, after the record and the monitors), for :meth:`fill` to report."""
        self._scored = batch

    def member(self, index: int, prompts: Sequence[Any], completions: Sequence[str],
               row_ids: Sequence[Any] | None) -> list[float | None]:
        if row_ids is None or len(row_ids) != len(completions):
            raise ConfigError("this mlx-lm-lora passed no row ids (the rows' `types`) to the reward functions, so "
                              "rewards cannot see their rows; install the mlx-lm-lora version grpo-host[mlx] names")
        sessions = self.agents.sessions if self.agents is not None else None
        values = self.scorer.funcs[index](prompts=list(prompts), completions=completions, environments=sessions,
                                          **{ROW_ID: list(row_ids)})
        self._values[index] = values
        return values

    def environment_reward(self, reward: EnvironmentReward, count: int) -> list[float | None]:
        values = self._own[reward.__name__] = reward.values(count)
        return values

    def fill(self, row_ids: Sequence[Any]) -> list[float]:
        names = self.ensemble.names
        values = {name: self._values[i] for i, name in enumerate(names)}
        total, unscored = self.ensemble.weighted_total(values, len(row_ids))
        if self._own:  # an environment's own reward scores a rollout too (weight 1), as TRL sums it in
            total = trained_total(total, self._own)
            unscored = sum(t is None for t in total)
            values.update(self._own)
        groups: dict[Any, Moments] = {}
        for row, t in zip(row_ids, total, strict=True):
            if t is not None:
                groups.setdefault(row, Moments()).add([t])
        means = {row: m.mean or 0.0 for row, m in groups.items()}  # each holds a value: its mean is never None
        out = [0.0 if t is not None else means.get(row, 0.0) for row, t in zip(row_ids, total, strict=True)]
        mode = "eval" if any(int(r) >= self.train_rows for r in row_ids) else "train"
        self.stats.add(mode, self._metrics(values, total, unscored))
        if self.agents is not None:
            self.stats.add(mode, dict(self.agents.figures))
        self._values, self._scored, self._own = {}, None, {}
        return out

    def _metrics(self, values: dict[str, list[float | None]], total: list[float | None],
                 unscored: int) -> dict[str, float | None]:
        """TRL's reward keys for one pass: means and stds over the completions each reward scored."""
        out: dict[str, float | None] = {}
        m = Moments().add(total)
        out["reward"], out["reward_std"] = m.mean, m.std if m.n > 1 else None
        for name, vals in values.items():
            m = Moments().add(vals)
            out[reward_key(name, "mean")], out[reward_key(name, "std")] = m.mean, m.std if m.n > 1 else None
        if self._scored is not None:  # coverage, errors, timeouts, seconds per reward; record, monitors
            out.update(self._scored.figures())
        out["unscored"] = float(unscored)
        return out


_ENGINE_KEYS = {  # mlx-lm-lora report key -> the TRL name both backends log
    "train_loss": "loss",
    "train_kl": "kl",
    "learning_rate": "learning_rate",
    "train_average_generated_tokens": "completions/mean_length",
    "train_min_generated_tokens": "completions/min_length",
    "train_max_generated_tokens": "completions/max_length",
    "train_hit_max_tokens_ratio": "completions/clipped_ratio",
    "train_clip_ratio_low": "clip_ratio/low_mean",
    "train_clip_ratio_high": "clip_ratio/high_mean",
    "train_clip_ratio_total": "clip_ratio/region_mean",
    "tokens_per_second": "tokens_per_second",
}


class _Reports:
    """mlx-lm-lora's training callback: its reports plus our reward metrics, into the backend's log.

    The trainer calls it on every process; the reward metrics are summed
    across processes there, and only the main process writes.  ``forward``
    is a tracker callback (wandb, swanlab) that receives the same records.
    """

    def __init__(self, backend: MlxBackend, stats: RewardStats, offset: int, forward: Any = None) -> None:
        self.backend, self.stats, self.offset, self.forward = backend, stats, offset, forward
        self.ga = backend.job.config.gradient_accumulation_steps

    def on_train_loss_report(self, info: dict[str, Any]) -> None:
        record = {new: float(info[old]) for old, new in _ENGINE_KEYS.items() if old in info}
        record.update(self.stats.take("train"))
        self._emit(self.offset + info["iteration"] // self.ga, record)

    def on_val_loss_report(self, info: dict[str, Any]) -> None:
        """The trainer evaluates before an iteration's update: the step is the count of updates made so far."""
        record = {"eval_loss": float(info["val_loss"])}
        record.update({f"eval_{k}": v for k, v in self.stats.take("eval").items()})
        self._emit(self.offset + (info["iteration"] - 1) // self.ga, record)

    def _emit(self, step: int, record: dict[str, float]) -> None:
        self.backend.log(step, record)
        if self.forward is not None:
            self.forward.on_train_loss_report({"iteration": step, **record})


class _Checkpoints:
    """Resumable checkpoints (``checkpoint-<step>/``) written between the trainer's iterations.

    The trainer saves the trainable weights every ``steps_per_save``
    iterations, numbering the file by its own iteration counter, which
    restarts at 1 on a resumed run.  After each such iteration this moves
    that file into ``checkpoint-<global step>/`` and adds what the trainer
    does not save: the optimizer state (moments, step, and with it the
    learning-rate schedule), the sampling RNG key and the step.
    """

    def __init__(self, job: Job, model: Any, optimizer: Any, adapter_dir: Path, offset: int,
                 adapter_config: dict[str, Any], main: bool) -> None:
        self.job, self.model, self.optimizer, self.adapter_dir = job, model, optimizer, adapter_dir
        self.offset, self.adapter_config, self.main = offset, adapter_config, main
        self.ga = job.config.gradient_accumulation_steps

    def after_iteration(self, iteration: int, *, force: bool = False) -> None:
        """Checkpoint after ``iteration`` when the trainer saved there; with ``force`` (a monitor stops the run)
        always."""
        if iteration % (self.job.config.save_every * self.ga) and not force:
            return
        written = self.adapter_dir / f"{iteration:07d}_adapters.safetensors"
        if not self.main:
            written.unlink(missing_ok=True)
            return
        import mlx.core as mx
        from mlx.utils import tree_flatten

        step = self.offset + iteration // self.ga
        folder = self.job.output_dir / f"checkpoint-{step}"
        folder.mkdir(parents=True, exist_ok=True)
        if written.exists():
            os.replace(written, folder / "adapters.safetensors")
        else:  # a forced checkpoint between the trainer's own saves
            weights = dict(tree_flatten(self.model.trainable_parameters()))
            mx.save_safetensors(str(folder / "adapters.safetensors"), weights)
        mx.save_safetensors(str(folder / "optimizer.safetensors"), dict(tree_flatten(self.optimizer.state)))
        (folder / "adapter_config.json").write_text(json.dumps(self.adapter_config, indent=2) + "\n")
        rng: Any = mx.random.state  # declared an object; a list whose first item is the key array
        key = [int(x) for x in rng[0].tolist()]
        state = {"global_step": step, "random_key": key, "max_steps": self.job.config.max_steps}
        # written last and atomically: its presence marks a whole checkpoint
        partial = folder / "trainer_state.json.tmp"
        partial.write_text(json.dumps(state, indent=2) + "\n")
        os.replace(partial, folder / "trainer_state.json")


def _iterate_batches(checkpoints: _Checkpoints, skip: int, stop_requested: Callable[[], Any],
                     agents: AgentRollouts | None = None) -> Callable[..., Iterator]:
    """The trainer's batch iterator, with checkpoints between training iterations and ``skip`` batches dropped.

    The trainer asks for iteration ``k + 1``'s batch only after iteration
    ``k`` has updated the model and saved, so that is where checkpoints go.
    Dropping the batches a resumed run already trained on (with numpy
    seeded as in the first run) continues the same data order.  The agent
    loop (``agents``) is told each batch it hands out, training or
    validation, to find the rows it generates for.
    """
    from mlx_lm_lora.trainer.grpo_trainer import iterate_grpo_batches

    def iterate(dataset: Any, batch_size: int, max_seq_length: int, train: bool = False) -> Iterator:
        batches = iterate_grpo_batches(dataset, batch_size, max_seq_length, train)
        if not train:
            for batch in batches:
                if agents is not None:
                    agents.batch_started(batch, train=False)
                yield batch
            return
        for _ in range(skip):
            next(batches)
        for done, batch in enumerate(batches):  # done: the iterations finished before this batch's
            if done:
                checkpoints.after_iteration(done)
                if stop_requested() is not None and done % checkpoints.ga == 0:
                    checkpoints.after_iteration(done, force=True)
                    raise _MonitorStop(done)
            if agents is not None:
                agents.batch_started(batch, train=True)
            yield batch

    return iterate


class _MonitorStop(Exception):
    """Raised into the trainer's loop by the batch iterator: a monitor with action ``stop`` fired (checkpoint saved)."""

    def __init__(self, iteration: int) -> None:
        super().__init__(f"stopped by a monitor after iteration {iteration}")
        self.iteration = iteration


def _encode(tokenizer: Any, prompt: str | list[dict[str, Any]]) -> list[int]:
    """Prompt tokens as TRL makes them: a message list through the chat template, a string as it is."""
    if isinstance(prompt, list):
        text = tokenizer.apply_chat_template(prompt, add_generation_prompt=True, tokenize=False)
        return list(tokenizer.encode(text, add_special_tokens=False))
    return list(tokenizer.encode(prompt))


def _examples(job: Job, tokenizer: Any, rows: list[Any], first_id: int,
              agents: AgentRollouts | None = None) -> list[tuple]:
    """mlx-lm-lora's 5-tuples: (prompt tokens, answer tokens, prompt, answer, row id).

    Every row carries its id as the fifth element (the trainer looks at row
    0 only to decide whether rows have one).  Answer tokens are not used by
    GRPO, so none are made.  A prompt over ``max_prompt_length`` tokens is
    an error naming its row, as on TRL (the trainer would cut it silently).
    With an environment (``agents``) the prompt is rendered with its tools,
    as its episodes start.
    """
    out: list[tuple] = []
    for i, (where, row) in enumerate(rows):
        ids = _encode(tokenizer, row["prompt"]) if agents is None else agents.prompt_ids(where, first_id + i)
        check_prompt_length(job, where, len(ids))
        prompt = row["prompt"] if isinstance(row["prompt"], str) else json.dumps(row["prompt"])
        out.append((ids, [], prompt, str(row.get("answer") or ""), first_id + i))
    return out


def _load_with_config(path: str) -> tuple[Any, Any, dict[str, Any]]:
    """``mlx_lm.load(path, return_config=True)``: model, tokenizer and config (its annotation allows two items)."""
    from mlx_lm import load

    return cast("tuple[Any, Any, dict[str, Any]]", load(path, return_config=True))


def _check_sizes(job: Job, world_size: int) -> None:
    need = job.config.batch_size * world_size
    for what, rows in (("data.train", job.train), ("data.val", job.val)):
        if rows and len(rows) < need:
            raise ConfigError(f"config key '{what}': {len(rows)} rows, but mlx-lm-lora needs at least batch_size "
                              f"x processes = {need} (it drops incomplete batches)")


def _same_start_everywhere(step: int, world_size: int) -> None:
    """Every ``mlx.launch`` process must resume from the same step, or they would wait on each other forever."""
    if world_size == 1:
        return
    import mlx.core as mx

    most = mx.distributed.all_max(mx.array([step, -step]), stream=mx.cpu)
    high, neg_low = cast("list[int]", most.tolist())  # a 1-D array's tolist() is a list
    if high != -neg_low:  # every process sees the disagreement, so all of them stop
        raise ConfigError(f"resume: the processes found checkpoints at different steps ({-neg_low} to {high}) in "
                          "output_dir; put output_dir on storage every machine sees (rank 0 writes checkpoints)")


AT_LOAD, IN_FOLDER = "quantized at load", "model folder"
"""Where a quantized base came from, as the quantization record says."""

DEFAULT_GROUP_SIZE = 64
"""mlx-lm's group size for affine quantization (``mlx_lm.convert -q``), used when the config names none."""


def base_quantization(config: RunConfig, model_config: dict[str, Any]) -> dict[str, Any] | None:
    """The quantization the base will have: the model folder's own, or the config's, applied at load.

    ``model_config`` is the folder's ``config.json``.  A folder already
    quantized (``quantization`` in its config, as ``mlx_lm.convert -q``
    writes) is trained as it is, so a config asking for other bits or
    another group size is an error rather than a second, lossy
    quantization; so is a quantized base without ``lora``, whose weights
    cannot be trained.  Returns the record the run files keep, or None for
    a full-precision base.
    """
    wanted, found = config.quantization, model_config.get("quantization")
    if found:
        have = {"engine": "mlx-lm", "bits": found.get("bits"), "group_size": found.get("group_size"),
                "mode": found.get("mode", "affine"), "source": IN_FOLDER}
        if wanted is not None and (wanted.bits != have["bits"]
                                   or wanted.mlx.group_size not in (None, have["group_size"])):
            raise ConfigError(f"config key 'quantization': the model {config.model!r} is already quantized "
                              f"(bits {have['bits']}, group_size {have['group_size']}), and a quantized base is not "
                              "quantized again; drop quantization (or match it), or name the unquantized weights")
        if config.lora is None:
            raise ConfigError(f"config key 'lora': the model {config.model!r} is quantized (bits {have['bits']}), so "
                              "its weights cannot be trained, only adapters on it: set lora (e.g. lora: {r: 16})")
        return have
    if wanted is None:
        return None
    return {"engine": "mlx-lm", "bits": wanted.bits, "group_size": wanted.mlx.group_size or DEFAULT_GROUP_SIZE,
            "mode": "affine", "source": AT_LOAD}


def quantize_base(model: Any, model_config: dict[str, Any], record: dict[str, Any] | None) -> dict[str, Any]:
    """Quantize ``model`` in place when ``record`` says so, with mlx-lm's ``quantize_model`` (as ``mlx_lm.convert -q``).

    The same call as ``mlx_lm.convert -q --q-bits B --q-group-size G``, so
    a folder converted that way holds the very base the adapters were
    trained on.  Returns the model's config, with mlx-lm's
    ``quantization`` entry when quantized here.
    """
    if record is None or record["source"] != AT_LOAD:
        return model_config
    from mlx_lm.utils import quantize_model

    _, quantized_config = quantize_model(model, model_config, record["group_size"], record["bits"])
    return quantized_config


def _check_resumed_base(checkpoint: Path, record: dict[str, Any] | None) -> None:
    """Adapters continue only on the base they were trained on: the checkpoint's quantization must be this run's."""
    saved = json.loads((checkpoint / "adapter_config.json").read_text()).get("base_quantization")
    if saved != record:
        raise ConfigError(f"config key 'quantization': {checkpoint.name} was trained on a base with quantization "
                          f"{saved} but this run's base has {record}; resume with the settings it was trained with")


def _add_lora(config: RunConfig, model: Any, quantization: dict[str, Any] | None = None) -> dict[str, Any]:
    """Put mlx-lm LoRA layers on the modules named by ``lora.targets``; return mlx-lm's ``adapter_config.json``.

    mlx-lm's LoRA layers wrap quantized linear layers as they wrap full
    ones (QLoRA); the base's quantization is kept in the adapter config as
    ``base_quantization`` (mlx-lm ignores the key), so the adapter says
    which base it belongs to.
    """
    from mlx_lm.tuner.utils import linear_to_lora_layers

    lora = config.lora
    if lora is None:
        return {"fine_tune_type": "full", "num_layers": len(model.layers)}
    in_layer = sorted({name for layer in model.layers for name, _ in layer.named_modules() if name})
    keys = [name for name in in_layer if name.rsplit(".", 1)[-1] in lora.targets]
    missing = set(lora.targets) - {name.rsplit(".", 1)[-1] for name in keys}
    if missing:
        raise ConfigError(f"config key 'lora.targets': no module named {sorted(missing)} in the model's layers; "
                          f"they have {sorted({name.rsplit('.', 1)[-1] for name in in_layer})}")
    params = {"rank": lora.r, "scale": lora.alpha / lora.r, "dropout": lora.dropout, "keys": keys}
    model.freeze()
    linear_to_lora_layers(model, len(model.layers), params)
    out = {"fine_tune_type": "lora", "num_layers": len(model.layers), "lora_parameters": params}
    return {**out, "base_quantization": quantization} if quantization else out


class MlxBackend(TrainingBackend):
    """mlx-lm-lora's ``train_grpo`` under the backend contract (:class:`~.contract.TrainingBackend`).

    ``validate`` has run already (``grpo-host train`` calls it before reading any data).
    """

    def reward_functions(self) -> tuple[list[Any], list[float]]:
        self.stats = RewardStats()
        record = RolloutRecord.for_run(self.job, self.resume_step)
        if record is not None:
            record.population = True  # mlx-lm-lora's advantage, not TRL's
        self.rewards = MlxRewardFuncs(self.job, len(self.job.train), self.stats, record, getattr(self, "agents", None))
        return self.rewards.funcs, self.rewards.weights

    def prepare(self) -> None:
        import mlx.core as mx
        import numpy as np

        from ...distributed import is_main_process

        job, config = self.job, self.job.config
        self.extra, world_size, self.main = _extra(config), _world_size(), is_main_process()
        _check_sizes(job, world_size)
        factories, choices = rollout_environments(job)  # names and parameters checked before any model is loaded
        if factories:
            _require_trl_parser()
        self.offset = self.resume_step or 0
        _same_start_everywhere(self.offset, world_size)
        ga = config.gradient_accumulation_steps

        from mlx.utils import tree_unflatten
        from mlx_lm import load
        from mlx_lm.tuner.callbacks import get_reporting_callbacks

        mx.random.seed(config.seed)
        np.random.seed(config.seed)  # the trainer shuffles batches with numpy's global generator
        self.model, self.tokenizer, model_config = _load_with_config(job.model_path)
        self.quantization = base_quantization(config, model_config)
        self.model_config = quantize_base(self.model, model_config, self.quantization)
        self.adapter_config = _add_lora(config, self.model, self.quantization)
        self.reference = None
        if config.beta != 0:
            if self.extra["reference_model_path"]:
                self.reference = load(self.extra["reference_model_path"])[0]
            else:  # the trained model's own starting point: the same base, quantized the same way
                self.reference, _, reference_config = _load_with_config(job.model_path)
                quantize_base(self.reference, reference_config, self.quantization)
            self.reference.freeze()
        self.agents = None
        if factories:
            from .mlx_agents import AgentRollouts

            self.agents = AgentRollouts(job, factories, choices, self.tokenizer,
                                        self.model_config.get("max_position_embeddings"))
        self.train_set = _examples(job, self.tokenizer, job.train, 0, self.agents)
        self.val_set = _examples(job, self.tokenizer, job.val, len(job.train), self.agents)
        longest = max(len(example[0]) for example in self.train_set + self.val_set)

        self.optimizer = _optimizer(config, self.extra["max_grad_norm"])
        if self.checkpoint is not None:
            if self.adapter_config["fine_tune_type"] == "lora":
                _check_resumed_base(self.checkpoint, self.quantization)
            self.model.load_weights(str(self.checkpoint / "adapters.safetensors"), strict=False)
            self.optimizer.init(self.model.trainable_parameters())
            state = cast("dict[str, Any]", mx.load(str(self.checkpoint / "optimizer.safetensors")))  # a dict of arrays
            self.optimizer.state = tree_unflatten(list(state.items()))
            hi, lo = json.loads((self.checkpoint / "trainer_state.json").read_text())["random_key"]
            mx.random.seed((hi << 32) | lo)

        # Other processes of an mlx.launch run save their (identical) copies somewhere private.
        self.adapter_dir = job.output_dir if self.main else Path(tempfile.mkdtemp(prefix="grpo-host-mlx-"))
        self.adapter_dir.mkdir(parents=True, exist_ok=True)
        funcs, weights = self.reward_functions()
        self.iters = max(config.max_steps - self.offset, 0) * ga
        self.args = grpo_args(config, adapter_file=str(self.adapter_dir / "adapters.safetensors"),
                              max_seq_length=longest, iters=self.iters, weights=weights, world_size=world_size,
                              extra=self.extra)
        self.checkpoints = _Checkpoints(job, self.model, self.optimizer, self.adapter_dir, self.offset,
                                        self.adapter_config, self.main)
        self.trackers = None
        if self.main and config.report_to:  # mlx-lm's callbacks for wandb and swanlab, ours for trackio
            from .trackio_reports import Trackers, TrackioReports

            engine = [t for t in config.report_to if t != "trackio"]
            self.trackers = Trackers([
                get_reporting_callbacks(",".join(engine), "grpo-host", str(job.output_dir),
                                        config.resolved())  # type: ignore[arg-type]  # declared str; wandb.init takes the dict
                if engine else None,
                TrackioReports("grpo-host", job.output_dir.name, config.resolved())
                if "trackio" in config.report_to else None])

    def train(self) -> int:
        from mlx_lm_lora.trainer.grpo_trainer import train_grpo

        ga, iters = self.job.config.gradient_accumulation_steps, self.iters
        try:
            if iters:
                with contextlib.ExitStack() as stack:
                    if self.agents is not None:
                        from .mlx_agents import swapped

                        stack.enter_context(swapped(self.agents))
                    train_grpo(
                        model=self.model,
                        ref_model=self.reference,
                        tokenizer=self.tokenizer,
                        optimizer=self.optimizer,
                        train_dataset=self.train_set,
                        val_dataset=self.val_set or None,
                        reward_funcs=self.rewards.funcs,
                        args=self.args,
                        iterate_batches=_iterate_batches(self.checkpoints, self.offset * ga, self.stop_requested,
                                                         self.agents),
                        training_callback=cast("TrainingCallback",
                                               _Reports(self, self.stats, self.offset, self.trackers)),
                        end_answer_token=self.extra["end_answer_token"],
                    )
                self.checkpoints.after_iteration(iters)  # the trainer's last iteration has no next batch to ask for
        except _MonitorStop as stop:  # the checkpoint is written; the summary says which alert stopped it
            iters = stop.iteration
        return self.offset + iters // ga

    def save(self) -> None:
        if self.main:
            _save_outputs(self.job, self.model, self.tokenizer, self.model_config, self.adapter_config)

    def finish(self, summary: Summary) -> Summary:
        summary.quantization = self.quantization
        return summary

    def close(self) -> None:
        trackers = getattr(self, "trackers", None)  # None too when prepare stopped before making them
        if trackers is not None:
            trackers.finish()
        adapter_dir = getattr(self, "adapter_dir", None)
        if adapter_dir is not None and not self.main:
            shutil.rmtree(adapter_dir, ignore_errors=True)


def run(job: Job) -> Summary:
    """Train ``job`` with mlx-lm-lora's ``train_grpo``; save the adapter (or model) and tokenizer in ``output_dir``."""
    return MlxBackend(job).run()


def _save_outputs(job: Job, model: Any, tokenizer: Any, model_config: dict[str, Any],
                  adapter_config: dict[str, Any]) -> None:
    """LoRA: mlx-lm's adapter folder (``adapters.safetensors``, ``adapter_config.json``); full: a model folder.

    Both get the tokenizer, so ``mlx_lm.generate --model BASE --adapter-path
    OUT`` (LoRA) or ``--model OUT`` (full) works.
    """
    from mlx.utils import tree_flatten

    out = job.output_dir
    if adapter_config["fine_tune_type"] == "full":
        from mlx_lm.utils import save

        save(out, job.model_path, model, tokenizer, model_config, donate_model=False)
        (out / "adapters.safetensors").unlink(missing_ok=True)  # the trainer's copy of the same weights
    else:
        import mlx.core as mx

        if not (out / "adapters.safetensors").exists():  # nothing trained (resumed at max_steps)
            mx.save_safetensors(str(out / "adapters.safetensors"), dict(tree_flatten(model.trainable_parameters())))
        (out / "adapter_config.json").write_text(json.dumps(adapter_config, indent=2) + "\n")
        tokenizer.save_pretrained(str(out))
