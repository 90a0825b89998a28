"""Loading rows, normalising them, and checking them against the chosen rewards.

Datasets arrive in many shapes (chat ``messages``, ``prompt`` strings or
message lists, Alpaca's ``instruction``/``input``/``output``, GSM8K's
``question``) and formats (JSONL, JSON, CSV, Parquet, a ``datasets`` folder).
Everything downstream sees one shape: a dict with ``prompt`` (string or
message list), ``answer`` when the data implies one, and every other column
as it was.  Rows are streamed, so checking a large file keeps memory flat.
"""

from __future__ import annotations

import codecs
import csv
import json
import math
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import DataError
from .scoring.contract import Column, Reward

__all__ = ["CheckReport", "Problem", "check_rows", "completion_problem", "missing_column", "normalize",
           "prime_code_tests", "read_rows"]

PROMPT_KEYS = ("messages", "prompt", "instruction", "question")
MAX_EXAMPLE_ROWS = 5
MAX_ROW_CHECK_KINDS = 50


MAX_CSV_FIELD = 64 << 20
"""The largest CSV cell, in characters: the stdlib's 128 KiB default refused legal long completions and
documents, so it is raised to the size of a row the other formats read without complaint (64 MiB)."""

_fast_loads: Callable[[bytes | str], Any]
try:
    from orjson import loads as _orjson_loads

    _fast_loads = _orjson_loads
except ImportError:  # orjson is a dependency, but a stdlib fallback keeps vendored installs working
    _fast_loads = json.loads

_LONG_NUMBER = re.compile(rb"\d{19,}")
"""19 digits in a row may be an integer beyond 64 bits, which orjson reads as a float (a gold of 10^29 + 1 would
equal 10^29); such text is read by the stdlib, whose integers are exact."""
_DIGITS = b"0123456789"


def _may_hold_long_number(data: bytes) -> bool:
    """:data:`_LONG_NUMBER` in ``data``, looked for only where it holds 19 digits at all (counted in C, so the
    common short row costs one pass and no regular expression)."""
    return len(data) - len(data.translate(None, _DIGITS)) >= 19 and _LONG_NUMBER.search(data) is not None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    """A JSON number as a float, refused when it overflows (as orjson refuses ``1e400``)."""
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"number {text[:40]} is infinity when parsed as double")
    return value


MAX_DEPTH = 128
"""The deepest nesting of lists and objects a row may have.  Rows are pickled to worker processes, hashed and
written back as JSON, all of which recurse: a hostile row nested thousands deep would crash them, so it is a
bad row at read time instead (real rows, chat messages with content parts included, nest a few levels)."""


def _loads(data: bytes) -> Any:
    """JSON text as Python values, integers exact at any size (orjson's speed where no long number appears)."""
    try:
        if _may_hold_long_number(data):
            return json.loads(data, parse_constant=_no_constant, parse_float=_finite_float)
        return _fast_loads(data)
    except RecursionError:
        raise ValueError(f"nested more than {MAX_DEPTH} levels deep") from None


def _checked(where: str, row: Any, text: bytes) -> Any:
    """``row``, or a :class:`DataError` in its place when it nests deeper than :data:`MAX_DEPTH`; walked only
    when its ``text`` (the row's, or the whole file's) opens that many brackets at all."""
    if text.count(b"[") + text.count(b"{") > MAX_DEPTH and _deeper_than(row, MAX_DEPTH):
        return DataError(where, f"nested more than {MAX_DEPTH} levels deep")
    return row


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether lists and dicts in ``value`` nest more than ``limit`` levels (walked without recursion)."""
    stack = [(value, 1)] if isinstance(value, dict | list) else []
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = node.values() if isinstance(node, dict) else node
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def _messages_ok(value: Any) -> bool:
    """A list of ``{role, content}`` messages whose roles are text and whose contents are text, parts or None."""
    return isinstance(value, list) and all(
        isinstance(m, dict) and "content" in m and _message_problem(m) is None for m in value)


def _message_problem(message: Any) -> str | None:
    """Why ``message`` is not a chat message (a text role; text, text parts or None as content), or None."""
    if not (isinstance(message, Mapping) and isinstance(message.get("role"), str)):
        return "is not a {role, content} object"
    content = message.get("content")
    parts_ok = isinstance(content, list) and all(
        isinstance(p, Mapping) and isinstance(p.get("text", ""), str) for p in content)
    if not (content is None or isinstance(content, str) or parts_ok):
        return "has content that is not text"
    return None


def completion_problem(value: Any) -> str | None:
    """Why ``value`` cannot be a completion (text, or chat messages whose last assistant turn is the text), or None.

    Checked while rows are normalised, so a number, a bool or a bare message
    object in the ``completion`` column is that row's error in ``score``,
    ``serve`` and ``data check`` alike, never a crash of the batch it is in.
    """
    if value is None or isinstance(value, str):
        return None
    if not isinstance(value, list):
        return f"'completion' must be text or a list of chat messages, got {type(value).__name__}"
    for i, message in enumerate(value):
        problem = _message_problem(message)
        if problem:
            return f"'completion' message {i} {problem}"
    if value and not any(m["role"] == "assistant" for m in value):
        return "'completion' holds no assistant message"
    return None


def normalize(raw: Mapping[str, Any], where: str = "row", *, require_prompt: bool = True) -> dict[str, Any]:
    """Return the row in the common shape, or raise :class:`DataError` naming ``where``.

    ``require_prompt=False`` (scoring completions offline with rewards that
    read no prompt) lets a row without any prompt column through, with
    ``prompt`` None.

    * ``messages``: a final assistant turn is dropped from the prompt and
      becomes ``answer`` when the row has none; earlier turns stay.
    * ``prompt``: a string or a message list, kept.
    * ``instruction`` (+ ``input``): joined by a blank line; ``output`` becomes
      ``answer`` when the row has none.
    * ``question``: becomes the prompt.
    * ``completion``, when present, must be text or chat messages
      (:func:`completion_problem`).
    """
    if not isinstance(raw, Mapping):
        raise DataError(where, f"expected an object with named columns, got {type(raw).__name__}")
    row = dict(raw)
    problem = completion_problem(row.get("completion"))
    if problem:
        raise DataError(where, problem)
    if "prompt" in row and row["prompt"] is not None:
        prompt = row["prompt"]
        if not (isinstance(prompt, str) or _messages_ok(prompt)):
            raise DataError(where, "'prompt' must be a string or a list of {role, content} messages with text contents")
    elif row.get("messages") is not None:
        messages = row["messages"]
        if not _messages_ok(messages):
            raise DataError(where, "'messages' must be a list of {role, content} messages with text contents")
        if messages and messages[-1]["role"] == "assistant":
            if row.get("answer") in (None, ""):
                row["answer"] = messages[-1]["content"]
            messages = messages[:-1]
        row["prompt"] = messages
    elif row.get("instruction") is not None:
        extra = row.get("input")
        row["prompt"] = f"{row['instruction']}\n\n{extra}" if extra else str(row["instruction"])
        if row.get("answer") in (None, "") and row.get("output") is not None:
            row["answer"] = row["output"]
    elif row.get("question") is not None:
        row["prompt"] = row["question"]
    elif not require_prompt:
        row["prompt"] = None
        return row
    else:
        has = ", ".join(sorted(row)) or "no columns"
        raise DataError(where, f"no prompt: expected one of {', '.join(PROMPT_KEYS)} (row has: {has})")
    if not row["prompt"]:
        raise DataError(where, "the prompt is empty")
    return row


BOM = codecs.BOM_UTF8
"""What editors on Windows (and Excel's "CSV UTF-8") put before the first line: not part of the data."""


def _read_jsonl(path: Path) -> Iterator[tuple[str, Any]]:
    with path.open("rb") as f:
        for lineno, line in enumerate(f, 1):
            if lineno == 1:
                line = line.removeprefix(BOM)
            if not line.strip():
                continue
            try:
                yield f"line {lineno}", _checked(f"line {lineno}", _loads(line), line)
            except ValueError as exc:
                yield f"line {lineno}", DataError(f"line {lineno}", f"invalid JSON: {exc}")


def _read_json(path: Path) -> Iterator[tuple[str, Any]]:
    try:
        text = path.read_bytes().removeprefix(BOM)
        data = _loads(text)
    except ValueError as exc:
        raise DataError(str(path), f"invalid JSON: {exc}") from None
    if isinstance(data, Mapping) and isinstance(data.get("data"), list):
        data = data["data"]
    if not isinstance(data, list):
        raise DataError(str(path), "a .json dataset must be a list of row objects (or {\"data\": [...]})")
    for i, row in enumerate(data, 1):
        yield f"row {i}", _checked(f"row {i}", row, text)


def _read_csv(path: Path) -> Iterator[tuple[str, Any]]:
    csv.field_size_limit(MAX_CSV_FIELD)
    i, start = 0, 2  # the header is line 1
    try:
        with path.open(newline="", encoding="utf-8-sig") as f:  # -sig: a leading BOM is not the header's
            reader = csv.DictReader(f, strict=True)  # strict: a stray or unclosed quote is an error, not a merge
            for i, row in enumerate(reader, 1):
                if None in row:
                    yield f"row {i}", DataError(f"row {i}", "more cells than header columns")
                else:
                    yield f"row {i}", row
                start = reader.line_num + 1
    except UnicodeDecodeError as exc:  # the rows before it were read; CSV has no line to resume from
        raise DataError(str(path), f"not UTF-8 text after row {i} ({exc.reason} at byte {exc.start} of a read); "
                                   "save the file as UTF-8") from None
    except csv.Error as exc:
        where = f"row {i + 1} (from line {start})"
        if "unexpected end of data" in str(exc):
            raise DataError(str(path), f"{where}: a quoted cell opens there and its closing quote never comes; "
                                       "close the quote (a quote inside a cell is written twice: \"\")") from None
        raise DataError(str(path), f"{where} is not readable as CSV: {exc}") from None


def _read_parquet(path: Path) -> Iterator[tuple[str, Any]]:
    import pyarrow.parquet as pq

    i = 0
    try:
        for batch in pq.ParquetFile(path).iter_batches(batch_size=4096):
            for row in batch.to_pylist():
                i += 1
                yield f"row {i}", row
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid and ArrowIOError are these
        raise DataError(str(path), f"not readable as Parquet after row {i}: {exc}") from None


def _read_datasets_folder(path: Path, split: str | None) -> Iterator[tuple[str, Any]]:
    from datasets import DatasetDict, load_from_disk

    ds = load_from_disk(str(path))
    if isinstance(ds, DatasetDict):
        name = split or ("train" if "train" in ds else next(iter(ds)))
        if name not in ds:
            raise DataError(str(path), f"no split {name!r}; splits: {', '.join(ds)}")
        ds = ds[name]
    for i, row in enumerate(ds, 1):
        yield f"row {i}", row


READERS: dict[str, Callable[[Path], Iterator[tuple[str, Any]]]] = {
    ".jsonl": _read_jsonl,
    ".ndjson": _read_jsonl,
    ".json": _read_json,
    ".csv": _read_csv,
    ".parquet": _read_parquet,
}


def read_rows(path: str | Path, *, split: str | None = None) -> Iterator[tuple[str, Any]]:
    """Yield ``(where, raw_row)`` pairs; a row that could not be read is a :class:`DataError` in place of the row."""
    path = Path(path)
    if path.is_dir():
        return _os_errors_named(path, _read_datasets_folder(path, split))
    if not path.exists():
        raise FileNotFoundError(f"no such dataset: {path}")
    reader = READERS.get(path.suffix.lower())
    if reader is None:
        raise DataError(str(path),
                        f"unknown format {path.suffix!r}; use one of {', '.join(READERS)} or a datasets folder")
    return _os_errors_named(path, reader(path))


def _os_errors_named(path: Path, rows: Iterator[tuple[str, Any]]) -> Iterator[tuple[str, Any]]:
    """``rows``, with a read that fails (no permission, a device error, the file gone) as a :class:`DataError`
    naming the file."""
    try:
        yield from rows
    except OSError as exc:
        raise DataError(str(path), f"cannot be read: {exc.strerror or exc}") from None


def missing_column(row: Mapping[str, Any], rewards: Iterable[Reward]) -> str | None:
    """The first required column ``row`` lacks, as a message naming reward and column; None when it has them all."""
    for r in rewards:
        for col in r.requires:
            problem = col.problem(row)
            if problem:
                return f"reward {r.name!r} needs column {problem[0]!r}: {problem[1]}"
    return None


@dataclass
class Problem:
    """One kind of problem, aggregated over rows."""

    reward: str
    column: str
    problem: str
    count: int = 0
    rows: list[str] = field(default_factory=list)

    def add(self, where: str) -> None:
        self.count += 1
        if len(self.rows) < MAX_EXAMPLE_ROWS:
            self.rows.append(where)


@dataclass
class CheckReport:
    """The result of :func:`check_rows`: rows seen, problems found, seconds spent."""

    rows: int = 0
    problems: list[Problem] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "rows": self.rows,
            "seconds": round(self.seconds, 3),
            "problems": [p.__dict__ for p in self.problems],
        }

    def __str__(self) -> str:
        if self.ok:
            return f"{self.rows} rows: ok"
        lines = [f"{self.rows} rows: {sum(p.count for p in self.problems)} problems"]
        lines += [
            f"  reward {p.reward!r}, column {p.column!r}: {p.problem} in {p.count} rows (first: {', '.join(p.rows)})"
            for p in self.problems
        ]
        return "\n".join(lines)


def check_rows(
    rows: Iterable[tuple[str, Any]], rewards: Iterable[Reward], *, extra_columns: Iterable[str] = (),
    keep: list[tuple[str, dict[str, Any]]] | None = None,
) -> CheckReport:
    """Check every row against every reward's required columns and row check.

    ``rows`` are ``(where, raw_row)`` pairs as :func:`read_rows` yields them;
    unreadable and prompt-less rows are problems of the pseudo-reward ``-``.
    ``extra_columns`` must be present too (``completion`` when scoring).
    Only counts and the first few row labels are kept, so memory stays flat;
    ``keep``, when given, receives every normalised row as ``(where, row)``
    (a run that trains on the rows need not normalise them twice).
    """
    start = time.perf_counter()
    rewards = list(rewards)
    checks = [(r.name, col) for r in rewards for col in r.requires]
    checks += [("-", Column((name,), Any)) for name in extra_columns]
    row_checks = [(r.name, r.check_row) for r in rewards if r.check_row is not None]
    found: dict[tuple[str, str, str], Problem] = {}

    def note(reward: str, column: str, problem: str, where: str) -> None:
        key = (reward, column, problem)
        entry = found.get(key)
        if entry is None:
            if sum(k[0] == reward and k[1] == "(row check)" for k in found) >= MAX_ROW_CHECK_KINDS:
                key = (reward, column, "other row check failures")
                entry = found.get(key)
            if entry is None:
                entry = found[key] = Problem(*key)
        entry.add(where)

    report = CheckReport()
    for where, raw in rows:
        report.rows += 1
        if isinstance(raw, DataError):
            note("-", "(row)", str(raw).removeprefix(f"{raw.where}: ").split(":")[0], where)
            continue
        try:
            row = normalize(raw, where)
        except DataError as exc:
            note("-", "(row)", str(exc).removeprefix(f"{where}: ").split(" (row has")[0], where)
            continue
        if keep is not None:
            keep.append((where, row))
        for name, col in checks:
            bad = col.problem(row)
            if bad is not None:
                note(name, bad[0], bad[1], where)
        for name, check in row_checks:
            try:
                problem = check(row)
            except Exception as exc:
                problem = f"row check raised {type(exc).__name__}: {exc}"
            if problem:
                note(name, "(row check)", problem, where)
    report.problems = list(found.values())
    report.seconds = time.perf_counter() - start
    return report


def prime_code_tests(ground_truth: Any) -> Any:
    """The ``code`` reward's ``tests`` for a prime_code ground truth, or None when it is not one.

    verl's code datasets (and the OpenRLHF recipes built on the same data) put a problem's tests in the ground
    truth as prime_code JSON; ``serve`` and the verl adapter turn such a ground truth into the ``tests`` column
    when a chosen reward reads it and the row has none.

    ``{"inputs": [...], "outputs": [...]}`` is stdin/stdout cases (an input
    given as a list of lines is joined with newlines); with ``"fn_name"`` the
    cases are calls, written as asserts with literal arguments, which the
    code reward judges outside the program.
    """
    truth = ground_truth
    if isinstance(truth, str):
        try:
            truth = json.loads(truth)
        except ValueError:
            return None
    if not isinstance(truth, dict) or not isinstance(truth.get("inputs"), list) or \
            not isinstance(truth.get("outputs"), list) or len(truth["inputs"]) != len(truth["outputs"]):
        return None
    fn = truth.get("fn_name")
    if isinstance(fn, str) and fn.isidentifier():
        lines = []
        for args, want in zip(truth["inputs"], truth["outputs"], strict=True):  # lengths checked above
            args = args if isinstance(args, list) else [args]
            lines.append(f"assert {fn}({', '.join(repr(a) for a in args)}) == {want!r}")
        return "\n".join(lines)

    def text(value: Any) -> str:
        return "\n".join(map(str, value)) if isinstance(value, list) else str(value)

    return [{"input": text(i), "output": text(o)} for i, o in zip(truth["inputs"], truth["outputs"], strict=True)]
