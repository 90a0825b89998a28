"""The ``grpo-host`` command: a thin typer layer over the public API.

Exit codes: 0 success, 1 the data has problems (check failed, bad rows while
scoring), 2 the command itself could not run (unknown reward, bad spec or
parameters, unreadable file, a reward that raised).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from . import get_reward, list_rewards
from .plugins import default_plugins

app = typer.Typer(no_args_is_help=True, add_completion=False, help=__doc__.split("\n")[0])
rewards_app = typer.Typer(no_args_is_help=True, help="List and describe the installed rewards.")
plugins_app = typer.Typer(no_args_is_help=True, help="List the installed reward packs.")
data_app = typer.Typer(no_args_is_help=True, help="Check datasets before training.")
app.add_typer(rewards_app, name="rewards")
app.add_typer(plugins_app, name="plugins")
app.add_typer(data_app, name="data")

out = Console(highlight=False)
err = Console(stderr=True, highlight=False)

SpecOpt = Annotated[str, typer.Option("--rewards", "-r", help='reward spec, e.g. "accuracy:2, r1_strict_format:0.5"')]
JsonOpt = Annotated[bool, typer.Option("--json", help="print JSON instead of a table")]


@contextmanager
def _errors() -> Iterator[None]:
    """Turn the API's exceptions into one red line and exit code 2."""
    from .data import DataError
    from .registry import DuplicateNameError, UnknownNameError
    from .rewards import RewardError

    try:
        yield
    except (DataError, DuplicateNameError, UnknownNameError, RewardError, ValueError, FileNotFoundError) as exc:
        err.print(f"[red]error:[/red] {exc}", markup=True, soft_wrap=True)
        raise typer.Exit(2) from None


def _schema_props(reward) -> dict[str, Any]:
    return reward.params.model_json_schema().get("properties", {}) if reward.params else {}


def _requires(reward) -> dict[str, str]:
    from .rewards import _type_name

    return {col.label: _type_name(col.type) for col in reward.requires}


@rewards_app.command("list")
def rewards_list(as_json: JsonOpt = False) -> None:
    """Every installed reward: name, pack, version, required columns, parameters."""
    rewards = list_rewards()
    if as_json:
        rows = [
            {
                "name": r.name,
                "plugin": r.plugin,
                "version": r.version,
                "requires": _requires(r),
                "params": r.params.model_json_schema() if r.params else None,
                "description": r.description,
                "batch": r.batch,
                "executor": r.executor,
            }
            for r in rewards
        ]
        print(json.dumps(rows, indent=2))
        return
    table = Table("name", "pack", "version", "requires", "params", "description")
    for r in rewards:
        table.add_row(
            r.name,
            r.plugin,
            r.version,
            ", ".join(f"{k}: {v}" for k, v in _requires(r).items()) or "-",
            ", ".join(_schema_props(r)) or "-",
            r.description.split(". ")[0].split("\n")[0],
        )
    out.print(table)
    _warn_failed()


def _warn_failed() -> None:
    for rec in default_plugins().records:
        if rec.status == "failed":
            err.print(f"[yellow]warning:[/yellow] plugin {rec.name} ({rec.dist} {rec.version}) failed: {rec.error}")
    for message in sorted(set(default_plugins().registry.conflicts.values())):
        err.print(f"[yellow]warning:[/yellow] {message}")


@rewards_app.command("show")
def rewards_show(name: str) -> None:
    """A reward's exact scoring, columns, parameters and scored examples."""
    with _errors():
        r = get_reward(name)
    out.print(f"[bold]{r.name}[/bold]  (pack {r.plugin} {r.version}; {'batch' if r.batch else 'per item'}, "
              f"executor {r.executor}{f', timeout {r.timeout}s' if r.timeout else ''})\n")
    out.print(r.description + "\n")
    req = _requires(r)
    out.print("columns: " + (", ".join(f"{k} ({v})" for k, v in req.items()) or "none"))
    props = _schema_props(r)
    if props:
        table = Table("parameter", "type", "default", "description", title="parameters")
        for key, prop in props.items():
            kind = prop.get("type") or " | ".join(map(str, prop.get("enum", []))) or json.dumps(prop.get("anyOf", ""))
            table.add_row(key, str(kind), json.dumps(prop.get("default")), prop.get("description", ""))
        out.print(table)
    if r.examples:
        table = Table("completion", "columns", "score", title="examples")
        for ex in r.examples:
            cols = {k: v for k, v in ex.items() if k not in ("completion", "prompt")}
            try:
                score = r.score_one(ex["completion"], ex.get("prompt"), **cols)
            except Exception as exc:  # show, do not crash: this is documentation
                score = f"error: {exc}"
            table.add_row(repr(ex["completion"]), json.dumps(cols) if cols else "", str(score))
        out.print(table)


@plugins_app.command("list")
def plugins_list(as_json: JsonOpt = False) -> None:
    """Installed packs: version, source, hooks, rewards, loaded/failed/disabled."""
    records = default_plugins().records
    if as_json:
        print(json.dumps([rec.__dict__ for rec in records], indent=2))
        return
    table = Table("plugin", "distribution", "version", "source", "hooks", "rewards", "status")
    for rec in records:
        status = {"loaded": "[green]loaded[/green]", "disabled": "[yellow]disabled[/yellow]"}.get(
            rec.status, f"[red]failed: {rec.error}[/red]"
        )
        if rec.warnings:
            status += "".join(f"\n[yellow]{w}[/yellow]" for w in rec.warnings)
        table.add_row(rec.name, rec.dist, rec.version, rec.source, ", ".join(rec.hooks), ", ".join(rec.rewards), status)
    out.print(table)


@data_app.command("check")
def data_check(
    data: Annotated[Path, typer.Argument(help="JSONL, JSON, CSV, Parquet file or a datasets folder")],
    rewards: SpecOpt,
    split: Annotated[str | None, typer.Option(help="split of a DatasetDict folder")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Check that every row carries what each chosen reward needs. Exit 0 clean, 1 problems."""
    from .data import check_rows, read_rows
    from .spec import parse_spec

    with _errors():
        chosen = [get_reward(item.name).bind(item.params) for item in parse_spec(rewards)]
        report = check_rows(read_rows(data, split=split), chosen)
    if as_json:
        print(json.dumps(report.as_dict(), indent=2))
    elif report.ok:
        out.print(f"[green]ok[/green]: {report.rows} rows carry what {', '.join(r.name for r in chosen)} need")
    else:
        table = Table("reward", "column", "problem", "rows", "first rows", title=f"{data}: {report.rows} rows")
        for p in report.problems:
            table.add_row(p.reward, p.column, p.problem, str(p.count), ", ".join(p.rows))
        out.print(table)
    raise typer.Exit(0 if report.ok else 1)


class _Summary:
    """Running per-reward figures over all batches (sums, not lists: memory stays flat)."""

    def __init__(self, names: list[str]) -> None:
        self.stats = {n: {"n": 0, "scored": 0, "sum": 0.0, "sumsq": 0.0, "errors": 0, "timeouts": 0, "seconds": 0.0}
                      for n in names}

    def add(self, result) -> None:
        for name, values in result.values.items():
            s, m = self.stats[name], result.metrics[name]
            got = [v for v in values if v is not None]
            s["n"] += len(values)
            s["scored"] += len(got)
            s["sum"] += sum(got)
            s["sumsq"] += sum(v * v for v in got)
            s["errors"] += m.errors
            s["timeouts"] += m.timeouts
            s["seconds"] += m.seconds

    def rows(self) -> dict[str, dict[str, float | int | None]]:
        res = {}
        for name, s in self.stats.items():
            k = s["scored"]
            mean = s["sum"] / k if k else None
            var = (s["sumsq"] - k * mean * mean) / (k - 1) if k > 1 else 0.0
            res[name] = {
                "mean": mean,
                "std": math.sqrt(max(var, 0.0)) if k else None,
                "coverage": k / s["n"] if s["n"] else 0.0,
                "errors": s["errors"],
                "timeouts": s["timeouts"],
                "seconds": round(s["seconds"], 4),
            }
        return res


def _count_lines(path: Path) -> int | None:
    if path.suffix.lower() not in (".jsonl", ".ndjson") or not path.is_file():
        return None
    with path.open("rb") as f:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))


@app.command()
def score(
    data: Annotated[Path, typer.Argument(help="rows with a `completion` (text or chat messages) and their columns")],
    rewards: SpecOpt,
    out_path: Annotated[Path | None, typer.Option("--out", "-o", help="write one JSON line per row ('-': stdout)")] = None,
    as_json: JsonOpt = False,
    batch_size: Annotated[int, typer.Option(min=1, help="rows scored per ensemble call")] = 256,
    workers: Annotated[int | None, typer.Option(min=1, help="worker processes for process-executor rewards")] = None,
    strict: Annotated[bool, typer.Option(help="a row that no reward scored is an error")] = False,
) -> None:
    """Score completions offline and summarise per reward. Exit 1 when rows were bad."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from .data import DataError, normalize, read_rows
    from .ensemble import Ensemble

    with _errors():
        ensemble = Ensemble.from_spec(rewards, strict=strict, workers=workers)
        rows = read_rows(data)
    sink = sys.stdout if out_path == Path("-") else (out_path.open("w") if out_path else None)
    table_console = err if sink is sys.stdout else out
    summary, bad, unscored, scored = _Summary(ensemble.names), [], 0, 0
    checks = [(r.name, col) for r in ensemble.rewards for col in r.requires]
    batch: list[tuple[str, dict[str, Any]]] = []

    def flush() -> None:
        nonlocal unscored, scored
        if not batch:
            return
        keys = sorted({k for _, row in batch for k in row} - {"completion", "prompt"})
        columns = {k: [row.get(k) for _, row in batch] for k in keys}
        result = ensemble.score(
            [row["completion"] for _, row in batch],
            [row["prompt"] for _, row in batch],
            row_ids=[where for where, _ in batch],
            **columns,
        )
        summary.add(result)
        unscored += result.unscored
        scored += len(batch)
        for message in result.errors[:5]:
            err.print(f"[yellow]skipped:[/yellow] {message}", soft_wrap=True)
        if sink is not None:
            for i, (where, _) in enumerate(batch):
                line = {"row": where, "rewards": {n: result.values[n][i] for n in ensemble.names},
                        "total": result.total[i]}
                sink.write(json.dumps(line) + "\n")
        batch.clear()

    progress = Progress(TextColumn("scoring"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                        console=err, transient=True, disable=not err.is_terminal)
    try:
        with _errors(), ensemble, progress:
            task = progress.add_task("score", total=_count_lines(data))
            for where, raw in rows:
                progress.advance(task)
                try:
                    if isinstance(raw, DataError):
                        raise raw
                    row = normalize(raw, where)
                    if row.get("completion") in (None, "", []):
                        raise DataError(where, "no 'completion' to score")
                    for name, col in checks:
                        problem = col.problem(row)
                        if problem:
                            raise DataError(where, f"reward {name!r} needs column {problem[0]!r}: {problem[1]}")
                except DataError as exc:
                    bad.append(str(exc))
                    if sink is not None:
                        sink.write(json.dumps({"row": where, "error": str(exc).removeprefix(f"{where}: ")}) + "\n")
                    continue
                batch.append((where, row))
                if len(batch) >= batch_size:
                    flush()
            flush()
    finally:
        if sink is not None and sink is not sys.stdout:
            sink.close()

    stats = summary.rows()
    if as_json:
        print(json.dumps({"rows": scored + len(bad), "scored": scored, "bad_rows": len(bad), "unscored": unscored,
                          "rewards": stats, "weights": dict(zip(ensemble.names, ensemble.weights))}, indent=2))
    else:
        table = Table("reward", "weight", "mean", "std", "coverage", "errors", "timeouts", "seconds",
                      title=f"{data}: {scored} rows scored, {len(bad)} bad, {unscored} unscored")
        fmt = lambda v: "-" if v is None else f"{v:.4g}"  # noqa: E731
        for name, weight in zip(ensemble.names, ensemble.weights):
            s = stats[name]
            table.add_row(name, fmt(weight), fmt(s["mean"]), fmt(s["std"]), f"{s['coverage']:.0%}",
                          str(s["errors"]), str(s["timeouts"]), fmt(s["seconds"]))
        table_console.print(table)
    for message in bad[:10]:
        err.print(f"[red]bad row:[/red] {message}", soft_wrap=True)
    if len(bad) > 10:
        err.print(f"[red]... and {len(bad) - 10} more bad rows[/red]")
    raise typer.Exit(1 if bad else 0)


def main() -> None:
    app()
