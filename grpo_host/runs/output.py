"""``grpo-host score``'s output: the ``--out`` file, checked first, written whole, resumable; and the loop that
fills it.

:class:`ScoreOutput` is ``--out``: the path is checked before anything is
opened for writing (an output that is the input, a folder, a missing or
unwritable folder), each scored batch is written whole to the OS as it
completes (a full disk leaves no torn line: the file is cut back to
its last whole line), and a progress record beside the file
(``<out>.progress``: rows written, their byte length, a running SHA-256 of
the input rows they came from) lets ``score --resume`` continue an
interrupted output, skipping rows only when the input still hashes the same.

:func:`score_file` is the command's work: the rows of a file through
:func:`grpo_host.batches.score_file_batches` into the output (or standard
output), with the rollout record beside it, the monitors, and a callback per
batch for the command's progress bar.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypedDict

from ..batches import score_file_batches
from ..data import read_rows
from ..errors import DataError, OutputError
from ..scoring.stats import Tally
from .guard import refuse_overwrite
from .record import RecordMode, RolloutRecord

if TYPE_CHECKING:
    from ..scoring.batch import ScoredBatch, Sink
    from ..scoring.ensemble import Ensemble

__all__ = ["ScoreOutput", "score_file", "write_stream"]


def _row_digest(raw: Any) -> bytes:
    """What a row's content hash covers: its columns as canonical JSON (or the reason it could not be read)."""
    if isinstance(raw, DataError):
        return f"unreadable: {raw}".encode()
    return json.dumps(raw, sort_keys=True, default=repr, ensure_ascii=False).encode("utf-8", "surrogatepass")


def _options(settings: dict[str, Any]) -> str:
    """Pinned settings as the options that set them: ``--rewards 'math' --turn-reward 'sum'``."""
    return " ".join(f"--{key.replace('_', '-')} {value!r}" for key, value in settings.items())


class _Progress(TypedDict):
    """``<out>.progress``: the rows written, their byte length, the SHA-256 of the input rows they came from, and
    the last one's label."""

    rows: int
    bytes: int
    sha256: str
    last: str | None
    batches: int | None
    """Scored batches written (a batch with at least one scored row); the rollout record's steps.  None in a
    progress record written before it was counted."""
    settings: dict[str, Any] | None
    """What decides the scores (``--rewards``, and ``--turn-reward`` when not ``episode``): a resume continues only
    under the same.  None in a progress record written before it was pinned."""


class ScoreOutput:
    """``score --out PATH``: checked first, written a whole batch at a time, continued with ``resume``.

    Use :meth:`check` before any work, :meth:`open`, then wrap the input with
    :meth:`rows` (it hashes every row on its way to the scorer, and skips and
    verifies the rows a continued output already holds) and hand each scored
    batch to :meth:`write`.  :meth:`close` removes the progress record once
    every row is in.
    """

    def __init__(self, path: Path, data: Path, *, resume: bool = False, settings: dict[str, Any] | None = None,
                 ) -> None:
        self.path, self.data, self.resume, self.settings = path, data, resume, settings
        self.progress_path = path.with_name(path.name + ".progress")
        self.done = 0
        """Rows already in the file when it was continued (skipped, not scored again)."""
        self.kept_bad = self.kept_failed = 0
        self._file: Any = None  # an unbuffered binary file
        self._state: _Progress = {"rows": 0, "bytes": 0, "sha256": hashlib.sha256().hexdigest(), "last": None,
                                  "batches": 0, "settings": settings}
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
        # not the input (nor, for the progress record beside it, through a link), nor a run's own file; a score
        # output is started again
        refuse_overwrite(out, "--out", [(self.data, "the input")], score_output=False)
        refuse_overwrite(self.progress_path, "--out", [(self.data, "the input")], own=False)
        if out.exists() or out.is_symlink():
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
        before = state.get("settings")
        if before is not None and self.settings is not None and before != self.settings:
            raise OutputError(f"--out {self.path}: was scored with {_options(before)}, not "
                              f"{_options(self.settings)}; "
                              "continue it with the same, or remove both files to start again")
        for entry in kept:
            self.kept_bad += "rewards" not in entry
            self.kept_failed += "rewards" in entry and "error" in entry
        batches = state.get("batches")
        self.done = rows
        self._state = {"rows": rows, "bytes": size, "sha256": state["sha256"], "last": state.get("last"),
                       "batches": batches if isinstance(batches, int) and not isinstance(batches, bool) else None,
                       "settings": before if before is not None else self.settings}

    @property
    def kept_batches(self) -> int | None:
        """Scored batches a continued output already holds (None: its progress record does not say)."""
        return self._state["batches"]

    def count_kept(self, tally: Tally, batches: int | None = None) -> None:
        """Count the rows a continued output already holds into ``tally``'s rows, bad rows and failed rows, and
        its scored batches (:attr:`kept_batches`, else ``batches``) into ``tally``'s batches: the batches scored
        now are numbered on from them, as the record's steps and the monitors' batches."""
        tally.rows += self.done
        tally.bad += self.kept_bad
        tally.failed += self.kept_failed
        kept = self.kept_batches if self.kept_batches is not None else batches
        tally.batches += kept or 0

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
        for _ in lines:
            where, digest = self._pending.popleft()
            self._hash.update(digest)
            self._state["last"] = where
        scored = any("rewards" in line for line in lines)  # a batch with a scored row: one step of the record
        batches = self._state["batches"]
        self._state.update({"rows": self._state["rows"] + len(lines), "bytes": good + len(data),
                            "sha256": self._hash.hexdigest(),
                            "batches": None if batches is None else batches + scored})
        self._save_progress()

    def _regular(self) -> bool:
        return self._file is not None and stat.S_ISREG(os.fstat(self._file.fileno()).st_mode)

    def _cut_back(self, size: int) -> None:
        if self._regular():
            with contextlib.suppress(OSError):
                self._file.truncate(size)
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


def score_file(
    data: Path, ensemble: Ensemble, output: ScoreOutput | TextIO | None = None, *, batch_size: int = 256,
    monitors: Sink | None = None, group_column: str | None = None, record: RecordMode = "all",
    record_sample: int = 16, on_batch: Callable[[list[dict[str, Any]]], None] | None = None,
    sinks: Sequence[Sink] = (),
) -> Tally:
    """Score the rows of ``data`` into ``output`` (a checked :class:`ScoreOutput`, a stream such as standard output,
    or None: nowhere); returns the tally.

    A :class:`ScoreOutput` gets the rollout record beside it (``record``:
    all, sample, none) and, when continued, counts its kept rows into the
    tally.  ``on_batch`` sees each batch's result lines before they are
    written; ``sinks`` see each scored batch, after the record and
    ``monitors``.  An interrupt (``KeyboardInterrupt``) leaves the output
    cut back to its last whole batch, for ``--resume``; once every row is
    in, the progress record goes.
    """
    rows = read_rows(data)
    kept, stream = (output, None) if isinstance(output, ScoreOutput) else (None, output)
    rollouts = None
    if kept is not None:
        kept.open()
        rows = kept.rows(rows)
        rollouts = RolloutRecord.beside(kept.path, ensemble.names, mode=record, sample=record_sample,
                                        resume=kept.resume, kept_steps=kept.kept_batches)
    tally = Tally(ensemble.names)
    if kept is not None:  # a continued output's batches are numbered on from the ones it holds
        kept.count_kept(tally, rollouts.last_step() if rollouts is not None and kept.resume else None)
    complete = False
    try:
        for lines in score_file_batches(rows, ensemble, tally, batch_size=batch_size, group_column=group_column,
                                        sinks=[_RecordBeside(rollouts) if rollouts is not None else None, monitors,
                                               *sinks]):
            if on_batch is not None:
                on_batch(lines)
            if kept is not None:
                kept.write(lines)
            elif stream is not None:
                write_stream(stream, lines)
        complete = True
    finally:
        if kept is not None:
            kept.close(complete=complete)
    return tally


class _RecordBeside:
    """The rollout record beside ``--out`` as a sink: a write that fails is an :class:`OutputError` naming the
    folder, one message as for ``--out`` itself (a training run lets the error through)."""

    def __init__(self, record: RolloutRecord) -> None:
        self.record = record

    def take(self, batch: ScoredBatch) -> None:
        try:
            self.record.take(batch)
        except OSError as exc:  # a full disk, a vanished folder
            raise OutputError(f"the rollout record {self.record.folder}: writing failed ({exc.strerror or exc}); "
                              "the parts written before are kept whole") from None
