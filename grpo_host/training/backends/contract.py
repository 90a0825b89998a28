"""The written contract of a training backend: what a backend must do, and what the base does for it once.

A backend (TRL, MLX, or a pack's through ``register_backends``) turns a
checked :class:`~grpo_host.training.train.Job` (config, rows, ensemble, monitors,
metrics log) into a trained model.  Subclass :class:`TrainingBackend`,
implement its four duties, and register a callable that runs it::

    class MyBackend(TrainingBackend):
        def prepare(self): ...                 # load model, tokenizer, data; build the engine
        def reward_functions(self): ...        # the ensemble as the engine's reward functions, and their weights
        def train(self): ...                   # run the engine; return the global step reached
        def save(self): ...                    # write the model or adapter and the tokenizer into output_dir

    @hookimpl
    def register_backends(register):
        register.add_backend("mine", lambda job: MyBackend(job).run(), validate=None)

What the base does, in :meth:`TrainingBackend.run`, so every backend behaves
alike: it refuses to write over a run it was not asked to resume, finds the
checkpoint to resume from (:attr:`checkpoint`, :attr:`resume_step`), starts the
metrics log, times the training, and writes the summary.  While the engine
runs, the backend feeds every log record to :meth:`log` (reward means under
TRL's names, ``rewards/<name>/mean``, which :mod:`grpo_host.scoring.stats`
names) and asks :meth:`stop_requested` between steps: when a monitor with
action ``stop`` fired, it saves a checkpoint and ends.  The monitor's
:class:`~grpo_host.kinds.monitor.Alert` is the one object that travels from
the monitor to ``summary.json`` (``stopped_by``) and to the exit code (3,
through :class:`~grpo_host.kinds.monitor.MonitorStopped`).
"""

from __future__ import annotations

import sys
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...distributed import is_main_process
from ..preflight import resume_point
from .steps import refuse_unasked_overwrite

if TYPE_CHECKING:
    from ...kinds.monitor import Alert
    from ..train import Job, Summary

__all__ = ["TrainingBackend"]


class TrainingBackend(ABC):
    """One training run on one backend; see the module docstring for the contract.

    :param job: the checked job; its ``config`` holds every setting the run config owns.
    """

    def __init__(self, job: Job) -> None:
        self.job = job
        self.checkpoint: Path | None = None
        """The complete checkpoint this run resumes from (set by :meth:`run` before :meth:`prepare`), or None."""
        self.resume_step: int | None = None
        """The global step of :attr:`checkpoint`, or None for a fresh run."""

    # -- the duties of a backend -------------------------------------------------------------------------------

    @abstractmethod
    def prepare(self) -> None:
        """Load the model, tokenizer and rows and build the engine around :meth:`reward_functions`."""

    @abstractmethod
    def reward_functions(self) -> tuple[list[Callable[..., Any]], list[float]]:
        """The ensemble as the engine's reward functions (one pass of :meth:`grpo_host.Ensemble.score` per
        batch: see :class:`grpo_host.training.backends.reward_funcs.EnsembleRewardFuncs`) and their weights."""

    @abstractmethod
    def train(self) -> int:
        """Run the engine from :attr:`checkpoint` to ``max_steps``, or until :meth:`stop_requested` (after a
        checkpoint); feed its log records to :meth:`log`; return the global step reached."""

    @abstractmethod
    def save(self) -> None:
        """Write the trained model or adapter, with its tokenizer, into ``output_dir``."""

    def finish(self, summary: Summary) -> Summary:
        """Add what only this backend knows to the summary (e.g. how it quantized the base)."""
        return summary

    def close(self) -> None:  # noqa: B027  (an optional hook: a backend with nothing to release keeps this one)
        """Release what :meth:`prepare` made (temporary folders), whether or not the run succeeded."""

    # -- what the base provides ----------------------------------------------------------------------------------

    def log(self, step: int, metrics: Mapping[str, Any]) -> None:
        """One log record of the engine (TRL's key names) into ``metrics.jsonl`` and the progress line."""
        self.job.metrics.add(step, metrics)

    def stop_requested(self) -> Alert | None:
        """The alert of a monitor with action ``stop`` that fired, if any: save a checkpoint and end the run."""
        monitors = self.job.monitors
        return monitors.stop if monitors is not None else None

    def run(self) -> Summary:
        """The whole run: resume point, the backend's duties in order, the summary."""
        job = self.job
        refuse_unasked_overwrite(job)
        passed: list[str] = []
        if job.config.resume:
            self.checkpoint, self.resume_step, passed = resume_point(job.output_dir)
        try:
            self.prepare()
            if self.checkpoint is not None and is_main_process():
                for line in passed:
                    print(f"note: {line}; the run writes it again when it reaches that step", file=sys.stderr,
                          flush=True)
                print(f"resuming from {self.checkpoint} (step {self.resume_step})", flush=True)
            job.metrics.start(self.resume_step)
            start = time.perf_counter()
            steps = self.train()
            seconds = time.perf_counter() - start
            self.save()
        finally:
            self.close()
        return self.finish(job.summary(steps, seconds, resumed_from=self.resume_step))

