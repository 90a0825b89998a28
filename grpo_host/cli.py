"""The ``grpo-host`` command: a thin typer layer over the public API.

Every error grpo-host raises on purpose is a :class:`~grpo_host.errors.GrpoHostError` carrying its exit code;
:class:`_Commands` catches it once, for every command, and prints one line (after the table a refused check or
audit found).  Any other exception is a bug and keeps its traceback (exit 1).  The codes: README, "Exit codes".
"""

# No `from __future__ import annotations`: typer would eval every annotation string of every command at each start.
import contextlib
import json
import os
import re
import signal
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:  # annotations only, as strings: the command imports what it runs when it runs
    from .kinds.monitor import Alert
    from .scoring.ensemble import Ensemble
    from .scoring.stats import Tally


class _Commands(typer.core.TyperGroup):
    """The command group: the one place a deliberate error becomes its line and its exit code."""

    def invoke(self, ctx: Any) -> Any:  # typer.Context; typer types it as its vendored click module's Context
        from .errors import GrpoHostError

        try:
            return super().invoke(ctx)
        except (GrpoHostError, FileNotFoundError) as exc:
            _explain(exc)
            label = getattr(exc, "label", "error")
            err.print(Text.assemble((f"{label}:", "red"), f" {exc}"), soft_wrap=True)
            raise typer.Exit(getattr(exc, "exit_code", 2)) from None


def _explain(exc: BaseException) -> None:
    """What a refused run found, printed before its one line: the data check's table, the audit's findings."""
    from .errors import AuditFailed, DataCheckFailed

    if isinstance(exc, DataCheckFailed):
        err.print(_problems_table(exc.report, f"data check failed: {exc.path}: {exc.report.rows} rows"))
    elif isinstance(exc, AuditFailed):
        for line in exc.report.lines(max(80, err.width)):
            err.print(line, soft_wrap=True)


USAGE = """Reward functions for GRPO as installable packs: list them, check a dataset against them, score
completions offline, and train on TRL or MLX with a weighted ensemble such as "math:2, r1_strict_format:0.5".

Exit codes: 0 success, 1 the data has problems, 2 the command could not run, 3 a monitor stopped training,
130 interrupted (README, "Exit codes")."""

app = typer.Typer(cls=_Commands, no_args_is_help=True, add_completion=False, help=USAGE)
rewards_app = typer.Typer(no_args_is_help=True, help="List and describe the installed rewards.")
plugins_app = typer.Typer(no_args_is_help=True, help="List the installed reward packs.")
data_app = typer.Typer(no_args_is_help=True, help="Check datasets before training; import problem packages as rows.")
monitors_app = typer.Typer(no_args_is_help=True, help="List and describe the run monitors (reward hacking, collapse).")
app.add_typer(rewards_app, name="rewards")
app.add_typer(plugins_app, name="plugins")
app.add_typer(data_app, name="data")
app.add_typer(monitors_app, name="monitors")
environments_app = typer.Typer(no_args_is_help=True, help="List and describe the tool-calling environments for agents.")
app.add_typer(environments_app, name="environments")

# No markup: rewards, types ("list[str]"), paths and error messages hold brackets that are not style tags.
out = Console(highlight=False, markup=False)
err = Console(stderr=True, highlight=False, markup=False)

SpecOpt = Annotated[str, typer.Option("--rewards", "-r", help='reward spec, e.g. "accuracy:2, r1_strict_format:0.5"')]
JsonOpt = Annotated[bool, typer.Option("--json", help="print JSON instead of a table")]


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        print(f"grpo-host {version('grpo-host')}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="print the installed version and exit")] = False,
) -> None:
    pass


@rewards_app.command("list")
def rewards_list(as_json: JsonOpt = False) -> None:
    """Every installed reward, one line each: name, pack, the columns it needs, what it scores (details in show)."""
    from .discovery.catalog import reward_rows

    rows, warnings = reward_rows()
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    lines = [(row["name"], f"{row['pack']} {row['version']}", ", ".join(row["requires"]) or "-",
              _first_sentence(row["description"], 1 << 16)) for row in rows]
    for line in _one_line_each([("name", "pack", "needs", "scores"), *lines], shrink=2):  # types, params: `show`
        out.print(line, soft_wrap=True)
    for message in warnings:
        err.print(f"warning: {message}", style="yellow")


def _table(*columns: str, title: str | None = None) -> Table:
    """A table whose first column (a name) never wraps."""
    table = Table(title=title)
    for i, column in enumerate(columns):
        table.add_column(column, no_wrap=i == 0)
    return table


def _clip(text: str, limit: int = 70) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _first_sentence(text: str, limit: int = 90) -> str:
    first = " ".join(text.split()).split(". ")[0]
    return first if len(first) <= limit else first[: limit - 1] + "…"


@rewards_app.command("show")
def rewards_show(name: str) -> None:
    """A reward's exact scoring, columns, parameters and scored examples."""
    from .discovery.catalog import reward_row
    from .discovery.plugins import get_reward

    r = get_reward(name)
    turns = ", a value per assistant turn (turn_reward makes one number of them)" if r.per_turn else ""
    out.print(Text.assemble((r.name, "bold"), f"  (pack {r.pack} {r.version}; {'batch' if r.batch else 'per item'}, "
                            f"executor {r.executor}{f', timeout {r.timeout}s' if r.timeout else ''}{turns})\n"))
    out.print(_rewrapped(r.description) + "\n")
    row = reward_row(r)
    out.print("columns: " + (", ".join(f"{k} ({v})" for k, v in row["requires"].items()) or "none"))
    _print_params(row["params"])
    if r.examples:
        from .scoring.examples import score_example

        table = Table("completion", "columns", "score", title="examples")
        for ex in r.examples:
            # a group example shows its completions and one score each; params and a judge's reply are columns here
            cols = {k: v for k, v in ex.items() if k not in ("completion", "completions", "prompt", "score", "scores")}
            try:
                scores = score_example(r, ex)
                score = str(scores if "completions" in ex else scores[0])
            except Exception as exc:  # show, do not crash: this is documentation
                score = f"error: {exc}"
            shown = ex["completions"] if "completions" in ex else ex["completion"]
            table.add_row(_clip(repr(shown)), _clip(json.dumps(cols)) if cols else "", score)
        out.print(table)


@plugins_app.command("list")
def plugins_list(as_json: JsonOpt = False) -> None:
    """Installed packs: version, source, hooks, rewards, loaded/failed/disabled."""
    from .discovery.plugins import default_plugins

    records = default_plugins().records
    if as_json:
        print(json.dumps([rec.__dict__ for rec in records], indent=2))
        return
    lines = [(rec.name, f"{rec.dist} {rec.version}", rec.status,
              ", ".join(rec.rewards) or ", ".join(h.removeprefix("register_") for h in rec.hooks) or "-")
             for rec in records]
    for line in _one_line_each([("plugin", "distribution", "status", "provides"), *lines]):
        out.print(line, soft_wrap=True)
    for rec in records:  # why a pack failed, and its warnings, in full: they are what a user acts on
        if rec.error:
            err.print(f"{rec.name} ({rec.dist} {rec.version}) {rec.status}: {rec.error}", soft_wrap=True, style="red")
        for warning in rec.warnings:
            err.print(f"{rec.name}: {warning}", soft_wrap=True, style="yellow")


@data_app.command("check")
def data_check(
    data: Annotated[Path, typer.Argument(help="JSONL, JSON, CSV, Parquet file or a datasets folder")],
    rewards: SpecOpt,
    split: Annotated[str | None, typer.Option(help="split of a DatasetDict folder")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Check that every row carries what each chosen reward needs. Exit 0 clean, 1 problems."""
    from .data import check_rows, read_rows
    from .discovery.plugins import get_reward
    from .scoring.spec import parse_spec

    chosen = [get_reward(item.name).bind(item.params) for item in parse_spec(rewards)]
    report = check_rows(read_rows(data, split=split), chosen)
    if as_json:
        print(json.dumps(report.as_dict(), indent=2))
    elif report.ok:
        names = ", ".join(r.name for r in chosen)
        out.print(Text.assemble(("ok", "green"), f": {report.rows} rows carry what {names} need"))
    else:
        out.print(_problems_table(report, f"{data}: {report.rows} rows"))
    raise typer.Exit(0 if report.ok else 1)


@data_app.command("import")
def data_import(
    fmt: Annotated[str, typer.Argument(metavar="FORMAT", help="a format a pack registered: kattis, cms, ...")],
    folders: Annotated[list[Path], typer.Argument(metavar="FOLDER...", help="one problem package per folder")],
    out_path: Annotated[Path, typer.Option("--out", "-o", help="the JSONL file to write, one row per package")],
) -> None:
    """Read judges' problem packages (a Kattis package, a CMS task) into rows, one per folder. Exit 0 all read,
    1 a package was refused (named, with why; the others are written)."""
    from .discovery.plugins import default_plugins
    from .errors import DataError, OutputError

    importer = default_plugins().registry.importer(fmt)
    rows, refused = [], 0
    for folder in folders:
        try:
            row = importer.read(folder)
        except DataError as exc:
            refused += 1
            err.print(Text.assemble(("refused: ", "red"), str(exc)), soft_wrap=True)
            continue
        if row.get("statement", "") is None:
            err.print(f"{folder}: no statement text; the prompt is a placeholder (the row's `statement` is null)",
                      soft_wrap=True, style="yellow")
        rows.append(row)
    tmp = out_path.with_name(f".{out_path.name}.tmp")
    try:  # whole or not at all: a reader never sees half a file
        with tmp.open("w", encoding="utf-8") as f:
            for row in rows:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
        tmp.replace(out_path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise OutputError(f"{out_path}: cannot write ({exc.strerror or exc})") from None
    out.print(f"{out_path}: {len(rows)} rows from {fmt} packages ({importer.pack} {importer.version}), "
              f"{refused} refused")
    raise typer.Exit(1 if refused else 0)


@monitors_app.command("list")
def monitors_list(as_json: JsonOpt = False) -> None:
    """Every installed monitor: name, pack, the first sentence of its rule."""
    from .discovery.plugins import default_plugins

    registry = default_plugins().registry
    found = [registry.monitor(name) for name in registry.names("monitor")]
    if as_json:
        print(json.dumps([_monitor_row(m) for m in found], indent=2))
        return
    lines = [(m.name, f"{m.pack} {m.version}", _first_sentence(m.description, 1 << 16)) for m in found]
    for line in _one_line_each([("name", "pack", "watches"), *lines]):  # the exact rule and params in `show`
        out.print(line, soft_wrap=True)


@monitors_app.command("show")
def monitors_show(name: str) -> None:
    """A monitor's exact rule, thresholds and parameters."""
    from .discovery.plugins import default_plugins

    m = default_plugins().registry.monitor(name)
    out.print(Text.assemble((m.name, "bold"), f"  (pack {m.pack} {m.version})\n"))
    out.print(_rewrapped(m.description) + "\n")
    _print_params(_monitor_row(m)["params"])


@environments_app.command("list")
def environments_list(as_json: JsonOpt = False) -> None:
    """Every installed environment: name, pack, its tools, the columns it reads."""
    from .discovery.catalog import environment_rows

    rows, warnings = environment_rows()
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    lines = [(row["name"], f"{row['pack']} {row['version']}", ", ".join(t["call"] for t in row["tools"]))
             for row in rows]
    for line in _one_line_each([("name", "pack", "tools"), *lines]):  # details in `environments show`
        out.print(line, soft_wrap=True)
    for message in warnings:
        err.print(f"warning: {message}", style="yellow")


@environments_app.command("show")
def environments_show(name: str) -> None:
    """An environment's description, tools, limits, columns and parameters."""
    from .discovery.catalog import environment_rows

    rows, _ = environment_rows()
    row = next((r for r in rows if r["name"] == name), None)
    if row is None:
        available = ", ".join(r["name"] for r in rows) or "none (no pack registers one)"
        err.print(Text.assemble(("error:", "red"), f" unknown environment {name!r}; available: {available}"))
        raise typer.Exit(2)
    out.print(Text.assemble((row["name"], "bold"), f"  (pack {row['pack']} {row['version']})\n"))
    out.print(_rewrapped(row["description"]) + "\n")
    tools = _table("tool", "what it does", title="tools")
    for tool in row["tools"]:
        tools.add_row(tool["call"], tool["summary"])
    out.print(tools)
    limits = row["limits"]
    out.print(f"each call: at most {limits['timeout']:g} s, {limits['max_argument_chars']} characters of arguments, "
              f"{limits['max_output_chars']} of output; own reward: "
              f"{('yes, per turn' if row.get('per_turn') else 'yes') if row['reward'] else 'no'}")
    if row["requires"]:
        out.print("reads columns: " + ", ".join(f"{k} ({v})" for k, v in row["requires"].items()))
    _print_params(row["params"])


def _one_line_each(rows: Sequence[tuple[str, ...]], *, shrink: int | None = None, room: int = 30) -> list[str]:
    """Rows as aligned lines that never wrap: every column but the last padded to its widest cell, the last cut
    with an ellipsis at the terminal's width.  ``shrink``: a middle column whose cells are cut (down to 8
    characters) so that the last keeps ``room`` characters."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    width = max(out.width, 20)
    if shrink is not None:
        widths[shrink] = max(8, min(widths[shrink], width - room - sum(widths) + widths[shrink] - 2 * len(widths)))
        rows = [(*row[:shrink], _clip(row[shrink], widths[shrink]), *row[shrink + 1:]) for row in rows]
    lines = []
    for row in rows:
        # every cell but the last is padded (widths has one entry fewer than a row)
        line = "  ".join([cell.ljust(w) for cell, w in zip(row, widths, strict=False)] + [row[-1]]).rstrip()
        lines.append(line if len(line) <= width else line[: width - 1] + "…")
    return lines


def _rewrapped(description: str) -> str:
    """Single line breaks joined, so the terminal wraps the paragraphs."""
    return re.sub(r"(?<!\n)\n(?!\n)", " ", description)


def _print_params(schema: dict | None) -> None:
    """A parameter table (name, type, default, description) from a pydantic JSON schema; nothing without one."""
    props = (schema or {}).get("properties", {})
    if not props:
        return
    table = _table("parameter", "type", "default", "description", title="parameters")
    for key, prop in props.items():
        kind = prop.get("type") or " | ".join(map(str, prop.get("enum", []))) or json.dumps(prop.get("anyOf", ""))
        table.add_row(key, str(kind), json.dumps(prop.get("default")), prop.get("description", ""))
    out.print(table)


def _monitor_row(m) -> dict:
    return {"name": m.name, "pack": m.pack, "version": m.version, "description": m.description,
            "params": m.params.model_json_schema() if m.params else {}}


def _problems_table(report, title: str) -> Table:
    """A data check's problems: reward, column, problem, how many rows, the first of them."""
    table = _table("reward", "column", "problem", "rows", "first rows", title=title)
    for p in report.problems:
        table.add_row(p.reward, p.column, p.problem, str(p.count), ", ".join(p.rows))
    return table


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def _count_lines(path: Path) -> int | None:
    if path.suffix.lower() not in (".jsonl", ".ndjson") or not path.is_file():
        return None
    with path.open("rb") as f:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))


@app.command()
def score(
    data: Annotated[Path, typer.Argument(help="rows with a `completion` (text or chat messages) and their columns")],
    rewards: SpecOpt,
    out_text: Annotated[str | None, typer.Option(
        "--out", "-o", help="write one JSON line per row ('-': stdout); never over the input or a run's own files")
    ] = None,
    as_json: JsonOpt = False,
    batch_size: Annotated[int, typer.Option(min=1, help="rows scored per ensemble call")] = 256,
    workers: Annotated[int | None, typer.Option(min=1, help="worker processes for process-executor rewards")] = None,
    strict: Annotated[bool, typer.Option(
        help="a row that no reward scored (every reward timed out on it, or returned null) is an error")] = False,
    pool: Annotated[str, typer.Option(help="where process-executor rewards run: local (worker processes) or ray "
                                           "(actors on the Ray cluster RAY_ADDRESS names, or a local one)")] = "local",
    monitors: Annotated[str, typer.Option(help="monitors to run over the batches: all, none, or names a,b")] = "all",
    group_column: Annotated[str | None, typer.Option(
        help="column holding each row's group id (default: rows sharing a prompt are a group)")] = None,
    resume: Annotated[bool, typer.Option(
        "--resume", help="continue an interrupted --out file: keep its rows (checked against the input by row "
                         "number and content hash) and score the rest")] = False,
    record: Annotated[str, typer.Option(
        help="rollouts kept beside --out in <out>.rollouts/ (Parquet, for grpo-host report and rescore): "
             "all, sample (--record-sample per batch) or none")] = "all",
    record_sample: Annotated[int, typer.Option(min=1, help="rollouts kept per batch under --record sample")] = 16,
    turn_reward: Annotated[str, typer.Option(
        help="what a per-turn reward's value is: episode, sum or discounted:GAMMA (a run config's turn_reward)")
    ] = "episode",
) -> None:
    """Score completions offline and summarise per reward, with the monitors' metrics and alerts.

    Exit 1 when rows were bad, a reward failed on some or timed out on some (a verdict is missing); 130 when
    interrupted (SIGINT or SIGTERM), after which --resume continues the --out file."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from .discovery.build import Ensemble
    from .discovery.plugins import plugins_for
    from .errors import UserError
    from .kinds.monitor import MonitorSet, choose
    from .runs.guard import refuse_folder_name
    from .runs.nulls import NullRows
    from .runs.output import ScoreOutput, score_file
    from .scoring.spec import parse_spec
    if out_text is not None:
        refuse_folder_name(out_text, "--out", "scores.jsonl")
    out_path = Path(out_text) if out_text is not None else None
    settings = {"rewards": rewards, **({"turn_reward": turn_reward} if turn_reward != "episode" else {})}
    output = (ScoreOutput(out_path, data, resume=resume, settings=settings) if out_path not in (None, Path("-"))
              else None)
    if resume and output is None:
        raise UserError("--resume continues an interrupted --out file: name that file with --out")
    if output is not None:
        output.check()  # before anything loads or is opened for writing
    rule = _turn_rule(turn_reward)
    items = parse_spec(rewards)
    plugins = plugins_for([item.name for item in items], _monitor_names(monitors))
    ensemble = Ensemble.from_spec(items, plugins=plugins, strict=strict, workers=workers, pool=pool, turn_reward=rule)
    watch = MonitorSet(choose(monitors, plugins.registry, action="log"), quiet=1 << 30)
    progress = Progress(TextColumn("scoring"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                        console=err, transient=True, disable=not err.is_terminal)
    bad: list[str] = []
    nulls = NullRows(ensemble.members)

    def on_batch(lines: list[dict]) -> None:
        progress.advance(task, len(lines))
        bad.extend(f"{line['row']}: {line['error']}" for line in lines if "rewards" not in line)

    try:
        with ensemble, progress, sigterm_as_interrupt():
            task = progress.add_task("score", total=_count_lines(data), completed=output.done if output else 0)
            tally = score_file(data, ensemble, output or (sys.stdout if out_path == Path("-") else None),
                               batch_size=batch_size, monitors=watch, group_column=group_column,
                               record=record, record_sample=record_sample,  # type: ignore[arg-type]  # checked there
                               on_batch=on_batch, sinks=[nulls])
    except KeyboardInterrupt:
        kept = f": {out_path} keeps the rows scored so far; --resume continues it" if output is not None else ""
        err.print(Text.assemble(("interrupted", "red"), kept), soft_wrap=True)
        raise typer.Exit(130) from None
    if as_json:
        print(json.dumps(tally.summary(ensemble, [a.as_dict() for a in watch.alerts]), indent=2))
    else:
        _print_scores(f"{data}", tally, ensemble, err if out_path == Path("-") else out)
    _print_findings(watch.alerts, tally.errors, bad)
    for line in tally.timeout_lines():
        err.print(f"timed out: {line}", soft_wrap=True, style="yellow")
    for line in nulls.lines():
        err.print(f"note: {line}", soft_wrap=True, style="yellow")
    raise typer.Exit(1 if bad or tally.bad or tally.failed or tally.timeouts else 0)


def _monitor_names(monitors: str) -> list[str] | None:
    """The monitor names ``--monitors`` gives (None: all), read as :func:`grpo_host.kinds.monitor.choose` reads
    them, so that only the plugins holding them load."""
    if monitors == "all":
        return None
    return [] if monitors.strip() == "none" else [part.strip() for part in monitors.split(",") if part.strip()]


def _print_scores(data: str, tally: "Tally", ensemble: "Ensemble", console: Console) -> None:
    """``score``'s summary: a title paragraph, one line per reward, a line of counters per reward that has them."""
    stats = tally.per_reward()
    console.print(f"{data}: {tally.rows - tally.bad} rows scored, {tally.bad} bad, {tally.failed} failed, "
                  f"{tally.unscored} unscored")  # a paragraph, wrapped at the terminal's width; the figures never are
    lines = [("reward", "weight", "mean", "std", "coverage", "errors", "timeouts", "seconds")]
    for name, weight in zip(ensemble.names, ensemble.weights, strict=True):
        s = stats[name]
        lines.append((name, _fmt(weight), _fmt(s["mean"]), _fmt(s["std"]), f"{s['coverage']:.0%}",
                      str(s["errors"]), str(s["timeouts"]), _fmt(s["seconds"])))
    for line in _one_line_each(lines):
        console.print(line, soft_wrap=True)
    for name in ensemble.names:  # a reward's own counters, one line each: they vary in number and width
        if stats[name]["counts"]:
            console.print(f"{name} counts: " + ", ".join(f"{k} {_fmt(v)}" for k, v in stats[name]["counts"].items()),
                          soft_wrap=True)


def _print_findings(alerts: "Sequence[Alert]", errors: list[str], bad: list[str]) -> None:
    """``score``'s warnings on stderr: the monitors' alerts, the first reward failures, the first bad rows."""
    for alert in alerts:
        rows_seen = f" (e.g. {', '.join(map(str, alert.rows))})" if alert.rows else ""
        err.print(f"{alert.severity}: monitor {alert.monitor} at batch {alert.step}: {alert.message}{rows_seen}",
                  soft_wrap=True, style="yellow")
    for message in errors:
        err.print(f"failed: {message}", soft_wrap=True, style="yellow")
    for message in bad[:10]:
        err.print(f"bad row: {message}", soft_wrap=True, style="red")
    if len(bad) > 10:
        err.print(f"... and {len(bad) - 10} more bad rows", style="red")


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM (a scheduler's stop, ``kill``) handled as Ctrl-C, so a stopped ``score`` keeps what it wrote and
    says how to continue, the same way in both cases."""
    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@app.command()
def rescore(
    run_dir: Annotated[Path, typer.Argument(help="a run folder, or a score --out file, with its rollout record")],
    rewards: Annotated[str | None, typer.Option(
        "--rewards", "-r", help="reward spec to re-score with (default: the run's config.yaml rewards)")] = None,
    workers: Annotated[int | None, typer.Option(min=1, help="worker processes for process-executor rewards")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Re-score a run's recorded rollouts with the rewards installed now: changed verdicts per reward and per
    step, advantages that changed sign, and the errors and timeouts of each reward now. Exit 0 nothing changed,
    1 some verdicts or signs changed, 130 interrupted (SIGINT or SIGTERM; nothing is written: run it again)."""
    from .errors import ConfigError, UserError
    from .runs.rescore import rescore as run_rescore
    from .runs.rescore import run_plugins, run_rewards, run_turn_reward

    try:
        plugins = run_plugins(run_dir)
    except ConfigError as exc:
        raise UserError(f"{run_dir}/config.yaml: {exc}") from None
    spec = rewards if rewards is not None else run_rewards(run_dir)
    try:
        with sigterm_as_interrupt():  # the ensemble's worker processes end with it, before the line below
            found = run_rescore(run_dir, spec, workers=workers, plugins=plugins, turn_reward=run_turn_reward(run_dir))
    except KeyboardInterrupt:
        err.print(Text.assemble(("interrupted", "red"), f": rescore of {run_dir} stopped; it writes nothing, "
                                "so run it again to re-score the record"), soft_wrap=True)
        raise typer.Exit(130) from None
    changed = sum(r["changed"] for r in found["rewards"].values())
    if as_json:
        print(json.dumps(found, indent=2))
    else:
        out.print(f"{run_dir}: {found['rollouts']} rollouts re-scored; {found['advantage_sign_changed']} "
                  "advantages changed sign")  # wrapped at the terminal's width, as a paragraph
        lines = [("reward", "changed", "of", "errors now", "timeouts now")] + [
            (name, str(r["changed"]), str(r["compared"]), str(r["errors"]), str(r["timeouts"]))
            for name, r in found["rewards"].items()]
        lines += [(name, "new", "-", str(r["errors"]), str(r["timeouts"])) for name, r in found["new_rewards"].items()]
        for line in _one_line_each(lines):
            out.print(line, soft_wrap=True)
        moved = [s for s in found["steps"] if s["advantage_sign_changed"] or any(s["changed"].values())]
        if moved:
            out.print(f"steps with changes: {len(moved)} of {len(found['steps'])}", soft_wrap=True)
            rows = [("step", "rollouts", "sign changes", "verdicts changed")] + [
                (str(s["step"]), str(s["rollouts"]), str(s["advantage_sign_changed"]),
                 ", ".join(f"{n} {k}" for n, k in s["changed"].items() if k) or "-") for s in moved[:20]]
            for line in _one_line_each(rows):
                out.print(line, soft_wrap=True)
            if len(moved) > 20:
                out.print(f"... and {len(moved) - 20} more steps (--json lists them all)", soft_wrap=True)
        if found["not_rescored"]:
            out.print(f"recorded but not re-scored: {', '.join(found['not_rescored'])}", soft_wrap=True)
        for name, r in {**found["rewards"], **found["new_rewards"]}.items():
            if r["timeouts"]:
                out.print(f"{name} now times out on {r['timeouts']} of {found['rollouts']} rollouts", soft_wrap=True)
        for message in found["failures"]:
            err.print(f"failed: {message}", soft_wrap=True, style="yellow")
        shown = sum(r["errors"] for r in {**found["rewards"], **found["new_rewards"]}.values())
        if shown > len(found["failures"]):
            err.print(f"... and {shown - len(found['failures'])} more failures", style="yellow")
    raise typer.Exit(1 if changed or found["advantage_sign_changed"] else 0)


@app.command()
def report(
    run_dir: Annotated[Path, typer.Argument(help="a run folder, or a score --out file, with its rollout record")],
    out_text: Annotated[str | None, typer.Option(
        "--out", "-o", help="the HTML file (default: RUN_DIR/report.html, or <out>.report.html beside a file); "
                            "never what it reads or a run's own files")] = None,
    rollouts: Annotated[int, typer.Option(min=1, help="sampled rollouts in the table")] = 300,
) -> None:
    """One self-contained HTML page (plots and sampled rollouts; opens with no network) of a run or a score."""
    from .runs.guard import refuse_folder_name
    from .runs.report import write_report

    if out_text is not None:
        refuse_folder_name(out_text, "report -o", "report.html")
    written = write_report(run_dir, out_text, rollouts=rollouts)
    out.print(f"wrote {written}", soft_wrap=True)


@app.command()
def audit(
    data: Annotated[Path, typer.Argument(help="the training rows: JSONL, JSON, CSV, Parquet or a datasets folder")],
    rewards: SpecOpt,
    sample: Annotated[int, typer.Option(min=1, help="rows audited, a uniform sample of the file")] = 200,
    probe_rows: Annotated[int, typer.Option(min=1, help="rows of the sample each exploit probe is tried on "
                                                        "(the reference check runs on all)")] = 128,
    split: Annotated[str | None, typer.Option(help="split of a DatasetDict folder")] = None,
    seed: Annotated[int, typer.Option(help="seed of the row sample")] = 0,
    workers: Annotated[int | None, typer.Option(min=1, help="worker processes for process-executor rewards")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Try to game the rewards on the data before training: the references must earn full marks, and no probe
    (empty, echo, every option, hedges, tag stuffing, early exit, judge injection, ...) may earn more than an empty
    completion. Exit 0 no finding, 1 findings (the table says what to fix), 2 the audit could not run
    (docs/audit.md)."""
    from .audit import audit_file

    with _stdout_to_stderr():  # a reward's prints, inline or in a worker, must not land in the table or the JSON
        report = audit_file(data, rewards, split=split, sample=sample, seed=seed, workers=workers,
                            probe_rows=probe_rows)
    if as_json:
        print(json.dumps(report.as_dict(), indent=2))
    else:
        for line in report.lines(max(80, out.width)):
            out.print(line, soft_wrap=True, style="red" if line.startswith("FAIL") else None)
    raise typer.Exit(0 if report.ok else 1)


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """Within the block, what is written to stdout (``print``, ``sys.stdout``, file descriptor 1, and the processes
    started meanwhile, which inherit it) goes to stderr; stdout is the command's own output."""
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no file descriptor 1 (a notebook's captured output): Python's prints at least
        with contextlib.redirect_stdout(sys.stderr):
            yield
        return
    try:
        os.dup2(2, 1)
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def main() -> None:
    app()


@app.command("new-plugin")
def new_plugin(
    name: Annotated[str, typer.Argument(help="distribution name of the new pack, e.g. grpo-rewards-chess")],
    directory: Annotated[
        Path | None, typer.Option("--dir", help="directory to create (default: ./NAME); must not exist or be empty")
    ] = None,
    reward_name: Annotated[
        str | None, typer.Option("--reward", help="name of the example reward (default: <module>_contains_answer)")
    ] = None,
    no_input: Annotated[bool, typer.Option("--no-input", help="ask nothing: default description, no author")] = False,
    monitor_name: Annotated[
        str | None, typer.Option("--monitor", help="also render an example run monitor of this name")] = None,
    environment_name: Annotated[
        str | None, typer.Option("--environment", help="also render an example tool-calling environment of this name")
    ] = None,
) -> None:
    """Render plugin_template into a new reward pack: entry point, example reward, tests, CI workflow."""
    from .runs.guard import refuse_overwrite
    from .scaffold import render_pack

    if directory is not None:
        refuse_overwrite(directory, "new-plugin --dir")  # not in a run's record or checkpoint, not a score output
    target = render_pack(name, directory, reward=reward_name, monitor=monitor_name, environment=environment_name,
                         interactive=not no_input)
    out.print(Text.assemble(("created", "green"), f" {target}"))
    out.print(f"next:\n  cd {target}\n  pip install -e '.[test]'\n  grpo-host rewards list\n  pytest")


@app.command()
def train(
    config: Annotated[Path, typer.Argument(help="run configuration (YAML); see docs/training.md")],
    backend: Annotated[str | None, typer.Option(help="training backend: trl or mlx (overrides the config)")] = None,
    overrides: Annotated[
        list[str] | None, typer.Option("--set", help="override a config key: --set learning_rate=1e-5 --set lora.r=8")
    ] = None,
) -> None:
    """Train with GRPO: check the data, run the chosen backend, save the model and a summary.

    Exit 0 trained, 1 the data has problems (the check failed before any model was loaded, a prompt is too
    long, or with audit: stop the audit found a way to game the rewards), 2 the run could not start,
    3 a monitor with action stop ended it (after a checkpoint).
    """
    from .runs.guard import refuse_run_over
    from .training.config import load_config
    from .training.train import train as run_training

    settings = load_config(config, overrides or [], backend=backend)
    refuse_run_over(settings.output_dir, f"config key 'output_dir' ({settings.output_dir!r})",
                    [(config, "the run configuration")])  # the rest it reads: checked with the folder (preflight)
    summary = run_training(settings)
    from .distributed import is_main_process

    if not is_main_process():  # one summary for an accelerate launch / mlx.launch run, not one per process
        return
    table = _table("reward", "first mean", "last mean",
                   title=f"{summary.steps} steps in {summary.seconds:.1f}s ({summary.backend}) -> {summary.output_dir}")
    for name, values in summary.rewards.items():
        table.add_row(name, _fmt(values["first"]), _fmt(values["last"]))
    out.print(table)
    for alert in summary.alerts:  # each episode once, printed when it started: here how long it lasted
        if alert["batches"] > 1 and alert["severity"] != "info":
            err.print(f"{alert['severity']}: monitor {alert['monitor']} fired on {alert['batches']} batches "
                      f"({alert['step']} to {alert['last_step']}): {alert['message']}", soft_wrap=True)


def _turn_rule(text: str) -> Any:
    """``--turn-reward``'s :class:`~grpo_host.scoring.turns.TurnRule`; a bad rule is an error naming the option."""
    from .errors import UserError
    from .scoring.turns import TurnRule

    try:
        return TurnRule.parse(text)
    except ValueError as exc:
        raise UserError(f"--turn-reward: {exc}") from None


@app.command("eval")
def eval_(
    model: Annotated[str, typer.Argument(help="a model folder, builtin:tiny, a run or its checkpoint-N, or an "
                                              "OpenAI-compatible endpoint (http://host:port/v1)")],
    data: Annotated[Path, typer.Argument(help="the prompts: JSONL, JSON, CSV, Parquet file or a datasets folder")],
    rewards: Annotated[str | None, typer.Option(
        "--rewards", "-r", help='reward spec, e.g. "accuracy:2, r1_strict_format:0.5" (default: a run\'s own)')] = None,
    k: Annotated[int, typer.Option("-k", min=1, help="samples per prompt")] = 4,
    out_dir: Annotated[Path | None, typer.Option(
        "--out", "-o", help="the evaluation's folder: eval.json and the rollout record (default: evals/<model>)")
    ] = None,
    resume: Annotated[bool, typer.Option("--resume", help="continue an interrupted evaluation in --out: only the "
                                                          "prompts it lacks are generated")] = False,
    as_json: JsonOpt = False,
    plugins: Annotated[list[str] | None, typer.Option(
        "--plugins", help="a reward module to load besides the installed packs (.py path or dotted name; "
                          "repeatable; default: a run's own)")] = None,
    backend: Annotated[str | None, typer.Option(help="generate with trl (transformers) or mlx (default: a run's "
                                                     "backend, else trl)")] = None,
    threshold: Annotated[list[str] | None, typer.Option(
        help="the value a sample must reach to pass: VALUE for every reward, or NAME=VALUE (NAME a reward or "
             "total); default 1.0, the total's the weighted sum")] = None,
    temperature: Annotated[float | None, typer.Option(min=0, help="sampling temperature (default: the run's, 1.0)")
                           ] = None,
    top_p: Annotated[float | None, typer.Option(min=0, max=1, help="nucleus mass (default: the run's, 1.0)")] = None,
    top_k: Annotated[int | None, typer.Option(min=0, help="top-k, 0 off (default: the run's, 0)")] = None,
    min_p: Annotated[float | None, typer.Option(min=0, max=1, help="min-p, 0 off (default: the run's, 0)")] = None,
    max_completion_length: Annotated[int | None, typer.Option(
        min=1, help="tokens per completion at most (default: the run's, 256)")] = None,
    seed: Annotated[int | None, typer.Option(help="sampling seed (default: the run's, 42)")] = None,
    batch_size: Annotated[int, typer.Option(min=1, help="prompts generated, scored and recorded at a time")] = 8,
    concurrency: Annotated[int, typer.Option(min=1, help="requests in flight to an endpoint")] = 16,
    served_model: Annotated[str | None, typer.Option(
        help="the endpoint's model name (default: the first at /models)")] = None,
    api_key_env: Annotated[str, typer.Option(
        help="environment variable holding the endpoint's API key (unset: none sent)")] = "OPENAI_API_KEY",
    device: Annotated[str | None, typer.Option(help="torch device (default: cuda when there is one, else cpu)")
                      ] = None,
    workers: Annotated[int | None, typer.Option(min=1, help="worker processes for process-executor rewards")] = None,
    environment: Annotated[str | None, typer.Option(
        help="each sample an episode in this environment, NAME or NAME(key=value, ...), scored with its own reward "
             "too (default: a run's own)")] = None,
    max_tool_calls: Annotated[int | None, typer.Option(
        min=0, help="tool-calling rounds per episode at most (default: a run's, else unbounded)")] = None,
    turn_reward: Annotated[str | None, typer.Option(
        help="what a per-turn reward's value is: episode, sum or discounted:GAMMA (default: a run's, else episode)")
    ] = None,
) -> None:
    """Measure a model with rewards: k samples per prompt (or k episodes in an environment), scored by the ensemble,
    pass@k and mean@k with 95 % intervals per reward (docs/eval.md). The data check runs first. Exit 1 the data has
    problems, 130 interrupted (--resume continues)."""
    from .training.eval_episodes import environment_option
    from .training.evaluate import EvalSettings, evaluate, shown, threshold_options

    if turn_reward is not None:
        _turn_rule(turn_reward)  # a bad rule is an error naming the option, before anything loads
    settings = EvalSettings(model, str(data), rewards, k, str(out_dir) if out_dir else None, resume, plugins or [],
                            backend, threshold_options(threshold or []), temperature, top_p, top_k, min_p,
                            max_completion_length, seed, batch_size, concurrency, served_model, api_key_env, device,
                            workers, environment_option(environment) if environment else None, max_tool_calls,
                            turn_reward)
    with _eval_progress() as progress:
        try:
            with sigterm_as_interrupt():
                found = evaluate(settings, progress=progress)
        except KeyboardInterrupt:
            err.print(Text.assemble(("interrupted", "red"), ": the prompts scored so far are kept; --resume "
                                     "continues"), soft_wrap=True)
            raise typer.Exit(130) from None
    if as_json:
        print(json.dumps(found, indent=2))
        return
    out.print(f"{found['model']} on {found['data']}: {found['prompts']} prompts x {found['k']} samples; "
              f"{found['interval']}; -> {found['out']}")
    keys = list(dict.fromkeys(("mean@k", "pass@1", f"pass@{found['k']}")))  # k = 1: one pass@1 column
    lines = [("reward", *keys)] + [(name, *(shown(m[key]) for key in keys)) for name, m in found["metrics"].items()]
    for line in _one_line_each(lines):
        out.print(line, soft_wrap=True)


@contextlib.contextmanager
def _eval_progress() -> Iterator[Any]:
    """``eval``'s bars on stderr (generation and scoring, in prompts), and the callback that advances them."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    bars = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                    console=err, transient=True, disable=not err.is_terminal)
    tasks = {phase: bars.add_task(phase, total=None) for phase in ("generated", "scored")}

    def advance(phase: str, prompts: int) -> None:
        if phase == "total":
            for task in tasks.values():
                bars.update(task, total=prompts)
        else:
            bars.advance(tasks[phase], prompts)

    with bars:
        yield advance


@app.command()
def serve(
    rewards: SpecOpt,
    host: Annotated[str, typer.Option(help="address to listen on (0.0.0.0: every interface)")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535, help="port to listen on (1-65535)")] = 8000,
    concurrency: Annotated[int | None, typer.Option(
        min=1, help="ensembles scoring micro-batches at once (default: cores, at most 4)")] = None,
    backlog: Annotated[int, typer.Option(
        min=0, help="rows that may wait; past that /score is 429, /get_reward rows score 0.0 (dropped)")] = 65536,
    deadline: Annotated[float, typer.Option(
        min=0.001, help="seconds from a request's first byte within which it is answered")] = 120.0,
    max_body_mb: Annotated[float, typer.Option(min=0.0001, help="largest request body in MiB (413 past it)")] = 128.0,
    max_rows: Annotated[int, typer.Option(min=1, help="most rows in one request (413 past it)")] = 65536,
    batch_rows: Annotated[int, typer.Option(min=1, help="most rows in one micro-batch")] = 256,
    batch_window_ms: Annotated[float, typer.Option(min=0, help="milliseconds a micro-batch waits for more rows")] = 5.0,
    tokenizer: Annotated[str | None, typer.Option(
        help="tokenizer (path or hub id) whose EOS/pad strings are stripped")] = None,
    end_token: Annotated[list[str] | None, typer.Option(
        help="a string stripped from the end of responses (repeatable)")] = None,
    header_timeout: Annotated[float, typer.Option(
        min=0.001, help="seconds a request's headers may take (408 past it)")] = 10.0,
    body_timeout: Annotated[float, typer.Option(
        min=0.001, help="seconds a request's body may take (408 past it)")] = 60.0,
    token_env: Annotated[str, typer.Option(
        help="environment variable holding the bearer token (unset: no token)")] = "GRPO_HOST_SERVE_TOKEN",
    workers: Annotated[int | None, typer.Option(min=1, help="worker processes per concurrent request")] = None,
    pool: Annotated[str, typer.Option(help="where process-executor rewards run: local or ray")] = "local",
    strict: Annotated[bool, typer.Option(help="a row that no reward scored fails its request")] = False,
) -> None:
    """Serve an ensemble over HTTP: /get_reward (OpenRLHF), /verify (NeMo Gym), /score, /check, /rewards, /health.

    What each takes and answers is in docs/scaling.md.

    Runs until SIGTERM or Ctrl-C, then answers the requests in flight before it exits.
    """
    try:
        import uvicorn  # noqa: F401  (the extra's server, checked before any reward loads)

        from .serving.server import ServeSettings
        from .serving.server import serve as run_server
    except ImportError as exc:
        err.print(Text.assemble(("error:", "red"), f" {exc.name} is not installed: pip install 'grpo-host[serve]'"))
        raise typer.Exit(2) from None
    from .scoring.special_tokens import end_tokens

    tokens = end_tokens(tokenizer, end_token or ()) if tokenizer or end_token else None
    settings = ServeSettings(backlog=backlog, deadline=deadline, max_body=int(max_body_mb * 1024 * 1024),
                             max_rows=max_rows, batch_rows=batch_rows, batch_window=batch_window_ms / 1000,
                             end_tokens=tokens, header_timeout=header_timeout, body_timeout=body_timeout,
                             token_env=token_env, workers=workers, pool=pool)
    if concurrency is not None:
        settings.concurrency = concurrency
    run_server(rewards, host=host, port=port, settings=settings, strict=strict)
