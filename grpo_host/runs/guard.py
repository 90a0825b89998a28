"""The one check every command that writes makes first: it never writes over what it reads, nor over a run's own files.

``score --out``, ``report -o``, ``train``'s ``output_dir`` and ``new-plugin --dir`` call :func:`refuse_overwrite`
(or, for a run folder about to be written, :func:`refuse_run_over`) before anything is opened for writing, and
get an :class:`~grpo_host.errors.OutputError` (exit 2) that names the path and what it is:

* **What the command reads**: compared as files (:func:`os.path.samefile`: device and inode), so a symlink or a
  hard link to an input is the input; a path inside an input folder (a datasets folder) is part of it.
* **A run's own files**: ``config.yaml``, ``packs.json``, ``summary.json`` and ``metrics.jsonl`` of a run folder
  (one holding ``config.yaml`` and ``packs.json``, or a checkpoint), its ``rollouts/`` record and
  ``checkpoint-N/`` folders and anything in them, a ``score --out`` file's ``<out>.progress`` and
  ``<out>.rollouts/``, and (for every writer but ``score`` itself, which starts such a file again) a ``score
  --out`` file.  Judged on the path with its links resolved.

A path ending in ``/`` names a folder: a file is never written in its place (:func:`refuse_folder_name`).
This module imports nothing but the errors: the training layer and the CLI use it too.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from ..errors import OutputError

__all__ = ["RUN_FILES", "RUN_MARKERS", "is_run", "own_file", "refuse_folder_name", "refuse_overwrite",
           "refuse_run_over", "run_inputs"]

RUN_MARKERS = ("config.yaml", "packs.json")
"""The records every grpo-host run writes first: a folder holding both (or a checkpoint) is a run."""
RUN_FILES = (*RUN_MARKERS, "summary.json", "metrics.jsonl")
"""A run folder's own record files (beside its ``rollouts/`` record and its checkpoints)."""
RECORD = "rollouts"
CHECKPOINT = re.compile(r"^checkpoint-(\d+)$")

Reads = Iterable[tuple[str | Path, str]]
"""What a command reads: (path, what it is, e.g. ``"the input"``)."""


def is_run(folder: Path) -> bool:
    """Whether ``folder`` is a grpo-host run: it holds ``config.yaml`` and ``packs.json``, or a checkpoint."""
    try:
        return folder.is_dir() and (all((folder / name).is_file() for name in RUN_MARKERS) or any(
            CHECKPOINT.match(p.name) and p.is_dir() for p in folder.iterdir()))
    except OSError:
        return False


def _score_output(path: Path) -> bool:
    """Whether ``path`` is a ``score --out`` file: its ``.progress`` or ``.rollouts/`` is beside it."""
    return path.is_file() and (Path(f"{path}.progress").is_file() or Path(f"{path}.{RECORD}").is_dir())


def own_file(path: str | Path, *, score_output: bool = True) -> str | None:
    """What ``path`` is when it is one of a run's own files or lies in one of a run's own folders, else None.

    ``score_output``: whether a ``score --out`` file itself counts (``score`` starts its own output again)."""
    path = Path(os.path.abspath(path))
    for candidate in dict.fromkeys((path, path.resolve())):
        for place in (candidate, *candidate.parents):
            inside = "" if place == candidate else "in "
            run = place.parent
            if place.name == RECORD and is_run(run):
                return f"{inside}the rollout record of the run {run}"
            if CHECKPOINT.match(place.name) and is_run(run):
                return f"{inside}the checkpoint {place.name} of the run {run}"
            if place.name.endswith(f".{RECORD}") and (place.is_dir() or place != candidate):
                return f"{inside}the rollout record of the score output {place.with_name(place.name[:-9])}"
        if candidate.name in RUN_FILES and is_run(candidate.parent):
            return f"the {candidate.name} of the run {candidate.parent}"
        if candidate.name.endswith(".progress") and _score_output(candidate.with_name(candidate.name[:-9])):
            return f"the progress record of the score output {candidate.with_name(candidate.name[:-9])}"
        if score_output and _score_output(candidate):
            return f"the score output {candidate} (its record is beside it)"
    return None


def _same(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _within(path: Path, folder: Path) -> bool:
    """Whether ``path`` (which need not exist) is ``folder`` or lies in it, links resolved."""
    return path.resolve().is_relative_to(folder.resolve())


def refuse_folder_name(text: str, option: str, example: str) -> None:
    """Refuse an output path written with a trailing ``/``: it names a folder, and a file must not take its name."""
    if text.endswith(("/", os.sep)) and text.rstrip("/" + os.sep):
        folder = Path(text)
        what = "is a folder" if folder.is_dir() else "names a folder (it ends in '/')"
        raise OutputError(f"{option} {text}: {what}; name a file in it, e.g. {folder / example}")


def refuse_overwrite(target: str | Path, option: str, reads: Reads = (), *, own: bool = True,
                     score_output: bool = True) -> None:
    """Refuse, with an :class:`OutputError` naming ``target`` and what it is, a write over something read
    (``reads``: files, or folders whose contents are read) or (``own``) over a run's own file (:func:`own_file`)."""
    target = Path(target)
    for read, what in reads:
        read = Path(read)
        if read.is_dir() and not target.is_dir():
            if target.exists() and _within(target, read):
                raise OutputError(f"{option} {target}: is in {what} {read}; writing it would destroy what is "
                                  "read: choose another file")
        elif target.exists() and _same(target, read):
            link = ", through a link" if os.path.abspath(target) != os.path.abspath(read) else ""
            raise OutputError(f"{option} {target}: is {what} {read} (the same file{link}); writing it would "
                              "destroy it: choose another file")
    found = own_file(target, score_output=score_output) if own else None
    if found is not None:
        raise OutputError(f"{option} {target}: is {found}; writing it would destroy it: choose another path")


def run_inputs(path: str | Path) -> list[tuple[Path, str]]:
    """The files of a run folder or ``score --out`` file that ``report`` and ``rescore`` read, each with what it is
    (its record's parts, ``metrics.jsonl``, ``summary.json``, ``config.yaml``, ``packs.json``)."""
    path = Path(path)
    found: list[tuple[Path, str]] = []
    if path.is_dir():
        found += [(path / name, f"the run's {name}") for name in RUN_FILES if (path / name).is_file()]
    elif path.is_file():
        found.append((path, "the score output"))
    for folder in (path / RECORD, Path(f"{path}.{RECORD}"), path):
        if folder.is_dir():
            found += [(part, "a part of the rollout record") for part in folder.glob("*.parquet")]
    return found


def refuse_run_over(output_dir: str | Path, option: str, reads: Reads = ()) -> None:
    """Refuse a run folder about to be written (its records, checkpoints, model) that is itself one of another
    run's own folders, or whose written files would be something the run reads (``reads``): a config, data or
    plugin file among its records or checkpoints, a local model folder that is the output folder.  (That the
    folder itself is a run is expected: ``resume`` continues it.)"""
    out = Path(output_dir)
    own = own_file(out) if not out.exists() or out.is_dir() else None
    if own is not None:
        raise OutputError(f"{option}: {out} is {own}; writing a run into it would destroy it: choose another folder")
    for read, what in reads:
        read = Path(read)
        if not read.exists():
            continue
        if read.is_dir() and _same(read, out):
            raise OutputError(f"{option}: {out} is {what} {read}; the run's records, checkpoints and model would "
                              "be written over it: choose another folder")
        written = [out / name for name in RUN_FILES] + [out / RECORD]
        written += [p for p in (out.iterdir() if out.is_dir() else ()) if CHECKPOINT.match(p.name)]
        for place in written:
            if place.exists() and (_same(read, place) or _within(read, place)):
                raise OutputError(f"{option}: {out} would write its {place.name} over {what} {read}: "
                                  "choose another folder, or copy the file elsewhere")
