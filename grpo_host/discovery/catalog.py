"""What ``grpo-host rewards list`` and ``environments list`` show, kept so that a listing imports no pack.

Loading the packs costs more than the rest of a listing together: it imports
importlib.metadata, pluggy, pydantic and every pack, about 0.3 s on a 2-core
machine (``benchmarks/README.md``).  The rows change only when installed code
changes, so they are stored with a fingerprint of what they were built from,
and read back while every part of it still matches:

* the modification time of every ``sys.path`` folder: pip adds, renames or
  removes a ``*.dist-info`` folder there on every install, upgrade and
  uninstall, editable installs included;
* the modification time and size of every non-stdlib module file and package
  folder the process had imported when the rows were built: an edited pack
  (or grpo-host itself), or a module added to a pack's folder, rebuilds them.
  Data files a pack reads while registering are not watched.

The file's key holds the interpreter, ``sys.path`` and the plugin-selection
variables, so two environments never share an entry.  Never stored: a load in
which a plugin failed (fixing the pack changes no file the fingerprint holds),
a load during which a watched path changed (what was read may be older than
the mtime recorded; compared by the file system's own clock, as git does for
racy index entries), and a listing under ``GRPO_HOST_STRICT_PLUGINS`` (it must
load to raise).  A cache folder that cannot be written only costs the speed.

The listing also keeps which plugin (entry point) registered each reward and
monitor name, so a command that knows its names (``score --rewards math``)
loads only those plugins (:func:`owners_of`).  A load in which a plugin failed
is stored for that use only, never read back as a listing (fixing the pack
changes no file the fingerprint holds, and the listing must show the failure
as it is now): the names it holds came from packs that loaded.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .settings import PLUGIN_SELECTION, cache_dir, strict_plugins

if TYPE_CHECKING:
    from ..kinds.environment import Environment
    from ..scoring.contract import Reward
    from .plugins import Plugins

__all__ = ["environment_row", "environment_rows", "owners_of", "plugin_warnings", "reward_row", "reward_rows"]

FORMAT = 5  # bump when a row's shape changes


def reward_row(reward: Reward) -> dict[str, Any]:
    """One reward as ``rewards list --json`` prints it."""
    return {**_declared(reward), "description": reward.description, "batch": reward.batch,
            "executor": reward.executor, "per_turn": reward.per_turn}


def environment_row(env: Environment) -> dict[str, Any]:
    """One environment as ``environments list --json`` prints it."""
    return {
        **_declared(env),
        "tools": [{"call": call, "summary": summary} for call, summary in env.tool_summaries()],
        "limits": {"timeout": env.limits.timeout, "max_output_chars": env.limits.max_output_chars,
                   "max_argument_chars": env.limits.max_argument_chars},
        "reward": env.has_reward,
        "per_turn": env.per_turn,
        "description": env.description,
    }


def _declared(item: Reward | Environment) -> dict[str, Any]:
    """What a reward and an environment both declare: name, pack, version, required columns, parameters."""
    return {
        "name": item.name,
        "pack": item.pack,
        "version": item.version,
        "requires": {col.label: col.type_label for col in item.requires},
        "params": item.params.model_json_schema() if item.params else None,
    }


def plugin_warnings(plugins: Plugins) -> list[str]:
    """The lines a listing prints on stderr: packs that failed to load, and reward names two packs claim."""
    failed = [f"plugin {rec.name} ({rec.dist} {rec.version}) failed: {rec.error}"
              for rec in plugins.records if rec.status == "failed"]
    return failed + sorted(set(plugins.registry.conflicts.values()))


def reward_rows() -> tuple[list[dict[str, Any]], list[str]]:
    """Every installed reward's row, and the warnings to print beside them: stored ones while they are current."""
    stored = _listing()
    return stored["rows"], stored["warnings"]


def environment_rows() -> tuple[list[dict[str, Any]], list[str]]:
    """Every installed environment's row, and the warnings, from the same stored listing as the rewards'."""
    stored = _listing()
    return stored["environments"], stored["warnings"]


def owners_of(rewards: Iterable[str], monitors: Iterable[str] | None) -> set[str] | None:
    """The plugins that registered these rewards and monitors (None: every monitor), from the stored listing
    while it is current; None when it cannot say: under ``GRPO_HOST_STRICT_PLUGINS``, when it was out of date
    (rebuilding it loaded every plugin, which the caller then uses), or when a name is not in it (unknown, or
    claimed by two packs: the full load raises the error that names them)."""
    if strict_plugins():
        return None
    stored = _listing(failed_ok=True)
    if not stored.get("stored"):
        return None
    owners: dict[str, dict[str, str]] = stored["owners"]
    wanted = [owners["reward"].get(name) for name in rewards]
    wanted += list(owners["monitor"].values()) if monitors is None else [owners["monitor"].get(n) for n in monitors]
    return None if None in wanted else set(wanted)  # type: ignore[arg-type]  # no None left


def _listing(failed_ok: bool = False) -> dict[str, Any]:
    """The stored listing while it is current, else a fresh one (stored when it can be trusted).

    ``failed_ok``: a stored load in which a plugin failed is current too (what :func:`owners_of` reads)."""
    strict = strict_plugins()
    key = _key()
    path = cache_dir() / "catalog" / f"{zlib.crc32(key.encode()):08x}.json"
    if not strict and (stored := _read(path, key)) is not None and (failed_ok or not stored["failed"]):
        return {**stored, "stored": True}

    from .plugins import default_plugins

    started = None if strict else _disk_clock(path.parent)
    folders = _stats(p or os.curdir for p in sys.path)  # before loading: an install meanwhile makes them stale
    plugins = default_plugins()
    registry = plugins.registry
    listing = {"rows": [reward_row(r) for r in registry],
               "environments": [environment_row(registry.environment(n)) for n in registry.names("environment")],
               "warnings": plugin_warnings(plugins),
               "owners": {kind: registry.owners(kind) for kind in ("reward", "monitor")},
               "failed": any(rec.status == "failed" for rec in plugins.records)}
    if started is not None:
        fingerprint = {**folders, **_stats(_watched_files())}
        # Changed at or after the start: what was read may predate the change, and the new mtime would hide it.
        if all(st is None or st[0] < started for st in fingerprint.values()):
            _write(path, {"key": key, "fingerprint": fingerprint, **listing})
    return listing


def _key() -> str:
    """What must be equal for two listings to be the same; its CRC names the file, and it is compared whole."""
    selection = [os.environ.get(name) for name in PLUGIN_SELECTION]
    return json.dumps([FORMAT, sys.executable, sys.version, sys.path, selection])


def _stat(path: str) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_size]


def _watched_files() -> list[str]:
    """Every non-stdlib module file, and every package folder (a module added to a package changes its mtime)."""
    paths: set[str] = set()
    for name, module in list(sys.modules.items()):
        if name.partition(".")[0] in sys.stdlib_module_names:
            continue
        if isinstance(file := getattr(module, "__file__", None), str):
            paths.add(file)
        paths.update(p for p in getattr(module, "__path__", ()) if isinstance(p, str))
    return sorted(paths)


def _disk_clock(folder: Path) -> int | None:
    """Now, by the clock file times are stamped with (the kernel's, coarser than ``time.time_ns``).

    None when the folder cannot be written, so there is nothing to store.
    """
    import tempfile  # only on a rebuild: a listing read from the cache does not pay for it

    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".clock-")
    except OSError:
        return None
    try:
        return os.fstat(fd).st_mtime_ns
    finally:
        os.close(fd)
        os.unlink(tmp)


def _stats(paths: Iterable[str]) -> dict[str, list[int] | None]:
    """Path → [mtime_ns, size], None where it is missing."""
    return {p: _stat(p) for p in paths}


def _read(path: Path, key: str) -> dict[str, Any] | None:
    try:
        stored = json.loads(path.read_bytes())
        fingerprint, warnings = stored["fingerprint"], stored["warnings"]
        rows, environments, owners = stored["rows"], stored["environments"], stored["owners"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if stored.get("key") != key:
        return None
    if not (isinstance(fingerprint, dict) and isinstance(rows, list) and isinstance(environments, list)
            and isinstance(warnings, list) and isinstance(stored.get("failed"), bool)
            and isinstance(owners, dict) and all(isinstance(owners.get(k), dict) for k in ("reward", "monitor"))):
        return None
    if any(_stat(p) != st for p, st in fingerprint.items()):
        return None
    return stored


def _write(path: Path, stored: dict[str, Any]) -> None:
    """Write whole or not at all (a concurrent listing reads the old file or the new one)."""
    import tempfile

    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".catalog-")
    except OSError:
        return
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(stored, f)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
