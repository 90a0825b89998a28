"""The TRL backend: ``trl.GRPOTrainer`` with the run configuration passed explicitly, and peft for LoRA.

No GRPO code lives here: this module only translates.  The run config
becomes a ``GRPOConfig`` in which every value we own is set (TRL's defaults
differ from ours); ``trl:`` in the config adds any other ``GRPOConfig``
option (vLLM generation, bf16, DeepSpeed...), but may not override a value
the run config owns.  The ensemble becomes one named reward function per
member with the ensemble weights as ``reward_weights``, so TRL logs
``rewards/<name>/mean``; our coverage/errors/timeouts/seconds metrics reach
TRL's logs through the ``log_metric`` TRL hands to reward functions.

Multi-GPU runs come from ``accelerate launch`` of the same command; TRL and
accelerate do the rest.

A ``quantization`` block loads the base through bitsandbytes (QLoRA): the
backend builds transformers' ``BitsAndBytesConfig``, loads the model the way
``GRPOTrainer`` loads a path, and prepares it with peft's
``prepare_model_for_kbit_training``, which ``GRPOTrainer`` itself does not
call; TRL then adds the LoRA adapters.  Where bitsandbytes cannot run,
:func:`validate` refuses the config before any data is read: a run never
falls back to full precision.
"""

from __future__ import annotations

import contextlib
import dataclasses
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ...errors import ConfigError, DuplicateNameError, UnknownNameError
from ...runs.record import RolloutRecord
from ..config import RunConfig
from .contract import TrainingBackend
from .reward_funcs import ROW_ID, EnsembleRewardFuncs
from .steps import check_prompt_length, rollout_environments

if TYPE_CHECKING:
    from ..train import Job, Summary

__all__ = ["TrlBackend", "bitsandbytes_config", "bitsandbytes_problem", "bitsandbytes_refusal", "grpo_config_kwargs",
           "quantization_record", "run", "validate"]

_SCHEDULERS = {"constant": "constant_with_warmup", "linear": "linear", "cosine": "cosine"}


def _owned(config: RunConfig, weights: list[float]) -> dict[str, Any]:
    """The GRPOConfig values that come from the run config, one for each of its fields."""
    c = config
    per_step = c.batch_size * c.group_size  # TRL counts completions, the run config counts prompts
    evaluating = c.data.val is not None
    return {
        "output_dir": c.output_dir,
        "seed": c.seed,
        "learning_rate": c.learning_rate,
        "lr_scheduler_type": _SCHEDULERS[c.lr_scheduler],
        "warmup_steps": c.warmup_steps,
        "max_steps": c.max_steps,
        "per_device_train_batch_size": per_step,
        "per_device_eval_batch_size": per_step,
        "gradient_accumulation_steps": c.gradient_accumulation_steps,
        "num_generations": c.group_size,
        "beta": c.beta,
        "epsilon": c.epsilon,
        "epsilon_high": c.epsilon_high,
        "loss_type": c.loss_type,
        "importance_sampling_level": c.importance_sampling_level,
        "temperature": c.temperature,
        "top_p": c.top_p,
        "top_k": c.top_k,
        "min_p": c.min_p or None,  # None: no min-p filter at all (0.0 would add a no-op warper)
        "max_completion_length": c.max_completion_length,
        "reward_weights": list(weights),
        "gradient_checkpointing": c.gradient_checkpointing,
        "logging_steps": c.log_every,
        "save_strategy": "steps",
        "save_steps": c.save_every,
        "eval_strategy": "steps" if evaluating else "no",
        "eval_steps": c.eval_every if evaluating else None,
        "report_to": c.report_to or "none",
        "max_tool_calling_iterations": c.max_tool_calls,
    }


def _host_defaults() -> dict[str, Any]:
    """Choices of this backend that ``trl:`` may override: precision follows the hardware; we print progress."""
    import torch

    bf16 = torch.cuda.is_available() and torch.cuda.is_bf16_supported()
    return {"bf16": bf16, "fp16": False, "disable_tqdm": True, "logging_first_step": True}


def grpo_config_kwargs(config: RunConfig, weights: list[float]) -> dict[str, Any]:
    """Every keyword for ``trl.GRPOConfig``; a bad or conflicting ``trl.<key>`` is a :class:`ConfigError`."""
    from trl import GRPOConfig

    owned = _owned(config, weights)
    known = {f.name for f in dataclasses.fields(GRPOConfig)}
    from_run_config = {v: k for k, v in _RUN_KEYS.items()}
    for key in config.trl:
        if key not in known:
            raise ConfigError(f"config key 'trl.{key}': not a trl.GRPOConfig option")
        if key in owned or key in ("gradient_checkpointing", "activation_checkpointing"):
            raise ConfigError(f"config key 'trl.{key}': set by the run config itself; "
                              f"use '{from_run_config.get(key, key)}' at the top level instead")
    init = config.trl.get("model_init_kwargs")
    for key in _QUANTIZING_KEYS & set(init if isinstance(init, dict) else ()):
        raise ConfigError(f"config key 'trl.model_init_kwargs.{key}': a quantized base is set by the run config's "
                          "'quantization' block (which also prepares it for k-bit training); use that instead")
    if "activation_checkpointing" in known:  # transformers 5 renamed it; the old name warns
        owned["activation_checkpointing"] = owned.pop("gradient_checkpointing")
    return {**_host_defaults(), **config.trl, **owned}


_QUANTIZING_KEYS = {"quantization_config", "load_in_4bit", "load_in_8bit"}
"""``from_pretrained`` keywords that quantize: only the ``quantization`` block may (see grpo_config_kwargs)."""

_RUN_KEYS = {  # run-config key -> GRPOConfig key, where the names differ (for error messages)
    "group_size": "num_generations",
    "batch_size": "per_device_train_batch_size",
    "lr_scheduler": "lr_scheduler_type",
    "save_every": "save_steps",
    "eval_every": "eval_steps",
    "log_every": "logging_steps",
}


def bitsandbytes_refusal(installed: str | None, minimum: str, supported: set[str], available: set[str]) -> str | None:
    """Why bitsandbytes cannot quantize on this machine, by transformers' own rules; None when it can.

    transformers loads a bitsandbytes model only with bitsandbytes at
    ``minimum`` or newer whose ``supported_torch_devices`` include a device
    torch sees here (CUDA, or the CPU for a bitsandbytes with a CPU
    backend); the same rules, checked before any data is read, turn a
    load-time failure into a config error.
    """
    from packaging.version import Version

    if installed is None:
        return (f"needs bitsandbytes, which is not installed: pip install 'bitsandbytes>={minimum}' "
                "(with a CUDA GPU, or a bitsandbytes build with a CPU backend)")
    if Version(installed) < Version(minimum):
        return f"bitsandbytes {installed} is installed, and transformers needs {minimum} or newer"
    if not supported & available:
        cuda = "" if "cuda" in available else "; no CUDA GPU is visible"
        return (f"bitsandbytes {installed} runs on {', '.join(sorted(supported)) or 'no device'}, and this machine "
                f"has {', '.join(sorted(available))}{cuda}")
    return None


def bitsandbytes_problem() -> str | None:
    """:func:`bitsandbytes_refusal` for this machine: the installed bitsandbytes and the devices torch sees."""
    from importlib.metadata import PackageNotFoundError, version

    from transformers.utils import get_available_devices
    from transformers.utils.import_utils import BITSANDBYTES_MIN_VERSION

    try:
        installed = version("bitsandbytes")
    except PackageNotFoundError:
        return bitsandbytes_refusal(None, BITSANDBYTES_MIN_VERSION, set(), set(get_available_devices()))
    try:
        import bitsandbytes
    except Exception as exc:  # a build without a native library for this machine can fail to import at all
        return f"bitsandbytes {installed} is installed but cannot be imported here ({type(exc).__name__}: {exc})"
    supported = set(getattr(bitsandbytes, "supported_torch_devices", ()))
    return bitsandbytes_refusal(installed, BITSANDBYTES_MIN_VERSION, supported, set(get_available_devices()))


def validate(config: RunConfig) -> None:
    """Refuse, before any data is read or model loaded, a quantized base that bitsandbytes cannot load here.

    Without this, transformers would stop the run at load time, after the
    data check; and nothing may train the base in full precision instead.
    """
    if config.quantization is None:
        return
    problem = bitsandbytes_problem()
    if problem is not None:
        raise ConfigError(f"config key 'quantization': a {config.quantization.bits}-bit base on the trl backend "
                          f"{problem}; the run does not fall back to full precision")


def compute_dtype(name: str) -> str:
    """The 4-bit compute dtype ``auto`` stands for here: bfloat16 where the GPU has it, else float16; float32 on CPU."""
    if name != "auto":
        return name
    import torch

    if not torch.cuda.is_available():
        return "float32"
    return "bfloat16" if torch.cuda.is_bf16_supported() else "float16"


def bitsandbytes_config(config: RunConfig) -> Any:
    """transformers' ``BitsAndBytesConfig`` for ``config.quantization`` (4-bit: QLoRA's NF4 and double quantization)."""
    import torch
    from transformers import BitsAndBytesConfig

    q = config.quantization
    if q is None:
        raise ValueError("bitsandbytes_config: the run config has no quantization section")
    if q.bits == 8:
        return BitsAndBytesConfig(load_in_8bit=True)
    return BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type=q.trl.quant_type,
                              bnb_4bit_use_double_quant=q.trl.double_quant,
                              bnb_4bit_compute_dtype=getattr(torch, compute_dtype(q.trl.compute_dtype)))


def quantization_record(bnb: Any, version: str) -> dict[str, Any]:
    """What ``summary.json`` keeps of a ``BitsAndBytesConfig``: the engine, its ``version`` and the resolved options."""
    record: dict[str, Any] = {"engine": "bitsandbytes", "version": version, "bits": 4 if bnb.load_in_4bit else 8}
    if bnb.load_in_4bit:
        record.update(quant_type=bnb.bnb_4bit_quant_type, double_quant=bnb.bnb_4bit_use_double_quant,
                      compute_dtype=str(bnb.bnb_4bit_compute_dtype).removeprefix("torch."))
    return record


def _quantized_model(job: Job, args: Any, bnb: Any) -> Any:
    """The base loaded as ``GRPOTrainer`` loads a path, quantized by bitsandbytes, then prepared for k-bit training.

    ``GRPOTrainer`` would load it from ``model_init_kwargs`` itself, but
    never calls peft's ``prepare_model_for_kbit_training`` (TRL's ORPO and
    CPO trainers do), which must run before the adapters are added: it
    freezes the base and casts its unquantized parameters (norms,
    embeddings) to float32.  Gradient checkpointing is left to TRL
    (``use_gradient_checkpointing=False`` here), so it is set up once.
    """
    from peft import prepare_model_for_kbit_training
    from trl.trainer.utils import create_model_from_path

    kwargs = dict(job.config.trl.get("model_init_kwargs") or {})
    kwargs["quantization_config"] = bnb
    if args.distributed_state.distributed_type in ("MULTI_GPU", "DEEPSPEED"):  # as GRPOTrainer: "auto" fails there
        kwargs["device_map"] = None
    kwargs.setdefault("trust_remote_code", args.trust_remote_code)
    model = create_model_from_path(job.model_path, **kwargs)
    return prepare_model_for_kbit_training(model, use_gradient_checkpointing=False)


def _check_prompt_lengths(job: Job, tokenizer: Any) -> None:
    """Every prompt's tokens as TRL will make them, against ``max_prompt_length``."""
    if job.config.max_prompt_length is None:
        return
    for where, row in job.rows:
        prompt = row["prompt"]
        if isinstance(prompt, list):
            prompt = tokenizer.apply_chat_template(prompt, tokenize=False, add_generation_prompt=True)
        check_prompt_length(job, where, len(tokenizer(prompt, add_special_tokens=False)["input_ids"]))


def _peft_config(config: RunConfig) -> Any:
    if config.lora is None:
        return None
    from peft import LoraConfig

    lora = config.lora
    # peft annotates lora_alpha as int but only divides by it (scaling = lora_alpha / r): a float alpha is right.
    return LoraConfig(r=lora.r, lora_alpha=lora.alpha,  # type: ignore[arg-type]
                      lora_dropout=lora.dropout, target_modules=list(lora.targets), task_type="CAUSAL_LM")


def _metrics_callback(backend: TrlBackend) -> Any:
    from transformers import TrainerCallback

    class Metrics(TrainerCallback):
        """Feeds every TRL log record (reward means, our reward metrics, loss, KL) to the backend's log, and ends
        the run (after a checkpoint) when a monitor with action ``stop`` fired."""

        def on_log(self, args, state, control, logs=None, **kwargs):
            if logs:
                backend.log(state.global_step, logs)

        def on_step_end(self, args, state, control, **kwargs):
            if backend.stop_requested() is not None:
                control.should_save = True
                control.should_training_stop = True

    return Metrics()


class TrlBackend(TrainingBackend):
    """``trl.GRPOTrainer`` under the backend contract (:class:`~.contract.TrainingBackend`)."""

    def reward_functions(self) -> tuple[list[Any], list[float]]:
        job = self.job
        funcs = EnsembleRewardFuncs(job.ensemble, job.rows, monitors=job.monitors,
                                    max_length=job.config.max_completion_length,
                                    record=RolloutRecord.for_run(job, self.resume_step),
                                    group_size=job.config.group_size)
        return list(funcs.funcs), funcs.weights

    def prepare(self) -> None:
        job, config = self.job, self.job.config
        factories, choices = rollout_environments(job)  # names and parameters checked before any model is loaded
        per_row = any(c is not None for c in choices)
        default = config.environment.name if config.environment is not None else None
        funcs, weights = self.reward_functions()
        args_kwargs = grpo_config_kwargs(config, weights)
        if config.quantization is not None:
            args_kwargs.pop("model_init_kwargs", None)  # used by the backend's own load (TRL would warn they go unused)

        from datasets import Dataset
        from transformers import AutoTokenizer, PrinterCallback
        from trl import GRPOConfig, GRPOTrainer

        try:
            args = GRPOConfig(**args_kwargs)
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"trl.GRPOConfig rejected the settings: {exc}") from None
        tokenizer = AutoTokenizer.from_pretrained(job.model_path)
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        _check_prompt_lengths(job, tokenizer)
        self.bnb = bitsandbytes_config(config) if config.quantization is not None else None


        def dataset(rows: list[Any], offset: int) -> Dataset:
            columns = {"prompt": [r.data["prompt"] for r in rows], ROW_ID: list(range(offset, offset + len(rows)))}
            if per_row:  # TRL picks each rollout's environment by this field
                columns["environment"] = [c or default for c in choices[offset:offset + len(rows)]]
            return Dataset.from_dict(columns)

        environments: dict[str, Any] = {}
        if factories:
            environments["environment_factory"] = (
                {k: v for k, v in factories.items() if k is not None} if per_row else factories[None])
        if config.rollout is not None:
            environments["rollout_func"] = _rollout(job, config.rollout).checked()
        try:
            self.trainer = GRPOTrainer(
                model=job.model_path if self.bnb is None else _quantized_model(job, args, self.bnb),
                reward_funcs=funcs,
                args=args,
                train_dataset=dataset(job.train, 0),
                eval_dataset=dataset(job.val, len(job.train)) if job.val else None,
                processing_class=tokenizer,
                peft_config=_peft_config(config),
                callbacks=[_metrics_callback(self)],
                **environments,
            )
        except ValueError as exc:  # TRL's checks of tools against the model's chat template
            if not factories:
                raise
            raise ConfigError(f"trl.GRPOTrainer cannot run the environment with model {config.model!r}: {exc}"
                              ) from None
        self.trainer.remove_callback(PrinterCallback)  # our MetricsLog prints one compact line per log step instead

    def train(self) -> int:
        with _library_noise_filtered():
            self.trainer.train(resume_from_checkpoint=str(self.checkpoint) if self.checkpoint is not None else None)
        return self.trainer.state.global_step

    def save(self) -> None:
        with _library_noise_filtered():
            self.trainer.save_model(str(self.job.output_dir))  # weights or LoRA adapter, plus the tokenizer

    def finish(self, summary: Summary) -> Summary:
        if self.bnb is not None:
            from importlib.metadata import version

            summary.quantization = quantization_record(self.bnb, version("bitsandbytes"))
        return summary


LIBRARY_NOISE = (
    (UserWarning, r"'pin_memory' argument is set as true but no accelerator is found"),
    (FutureWarning, r"`is_gradient_checkpointing` is deprecated"),
)
"""Warnings the libraries under TRL raise on every CPU run (torch's DataLoader: no accelerator to pin memory for;
transformers' own deprecated attribute, read by its own save): nothing a user can act on, filtered while the backend
trains and saves.  Only these messages, only then: every other warning, and every log record, still shows."""


@contextlib.contextmanager
def _library_noise_filtered() -> Iterator[None]:
    with warnings.catch_warnings():
        for category, message in LIBRARY_NOISE:
            warnings.filterwarnings("ignore", message=message, category=category)
        yield


def _rollout(job: Job, name: str) -> Any:
    """The run's rollout function ``name`` (its ``rollout`` key) from the registry; an unknown name is a
    :class:`ConfigError` naming the key."""
    try:
        return job.plugins.registry.rollout(name)
    except (UnknownNameError, DuplicateNameError) as exc:
        raise ConfigError(f"config key 'rollout': {exc}") from None


def run(job: Job) -> Summary:
    """Train ``job`` with ``trl.GRPOTrainer``; save the model (or adapter) and tokenizer into ``output_dir``."""
    return TrlBackend(job).run()
