"""The cached reward catalog: `rewards list` reads it back while nothing installed changed, \
rebuilds it when anything did."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import HERE, clean_env, cli_json, lay_out_module_pack, run_cli

LISTING = """
import sys
from grpo_host.cli import app
try:
    app(['rewards', 'list', '--json'])
except SystemExit as exc:
    assert exc.code in (0, None), exc.code
print('LOADED', sorted(m for m in ('pydantic', 'pluggy', 'importlib.metadata') if m in sys.modules), file=sys.stderr)
"""


def listing(cache: Path, cwd: Path, pythonpath: str = "", **env: str) -> tuple[list[dict], str]:
    """`rewards list --json` in a fresh interpreter: the rows, and which loading machinery it imported."""
    full_env = clean_env(GRPO_HOST_CACHE=str(cache), PYTHONPATH=pythonpath, **env)
    proc = subprocess.run([sys.executable, "-c", LISTING], capture_output=True, text=True, env=full_env, cwd=cwd,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout), proc.stderr.strip().splitlines()[-1]


def test_a_second_listing_is_read_back_without_loading_any_pack(tmp_path):
    cwd = tmp_path / "cwd"  # on sys.path as '': a folder of its own, which the cache folder is not created in
    cwd.mkdir()
    first, loaded = listing(tmp_path / "cache", cwd)
    assert "'pluggy'" in loaded and "'pydantic'" in loaded
    second, loaded = listing(tmp_path / "cache", cwd)
    assert loaded == "LOADED []"
    assert second == first and {"accuracy", "math", "code"} <= {r["name"] for r in second}
    none, _ = listing(tmp_path / "cache", cwd, GRPO_HOST_LOAD_PLUGINS="")  # another selection, another entry
    assert none == []


def names(site: Path) -> dict[str, str]:
    return {r["name"]: r["description"] for r in cli_json("rewards", "list", pythonpath=[site])}


def pip_target(pack: str, target: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--target", str(target), str(HERE / "packs" / pack)], check=True, capture_output=True, timeout=300)


@pytest.mark.slow  # over 2 s: CLI runs over real packs
def test_installing_editing_and_removing_a_pack_each_rebuild_the_listing(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    assert "contains_expected" not in names(site)  # stored for this path

    pip_target("good", site)
    assert names(site)["contains_expected"] == "1.0 when the completion contains the expected text"

    module = site / "grpo_test_good.py"  # what editing an editable pack's source does
    module.write_text(module.read_text().replace("contains the expected text", "holds the expected text (edited)"))
    assert names(site)["contains_expected"] == "1.0 when the completion holds the expected text (edited)"

    module.unlink()  # what pip uninstall does
    for dist_info in site.glob("grpo_test_good-*.dist-info"):
        shutil.rmtree(dist_info)
    assert "contains_expected" not in names(site)


@pytest.mark.slow  # over 2 s: CLI runs over real packs
def test_a_module_added_to_a_pack_folder_rebuilds_the_listing(tmp_path):
    site = tmp_path / "site"
    pip_target("scan", site)
    assert "scan_first" in names(site) and "scan_second" not in names(site)
    folder = site / "grpo_test_scan" / "rewards"
    (folder / "scan_second.py").write_text((folder / "scan_first.py").read_text().replace("first", "second"))
    assert {"scan_first", "scan_second"} <= set(names(site))


@pytest.mark.slow  # over 2 s: CLI runs over real packs
def test_a_file_changed_while_the_packs_load_is_not_stored(tmp_path):
    site, cwd = tmp_path / "site", tmp_path / "cwd"
    pip_target("good", site)
    cwd.mkdir()
    module = site / "grpo_test_good.py"  # stands for an edit made while a slow pack imports
    module.write_text("import pathlib\npathlib.Path(__file__).touch()\n" + module.read_text())
    for _ in range(2):
        rows, loaded = listing(tmp_path / "cache", cwd, pythonpath=str(site))
        assert "'pluggy'" in loaded and "contains_expected" in {r["name"] for r in rows}


@pytest.mark.slow  # over 2 s: CLI runs over real packs
def test_a_listing_with_a_failed_pack_is_never_stored(tmp_path):
    site = tmp_path / "site"
    pip_target("broken", site)
    failed = run_cli("rewards", "list", pythonpath=[site])
    assert failed.returncode == 0 and "grpo-test-broken" in failed.stderr

    module = site / "grpo_test_broken.py"  # fixed in place: the folder's mtime does not move
    module.write_text('"""Fixed."""\n')
    fixed = run_cli("rewards", "list", pythonpath=[site])
    assert fixed.returncode == 0 and "grpo-test-broken" not in fixed.stderr, fixed.stderr


def test_a_corrupt_or_unwritable_cache_costs_only_speed(tmp_path):
    expected = cli_json("rewards", "list")
    cache = tmp_path / "cache"
    cli_json("rewards", "list", env={"GRPO_HOST_CACHE": str(cache)})
    stored = list((cache / "catalog").glob("*.json"))
    assert stored
    for path in stored:
        path.write_text('{"key": "truncated')
    assert cli_json("rewards", "list", env={"GRPO_HOST_CACHE": str(cache)}) == expected

    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    assert cli_json("rewards", "list", env={"GRPO_HOST_CACHE": str(not_a_folder)}) == expected


BROKEN_AND_COUNTED = """
import pathlib
with open(pathlib.Path(__file__).parent.with_name("imported.txt"), "a") as f:  # outside the watched site folder
    f.write("imported\\n")
raise RuntimeError("this pack is broken")
"""


@pytest.mark.slow  # over 2 s: four CLI runs, two of them scoring through worker processes
def test_score_loads_only_the_packs_its_names_need_and_never_imports_a_broken_unrelated_one(tmp_path):
    (tmp_path / "site").mkdir()
    site = lay_out_module_pack(tmp_path / "site", "grpo_test_counted", BROKEN_AND_COUNTED, "grpo-test-counted")
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps({"prompt": "p", "completion": f"The answer is {n}.", "answer": "3"}) + "\n"
                            for n in (3, 4)))
    env = {"GRPO_HOST_CACHE": str(tmp_path / "cache")}
    imported = tmp_path / "imported.txt"
    for run in range(2):  # the first load is every pack's (the catalog is out of date); the second, the named ones
        proc = run_cli("score", str(rows), "--rewards", "math", "--json", env=env, pythonpath=[site])
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["rewards"]["math"]["mean"] == 0.5
        assert imported.read_text() == "imported\n", f"run {run}: the broken pack was imported again"

    unknown = run_cli("score", str(rows), "--rewards", "nosuch", env=env, pythonpath=[site])
    assert unknown.returncode == 2 and "unknown reward 'nosuch'" in unknown.stderr
    assert "available: " in unknown.stderr and "r1_strict_format" in unknown.stderr  # every pack's names, as before
    listed = run_cli("rewards", "list", env=env, pythonpath=[site])  # the listing still shows the failure
    assert listed.returncode == 0 and "grpo-test-counted" in listed.stderr and "this pack is broken" in listed.stderr


FAILS_WHEN_TOLD = """
import os
from grpo_host import hookimpl, reward

if os.environ.get("GRPO_TEST_BREAK"):  # not a file the catalog watches: the pack fails after the catalog is stored
    raise RuntimeError("broken since the catalog was stored")


@reward(description="1.0 for any completion")
def always_one(completion, **_):
    return 1.0


@hookimpl
def register_rewards(register):
    register(always_one)
"""


@pytest.mark.slow  # over 2 s: three CLI runs
def test_a_named_pack_that_fails_after_the_catalog_was_stored_loads_every_pack_for_the_error(tmp_path):
    (tmp_path / "site").mkdir()
    site = lay_out_module_pack(tmp_path / "site", "grpo_test_told", FAILS_WHEN_TOLD, "grpo-test-told")
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"prompt": "p", "completion": "anything"}) + "\n")
    env = {"GRPO_HOST_CACHE": str(tmp_path / "cache")}
    for _ in range(2):  # the first stores the catalog, the second loads only this pack
        proc = run_cli("score", str(rows), "--rewards", "always_one", "--json", env=env, pythonpath=[site])
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["rewards"]["always_one"]["mean"] == 1.0
    broken = run_cli("score", str(rows), "--rewards", "always_one", env={**env, "GRPO_TEST_BREAK": "1"},
                     pythonpath=[site])
    assert broken.returncode == 2 and "unknown reward 'always_one'" in broken.stderr
    assert "math" in broken.stderr and "r1_strict_format" in broken.stderr  # every other pack's names, as before
