"""Plugin discovery through real entry points of really installed packs."""

from __future__ import annotations

import sys

import pluggy
import pytest
from conftest import cli_json, run_cli

from grpo_host.discovery.plugins import load_plugins
from grpo_host.errors import DuplicateNameError, UnknownNameError


def by_name(records):
    return {r["name"]: r for r in records}


def test_builtin_packs_are_entry_points_of_grpo_host():
    plugins = load_plugins(env={})
    r1 = next(r for r in plugins.records if r.name == "r1")
    assert (r1.dist, r1.source, r1.status) == ("grpo-host", "built-in", "loaded")
    assert plugins.registry.reward("accuracy").pack == "grpo-host"


def test_third_party_pack_is_listed_with_its_distribution_and_version(packs):
    rewards = {r["name"]: r for r in cli_json("rewards", "list", pythonpath=[packs["good"]])}
    assert rewards["contains_expected"]["pack"] == "grpo-test-good"
    assert rewards["contains_expected"]["version"] == "1.2.3"
    assert rewards["contains_expected"]["requires"] == {"expected or answer": "str"}
    assert rewards["good_length"]["params"]["properties"]["target"]["default"] == 10
    assert "accuracy" in rewards  # the built-ins are still there


def test_in_process_loading_records_the_registering_distribution(packs, monkeypatch):
    monkeypatch.syspath_prepend(str(packs["good"]))
    plugins = load_plugins(env={})
    reward = plugins.registry.reward("good_length")
    assert (reward.pack, reward.version) == ("grpo-test-good", "1.2.3")
    rec = next(r for r in plugins.records if r.name == "good")
    assert rec.hooks == ["register_rewards", "register_monitors"] and rec.rewards == [
        "contains_expected", "good_agreement", "good_int", "good_length", "good_no_echo"]


def test_a_broken_pack_is_reported_and_everything_else_works(packs):
    path = [packs["good"], packs["broken"]]
    records = by_name(cli_json("plugins", "list", pythonpath=path))
    broken = records["broken"]
    assert broken["status"] == "failed"
    assert (broken["dist"], broken["version"]) == ("grpo-test-broken", "0.0.1")
    assert "grpo_test_dependency_that_does_not_exist" in broken["error"]
    assert records["good"]["status"] == "loaded" and records["r1"]["status"] == "loaded"
    names = {r["name"] for r in cli_json("rewards", "list", pythonpath=path)}
    assert {"contains_expected", "accuracy"} <= names
    listed = run_cli("rewards", "list", pythonpath=path)
    assert listed.returncode == 0 and "grpo-test-broken" in listed.stderr


def test_strict_mode_reraises_the_broken_pack(packs):
    proc = run_cli("rewards", "list", pythonpath=[packs["broken"]], env={"GRPO_HOST_STRICT_PLUGINS": "1"})
    assert proc.returncode != 0
    assert "ModuleNotFoundError" in proc.stderr and "grpo-test-broken" in proc.stderr


@pytest.mark.parametrize("order", ["raising first", "good first"])
def test_a_raising_hook_fails_only_its_pack_and_leaves_no_trace(packs, monkeypatch, order):
    first, second = ("raising", "good") if order == "raising first" else ("good", "raising")
    monkeypatch.syspath_prepend(str(packs[second]))
    monkeypatch.syspath_prepend(str(packs[first]))
    plugins = load_plugins(env={})
    rec = next(r for r in plugins.records if r.name == "raising")
    assert rec.status == "failed" and "this pack's hook is broken" in rec.error
    with pytest.raises(UnknownNameError):
        plugins.registry.reward("raising_first")
    assert plugins.registry.reward("contains_expected").pack == "grpo-test-good"  # its claim died with it
    assert "contains_expected" not in plugins.registry.conflicts
    assert plugins.registry.reward("accuracy")
    good = next(r for r in plugins.records if r.name == "good")
    assert good.warnings == [] and "contains_expected" in good.rewards


def test_duplicate_names_are_an_error_naming_both_packs(packs, tmp_path):
    records = by_name(cli_json("plugins", "list", pythonpath=[packs["dup"]]))
    for name in ("dup", "r1"):  # neither pack wins by load order; both are told
        assert records[name]["status"] == "loaded"
        [warning] = records[name]["warnings"]
        assert "'accuracy'" in warning and "grpo-host 0.1.0" in warning and "grpo-test-dup 2.0.0" in warning
    data = tmp_path / "rows.jsonl"
    data.write_text('{"prompt": "p", "completion": "<answer>4</answer>", "answer": "4"}\n')
    proc = run_cli("score", str(data), "--rewards", "accuracy", pythonpath=[packs["dup"]])
    assert proc.returncode == 2
    assert "grpo-host 0.1.0" in proc.stderr and "grpo-test-dup 2.0.0" in proc.stderr
    ok = run_cli("score", str(data), "--rewards", "r1_int, dup_only", pythonpath=[packs["dup"]])
    assert ok.returncode == 0, ok.stderr


def test_duplicate_error_in_process(packs, monkeypatch):
    monkeypatch.syspath_prepend(str(packs["dup"]))
    plugins = load_plugins(env={})
    with pytest.raises(DuplicateNameError, match="grpo-test-dup"):
        plugins.registry.reward("accuracy")


def test_a_misspelled_hook_is_caught_by_check_pending(packs, monkeypatch):
    records = by_name(cli_json("plugins", "list", pythonpath=[packs["typo"]]))
    assert records["typo"]["status"] == "failed"
    assert "register_reward" in records["typo"]["error"] and "unknown hook" in records["typo"]["error"]
    monkeypatch.syspath_prepend(str(packs["typo"]))
    with pytest.raises(pluggy.PluginValidationError):
        load_plugins(env={}, strict=True)


def test_load_plugins_env_selects_packs(packs):
    path = [packs["good"]]
    assert cli_json("rewards", "list", pythonpath=path, env={"GRPO_HOST_LOAD_PLUGINS": ""}) == []
    only_good = {r["pack"] for r in cli_json("rewards", "list", pythonpath=path,
                                             env={"GRPO_HOST_LOAD_PLUGINS": "good"})}
    assert only_good == {"grpo-test-good"}
    by_dist = {r["pack"] for r in cli_json("rewards", "list", pythonpath=path,
                                             env={"GRPO_HOST_LOAD_PLUGINS": "grpo-host, grpo-test-good"})}
    assert by_dist == {"grpo-host", "grpo-test-good"}


def test_disable_plugins_blocks_a_pack(packs):
    path = [packs["good"]]
    env = {"GRPO_HOST_DISABLE_PLUGINS": "r1"}
    names = {r["name"] for r in cli_json("rewards", "list", pythonpath=path, env=env)}
    assert "accuracy" not in names and "contains_expected" in names
    assert by_name(cli_json("plugins", "list", pythonpath=path, env=env))["r1"]["status"] == "disabled"
    proc = run_cli("rewards", "show", "accuracy", pythonpath=path, env=env)
    assert proc.returncode == 2 and "unknown reward 'accuracy'" in proc.stderr


def test_directly_registered_plugins_for_embedding_and_tests():
    module = sys.modules["grpo_test_direct"] = type(sys)("grpo_test_direct")
    from grpo_host import hookimpl, reward

    @reward(name="direct_one")
    def direct_one(completion, **_):
        return 1.0

    module.register_rewards = hookimpl(lambda register: register(direct_one))
    plugins = load_plugins(entry_points_group=None, plugins=[module])
    assert [r.name for r in plugins.registry] == ["direct_one"]
    assert plugins.registry.reward("direct_one").pack == "grpo_test_direct"


def test_unknown_reward_lists_the_available_names():
    plugins = load_plugins(env={"GRPO_HOST_LOAD_PLUGINS": "r1"})
    with pytest.raises(UnknownNameError, match="available: accuracy, r1_int"):
        plugins.registry.reward("acuracy")
