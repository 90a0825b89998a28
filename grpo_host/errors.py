"""Every error grpo-host raises on purpose, as one tree, each class with the exit code the CLI ends with.

::

    GrpoHostError                    2  the command could not run
    ├── UserError (ValueError)       2  input that cannot work: a spec, a setting, a file, an option
    │   ├── SpecError                2    a reward spec
    │   ├── ConfigError              2    a run configuration key
    │   ├── RecordError              2    a run's rollout record
    │   ├── OutputError              2    an output path
    │   ├── ScaffoldError            2    new-plugin's name or folder
    │   ├── UnknownNameError         2    no registered reward, backend, monitor, ... has that name
    │   ├── DuplicateNameError       2    two packs registered one name
    │   └── DataError                2    a data file or a row that cannot be read, named by its line or row
    │       └── DataRefused          1      a row that was read but cannot be trained on (a prompt too long)
    ├── RewardError                  2  a reward raised, or returned a bad value or count (policy ``raise``)
    │   ├── RewardUnusable (ValueError) a reward that cannot score any row as configured
    │   └── UnscoredRowsError          ``strict`` and some rows were scored by no reward
    ├── RolloutError (ValueError)    2  a pack's rollout function returned what the trainer cannot use
    ├── WorkerError (RuntimeError)   2  no worker process could be started or kept
    ├── Refused                      1  the input was read and judged unfit to train on
    │   ├── DataCheckFailed             the data check before training found problems (``report``)
    │   └── AuditFailed                 the audit found ways to game the rewards, with ``audit: stop``
    └── Stopped                      3  a run ended on purpose before its last step
        └── MonitorStopped              a monitor whose action is ``stop`` fired, after a checkpoint

The CLI catches :class:`GrpoHostError` in one place and prints one line (``label: message``) before exiting
with ``exit_code``; any other exception is a bug, in grpo-host or in a pack, and keeps its traceback (exit 1).
Exit 130 is an interrupt (SIGINT or SIGTERM).  The README lists the codes per command.

The base classes beside :class:`GrpoHostError` (``ValueError``, ``KeyError``, ``RuntimeError``) stay for the
callers that catch the builtin (pydantic turns a ``ValueError`` raised in a validator into a validation error).
Errors that never leave grpo-host (a call's timeout, a value outside the reward contract, a tool's error handed
to the model) live with the code that raises and catches them.  This module imports nothing: every layer,
the scoring core included, may raise these.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AuditFailed", "ConfigError", "DataCheckFailed", "DataError", "DataRefused", "DuplicateNameError", "GrpoHostError",
    "MonitorStopped", "OutputError", "RecordError", "Refused", "RewardError", "RewardUnusable", "RolloutError",
    "ScaffoldError", "SpecError", "Stopped", "UnknownNameError", "UnscoredRowsError", "UserError", "WorkerError",
]


class GrpoHostError(Exception):
    """An error grpo-host raised on purpose; the CLI prints ``label: message`` and exits with ``exit_code``."""

    exit_code = 2
    label = "error"


class UserError(GrpoHostError, ValueError):
    """Input that cannot work (a spec, a setting, a file, an option); the message says which and why."""


class SpecError(UserError):
    """A reward spec that cannot be parsed or names parameters its reward does not take."""


class ConfigError(UserError):
    """A run configuration that cannot work; the message names the key."""


class RecordError(UserError):
    """A run's rollout record that is missing, unreadable or of another layout."""


class OutputError(UserError):
    """An output path that cannot be written, or would overwrite what it must not."""


class ScaffoldError(UserError):
    """A pack name or target folder ``new-plugin`` cannot use."""


class UnknownNameError(UserError, KeyError):
    """No registered reward (or backend, monitor, ...) has that name; the message lists the names there are."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class DuplicateNameError(UserError):
    """Two plugins registered the same reward (or backend, monitor, ...) name; the message names both."""


class DataError(UserError):
    """A data file or a row that cannot be read, or a row with no prompt; the message starts with the file, line
    or row."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where


class DataRefused(DataError):
    """A row that was read and checked but cannot be trained on: a prompt over ``max_prompt_length``, a set with
    no rows, an environment the row names that is not installed.  The data has a problem (exit 1), as when the
    data check fails."""

    exit_code = 1


class RewardError(GrpoHostError):
    """A reward misbehaved: it raised, returned a bad value or a bad count.

    The message always names the reward, its pack and version, and the row.
    """


class RewardUnusable(RewardError, ValueError):
    """Raised by a reward that cannot score any row as configured: a model of the wrong kind, no GPU, a missing tool.

    Unlike a failure on one row (a bad row or a hostile completion, counted
    per row), this stops scoring whatever the error policy, because every
    row would fail the same way.  The message should say what to change.
    """


class UnscoredRowsError(RewardError):
    """``strict`` is on and some rows were scored by no (weighted) reward."""


class RolloutError(GrpoHostError, ValueError):
    """A pack's rollout function returned something the trainer cannot use; the message names it and what is off."""


class WorkerError(GrpoHostError, RuntimeError):
    """No worker process could be started or kept: an environment problem, reported in one message."""


class Refused(GrpoHostError):
    """The input was read and judged unfit to train on; what was found is printed before the message."""

    exit_code = 1


class DataCheckFailed(Refused):
    """``data check`` found problems in a dataset of the run; ``report`` (a ``CheckReport``) says which."""

    def __init__(self, path: str, report: Any) -> None:
        super().__init__(f"the data check failed for {path}; nothing was trained")
        self.path, self.report = path, report


class AuditFailed(Refused):
    """The audit before training found ways to game the rewards and the config says ``audit: stop``."""

    def __init__(self, report: Any) -> None:
        super().__init__(f"the audit found {len(report.findings)} ways to game the rewards; nothing was trained "
                         "(audit: warn trains anyway)")
        self.report = report


class Stopped(GrpoHostError):
    """A run ended on purpose before its last step, after saving what resumes it."""

    exit_code = 3
    label = "stopped"


class MonitorStopped(Stopped):
    """A monitor whose action is ``stop`` fired; the run saved a checkpoint and ended (``resume`` continues it).

    It carries the monitor's ``Alert``, the same object ``MonitorSet.stop`` held and ``summary.json``
    records as ``stopped_by``.
    """

    def __init__(self, alert: Any, step: int, output_dir: Any) -> None:
        super().__init__(f"monitor {alert.monitor} stopped the run at step {step}: {alert.message}; a checkpoint is "
                         f"in {output_dir}: change the config (the monitor's action or thresholds) and run again "
                         "with resume: true to continue")
        self.alert, self.step = alert, step
