"""Run monitors: what watches every scored batch for reward hacking and collapse.

A GRPO run that games its reward looks healthy in the mean-reward curve, so
the host, which sees every completion and every reward value of every step,
runs monitors over each scored batch.  A monitor is a plugin, like a reward:
a class declared with :func:`monitor` and registered through the
``register_monitors`` hook.  The host makes one instance per run (monitors
keep windows of recent batches) and calls :meth:`observe` with a
:class:`Batch`; it returns a :class:`Report` of named metrics and, when its
rule fires, :class:`Alert` records.

:class:`MonitorSet` is what the backends and ``grpo-host score`` hold: it runs
the chosen monitors, logs their metrics under ``monitors/<name>/<metric>``,
prints an alert once when it starts firing and then counts it instead of
repeating it (one *episode*: the batches it kept firing on, with no gap of
``quiet`` batches; ``summary.json`` and the end of ``train`` give each
episode's batches, first and last), and applies each monitor's action (``log``,
``warn`` or ``stop``).  A monitor that raises is reported once and switched
off: a broken monitor never takes a run down.
"""

from __future__ import annotations

import functools
import inspect
import re
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from ..errors import UserError

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ..scoring.batch import ScoredBatch

__all__ = ["Alert", "Batch", "Monitor", "MonitorSet", "Report", "monitor"]

Severity = Literal["info", "warning", "critical"]

WORD = re.compile(r"\w+")
"""What monitors count as a word (:attr:`Batch.words`)."""
Action = Literal["log", "warn", "stop"]


@dataclass(frozen=True)
class Batch:
    """One scored batch as monitors see it; lists have one entry per completion.

    ``groups`` holds which completions share a prompt (GRPO's groups);
    ``lengths`` completion token counts where the engine gave them, else
    None; ``counts`` each reward's own counters (:class:`grpo_host.Scored`);
    ``max_length`` is ``max_completion_length`` when known.
    """

    step: int
    prompts: Sequence[Any]
    completions: Sequence[str]
    groups: Sequence[Any]
    values: Mapping[str, Sequence[float | None]]
    weights: Mapping[str, float]
    totals: Sequence[float | None]
    lengths: Sequence[int | None] = ()
    row_ids: Sequence[Any] = ()
    counts: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    max_length: int | None = None
    tools: Sequence[Mapping[str, float]] = ()
    """Per completion, when completions are message lists (agent rollouts): turns, tool_calls, tool_errors and
    unfinished (1.0 when the rollout ended without a final answer); empty for plain-text completions."""

    @classmethod
    def of(cls, scored: ScoredBatch) -> Batch:
        """What monitors see of one scored batch: its completions as text rewards read them, without re-reading.

        The groups of a training batch (one with the engine's row ids) are its
        dataset rows: every completion of one row is one group however often
        the batch drew it (the record keeps GRPO's groups, for advantages)."""
        result = scored.result
        return cls(step=scored.index, prompts=scored.prompts, completions=scored.texts,
                   groups=scored.row_ids if scored.row_ids is not None else scored.groups, values=result.values,
                   weights=scored.weights, totals=result.total, lengths=scored.lengths, row_ids=scored.labels,
                   counts={n: m.counts for n, m in result.metrics.items()}, max_length=scored.max_length,
                   tools=scored.tools)

    @functools.cached_property
    def words(self) -> list[list[str]]:
        """Every completion's :meth:`words_of` (:meth:`words_at`: each text is read once per batch)."""
        return [self.words_at(i) for i in range(len(self.completions))]

    @functools.cached_property
    def _words(self) -> dict[int, list[str]]:
        return {}

    def words_at(self, i: int) -> list[str]:
        """Completion ``i``'s :meth:`words_of`, read once per batch however many monitors count its words (echo,
        repetition, length): they judge the same :meth:`sample`, so each sampled text is scanned once."""
        words = self._words.get(i)
        if words is None:
            words = self._words[i] = self.words_of(self.completions[i])
        return words

    def sample(self, limit: int) -> range:
        """The completions a monitor whose statistic costs a pass over each text judges: all of them when there are
        at most ``limit`` (or ``limit`` is 0), else ``limit`` spread evenly over the batch (every k-th), so every
        part of the batch, and so its groups, is represented and each monitor sees the same ones."""
        n = len(self.completions)
        if not limit or n <= limit:
            return range(n)
        return range(0, n, -(-n // limit))

    @staticmethod
    def words_of(text: str) -> list[str]:
        """``text``'s lowercase words (``\\w+``), as :attr:`words` reads completions: for a monitor comparing a
        prompt's words with its completions'."""
        return WORD.findall(text.lower())

    def group_totals(self) -> dict[Any, list[float]]:
        """The scored totals of each group, by group id."""
        out: dict[Any, list[float]] = {}
        for group, total in zip(self.groups, self.totals, strict=False):  # a pack's own Batch may be ragged
            if total is not None:
                out.setdefault(group, []).append(total)
        return out


@dataclass(frozen=True)
class Alert:
    """A monitor's rule fired: how bad, what it saw, and example rows (row labels) to look at."""

    monitor: str
    severity: Severity
    message: str
    rows: tuple[Any, ...] = ()
    step: int = 0
    batches: int = 1
    """How many batches the rule fired on in this episode (see :class:`MonitorSet`)."""
    last_step: int | None = None
    """The last batch it fired on in this episode (None: only ``step``)."""

    def as_dict(self) -> dict[str, Any]:
        return {"monitor": self.monitor, "severity": self.severity, "message": self.message,
                "rows": [str(r) for r in self.rows], "step": self.step, "batches": self.batches,
                "last_step": self.last_step if self.last_step is not None else self.step}


@dataclass
class Report:
    """What one ``observe`` returns: metrics by name (logged as ``monitors/<monitor>/<name>``) and alerts."""

    metrics: dict[str, float] = field(default_factory=dict)
    alerts: list[Alert] = field(default_factory=list)


@dataclass(frozen=True, eq=False)
class Monitor:
    """A monitor class with its declaration, as :func:`monitor` makes it and a pack registers it."""

    name: str
    factory: Callable[..., Any]
    description: str
    params: type[BaseModel] | None = None
    pack: str = "?"
    version: str = "?"

    def create(self, params: Mapping[str, Any] | None = None) -> Any:
        """A fresh instance for one run, with validated parameters; :class:`ValueError` names the monitor."""
        from ..scoring.contract import construct

        who = f"monitor {self.name!r} (pack {self.pack} {self.version})"
        return construct(self.factory, self.params, params, who)


def monitor(name: str, *, description: str | None = None,
            params: type[BaseModel] | None = None) -> Callable[[type], Monitor]:
    """Declare a class as a monitor: ``__init__(params)`` (or no argument), ``observe(batch) -> Report``.

    :param name: the name configs and ``grpo-host monitors show`` use.
    :param description: the exact rule and thresholds; defaults to the docstring.
    :param params: a pydantic model of the parameters (windows, thresholds).
    """

    def wrap(cls: type) -> Monitor:
        if not callable(getattr(cls, "observe", None)):
            raise TypeError(f"@monitor {name!r}: the class needs an observe(batch) method")
        return Monitor(name, cls, inspect.cleandoc(description or cls.__doc__ or ""), params)

    return wrap


@dataclass
class _Running:
    name: str
    instance: Any
    action: Action
    quiet: int
    episodes: dict[str, int] = field(default_factory=dict)
    """Each rule's open episode: its index in :attr:`MonitorSet.alerts`."""
    broken: bool = False


class MonitorSet:
    """The chosen monitors of one run (or one ``score``), fed every scored batch.

    :param monitors: ``(Monitor, params, action)`` triples.
    :param quiet: batches a rule must stay silent for before it firing again is a new episode (printed again).
    :param echo: where alerts are printed (stderr by default; None: nowhere).
    """

    def __init__(self, monitors: Sequence[tuple[Monitor, Mapping[str, Any] | None, Action]], *, quiet: int = 20,
                 echo: Callable[[str], None] | None = None) -> None:
        self._running = [_Running(m.name, m.create(params), action, quiet) for m, params, action in monitors]
        self.alerts: list[Alert] = []
        self.stop: Alert | None = None
        self.seconds = 0.0
        self.cpu_seconds = 0.0
        """CPU time spent in :meth:`observe` (``seconds`` is its wall-clock time): what the monitors cost on a shared
        machine, where wall time also counts other jobs."""
        self._echo = echo if echo is not None else (lambda line: print(line, file=sys.stderr, flush=True))

    @property
    def names(self) -> list[str]:
        return [r.name for r in self._running]

    def take(self, batch: ScoredBatch) -> None:
        """Observe one scored batch (a :class:`grpo_host.scoring.batch.Sink`); its metrics are left on the batch
        for the sinks that report them."""
        batch.monitor_metrics = self.observe(Batch.of(batch))

    def observe(self, batch: Batch) -> dict[str, float]:
        """Feed one batch to every monitor; returns the metrics (``monitors/<name>/<metric>``) to log."""
        start, cpu = time.perf_counter(), time.process_time()
        metrics: dict[str, float] = {}
        for run in self._running:
            if run.broken:
                continue
            try:
                report = run.instance.observe(batch)
            except Exception as exc:  # a broken monitor is reported once and switched off
                run.broken = True
                self._echo(f"monitor {run.name!r} failed and is switched off: {type(exc).__name__}: {exc}")
                continue
            metrics.update({f"monitors/{run.name}/{k}": float(v) for k, v in report.metrics.items()})
            for alert in report.alerts:
                self._alert(run, alert, batch.step)
        self.seconds += time.perf_counter() - start
        self.cpu_seconds += time.process_time() - cpu
        return metrics

    def _alert(self, run: _Running, alert: Alert, step: int) -> None:
        alert = Alert(run.name, alert.severity, alert.message, tuple(alert.rows[:5]), step)
        key = alert.message.split(":")[0]  # one rule, one episode, whatever the figures in the message
        index = run.episodes.get(key)
        if index is not None:
            open_ = self.alerts[index]
            last = open_.last_step if open_.last_step is not None else open_.step
            if step <= last + run.quiet:  # still the same episode: counted, not printed again
                self.alerts[index] = replace(open_, batches=open_.batches + 1, last_step=step)
                return
        run.episodes[key] = len(self.alerts)
        self.alerts.append(alert)
        if run.action == "log":
            return
        rows = f" (e.g. {', '.join(map(str, alert.rows))})" if alert.rows else ""
        self._echo(f"{alert.severity}: monitor {run.name} at batch {step}: {alert.message}{rows}")
        if run.action == "stop" and self.stop is None:
            self.stop = alert


def choose(items: Sequence[Mapping[str, Any] | str] | str | None, registry: Any,
           action: Action = "warn") -> list[tuple[Monitor, Mapping[str, Any] | None, Action]]:
    """The monitors a run or ``score`` uses, looked up in ``registry``.

    ``items`` is None or ``"all"`` (every installed monitor, with ``action``),
    ``"none"`` or empty (no monitor), a comma-separated string of names, or a
    list of names and ``{name, params, action}`` dicts (the run config's
    ``monitors``).  Unknown names raise with the names there are.
    """
    if items is None or items == "all":
        return [(registry.monitor(name), None, action) for name in registry.names("monitor")]
    if isinstance(items, str):
        items = [] if items.strip() == "none" else [part.strip() for part in items.split(",") if part.strip()]
    chosen: list[tuple[Monitor, Mapping[str, Any] | None, Action]] = []
    for item in items:
        entry: dict[str, Any] = {"name": item} if isinstance(item, str) else dict(item)
        unknown = sorted(set(entry) - {"name", "params", "action"})
        if unknown or "name" not in entry:
            raise UserError(f"monitor entry {item!r}: expected a name or {{name, params, action}}")
        if entry.get("action", action) not in ("log", "warn", "stop"):
            raise UserError(f"monitor {entry['name']!r}: action must be log, warn or stop, got {entry['action']!r}")
        chosen.append((registry.monitor(entry["name"]), entry.get("params"), entry.get("action", action)))
    return chosen
