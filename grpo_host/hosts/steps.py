"""The steps every training host takes the same way, written once.

A host resumes from ``checkpoint-<step>`` folders in ``output_dir``, refuses
to write over a run it was not asked to resume, and refuses a prompt longer
than ``max_prompt_length`` (TRL no longer truncates prompts, and
mlx-lm-lora would cut it silently): these rules are the run configuration's,
not the engine's, so both hosts call them from here.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..config import ConfigError
from ..data import DataError
from ..preflight import CHECKPOINT, checkpoint_step

if TYPE_CHECKING:
    from ..train import Job

__all__ = ["check_prompt_length", "last_checkpoint", "refuse_unasked_overwrite"]


def last_checkpoint(output_dir: Path, *, complete: bool = True) -> Path | None:
    """The ``checkpoint-N`` folder with the highest N, found without importing an engine.

    ``complete``: only folders whose ``trainer_state.json`` reads as a
    state with a step, so a run killed while writing a checkpoint (or one
    whose state file is empty or torn, which is named on stderr) resumes
    from the one before.
    """
    if not output_dir.is_dir():
        return None
    found = sorted(((int(m.group(1)), p) for p in output_dir.iterdir() if (m := CHECKPOINT.match(p.name))
                    and p.is_dir()), reverse=True)
    return next((p for _, p in found if not complete or checkpoint_step(p) is not None), None)


def refuse_unasked_overwrite(job: Job) -> None:
    """A ``ConfigError`` when ``output_dir`` already holds a checkpoint (even a partial one) and ``resume`` is off."""
    existing = last_checkpoint(job.output_dir, complete=False)
    if existing is not None and not job.config.resume:
        raise ConfigError(f"output_dir {str(job.output_dir)!r} already holds {existing.name}: "
                          "set resume: true to continue it, or choose another output_dir")


def check_prompt_length(job: Job, where: str, tokens: int) -> None:
    """A :class:`DataError` naming the row when its prompt has more than ``max_prompt_length`` tokens (or none)."""
    limit = job.config.max_prompt_length
    if tokens == 0:
        raise DataError(where, "the prompt has no tokens")
    if limit is not None and tokens > limit:
        raise DataError(where, f"the prompt has {tokens} tokens, over max_prompt_length={limit}; "
                               "shorten or drop the row, or raise max_prompt_length")
