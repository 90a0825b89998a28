"""``grpo-host report``: one self-contained HTML page to look at a run (or a ``score --out`` file) with.

People judge a GRPO run by looking at it: each reward's curve and
coverage, the total, errors and timeouts, lengths, the monitors' metrics
and where they alerted, and above all sample rollouts with what each reward
gave them.  This module reads what a run leaves (the rollout record,
:mod:`grpo_host.runs.record`; ``metrics.jsonl``; ``summary.json``'s alerts) and
writes one HTML file whose plots are plotly figures with plotly.js embedded
(``include_plotlyjs=True`` on the first): it opens with no network.

Every value that came from a completion, a prompt or a dataset is escaped
(``html.escape``; plotly escapes its own JSON), so a completion holding
``</script>`` is text on the page, never markup.  The per-step figures come
from the record (training rollouts, ``split == train``), read one part at
a time (memory holds a part and the shown steps' rollouts, not the record);
where the record has token lengths they are plotted, else characters.  A
per-turn reward (a ``turns/<name>`` column) gets a figure of its mean value
at each turn index (1 is the first assistant turn) over the training
rollouts, and its turns in the table.  The rollouts table
holds whole groups from steps spread evenly over the run, at most
``rollouts`` rows, and filters as one types.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import OutputError, RecordError
from .guard import refuse_overwrite, run_inputs
from .record import read_parts, record_folder

__all__ = ["build_report", "default_output", "write_report"]

TABLE_ROWS = 300
"""Rollouts shown in the table by default."""

_SCRIPT = """
function filterRollouts(text) {
  const needle = text.toLowerCase();
  for (const row of document.querySelectorAll('#rollouts tbody tr')) {
    row.hidden = needle !== '' && !row.textContent.toLowerCase().includes(needle);
  }
}
"""

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
table { border-collapse: collapse; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; vertical-align: top; }
td pre { white-space: pre-wrap; max-width: 48em; max-height: 18em; overflow: auto; margin: 0; }
.alerts li { margin: 0.2em 0; } .num { text-align: right; font-variant-numeric: tabular-nums; }
"""


def default_output(path: str | Path) -> Path:
    """Where the report of ``path`` goes: ``report.html`` in a run folder, ``<out>.report.html`` beside a file."""
    path = Path(path)
    return path / "report.html" if path.is_dir() else Path(f"{path}.report.html")


def _records(path: Path) -> list[dict[str, Any]]:
    """``metrics.jsonl``'s records (a torn last line, from a killed run, is skipped)."""
    file = path / "metrics.jsonl"
    if not file.is_file():
        return []
    out = []
    for line in file.read_text(errors="replace").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and isinstance(record.get("step"), int):
            out.append(record)
    return out


def _alerts(path: Path) -> list[dict[str, Any]]:
    file = path / "summary.json"
    try:
        alerts = json.loads(file.read_text()).get("alerts", []) if file.is_file() else []
    except (json.JSONDecodeError, AttributeError, OSError):
        return []
    return [a for a in alerts if isinstance(a, dict)]


def _finite(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else None


class _Scan:
    """What the page needs from the record, read one part at a time so memory holds a part, not the record: per
    step and split the sums and counts behind each mean, which batch is which step, and the rollouts of the
    steps the table shows."""

    def __init__(self, folder: Path, rollouts: int) -> None:
        import pyarrow as pa
        import pyarrow.compute as pc

        self.shown = _shown_steps(_steps(folder), rollouts)
        self.names: list[str] = []
        self.turn_sums: dict[str, dict[bool, list[list[float]]]] = {}
        """Per-turn reward -> training split or not -> per turn index, [sum, count] of its values."""
        self.rollouts = 0
        self.batch_steps: dict[Any, Any] = {}
        sums, kept = [], []
        for _, table in read_parts(folder):
            self.rollouts += table.num_rows
            self.names += [c.removeprefix("reward/") for c in table.column_names
                           if c.startswith("reward/") and c.removeprefix("reward/") not in self.names]
            sums.append(_part_sums(table))
            self._add_turns(table)
            pairs = table.select(["batch", "step"]).group_by(["batch", "step"]).aggregate([]).to_pydict()
            self.batch_steps.update(zip(pairs["batch"], pairs["step"], strict=True))
            if self.shown:
                shown = table.filter(pc.is_in(table["step"], pa.array(self.shown, table["step"].type)))
                if shown.num_rows:
                    kept.append(shown)
        self.sums = pa.concat_tables(sums, promote_options="default") if sums else None
        self.kept = pa.concat_tables(kept, promote_options="default") if kept else None

    def _add_turns(self, table: Any) -> None:
        """One part's per-turn values into :attr:`turn_sums` (lists, so read as Python: a part is one batch)."""
        train = [s == "train" for s in table["split"].to_pylist()]
        for column in (c for c in table.column_names if c.startswith("turns/")):
            by_split = self.turn_sums.setdefault(column.removeprefix("turns/"), {True: [], False: []})
            for values, is_train in zip(table[column].to_pylist(), train, strict=True):
                sums = by_split[is_train]
                for t, value in enumerate(values or ()):
                    while len(sums) <= t:
                        sums.append([0.0, 0])
                    if value is not None and math.isfinite(value):
                        sums[t][0] += value
                        sums[t][1] += 1

    def per_turn(self) -> dict[str, tuple[list[int], list[float | None]]]:
        """Each per-turn reward's mean value at each turn index (from 1), over the training rollouts (all rollouts
        where none is training's)."""
        out = {}
        for name, by_split in self.turn_sums.items():
            sums = by_split[True] if any(n for _, n in by_split[True]) else by_split[False]
            out[name] = (list(range(1, len(sums) + 1)), [total / n if n else None for total, n in sums])
        return out

    def per_step(self) -> dict[str, Any]:
        """Per-step figures of the training rollouts (all rollouts where none is training's): each reward's mean
        and coverage, the total, the rollouts a reward failed on, lengths (tokens where recorded, else
        characters)."""
        out: dict[str, Any] = {"steps": [], "total": [], "failed": [], "mean": {n: [] for n in self.names},
                               "coverage": {n: [] for n in self.names}, "lengths": ([], "characters")}
        if self.sums is None or self.sums.num_rows == 0:
            return out
        train = self.sums.filter(self.sums["_train"])
        if train.num_rows == 0:
            train = self.sums
        summed = [c for c in train.column_names if c not in ("step", "_train")]
        g = train.group_by("step").aggregate([(c, "sum") for c in summed]).sort_by("step").to_pydict()
        count = g["step_count_sum"]

        def got(column: str) -> list[Any]:
            return g.get(f"{column}_sum", [None] * len(count))

        def mean(column: str) -> list[float | None]:
            return [total / n if n else None for total, n in zip(got(f"{column}_sum"), got(f"{column}_count"),
                                                                strict=True)]

        out.update(steps=g["step"], total=mean("total"), failed=got("_failed_sum"),
                   mean={n: mean(f"reward/{n}") for n in self.names},
                   coverage={n: [(c or 0) / t if t else None for c, t in zip(got(f"reward/{n}_count"), count,
                                                                            strict=True)]
                             for n in self.names})
        tokens = any(got("length_count"))
        out["lengths"] = (mean("length"), "tokens") if tokens else (mean("_chars"), "characters")
        return out


def _steps(folder: Path) -> list[int]:
    """Every step the record holds, from the parts' footers where a row group's ``step`` statistics say it holds
    one step (a part is one batch), else from its ``step`` column; a part that cannot be read is left for
    :func:`~grpo_host.runs.record.read_parts` to name."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    steps: set[int] = set()
    for part in folder.glob("*.parquet"):
        try:
            file = pq.ParquetFile(part)
            for group in range(file.metadata.num_row_groups):
                meta = file.metadata.row_group(group)
                stats = next((meta.column(j).statistics for j in range(meta.num_columns)
                              if meta.column(j).path_in_schema == "step"), None)
                if stats is not None and stats.has_min_max and stats.min == stats.max and not stats.null_count:
                    steps.add(stats.min)
                else:
                    steps.update(pc.unique(file.read_row_group(group, columns=["step"])["step"]).to_pylist())
        except Exception:  # pyarrow raises what it likes on a damaged file
            continue
    return sorted(s for s in steps if isinstance(s, int))


def _part_sums(table: Any) -> Any:
    """One part's sums and counts per step and split (training or not): what the per-step means are built from."""
    import pyarrow.compute as pc

    extra = table.append_column("_chars", pc.utf8_length(table["completion"]))
    extra = extra.append_column("_failed", pc.invert(pc.is_null(extra["error"])).cast("int64"))
    extra = extra.append_column("_train", pc.fill_null(pc.equal(extra["split"], "train"), False))
    measured = ["total", "_chars", "length", *[c for c in table.column_names if c.startswith("reward/")]]
    aggregations = [("step", "count"), ("_failed", "sum")]
    aggregations += [(c, "sum") for c in measured] + [(c, "count") for c in measured]
    return extra.group_by(["step", "_train"]).aggregate(aggregations)


def _figure(title: str, series: Mapping[str, tuple[Sequence[Any], Sequence[Any]]], ytitle: str,
            xtitle: str = "step") -> Any:
    import plotly.graph_objects as go

    figure = go.Figure()
    for name, (x, y) in series.items():
        figure.add_trace(go.Scatter(x=list(x), y=[_finite(v) for v in y], mode="lines+markers", name=name,
                                    marker={"size": 4}))
    figure.update_layout(title=title, xaxis_title=xtitle, yaxis_title=ytitle, height=360,
                         margin={"l": 50, "r": 20, "t": 50, "b": 40}, legend={"orientation": "h", "y": -0.2})
    return figure


def _monitor_figures(records: list[dict[str, Any]], alerts: list[dict[str, Any]],
                     batch_steps: Mapping[Any, Any]) -> tuple[list[Any], list[str]]:
    """One figure per monitor that saw something, each of its metrics on its own y axis; the others, named.

    A monitor's metrics are on different scales (length: a mean of 12 tokens beside a clipped share of 0-1),
    so each gets its own axis rather than one shared one that flattens the shares.  A monitor whose every
    metric held one value at every step, and that never alerted, had nothing to chart (tool_use in a run
    without tools, code_tamper in a run without code): it gets a line saying so, not a flat chart.  Each alert
    is an ✕ at its step on its monitor's first metric.
    """
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    seen: dict[str, dict[str, tuple[list[Any], list[float]]]] = {}
    for record in records:
        for key, value in record.items():
            if key.startswith("monitors/") and (number := _finite(value)) is not None:
                monitor, _, metric = key.removeprefix("monitors/").partition("/")
                x, y = seen.setdefault(monitor, {}).setdefault(metric, ([], []))
                x.append(record["step"])
                y.append(number)
    fired: dict[str, list[dict[str, Any]]] = {}
    for alert in alerts:
        fired.setdefault(str(alert.get("monitor")), []).append(alert)
    figures, quiet = [], []
    for monitor in sorted(seen.keys() | fired.keys()):
        metrics = seen.get(monitor, {})
        if monitor not in fired and all(len(set(y)) == 1 for _, y in metrics.values()):
            quiet.append(f"{monitor} (" + ", ".join(f"{m} {y[0]:.4g}" for m, (_, y) in sorted(metrics.items())) + ")")
            continue
        names = sorted(metrics) or ["alerts"]
        figure = make_subplots(rows=len(names), cols=1, shared_xaxes=True, vertical_spacing=0.25 / len(names))
        for row, name in enumerate(names, 1):
            x, y = metrics.get(name, ([], []))
            figure.add_trace(go.Scatter(x=x, y=y, mode="lines+markers", name=name, marker={"size": 4}), row=row, col=1)
            figure.update_yaxes(title_text=name, row=row, col=1)
        mine = fired.get(monitor, [])
        if mine:
            x, y = metrics.get(names[0], ([], []))
            at = dict(zip(x, y, strict=True))
            steps = [batch_steps.get(a.get("step"), a.get("step")) for a in mine]
            figure.add_trace(go.Scatter(x=steps, y=[at.get(s, 0.0) for s in steps], mode="markers", name="alert",
                                        marker={"symbol": "x", "size": 11, "color": "crimson"},
                                        hovertext=[f"{a.get('severity')}: {a.get('message')}" for a in mine],
                                        hoverinfo="text+name"), row=1, col=1)
        figure.update_xaxes(title_text="step", row=len(names), col=1)
        figure.update_layout(title=f"Monitor {monitor}" + (" (✕: an alert fired)" if mine else ""),
                             height=90 + 150 * len(names), showlegend=False,
                             margin={"l": 70, "r": 20, "t": 50, "b": 40})
        figures.append(figure)
    return figures, quiet


def _shown_steps(steps: Sequence[int], limit: int) -> list[int]:
    """The steps the rollouts table takes groups from: spread evenly over the record, the last one included."""
    if not steps:
        return []
    every = max(1, math.ceil(len(steps) / max(1, limit // 8)))
    return list(steps[::every]) + ([steps[-1]] if (len(steps) - 1) % every else [])


def _sampled(table: Any, steps: Sequence[int], limit: int) -> list[dict[str, Any]]:
    """Whole groups from ``steps`` (the rollouts of those steps are ``table``): at most ``limit`` rollouts, an
    even share per step."""
    import pyarrow.compute as pc

    if table is None or not steps:
        return []
    share = math.ceil(limit / len(steps))
    chosen: list[dict[str, Any]] = []
    for step in steps:
        taken: list[dict[str, Any]] = []
        rows = table.filter(pc.equal(table["step"], step)).to_pylist()
        for group in dict.fromkeys(r["group"] for r in rows):
            if len(taken) >= share:
                break
            taken += [r for r in rows if r["group"] == group]
        chosen += taken
    return chosen[:limit]


def _cell(value: Any) -> str:
    if value is None:
        return '<td class="num">–</td>'
    if isinstance(value, float):
        return f'<td class="num">{value:.4g}</td>'
    return f"<td><pre>{html.escape(str(value))}</pre></td>"


def _shown(text: Any) -> str:
    """A prompt or trajectory's JSON text as a person reads it: a string as is, messages one per line."""
    try:
        value = json.loads(text) if isinstance(text, str) else text
    except json.JSONDecodeError:
        return str(text)
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(f"[{m.get('role', '?')}] {m.get('content', '')}"
                         + (f" {json.dumps(m['tool_calls'], ensure_ascii=False)}" if m.get("tool_calls") else "")
                         if isinstance(m, dict) else json.dumps(m, ensure_ascii=False) for m in value)
    return json.dumps(value, ensure_ascii=False, indent=1)


def _rollouts_table(rows: list[dict[str, Any]], names: Sequence[str], per_turn: Sequence[str] = ()) -> str:
    head = ["step", "row", "prompt", "completion", *names, *(f"{n} per turn" for n in per_turn), "total",
            "advantage", "error"]
    lines = ['<input type="search" placeholder="filter rollouts (any text)" oninput="filterRollouts(this.value)" '
             'size="40">', '<table id="rollouts"><thead><tr>'
             + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr></thead><tbody>"]
    for r in rows:
        completion = _shown(r["trajectory"]) if r.get("trajectory") else r["completion"]
        cells = [str(r["step"]), r["row"], _shown(r["prompt"]), completion,
                 *(r.get(f"reward/{n}") for n in names), *(_turns(r.get(f"turns/{n}")) for n in per_turn), r["total"],
                 r["advantage"], r.get("error")]
        lines.append("<tr>" + "".join(_cell(c) for c in cells) + "</tr>")
    lines.append("</tbody></table>")
    return "\n".join(lines)


def _turns(values: Sequence[float | None] | None) -> str | None:
    """A rollout's per-turn values as the table shows them: ``0.5, 1, –``."""
    if values is None:
        return None
    return ", ".join("–" if v is None else f"{v:.4g}" for v in values)


def build_report(path: str | Path, *, rollouts: int = TABLE_ROWS) -> str:
    """The report of the run folder or ``score --out`` file ``path``, as one HTML document."""
    try:
        import plotly  # noqa: F401  # imported only to learn whether it is installed
    except ImportError:
        raise RecordError("grpo-host report draws with plotly: pip install 'grpo-host[report]' (or plotly)") from None
    path = Path(path)
    scan = _Scan(record_folder(path), rollouts)
    names, batch_steps = scan.names, scan.batch_steps
    per_step = scan.per_step()
    records = _records(path) if path.is_dir() else []  # a run folder's; a score --out file has the record only
    alerts = _alerts(path) if path.is_dir() else []
    steps = per_step["steps"]

    figures = [
        _figure("Reward means (training rollouts)", {"total": (steps, per_step["total"]),
                                                     **{n: (steps, per_step["mean"][n]) for n in names}}, "mean"),
        _figure("Coverage (share of rollouts each reward scored)",
                {n: (steps, per_step["coverage"][n]) for n in names}, "coverage"),
    ]
    failures = {"rollouts a reward failed on": (steps, per_step["failed"])}
    for key, label in (("errors", "errors"), ("timeouts", "timeouts")):
        for n in names:
            found = [(r["step"], r[f"rewards/{n}/{key}"]) for r in records if f"rewards/{n}/{key}" in r]
            if found:
                failures[f"{n} {label}"] = ([s for s, _ in found], [v for _, v in found])
    figures.append(_figure("Errors and timeouts", failures, "count"))
    per_turn = scan.per_turn()
    if per_turn:
        figures.append(_figure("Per-turn reward means by turn index (training rollouts)", per_turn, "mean",
                               xtitle="assistant turn"))
    lengths, unit = per_step["lengths"]
    figures.append(_figure(f"Completion length (mean {unit})", {f"mean {unit}": (steps, lengths)}, unit))
    monitors, quiet = _monitor_figures(records, alerts, batch_steps)
    figures += monitors

    parts = [f.to_html(full_html=False, include_plotlyjs=i == 0, default_height="360px")
             for i, f in enumerate(figures)]
    alert_items = "".join(
        f"<li>step {html.escape(str(batch_steps.get(a.get('step'), a.get('step'))))}: "
        f"{html.escape(str(a.get('severity')))} from {html.escape(str(a.get('monitor')))}: "
        f"{html.escape(str(a.get('message')))}</li>" for a in alerts)
    title = f"grpo-host report: {path}"
    body = [f"<h1>{html.escape(title)}</h1>",
            f"<p>{scan.rollouts} recorded rollouts over {len(steps)} steps; rewards: "
            f"{html.escape(', '.join(names))}.</p>",
            "<h2>Alerts</h2>" + (f'<ul class="alerts">{alert_items}</ul>' if alerts else "<p>none</p>"),
            "<h2>Curves</h2>", *parts,
            *([f'<p class="quiet">Monitors with nothing to chart (one value at every step, no alert): '
               f"{html.escape('; '.join(quiet))}.</p>"] if quiet else []),
            "<h2>Sampled rollouts</h2>",
            _rollouts_table(_sampled(scan.kept, scan.shown, rollouts), names, list(per_turn))]
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{_STYLE}</style><script>{_SCRIPT}</script></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")


def write_report(path: str | Path, out: str | Path | None = None, *, rollouts: int = TABLE_ROWS) -> Path:
    """Build the report of ``path`` and write it (to :func:`default_output` unless ``out``); returns where."""
    target = Path(out) if out is not None else default_output(path)
    if target.is_dir():
        raise OutputError(f"report -o {target}: is a folder; name a file in it, e.g. {target / 'report.html'}")
    refuse_overwrite(target, "report -o", run_inputs(path))  # before the record is read, let alone written over
    document = build_report(path, rollouts=rollouts)
    try:
        target.write_text(document, encoding="utf-8")
    except OSError as exc:
        raise RecordError(f"{target}: cannot write the report: {exc.strerror or exc}") from None
    return target
