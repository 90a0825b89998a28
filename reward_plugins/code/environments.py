"""The ``python`` environment: one tool, ``python(code)``, that runs the model's program in the ``code`` sandbox.

Tool-integrated reasoning (math with a calculator that is a Python
interpreter) needs a tool that runs whatever the policy writes.  The policy
is an optimiser, so the tool is as hostile a caller as the ``code`` reward's
completions are, and it gets exactly the same treatment: the program runs
in the ``code`` pack's warm bubblewrap sandbox (:mod:`reward_plugins.code.sandbox`,
threat model in ``docs/sandbox.md``) under the same limits, with the same
parameters, and the environment **fails closed** the same way: where no
sandbox can isolate programs its parameters do not bind (so a run stops
before any model loads), unless unisolated runs are asked for explicitly
(``unsafe_unisolated=true`` or ``GRPO_HOST_CODE_UNISOLATED=1``).  Nothing
here re-implements isolation; this module only turns one program's
:class:`~reward_plugins.code.sandbox.Execution` into the text the model reads.

Each call is a fresh program (nothing persists between calls, as in a
script run, not a notebook): the model prints what it wants to see.  What
the model reads:

* the program's stdout, then its stderr (a traceback) after a
  ``[stderr]`` line, then ``[exit status N]`` when it was not 0: a program
  that fails is an answer the model can learn from, not a tool error;
* ``[no output]`` when it printed nothing;
* a **tool error** (:class:`~grpo_host.kinds.environment.ToolError`, counted in
  the trajectory's ``tool_errors``) when the program ran past its timeout,
  printed more than ``max_output_kb``, or the sandbox itself failed.

Calls share one warm sandbox per process, started and driven on one
long-lived thread of this module's: bwrap runs with ``--die-with-parent``,
whose signal fires when the *thread* that started it ends, and the
environment's guard (:mod:`grpo_host.kinds.environment`) runs every call on a
thread of its own that ends with the call.  Engines call synchronous tools
one after another, and the sandbox runs one program at a time whatever
calls it.  The guard checks the argument, cuts the text to
``max_output_chars`` and bounds the call; ``timeout`` is capped below the
guard's bound so a call is never abandoned while its program still runs.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from grpo_host import ToolError, ToolLimits, environment, hookimpl

from .rewards import CodeParams
from .sandbox import Execution, Limits, Sandbox

__all__ = ["PythonTool", "PythonToolParams", "describe", "run_program"]

MAX_TIMEOUT = 30.0
"""Longest per-call timeout: the guard's bound (below) leaves room for a sandbox (re)start and its answer."""
GUARD = ToolLimits(timeout=60.0, max_output_chars=8192, max_argument_chars=65536)
"""The environment's bounds on every call (the guard's, outside the sandbox)."""

_SHARED = CodeParams.model_fields  # the code reward's limits, reused field by field: same names, bounds, defaults


class PythonToolParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    timeout: float = Field(5.0, gt=0, le=MAX_TIMEOUT, description="CPU seconds one call's program may use (one that "
                                                                  "waits is stopped at 3 times that, wall clock)")
    # pydantic takes a FieldInfo as the default (its bounds, default and description), which mypy reads as a value
    memory_mb: int = _SHARED["memory_mb"]  # type: ignore[assignment]
    max_processes: int = _SHARED["max_processes"]  # type: ignore[assignment]
    max_file_mb: int = _SHARED["max_file_mb"]  # type: ignore[assignment]
    max_output_kb: int = _SHARED["max_output_kb"]  # type: ignore[assignment]
    unsafe_unisolated: bool = _SHARED["unsafe_unisolated"]  # type: ignore[assignment]
    _limits: Limits = PrivateAttr()

    @model_validator(mode="after")
    def _as_the_code_reward(self) -> PythonToolParams:
        """The ``code`` reward's own parameters, which refuse to bind without a sandbox (fail closed)."""
        self._limits = CodeParams(**self.model_dump()).limits()
        return self

    def limits(self) -> Limits:
        return self._limits


_driver: ThreadPoolExecutor | None = None
_driver_lock = threading.Lock()
_sandbox: Sandbox | None = None


def run_program(code: str, limits: Limits) -> Execution:
    """Run ``code`` in this process's tool sandbox, on the one thread that starts and drives it."""
    global _driver
    with _driver_lock:
        if _driver is None:
            _driver = ThreadPoolExecutor(max_workers=1, thread_name_prefix="grpo-host-python-tool")
    return _driver.submit(_run_on_driver, code, limits).result()


def _run_on_driver(code: str, limits: Limits) -> Execution:
    global _sandbox
    if _sandbox is None:
        _sandbox = Sandbox()
    return _sandbox.run(code, limits=limits)


def describe(result: Execution, limits: Limits) -> str:
    """What the model reads for one program's run (see the module docstring); a limit it broke is a ToolError."""
    if result.status == "timeout" and result.backstop:
        raise ToolError(f"the program waited {limits.timeout * limits.backstop:g} s without finishing and was stopped")
    if result.status == "timeout":
        raise ToolError(f"the program used its {limits.timeout:g} s of CPU time without finishing and was stopped")
    if result.status == "output_limit":
        raise ToolError(f"the program printed more than {limits.max_output >> 10} KiB and was stopped")
    if result.status != "exited":
        raise ToolError(f"the sandbox failed while running the program: {result.stderr or 'no answer'}")
    parts = [result.stdout.rstrip("\n")] if result.stdout else []
    if result.stderr:
        parts += ["[stderr]", result.stderr.rstrip("\n")]
    if result.exit_code:
        parts.append(f"[exit status {result.exit_code}]")
    return "\n".join(parts) if parts else "[no output]"


@environment("python", params=PythonToolParams, limits=GUARD)
class PythonTool:
    """A Python interpreter for tool-integrated reasoning: each call runs one program in the code pack's sandbox
    (no network, no host files, memory/process/time/output bounds; fails closed without a sandbox) and returns
    its output; nothing persists between calls."""

    def __init__(self, params: PythonToolParams) -> None:
        self.limits = params.limits()

    def reset(self, row: Any) -> None:
        """Nothing to prepare: every call is a fresh program."""
        return None

    def python(self, code: str) -> str:
        """Run a Python program and return what it prints (stdout, then stderr); variables do not persist between
        calls, so print every value you need.

        Args:
            code: the complete Python program to run
        """
        return describe(run_program(code, self.limits), self.limits)


@hookimpl
def register_environments(register):
    register.add_environment(PythonTool)
