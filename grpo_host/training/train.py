"""The run flow shared by every training backend: config, data, checks, records, summary.

``grpo-host train`` calls :func:`train`, which does everything that does not
depend on the engine, in an order that fails early and cheaply:

0. check the output folder and the model source (:mod:`grpo_host.training.preflight`):
   a refused run has read and written nothing; resuming a finished run
   trains nothing and says so;
1. load the plugins (installed packs plus the config's ``plugins``), build
   the reward ensemble and find the backend for ``backend``;
2. read and normalise the train (and val) rows and run ``data check`` for
   the chosen rewards; a failing check stops here with its report, before
   any model is loaded;
3. write ``config.yaml`` (every value, defaults included) and
   ``packs.json`` (installed reward packs with versions) into ``output_dir``;
4. hand a :class:`Job` to the backend, which trains and reports metrics through
   :class:`MetricsLog` (``metrics.jsonl``, one progress line per log step);
5. write ``summary.json``: steps, duration, first/last mean of each reward.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ..audit import TRAIN_SAMPLE, audit_rows
from ..data import check_rows, read_rows
from ..discovery.build import Ensemble
from ..discovery.plugins import plugins_of
from ..distributed import is_main_process
from ..errors import (
    AuditFailed,
    ConfigError,
    DataCheckFailed,
    DataRefused,
    DuplicateNameError,
    MonitorStopped,
    UnknownNameError,
    UserError,
)
from ..kinds.monitor import Alert, MonitorSet, choose
from ..scoring.stats import reward_key
from .builtin_model import is_builtin, resolve_model
from .config import EnvironmentSettings, RunConfig
from .preflight import check_model, check_output_dir, finished_summary, read_jsonl_records

if TYPE_CHECKING:
    from ..discovery.plugins import Plugins

__all__ = ["Job", "MetricsLog", "Row", "Summary", "offline_for_local_models", "prepare", "read_checked", "train"]


@dataclass
class Summary:
    """What a run reports at the end (and writes to ``summary.json``)."""

    steps: int
    seconds: float
    rewards: dict[str, dict[str, float | None]]
    output_dir: str
    backend: str = ""
    resumed_from: int | None = None
    counts: dict[str, dict[str, float]] = field(default_factory=dict)
    """Each reward's own counters (:class:`grpo_host.Scored`) summed over this process's scoring passes."""
    quantization: dict[str, Any] | None = None
    """How the backend quantized the base (engine, bits and the engine's options, as resolved); None: full precision."""
    alerts: list[dict[str, Any]] = field(default_factory=list)
    """Every alert the run's monitors raised (one per quiet period), in order."""
    stopped_by: Alert | None = None
    """The alert of a monitor with action ``stop`` that ended the run (a checkpoint was saved first)."""
    monitor_seconds: float = 0.0
    """Time this process spent in the monitors, over the whole run."""

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "stopped_by": self.stopped_by.as_dict() if self.stopped_by is not None else None}


@dataclass
class MetricsLog:
    """The per-step metrics of a run: appended to ``metrics.jsonl`` and printed as one progress line.

    Backends call :meth:`add` with whatever their engine logs; reward means are
    read from ``rewards/<name>/mean`` and the weighted total from ``reward``,
    the keys TRL uses, which the other backends use too.
    """

    path: Path
    names: list[str]
    max_steps: int
    echo: bool = True
    records: list[dict[str, Any]] = field(default_factory=list)

    def start(self, resume_step: int | None = None) -> None:
        """Begin writing: fresh, or (resuming) keeping the records up to the checkpoint's step."""
        if resume_step is not None and self.path.exists():
            kept = read_jsonl_records(self.path)  # a torn last line (a run killed mid-write) is named and dropped
            self.records = [r for r in kept if isinstance(r.get("step", 0), int) and r.get("step", 0) <= resume_step]
        else:
            self.records = []
        if is_main_process():
            self.path.write_text("".join(json.dumps(r) + "\n" for r in self.records))

    def add(self, step: int, metrics: Mapping[str, Any]) -> None:
        record = {"step": step, **{k: v for k, v in metrics.items() if isinstance(v, int | float | str)}}
        self.records.append(record)
        if not is_main_process():
            return
        with self.path.open("a") as f:
            f.write(json.dumps(record) + "\n")
        if self.echo:
            self._print(record)

    def _print(self, record: Mapping[str, Any]) -> None:
        for prefix, label in (("", "step"), ("eval_", "eval at step")):
            if f"{prefix}reward" not in record:
                continue
            parts = [f"{label} {record['step']}/{self.max_steps}", f"reward {record[prefix + 'reward']:.4g}"]
            parts += [f"{n} {record[key]:.4g}" for n in self.names
                      if isinstance(record.get(key := reward_key(n, "mean", prefix)), int | float)]
            print("  ".join(parts), flush=True)

    def first_last(self) -> dict[str, dict[str, float | None]]:
        """First and last logged training mean of the total (``reward``) and of each reward."""
        out = {}
        for name, key in [("reward", "reward"), *((n, reward_key(n, "mean")) for n in self.names)]:
            values = [r[key] for r in self.records if isinstance(r.get(key), int | float) and math.isfinite(r[key])]
            out[name] = {"first": values[0] if values else None, "last": values[-1] if values else None}
        return out


class Row(NamedTuple):
    """A normalised dataset row and its place in its file (``line 12``), which error messages name."""

    where: str
    data: dict[str, Any]


@dataclass
class Job:
    """Everything a backend needs to train, already checked.

    ``train`` and ``val`` are the normalised rows.  Backends give each row an
    integer id, its index in :attr:`rows` (the training rows, then the
    validation rows), which travels through the engine to the rewards.
    """

    config: RunConfig
    plugins: Plugins
    ensemble: Ensemble
    train: list[Row]
    val: list[Row]
    output_dir: Path
    metrics: MetricsLog
    monitors: MonitorSet | None = None

    @property
    def rows(self) -> list[Row]:
        """Training rows, then validation rows: a row's id is its index here."""
        return self.train + self.val

    @property
    def model_path(self) -> str:
        """What the engine loads: ``builtin:tiny`` is built (once, cached) on first use, by the backend."""
        return resolve_model(self.config.model)

    def summary(self, steps: int, seconds: float, resumed_from: int | None = None) -> Summary:
        alerts = [a.as_dict() for a in self.monitors.alerts] if self.monitors else []
        stop = self.monitors.stop if self.monitors else None
        return Summary(steps, round(seconds, 3), self.metrics.first_last(), str(self.output_dir),
                       self.config.backend, resumed_from, counts=self.ensemble.counts, alerts=alerts, stopped_by=stop,
                       monitor_seconds=round(self.monitors.seconds, 4) if self.monitors else 0.0)


def read_checked(path: str, ensemble: Ensemble, what: str, environment: Any = None) -> list[Row]:
    """Read, check and normalise one dataset; raise :class:`DataCheckFailed` with the report when it has problems.

    ``environment``, the run's, has its required columns checked as the rewards' are."""
    normalised: list[tuple[str, dict[str, Any]]] = []
    report = check_rows(read_rows(path), [*ensemble.rewards, *([environment] if environment is not None else [])],
                        keep=normalised)
    if not report.ok:
        raise DataCheckFailed(path, report)
    if not normalised:
        raise DataRefused(path, f"the {what} set has no rows")
    rows = [Row(where, row) for where, row in normalised]
    kinds = [isinstance(row.data["prompt"], str) for row in rows]
    if any(kinds) and not all(kinds):
        odd = rows[kinds.index(not kinds[0])].where
        raise DataRefused(odd, f"prompts of the {what} set mix strings and message lists; "
                             f"{rows[0].where} has a {'string' if kinds[0] else 'message list'}, this row does not")
    return rows


def _audit(config: RunConfig, plugins: Plugins, ensemble: Ensemble, rows: list[Row], *, echo: bool) -> None:
    """The short audit before the model loads (``audit: warn | stop | off``): the run's own ensemble tries the
    probes on a sample of the train rows; ``warn`` prints the findings, ``stop`` raises
    :class:`grpo_host.audit.AuditFailed` with the report."""
    if config.audit == "off":
        return

    report = audit_rows([(row.where, row.data) for row in rows], config.rewards, sample=TRAIN_SAMPLE,
                        plugins=plugins, ensemble=ensemble, data=config.data.train, seed=config.seed)
    if report.ok:
        return
    if config.audit == "stop":
        raise AuditFailed(report)
    if echo:
        for line in report.lines():
            print(f"audit: {line}", file=sys.stderr, flush=True)
        print("audit: training anyway (audit: warn); audit: stop ends the run here instead", file=sys.stderr,
              flush=True)


def environment_of(settings: EnvironmentSettings | None, plugins: Plugins,
                   error: Callable[[str, str], UserError] = lambda name, why: ConfigError(
                       f"config key 'environment': {why}")) -> Any:
    """The environment ``settings`` name (None without one); an unknown name is ``error(name, why)``: a
    :class:`ConfigError` naming the config key, or what the caller names (``eval``'s ``--environment``)."""
    if settings is None:
        return None
    try:
        return plugins.registry.environment(settings.name)
    except (UnknownNameError, DuplicateNameError) as exc:
        raise error(settings.name, str(exc)) from None


def offline_for_local_models(model: str) -> None:
    """A built-in or local model needs no hub: make sure nothing (transformers, datasets, trl) reaches for it."""
    if is_builtin(model) or Path(model).exists():
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("HF_DATASETS_OFFLINE", "1")


def prepare(config: RunConfig, *, echo: bool = True) -> Job:
    """Steps 1 to 3 of the run flow: everything up to (not including) loading a model."""
    if is_main_process():  # (other ranks would race rank 0's records and take its folder for a stranger's)
        check_output_dir(config)  # before anything is read or written: a refused run changes nothing
    offline_for_local_models(config.model)
    check_model(config.model)
    plugins = plugins_of(config.plugins)
    backend = plugins.registry.backend(config.backend)  # an unknown backend fails before any data is read
    if backend.validate is not None:  # a backend rejects settings its engine cannot honour, before any data is read
        backend.validate(config)
    quiet = None if echo and is_main_process() else (lambda line: None)  # alerts print once, on rank 0
    monitors = MonitorSet(choose(config.monitors, plugins.registry), echo=quiet)
    ensemble = Ensemble.from_spec(config.rewards, plugins=plugins, strict=config.strict, workers=config.workers,
                                  pool=config.pool, turn_reward=config.turn_reward)
    try:
        environment = environment_of(config.environment, plugins)
        rows = read_checked(config.data.train, ensemble, "train", environment)
        val = read_checked(config.data.val, ensemble, "val", environment) if config.data.val else []
        if config.eval_k is not None and config.eval_data is not None:  # checked now, not after the training
            read_checked(config.eval_data, ensemble, "evaluation", environment)
        _audit(config, plugins, ensemble, rows, echo=quiet is None)
    except BaseException:
        ensemble.close()
        raise
    output_dir = Path(config.output_dir)
    if is_main_process():
        _write_records(output_dir, config, plugins)
    metrics = MetricsLog(output_dir / "metrics.jsonl", ensemble.names, config.max_steps, echo=echo)
    return Job(config, plugins, ensemble, rows, val, output_dir, metrics, monitors)


def _write_records(output_dir: Path, config: RunConfig, plugins: Plugins) -> None:
    import yaml

    output_dir.mkdir(parents=True, exist_ok=True)
    (output_dir / "config.yaml").write_text(yaml.safe_dump(config.resolved(), sort_keys=False))
    packs = [{"name": r.name, "distribution": r.dist, "version": r.version, "source": r.source,
              "status": r.status, "rewards": r.rewards} for r in plugins.records]
    (output_dir / "packs.json").write_text(json.dumps(packs, indent=2) + "\n")


def train(config: RunConfig, *, echo: bool = True) -> Summary:
    """Run the whole flow with the backend named by ``config.backend``; returns (and writes) the summary.

    Resuming a run that already trained to ``max_steps`` trains nothing and writes nothing: it says so and
    returns the run's summary."""
    done = finished_summary(config)
    if done is not None:
        if is_main_process():
            print(f"{config.output_dir} holds a finished run ({done['steps']} of {config.max_steps} steps"
                  "): nothing to resume; raise max_steps to train further", flush=True)
            if config.eval_k is not None:  # its evaluation may be missing, or cut short: continue it
                from .evaluate import evaluate_run

                evaluate_run(config, echo=echo)
        return Summary(**{k: v for k, v in done.items() if k in Summary.__dataclass_fields__})
    job = prepare(config, echo=echo)
    backend = job.plugins.registry.backend(config.backend)
    start = time.perf_counter()
    try:
        summary = backend.run(job)
    finally:
        job.ensemble.close()
    if summary.seconds <= 0:
        summary.seconds = round(time.perf_counter() - start, 3)
    if is_main_process():
        (job.output_dir / "summary.json").write_text(json.dumps(summary.as_dict(), indent=2) + "\n")
    if summary.stopped_by is not None:
        raise MonitorStopped(summary.stopped_by, summary.steps, job.output_dir)
    if config.eval_k is not None and is_main_process():
        from .evaluate import evaluate_run

        evaluate_run(config, echo=echo)
    return summary

