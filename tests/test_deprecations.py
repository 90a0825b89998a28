"""What stays for one release after a move or a rename: every old path and name still works, as the same object.

The old module paths re-export the moved modules themselves (``sys.modules``),
so a third-party pack's import, a ``monkeypatch`` target and an ``isinstance``
check keep meaning what they meant; the removed ``Reward`` methods still
score, and say what replaces them.
"""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from grpo_host import get_reward

MOVED = {
    "grpo_host.rewards": "grpo_host.scoring.contract",
    "grpo_host.reward_spec": "grpo_host.scoring.spec",
    "grpo_host.ensemble": "grpo_host.scoring.ensemble",
    "grpo_host.workers": "grpo_host.scoring.executors",
    "grpo_host.hookspecs": "grpo_host.discovery.hookspecs",
    "grpo_host.plugins": "grpo_host.discovery.plugins",
    "grpo_host.registry": "grpo_host.discovery.registry",
    "grpo_host.catalog": "grpo_host.discovery.catalog",
    "grpo_host.settings": "grpo_host.discovery.settings",
    "grpo_host.config": "grpo_host.training.config",
    "grpo_host.preflight": "grpo_host.training.preflight",
    "grpo_host.train": "grpo_host.training.train",
    "grpo_host.builtin_model": "grpo_host.training.builtin_model",
    "grpo_host.hosts": "grpo_host.training.backends",
    "grpo_host.hosts.contract": "grpo_host.training.backends.contract",
    "grpo_host.hosts.trl": "grpo_host.training.backends.trl",
    "grpo_host.hosts.mlx": "grpo_host.training.backends.mlx",
    "grpo_host.hosts.steps": "grpo_host.training.backends.steps",
    "grpo_host.hosts.reward_funcs": "grpo_host.training.backends.reward_funcs",
    "grpo_host.hosts.trackio_reports": "grpo_host.training.backends.trackio_reports",
    "grpo_host.serve": "grpo_host.serving.server",
    "grpo_host.batching": "grpo_host.serving.batching",
    "grpo_host.special_tokens": "grpo_host.scoring.special_tokens",
    "grpo_host.record": "grpo_host.runs.record",
    "grpo_host.report": "grpo_host.runs.report",
    "grpo_host.rescore": "grpo_host.runs.rescore",
}


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_is_the_moved_module_itself(old):
    assert importlib.import_module(old) is importlib.import_module(MOVED[old])


def test_old_paths_imported_first_give_one_module_each():
    """In a fresh interpreter, importing through the old path first (as a pack written before the move does)
    loads each module once: the old and the new name are one object, with one set of classes."""
    code = ("import grpo_host.hosts.trl as old, grpo_host.plugins as p, grpo_host.config as c\n"
            "import grpo_host.training.backends.trl as new, grpo_host.discovery.plugins as q\n"
            "import grpo_host.training.config as d\n"
            "assert old is new and p is q and c is d\n"
            "from grpo_host.hosts.contract import TrainingBackend, TrainingHost\n"
            "assert new.TrlBackend.__mro__[1] is TrainingBackend is TrainingHost\n"
            "print('ok')")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


def test_removed_reward_methods_still_score_and_name_their_replacement():
    math = get_reward("math")
    with pytest.deprecated_call(match=r"score_item\(\.\.\.\) is deprecated .* use grpo_host.scoring.contract"):
        item = math.score_item("\\boxed{4}", answer="4")
    assert item.value == math.score_one("\\boxed{4}", answer="4") == 1.0
    with pytest.deprecated_call(match=r"score_batch"):
        values = math.score_batch(["\\boxed{4}", "\\boxed{5}"], None, {"answer": ["4", "4"]})
    assert values == [s.value for s in math.score_items(["\\boxed{4}", "\\boxed{5}"], None,
                                                             {"answer": ["4", "4"]})] == [1.0, 0.0]


def test_the_old_name_of_the_backends_entry_point_still_selects_it():
    from grpo_host.discovery.plugins import load_plugins

    with pytest.deprecated_call(match="'hosts' in GRPO_HOST_LOAD_PLUGINS"):
        plugins = load_plugins(env={"GRPO_HOST_LOAD_PLUGINS": "hosts"})
    assert [r.name for r in plugins.records] == ["backends"] and plugins.registry.names("backend") == ["mlx", "trl"]


def test_renamed_attributes_read_the_new_ones():
    from grpo_host.discovery.registry import Backend, Host

    math = get_reward("math")
    with pytest.deprecated_call(match=r"Reward\.plugin is deprecated .* use Reward\.pack"):
        assert math.plugin == math.pack == "grpo-host"
    assert Host is Backend
