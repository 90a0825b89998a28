"""Helpers for testing a reward pack the way the host will use it.

A pack's tests should prove more than "the module imports": that the
*installed* distribution is found through its ``grpo_host`` entry point, that
listing it stays cheap, that its rewards score known rows as documented, and
that sample data passes ``grpo-host data check``.  Each helper does one of
these through the code paths the CLI itself uses (:func:`grpo_host.load_plugins`,
:class:`grpo_host.Ensemble`, :func:`grpo_host.data.check_rows`), so a passing
test means the host will behave the same way.

A pack's monitors are tested the same way: :func:`scored_batch` builds the
batch a run would hand them (rows scored by real rewards), and
:func:`observe` feeds a monitor a sequence of such batches.

This module is also a pytest plugin, registered through the ``pytest11``
entry point: wherever grpo-host is installed, tests can ask for the
``grpo_plugins`` and ``score_rows`` fixtures.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .discovery.plugins import GROUP, PluginRecord, Plugins, load_plugins
from .scoring.examples import chat_server, score_example

if TYPE_CHECKING:
    from .audit import AuditReport
    from .data import CheckReport
    from .discovery.build import Ensemble
    from .kinds.monitor import Batch, Report

__all__ = [
    "HEAVY_MODULES",
    "assert_audit_passes",
    "assert_discovered",
    "assert_listing_is_light",
    "chat_server",
    "check_examples",
    "data_check",
    "load_pack",
    "observe",
    "score_example",
    "score_rows",
    "scored_batch",
]

HEAVY_MODULES = ("torch", "transformers", "mlx", "sympy")
"""Modules whose import would make ``grpo-host rewards list`` slow; packs import them inside functions."""


def load_pack(name: str) -> Plugins:
    """A plugin set holding only the installed pack ``name`` (its entry-point or distribution name).

    Discovery goes through the installed entry points, as the host's does,
    restricted with ``GRPO_HOST_LOAD_PLUGINS``; the process environment is
    not read, so a ``GRPO_HOST_DISABLE_PLUGINS`` set there cannot hide the
    pack.  Loading is strict: an import error or a misspelled hook in the
    pack raises here with its own traceback.  Raises :class:`AssertionError`,
    listing what is installed, when no entry point matches ``name``.
    """
    plugins = load_plugins(env={"GRPO_HOST_LOAD_PLUGINS": name}, strict=True)
    if not plugins.records:
        installed = sorted(f"{ep.name} ({ep.dist.name if ep.dist else '?'})" for ep in entry_points(group=GROUP))
        raise AssertionError(
            f"no installed {GROUP!r} entry point or distribution is named {name!r}; is the pack installed "
            f"(pip install -e .)?  installed: {', '.join(installed) or 'none'}"
        )
    return plugins


def assert_discovered(name: str, rewards: Iterable[str] = ()) -> PluginRecord:
    """Assert that the host discovers the installed pack ``name`` and that it registers ``rewards``.

    Returns the pack's :class:`~grpo_host.discovery.plugins.PluginRecord` (distribution,
    version, source, hooks, rewards) for further checks.
    """
    plugins = load_pack(name)
    registered = {r for record in plugins.records for r in record.rewards}
    record = plugins.records[0]
    missing = sorted(set(rewards) - registered)
    if missing:
        raise AssertionError(
            f"pack {name!r} ({record.dist} {record.version}) is installed but did not register {missing}; "
            f"it registered: {', '.join(sorted(registered)) or 'nothing'}"
        )
    return record


_HEAVY_PROBE = """
import json, sys
from grpo_host.discovery.plugins import load_plugins
plugins = load_plugins(env={"GRPO_HOST_LOAD_PLUGINS": sys.argv[1]}, strict=True)
if not plugins.records:
    sys.exit(f"no installed grpo_host entry point or distribution is named {sys.argv[1]!r}")
print(json.dumps(sorted(m for m in sys.argv[2:] if m in sys.modules)))
"""


def assert_listing_is_light(name: str, heavy: Iterable[str] = HEAVY_MODULES) -> None:
    """Assert that loading the pack ``name`` imports none of ``heavy``.

    The host loads every installed pack to list rewards, so one pack with a
    top-level ``import torch`` slows every ``grpo-host`` command.  The check
    runs in a fresh interpreter: the test process has usually imported them.
    """
    proc = subprocess.run(
        [sys.executable, "-c", _HEAVY_PROBE, name, *heavy], capture_output=True, text=True, timeout=120, check=False
    )
    if proc.returncode != 0:
        raise AssertionError(f"loading pack {name!r} in a fresh interpreter failed:\n{proc.stderr}")
    imported = json.loads(proc.stdout.strip().splitlines()[-1])
    if imported:
        raise AssertionError(
            f"loading pack {name!r} imports {', '.join(imported)}; import heavy modules inside the reward "
            "functions that use them, so listing rewards stays fast"
        )


def score_rows(spec: str, rows: Iterable[Mapping[str, Any]], *, plugins: Plugins | None = None) -> list[float | None]:
    """Score ``rows`` with the one reward in ``spec`` (parameters and all), as the host's ensemble does.

    Each row has a ``completion`` (text or chat messages), optionally a
    ``prompt``, and the reward's columns, passed as given (not normalised
    like dataset rows, so a test states exactly what the reward receives).
    The reward's executor, timeout and
    error policy apply (``executor="process"`` rewards run in worker
    processes), and a reward that raises fails the call with the reward and
    row named.  A row missing a required column raises :class:`ValueError`
    naming the row and column, as ``grpo-host score`` reports it.

    :param plugins: where to look the reward up (e.g. ``load_pack(...)``);
        defaults to every installed pack.
    """
    from .data import missing_column
    from .discovery.build import Ensemble

    rows = list(rows)
    with Ensemble.from_spec(spec, plugins=plugins) as ensemble:
        if len(ensemble.members) != 1:
            raise ValueError(f"score_rows scores one reward; the spec {spec!r} names {ensemble.names}")
        for i, row in enumerate(rows):
            if "completion" not in row:
                raise ValueError(f"row {i}: no 'completion' to score")
            problem = missing_column(row, ensemble.rewards)
            if problem:
                raise ValueError(f"row {i}: {problem}")
        result = ensemble.score_rows(rows, row_ids=[f"row {i}" for i in range(len(rows))])
    return result.values[ensemble.names[0]]


def check_examples(reward: Any) -> int:
    """Score every example of ``reward`` (a :class:`~grpo_host.Reward`) that states a ``score`` (or, for a group
    example, ``scores``) and assert it gets that score (to 1e-9); returns how many were checked.  The examples are
    the reward's documentation (``rewards show`` prints them), so this keeps the documentation true.

    An example is scored as :func:`score_example` scores it: with its ``params``, its ``completions`` as one group,
    and its ``judge_reply`` given by a real chat server on 127.0.0.1 (:func:`chat_server`)."""
    wrong, checked = [], 0
    for i, example in enumerate(reward.examples):
        if "score" not in example and "scores" not in example:
            continue
        try:
            got = score_example(reward, example)
        except ValueError as exc:
            raise AssertionError(f"reward {reward.name!r} ({reward.origin}) example {i}: {exc}") from None
        want = list(example["scores"]) if "completions" in example else [example["score"]]
        shown = example["completions"] if "completions" in example else example["completion"]
        checked += 1
        if len(got) != len(want) or any((g is None) != (w is None) or (g is not None and abs(g - w) > 1e-9)
                                        for g, w in zip(got, want, strict=False)):
            documented, scored = (want, got) if "completions" in example else (want[0], got[0])
            wrong.append(f"example {i} ({shown!r:.60}): documented {documented!r}, scored {scored!r}")
    if wrong:
        raise AssertionError(f"reward {reward.name!r} ({reward.origin}) does not score its examples as documented:\n"
                             + "\n".join(wrong))
    return checked


def scored_batch(rewards: str | Ensemble, rows: Iterable[Mapping[str, Any]], *, step: int = 0,
                 plugins: Plugins | None = None, lengths: Iterable[int | None] = (),
                 max_length: int | None = None) -> Batch:
    """The :class:`~grpo_host.kinds.monitor.Batch` a run hands monitors when it has scored ``rows``.

    ``rows`` hold ``completion``, ``prompt`` and the rewards' columns; rows
    sharing a prompt are one group, as GRPO's completions of one prompt are.
    ``rewards`` is a spec (an ensemble is built and closed) or an open
    :class:`~grpo_host.Ensemble` (reused across batches: worker processes
    start once).  ``lengths``: completion token counts, as an engine gives them.
    """
    from .discovery.build import Ensemble
    from .kinds.monitor import Batch
    from .scoring.batch import score_batch

    rows = list(rows)
    owned = isinstance(rewards, str)
    ensemble = Ensemble.from_spec(rewards, plugins=plugins) if isinstance(rewards, str) else rewards
    try:
        scored = score_batch(ensemble, rows, index=step, labels=[f"row {i}" for i in range(len(rows))],
                             groups=[str(row.get("prompt")) for row in rows], lengths=list(lengths),
                             max_length=max_length)
    finally:
        if owned:
            ensemble.close()
    return Batch.of(scored)


def observe(name: str, batches: Iterable[Batch], *, params: Mapping[str, Any] | None = None,
            plugins: Plugins | None = None) -> list[Report]:
    """Feed a fresh instance of the installed monitor ``name`` every batch, in order; one report per batch."""
    from .discovery.plugins import default_plugins

    watcher = (plugins or default_plugins()).registry.monitor(name).create(params)
    return [watcher.observe(batch) for batch in batches]


def data_check(
    spec: str, rows: str | Path | Iterable[Mapping[str, Any]], *, plugins: Plugins | None = None
) -> CheckReport:
    """Run ``grpo-host data check`` on sample rows and return its :class:`~grpo_host.data.CheckReport`.

    ``rows`` is a file or datasets folder (any format the CLI reads) or a list
    of row dicts, labelled ``row 1``, ``row 2``, ... in the report.
    """
    from . import get_reward
    from .data import check_rows, read_rows
    from .scoring.spec import parse_spec

    chosen = [get_reward(item.name, plugins).bind(item.params) for item in parse_spec(spec)]
    pairs = read_rows(rows) if isinstance(rows, str | Path) else ((f"row {i}", r) for i, r in enumerate(rows, 1))
    return check_rows(pairs, chosen)


def assert_audit_passes(spec: str, rows: str | Path | Iterable[Mapping[str, Any]], *, plugins: Plugins | None = None,
                        sample: int = 200) -> AuditReport:
    """Run ``grpo-host audit`` on sample rows and assert it finds nothing: every row's reference earns full marks
    and no probe (the generic ones, every loaded pack's) earns more than an empty completion.

    ``rows`` is a file or datasets folder, or a list of row dicts (``row 1``, ``row 2``, ... in the report).
    The assertion's message is the audit's table, which names each probe that paid and what to fix.  Returns
    the :class:`~grpo_host.audit.AuditReport`.  ``plugins``: where rewards and probes are looked up (the
    generic probes always run).
    """
    from .audit import audit_file, audit_rows

    if isinstance(rows, str | Path):
        report = audit_file(rows, spec, plugins=plugins, sample=sample)
    else:
        report = audit_rows(((f"row {i}", r) for i, r in enumerate(rows, 1)), spec, plugins=plugins, sample=sample)
    if not report.ok:
        raise AssertionError("grpo-host audit found ways to game the rewards:\n" + "\n".join(report.lines(120)))
    return report


@pytest.fixture(name="grpo_plugins")
def grpo_plugins() -> Callable[[str], Plugins]:
    """``grpo_plugins(name)``: the plugin set with only the installed pack ``name`` (see :func:`load_pack`)."""
    return load_pack


@pytest.fixture(name="score_rows")
def score_rows_fixture() -> Callable[..., list[float | None]]:
    """``score_rows(spec, rows, plugins=...)``: score rows with one reward (see :func:`score_rows`)."""
    return score_rows
