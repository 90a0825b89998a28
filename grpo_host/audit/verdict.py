"""The audit's verdict: what full marks are, when a probe has paid too much, and the report a person reads.

**Full marks** of a reward are the highest score its documented examples
state (``@reward(examples=[{..., "score": 1.0}])``), else 1.0; its **floor**
is the lowest such score, else 0.0.  A reward is **pass/fail** when every
example and every score the audit saw is its floor or its full marks.

**Findings** (each one makes ``grpo-host audit`` exit 1):

* ``gold``: the reference, in the best layout, falls short of full marks
  (or is not scored at all: a reference the reward cannot read) on more
  than ``gold_share`` of the rows checked, for that reward.
* ``exploit``: for a reward that reads a dataset column (a correctness
  reward: it has something to compare with), a probe out-earns the empty
  completion on the same rows: a graded reward by more than ``margin`` of
  its span (full marks minus floor) on average; a pass/fail reward by
  passing (scoring above half its span) on more than ``pass_share`` more of
  the rows than the empty completion passes.
* ``empty``: such a reward pays the empty completion itself that much above
  its floor.
* ``errors``: a probe made a reward fail: raise, return a bad value (inf, NaN,
  text, the wrong number of values), call ``sys.exit``/``os._exit``, or kill its
  worker process (a reward that fails on hostile text stops a run after enough
  rows in a row).  The finding says which of these it did.
* ``hangs``: a reward's items timed out or lost their worker process so often
  (``HANG_STREAK`` in a row or ``HANG_TOTAL`` in all, :mod:`grpo_host.audit.run`)
  that it was probed no more; the finding names the probe where it stopped.
* ``stops``: scoring a probe's rows raised out of the ensemble (a reward
  with ``on_error=raise``, or one that failed on many rows in a row), as it
  would stop a run.
* ``total``: a probe earns more than ``total_share`` of what the reference
  earns in the weighted total, above the empty completion (format rewards
  weighted so heavily that the format alone is most of the signal).

Format rewards (they read no column) are expected to pay ``format_only``;
they are checked by the gold self-check and the ``total`` rule only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from ..errors import UserError

__all__ = ["AuditReport", "Finding", "ProbeResult", "RewardAudit", "Scale", "Thresholds"]

EPS = 1e-9
BLANK = ("empty", "whitespace")
"""Probes that say nothing: judged against the reward's floor, not against the empty completion."""
MAX_ROWS_NAMED = 5
MAX_FINDING_ROWS = 50
"""Rows a finding lists in ``--json`` (the table names the first few)."""


@dataclass(frozen=True)
class Thresholds:
    """When a probe has paid too much; every field is a share (see the module docstring)."""

    margin: float = 0.2
    pass_share: float = 0.1
    gold_share: float = 0.01
    total_share: float = 0.5

    def __post_init__(self) -> None:
        for key, value in asdict(self).items():
            if not (isinstance(value, int | float) and 0 <= value <= 1):
                raise UserError(f"audit threshold {key} must be a share between 0 and 1, not {value!r}")


@dataclass(frozen=True)
class Scale:
    """A reward's full marks and floor, read off its documented examples."""

    full: float = 1.0
    floor: float = 0.0
    documented: tuple[float, ...] = ()

    @classmethod
    def of(cls, reward: Any) -> Scale:
        scores = tuple(float(ex["score"]) for ex in reward.examples
                       if isinstance(ex.get("score"), int | float) and math.isfinite(ex["score"]))
        if not scores:
            return cls()
        full, floor = max(scores), min(scores)
        return cls(full, floor if floor < full else min(0.0, full), scores)

    @property
    def span(self) -> float:
        return self.full - self.floor

    def full_marks(self, value: float | None) -> bool:
        return value is not None and value >= self.full - 1e-6 * max(1.0, abs(self.full))

    def passes(self, value: float | None) -> bool:
        return value is not None and value > self.floor + self.span / 2

    def pass_fail(self, seen: list[float]) -> bool:
        ends = (self.floor, self.full)
        return all(min(abs(v - e) for e in ends) < EPS for v in (*self.documented, *seen))


@dataclass
class ProbeResult:
    """One probe against one reward: rows scored, mean, rows it out-earned the empty completion on, its best."""

    probe: str
    rows: int = 0
    mean: float | None = None
    empty: float | None = None
    paid: int = 0
    passed: int = 0
    best: float | None = None
    errors: int = 0
    timeouts: int = 0
    failures: dict[str, int] = field(default_factory=dict)
    """Rows with no value by what became of them: ``timeout``, ``skipped`` (the reward was probed no more),
    ``raised``, ``bad value``, ``exited``, ``worker died``."""
    paid_rows: list[str] = field(default_factory=list)
    flagged: bool = False
    chars: float = 0.0
    """Mean length of its completions: of probes that pay alike, the shortest is named (the least effort)."""


@dataclass
class RewardAudit:
    """One reward's audit: its scale, the gold self-check, the empty baseline and every probe aimed at it."""

    name: str
    pack: str
    full: float
    floor: float
    pass_fail: bool
    reads_columns: bool
    gold_checked: int = 0
    gold_failed: int = 0
    gold_rows: list[str] = field(default_factory=list)
    empty: float | None = None
    probes: list[ProbeResult] = field(default_factory=list)
    stopped: str = ""
    """Why, and during which probe, the reward was called no more ("" when it never was)."""

    @property
    def best(self) -> ProbeResult | None:
        """The probe with the highest mean above the empty completion (the one to worry about first)."""
        scored = [p for p in self.probes if p.mean is not None and p.probe != "empty" and p.paid]
        # p.mean is a number here (filtered above); "or 0.0" says so to the type checker
        return max(scored, key=lambda p: (p.flagged, (p.mean or 0.0) - (p.empty or 0.0), p.paid), default=None)


@dataclass
class Finding:
    """One thing to fix: its kind, the reward and probe, the rows, and a sentence saying what to change."""

    kind: str
    reward: str
    probe: str
    message: str
    fix: str = ""
    rows: list[str] = field(default_factory=list)
    probes: list[str] = field(default_factory=list)
    """Every probe of this kind of finding on this reward, the worst (``probe``) first."""

    @property
    def text(self) -> list[str]:
        """The finding as the report prints it: what paid, then what to fix."""
        return [f"FAIL {self.reward}: {self.message}", *([f"  fix: {self.fix}"] if self.fix else [])]


@dataclass
class AuditReport:
    """Everything ``grpo-host audit`` prints: per reward, the findings, and how the audit was run."""

    rewards: list[RewardAudit]
    findings: list[Finding]
    thresholds: Thresholds
    totals: dict[str, float | None] = field(default_factory=dict)
    data: str = "rows"
    rows: int = 0
    read: int = 0
    unreadable: int = 0
    layout: str = ""
    common: str | None = None
    probe_rows: int = 0
    incomplete: list[str] = field(default_factory=list)
    """Rows left out because they lack a column a chosen reward needs (training refuses them too)."""
    broken: dict[str, list[Any]] = field(default_factory=dict)
    """Probes that raised (a pack's bug): probe -> [rows skipped, the first error]."""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.findings

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "data": self.data, "rows": self.rows, "read": self.read, "unreadable": self.unreadable,
                "incomplete": len(self.incomplete), "incomplete_rows": self.incomplete[:MAX_FINDING_ROWS],
                "broken_probes": self.broken,
                "layout": self.layout, "common": self.common, "probe_rows": self.probe_rows,
                "seconds": round(self.seconds, 3),
                "thresholds": asdict(self.thresholds), "totals": self.totals,
                "rewards": [asdict(r) for r in self.rewards], "findings": [asdict(f) for f in self.findings]}

    def lines(self, width: int = 80) -> list[str]:
        """The report as lines of at most ``width`` characters: a header, one line per reward, one per finding."""
        out = [f"audit: {self.rows} of {self.read} rows (probes on {self.probe_rows}), layout {self.layout}, "
               f"{self.seconds:.1f}s: {self.data}"]
        out.append(f"{'reward':<18} {'gold':>9} {'empty':>6} {'best probe':<14} {'mean':>6} {'paid':>9}  verdict")
        flagged = {f.reward for f in self.findings}
        for r in self.rewards:
            best = r.best
            gold = f"{r.gold_checked - r.gold_failed}/{r.gold_checked}" if r.gold_checked else "-"
            verdict = ("FAIL" if r.name in flagged else "stopped" if r.stopped
                       else "ok" if r.reads_columns else "ok (format)")
            out.append(f"{r.name:<18} {gold:>9} {_num(r.empty):>6} {best.probe if best else '-':<14} "
                       f"{_num(best.mean if best else None):>6} {f'{best.paid}/{best.rows}' if best else '-':>9}  "
                       f"{verdict}")
        if self.unreadable or self.incomplete:
            named = f" ({', '.join(self.incomplete[:3])})" if self.incomplete else ""
            out.append(f"note: left out {self.unreadable} unreadable rows and {len(self.incomplete)} lacking a column"
                       f" a reward needs{named}: see grpo-host data check")
        out += [f"note: {message} on {rows} rows, skipped there" for rows, message in self.broken.values()]
        out += [line for f in self.findings for line in f.text]
        out.append(f"verdict: {len(self.findings)} finding{'s' * (len(self.findings) != 1)}, exit 1" if self.findings
                   else "verdict: ok, no probe paid too much and every reference earned full marks")
        return [line if len(line) <= width else line[:width - 1] + "…" for line in out]


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3g}"


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def checked_rewards(ensemble: Any, bodies: Mapping[str, str], body: str) -> list[str]:
    """The rewards the dressed ``body`` must earn full marks on: those it is the reference of, and the format
    rewards (which read no column)."""
    return [m.name for m in ensemble.members if bodies.get(m.name) == body or not m.reward.requires]


def judge(ensemble: Any, scales: Mapping[str, Scale], gold: Any, exploits: Mapping[str, Mapping[int, tuple[int, str]]],
          scores: Any, thresholds: Thresholds, rows: list[Any], probes: Mapping[str, Any]) -> AuditReport:
    """Turn the scored probes into per-reward results and findings (the rules are in the module docstring)."""
    findings: list[Finding] = []
    audits: list[RewardAudit] = []
    for member in ensemble.members:
        audit, found = _judge_reward(member, ensemble, scales[member.name], gold, exploits, scores, thresholds, rows,
                                     probes)
        audits.append(audit)
        findings += found
    stops = set(scores.stopped.values())
    for name, (label, why) in scores.halted.items():
        if why not in stops:  # stopped for hanging, not by its error policy (a "stops" finding below)
            findings.append(Finding("hangs", name, label, f"{why} (at probe {label})",
                                    "return within the timeout whatever the text, and never crash the process "
                                    "(bound the work with grpo_host.time_left())"))
    for label, message in scores.stopped.items():
        findings.append(Finding("stops", "-", label, f"{label} stopped the scoring: {message}",
                                "score hostile text, do not raise: under these policies this stops a run"))
    report = AuditReport(audits, findings, thresholds)
    _totals(report, ensemble, gold, exploits, scores, thresholds, probes)
    return report


def _judge_reward(member: Any, ensemble: Any, scale: Scale, gold: Any,
                  exploits: Mapping[str, Mapping[int, tuple[int, str]]], scores: Any, thresholds: Thresholds,
                  rows: list[Any], probes: Mapping[str, Any]) -> tuple[RewardAudit, list[Finding]]:
    """One reward's audit: the references it must pay in full, then every probe aimed at it."""
    name = member.name
    common = exploits.get("common_gold", {})
    empty = exploits.get("empty", {})
    checked, failed = 0, []
    for i, bodies in gold.bodies.items():
        for body in dict.fromkeys(bodies.values()):
            if name in checked_rewards(ensemble, bodies, body):
                if scores.kinds.get(gold.chosen[(i, body)], {}).get(name) == "skipped":
                    continue  # never called: the reward was stopped
                checked += 1
                if not scale.full_marks(scores.values[gold.chosen[(i, body)]].get(name)):
                    failed.append(rows[i].where)
    seen = [v for pair in scores.values for v in [scores.values[pair].get(name)] if v is not None]
    audit = RewardAudit(name, f"{member.reward.pack} {member.reward.version}", scale.full, scale.floor,
                        scale.pass_fail(seen), bool(member.reward.requires), checked, len(failed),
                        failed[:MAX_ROWS_NAMED])
    empty_vals = [v for pair in empty.values() for v in [scores.values[pair].get(name)] if v is not None]
    audit.empty = _mean(empty_vals)
    if name in scores.halted:
        label, why = scores.halted[name]
        audit.stopped = f"{why} (at probe {label})"
    findings: list[Finding] = []
    if checked and len(failed) > thresholds.gold_share * checked:
        findings.append(Finding("gold", name, "reference",
                                f"reference short of full marks ({scale.full:g}) on {len(failed)}/{checked} "
                                f"rows: {', '.join(failed[:MAX_ROWS_NAMED])}",
                                "make the reward read these references, or fix them in the data",
                                failed[:MAX_FINDING_ROWS]))
    paying: list[tuple[float, ProbeResult, str]] = []
    raising: list[ProbeResult] = []
    blank: list[tuple[str, str]] = []
    for probe_name, texts in exploits.items():
        item = probes[probe_name]
        generic = not (item.rewards or item.columns)
        if probe_name != "empty" and not (item.aims_at(member.reward) or (generic and not member.reward.requires)):
            continue  # a format reward is shown what the generic probes earn, without a verdict on them
        result = _probe_result(probe_name, texts, empty, name, scale, scores, gold, rows, common)
        result.timeouts = scores.timeouts[(probe_name, name)]
        audit.probes.append(result)
        if not (audit.reads_columns and scale.span > EPS):
            continue
        if result.errors:
            raising.append(result)
        if probe_name in BLANK:  # measured against the floor: they are the baseline the others are measured by
            values = [v for pair in texts.values() for v in [scores.values[pair].get(name)] if v is not None]
            over = _over(scale, audit.pass_fail, thresholds, values, [scale.floor] * len(values))
            if over:
                blank.append((probe_name, over.replace("vs empty", f"vs its floor {scale.floor:g}")))
            continue
        pairs = _paired(texts, empty, name, scores, gold, common if probe_name == "common_gold" else None)
        over = _over(scale, audit.pass_fail, thresholds, [v for v, _ in pairs], [e for _, e in pairs])
        if over:
            result.flagged = True
            paying.append(((result.mean or 0.0) - (result.empty or 0.0), result, over))
    example = next((message for r in raising for pair in exploits[r.probe].values()
                    for message in [scores.errors.get(pair, {}).get(name)] if message), "")
    if example:  # the reward's own words: what it raised or returned, without the row it says it failed on
        example = example.split(": ", 1)[-1] if " failed on " in example else example
    return audit, findings + _probe_findings(name, blank, paying, raising, probes, example[:160])


FAILED = {"raised": "raise", "bad value": "return a bad value", "exited": "try to end the process",
          "worker died": "kill its worker process", "host": "fail to reach it"}
"""What a failure of each kind (:data:`grpo_host.scoring.calls.Kind`) made the reward do, as the finding says it."""


def _probe_findings(name: str, blank: list[tuple[str, str]], paying: list[tuple[float, ProbeResult, str]],
                    raising: list[ProbeResult], probes: Mapping[str, Any], example: str = "") -> list[Finding]:
    """What the probes that paid, or made the reward raise, say about one reward: one finding per kind."""
    findings: list[Finding] = []
    if blank:
        first, over = blank[0]
        findings.append(Finding("empty", name, first, f"{' and '.join(p for p, _ in blank)} pays ({over})",
                                probes[first].fix, probes=[p for p, _ in blank]))
    if paying:
        paying.sort(key=lambda entry: (-round(entry[0], 9), -entry[1].paid, entry[1].chars))
        _, worst, over = paying[0]
        others = [r.probe for _, r, _ in paying[1:]]
        more = f" +{len(others) - 3}" if len(others) > 3 else ""
        also = f"; also {', '.join(others[:3])}{more}" if others else ""
        findings.append(Finding("exploit", name, worst.probe, f"{worst.probe} pays {worst.paid}/{worst.rows} rows "
                                f"({over}){also}; e.g. {', '.join(worst.paid_rows[:2])}",
                                probes[worst.probe].fix, worst.paid_rows, [worst.probe, *others]))
    if raising:
        raising.sort(key=lambda r: -r.errors)
        kinds: dict[str, int] = {}
        for r in raising:
            for kind, count in r.failures.items():
                if kind in FAILED:
                    kinds[kind] = kinds.get(kind, 0) + count
        did = " or ".join(FAILED[k] for k in sorted(kinds, key=lambda k: -kinds[k]))
        findings.append(Finding("errors", name, raising[0].probe,
                                f"{', '.join(r.probe for r in raising[:3])}{' ...' if len(raising) > 3 else ''} "
                                f"made it {did} ({raising[0].errors} rows for {raising[0].probe})"
                                f"{f': {example}' if example else ''}",
                                "score hostile text as 0; failing on enough rows in a row stops a run",
                                probes=[r.probe for r in raising]))
    return findings


def _paired(texts: Mapping[int, tuple[int, str]], empty: Mapping[int, tuple[int, str]], name: str, scores: Any,
            gold: Any, common: Mapping[int, Any] | None) -> list[tuple[float, float]]:
    """(probe value, empty value) per row both scored; for ``common_gold``, without the rows whose reference it is."""
    out = []
    for i, pair in texts.items():
        value = scores.values[pair].get(name)
        base = scores.values[empty[i]].get(name) if i in empty else None
        if value is None or base is None:
            continue
        if common is not None and _own_reference(gold, i, pair):
            continue
        out.append((value, base))
    return out


def _own_reference(gold: Any, i: int, pair: tuple[int, str]) -> bool:
    """Whether row ``i``'s own reference is the sample's most common one (``common_gold`` earned it there)."""
    return gold.common is not None and any(b.strip() == gold.common.strip() for b in gold.bodies.get(i, {}).values())


def _over(scale: Scale, pass_fail: bool, t: Thresholds, values: list[float], base: list[float]) -> str:
    """How the probe out-earned the baseline, as a phrase, or "" when it stayed within the threshold."""
    if not values:
        return ""
    if pass_fail:
        extra = (sum(map(scale.passes, values)) - sum(map(scale.passes, base))) / len(values)
        return f"+{extra:.0%} passed vs empty" if extra > t.pass_share + EPS else ""
    gain = (sum(values) - sum(base)) / len(values)
    return f"+{gain:.3g} mean vs empty" if gain > t.margin * scale.span + EPS else ""


def _probe_result(probe_name: str, texts: Mapping[int, tuple[int, str]], empty: Mapping[int, tuple[int, str]],
                  name: str, scale: Scale, scores: Any, gold: Any, rows: list[Any], common: Any) -> ProbeResult:
    result = ProbeResult(probe_name)
    pairs = _paired(texts, empty, name, scores, gold, common if probe_name == "common_gold" else None)
    values = [v for v, _ in pairs]
    result.rows, result.mean = len(pairs), _mean(values)
    result.empty = _mean([e for _, e in pairs])
    result.best = max(values, default=None)
    result.passed = sum(map(scale.passes, values))
    result.chars = _mean([len(text) for _, text in texts.values()]) or 0.0
    for i, pair in texts.items():
        if name in scores.errors.get(pair, {}):
            result.errors += 1
        kind = scores.kinds.get(pair, {}).get(name)
        if kind is not None:
            result.failures[kind] = result.failures.get(kind, 0) + 1
        value = scores.values[pair].get(name)
        base = scores.values[empty[i]].get(name) if i in empty else None
        if value is not None and base is not None and value > base + EPS and not (
                probe_name == "common_gold" and _own_reference(gold, i, pair)):
            result.paid += 1
            if len(result.paid_rows) < MAX_ROWS_NAMED:
                result.paid_rows.append(rows[i].where)
    return result


def _row_total(ensemble: Any, values: Mapping[str, float | None]) -> float | None:
    return ensemble.weighted_total({m.name: [values.get(m.name)] for m in ensemble.members}, 1)[0][0]


def _totals(report: AuditReport, ensemble: Any, gold: Any, exploits: Mapping[str, Mapping[int, tuple[int, str]]],
            scores: Any, t: Thresholds, probes: Mapping[str, Any]) -> None:
    """The ``total`` rule: a probe's mean weighted total against the reference's, both above the empty one's."""
    def mean_total(pairs: Any) -> float | None:
        return _mean([v for pair in pairs for v in [_row_total(ensemble, scores.values[pair])] if v is not None])

    reference = mean_total(gold.chosen.values())
    empty = mean_total(exploits.get("empty", {}).values())
    report.totals = {"reference": reference, "empty": empty}
    # Without a weighted format reward, a probe that pays does so through a correctness reward, judged above.
    formats = any(not m.reward.requires and m.weight for m in ensemble.members)
    flagged = {p for f in report.findings if f.kind in ("exploit", "empty") for p in f.probes}
    over: list[tuple[float, str]] = []
    for probe_name, texts in exploits.items():
        got = report.totals[probe_name] = mean_total(texts.values())
        if not formats or probe_name in (*BLANK, "common_gold") or probe_name in flagged:
            continue
        if got is None or reference is None or empty is None:
            continue
        room = reference - empty
        if room > EPS and got - empty > t.total_share * room + EPS:
            over.append(((got - empty) / room, probe_name))
    if over:
        share, worst = max(over)
        more = f" (+{len(over) - 1} more)" if len(over) > 1 else ""
        report.findings.append(Finding(
            "total", "total", worst, f"{worst}{more} earns {share:.0%} of the reference's weighted total",
            "give format rewards less weight than correctness rewards",
            sorted(p for _, p in over), [worst, *sorted(p for _, p in over if p != worst)]))
