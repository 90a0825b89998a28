"""Running an audit: sample rows, build every probe's completions, score them with the run's own ensemble.

The probes' completions go through :meth:`grpo_host.Ensemble.score_rows` of
an ensemble built from the same spec a run would use, so the rewards'
executors, timeouts and error policies apply exactly as in training.  One
probe is scored at a time (its rows in batches), so its errors and timeouts
are its own; a text a row already had scored (``format_only`` laid out as
plain text is the empty completion) is not scored again.

The gold self-check needs one layout the format rewards accept: each layout
is tried on the first rows that carry a reference, ranked by how many of the
rewards it gives full marks (then by the weighted total), and used for every
row; a row whose reference falls short is tried with the other layouts
before it is counted against a reward, so a failure is one no layout avoids.
The exploits that ask for it are laid out with the winning layout.

A reward that fights the host is reported as what it did, and costs a bounded
time: one whose items time out or kill their worker process is called no more
after :data:`HANG_STREAK` such items in a row or :data:`HANG_TOTAL` in all
(:meth:`grpo_host.Ensemble.stopping_hung`), nor after it stops the scoring
under its error policy; one that calls ``os._exit`` or ``sys.exit`` fails that
item (:func:`grpo_host.scoring.calls.exit_guard`) instead of ending the audit.
"""

from __future__ import annotations

import contextlib
import copy
import random
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..data import missing_column, normalize, read_rows
from ..discovery.build import Ensemble
from ..discovery.plugins import default_plugins
from ..errors import DataError, RewardError, RewardUnusable, UserError
from ..kinds.probe import Probe, Target
from ..scoring.calls import exit_guard
from .library import GENERIC, REFERENCE_COLUMNS
from .verdict import AuditReport, Scale, Thresholds, checked_rewards, judge

__all__ = ["DEFAULT_SAMPLE", "TRAIN_SAMPLE", "audit_file", "audit_rows", "installed_probes"]

DEFAULT_SAMPLE = 200
"""Rows audited when no sample size is given: enough to see a probe that pays on one row in twenty."""
PROBE_ROWS = 128
"""Rows of the sample each exploit is tried on (all of them when the sample is smaller): a pay rate, which is what the
verdict judges, is measured well on a hundred rows, while the gold self-check names every sampled row that fails
and so runs on all of them."""
TRAIN_SAMPLE = 32
"""Rows the short audit ``grpo-host train`` runs before loading the model (config key ``audit``)."""


BATCH = 256
HANG_STREAK = 3
"""Items in a row that timed out or lost their worker process after which a reward is probed no more."""
HANG_TOTAL = 10
"""Items in all that timed out or lost their worker after which a reward is probed no more."""
RANK_ROWS = 8
"""Rows with a reference on which every layout is tried, to choose the one used everywhere."""


def installed_probes(plugins: Any = None) -> list[Probe]:
    """The generic probes followed by every installed pack's (``register_probes``); a pack's probe named like a
    generic one is an error naming the pack."""
    registry = (plugins or default_plugins()).registry
    generic = {p.name for p in GENERIC}
    found = []
    for name in registry.names("probe"):
        item = registry.probe(name)
        if name in generic:
            raise UserError(f"probe {name!r} of pack {item.pack} {item.version} has the name of a built-in probe")
        found.append(item)
    return [*GENERIC, *found]


@dataclass
class _Row:
    where: str
    row: dict[str, Any]
    prompt: str


@dataclass
class _Scores:
    """Every scored (row, text): values per reward, errors per reward, keyed by row index and text."""

    values: dict[tuple[int, str], dict[str, float | None]] = field(default_factory=dict)
    errors: dict[tuple[int, str], dict[str, str]] = field(default_factory=dict)
    kinds: dict[tuple[int, str], dict[str, str]] = field(default_factory=dict)
    """(row, text) -> reward -> what became of an item with no value (``timeout``, ``skipped``, ``raised``, ``bad
    value``, ``exited``, ``worker died``; :attr:`grpo_host.scoring.ensemble.ScoreResult.failures`)."""
    timeouts: Counter = field(default_factory=Counter)
    stopped: dict[str, str] = field(default_factory=dict)
    """Probe -> the error with which the ensemble stopped scoring its rows (as it would stop a run)."""
    halted: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Reward -> (the probe during which it was called no more, why): it hung, lost its workers, or stopped the
    scoring; its later items are ``skipped``."""
    broken: dict[str, list[Any]] = field(default_factory=dict)
    """Probe -> [rows it failed to build a completion for, the first error]: a pack's bug, skipped there."""

    def build(self, probe: Probe, target: Target) -> str | None:
        """``probe.build(target)``, or None (noted in :attr:`broken`) when the probe raises or returns no text."""
        try:
            text = probe.build(target)
        except Exception as exc:  # a pack's probe is code we did not write: its bug must not end the audit
            problem = f"{type(exc).__name__}: {exc}"
        else:
            if text is None or isinstance(text, str):
                return text
            problem = f"returned {type(text).__name__}, not text"
        entry = self.broken.setdefault(probe.name, [0, f"probe {probe.name!r} ({probe.pack} {probe.version}) "
                                                       f"{problem}"[:300]])
        entry[0] += 1
        return None


MAX_PROMPT_CHARS = 20_000
"""The prompt as probes see it is cut here: an echo longer than any completion budget proves nothing more, and a
megabyte prompt copied into every probe would cost the audit that many megabytes per row."""
MAX_COMMON_CHARS = 2_000
"""A reference longer than this is not answered on every row as the most common one (it is a program or an essay,
and a constant answer is a short one)."""


def _prompt_text(prompt: Any) -> str:
    if isinstance(prompt, str):
        return prompt[:MAX_PROMPT_CHARS]
    if isinstance(prompt, Sequence):
        return "\n".join(str(m.get("content") or "") for m in prompt if isinstance(m, Mapping))[:MAX_PROMPT_CHARS]
    return ""


def _sample(rows: Iterable[tuple[str, Any]], size: int, seed: int,
            rewards: Sequence[Any]) -> tuple[list[_Row], int, int, list[str]]:
    """A uniform sample of ``size`` normalised rows (reservoir sampling: one pass, memory for the sample only),
    in file order; with how many rows were read, how many could not be normalised, and the rows lacking a column
    a chosen reward needs (left out, as training refuses them: ``grpo-host data check`` reports them)."""
    rng = random.Random(seed)
    kept: list[tuple[int, _Row]] = []
    seen = bad = 0
    incomplete: list[str] = []
    for where, raw in rows:
        if isinstance(raw, DataError):
            bad += 1
            continue
        try:
            row = normalize(raw, where, require_prompt=False)
        except DataError:
            bad += 1
            continue
        row.pop("completion", None)
        if missing_column(row, rewards):
            incomplete.append(where)
            continue
        item = (seen, _Row(where, row, _prompt_text(row.get("prompt"))))
        seen += 1
        if len(kept) < size:
            kept.append(item)
        else:
            j = rng.randrange(seen)
            if j < size:
                kept[j] = item
    return [r for _, r in sorted(kept, key=lambda pair: pair[0])], seen + bad + len(incomplete), bad, incomplete


class _Scorer:
    """Scores (row, text) pairs with the ensemble, once each, one probe's rows at a time."""

    def __init__(self, ensemble: Any, rows: list[_Row], stopped: dict[str, str] | None = None) -> None:
        self.ensemble, self.rows, self.scores = ensemble, rows, _Scores()
        self.stopped = stopped if stopped is not None else {}
        """The ensemble's members called no more (:meth:`grpo_host.Ensemble.stopping_hung`), which this adds to."""

    def run(self, label: str, pairs: list[tuple[int, str]]) -> None:
        todo = list(dict.fromkeys(p for p in pairs if p not in self.scores.values))
        for start in range(0, len(todo), BATCH):
            chunk = todo[start:start + BATCH]
            result = self._score(label, chunk)
            if result is None:
                for pair in chunk:
                    self.scores.values[pair] = {name: None for name in self.ensemble.names}
                continue
            for k, pair in enumerate(chunk):
                self.scores.values[pair] = {name: vals[k] for name, vals in result.values.items()}
                self.scores.kinds[pair] = dict(result.failures.get(k, {}))
                for message in result.row_errors.get(k, []):
                    self.scores.errors.setdefault(pair, {})[_reward_of(message, result.values)] = message
            for name, metrics in result.metrics.items():
                self.scores.timeouts[(label, name)] += metrics.timeouts
            for name, why in self.stopped.items():
                self.scores.halted.setdefault(name, (label, why))

    def _score(self, label: str, chunk: list[tuple[int, str]]) -> Any:
        """The chunk's ScoreResult; a reward that stops the scoring (on_error=raise, or a streak of failures: a
        run would stop there too) is noted and called no more, and the chunk scored again without it; None when
        the error names no reward."""
        while True:
            try:
                return self.ensemble.score_rows([self.rows[i].row for i, _ in chunk],
                                                completions=[t for _, t in chunk],
                                                row_ids=[f"{self.rows[i].where} ({label})" for i, _ in chunk])
            except RewardUnusable:
                raise
            except RewardError as exc:
                self.scores.stopped.setdefault(label, str(exc))
                name = _reward_of(str(exc), dict.fromkeys(self.ensemble.names))
                if name == "?" or name in self.stopped:
                    return None
                self.stopped[name] = str(exc)


def _reward_of(message: str, values: Mapping[str, Any]) -> str:
    """Which reward an ensemble error message is about (it starts by naming it)."""
    for name in sorted(values, key=len, reverse=True):
        if f"'{name}'" in message[:200]:
            return name
    return "?"


def audit_rows(rows: Iterable[tuple[str, Any]], rewards: Any, *, sample: int = DEFAULT_SAMPLE, seed: int = 0,
               plugins: Any = None, thresholds: Thresholds | None = None, workers: int | None = None,
               data: str = "rows", ensemble: Any = None, probe_rows: int = PROBE_ROWS) -> AuditReport:
    """Audit the rewards of spec ``rewards`` on a sample of ``rows`` (``(where, raw_row)`` pairs, as
    :func:`grpo_host.data.read_rows` yields them) and return the :class:`AuditReport`.

    ``ensemble``: an open :class:`~grpo_host.Ensemble` to score with (a run's own, with its warm workers; left
    open), in place of one built from ``rewards``.  ``probe_rows``: how many of the sampled rows (a uniform
    choice among them) each exploit is tried on; the gold self-check runs on every sampled row.

    Raises what :meth:`grpo_host.Ensemble.from_spec` raises for a bad spec, and
    :class:`grpo_host.RewardError` when a reward stops scoring (it cannot run,
    or failed on many rows in a row): the audit could not finish.
    """
    if sample < 1 or probe_rows < 1:
        raise UserError(f"the sample and the probe rows must be at least 1 row, not {min(sample, probe_rows)}")
    start = time.perf_counter()
    probes = installed_probes(plugins)
    own = ensemble is None
    if own:
        ensemble = Ensemble.from_spec(rewards, plugins=plugins, workers=workers)
    # A run's own ensemble: its counters are the run's, not the audit's, and a probe no reward scores is expected
    # (strict is a policy for training rows); both are as they were afterwards, however the audit ends.
    counts, strict = copy.deepcopy(ensemble.counts), ensemble.strict
    ensemble.strict = False
    try:
        with (ensemble if own else contextlib.nullcontext(ensemble),
              ensemble.stopping_hung(HANG_STREAK, HANG_TOTAL) as stopped, exit_guard()):
            picked, read, bad, incomplete = _sample(rows, sample, seed, ensemble.rewards)
            if not picked:
                raise UserError(f"{data}: no row to audit ({read} read, {bad} unreadable, {len(incomplete)} lacking "
                                 "a column a reward needs: grpo-host data check names them)")
            scales = {m.name: Scale.of(m.reward) for m in ensemble.members}
            params = {m.name: m.reward.bound for m in ensemble.members}
            scorer = _Scorer(ensemble, picked, stopped)
            formats = [p for p in probes if p.kind == "format"]
            gold = _gold(scorer, ensemble, probes, formats, scales, params)
            layout = gold.layouts[0] if gold.layouts else _rank_for_format_only(scorer, ensemble, formats, params)
            common = gold.common = _most_common(gold.bodies)
            chosen = sorted(random.Random(seed).sample(range(len(picked)), min(probe_rows, len(picked))))
            exploits = _exploits(scorer, ensemble, probes, layout, common, params, chosen)
    finally:
        ensemble.counts, ensemble.strict = counts, strict
    report = judge(ensemble, scales, gold, exploits, scorer.scores, thresholds or Thresholds(), picked,
                   {p.name: p for p in probes})
    report.data, report.rows, report.read, report.unreadable = data, len(picked), read, bad
    report.incomplete, report.broken = incomplete, scorer.scores.broken
    report.layout, report.common, report.probe_rows = layout.name, common, len(chosen)
    report.seconds = time.perf_counter() - start
    return report


def audit_file(path: str | Path, rewards: Any, *, split: str | None = None, **kwargs: Any) -> AuditReport:
    """:func:`audit_rows` over a dataset file or ``datasets`` folder (any format ``grpo-host data check`` reads)."""
    return audit_rows(read_rows(path, split=split), rewards, data=str(path), **kwargs)


@dataclass
class Gold:
    """The gold self-check's raw material: per row, the body each reward's reference gave and the pair scored."""

    bodies: dict[int, dict[str, str]] = field(default_factory=dict)
    """row -> reward -> the reference body."""
    chosen: dict[tuple[int, str], tuple[int, str]] = field(default_factory=dict)
    """(row, body) -> the scored (row, text): the layout that did best for it."""
    layouts: list[Probe] = field(default_factory=list)
    common: str | None = None
    """The sample's most common reference (what ``common_gold`` answers on every row)."""


def _references(probes: list[Probe], member: Any) -> list[Probe]:
    """The reference probes for one reward: the packs' aimed at it first, then a generic one if it reads a reference
    column."""
    refs = [p for p in probes if p.kind == "reference"]
    aimed = [p for p in refs if (p.rewards or p.columns) and p.aims_at(member.reward)]
    reads = {n for col in member.reward.requires for n in col.names}
    generic = [p for p in refs if not (p.rewards or p.columns) and reads & set(REFERENCE_COLUMNS)]
    return aimed + generic


def _gold(scorer: _Scorer, ensemble: Any, probes: list[Probe], formats: list[Probe], scales: Mapping[str, Scale],
          params: Mapping[str, Any]) -> Gold:
    gold = Gold()
    for i, item in enumerate(scorer.rows):
        target = Target(item.row, item.prompt, params=params)
        for member in ensemble.members:
            for ref in _references(probes, member):
                body = scorer.scores.build(ref, target)
                if body is not None:
                    gold.bodies.setdefault(i, {})[member.name] = body
                    break
    pairs = [(i, body) for i, bodies in gold.bodies.items() for body in dict.fromkeys(bodies.values())]
    if not pairs:
        return gold

    def dressed(layout: Probe, pair: tuple[int, str]) -> tuple[int, str]:
        item = scorer.rows[pair[0]]
        return pair[0], scorer.scores.build(layout, Target(item.row, item.prompt, body=pair[1], params=params)) or ""

    def full(pair: tuple[int, str], text_pair: tuple[int, str]) -> int:
        values = scorer.scores.values[text_pair]
        checked = checked_rewards(ensemble, gold.bodies[pair[0]], pair[1])
        return sum(scales[name].full_marks(values.get(name)) for name in checked)

    ranking = pairs[:RANK_ROWS]
    merit = {}
    for layout in formats:
        texts = [dressed(layout, pair) for pair in ranking]
        scorer.run(f"layout {layout.name}", texts)
        totals = ensemble.weighted_total({m.name: [scorer.scores.values[t][m.name] for t in texts]
                                          for m in ensemble.members}, len(texts))[0]
        merit[layout.name] = (sum(full(p, t) for p, t in zip(ranking, texts, strict=True)),
                              sum(v or 0.0 for v in totals))
    gold.layouts = sorted(formats, key=lambda p: merit[p.name], reverse=True)
    best: dict[tuple[int, str], tuple[int, tuple[int, str]]] = {}
    todo = pairs
    for layout in gold.layouts:
        texts = [dressed(layout, pair) for pair in todo]
        scorer.run("reference", texts)
        left = []
        for pair, text in zip(todo, texts, strict=True):
            got = full(pair, text)
            if pair not in best or got > best[pair][0]:
                best[pair] = (got, text)
            if got < len(checked_rewards(ensemble, gold.bodies[pair[0]], pair[1])):
                left.append(pair)
        todo = left
        if not todo:
            break
    gold.chosen = {pair: text for pair, (_, text) in best.items()}
    return gold


def _rank_for_format_only(scorer: _Scorer, ensemble: Any, formats: list[Probe], params: Mapping[str, Any]) -> Probe:
    """Without references, the layout whose empty body the chosen rewards pay most (the format rewards' layout)."""
    rows = list(range(min(RANK_ROWS, len(scorer.rows))))
    best, best_total = formats[0], float("-inf")
    for layout in formats:
        texts = [(i, scorer.scores.build(layout, Target(scorer.rows[i].row, scorer.rows[i].prompt,
                                                        params=params)) or "")
                 for i in rows]
        scorer.run(f"layout {layout.name}", texts)
        total = sum(v or 0.0 for v in ensemble.weighted_total(
            {m.name: [scorer.scores.values[t][m.name] for t in texts] for m in ensemble.members}, len(texts))[0])
        if total > best_total + 1e-9:
            best, best_total = layout, total
    return best


def _most_common(bodies: Mapping[int, Mapping[str, str]]) -> str | None:
    counts = Counter(body for per_row in bodies.values() for body in dict.fromkeys(per_row.values())
                     if len(body) <= MAX_COMMON_CHARS)
    return counts.most_common(1)[0][0] if counts else None


def _exploits(scorer: _Scorer, ensemble: Any, probes: list[Probe], layout: Probe, common: str | None,
              params: Mapping[str, Any], chosen: list[int]) -> dict[str, dict[int, tuple[int, str]]]:
    """Every exploit aimed at a chosen reward, built and scored on the ``chosen`` rows: probe -> row -> the scored
    (row, text)."""
    rewards = ensemble.rewards
    out: dict[str, dict[int, tuple[int, str]]] = {}
    for p in probes:
        if p.kind != "exploit" or not (p.name == "empty" or any(p.aims_at(r) for r in rewards)):
            continue
        texts: dict[int, tuple[int, str]] = {}
        for i in chosen[:p.limit]:
            item = scorer.rows[i]
            target = Target(item.row, item.prompt, common=common, params=params)
            text = scorer.scores.build(p, target)
            if text is None:
                continue
            if p.dress:
                text = scorer.scores.build(layout, Target(item.row, item.prompt, common=common, body=text,
                                                          params=params)) or ""
            texts[i] = (i, text)
        scorer.run(p.name, list(texts.values()))
        out[p.name] = texts
    return out
