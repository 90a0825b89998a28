"""Scoring a file of completions offline (``grpo-host score``), streamed in batches.

Rows go in as :func:`grpo_host.data.read_rows` yields them and one result
per row comes out, in input order, so nothing is lost: a scored row carries
every reward's value and the total; a row that could not be read or lacks
what a chosen reward needs is ``{"row", "error"}``; a row that a reward
failed on keeps the other rewards' values and says which reward failed and
why under ``"error"``.  A :class:`Tally` keeps running per-reward figures
(moments, not lists, so memory stays flat on large files).  Monitors see
each scored batch, with groups taken from a column or from the rows that
share a prompt, so a run's samples can be audited after the fact.

:class:`ScoreOutput` is ``--out``: the path is checked before anything is
opened for writing (an output that is the input, a folder, a missing or
unwritable folder), each scored batch is written whole to the OS as it
completes (a full disk leaves no torn line: the file is cut back to
its last whole line), and a progress record beside the file
(``<out>.progress``: rows written, their byte length, a running SHA-256 of
the input rows they came from) lets ``score --resume`` continue an
interrupted output, skipping rows only when the input still hashes the same.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import signal
import stat
from collections import deque
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO

from .data import missing_column, normalize
from .errors import DataError, OutputError
from .kinds.monitor import Batch, MonitorSet
from .scoring.ensemble import Ensemble, ScoreResult
from .scoring.stats import Moments, Running

__all__ = ["ScoreOutput", "Tally", "score_file_batches", "score_file_rows", "sigterm_as_interrupt", "write_stream"]


class Tally:
    """What ``grpo-host score`` (and ``serve``) report: row counts and per-reward figures over every batch so far."""

    def __init__(self, names: list[str]) -> None:
        self.rows = self.bad = self.failed = self.unscored = self.batches = 0
        self.errors: list[str] = []  # the first messages of rows a reward failed on
        self._rewards = {n: Running() for n in names}
        self._monitor_metrics: dict[str, Moments] = {}

    def add_monitor_metrics(self, metrics: dict[str, float]) -> None:
        for key, value in metrics.items():
            self._monitor_metrics.setdefault(key, Moments()).add([value])

    def monitor_metrics(self) -> dict[str, float | None]:
        """Each monitor metric's mean over the batches."""
        return {key: m.mean for key, m in sorted(self._monitor_metrics.items())}

    def add(self, result: ScoreResult) -> None:
        self.unscored += result.unscored
        self.failed += len(result.row_errors)
        self.errors += result.errors[: max(0, 10 - len(self.errors))]
        for name, values in result.values.items():
            self._rewards[name].add(values, result.metrics[name])

    def per_reward(self) -> dict[str, dict[str, Any]]:
        return {name: running.as_dict() for name, running in self._rewards.items()}

    def summary(self, ensemble: Ensemble, monitors: MonitorSet | None = None) -> dict[str, Any]:
        """The object ``grpo-host score --json`` prints and ``serve``'s ``/score`` answers with."""
        out = {"rows": self.rows, "scored": self.rows - self.bad, "bad_rows": self.bad, "failed_rows": self.failed,
               "unscored": self.unscored, "rewards": self.per_reward(),
               "weights": dict(zip(ensemble.names, ensemble.weights))}
        if monitors is not None:
            out["monitors"] = {"metrics": self.monitor_metrics(), "alerts": [a.as_dict() for a in monitors.alerts]}
        return out


def score_file_rows(
    rows: Iterable[tuple[str, Any]], ensemble: Ensemble, tally: Tally, *, batch_size: int = 256,
    monitors: MonitorSet | None = None, group_column: str | None = None,
) -> Iterator[dict[str, Any]]:
    """Yield one result per input row, in order (:func:`score_file_batches`, one line at a time)."""
    for lines in score_file_batches(rows, ensemble, tally, batch_size=batch_size, monitors=monitors,
                                    group_column=group_column):
        yield from lines


def score_file_batches(
    rows: Iterable[tuple[str, Any]], ensemble: Ensemble, tally: Tally, *, batch_size: int = 256,
    monitors: MonitorSet | None = None, group_column: str | None = None, record: Any = None,
) -> Iterator[list[dict[str, Any]]]:
    """Yield each batch's results, one per input row, in order (see the module docstring for their shapes).

    A row needs a ``completion`` (an empty string is a completion: a policy
    that emits EOS at once wrote it); a prompt only when a chosen reward
    declares the ``prompt`` column.  ``monitors`` observe every batch; a
    monitor's group is ``group_column``'s value, else the row's prompt.
    ``record`` (a :class:`grpo_host.runs.record.RolloutRecord`) keeps every scored
    batch, with the same groups (advantages within the batch).
    """
    rewards = ensemble.rewards
    need_prompt = any("prompt" in col.names for r in rewards for col in r.requires)
    pending: list[tuple[str, dict[str, Any] | None, DataError | None]] = []

    def flush() -> list[dict[str, Any]]:
        lines: list[dict[str, Any]] = []
        good = [(where, row) for where, row, error in pending if error is None]
        result = None
        if good:
            batch = [row for _, row in good]
            result = ensemble.score_rows(batch, row_ids=[where for where, _ in good])
            tally.add(result)
            groups = [_group(row, group_column) for row in batch]
            if record is not None:
                try:
                    record.write(step=tally.batches + 1, batch=tally.batches, result=result,
                                 prompts=[row.get("prompt") for row in batch],
                                 completions=[row["completion"] for row in batch], rows=batch,
                                 row_labels=[where for where, _ in good], groups=groups)
                except OSError as exc:  # a full disk, a vanished folder: one message, as for --out itself
                    raise OutputError(f"the rollout record {record.folder}: writing failed ({exc.strerror or exc}); "
                                      "the parts written before are kept whole") from None
            if monitors is not None:
                tally.add_monitor_metrics(monitors.observe(Batch.of(
                    tally.batches, result, ensemble, [row.get("prompt") for row in batch],
                    [row["completion"] for row in batch], groups, row_ids=[where for where, _ in good])))
            tally.batches += 1
        i = 0
        for where, _, error in pending:
            if error is not None:
                lines.append({"row": where, "error": str(error).removeprefix(f"{where}: ")})
                continue
            line = {"row": where, "rewards": {n: result.values[n][i] for n in ensemble.names}, "total": result.total[i]}
            if i in result.row_errors:
                line["error"] = "; ".join(result.row_errors[i])
            lines.append(_finite(line))
            i += 1
        pending.clear()
        return lines

    for where, raw in rows:
        tally.rows += 1
        try:
            if isinstance(raw, DataError):
                raise raw
            row = normalize(raw, where, require_prompt=need_prompt)
            if row.get("completion") is None or isinstance(row["completion"], list | dict) and not row["completion"]:
                raise DataError(where, "no 'completion' to score")
            problem = missing_column(row, rewards)
            if problem:
                raise DataError(where, problem)
            error = None
        except DataError as exc:
            row, error = None, exc
        tally.bad += error is not None
        pending.append((where, row, error))
        if len(pending) >= batch_size:
            yield flush()
    if pending:
        yield flush()


def _finite(line: dict[str, Any]) -> dict[str, Any]:
    """``line`` with any infinite value or total replaced by None and said under ``error`` (JSON has no
    Infinity; weights of 1e308 overflow a total)."""
    bad = [name for name, value in line["rewards"].items() if isinstance(value, float) and not math.isfinite(value)]
    total = line["total"]
    if not bad and not (isinstance(total, float) and not math.isfinite(total)):
        return line
    rewards = {name: None if name in bad else value for name, value in line["rewards"].items()}
    causes = [f"reward {name!r} gave a non-finite value" for name in bad] or [
        "the weighted total overflowed (weights too large for the values): no total"]
    error = "; ".join(filter(None, [line.get("error"), *causes]))
    return {**line, "rewards": rewards, "total": None, "error": error}


def _group(row: dict[str, Any], column: str | None) -> Any:
    """A row's group id: its ``column`` value, else its prompt (rows sharing a prompt are one GRPO group)."""
    value = row.get(column) if column else row.get("prompt")
    return value if isinstance(value, str | int | float | None) else json.dumps(value, sort_keys=True, default=str)


def _row_digest(raw: Any) -> bytes:
    """What a row's content hash covers: its columns as canonical JSON (or the reason it could not be read)."""
    if isinstance(raw, DataError):
        return f"unreadable: {raw}".encode()
    return json.dumps(raw, sort_keys=True, default=repr, ensure_ascii=False).encode("utf-8", "surrogatepass")


class ScoreOutput:
    """``score --out PATH``: checked first, written a whole batch at a time, continued with ``resume``.

    Use :meth:`check` before any work, :meth:`open`, then wrap the input with
    :meth:`rows` (it hashes every row on its way to the scorer, and skips and
    verifies the rows a continued output already holds) and hand each scored
    batch to :meth:`write`.  :meth:`close` removes the progress record once
    every row is in.
    """

    def __init__(self, path: Path, data: Path, *, resume: bool = False) -> None:
        self.path, self.data, self.resume = path, data, resume
        self.progress_path = path.with_name(path.name + ".progress")
        self.done = 0
        """Rows already in the file when it was continued (skipped, not scored again)."""
        self.kept_bad = self.kept_failed = 0
        self._file: Any = None  # an unbuffered binary file
        self._state = {"rows": 0, "bytes": 0, "sha256": hashlib.sha256().hexdigest(), "last": None}
        self._hash = hashlib.sha256()
        self._pending: deque[tuple[str, bytes]] = deque()

    def check(self) -> None:
        """Refuse, before anything is opened for writing, an output that cannot or must not be written."""
        out = self.path
        if out.is_dir():
            raise OutputError(f"--out {out}: is a folder; name a file in it, e.g. {out / 'scores.jsonl'}")
        parent = out.parent
        if not parent.exists():
            raise OutputError(f"--out {out}: the folder {parent} does not exist; create it first")
        if not parent.is_dir():
            raise OutputError(f"--out {out}: {parent} is not a folder")
        if out.exists() or out.is_symlink():
            if out.exists() and self.data.exists() and os.path.samefile(out, self.data):
                raise OutputError(f"--out {out}: is the input {self.data} (the same file"
                                  f"{', through a link' if out.absolute() != self.data.absolute() else ''}); "
                                  "writing it would destroy the rows being scored: choose another file")
            if out.exists() and not os.access(out, os.W_OK):
                raise OutputError(f"--out {out}: not writable")
        elif not os.access(parent, os.W_OK | os.X_OK):
            raise OutputError(f"--out {out}: the folder {parent} is not writable")
        if self.resume:
            self._load_progress()
        elif self.progress_path.exists():
            raise OutputError(f"--out {out}: holds an interrupted run ({self.progress_path.name} is beside it): "
                              "add --resume to continue it, or remove both files to start again")

    def _load_progress(self) -> None:
        try:
            state = json.loads(self.progress_path.read_text())
            rows, size = int(state["rows"]), int(state["bytes"])
            if not isinstance(state["sha256"], str):
                raise TypeError("sha256 is not text")
        except FileNotFoundError:
            raise OutputError(f"--out {self.path}: --resume, but there is no interrupted run to continue "
                              f"(no {self.progress_path.name}: the output is complete or was never started)") from None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise OutputError(f"--out {self.path}: the progress record {self.progress_path} is unreadable "
                              f"({exc}); remove both files to start again") from None
        have = self.path.stat().st_size if self.path.is_file() else -1
        if have < size:
            raise OutputError(f"--out {self.path}: holds {max(have, 0)} bytes, fewer than the {size} its progress "
                              f"record {self.progress_path.name} counts; remove both files to start again")
        with self.path.open("rb") as f:
            try:
                kept = [json.loads(line) for line in f.read(size).splitlines()]
            except ValueError:
                kept = None
        if kept is None or len(kept) != rows or (rows and kept[-1].get("row") != state.get("last")):
            raise OutputError(f"--out {self.path}: its lines do not match its progress record; "
                              "remove both files to start again")
        for entry in kept:
            self.kept_bad += "rewards" not in entry
            self.kept_failed += "rewards" in entry and "error" in entry
        self.done, self._state = rows, dict(state)

    def count_kept(self, tally: Tally) -> None:
        """Count the rows a continued output already holds into ``tally``'s rows, bad rows and failed rows."""
        tally.rows += self.done
        tally.bad += self.kept_bad
        tally.failed += self.kept_failed

    def open(self) -> None:
        """Open the file: new (truncated), or cut back to the rows its progress record counts (``resume``)."""
        try:
            if self.resume:
                self._file = self.path.open("r+b", buffering=0)
                self._file.truncate(self._state["bytes"])
                self._file.seek(0, os.SEEK_END)
            else:
                self._file = self.path.open("wb", buffering=0)
                self._save_progress()
        except OSError as exc:
            raise OutputError(f"--out {self.path}: cannot open it: {exc.strerror or exc}") from None

    def rows(self, rows: Iterable[tuple[str, Any]]) -> Iterator[tuple[str, Any]]:
        """``rows`` on their way to the scorer: each hashed; the first :attr:`done` verified and held back."""
        check = hashlib.sha256()
        last, kept_last, kept_hash = None, self._state["last"], self._state["sha256"]  # before any write moves them
        for i, (where, raw) in enumerate(rows):
            digest = _row_digest(raw)
            if i < self.done:
                check.update(digest)
                last = where
                if i + 1 == self.done:
                    if check.hexdigest() != kept_hash or last != kept_last:
                        raise OutputError(
                            f"--out {self.path}: its {self.done} rows were scored from other input than "
                            f"{self.data} (the rows up to {where} hash differently); score into another file")
                    self._hash = check
                continue
            self._pending.append((where, digest))
            yield where, raw
        if self.done and last != kept_last:
            raise OutputError(f"--out {self.path}: holds {self.done} rows, but {self.data} has fewer; "
                              "score into another file")

    def write(self, lines: list[dict[str, Any]]) -> None:
        """Append one scored batch: whole lines handed to the OS (a killed process loses none of them; there is no
        fsync, which cost more than the scoring of cheap rewards), then the progress record; on a write error the
        file is cut back to its last whole line and :class:`OutputError` names the cause."""
        assert self._file is not None
        data = "".join(json.dumps(line, allow_nan=False) + "\n" for line in lines).encode()
        good = self._state["bytes"]
        try:
            view = memoryview(data)
            while view:  # unbuffered: nothing is left in a buffer to be written later, past a cut
                view = view[self._file.write(view):]
        except OSError as exc:
            resumable = self._regular()
            self._cut_back(good)
            raise OutputError(f"--out {self.path}: writing failed ({exc.strerror or exc}); "
                              f"the {self._state['rows']} rows written before are kept whole"
                              f"{'; --resume continues it once there is room' if resumable else ''}") from None
        for line in lines:
            where, digest = self._pending.popleft()
            self._hash.update(digest)
            self._state["last"] = where
        self._state.update(rows=self._state["rows"] + len(lines), bytes=good + len(data),
                           sha256=self._hash.hexdigest())
        self._save_progress()

    def _regular(self) -> bool:
        return self._file is not None and stat.S_ISREG(os.fstat(self._file.fileno()).st_mode)

    def _cut_back(self, size: int) -> None:
        if self._regular():
            try:
                self._file.truncate(size)
            except OSError:
                pass
        self._file.close()
        self._file = None

    def _save_progress(self) -> None:
        if not self._regular():  # a device or pipe (/dev/stdout) cannot be continued
            return
        tmp = self.progress_path.with_name(self.progress_path.name + ".tmp")
        try:
            tmp.write_text(json.dumps(self._state))
            os.replace(tmp, self.progress_path)
        except OSError as exc:
            raise OutputError(f"--out {self.path}: cannot write its progress record {self.progress_path}: "
                              f"{exc.strerror or exc}") from None

    def close(self, *, complete: bool) -> None:
        """Close the file, cut back to its last whole batch (an interrupt may land mid-write); once every row is
        in (``complete``), the progress record goes."""
        if self._file is not None:
            if not complete:
                self._cut_back(self._state["bytes"])
            else:
                self._file.close()
                self._file = None
        if complete:
            self.progress_path.unlink(missing_ok=True)


def write_stream(sink: TextIO, lines: list[dict[str, Any]]) -> None:
    """``--out -``: one batch to standard output as whole lines, flushed so a reader sees it at once."""
    sink.write("".join(json.dumps(line, allow_nan=False) + "\n" for line in lines))
    sink.flush()


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM (a scheduler's stop, ``kill``) handled as Ctrl-C, so a stopped ``score`` keeps what it wrote and
    says how to continue, the same way in both cases."""
    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
