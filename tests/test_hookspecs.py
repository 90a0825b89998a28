"""Every hook in ``grpo_host/hookspecs.py`` is documented, called by the loader, and tested.

In the spirit of datasette's plugin-documentation checks: adding a hook spec
without a full docstring (every parameter), without a section in the
reward-pack guide, or without an entry in :data:`HOOK_TESTS` fails here,
naming the hook.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

from grpo_host import hookimpl, reward
from grpo_host.discovery import hookspecs
from grpo_host.discovery.plugins import HOOKS, load_plugins
from grpo_host.errors import DuplicateNameError, UnknownNameError

GUIDE = Path(__file__).parent.parent / "docs" / "writing-a-reward-pack.md"


def hookspec_functions() -> dict[str, object]:
    """The hook specs as pluggy sees them: functions carrying the project's spec marker."""
    marker = f"{hookspecs.PROJECT}_spec"
    return {name: fn for name, fn in vars(hookspecs).items() if inspect.isfunction(fn) and hasattr(fn, marker)}


SPECS = hookspec_functions()


def plugin_module(name: str, version: str = "1.0", **hooks) -> ModuleType:
    """A plugin module built in the test, registered directly as embedding applications do."""
    module = ModuleType(name)
    module.__version__ = version
    for hook_name, fn in hooks.items():
        setattr(module, hook_name, hookimpl(fn))
    return module


@reward(name="hookspec_test_reward", requires={"answer": str})
def hookspec_test_reward(completion: str, *, answer: str, **_) -> float:
    """1.0 when the completion equals the answer."""
    return float(completion == answer)


def test_register_rewards_records_each_reward_with_its_installed_pack(packs, monkeypatch):
    """Through a real entry point: the test pack `good`, installed with pip."""
    monkeypatch.syspath_prepend(str(packs["good"]))
    plugins = load_plugins(env={"GRPO_HOST_LOAD_PLUGINS": "good"})
    [record] = plugins.records
    assert (record.status, record.hooks) == ("loaded", ["register_rewards", "register_monitors"])
    assert record.rewards == ["contains_expected", "good_agreement", "good_int", "good_length", "good_no_echo"]
    registered = plugins.registry.reward("good_length")
    assert (registered.pack, registered.version) == ("grpo-test-good", "1.2.3")


def test_register_rewards_reports_a_name_two_packs_register(monkeypatch):
    first = plugin_module("pack_one", "1.0", register_rewards=lambda register: register(hookspec_test_reward))
    second = plugin_module("pack_two", "2.0", register_rewards=lambda register: register(hookspec_test_reward))
    plugins = load_plugins(entry_points_group=None, plugins=[first, second], env={})
    with pytest.raises(DuplicateNameError, match=r"pack_one 1\.0 and pack_two 2\.0"):
        plugins.registry.reward("hookspec_test_reward")


def test_register_backends_records_a_backend_with_its_pack():
    def run_toy(job):
        raise AssertionError("not called by registering")

    module = plugin_module("toy_backend_pack", "0.4",
                           register_backends=lambda register: register.add_backend("toy", run_toy))
    plugins = load_plugins(entry_points_group=None, plugins=[module], env={})
    backend = plugins.registry.backend("toy")
    assert (backend.name, backend.pack, backend.version, backend.validate) == ("toy", "toy_backend_pack", "0.4", None)
    assert backend.run is run_toy and plugins.records[0].hooks == ["register_backends"]


def test_register_backends_rejects_what_is_not_a_backend():
    def bad(register):
        register.add_backend("toy", run=None)

    plugins = load_plugins(entry_points_group=None, plugins=[plugin_module("bad_backend_pack", register_backends=bad)],
                           env={})
    [record] = plugins.records
    assert record.status == "failed" and "add_backend() takes a name and a callable run(job)" in record.error
    assert plugins.registry.names("backend") == []


def test_register_monitors_records_a_monitor_with_its_installed_pack(packs, monkeypatch):
    """Through a real entry point: the test pack `good` registers the monitor `good_batches`."""
    monkeypatch.syspath_prepend(str(packs["good"]))
    plugins = load_plugins(env={"GRPO_HOST_LOAD_PLUGINS": "good"})
    [record] = plugins.records
    assert record.monitors == ["good_batches"]
    found = plugins.registry.monitor("good_batches")
    assert (found.pack, found.version) == ("grpo-test-good", "1.2.3")
    assert found.create().observe(SimpleNamespace(completions=["a", "b"])).metrics == {"completions": 2}


def test_register_monitors_rejects_what_is_not_a_monitor():
    def bad(register):
        register.add_monitor(hookspec_test_reward)

    plugins = load_plugins(entry_points_group=None, plugins=[plugin_module("bad_monitor_pack", register_monitors=bad)],
                           env={})
    [record] = plugins.records
    assert record.status == "failed" and "add_monitor() takes a monitor made with @monitor" in record.error


def test_register_probes_records_a_probe_with_its_installed_pack(packs, monkeypatch):
    """Through a real entry point: the test pack `weak` ships the probe `magic_word` for its reward `weak_magic`."""
    monkeypatch.syspath_prepend(str(packs["weak"]))
    plugins = load_plugins(env={"GRPO_HOST_LOAD_PLUGINS": "weak"})
    [record] = plugins.records
    assert record.status == "loaded" and "register_probes" in record.hooks
    found = plugins.registry.probe("magic_word")
    assert (found.pack, found.version, found.rewards, found.kind) == ("grpo-test-weak", "0.4.0", ("weak_magic",),
                                                                        "exploit")


def test_register_probes_rejects_what_is_not_a_probe():
    def bad(register):
        register.add_probe(hookspec_test_reward)

    plugins = load_plugins(entry_points_group=None, env={},
                           plugins=[plugin_module("bad_probe_pack", register_probes=bad)])
    [record] = plugins.records
    assert record.status == "failed" and "add_probe() takes a probe made with @probe" in record.error
    assert plugins.registry.names("probe") == []


def test_register_environments_records_an_environment_with_its_installed_pack(packs, monkeypatch):
    """Through a real entry point: the test pack `agentpack` registers the environment `notes`."""
    monkeypatch.syspath_prepend(str(packs["agentpack"]))
    plugins = load_plugins(env={"GRPO_HOST_LOAD_PLUGINS": "agentpack"})
    [record] = plugins.records
    assert record.status == "loaded" and "register_environments" in record.hooks
    found = plugins.registry.environment("notes")
    assert (found.pack, found.version, found.tools) == ("grpo-test-agent", "0.4.0", ("read", "wait", "write"))


def test_register_environments_rejects_what_is_not_an_environment():
    def bad(register):
        register.add_environment(hookspec_test_reward)

    plugins = load_plugins(entry_points_group=None, env={},
                           plugins=[plugin_module("bad_env_pack", register_environments=bad)])
    [record] = plugins.records
    assert record.status == "failed" and "add_environment() takes an environment made with @environment" in record.error
    assert plugins.registry.names("environment") == []


def test_register_importers_records_the_contest_packs_formats_with_their_pack():
    """Through a real entry point: the built-in `contest` pack registers the `kattis` and `cms` importers."""
    plugins = load_plugins(env={"GRPO_HOST_LOAD_PLUGINS": "contest"})
    [record] = plugins.records
    assert record.status == "loaded" and "register_importers" in record.hooks
    assert plugins.registry.names("importer") == ["cms", "kattis"]
    found = plugins.registry.importer("kattis")
    assert (found.pack, found.name) == ("grpo-host", "kattis") and "Kattis" in found.description
    with pytest.raises(UnknownNameError, match=r"unknown importer 'polygon'; available: cms, kattis"):
        plugins.registry.importer("polygon")


def test_register_importers_rejects_what_is_not_an_importer():
    def bad(register):
        register.add_importer("toy", read="not callable")

    plugins = load_plugins(entry_points_group=None, env={},
                           plugins=[plugin_module("bad_importer_pack", register_importers=bad)])
    [record] = plugins.records
    assert record.status == "failed" and "add_importer() takes a name, a callable read(folder)" in record.error
    assert plugins.registry.names("importer") == []


HOOK_TESTS = {
    "register_rewards": [
        test_register_rewards_records_each_reward_with_its_installed_pack,
        test_register_rewards_reports_a_name_two_packs_register,
    ],
    "register_backends": [test_register_backends_records_a_backend_with_its_pack,
                          test_register_backends_rejects_what_is_not_a_backend],
    "register_monitors": [test_register_monitors_records_a_monitor_with_its_installed_pack,
                          test_register_monitors_rejects_what_is_not_a_monitor],
    "register_environments": [test_register_environments_records_an_environment_with_its_installed_pack,
                              test_register_environments_rejects_what_is_not_an_environment],
    "register_probes": [test_register_probes_records_a_probe_with_its_installed_pack,
                        test_register_probes_rejects_what_is_not_a_probe],
    "register_importers": [test_register_importers_records_the_contest_packs_formats_with_their_pack,
                           test_register_importers_rejects_what_is_not_an_importer],
}
"""Hook name -> the tests that exercise it.  A new hook needs an entry (and its tests) here."""


def test_there_are_hooks_to_check():
    assert {"register_rewards", "register_backends", "register_monitors"} <= set(SPECS)


def test_every_hook_has_a_test():
    untested = sorted(set(SPECS) - set(HOOK_TESTS))
    assert not untested, f"hooks without a test in tests/test_hookspecs.py HOOK_TESTS: {untested}"
    assert not set(HOOK_TESTS) - set(SPECS), "HOOK_TESTS names hooks that hookspecs.py no longer has"
    for hook, tests in HOOK_TESTS.items():
        assert tests and all(t.__name__.startswith(f"test_{hook}") for t in tests), hook


def test_the_loader_calls_every_hook():
    called = []

    def recorder(name):
        return lambda register: called.append(name)

    hooks = {name: recorder(name) for name in SPECS}
    load_plugins(entry_points_group=None, plugins=[plugin_module("every_hook_pack", **hooks)], env={})
    assert sorted(called) == sorted(SPECS) == sorted(HOOKS)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_hook_has_a_full_docstring(name):
    fn = SPECS[name]
    doc = inspect.getdoc(fn) or ""
    summary, _, body = doc.partition("\n\n")
    assert summary.endswith("."), f"hook {name}: the docstring starts with a one-sentence summary"
    assert body.strip(), f"hook {name}: the docstring says when the hook is called and what it should do"
    params = list(inspect.signature(fn).parameters)
    documented = re.findall(r":param (\w+):\s*(\S[^\n]*)", doc)
    assert [p for p, _ in documented] == params, f"hook {name}: document every parameter ({params}) with :param:"


@pytest.mark.parametrize("name", sorted(SPECS))
def test_hook_is_described_in_the_reward_pack_guide(name):
    signature = f"`{name}({', '.join(inspect.signature(SPECS[name]).parameters)})`"
    assert signature in GUIDE.read_text(), f"docs/writing-a-reward-pack.md does not describe hook {signature}"
