"""What a training run checks before it reads data, loads a model or writes anything, so it fails fast and says why.

* **The output folder.**  ``output_dir`` must be a folder that can be
  written (not a file, not under a file, not read-only).  An existing folder
  that holds files but is not a grpo-host run (a project folder with its own
  ``README.md`` and ``config.yaml``) is refused unless
  ``overwrite_output_dir`` asks for it; a run that holds a checkpoint is
  refused unless ``resume`` asks to continue it; and a finished run asked to
  resume is reported as finished, with nothing written.  All of this comes
  before ``config.yaml`` is written, so a refused run changes nothing.
* **The model.**  A path that does not exist is named at once.  A hub id is
  looked for in the local Hugging Face cache; without ``HF_HUB_OFFLINE`` the
  hub is first probed with one short connection (transformers would
  otherwise retry for about a minute with no network), and an id the hub
  does not know is named before any data is read.
* **Checkpoints and records.**  A checkpoint counts as complete only when
  its ``trainer_state.json`` reads as a state with a step, so one whose
  state is missing, empty or torn is named and passed over for the one
  before; a run whose every checkpoint is so is refused (resuming it would
  train from nothing over it); a torn line in ``metrics.jsonl`` is named
  and dropped.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..errors import ConfigError
from ..runs.guard import CHECKPOINT, RUN_MARKERS, refuse_run_over
from ..runs.guard import is_run as _is_run
from .builtin_model import TINY, TINY_TOOLS, is_builtin
from .config import RunConfig

__all__ = ["RUN_MARKERS", "check_model", "check_output_dir", "checkpoint_folders", "checkpoint_state",
           "finished_summary", "read_jsonl_records", "resume_point"]

HUB_PROBE_SECONDS = 3.0
"""How long the hub gets to accept one connection before the machine counts as offline."""


def _note(message: str) -> None:
    print(f"note: {message}", file=sys.stderr, flush=True)


def checkpoint_state(folder: Path) -> int | str:
    """The step recorded in ``folder/trainer_state.json``, or why that checkpoint cannot be resumed from.

    Both engines write ``trainer_state.json`` last (transformers' ``_save_checkpoint``, the MLX backend
    atomically), so a missing, empty or torn one means the save was cut short."""
    state = folder / "trainer_state.json"
    if not state.is_file():
        return "its trainer_state.json is missing"
    try:
        step = json.loads(state.read_text())["global_step"]
        if isinstance(step, int) and not isinstance(step, bool) and step >= 0:
            return step
        problem = f"global_step is {step!r}"
    except (OSError, ValueError, KeyError, TypeError) as exc:
        problem = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return f"its trainer_state.json is incomplete ({problem})"


def checkpoint_folders(output_dir: Path) -> list[Path]:
    """The ``checkpoint-N`` folders of ``output_dir``, newest (highest N) first."""
    if not output_dir.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in output_dir.iterdir() if (m := CHECKPOINT.match(p.name)) and p.is_dir()]
    return [p for _, p in sorted(found, reverse=True)]


def resume_point(output_dir: Path) -> tuple[Path | None, int | None, list[str]]:
    """The newest checkpoint ``resume`` continues from and its step (None, None when there is none), and a line
    for each newer one passed over, saying why.

    A checkpoint whose save was cut short is passed over for the one before, as transformers' users ask of
    ``resume_from_checkpoint`` (huggingface/transformers#35525): a job killed while saving resumes without a
    hand deleting the folder.  When every checkpoint is cut short there is nothing to resume from, and training
    from the start would write over the run: that is a :class:`ConfigError` naming each one."""
    folders = checkpoint_folders(output_dir)
    passed: list[str] = []
    for folder in folders:
        state = checkpoint_state(folder)
        if isinstance(state, int):
            return folder, state, passed
        passed.append(f"{folder.name} is passed over: {state} (a save cut short)")
    if folders:
        raise ConfigError(f"resume: no checkpoint in {str(output_dir)!r} can be resumed from: "
                          f"{'; '.join(line.removesuffix(' (a save cut short)') for line in passed)}; "
                          "remove them to train from the start, or choose another output_dir")
    return None, None, passed


def read_jsonl_records(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of ``path``, one a line; a line that does not read (a run killed mid-write) is named on
    stderr and dropped, so a resumed run keeps every whole record."""
    records = []
    for lineno, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if isinstance(record, dict):
            records.append(record)
        else:
            _note(f"{path} line {lineno} is not a whole JSON record (a torn write); it is dropped")
    return records


def check_output_dir(config: RunConfig) -> None:
    """Refuse an ``output_dir`` that cannot or must not be written (see the module docstring), naming the key."""
    out = Path(config.output_dir)
    key = f"config key 'output_dir' ({config.output_dir!r})"
    for parent in [out, *out.parents]:
        if parent.exists():
            break
    if not parent.is_dir():
        where = "is a file" if parent == out else f"is under {str(parent)!r}, which is a file"
        raise ConfigError(f"{key}: {where}; name a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ConfigError(f"{key}: {str(parent)!r} is not writable")
    reads = [(config.data.train, "the training data"), *((p, "the plugin file") for p in config.plugins)]
    reads += [(config.data.val, "the validation data")] if config.data.val else []
    reads += [] if is_builtin(config.model) else [(config.model, "the model the run loads")]
    refuse_run_over(out, key, reads)  # before anything is written: not over what the run reads, nor another run's
    if parent != out:
        return  # a new folder
    entries = list(out.iterdir())
    checkpoints = checkpoint_folders(out)
    if checkpoints and not config.resume:
        raise ConfigError(f"{key}: already holds {checkpoints[0].name}: set resume: true to continue it, or choose "
                          "another output_dir")
    if checkpoints:
        resume_point(out)  # a run whose every checkpoint was cut short is refused before anything is written
    if entries and not _is_run(out) and not config.overwrite_output_dir:
        shown = ", ".join(sorted(p.name for p in entries)[:5]) + (", ..." if len(entries) > 5 else "")
        raise ConfigError(f"{key}: the folder holds files and is not a grpo-host run ({shown}); choose an empty "
                          "or new folder, or set overwrite_output_dir: true to write into it")


WHOLE_SUMMARY = {"steps", "seconds", "rewards", "output_dir"}
"""The fields without a default of :class:`grpo_host.Summary`: a ``summary.json`` missing one was cut short or
edited, and does not say the run finished."""


def finished_summary(config: RunConfig) -> dict[str, Any] | None:
    """``summary.json`` of the run in ``output_dir`` when it already trained to ``max_steps`` (nothing to resume)."""
    path = Path(config.output_dir) / "summary.json"
    if not config.resume or not path.is_file():
        return None
    try:
        summary = json.loads(path.read_text())
        steps = summary["steps"]
        if not isinstance(summary, dict) or not summary.keys() >= WHOLE_SUMMARY:
            raise KeyError("a field of a run summary")
    except (OSError, ValueError, KeyError, TypeError):
        _note(f"{path} does not read as a run summary; the run is resumed from its last complete checkpoint")
        return None
    finished = isinstance(steps, int) and steps >= config.max_steps and summary.get("stopped_by") is None
    return summary if finished else None


def _hub_reachable() -> str | None:
    """None when the hub accepts a connection within :data:`HUB_PROBE_SECONDS`, else why not."""
    endpoint = urlsplit(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    host, port = endpoint.hostname or "huggingface.co", endpoint.port or (80 if endpoint.scheme == "http" else 443)
    try:
        socket.create_connection((host, port), timeout=HUB_PROBE_SECONDS).close()
    except TimeoutError:
        return f"{host}:{port} did not answer within {HUB_PROBE_SECONDS:g} s"
    except OSError as exc:
        return f"{host}:{port}: {exc.strerror or exc}"
    return None


def _go_offline() -> None:
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
        os.environ[var] = "1"
    if "huggingface_hub.constants" in sys.modules:  # read once at import: a hub already imported must hear it too
        import huggingface_hub.constants

        huggingface_hub.constants.HF_HUB_OFFLINE = True


def check_model(model: str) -> None:
    """Refuse a model that cannot be loaded: a missing path, or a hub id that is neither cached nor reachable."""
    if is_builtin(model):
        if model not in (TINY, TINY_TOOLS):
            raise ConfigError(f"config key 'model': unknown built-in model {model!r}; available: {TINY}, {TINY_TOOLS}")
        return
    path = Path(model).expanduser()
    if path.exists():
        if not path.is_dir():
            raise ConfigError(f"config key 'model': {model!r} is a file; name the model's folder")
        if not any((path / name).is_file() for name in ("config.json", "adapter_config.json")):
            raise ConfigError(f"config key 'model': the folder {model!r} holds no config.json (nor a PEFT "
                              "adapter_config.json), so it is not a saved model; save_pretrained or mlx_lm.convert "
                              "writes one")
        return
    if model.startswith((".", "/", "~")) or model.endswith(("/", os.sep)) or model.count("/") > 1:
        raise ConfigError(f"config key 'model': no such folder {model!r}")
    offline = os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")
    unreachable = None if offline else _hub_reachable()
    if unreachable is not None:
        _go_offline()
    from huggingface_hub import try_to_load_from_cache

    if isinstance(try_to_load_from_cache(model, "config.json"), str):
        if unreachable is not None:
            _note(f"the Hugging Face hub cannot be reached ({unreachable}); using the cached copy of {model!r}")
        return
    if offline or unreachable is not None:
        why = "HF_HUB_OFFLINE is set" if offline else f"the hub cannot be reached ({unreachable})"
        raise ConfigError(f"config key 'model': {model!r} is not a local folder and not in the Hugging Face cache, "
                          f"and {why}, so it cannot be downloaded")
    from huggingface_hub import HfApi
    from huggingface_hub.errors import RepositoryNotFoundError

    try:
        HfApi().model_info(model, timeout=10)
    except RepositoryNotFoundError:
        raise ConfigError(f"config key 'model': the Hugging Face hub has no model {model!r} (or it is private and "
                          "no token is set)") from None
    except Exception:  # gated, rate-limited, a flaky network: the engine's own download says what it finds
        pass
