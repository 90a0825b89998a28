"""A bound on the total memory and process count of one sandbox, across all its processes.

``RLIMIT_AS`` is per process, so fifteen children of 200 MB each pass a
256 MB limit; a cgroup counts them together, with the tmpfs pages and the
kernel memory (inodes, dentries) they allocate.  One cgroup per sandbox:
bwrap joins it before it starts, so everything inside is charged to it.

Where one can be had:

* cgroup v2, when this process's own cgroup has the ``memory`` and ``pids``
  controllers enabled for its children and we may create one there (a
  delegated subtree, e.g. a systemd unit with ``Delegate=yes``);
* cgroup v1 (hybrid hierarchies), as root: a child of this process's own
  ``memory`` and ``pids`` cgroups.

Elsewhere (a non-root user without a delegated v2 subtree) there is no
total bound; :func:`available` says so and ``docs/sandbox.md`` says what
holds instead.  A cgroup is named for the process that made it; one whose
maker is gone (killed before it could remove it) is removed by the next
sandbox made on the machine.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import re
import signal
import time
from pathlib import Path

__all__ = ["Cgroup", "available"]

ROOT = Path("/sys/fs/cgroup")
PREFIX = "grpo-host-code-"
_serial = itertools.count()


def _own(controller: str | None) -> str | None:
    """This process's cgroup path for a v1 controller, or its v2 path (``controller=None``)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, names, path = line.split(":", 2)
        if (controller is None and names == "") or (controller is not None and controller in names.split(",")):
            return path
    return None


def _v2_parent() -> Path | None:
    path = _own(None)
    if path is None or not (ROOT / "cgroup.controllers").exists():
        return None
    parent = ROOT / path.lstrip("/")
    try:
        enabled = (parent / "cgroup.subtree_control").read_text().split()
    except OSError:
        return None
    return parent if {"memory", "pids"} <= set(enabled) and os.access(parent, os.W_OK) else None


def _v1_parents() -> tuple[Path, Path] | None:
    if os.geteuid() != 0:
        return None
    memory, pids = _own("memory"), _own("pids")
    if memory is None or pids is None:
        return None
    found = ROOT / "memory" / memory.lstrip("/"), ROOT / "pids" / pids.lstrip("/")
    return found if all((p / "cgroup.procs").exists() and os.access(p, os.W_OK) for p in found) else None


def available() -> str | None:
    """Which bound holds here (``"cgroup v2"``, ``"cgroup v1"``) or None: no total bound can be made."""
    if _v2_parent() is not None:
        return "cgroup v2"
    if _v1_parents() is not None:
        return "cgroup v1"
    return None


class Cgroup:
    """One sandbox's cgroup: memory and pids limits, joined by bwrap before it starts."""

    def __init__(self, dirs: list[Path], files: dict[str, Path]) -> None:
        self.dirs, self.files = dirs, files
        self._set: dict[str, int] = {}
        self._mark: tuple[int | None, int] | None = None

    @classmethod
    def create(cls) -> Cgroup | None:
        """A fresh cgroup, or None where none can be made (see :func:`available`)."""
        name = f"{PREFIX}{os.getpid()}-{next(_serial)}"
        if (parent := _v2_parent()) is not None:
            parents, files = [parent], {"memory": "memory.max", "swap": "memory.swap.max", "pids": "pids.max",
                                        "usage": "memory.current", "peak": "memory.peak", "reclaim": "memory.reclaim"}
        elif (found := _v1_parents()) is not None:
            parents = list(found)
            files = {"memory": "memory.limit_in_bytes", "swap": "memory.memsw.limit_in_bytes", "pids": "pids.max",
                     "usage": "memory.usage_in_bytes", "peak": "memory.max_usage_in_bytes",
                     "reclaim": "memory.force_empty"}
        else:
            return None
        for parent in parents:
            _remove_orphans(parent)
        dirs = [parent / name for parent in parents]
        for path in dirs:
            path.mkdir()
        paths = {}
        for key, file in files.items():
            where = next((d / file for d in dirs if (d / file).exists()), None)
            if where is not None:  # memsw only exists with swap accounting on
                paths[key] = where
        return cls(dirs, paths)

    def limit(self, memory: int, processes: int) -> None:
        """Set the total bounds (written only when they change: a sandbox runs many programs).

        Lowering the memory bound below what the cgroup holds fails (EBUSY on
        v1, where the kernel's reclaim gives up): the page cache is then
        reclaimed (``memory.force_empty``, ``memory.reclaim``) and the bound
        written once more; if it still fails, the :class:`OSError` names what
        is held, and the caller starts a fresh sandbox."""
        wanted = {"memory": memory, "pids": processes}
        if "swap" in self.files:  # v1: memory+swap, never below memory; v2: swap alone, none at all
            wanted["swap"] = memory if self.files["swap"].name.startswith("memory.memsw") else 0
        raising = memory > self._set.get("memory", memory)  # from unlimited (nothing set yet) is lowering
        order = ("swap", "memory", "pids") if raising else ("memory", "swap", "pids")
        for key in order:
            if key in wanted and self._set.get(key) != wanted[key]:
                try:
                    self.files[key].write_text(str(wanted[key]))
                except OSError as exc:
                    if exc.errno != errno.EBUSY or "reclaim" not in self.files:
                        raise
                    with contextlib.suppress(OSError):  # v1 refuses while a process is inside: best effort
                        self.files["reclaim"].write_text("0" if self.files["reclaim"].name.endswith("empty")
                                                         else str(max(self.usage() - wanted[key], 1)))
                    try:
                        self.files[key].write_text(str(wanted[key]))
                    except OSError as again:
                        raise OSError(again.errno, f"cannot lower the sandbox's {key} bound to {wanted[key] >> 20} "
                                                   f"MiB: it holds {self.usage() >> 20} MiB that reclaim cannot "
                                                   "free") from None
                self._set[key] = wanted[key]

    def usage(self) -> int:
        """Bytes charged to the cgroup now: its processes' memory, its tmpfs pages, kernel memory, page cache."""
        return int(self.files["usage"].read_text())

    def mark(self) -> bool:
        """Start measuring growth: the peak is reset to the usage now (v1 ``max_usage_in_bytes``; v2
        ``memory.peak``, per descriptor, Linux 6.12 or later); False where it cannot be reset."""
        self._mark = None
        if "peak" not in self.files:
            return False
        try:
            if self.files["peak"].name.startswith("memory.max_usage"):
                self.files["peak"].write_text("0")
                self._mark = (None, self.usage())
            else:
                fd = os.open(self.files["peak"], os.O_RDWR)
                os.write(fd, b"reset")
                self._mark = (fd, self.usage())
        except OSError:
            return False
        return True

    def grown(self) -> int | None:
        """The most the cgroup held since :meth:`mark` beyond what it held then (every process of the sandbox and
        every file it wrote on its tmpfs), or None where no mark was made."""
        mark, self._mark = self._mark, None
        if mark is None:
            return None
        fd, base = mark
        try:
            if fd is None:
                peak = int(self.files["peak"].read_text())
            else:
                os.lseek(fd, 0, os.SEEK_SET)
                peak = int(os.read(fd, 64))
        except (OSError, ValueError):
            return None
        finally:
            if fd is not None:
                os.close(fd)
        return max(peak - base, 0)

    def join(self) -> None:
        """Move the calling process in (bwrap's ``preexec_fn``: before it execs, so all it starts is charged)."""
        pid = str(os.getpid())
        for path in self.dirs:
            with open(path / "cgroup.procs", "w") as f:
                f.write(pid)

    def kill(self) -> None:
        """SIGKILL every process still in the cgroup, pass after pass until none is left (or a second passed)."""
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            pids = []
            for path in self.dirs:
                with contextlib.suppress(OSError):
                    pids += (path / "cgroup.procs").read_text().split()
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(OSError, ValueError):
                    os.kill(int(pid), signal.SIGKILL)
            time.sleep(0.005)

    def close(self) -> None:
        """Remove the cgroup once the sandbox's processes are gone (they are: it was killed first)."""
        for path in self.dirs:
            _rmdir(path)
        self.dirs = []


def _rmdir(path: Path) -> None:
    for _ in range(200):  # the kernel frees a cgroup a moment after its last process is reaped
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.005)


def _remove_orphans(parent: Path) -> None:
    """Remove cgroups left by a process killed before it could remove its own."""
    for child in parent.glob(f"{PREFIX}*"):
        match = re.fullmatch(rf"{PREFIX}(\d+)-\d+", child.name)
        if match and not Path(f"/proc/{match[1]}").exists():
            with contextlib.suppress(OSError):
                child.rmdir()
