"""``grpo-host eval``: the rewards that train a model measure it, with k samples per prompt.

A model (a local folder, ``builtin:tiny``, a run or one of its checkpoints,
or an OpenAI-compatible endpoint such as a vLLM server) answers every prompt
of a dataset ``k`` times; the same ensemble ``score`` and ``train`` build
scores the samples; the result is pass@k and mean@k per reward and for the
ensemble total, each with a 95 % interval (:func:`summarise`).

Why it is laid out this way:

* **The data check first.**  The rows are read, normalised and checked by
  the function ``train`` uses (:func:`grpo_host.training.train.read_checked`)
  before any model loads, so a broken row costs no generation.
* **The rollout record is the progress record.**  Each batch of prompts is
  scored and written as one part of the record ``report`` and ``rescore``
  read (``DIR/rollouts/``, :mod:`grpo_host.runs.record`), whole groups only,
  renamed into place: a process killed at any moment (SIGKILL included)
  leaves whole prompts.  ``--resume`` reads which prompts the parts hold and
  generates only the others; ``DIR/eval-config.json`` pins what the
  evaluation was (model, data hash, rewards, k, sampling) so a resume cannot
  mix two evaluations.
* **Generation is the engine's own.**  transformers' ``generate`` (batched,
  ``num_return_sequences=k``) on CPU or CUDA; mlx-lm's ``batch_generate``
  (batched the same way: the batch's prompts, each k times, left-padded)
  where mlx-lm is installed; an endpoint through httpx, one request per
  sample (so a server without ``n`` works and every sample has its own
  seed), bounded by a concurrency.  Prompts are rendered as the training
  backends render them: a message list through the tokenizer's chat
  template with the generation prompt, a string as it is.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..discovery.build import Ensemble
from ..discovery.plugins import plugins_of
from ..errors import OutputError, UserError
from ..runs.guard import is_run, refuse_overwrite
from ..runs.record import FOLDER, RolloutRecord, read_record, reward_column
from ..scoring.batch import feed, score_batch
from .builtin_model import is_builtin, resolve_model
from .config import EnvironmentSettings, RunConfig
from .endpoint import Endpoint
from .eval_episodes import Episodes, episodes_for
from .preflight import checkpoint_folders
from .train import Row, environment_of, offline_for_local_models, read_checked

__all__ = ["EvalSettings", "Model", "evaluate", "evaluate_run", "interval", "pass_at_k", "resolve", "shown",
           "summarise", "threshold_options"]

CONFIG = "eval-config.json"
"""What an evaluation was, beside its record: a resume must continue the same one."""
RESULT = "eval.json"
RESAMPLES = 1000
"""Bootstrap resamples of the prompts for each interval."""
TOTAL = "total"
"""The ensemble's weighted total, reported beside the rewards."""
SAMPLING = ("temperature", "top_p", "top_k", "min_p", "max_completion_length", "seed")
"""The run config's sampling keys an evaluation takes (from the run when the model is one, else the defaults)."""


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k estimator of Chen et al. (2021): ``1 - C(n-c, k) / C(n, k)`` for ``c`` passing samples
    out of ``n``, the chance that ``k`` of them drawn without replacement hold at least one that passes."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n (n={n}, c={c}, k={k})")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def interval(values: Sequence[float], *, seed: int = 0, resamples: int = RESAMPLES) -> tuple[float, float]:
    """The 95 % percentile-bootstrap interval of the mean of ``values`` (one per prompt), resampling the prompts
    with a fixed seed, so the same evaluation always reports the same interval."""
    import numpy as np

    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, data.size, size=(resamples, data.size))].mean(axis=1)
    low, high = np.quantile(means, [0.025, 0.975])
    return float(low), float(high)


@dataclass
class Model:
    """What ``MODEL`` names, resolved: a folder or hub id to load, or an endpoint's base URL."""

    given: str
    path: str | None = None
    """The folder (or hub id) an engine loads; None for an endpoint."""
    url: str | None = None
    """An OpenAI-compatible base URL (``http://host:port/v1``)."""
    run: Path | None = None
    """The run the model comes from (a run folder or one of its checkpoints): its config supplies the defaults."""
    step: int = 0
    """The checkpoint's step (the record's ``step``), 0 when the model is not a checkpoint."""


def resolve(given: str) -> Model:
    """``MODEL`` as :class:`Model`: a URL, ``builtin:...``, a run folder (its saved model), a checkpoint, or a
    folder or hub id; a run folder without a saved model is an error naming its checkpoints."""
    if given.startswith(("http://", "https://")):
        return Model(given, url=given.rstrip("/"))
    if is_builtin(given):
        return Model(given, path=resolve_model(given))
    path = Path(given)
    if not path.exists():
        if given.startswith((".", "/", "~")) or given.count("/") > 1:
            raise UserError(f"model {given!r}: no such folder")
        return Model(given, path=given)  # a hub id
    if not path.is_dir():
        raise UserError(f"model {given!r}: is a file; name the model's folder")
    saved = any((path / name).is_file() for name in ("config.json", "adapter_config.json"))
    step = re.fullmatch(r"checkpoint-(\d+)", path.name)
    if step and (path.parent / "config.yaml").is_file():
        return Model(given, path=str(path), run=path.parent, step=int(step.group(1)))
    if is_run(path) and (path / "config.yaml").is_file():
        if not saved:
            found = sorted(p.name for p in path.glob("checkpoint-*"))
            raise UserError(f"model {given!r}: the run has no saved model yet (it is unfinished); evaluate one "
                            f"of its checkpoints: {', '.join(found) or 'none'}")
        return Model(given, path=str(path), run=path, step=_final_step(path))
    if not saved:
        raise UserError(f"model {given!r}: the folder holds no config.json (nor a PEFT adapter_config.json), so "
                        "it is not a saved model")
    return Model(given, path=str(path))


def _final_step(run: Path) -> int:
    try:
        return int(json.loads((run / "summary.json").read_text())["steps"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0


def run_config(run: Path) -> dict[str, Any]:
    """A run's resolved ``config.yaml`` (what it trained with); an unreadable one is an error naming it."""
    import yaml

    try:
        config = yaml.safe_load((run / "config.yaml").read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise UserError(f"{run / 'config.yaml'}: cannot be read ({exc})") from None
    if not isinstance(config, dict):
        raise UserError(f"{run / 'config.yaml'}: not a run configuration")
    return config


@dataclass
class EvalSettings:
    """Everything one evaluation is; ``None`` sampling values are taken from the model's run, else the run config's
    defaults (:meth:`filled`)."""

    model: str
    data: str
    rewards: Any = None
    """A spec; None: the rewards of the model's run."""
    k: int = 4
    out: str | None = None
    resume: bool = False
    plugins: list[str] = field(default_factory=list)
    backend: str | None = None
    """``trl`` (transformers) or ``mlx``; None: the run's backend, else trl.  Ignored for an endpoint."""
    thresholds: dict[str, float] = field(default_factory=dict)
    """Reward name (or ``total``) -> the value a sample must reach to pass; ``*`` for every reward."""
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    min_p: float | None = None
    max_completion_length: int | None = None
    seed: int | None = None
    batch_size: int = 8
    """Prompts generated and scored (and written to the record) at a time."""
    concurrency: int = 16
    """Requests in flight at once to an endpoint."""
    served_model: str | None = None
    """The endpoint's model name; None: the first the endpoint lists at ``/models``."""
    api_key_env: str = "OPENAI_API_KEY"
    device: str | None = None
    workers: int | None = None
    environment: EnvironmentSettings | None = None
    """Each sample an episode in this environment (rows may name their own); None: the run's, else none."""
    max_tool_calls: int | None = None
    """Tool-calling rounds per episode at most; None: the run's, else until the model stops calling tools."""
    turn_reward: str | None = None
    """What a per-turn reward's (and a per-turn environment's) value is (:class:`~grpo_host.scoring.turns.TurnRule`);
    None: the run's, else ``episode``."""

    def filled(self, model: Model) -> EvalSettings:
        """A copy with every sampling value set: given, else the model's run's, else the run config's default."""
        config = run_config(model.run) if model.run is not None else {}
        if config.get("rollout"):
            raise UserError(f"model {model.given!r}: its run generated through a rollout function (TRL's "
                            "rollout_func, handed TRL's trainer); eval cannot call it (docs/eval.md)")
        environment = self.environment
        if environment is None and config.get("environment"):
            environment = _run_environment(config["environment"])
        tool_calls = self.max_tool_calls if self.max_tool_calls is not None else config.get("max_tool_calls")
        turn_reward = self.turn_reward or config.get("turn_reward") or "episode"
        values = {key: getattr(self, key) if getattr(self, key) is not None
                  else config.get(key, RunConfig.model_fields[key].default) for key in SAMPLING}
        backend = self.backend or config.get("backend") or "trl"
        rewards = self.rewards if self.rewards is not None else config.get("rewards")
        if rewards is None:
            raise UserError("--rewards: name the rewards to evaluate with (only a run's model has its own)")
        plugins = self.plugins or [str(p) for p in config.get("plugins") or []]
        return EvalSettings(**{**asdict(self), **values, "backend": backend, "rewards": rewards, "plugins": plugins,
                               "environment": environment, "max_tool_calls": tool_calls,
                               "turn_reward": turn_reward})


def _run_environment(value: Any) -> EnvironmentSettings:
    """A run's ``environment`` as its config wrote it (a name, or ``{name, params}``)."""
    return EnvironmentSettings.model_validate({"name": value} if isinstance(value, str) else value)


def default_out(model: Model) -> Path:
    """``evals/<model>``: the model's name made into one folder name."""
    name = model.given.rstrip("/")
    if model.url is not None:
        name = re.sub(r"^https?://", "", name)
    elif model.run is not None:
        name = f"{model.run.name}-{Path(name).name}" if model.run != Path(name) else model.run.name
    return Path("evals") / (re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "model")


# --- generation ----------------------------------------------------------------------------------------------------


@dataclass
class Sample:
    """One generated completion: its text, its token ids when the engine gives them, its length in tokens."""

    text: str
    ids: list[int] | None
    length: int | None
    messages: list[dict[str, Any]] | None = None
    """An episode's trajectory (assistant turns and tool results): what the rewards score and the record keeps."""
    own: dict[str, float | None] = field(default_factory=dict)
    """An episode's environment's own reward, by name (:class:`~grpo_host.training.eval_episodes.Episodes`)."""
    own_turns: dict[str, tuple[float | None, ...] | None] = field(default_factory=dict)
    """A per-turn environment's values per assistant turn, by name."""


Generate = Callable[[Sequence[Any], int, int], list[list[Sample]]]
"""``(prompts, k, seed) -> k samples per prompt``."""


def _render(tokenizer: Any, prompt: Any) -> str:
    """The text a training backend feeds the model: a chat through its template with the generation prompt."""
    if isinstance(prompt, str):
        return prompt
    return tokenizer.apply_chat_template(prompt, tokenize=False, add_generation_prompt=True)


def load_transformers(path: str, s: EvalSettings) -> tuple[Any, Any, str]:
    """The model (a PEFT adapter folder on its base), its tokenizer (left padding, a pad token) and the device, ready
    to generate."""
    try:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:
        raise UserError(f"{exc.name} is not installed: pip install 'grpo-host[trl]' (or --backend mlx)") from None
    device = s.device or ("cuda" if torch.cuda.is_available() else "cpu")
    try:
        if (Path(path) / "adapter_config.json").is_file():
            try:
                from peft import AutoPeftModelForCausalLM
            except ImportError:
                raise UserError(f"model {path!r} is a LoRA adapter: pip install 'grpo-host[trl]' (peft)") from None
            model = AutoPeftModelForCausalLM.from_pretrained(path)
        else:
            model = AutoModelForCausalLM.from_pretrained(path)
        tokenizer = AutoTokenizer.from_pretrained(path)
    except OSError as exc:
        raise UserError(f"model {path!r} cannot be loaded: {exc}") from None
    model.to(device).eval()
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return model, tokenizer, device


def sampling_options(s: EvalSettings) -> dict[str, Any]:
    """transformers' ``generate`` options: every value TRL's GRPOTrainer sets explicitly, so the model's
    generation_config.json (a Qwen's repetition_penalty 1.05, say) shapes eval's samples no more than training's."""
    options: dict[str, Any] = {"do_sample": False, "repetition_penalty": 1.0}
    if s.temperature:
        options.update(do_sample=True, temperature=s.temperature, top_p=s.top_p, top_k=s.top_k, min_p=s.min_p or None)
    return options


def transformers_generator(path: str, s: EvalSettings) -> Generate:
    """Batched sampling with transformers' ``generate`` (a PEFT adapter folder loads on its base)."""
    import torch

    model, tokenizer, device = load_transformers(path, s)
    stops = {tokenizer.eos_token_id, tokenizer.pad_token_id} - {None}
    options = sampling_options(s)

    def generate(prompts: Sequence[Any], k: int, seed: int) -> list[list[Sample]]:
        torch.manual_seed(seed)
        texts = [_render(tokenizer, p) for p in prompts]
        batch = tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False).to(device)
        # each prompt k times (what num_return_sequences does inside), so temperature 0 (greedy) works as well
        batch = {key: value.repeat_interleave(k, dim=0) for key, value in batch.items()}
        with torch.no_grad():
            out = model.generate(**batch, max_new_tokens=s.max_completion_length,
                                 pad_token_id=tokenizer.pad_token_id, **options)
        width = batch["input_ids"].shape[1]
        samples: list[list[Sample]] = [[] for _ in prompts]
        for i, row in enumerate(out[:, width:].tolist()):
            ids = row[: next((j for j, t in enumerate(row) if t in stops), len(row))]
            samples[i // k].append(Sample(str(tokenizer.decode(ids, skip_special_tokens=True)), ids, len(ids)))
        return samples

    return generate


def load_mlx(path: str, s: EvalSettings) -> tuple[Any, Any, Any]:
    """mlx-lm's model, tokenizer and sampler (the settings' temperature, top-p, min-p, top-k)."""
    try:
        from mlx_lm import load
        from mlx_lm.sample_utils import make_sampler
    except ImportError as exc:
        raise UserError(f"{exc.name} is not installed: --backend mlx needs pip install 'grpo-host[mlx]'") from None
    loaded = load(path)
    top_p = float(s.top_p if s.top_p is not None else 1.0)
    sampler = make_sampler(temp=float(s.temperature or 0.0), top_p=top_p if top_p < 1 else 0.0,
                           min_p=float(s.min_p or 0.0), top_k=int(s.top_k or 0))
    return loaded[0], loaded[1], sampler


def mlx_generator(path: str, s: EvalSettings) -> Generate:
    """mlx-lm's ``batch_generate`` with its sampler (Apple silicon, or ``mlx[cpu]`` on Linux): the batch's prompts,
    each ``k`` times, left-padded into one batch, as transformers' path does; the tokens are decoded as transformers'
    are, without special tokens, up to EOS or the pad token.

    One seed per batch (``mx.random.seed``), as on transformers: the batch's samples are draws from one stream, so a
    sample depends on the batch it was drawn in (``--batch-size``, and which prompts a resume left), not only on its
    prompt."""
    model, tokenizer, sampler = load_mlx(path, s)  # first: without mlx-lm, it says what to install
    import mlx.core as mx
    from mlx_lm import batch_generate

    most = s.max_completion_length
    assert most is not None  # (filled)
    stops = set(tokenizer.eos_token_ids) | ({tokenizer.pad_token_id} - {None})

    def generate(prompts: Sequence[Any], k: int, seed: int) -> list[list[Sample]]:
        mx.random.seed(seed)
        ids_in = [tokenizer.encode(_render(tokenizer, p), add_special_tokens=False) for p in prompts]
        wide = len(ids_in) * k  # every sequence in one prefill and one decoding batch, as transformers' generate
        out = batch_generate(model, tokenizer, [ids for ids in ids_in for _ in range(k)], max_tokens=most,
                             sampler=sampler, return_token_ids=True, prefill_batch_size=wide,
                             completion_batch_size=wide)
        assert out.token_ids is not None  # (return_token_ids)
        samples: list[list[Sample]] = [[] for _ in prompts]
        for i, row in enumerate(out.token_ids):  # it stops at EOS; a pad token ends a completion as well
            ids = [int(t) for t in row]
            ids = ids[: next((j for j, t in enumerate(ids) if t in stops), len(ids))]
            samples[i // k].append(Sample(str(tokenizer.decode(ids, skip_special_tokens=True)), ids, len(ids)))
        return samples

    return generate


def endpoint_generator(url: str, s: EvalSettings) -> Generate:
    """One request per sample to an OpenAI-compatible endpoint (``/chat/completions`` for a chat prompt,
    ``/completions`` for a string), at most ``s.concurrency`` at once, each with its own seed; the retries and
    errors are :class:`~grpo_host.training.endpoint.Endpoint`'s (``--resume`` continues a stopped evaluation)."""
    endpoint = Endpoint(url, s)

    async def one(client: Any, gate: asyncio.Semaphore, prompt: Any, seed: int) -> Sample:
        body = endpoint.body(seed, s.max_completion_length)
        route = "completions" if isinstance(prompt, str) else "chat/completions"
        body["prompt" if isinstance(prompt, str) else "messages"] = prompt
        async with gate:
            return _sample(await endpoint.post(client, route, body), url)

    async def run(prompts: Sequence[Any], k: int, seed: int) -> list[list[Sample]]:
        gate = asyncio.Semaphore(s.concurrency)
        async with endpoint.client() as client:
            tasks = [one(client, gate, p, seed + i * k + j) for i, p in enumerate(prompts) for j in range(k)]
            done = await asyncio.gather(*tasks)
        return [list(done[i * k:(i + 1) * k]) for i in range(len(prompts))]

    return lambda prompts, k, seed: asyncio.run(run(prompts, k, seed))


def _sample(reply: Any, url: str) -> Sample:
    """A completion's text and token count from an OpenAI-style answer; a malformed answer names the endpoint."""
    try:
        choice = reply["choices"][0]
        text = choice["message"]["content"] if "message" in choice else choice["text"]
        tokens = (reply.get("usage") or {}).get("completion_tokens")
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
        raise UserError(f"endpoint {url}: an answer that is not an OpenAI completion ({exc!r})") from None
    if isinstance(text, list):  # content parts: [{"type": "text", "text": ...}, ...]
        text = "".join(part.get("text") or "" for part in text if isinstance(part, dict) and part.get("type") == "text")
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    return Sample(text, None, tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else None)


def generator(model: Model, s: EvalSettings) -> Generate:
    if model.url is not None:
        return endpoint_generator(model.url, s)
    assert model.path is not None
    offline_for_local_models(model.given)  # a built-in or local model needs no hub, as in train
    if s.backend == "mlx":
        return mlx_generator(model.path, s)
    if s.backend != "trl":
        raise UserError(f"--backend {s.backend!r}: an evaluation generates with trl (transformers) or mlx")
    return transformers_generator(model.path, s)


# --- the evaluation --------------------------------------------------------------------------------------------------


WEIGHT_FILES = ("*.safetensors", "*.bin", "*.npz", "*.gguf", "*.pt", "config.json", "adapter_config.json")
"""The files of a model folder whose change makes it another model (an evaluation of it is not continued)."""


def _fingerprint(model: Model, s: EvalSettings) -> dict[str, Any]:
    """What pins an evaluation (``eval-config.json``): a resume continues only the same one.  A model folder is
    pinned by its weights' names, sizes and modification times too: a run resumed to more steps saves new weights
    under the same path."""
    digest = hashlib.sha256()
    data = Path(s.data)
    try:
        files = sorted(p for p in data.rglob("*") if p.is_file()) if data.is_dir() else [data]
        for file in files:
            with file.open("rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    digest.update(chunk)
    except OSError as exc:
        raise UserError(f"the dataset {s.data}: cannot be read ({exc.strerror or exc})") from None
    folder = Path(model.path) if model.path is not None and Path(model.path).is_dir() else None
    found = set() if folder is None else {p for pattern in WEIGHT_FILES for p in folder.glob(pattern) if p.is_file()}
    weights = None if folder is None else [[p.name, p.stat().st_size, p.stat().st_mtime_ns] for p in sorted(found)]
    return {"model": model.given, "step": model.step, "weights": weights, "data": str(s.data),
            "data_sha256": digest.hexdigest(), "rewards": s.rewards, "k": s.k,
            **{key: getattr(s, key) for key in SAMPLING}, "backend": None if model.url else s.backend,
            "served_model": s.served_model, **_episode_settings(s),
            **({"turn_reward": s.turn_reward} if s.turn_reward not in (None, "episode") else {})}


def _episode_settings(s: EvalSettings) -> dict[str, Any]:
    """The environment and ``max_tool_calls``, pinned and reported when given (an evaluation without them is pinned
    as before they existed, so its resume still matches)."""
    if s.environment is None and s.max_tool_calls is None:
        return {}
    return {"environment": s.environment.model_dump() if s.environment is not None else None,
            "max_tool_calls": s.max_tool_calls}


def pinned_as_before(settings: EvalSettings, out: Path) -> bool:
    """Whether ``out`` holds an evaluation pinned as ``settings`` would pin it now (the same model weights, data,
    rewards and sampling), so ``--resume`` may continue it."""
    try:
        before = json.loads((out / CONFIG).read_text())
    except (OSError, ValueError):
        return False
    model = resolve(settings.model)
    return before == _fingerprint(model, settings.filled(model))


def _prepare_out(out: Path, model: Model, s: EvalSettings, pinned: dict[str, Any]) -> set[int]:
    """Check ``out`` before anything is generated; returns the prompts a resumed evaluation already holds."""
    reads: list[tuple[str | Path, str]] = [(s.data, "the input")]
    if model.path is not None and Path(model.path).exists():
        reads.append((model.path, "the model"))
    refuse_overwrite(out, "--out", reads)
    if out.exists() and not out.is_dir():
        raise OutputError(f"--out {out}: is a file; name a folder")
    config = out / CONFIG
    if not s.resume:
        if out.is_dir() and any(out.iterdir()):
            held = "an evaluation: add --resume to continue it, or" if config.is_file() else "files:"
            raise OutputError(f"--out {out}: already holds {held} choose another folder")
        return set()
    if not config.is_file():
        raise OutputError(f"--out {out}: --resume, but there is no evaluation to continue (no {CONFIG})")
    try:
        before = json.loads(config.read_text())
    except (OSError, ValueError) as exc:
        raise OutputError(f"--out {out}: {CONFIG} cannot be read ({exc}); start again in another folder") from None
    changed = [key for key in {**before, **pinned} if before.get(key) != pinned.get(key)]
    if changed:
        shown = ", ".join(f"{key} {before.get(key)!r} -> {pinned.get(key)!r}" for key in changed)
        raise OutputError(f"--out {out}: --resume continues the same evaluation, but {shown}")
    return _held(out / FOLDER, s.k)


def _held(folder: Path, k: int) -> set[int]:
    """The prompts the record's whole parts hold (a part cut short by a kill, never renamed, is removed)."""
    import pyarrow.parquet as pq

    if not folder.is_dir():
        return set()
    for torn in folder.glob(".*.parquet.tmp"):
        torn.unlink()
    counts: dict[int, int] = {}
    for part in folder.glob("*.parquet"):
        for row_id in pq.read_table(part, columns=["row_id"])["row_id"].to_pylist():
            counts[row_id] = counts.get(row_id, 0) + 1
    return {row_id for row_id, n in counts.items() if n == k}


Progress = Callable[[str, int], None]
"""``(phase, prompts)``: ``generated`` or ``scored``, called after each batch; also ``("total", n)`` once."""


def evaluate(settings: EvalSettings, *, progress: Progress | None = None) -> dict[str, Any]:
    """Run (or continue) one evaluation and write ``eval.json``; returns what it holds (see docs/eval.md)."""
    import time

    start = time.perf_counter()
    model = resolve(settings.model)
    s = settings.filled(model)
    if s.k < 1 or s.batch_size < 1 or s.concurrency < 1:
        raise UserError("-k, --batch-size and --concurrency must be at least 1")
    out = Path(s.out) if s.out else default_out(model)
    if not Path(s.data).exists():
        raise FileNotFoundError(f"no such dataset: {s.data}")
    pinned = _fingerprint(model, s)
    done = _prepare_out(out, model, s, pinned)
    plugins = plugins_of(s.plugins)
    report = progress or (lambda phase, n: None)
    ensemble = Ensemble.from_spec(s.rewards, plugins=plugins, workers=s.workers, turn_reward=s.turn_reward or "episode")
    try:
        environment = environment_of(s.environment, plugins,
                                     lambda name, why: UserError(f"--environment {name!r}: {why}"))
        # the data check (the environment's columns too) and the environments' own, before any model loads
        rows = read_checked(s.data, ensemble, "evaluation", environment)
        episodes = episodes_for(s.environment, rows, plugins, turn_reward=ensemble.turn_rule)
        names = [*ensemble.names, *(episodes.names if episodes else [])]
        weights = [*ensemble.weights, *(1.0 for _ in names[len(ensemble.names):])]  # as TRL sums them in
        thresholds = _thresholds(s.thresholds, names, weights)
        todo = [i for i in range(len(rows)) if i not in done]
        report("total", len(rows))
        report("generated", len(rows) - len(todo))
        report("scored", len(rows) - len(todo))
        out.mkdir(parents=True, exist_ok=True)
        (out / CONFIG).write_text(json.dumps(pinned, indent=2) + "\n")
        if todo:
            _generate_and_score(model, s, ensemble, episodes, rows, todo, out, report)
        result = summarise(out, names, weights, thresholds, s.k)
    finally:
        ensemble.close()
    result.update({"model": model.given, "data": str(s.data), "rewards": s.rewards, "k": s.k,
                   **{key: getattr(s, key) for key in SAMPLING}, **_episode_settings(s),
                   "turn_reward": s.turn_reward, "step": model.step,
                   "generated_prompts": len(todo), "resumed_prompts": len(done),
                   "seconds": round(time.perf_counter() - start, 3), "out": str(out)})
    temporary = out / f".{RESULT}.tmp"
    temporary.write_text(json.dumps(result, indent=2) + "\n")
    os.replace(temporary, out / RESULT)
    return result


def evaluate_run(config: RunConfig, *, echo: bool = True) -> dict[str, dict[str, Any]]:
    """``eval_k``: at the end of a run, :func:`evaluate` each checkpoint (oldest first) and the saved model, each
    into ``output_dir/eval/<step-N or model>/``, with the run's rewards, plugins and sampling; an evaluation
    a killed run left there is continued.  Returns each one's result by folder name."""
    assert config.eval_k is not None
    run = Path(config.output_dir)
    data = config.eval_data or config.data.val or config.data.train
    models = [*reversed(checkpoint_folders(run))]
    if (run / "config.json").is_file() or (run / "adapter_config.json").is_file():
        models.append(run)
    found = {}
    for model in models:
        name = "model" if model == run else f"step-{model.name.removeprefix('checkpoint-')}"  # not checkpoint-N:
        # a folder holding checkpoint-N folders is a run, whose own folders nothing may write into
        out = run / "eval" / name
        settings = EvalSettings(str(model), data, k=config.eval_k, out=str(out), workers=config.workers)
        if (out / CONFIG).is_file():
            if pinned_as_before(settings, out):
                settings.resume = True  # a killed run's evaluation, continued
            else:  # of weights since replaced (a resumed run saves its model again): kept, beside
                out.rename(_aside(out))
        found[name] = result = evaluate(settings)
        if echo:
            total, k = result["metrics"][TOTAL], config.eval_k
            print(f"eval {name} (step {result['step']}): total mean@{k} {shown(total['mean@k'])}, "
                  f"pass@{k} {shown(total[f'pass@{k}'])} -> {out}", flush=True)
    return found


def _aside(out: Path) -> Path:
    """A free name beside ``out`` for an evaluation of weights the run no longer has: ``<name>.before-<n>``."""
    n = 1
    while (aside := out.with_name(f"{out.name}.before-{n}")).exists():
        n += 1
    return aside


def shown(figure: Mapping[str, Any]) -> str:
    """A figure as ``value [low, high]`` for the 80-column table."""
    if figure["value"] is None:
        return "-"
    return f"{figure['value']:.3f} [{figure['low']:.2f}, {figure['high']:.2f}]"


def _generate_and_score(model: Model, s: EvalSettings, ensemble: Ensemble, episodes: Episodes | None,
                        rows: list[Row], todo: list[int], out: Path, report: Progress) -> None:
    # each sample an episode (its sessions reset from the row, so by row index), or a completion of the prompt
    generate = episodes.player(model, s, rows) if episodes is not None else _of_rows(generator(model, s), rows)
    own = episodes.names if episodes is not None else []
    record = RolloutRecord(out / FOLDER, ensemble.names, mode="all")  # it adds the environments' own columns
    assert s.seed is not None
    for index, first in enumerate(range(0, len(todo), s.batch_size)):
        chosen = todo[first:first + s.batch_size]
        samples = generate(chosen, s.k, s.seed + chosen[0] * s.k)
        report("generated", len(chosen))
        flat = [(i, sample) for i, got in zip(chosen, samples, strict=True) for sample in got]
        completions = [sample.messages if sample.messages is not None
                       else sample.text if isinstance(rows[i].data["prompt"], str)
                       else [{"role": "assistant", "content": sample.text}] for i, sample in flat]
        ids = [sample.ids for _, sample in flat]
        batch = score_batch(
            ensemble, [rows[i].data for i, _ in flat], index=index, labels=[rows[i].where for i, _ in flat],
            groups=[i for i, _ in flat], completions=completions, step=model.step, row_ids=[i for i, _ in flat],
            completion_ids=ids if all(x is not None for x in ids) else None,
            lengths=[sample.length for _, sample in flat], max_length=s.max_completion_length)
        if own:  # recorded beside the rewards and added into the total, as in training
            batch.environment_values = {name: [sample.own.get(name) for _, sample in flat] for name in own}
            batch.environment_turns = {name: [sample.own_turns.get(name) for _, sample in flat] for name in own
                                       if any(name in sample.own_turns for _, sample in flat)}
        feed(batch, [record])  # one whole part per batch: what --resume counts as done
        report("scored", len(chosen))


def _of_rows(generate: Generate, rows: Sequence[Row]) -> Callable[[Sequence[int], int, int], list[list[Sample]]]:
    """``generate`` called with the rows' indices: their prompts."""
    return lambda chosen, k, seed: generate([rows[i].data["prompt"] for i in chosen], k, seed)


def threshold_options(given: Sequence[str]) -> dict[str, float]:
    """``--threshold`` values: ``VALUE`` (every reward, ``*``) or ``NAME=VALUE``; a bad one is an error naming it."""
    out: dict[str, float] = {}
    for text in given:
        name, eq, value = text.rpartition("=")
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if not math.isfinite(number) or (eq and not name.strip()):
            raise UserError(f"--threshold {text!r}: expected a number, or NAME=NUMBER (NAME a reward or {TOTAL})")
        out[name.strip() if eq else "*"] = number
    return out


def _thresholds(given: Mapping[str, float], names: Sequence[str], weights: Sequence[float]) -> dict[str, float]:
    """Each reward's pass threshold (given, ``*``, else 1.0) and the total's (given, else the weighted sum of the
    positively weighted rewards' thresholds: each at its own, a penalty at 0)."""
    unknown = set(given) - {*names, TOTAL, "*"}
    if unknown:
        raise UserError(f"--threshold {sorted(unknown)[0]}: not a reward of the spec or the environment "
                        f"({', '.join(names)}) nor {TOTAL}")
    every = given.get("*", 1.0)
    out = {name: given.get(name, every) for name in names}
    out[TOTAL] = given.get(TOTAL, sum(w * out[n] for n, w in zip(names, weights, strict=True) if w > 0))
    return out


def summarise(out: Path, names: Sequence[str], weights: Sequence[float], thresholds: Mapping[str, float],
              k: int) -> dict[str, Any]:
    """pass@1, pass@k and mean@k per reward and for the total, from the record in ``out``.

    Per prompt: mean@k is the mean of its scored values (a sample a reward did not score is left out; a prompt
    with none is left out of that reward's figures, and ``prompts`` says how many count), pass@j is
    :func:`pass_at_k` with a sample passing when its value is at least the threshold (an unscored sample does
    not pass).  Each figure is the mean over prompts, with :func:`interval`'s 95 % bootstrap interval."""
    table = read_record(out)
    row_ids = table["row_id"].to_pylist()
    metrics: dict[str, Any] = {}
    for name in [*names, TOTAL]:
        column = table[TOTAL if name == TOTAL else reward_column(name)].to_pylist()
        per_prompt: dict[int, list[float | None]] = {}
        for row_id, value in zip(row_ids, column, strict=True):
            per_prompt.setdefault(row_id, []).append(value)
        scored = {i: [v for v in vs if v is not None and math.isfinite(v)] for i, vs in per_prompt.items()}
        counted = [i for i in sorted(per_prompt) if scored[i]]
        figures: dict[str, Any] = {"threshold": thresholds[name], "prompts": len(counted),
                                   "samples": sum(len(vs) for vs in per_prompt.values()),
                                   "unscored": sum(len(per_prompt[i]) - len(scored[i]) for i in per_prompt)}
        means = [sum(scored[i]) / len(scored[i]) for i in counted]
        figures["mean@k"] = _figure(means)
        for j in sorted({1, k}):
            passes = [pass_at_k(len(per_prompt[i]), sum(v >= thresholds[name] for v in scored[i]), j)
                      for i in counted]
            figures[f"pass@{j}"] = _figure(passes)
        metrics[name] = figures
    weight = dict(zip(names, weights, strict=True))
    return {"prompts": len(set(row_ids)), "samples": len(row_ids), "weights": weight,
            "interval": f"95 % percentile bootstrap over prompts ({RESAMPLES} resamples, seed 0)",
            "metrics": metrics}


def _figure(values: Sequence[float]) -> dict[str, float | None]:
    if not values:
        return {"value": None, "low": None, "high": None}
    low, high = interval(values)
    return {"value": sum(values) / len(values), "low": low, "high": high}
