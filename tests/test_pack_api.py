"""The pack API: the names ``grpo_host`` exports, pinned; packs that import nothing else; a pack built on them.

What a pack may rely on is :mod:`grpo_host` itself (and, in a pack's tests, :mod:`grpo_host.testing`).  These
tests pin both lists of names (a name added or removed here is a change of the public API: ``CHANGELOG.md``),
fail when a built-in pack, a test pack or the rendered template imports anything deeper, and run a third-party
pack that uses the helpers a reward needs inside the host's executors (the time left, a block the timeout must
not cut, whether it runs in a worker, the cache folder) through ``rewards list``, ``score`` and ``train``.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import HERE, cli_json, run_cli, write_jsonl

import grpo_host
import grpo_host.testing
import reward_plugins
from grpo_host.scaffold import render_pack

API = [
    "Alert", "AuditFailed", "Batch", "COMMON_END_TOKENS", "ConfigError", "DataCheckFailed", "DataError",
    "DataRefused", "DuplicateNameError", "Ensemble", "Environment", "GrpoHostError", "Job", "Member", "Moments",
    "Monitor", "MonitorStopped", "OutputError", "Parts", "Plugins", "Probe", "RecordError", "Refused", "Report",
    "Reward", "RewardError", "RewardMetrics", "RewardUnusable", "Rollout", "RolloutError", "ScaffoldError",
    "ScoreResult", "Scored", "Session", "SpecError", "Stopped", "Summary", "Target", "ToolCall", "ToolError",
    "ToolLimits", "TrainingBackend", "Trajectory", "UnknownNameError", "UnscoredRowsError", "UserError",
    "WorkerError", "__version__", "answer_blocks", "cache_dir", "check_rows", "completion_text", "default_plugins",
    "end_tokens", "environment", "fenced_blocks", "get_reward", "hookimpl", "in_worker", "list_rewards",
    "load_plugins", "monitor", "probe", "read_rows", "reward", "rollout", "score_row", "split_reasoning",
    "strip_end_tokens", "time_left", "uninterrupted",
]
"""Every name ``grpo_host`` exports, as ``__all__`` lists them."""

TESTING = [
    "HEAVY_MODULES", "assert_audit_passes", "assert_discovered", "assert_listing_is_light", "chat_server",
    "check_examples", "data_check", "load_pack", "observe", "score_example", "score_rows", "scored_batch",
]
"""Every name :mod:`grpo_host.testing` exports for a pack's tests."""

PUBLIC = {"grpo_host": set(API), "grpo_host.testing": set(TESTING)}


def test_the_public_names_are_pinned():
    assert grpo_host.__all__ == API
    assert grpo_host.testing.__all__ == TESTING


def test_the_package_shows_exactly_its_public_names():
    """``dir(grpo_host)`` is the API, and no other plain name resolves (a submodule, once something imported it,
    is an attribute of its package as in any Python package; it is still not the API)."""
    assert [name for name in dir(grpo_host) if not name.startswith("__")] == [n for n in API if n != "__version__"]
    for name in ("importlib", "TYPE_CHECKING", "annotations", "no_such_name"):
        with pytest.raises(AttributeError):
            getattr(grpo_host, name)


def test_every_public_name_resolves_with_its_documentation():
    """Each name is importable and says what it is for (a docstring), as the pack authors' page promises."""
    missing = [name for name in API if name != "__version__" and name != "COMMON_END_TOKENS"
               and not (getattr(grpo_host, name).__doc__ or "").strip()]
    assert not missing, missing
    assert isinstance(grpo_host.COMMON_END_TOKENS, tuple) and isinstance(grpo_host.__version__, str)


def test_the_pack_authors_page_documents_every_public_name():
    """``docs/pack-api.md`` has a row for each name (datasette's way: an undocumented name fails a test)."""
    page = (HERE.parent / "docs" / "pack-api.md").read_text()
    assert not [name for name in API + TESTING if f"| `{name}` |" not in page]


def test_the_pack_authors_page_names_every_hook():
    """The ``hookimpl`` row lists every hook a pack may implement: a hook added to ``hookspecs.py`` is API."""
    from grpo_host.discovery.plugins import HOOKS

    row = next(line for line in (HERE.parent / "docs" / "pack-api.md").read_text().splitlines()
               if line.startswith("| `hookimpl` |"))
    assert not [hook for hook in HOOKS if f"`{hook}`" not in row]


def grpo_host_imports(path: Path) -> list[tuple[int, str, str | None]]:
    """Every use of grpo_host in ``path``: (line, module, name or None for ``import module``)."""
    found: list[tuple[int, str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name, None) for a in node.names if a.name.split(".")[0] == "grpo_host"]
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "grpo_host":
            found += [(node.lineno, node.module or "", a.name) for a in node.names]
    return found


def beyond_the_api(paths: list[Path], root: Path, allowed: tuple[str, ...] = ("grpo_host",)) -> list[str]:
    """Each import in ``paths`` of a grpo_host module other than ``allowed``, or of a name they do not export."""
    return [f"{path.relative_to(root)}:{line}: {module}{'' if name is None else ' ' + name}"
            for path in paths for line, module, name in grpo_host_imports(path)
            if module not in allowed or (name is not None and name not in PUBLIC[module])]


def test_the_built_in_packs_import_only_the_public_api():
    root = Path(reward_plugins.__file__).parent
    found = beyond_the_api(sorted(root.rglob("*.py")), root.parent)
    assert not found, "built-in packs import below the pack API:\n" + "\n".join(found)


def test_the_test_packs_import_only_the_public_api():
    """The suite's own third-party packs are written as an outside author would write them."""
    found = beyond_the_api(sorted((HERE / "packs").rglob("*.py")), HERE)
    assert not found, "test packs import below the pack API:\n" + "\n".join(found)


def test_the_rendered_template_imports_only_the_public_api(tmp_path):
    """Rendered with every option (a monitor and an environment): the pack imports ``grpo_host``, its tests
    ``grpo_host`` and ``grpo_host.testing``."""
    target = render_pack("grpo-rewards-apicheck", tmp_path / "pack", monitor="apicheck_watch",
                         environment="apicheck_env", interactive=False)
    pack = sorted((target / "grpo_rewards_apicheck").rglob("*.py"))
    tests = sorted((target / "tests").rglob("*.py"))
    assert pack and tests
    found = beyond_the_api(pack, target) + beyond_the_api(tests, target, ("grpo_host", "grpo_host.testing"))
    assert not found, "the template imports below the pack API:\n" + "\n".join(found)


def test_the_check_sees_an_import_below_the_api(tmp_path):
    """The checker itself: a module path below the API and a name the API does not export are both reported."""
    module = tmp_path / "m.py"
    module.write_text("from grpo_host.scoring.stats import Moments\nfrom grpo_host import Moments, secret\n"
                      "import grpo_host.kinds\n")
    assert beyond_the_api([module], tmp_path) == ["m.py:1: grpo_host.scoring.stats Moments", "m.py:2: grpo_host secret",
                                                  "m.py:3: grpo_host.kinds"]


ROWS = [{"prompt": "6*7?", "completion": "<think>six sevens</think>42</s>", "answer": "42"},
        {"prompt": "6*7?", "completion": "<think>42</think>41", "answer": "42"},
        {"prompt": "2+2?", "completion": "4", "answer": "4"}]


def test_a_pack_using_the_worker_helpers_is_listed(packs):
    listed = {r["name"]: r for r in cli_json("rewards", "list", pythonpath=[packs["workerpack"]],
                                             env={"GRPO_HOST_LOAD_PLUGINS": "workerpack"})}
    assert (listed["budget_answer"]["pack"], listed["budget_answer"]["version"]) == ("grpo-test-worker", "0.2.0")


@pytest.mark.slow
def test_a_pack_using_the_worker_helpers_scores_in_a_worker_within_its_time(packs, tmp_path):
    """Through ``grpo-host score``: each item runs in a worker process, sees its item's time left, splits off the
    reasoning and the end token, and its one-time set-up left its marker in the cache folder."""
    cache = tmp_path / "cache"
    data = write_jsonl(tmp_path / "rows.jsonl", ROWS)
    proc = run_cli("score", str(data), "--rewards", "budget_answer", "--json", "--monitors", "none",
                   pythonpath=[packs["workerpack"]],
                   env={"GRPO_HOST_LOAD_PLUGINS": "workerpack", "GRPO_HOST_CACHE": str(cache)})
    assert proc.returncode == 0, proc.stderr
    figures = json.loads(proc.stdout)["rewards"]["budget_answer"]
    assert figures["mean"] == pytest.approx(2 / 3) and figures["counts"] == {"in_worker": 3.0, "timed": 3.0}
    assert list((cache / "grpo-test-worker").glob("ready-*")), "the set-up under uninterrupted() left no marker"


@pytest.mark.slow
def test_a_pack_using_the_worker_helpers_trains(packs, tmp_path, env):
    """One TRL step on the built-in tiny model with the pack's reward: its counters reach the run's metrics."""
    write_jsonl(tmp_path / "rows.jsonl", [{"prompt": r["prompt"], "answer": r["answer"]} for r in ROWS])
    config = {"model": "builtin:tiny", "data": "rows.jsonl", "rewards": "budget_answer", "group_size": 2,
              "batch_size": 2, "max_steps": 1, "max_completion_length": 4, "output_dir": "out", "audit": "off"}
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(config))
    proc = subprocess.run([sys.executable, "-m", "grpo_host", "train", "run.yaml"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600, env={**env, "PYTHONPATH": str(packs["workerpack"]),
                                                       "GRPO_HOST_LOAD_PLUGINS": "workerpack,backends"})
    assert proc.returncode == 0, proc.stderr
    metrics = [json.loads(line) for line in (tmp_path / "out" / "metrics.jsonl").read_text().splitlines()]
    assert any(m.get("rewards/budget_answer/in_worker") for m in metrics), metrics
