"""The rollout record: every scored rollout of a run (or a ``score``), as Parquet, to look at and re-score.

A mean-reward curve cannot show what a reward paid for; the completions
can.  Both training backends and ``grpo-host score`` hand every scored batch
(a :class:`grpo_host.scoring.batch.ScoredBatch`) to a :class:`RolloutRecord`,
one of the batch's sinks, which writes it as one Parquet part into a folder
(``rollouts/`` in a run folder, ``<out>.rollouts/`` beside a ``score --out``
file).  A part is written to a hidden temporary name and renamed into place,
so a process killed at any moment (SIGKILL included) leaves only whole parts:
the record keeps every batch scored up to the last one that finished.

Each row is one rollout: ``step`` (the engine's global step when it says,
else the scoring pass), ``batch`` (the pass), ``split`` (train or val),
``row`` (where the prompt came from, ``line 12``), ``row_id``, ``group``
(the completions of one prompt: GRPO's group), ``prompt`` (JSON text),
``completion`` (its text), ``trajectory`` (the message list as JSON text,
for agent rollouts; null for text), ``data`` (the row's other columns as
JSON text: what a reward reads, so :mod:`grpo_host.runs.rescore` needs no
dataset), ``length`` (tokens, when the engine gave them), one
``reward/<name>`` column per reward and per environment's own reward (named
after its session class, as TRL logs it; null: not applicable or failed; a
per-turn reward's is the value trained on, :mod:`grpo_host.scoring.turns`),
one ``turns/<name>`` column per per-turn reward (a list with its value for
each assistant turn, null entries for turns without one; null: no turns),
``error`` (the messages of the rewards that failed on it), ``total`` (what
the trainer trained on: the ensemble's weighted total plus each
environment's own reward with weight 1, as TRL and the MLX backend add it;
:func:`grpo_host.scoring.batch.trained_total`) and ``advantage``.

The layout only grows: a column is added, never renamed or retyped, and a
reader takes a part without an optional column as that column empty (a
record from before ``turns/`` columns reads as one without per-turn
rewards), while a reader from before a column ignores it.

``advantage`` is GRPO's group-normalised advantage as TRL computes it with
its default ``scale_rewards="group"``: ``(total - mean) / (std + 1e-4)``
over the scored totals of the rollout's group (std with Bessel's
correction, as ``trl.trainer.utils.nanstd``); a rollout that neither a
weighted reward nor an environment scored gets none, and a group of one gets 0.
On the MLX backend it is mlx-lm-lora's: the std without Bessel's correction,
over the group's rollouts with an unscored one at the group's mean.  It is computed from the
completions this process scored: with several training processes TRL
normalises over the gathered group, which one process may hold only part of.

How much is kept is the run config's ``record`` (``all``, ``sample``:
``record_sample`` rollouts per scored batch, taken as whole groups so their
advantages stay comparable, or ``none``).
"""

from __future__ import annotations

import json
import math
import os
import random
import uuid
from collections.abc import Iterable, Iterator, Sequence, Sized
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ..distributed import is_main_process
from ..errors import RecordError, UserError

if TYPE_CHECKING:
    from ..scoring.batch import ScoredBatch
    from ..scoring.ensemble import Ensemble

__all__ = [
    "ENVIRONMENTS", "FOLDER", "RecordMode", "RolloutRecord", "advantages", "environment_rewards", "part_step",
    "read_parts", "read_record", "record_columns", "record_folder", "reward_column", "schema", "turns_column",
]

FOLDER = "rollouts"
"""The record's folder inside a run folder."""

RecordMode = Literal["all", "sample", "none"]

ENVIRONMENTS = b"grpo_host.environments"
"""Each part's Parquet metadata key for the JSON list of its ``reward/`` columns that are environments' own rewards
(session class names): the record says which columns those are, so ``rescore`` need not guess from the packs
installed when it runs."""

_FIXED = ("step", "batch", "split", "row", "row_id", "group", "prompt", "completion", "trajectory", "data", "length",
          "error", "total", "advantage")


class RunSettings(Protocol):
    """What :meth:`RolloutRecord.for_run` reads of a run's configuration
    (:class:`grpo_host.training.config.RunConfig`)."""

    @property
    def record(self) -> RecordMode: ...
    @property
    def record_sample(self) -> int: ...
    @property
    def seed(self) -> int: ...


class Run(Protocol):
    """What :meth:`RolloutRecord.for_run` reads of a training job (:class:`grpo_host.training.train.Job`, in the
    training layer, which sits above this one)."""

    @property
    def config(self) -> RunSettings: ...
    @property
    def output_dir(self) -> Path: ...
    @property
    def ensemble(self) -> Ensemble: ...
    @property
    def train(self) -> Sized: ...


def reward_column(name: str) -> str:
    """The record's column holding reward ``name``'s values."""
    return f"reward/{name}"


def turns_column(name: str) -> str:
    """The record's column holding per-turn reward ``name``'s values per assistant turn."""
    return f"turns/{name}"


def advantages(totals: Sequence[float | None], groups: Sequence[Any], *,
               population: bool = False) -> list[float | None]:
    """TRL's default advantage (``scale_rewards="group"``) of each rollout; see the module docstring.

    ``population``: mlx-lm-lora's instead (``calculate_rewards_and_advantages``): the std without Bessel's
    correction over every rollout of the group, an unscored one counted at the group's mean, where the MLX
    backend's fill-in puts it."""
    members: dict[Any, list[float]] = {}
    sizes: dict[Any, int] = {}
    for group, total in zip(groups, totals, strict=True):
        sizes[group] = sizes.get(group, 0) + 1
        if total is not None and math.isfinite(total):
            members.setdefault(group, []).append(total)
    stats = {}
    for group, values in members.items():
        mean = sum(values) / len(values)
        squares = sum((v - mean) ** 2 for v in values)
        if population:
            std = math.sqrt(squares / sizes[group])
        else:
            std = math.sqrt(squares / (len(values) - 1)) if len(values) > 1 else math.nan
        stats[group] = (mean, std)
    out: list[float | None] = []
    for group, total in zip(groups, totals, strict=True):
        if total is None or not math.isfinite(total):
            out.append(None)
            continue
        mean, std = stats[group]
        out.append(0.0 if math.isnan(std) else (total - mean) / (std + 1e-4))
    return out


def _json(value: Any) -> str:
    """``value`` as JSON text; what JSON cannot hold (bytes, dates, numpy scalars) as its ``str``."""
    return json.dumps(value, ensure_ascii=False, default=str)


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


class RolloutRecord:
    """Writes scored batches as Parquet parts into ``folder`` (see the module docstring).

    :param mode: ``all``, ``sample`` or ``none``.
    :param sample: rollouts kept per batch under ``sample`` (whole groups, at least one).
    :param train_rows: row ids from here on are validation rows (``split`` ``val``).
    :param seed: seeds the sample.
    """

    def __init__(self, folder: str | Path, names: Sequence[str], *, mode: RecordMode = "all", sample: int = 16,
                 train_rows: int | None = None, seed: int = 0) -> None:
        if mode not in ("all", "sample", "none"):
            raise UserError(f"record must be all, sample or none, not {mode!r}")
        self.folder, self.names, self.mode, self.sample = Path(folder), list(names), mode, max(1, int(sample))
        self.train_rows, self.rows_written, self.seconds = train_rows, 0, 0.0
        self.first_step = 0
        """The step before this process's first pass (a resumed run's checkpoint step)."""
        self.population = False
        """Advantages as mlx-lm-lora computes them (:func:`advantages`), set by the MLX backend; else TRL's."""
        self._random = random.Random(seed)
        self._tag = uuid.uuid4().hex[:8]  # parts of a resumed run (or another process) never share a name
        self._parts = 0

    @classmethod
    def for_run(cls, job: Run, resume_step: int | None = None) -> RolloutRecord | None:
        """The record of a training run (None under ``record: none``, and on every rank but the main one's).

        A fresh run starts an empty record; a resumed one keeps the parts up to its checkpoint's step, so no
        step is recorded twice."""
        config = job.config
        mode = config.record
        if mode == "none":
            return None
        folder = Path(job.output_dir) / FOLDER
        if is_main_process():
            for part in folder.glob("*.parquet") if folder.is_dir() else ():
                if resume_step is None or part_step(part) > resume_step:
                    part.unlink()
        rank = os.environ.get("RANK", "0")
        record = cls(folder, job.ensemble.names, mode=mode, sample=config.record_sample,
                     train_rows=len(job.train), seed=config.seed + int(rank) if rank.isdigit() else config.seed)
        record._tag = f"r{rank}-{record._tag}"
        record.first_step = resume_step or 0
        return record

    @classmethod
    def beside(cls, out: str | Path, names: Sequence[str], *, mode: RecordMode = "all", sample: int = 16,
               resume: bool = False, kept_steps: int | None = None) -> RolloutRecord | None:
        """The record of a ``score --out`` file, ``<out>.rollouts/``: emptied for a fresh output, kept when
        ``--resume`` continues one.

        ``kept_steps`` (with ``resume``): how many scored batches the continued output holds.  Parts of later
        steps (a batch recorded, then killed before its lines reached ``--out``, so it is scored again) are
        removed, and the caller numbers its batches on from there (:attr:`ScoredBatch.index` from
        ``kept_steps``), so the record of a killed and continued output is the record of an uninterrupted one:
        the same steps, each once.  None (a progress record from before it was counted): the parts are kept as
        they are and the batches numbered on after the last of them (:meth:`last_step`)."""
        if mode == "none" or (Path(out).exists() and not Path(out).is_file()):
            return None  # a device or a pipe (/dev/null, /dev/full): nothing is kept beside it (and not in /dev)
        folder = Path(f"{out}.{FOLDER}")
        if folder.is_dir():
            for part in folder.glob("*.parquet"):
                if not resume or (kept_steps is not None and part_step(part) > kept_steps):
                    part.unlink()
            for torn in folder.glob(".*.parquet.tmp"):  # a part a kill cut short, before its rename
                torn.unlink()
        return cls(folder, names, mode=mode, sample=sample)

    def last_step(self) -> int:
        """The highest step among the parts in the folder (0: none)."""
        return max((part_step(p) for p in self.folder.glob("*.parquet")), default=0) if self.folder.is_dir() else 0

    def take(self, batch: ScoredBatch) -> None:
        """Record one scored batch (a :class:`grpo_host.scoring.batch.Sink`); the seconds it took are left on the
        batch (backends log them as ``record/seconds``).

        The batch's ``step`` None (an engine that does not say): the pass's number after :attr:`first_step`."""
        if self.mode == "none" or not batch.completions:
            batch.record_seconds = 0.0
            return
        import time

        start = time.perf_counter()
        step = self.first_step + batch.index + 1 if batch.step is None else batch.step
        keep = self._chosen(batch.groups)
        self._write_part(self._table(keep, batch, step), step)
        self.rows_written += len(keep)
        seconds = time.perf_counter() - start
        self.seconds += seconds
        batch.record_seconds = seconds

    def _chosen(self, groups: Sequence[Any]) -> list[int]:
        """The rollouts to keep: all, or whole groups drawn at random until ``sample`` rollouts are in."""
        everything = list(range(len(groups)))
        if self.mode == "all" or len(groups) <= self.sample:
            return everything
        by_group: dict[Any, list[int]] = {}
        for i, group in enumerate(groups):
            by_group.setdefault(group, []).append(i)
        order = list(by_group)
        self._random.shuffle(order)
        keep: list[int] = []
        for group in order:
            if len(keep) >= self.sample:
                break
            keep += by_group[group]
        return sorted(keep)

    def _table(self, keep: list[int], batch: ScoredBatch, step: int) -> Any:
        import pyarrow as pa

        result, row_ids, lengths, completions = batch.result, batch.row_ids, batch.lengths, batch.completions
        totals = batch.totals
        advantage = advantages(totals, batch.groups, population=self.population)

        def split(i: int) -> str:
            if self.train_rows is None or row_ids is None:
                return "train"
            return "val" if int(row_ids[i]) >= self.train_rows else "train"

        columns: dict[str, list[Any]] = {
            "step": [step] * len(keep),
            "batch": [batch.index] * len(keep),
            "split": [split(i) for i in keep],
            "row": [str(batch.labels[i]) for i in keep],
            "row_id": [int(row_ids[i]) if row_ids is not None else None for i in keep],
            "group": [str(batch.groups[i]) for i in keep],
            "prompt": [_json(batch.prompts[i]) for i in keep],
            "completion": [batch.texts[i] for i in keep],
            "trajectory": [None if isinstance(completions[i], str) else _json(completions[i]) for i in keep],
            "data": [_json({k: v for k, v in batch.rows[i].items() if k not in ("prompt", "completion")})
                     for i in keep],
            "length": [int(n) if i < len(lengths) and (n := lengths[i]) is not None else None for i in keep],
            "error": ["; ".join(result.row_errors[i]) if i in result.row_errors else None for i in keep],
            "total": [_float(totals[i]) for i in keep],
            "advantage": [advantage[i] for i in keep],
        }
        for name in self.names:
            columns[reward_column(name)] = [_float(result.values[name][i]) for i in keep]
        own = {k: v for k, v in batch.environment_values.items() if k not in self.names}
        for name, values in own.items():
            columns[reward_column(name)] = [_float(values[i]) for i in keep]
        per_turn = {**result.turns, **{k: v for k, v in batch.environment_turns.items() if k in own}}
        for name, turns in per_turn.items():
            columns[turns_column(name)] = [None if (t := turns[i]) is None else list(t) for i in keep]
        stated = {ENVIRONMENTS: json.dumps(sorted(own)).encode()}
        target = schema([*self.names, *own], list(per_turn)).with_metadata(stated)
        return pa.Table.from_arrays([arrow_column(columns[f.name], f.type) for f in target], schema=target)

    def _write_part(self, table: Any, step: int) -> None:
        import pyarrow.parquet as pq

        self.folder.mkdir(parents=True, exist_ok=True)
        name = f"step-{step:08d}-{self._tag}-{self._parts:06d}.parquet"
        self._parts += 1
        temporary = self.folder / f".{name}.tmp"
        pq.write_table(table, temporary, compression="zstd")
        os.replace(temporary, self.folder / name)  # a reader (or a crash) sees the whole part or none of it


def schema(names: Sequence[str], per_turn: Sequence[str] = ()) -> Any:
    """The record's Arrow schema for rewards ``names``, of which ``per_turn`` have a ``turns/`` column."""
    import pyarrow as pa

    types = {"step": pa.int64(), "batch": pa.int64(), "row_id": pa.int64(), "length": pa.int64(),
             "total": pa.float64(), "advantage": pa.float64()}
    fields = [pa.field(key, types.get(key, pa.string())) for key in _FIXED]
    return pa.schema(fields + [pa.field(reward_column(n), pa.float64()) for n in names]
                     + [pa.field(turns_column(n), pa.list_(pa.float64())) for n in per_turn])


def arrow_column(values: Sequence[Any], type_: Any) -> Any:
    """``values`` as the Arrow array ``pa.array(values, type_)`` makes, for the record's types (int64, float64,
    string, a list of float64), built from buffers instead.

    Why: ``pa.array`` of a Python list asks pyarrow's pandas shim whether the list is a pandas object, which
    imports pandas (about 0.4 CPU-s, more than the rest of a ``score`` command's record).  The values stored are
    the same (``tests/test_record.py`` holds them to ``pa.array``'s): None is null, a float keeps its NaN or
    infinity, a string is its UTF-8, and a lone surrogate raises ``UnicodeEncodeError`` as ``pa.array`` does."""
    import array

    import pyarrow as pa

    valid = _validity(values)
    if pa.types.is_list(type_):
        lengths = [0 if v is None else len(v) for v in values]
        child = arrow_column([x for v in values if v is not None for x in v], type_.value_type)
        return pa.Array.from_buffers(type_, len(values), [valid, _offsets(lengths)], children=[child])
    if pa.types.is_string(type_):
        encoded = [b"" if v is None else v.encode() for v in values]
        return pa.Array.from_buffers(type_, len(values), [valid, _offsets(map(len, encoded)),
                                                          pa.py_buffer(b"".join(encoded))])
    code, empty = ("q", 0) if pa.types.is_int64(type_) else ("d", 0.0)
    data = array.array(code, [empty if v is None else v for v in values])
    return pa.Array.from_buffers(type_, len(values), [valid, pa.py_buffer(data)])


def _validity(values: Sequence[Any]) -> Any:
    """Arrow's validity bitmap of ``values`` (a bit set per non-None value), or None when none is None."""
    import pyarrow as pa

    if all(v is not None for v in values):
        return None
    bits = bytearray((len(values) + 7) // 8)
    for i, v in enumerate(values):
        if v is not None:
            bits[i >> 3] |= 1 << (i & 7)
    return pa.py_buffer(bits)


def _offsets(lengths: Iterable[int]) -> Any:
    """Arrow's 32-bit offsets for values of these lengths; a batch of more than 2 GiB of text is refused."""
    import array
    import itertools

    import pyarrow as pa

    offsets = list(itertools.accumulate(lengths, initial=0))
    if offsets[-1] >= 2**31:
        raise RecordError(f"a scored batch holds {offsets[-1]:,} bytes of text in one column: over the record's "
                          "2 GiB; score it in smaller batches (--batch-size)")
    return pa.py_buffer(array.array("i", offsets))


def part_step(part: Path) -> int:
    """The step a part's name gives (``part-<step>-...``); -1 for a name without one (listed first)."""
    try:
        return int(part.name.split("-")[1])
    except (IndexError, ValueError):
        return -1


def record_folder(path: str | Path) -> Path:
    """Where the record of ``path`` is: a run folder's ``rollouts/``, a ``score --out`` file's ``<out>.rollouts/``,
    or the record folder itself."""
    path = Path(path)
    for candidate in (path / FOLDER, Path(f"{path}.{FOLDER}"), path):
        if candidate.is_dir() and any(candidate.glob("*.parquet")):
            return candidate
    raise RecordError(f"{path}: no rollout record here (a run folder's {FOLDER}/, a score --out file's "
                      f"<out>.{FOLDER}/); was it written with record: none?")


_REQUIRED = ("step", "batch", "group", "prompt", "completion", "data", "total")
"""Columns every part holds; the other fixed columns, when a part lacks them, are read as nulls."""

_NOT_NULL = ("step", "batch", "group", "prompt", "data")
"""Columns no rollout may leave empty (``completion`` too, unless the rollout has a ``trajectory``)."""


def _kind(type_: Any) -> str:
    import pyarrow as pa

    if pa.types.is_null(type_):  # a column no rollout filled
        return "null"
    if pa.types.is_integer(type_):
        return "integer"
    if pa.types.is_floating(type_):
        return "number"
    if pa.types.is_string(type_) or pa.types.is_large_string(type_):
        return "text"
    if (pa.types.is_list(type_) or pa.types.is_large_list(type_)) and _kind(type_.value_type) in _WANTED["number"]:
        return "list of numbers"
    return str(type_)


_WANTED = {"integer": ("integer", "null"), "number": ("number", "integer", "null"), "text": ("text", "null"),
           "list of numbers": ("list of numbers", "null")}


def _checked(part: Path, table: Any) -> Any:
    """``table`` (the part ``part`` as read) checked against the record's layout and cast to :func:`schema`'s
    types; a :class:`RecordError` naming the part and the column says what does not fit."""
    import pyarrow as pa
    import pyarrow.compute as pc

    names = [c for c in table.column_names if c.startswith("reward/")]
    missing = [key for key in _REQUIRED if key not in table.column_names]
    if missing:
        raise RecordError(f"{part}: not a rollout part (no column {', '.join(missing)})")
    if len(set(table.column_names)) != len(table.column_names):
        raise RecordError(f"{part}: a damaged rollout part (a column name appears twice)")
    target = schema([n.removeprefix("reward/") for n in names],
                    [c.removeprefix("turns/") for c in table.column_names if c.startswith("turns/")])
    columns = []
    for field in target:
        if field.name not in table.column_names:
            columns.append(pa.nulls(table.num_rows, field.type))
            continue
        column = table[field.name]
        want = _kind(field.type)
        if _kind(column.type) not in _WANTED[want]:
            wanted = {"integer": "an integer", "list of numbers": "a list of numbers"}.get(want, f"a {want}")
            raise RecordError(f"{part}: a damaged rollout part: column {field.name!r} holds {column.type}, "
                              f"not {wanted}")
        if field.name in _NOT_NULL and column.null_count:
            raise RecordError(f"{part}: a damaged rollout part: column {field.name!r} is empty in "
                              f"{column.null_count} of {table.num_rows} rollouts")
        try:
            columns.append(column.cast(field.type))
        except pa.ArrowException as exc:  # an integer too large for the column's type
            raise RecordError(f"{part}: a damaged rollout part: column {field.name!r}: {exc}") from None
    out = pa.table(columns, schema=target)
    if out.num_rows:
        no_text = pc.and_(pc.is_null(out["completion"]), pc.is_null(out["trajectory"]))
        empty = pc.sum(no_text.cast("int64")).as_py() or 0
        if empty:
            raise RecordError(f"{part}: a damaged rollout part: {empty} of {out.num_rows} rollouts have neither "
                              "a completion nor a trajectory")
    return out


def read_parts(path: str | Path) -> Iterator[tuple[Path, Any]]:
    """Each part of the record under ``path`` (see :func:`record_folder`) with its rollouts as an Arrow table of
    :func:`schema`'s layout, in step order.

    A part that cannot be read (not Parquet, cut short, a foreign or damaged layout: a missing column, a column
    of another type, a step, group or completion left empty) is a :class:`RecordError` naming the part and what
    is wrong with it; a part missing only optional columns (``split``, ``row``, ``trajectory``, ``length``,
    ``error``, ``advantage``, ...) is read with them empty."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = record_folder(path)
    for part in sorted(folder.glob("*.parquet"), key=lambda p: (part_step(p), p.name)):
        try:
            table = pq.ParquetFile(part).read()  # not read_table: its dataset layer costs more than a small part
        except (OSError, pa.ArrowException) as exc:
            raise RecordError(f"{part}: not a readable rollout part: {exc}") from None
        except Exception as exc:  # pyarrow raises what it likes on a damaged file (e.g. a bad Thrift header)
            raise RecordError(f"{part}: not a readable rollout part ({type(exc).__name__}: {exc})") from None
        yield part, _checked(part, table)


def environment_rewards(path: str | Path) -> set[str] | None:
    """The ``reward/`` columns the record's parts say are environments' own rewards (:data:`ENVIRONMENTS`); None
    when no part says (a record written before parts did).  A part whose statement is not a JSON list of names,
    or names a column the part lacks, is a :class:`RecordError` naming the part."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    found: set[str] | None = None
    for part in record_folder(path).glob("*.parquet"):
        try:
            footer = pq.read_schema(part)
        except (OSError, pa.ArrowException):
            continue  # left to read_parts to name
        stated = (footer.metadata or {}).get(ENVIRONMENTS)
        if stated is None:
            continue
        try:
            names = json.loads(stated)
        except ValueError:
            names = None
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise RecordError(f"{part}: a damaged rollout part: its environments ({stated[:80]!r}) are not a list of "
                              "names")
        lacking = [n for n in names if reward_column(n) not in footer.names]
        if lacking:
            raise RecordError(f"{part}: a damaged rollout part: it names {lacking[0]!r} an environment's reward, "
                              f"but has no {reward_column(lacking[0])!r} column")
        found = (found or set()) | set(names)
    return found


def record_columns(path: str | Path) -> set[str]:
    """The columns any readable part of the record under ``path`` has, from the parts' footers (a part that cannot
    be read is left to :func:`read_parts` to name)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns: set[str] = set()
    for part in record_folder(path).glob("*.parquet"):
        try:
            columns |= set(pq.read_schema(part).names)
        except (OSError, pa.ArrowException):
            continue
    return columns


def read_record(path: str | Path) -> Any:
    """Every recorded rollout under ``path`` (see :func:`record_folder`) as one Arrow table, in step order.

    A part that cannot be read is a :class:`RecordError` naming it (see :func:`read_parts`)."""
    import pyarrow as pa

    return pa.concat_tables([table for _, table in read_parts(path)], promote_options="default")
