"""The run configuration every training backend reads: one pydantic model, loaded from YAML.

TRL and mlx-lm-lora disagree on most defaults (temperature, top_p, top_k,
beta, epsilon, loss type, learning-rate schedule), so a run that relied on
an engine's defaults would train differently depending on the backend.
Every default therefore lives here, once, and each backend passes every value
explicitly to its engine.  Unknown keys and bad values are errors that name
the key (and whether it came from the file or from ``--set``).

Relative paths (data files, plugin files, ``output_dir``) are relative to the
working directory, as in TRL's and mlx-lm's own YAML configs.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from types import UnionType
from typing import Any, Literal, Union, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

from ..errors import ConfigError, SpecError
from ..scoring.spec import SpecItem, parse_spec

__all__ = [
    "BitsAndBytesSettings", "DataSettings", "LoraSettings", "MlxQuantSettings", "QuantizationSettings", "RunConfig",
    "apply_overrides", "load_config",
]


class _Strict(BaseModel):
    """Every section: unknown keys refused; a number must be a finite number, never ``.inf``, ``.nan`` or a
    boolean (YAML's ``true`` would otherwise train for ``max_steps: 1`` and ``.inf`` save non-finite weights)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _no_boolean_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        if isinstance(value, bool) and info.field_name and _numeric(cls.model_fields[info.field_name].annotation):
            raise ValueError(f"expected a number, got the boolean {str(value).lower()}")
        return value


def _numeric(annotation: Any) -> bool:
    """Whether a field holds an int or float (optionally None), and not a bool."""
    args = getattr(annotation, "__args__", None) if get_origin(annotation) in (Union, UnionType) else (annotation,)
    kinds = {a for a in args or () if a is not type(None)}
    return bool(kinds) and kinds <= {int, float}


class DataSettings(_Strict):
    """Where the prompts come from (see ``grpo-host data check`` for the accepted shapes and formats)."""

    train: str = Field(description="training rows: JSONL, JSON, CSV, Parquet or a datasets folder")
    val: str | None = Field(None, description="validation rows, scored every eval_every steps; None: no evaluation")


class LoraSettings(_Strict):
    """LoRA adapters; leaving ``lora`` out of the config fine-tunes every weight."""

    r: int = Field(16, ge=1, description="adapter rank")
    alpha: float = Field(32.0, gt=0, description="scaling numerator (the update is scaled by alpha / r)")
    dropout: float = Field(0.05, ge=0, lt=1, description="dropout on the adapter input")
    targets: list[str] = Field(
        default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
        min_length=1,
        description="names of the linear layers that get adapters (last part of the module name)",
    )


class BitsAndBytesSettings(_Strict):
    """What the TRL backend passes to transformers' ``BitsAndBytesConfig`` for a 4-bit base (8-bit has no options).

    The defaults are QLoRA's: NormalFloat-4 weights whose quantization
    constants are quantized too.
    """

    quant_type: Literal["nf4", "fp4"] = Field(
        default="nf4", description="4-bit data type (bnb_4bit_quant_type): nf4 or fp4"
    )
    double_quant: bool = Field(
        default=True, description="4-bit: quantize the quantization constants too (bnb_4bit_use_double_quant)"
    )
    compute_dtype: Literal["auto", "bfloat16", "float16", "float32"] = Field(
        default="auto", description="4-bit: dtype of the matmuls (bnb_4bit_compute_dtype); auto: bfloat16 where the "
                                    "GPU has it, else float16 (float32 without CUDA)"
    )


class MlxQuantSettings(_Strict):
    """What the MLX backend passes to mlx-lm's affine quantization (``mlx_lm.utils.quantize_model``)."""

    group_size: Literal[32, 64, 128] | None = Field(
        default=None, description="weights sharing one scale and bias; None: 64 (mlx-lm's default) when quantizing at "
                                  "load, an already quantized model keeps its own"
    )


class QuantizationSettings(_Strict):
    """A quantized, frozen base under LoRA adapters (QLoRA); the same block drives both backends.

    ``bits`` is common; ``trl`` and ``mlx`` hold the options only one engine
    has, and the other backend ignores them, so one file runs on either
    backend (as with the top-level ``trl:`` and ``mlx:`` sections).
    """

    bits: Literal[4, 8] = Field(description="bits per base weight: 4 or 8")
    trl: BitsAndBytesSettings = Field(default_factory=BitsAndBytesSettings,
                                      description="TRL backend: bitsandbytes options for 4-bit")
    mlx: MlxQuantSettings = Field(default_factory=MlxQuantSettings,
                                  description="MLX backend: mlx-lm quantization options")

    @field_validator("trl")
    @classmethod
    def _four_bit_options(cls, value: BitsAndBytesSettings, info: ValidationInfo) -> BitsAndBytesSettings:
        if info.data.get("bits") == 8:  # bitsandbytes' 8-bit has none of these options: one set would do nothing
            defaults = BitsAndBytesSettings()
            changed = [k for k in BitsAndBytesSettings.model_fields if getattr(value, k) != getattr(defaults, k)]
            if changed:
                raise ValueError(f"{changed[0]} applies to 4-bit bases only, and bits is 8")
        return value


class EnvironmentSettings(_Strict):
    """The tool-calling environment of a run (``environment: NAME`` is short for ``{name: NAME}``)."""

    name: str = Field(description="a registered environment (grpo-host environments list)")
    params: dict[str, Any] = Field(default_factory=dict, description="validated against the environment's params")


class RunConfig(_Strict):
    """Everything one GRPO run needs, backend-neutral.

    ``batch_size`` counts prompts per device and micro-step; each prompt gets
    ``group_size`` completions, so one micro-step scores
    ``batch_size * group_size`` completions.
    """

    model: str = Field(description="hub id, local folder, or builtin:tiny (built locally, no download)")
    backend: str = Field("trl", description="training backend: trl or mlx (or one a pack registers)")
    data: DataSettings = Field(description="train (and optional val) dataset paths; a string is the train path")
    rewards: list[SpecItem] = Field(description='reward spec: "accuracy:2, r1_soft_format:0.5" or a list of items')
    strict: bool = Field(False, description="a completion that no weighted reward scored stops the run")
    audit: Literal["warn", "stop", "off"] = Field(
        "warn", description="before the model loads, try to game the rewards on a sample of the train rows "
                            "(grpo-host audit, docs/audit.md): warn prints what paid, stop ends the run (exit 1)")
    monitors: list[dict[str, Any] | str] | None = Field(
        None, description="run monitors: names or {name, params, action: log|warn|stop}; None: every installed "
                          "monitor with action warn; []: none (see grpo-host monitors list)")
    workers: int | None = Field(None, ge=1, description="worker processes for process-executor rewards (None: cores)")
    pool: Literal["local", "ray"] = Field("local", description="where process-executor rewards run: local worker "
                                                               "processes, or actors on a Ray cluster (extra ray)")
    plugins: list[str] = Field(
        default_factory=list,
        description="extra reward modules to load besides installed packs: a .py file path or a dotted module name",
    )

    group_size: int = Field(8, ge=2, description="completions sampled per prompt")
    batch_size: int = Field(4, ge=1, description="prompts per device per micro-step")
    gradient_accumulation_steps: int = Field(1, ge=1, description="micro-steps per optimizer step")
    learning_rate: float = Field(1e-6, gt=0, description="peak learning rate (AdamW)")
    lr_scheduler: Literal["constant", "linear", "cosine"] = Field("constant", description="learning-rate schedule")
    warmup_steps: int = Field(0, ge=0, description="linear warm-up steps")
    max_steps: int = Field(500, ge=1, description="optimizer steps to train for")

    beta: float = Field(0.0, ge=0, description="KL coefficient; 0 loads no reference model")
    epsilon: float = Field(0.2, gt=0, description="lower clipping width of the importance ratio")
    epsilon_high: float | None = Field(None, gt=0, description="upper clipping width; None: equal to epsilon")
    loss_type: Literal["grpo", "bnpo", "dr_grpo", "dapo"] = Field(
        "bnpo", description="loss normalisation; bnpo (per-token over the local batch) is the default both engines have"
    )
    importance_sampling_level: Literal["token", "sequence"] = Field(
        "token", description="importance ratio per token, or one per sequence (GSPO)"
    )

    temperature: float = Field(1.0, gt=0, description="sampling temperature")
    top_p: float = Field(1.0, gt=0, le=1, description="nucleus sampling mass; 1 disables")
    top_k: int = Field(0, ge=0, description="sample among the k most likely tokens; 0 disables")
    min_p: float = Field(0.0, ge=0, le=1, description="drop tokens below min_p times the top probability; 0 disables")
    max_prompt_length: int | None = Field(None, ge=1, description="longest prompt in tokens; longer ones are an error")
    max_completion_length: int = Field(256, ge=1, description="tokens generated per completion at most")

    lora: LoraSettings | None = Field(None, description="LoRA settings; absent: full fine-tune")
    quantization: QuantizationSettings | None = Field(
        None, description="load the base quantized (QLoRA; needs lora): {bits: 4 or 8, trl: {...}, mlx: {...}}"
    )
    environment: EnvironmentSettings | None = Field(
        None, description="the tool-calling environment every rollout runs in (rows may name their own in an "
        "'environment' column); None: single-turn completions")
    max_tool_calls: int | None = Field(None, ge=0, description="tool-calling rounds per rollout at most (TRL's "
                                       "max_tool_calling_iterations); None: until max_completion_length")
    turn_reward: str = Field("episode", description="what a per-turn reward (and an environment's per-turn reward) "
                             "trains on, since both engines take one reward per completion: episode (its episode "
                             "value), sum (of its turn values) or discounted:GAMMA (sum of GAMMA**t times turn t's)")
    rollout: str | None = Field(None, description="a pack's rollout function (grpo-host environments list shows the "
                                "packs; TRL's rollout_func) that generates the completions instead of the engine")
    gradient_checkpointing: bool = Field(False, description="recompute activations to save memory")
    seed: int = Field(42, description="seed for sampling, shuffling and initialisation")
    save_every: int = Field(100, ge=1, description="steps between checkpoints")
    eval_every: int | None = Field(None, ge=1, description="steps between evaluations on data.val (default save_every)")
    eval_k: int | None = Field(None, ge=1, description="at the end of the run, grpo-host eval every checkpoint and "
                               "the saved model with this many samples per prompt (output_dir/eval/step-N/, "
                               "model/); None: none")
    eval_data: str | None = Field(None, description="the prompts eval_k evaluates on (default: data.val, else "
                                  "data.train)")
    log_every: int = Field(1, ge=1, description="steps between logged metrics")
    output_dir: str = Field("runs/grpo-host", description="where checkpoints, the model and run records go")
    resume: bool = Field(False, description="continue from the last checkpoint in output_dir")
    overwrite_output_dir: bool = Field(
        False, description="write into an output_dir that already holds files but is not a grpo-host run")
    report_to: list[str] = Field(default_factory=list, description="trackers (wandb, tensorboard, ...); [] for none")
    record: Literal["all", "sample", "none"] = Field(
        "all", description="scored rollouts kept in output_dir/rollouts/ (Parquet, for grpo-host report and "
                           "rescore): all, sample (record_sample per scored batch, whole groups) or none")
    record_sample: int = Field(16, ge=1, description="rollouts kept per scored batch under record: sample")

    trl: dict[str, Any] = Field(
        default_factory=dict, description="extra trl.GRPOConfig options, e.g. use_vllm, vllm_mode, bf16"
    )
    mlx: dict[str, Any] = Field(default_factory=dict, description="extra options for the mlx backend")

    @field_validator("data", mode="before")
    @classmethod
    def _data_shorthand(cls, value: Any) -> Any:
        return {"train": value} if isinstance(value, str | Path) else value

    @field_validator("turn_reward")
    @classmethod
    def _turn_rule(cls, value: str) -> str:
        from ..scoring.turns import TurnRule

        return str(TurnRule.parse(value))

    @field_validator("audit", mode="before")
    @classmethod
    def _audit_off(cls, value: Any) -> Any:
        return "off" if value is False else value  # YAML 1.1 reads a bare `audit: off` as false

    @field_validator("environment", mode="before")
    @classmethod
    def _environment_shorthand(cls, value: Any) -> Any:
        return {"name": value} if isinstance(value, str) else value

    @field_validator("rewards", mode="before")
    @classmethod
    def _parse_rewards(cls, value: Any) -> Any:
        if isinstance(value, list) and value and all(isinstance(v, SpecItem) for v in value):
            return value
        try:
            return parse_spec(value)
        except SpecError as exc:
            raise ValueError(str(exc)) from None
        except TypeError:
            raise ValueError("expected a spec string or a list of {name, weight, params} items") from None

    @field_validator("quantization")
    @classmethod
    def _quantized_needs_lora(cls, value: QuantizationSettings | None, info: ValidationInfo) -> Any:
        if value is not None and "lora" in info.data and info.data["lora"] is None:  # (absent: lora itself failed)
            raise ValueError("a quantized base cannot be trained itself, only adapters on it: "
                             "set lora too (e.g. lora: {r: 16}), or drop quantization")
        return value

    @field_validator("trl", "mlx")
    @classmethod
    def _finite_engine_options(cls, value: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        """The engine options pass through unchecked by type, but a non-finite number is never a setting."""
        def walk(node: Any, path: str) -> None:
            if isinstance(node, float) and not math.isfinite(node):
                raise ValueError(f"{path} is {node}: a setting must be a finite number")
            children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
            for key, child in children:
                walk(child, f"{path}.{key}")

        walk(value, str(info.field_name))
        return value

    @field_validator("report_to", mode="before")
    @classmethod
    def _report_to_list(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [] if value in ("none", "") else [value]
        return value

    @model_validator(mode="after")
    def _rollout_alone(self) -> RunConfig:
        if self.rollout is not None and self.environment is not None:
            raise ValueError("rollout and environment both set: a rollout function generates the completions itself, "
                             "tools included; choose one")
        if self.eval_k is not None and self.rollout is not None:
            raise ValueError("eval_k is set, but the run generates through a rollout function (TRL's rollout_func, "
                             "handed TRL's trainer), which grpo-host eval cannot call: drop eval_k")
        return self

    @model_validator(mode="after")
    def _resolve(self) -> RunConfig:
        if self.epsilon_high is None:
            object.__setattr__(self, "epsilon_high", self.epsilon)
        if self.data.val is None and self.eval_every is not None:
            raise ValueError("eval_every is set but data.val is not: name a validation set or drop eval_every")
        if self.eval_data is not None and self.eval_k is None:
            raise ValueError("eval_data is set but eval_k is not: set eval_k (samples per prompt) or drop eval_data")
        if self.data.val is not None and self.eval_every is None:
            object.__setattr__(self, "eval_every", self.save_every)
        return self

    def resolved(self) -> dict[str, Any]:
        """Every value, defaults included, as plain YAML-ready data (what ``output_dir/config.yaml`` holds)."""
        return self.model_dump(mode="json")


def _key(loc: Sequence[Any]) -> str:
    parts = [str(p) for p in loc if not (isinstance(p, str) and p.startswith("function-"))]
    return ".".join(parts) or "(top level)"


def _fields_at(loc: Sequence[Any]) -> list[str]:
    """Known keys of the model that holds ``loc`` (for did-you-mean hints)."""
    model: Any = RunConfig
    for part in loc[:-1]:
        field = getattr(model, "model_fields", {}).get(part)
        if field is None:
            return []
        ann = field.annotation
        model = next((a for a in getattr(ann, "__args__", (ann,)) if hasattr(a, "model_fields")), None)
        if model is None:
            return []
    return list(getattr(model, "model_fields", {}))


def _sections_with(loc: Sequence[Any]) -> list[str]:
    """Sub-sections of the model holding ``loc`` that have its last key (``quantization.group_size``: in ``mlx``)."""
    return [name for name in _fields_at(loc) if str(loc[-1]) in _fields_at([*loc[:-1], name, loc[-1]])]


def _explain(exc: ValidationError, sources: Mapping[str, str]) -> ConfigError:
    lines = []
    for e in exc.errors():
        key = _key(e["loc"])
        where = sources.get(key) or sources.get(key.split(".")[0]) or sources.get("*", "config")
        if e["type"] == "extra_forbidden":
            close = difflib.get_close_matches(str(e["loc"][-1]), _fields_at(e["loc"]), n=1)
            close = close or [f"{section}.{e['loc'][-1]}" for section in _sections_with(e["loc"])][:1]
            hint = f" (did you mean {'.'.join([*map(str, e['loc'][:-1]), close[0]])!r}?)" if close else ""
            lines.append(f"{where}: unknown config key {key!r}{hint}")
        elif e["type"] == "missing":
            lines.append(f"{where}: config key {key!r} is required")
        else:
            shown = repr(e.get("input"))
            shown = shown if len(shown) <= 60 else f"{shown[:57]}... ({len(shown)} characters)"
            got = "" if isinstance(e.get("input"), dict | list) else f" (got {shown})"
            lines.append(f"{where}: config key {key!r}: {e['msg'].removeprefix('Value error, ')}{got}")
    return ConfigError("\n".join(lines))


def _yaml(text: str) -> Any:
    """YAML text as data, refusing a key given twice in one mapping (PyYAML would keep the last silently, so a
    pasted ``learning_rate`` or a reward's parameter written twice would change the run without a word)."""
    import yaml

    class UniqueKeys(yaml.SafeLoader):
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                if not isinstance(key, Hashable):
                    continue  # the base class reports an unhashable key
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"key {key!r} appears twice in one mapping", key_node.start_mark)
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

    return yaml.load(text, Loader=UniqueKeys)  # noqa: S506 (a SafeLoader)


_SHORTHANDS = {"data": "train"}
"""Sections that may be written as one value, and the key that value stands for."""


def apply_overrides(raw: dict[str, Any], overrides: Sequence[str], sources: dict[str, str]) -> dict[str, Any]:
    """Apply ``key=value`` overrides (dotted keys reach into sections; values are YAML: ``1e-5``, ``true``,
    ``[a, b]``)."""
    import yaml

    out = dict(raw)
    for item in overrides:
        key, eq, text = item.partition("=")
        key = key.strip()
        shown = item if len(item) <= 80 else item[:77] + "..."
        if not eq or not key or any(not part.strip() for part in key.split(".")):
            raise ConfigError(f"--set {shown!r}: expected key=value, e.g. --set learning_rate=1e-5")
        try:
            value = _yaml(text) if text.strip() else ""
        except yaml.YAMLError as exc:  # a marked error says what is wrong in .problem; a ReaderError (a control
            # character) has none, and its message's first line says it
            problem = exc.problem if isinstance(exc, yaml.MarkedYAMLError) else str(exc).splitlines()[0]
            raise ConfigError(f"--set {shown!r}: the value is not valid YAML ({problem})") from None
        except ValueError as exc:  # a number too long to convert (Python's 4300-digit bound)
            raise ConfigError(f"--set {key}: the value ({len(text)} characters) cannot be read: {exc}") from None
        *parents, last = key.split(".")
        node = out
        for i, part in enumerate(parents):
            child = node.get(part)
            if child is None:
                child = {}
            elif node is out and part in _SHORTHANDS and isinstance(child, str | Path):
                child = {_SHORTHANDS[part]: child}  # `data: rows.jsonl` then `--set data.val=...`
            elif not isinstance(child, dict):
                raise ConfigError(f"--set {shown!r}: {'.'.join(parents[: i + 1])!r} is not a section")
            node[part] = child = dict(child)
            node = child
        node[last] = value
        sources[key] = f"--set {item}"
    return out


def load_config(
    path: str | Path | None = None,
    overrides: Sequence[str] = (),
    *,
    backend: str | None = None,
    data: Mapping[str, Any] | None = None,
) -> RunConfig:
    """Read a YAML run configuration (or start from ``data``), apply ``--set`` overrides and ``--backend``.

    Raises :class:`ConfigError` naming the key and where it was set, or
    :class:`FileNotFoundError` for a missing file.
    """
    import yaml

    sources: dict[str, str] = {}
    raw: Any = dict(data or {})
    if path is not None:
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"no such config file: {path}")
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{path}: not a text file (byte {exc.start} is not UTF-8); a run configuration "
                              "is YAML text") from None
        except OSError as exc:
            raise ConfigError(f"{path}: cannot be read: {exc.strerror or exc}") from None
        try:
            raw = _yaml(text) or {}
        except yaml.YAMLError as exc:
            raise ConfigError(f"{path}: not valid YAML: {exc}") from None
        except ValueError as exc:  # a number too long to convert (Python's 4300-digit bound)
            raise ConfigError(f"{path}: a value cannot be read: {exc}") from None
        if not isinstance(raw, dict):
            raise ConfigError(f"{path}: a run configuration is a mapping of keys, got {type(raw).__name__}")
        sources["*"] = str(path)
    raw = apply_overrides(raw, overrides, sources)
    if backend is not None:
        raw["backend"] = backend
        sources["backend"] = f"--backend {backend}"
    try:
        return RunConfig.model_validate(raw)
    except ValidationError as exc:
        raise _explain(exc, sources) from None
