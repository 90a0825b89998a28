"""Shared fixtures: the CLI in a subprocess, and the test packs installed as distributions.

The test packs under ``tests/packs/`` are real distributions with real
``grpo_host`` entry points.  Each is installed into a directory of its own,
so a test chooses which packs the host sees by putting those directories on
``PYTHONPATH`` (subprocesses) or ``sys.path`` (in-process), and the broken
ones never leak into other tests.  The session's ``packs`` are laid out as
an installer lays them (the sources, and a ``.dist-info`` with the
project's metadata and entry points, which is all that discovery reads)
without running pip and setuptools per pack and per xdist worker;
``tests/test_catalog.py`` and ``tests/test_template.py`` install packs with
pip itself.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).parent
PACKS = ("good", "broken", "dup", "typo", "raising", "asyncpack", "agentpack", "weak", "parity", "parity_broken",
         "workerpack", "hostile")
BIN = Path(sys.executable).parent
GRPO_HOST = str(BIN / "grpo-host")
CLI_ENV: dict[str, str] = {}  # what every CLI run gets: the session's cache folder, never the user's


def clean_env(*prefixes: str, **extra: str) -> dict[str, str]:
    """This process's environment without the ``GRPO_HOST_*`` settings (and ``prefixes``), plus ``extra``:
    what a subprocess under test starts from, so the developer's own settings never leak into a test."""
    drop = ("GRPO_HOST_", *prefixes)
    return {**{k: v for k, v in os.environ.items() if not k.startswith(drop)}, **extra}


LOAD_ENV = "GRPO_HOST_TEST_LOAD"
"""``GRPO_HOST_TEST_LOAD=1``: the whole session runs beside one busy process per core (:func:`session_load`)."""


def cores() -> list[int]:
    """The CPUs this process may run on."""
    return sorted(os.sched_getaffinity(0))


@contextlib.contextmanager
def hogs(count: int | None = None, cpu: int | None = None, sessions: bool = False) -> Iterator[list[subprocess.Popen]]:
    """``count`` processes (default: one per core) that spin on the CPU for the block, pinned to ``cpu`` when
    given; each is killed and reaped after it, whatever happened inside.  ``sessions``: each in a session of its
    own, so where the kernel groups the scheduling by session (autogroup) each weighs as much as a sandboxed
    program, which starts a session of its own too; otherwise the hogs share one group's share against it."""
    pin = f"import os\nos.sched_setaffinity(0, {{{cpu}}})\n" if cpu is not None else ""
    started: list[subprocess.Popen] = []
    try:
        for _ in range(len(cores()) if count is None else count):
            started.append(subprocess.Popen([sys.executable, "-c", f"{pin}while True:\n    pass"],
                                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                            start_new_session=sessions))
        yield started
    finally:
        for proc in started:
            proc.kill()
            proc.wait()


@pytest.fixture
def start_hogs() -> Iterator:
    """``start_hogs(count=None, cpu=None, sessions=False)`` starts busy processes (see :func:`hogs`) that live until
    the test ends."""
    with contextlib.ExitStack() as stack:
        yield lambda count=None, cpu=None, sessions=False: stack.enter_context(hogs(count, cpu, sessions))


@pytest.fixture
def busy_cores() -> Iterator[list[subprocess.Popen]]:
    """One busy process per core for the test's duration: a machine that trains, or a shared CI runner."""
    with hogs() as started:
        yield started


@pytest.fixture(scope="session", autouse=True)
def session_load() -> Iterator[None]:
    """Under ``GRPO_HOST_TEST_LOAD=1``, one busy process per core for the whole session (started once, by the
    first xdist worker or the only process), so that the suite shows it passes on a machine kept busy."""
    if os.environ.get(LOAD_ENV) != "1" or os.environ.get("PYTEST_XDIST_WORKER", "gw0") != "gw0":
        yield
        return
    with hogs():
        yield


@pytest.fixture(scope="session", autouse=True)
def cli_cache(tmp_path_factory) -> Path:
    """One grpo-host cache folder for the session's CLI runs (the reward catalog lands there)."""
    cache = tmp_path_factory.mktemp("cli-cache")
    CLI_ENV["GRPO_HOST_CACHE"] = str(cache)
    return cache


def run_cli(*args: str, env: dict[str, str] | None = None, pythonpath: list[Path] = (), timeout: float = 120,
            input: str | None = None) -> subprocess.CompletedProcess:
    """Run ``grpo-host ARGS`` the way a user does, with only the chosen packs on the path."""
    full_env = clean_env(**{"PYTHONPATH": os.pathsep.join(str(p) for p in pythonpath), "COLUMNS": "200", **CLI_ENV,
                            **(env or {})})
    return subprocess.run([GRPO_HOST, *args], capture_output=True, text=True, env=full_env, timeout=timeout,
                          input=input)


def data_check_problems(path: Path, rewards: str) -> dict[str, str]:
    """``grpo-host data check PATH --rewards REWARDS --json``, which must refuse the file: its problem per row."""
    proc = run_cli("data", "check", str(path), "--rewards", rewards, "--json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    return {row: p["problem"] for p in json.loads(proc.stdout)["problems"] for row in p["rows"]}


def cli_json(*args: str, **kw):
    proc = run_cli(*args, "--json", **kw)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def lay_out_pack(project: Path, target: Path) -> None:
    """Install the pack at ``project`` (a ``src/`` layout) into ``target`` as ``pip install --target`` would for
    discovery: its modules, and ``<name>-<version>.dist-info`` with ``METADATA`` and ``entry_points.txt``."""
    meta = tomllib.loads((project / "pyproject.toml").read_text())["project"]
    shutil.copytree(project / "src", target, ignore=shutil.ignore_patterns("__pycache__"), dirs_exist_ok=True)
    dist_info = target / f"{re.sub(r'[-_.]+', '_', meta['name'])}-{meta['version']}.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {meta['name']}\nVersion: {meta['version']}\n"
        f"Summary: {meta.get('description', '')}\n")
    groups = meta.get("entry-points", {})
    (dist_info / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{key} = {value}\n" for key, value in points.items()) + "\n"
        for group, points in groups.items()))
    (dist_info / "INSTALLER").write_text("grpo-host tests\n")


def lay_out_module_pack(site: Path, module: str, source: str, dist: str, version: str = "0.1",
                        entry: str | None = None) -> Path:
    """A one-module pack in ``site`` as ``pip install --target`` leaves it: ``module.py`` holding ``source``, and
    ``<dist>-<version>.dist-info`` whose entry point ``entry`` (default: the module's name) names the module."""
    (site / f"{module}.py").write_text(source)
    info = site / f"{re.sub(r'[-_.]+', '_', dist)}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[grpo_host]\n{entry or module} = {module}\n")
    return site


@pytest.fixture(scope="session")
def packs(tmp_path_factory) -> dict[str, Path]:
    """Every test pack, each installed into its own target directory (see the module docstring)."""
    root = tmp_path_factory.mktemp("packs")
    dirs = {}
    for name in PACKS:
        lay_out_pack(HERE / "packs" / name, root / name)
        dirs[name] = root / name
    return dirs


@pytest.fixture(scope="session")
def env(tmp_path_factory) -> dict[str, str]:
    """The environment for training runs in subprocesses: no inherited GRPO_HOST_* settings, one tiny-model cache."""
    cache = tmp_path_factory.mktemp("tiny-cache")
    return clean_env(GRPO_HOST_CACHE=str(cache), COLUMNS="200", PYTHONWARNINGS="ignore")


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path
