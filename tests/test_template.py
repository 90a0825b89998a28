"""The reward-pack author's path, walked end to end with real subprocesses.

``grpo-host new-plugin`` renders ``plugin_template/``; the result is built
and installed with pip (into a target directory of its own, put on
``PYTHONPATH`` for the subprocesses, so the shared environment never sees
it), listed and used through the CLI, and its own test suite is run with
pytest.  The error paths must leave nothing written.  The helpers of
``grpo_host.testing`` are checked against the built-in R1 pack.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import clean_env, cli_json, run_cli, write_jsonl

from grpo_host.scaffold import render_pack
from grpo_host.testing import assert_discovered, assert_listing_is_light, data_check, load_pack, score_rows

pytestmark = pytest.mark.slow  # left out of the fast lane (-m "not slow"): rendered, installed packs

DIST, MODULE, REWARD = "grpo-rewards-e2e", "grpo_rewards_e2e", "e2e_contains"


@pytest.fixture(scope="module")
def pack(tmp_path_factory) -> Path:
    """The rendered pack's directory, as ``grpo-host new-plugin`` writes it."""
    target = tmp_path_factory.mktemp("author") / DIST
    proc = run_cli("new-plugin", DIST, "--dir", str(target), "--reward", REWARD, "--no-input")
    assert proc.returncode == 0, proc.stderr
    assert f"created {target}" in proc.stdout
    return target


@pytest.fixture(scope="module")
def site(pack, tmp_path_factory) -> Iterator[Path]:
    """The pack built and installed by pip into a directory of its own; uninstalled (deleted) afterwards."""
    target = tmp_path_factory.mktemp("site")
    try:
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
             "--target", str(target), str(pack)],
            check=True, capture_output=True, timeout=300,
        )
        yield target
    finally:
        shutil.rmtree(target, ignore_errors=True)


def run_pack_tests(pack: Path, pythonpath: list[Path], *args: str) -> subprocess.CompletedProcess:
    """Run the rendered pack's own test suite the way its author would (``pytest`` in the pack's directory).

    ``-P`` keeps the pack's directory off ``sys.path``: the tests see the pack
    only through ``PYTHONPATH``, as an installed pack is seen.
    """
    env = clean_env("PYTEST_", PYTHONPATH=os.pathsep.join(map(str, pythonpath)))
    return subprocess.run(
        [sys.executable, "-P", "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=pack, env=env, capture_output=True, text=True, timeout=300, check=False,
    )


def test_new_plugin_renders_a_complete_pack(pack):
    files = {str(p.relative_to(pack)) for p in pack.rglob("*") if p.is_file()}
    assert files == {
        ".github/workflows/test.yml",
        ".gitignore",
        "README.md",
        "examples/rows.jsonl",
        "pyproject.toml",
        f"{MODULE}/__init__.py",
        f"{MODULE}/rewards.py",
        f"tests/test_{MODULE}.py",
    }
    project = tomllib.loads((pack / "pyproject.toml").read_text())
    assert project["project"]["name"] == DIST
    assert project["project"]["entry-points"]["grpo_host"] == {DIST: f"{MODULE}.rewards"}
    assert any(dep.startswith("grpo-host>=") for dep in project["project"]["dependencies"])
    readme = (pack / "README.md").read_text()
    check = f"grpo-host data check examples/rows.jsonl --rewards {REWARD}"
    for usage in (f"pip install {DIST}", "grpo-host rewards list", check, f"- name: {REWARD}"):
        assert usage in readme
    workflow = (pack / ".github/workflows/test.yml").read_text()
    assert "${{ matrix.python-version }}" in workflow and f"--rewards {REWARD}" in workflow
    rewards_py = (pack / MODULE / "rewards.py").read_text()
    assert "import unicodedata" not in rewards_py.split("@reward")[0]  # the heavy-import rule, shown by example


def test_the_installed_pack_is_listed_with_its_name_and_version(site):
    rewards = {r["name"]: r for r in cli_json("rewards", "list", pythonpath=[site])}
    listed = rewards[REWARD]
    assert (listed["pack"], listed["version"]) == (DIST, "0.1.0")
    assert listed["requires"] == {"expected or answer": "str"}
    props = listed["params"]["properties"]
    assert set(props) == {"case_sensitive", "last_line_only"} and all(p["description"] for p in props.values())
    assert "accuracy" in rewards  # the built-in packs are still there
    [record] = [r for r in cli_json("plugins", "list", pythonpath=[site]) if r["name"] == DIST]
    assert (record["dist"], record["source"], record["status"], record["rewards"]) == (
        DIST, "entry point", "loaded", [REWARD])


def test_the_installed_pack_scores_rows_through_grpo_host_score(site, tmp_path):
    data = write_jsonl(tmp_path / "rows.jsonl", [
        {"prompt": "Capital of France?", "answer": "Paris", "completion": "It is PARIS."},
        {"prompt": "Capital of France?", "answer": "Paris", "completion": "It is Lyon."},
        {"prompt": "Largest planet?", "expected": "Jupiter", "completion": "Jupiter"},
    ])
    proc = run_cli("score", str(data), "--rewards", f"{REWARD}:2", "--out", "-", pythonpath=[site])
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [line["rewards"][REWARD] for line in lines] == [1.0, 0.0, 1.0]
    assert [line["total"] for line in lines] == [2.0, 0.0, 2.0]
    cased = run_cli("score", str(data), "--rewards", f"{REWARD}(case_sensitive=true)", "--out", "-",
                    pythonpath=[site])
    assert [json.loads(line)["rewards"][REWARD] for line in cased.stdout.splitlines()] == [0.0, 0.0, 1.0]


def test_the_installed_pack_trains(site, tmp_path, env):
    """One TRL step on the built-in tiny model with the rendered pack's reward, found through its entry point:
    the pack is written against the public API only, and a run uses it as it uses a built-in one."""
    write_jsonl(tmp_path / "rows.jsonl", [{"prompt": "Capital of France?", "answer": "Paris"},
                                          {"prompt": "Largest planet?", "answer": "Jupiter"}])
    (tmp_path / "run.yaml").write_text(f"model: builtin:tiny\ndata: rows.jsonl\nrewards: {REWARD}\ngroup_size: 2\n"
                                       "batch_size: 2\nmax_steps: 1\nmax_completion_length: 4\noutput_dir: out\n"
                                       "audit: 'off'\n")
    proc = subprocess.run([sys.executable, "-m", "grpo_host", "train", "run.yaml"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600, env={**env, "PYTHONPATH": str(site)})
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["steps"] == 1 and REWARD in summary["rewards"]
    packs = {p["distribution"]: p for p in json.loads((tmp_path / "out" / "packs.json").read_text())}
    assert (packs[DIST]["version"], packs[DIST]["source"], packs[DIST]["rewards"]) == ("0.1.0", "entry point", [REWARD])


def test_the_sample_rows_pass_the_cli_data_check_and_bad_rows_fail_it(pack, site, tmp_path):
    ok = run_cli("data", "check", str(pack / "examples/rows.jsonl"), "--rewards", REWARD, pythonpath=[site])
    assert ok.returncode == 0, ok.stdout + ok.stderr
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"prompt": "2+2?", "answer": "4"}, {"prompt": "3+3?"}])
    proc = run_cli("data", "check", str(bad), "--rewards", REWARD, "--json", pythonpath=[site])
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert report["ok"] is False
    assert [(p["reward"], p["column"], p["problem"], p["rows"]) for p in report["problems"]] == [
        (REWARD, "expected or answer", "missing", ["line 2"])]


def test_the_rendered_pack_passes_its_own_test_suite(pack, site):
    proc = run_pack_tests(pack, [site])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "15 passed" in proc.stdout.splitlines()[-1], proc.stdout


def test_a_pack_rendered_with_a_monitor_registers_it_and_its_own_tests_pass(tmp_path):
    dist, name = "grpo-rewards-watch", "watch_long_answers"
    pack = tmp_path / dist
    proc = run_cli("new-plugin", dist, "--dir", str(pack), "--monitor", name, "--no-input")
    assert proc.returncode == 0, proc.stderr
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--target", str(site), str(pack)], check=True, capture_output=True, timeout=300)
    listed = {m["name"]: m for m in cli_json("monitors", "list", pythonpath=[site])}
    assert listed[name]["pack"] == dist and set(listed[name]["params"]["properties"]) == {"words", "warn"}
    result = run_pack_tests(pack, [site])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "16 passed" in result.stdout  # the 15 of a plain pack, and the monitor's
    plain = (pack.parent / "plain")
    assert run_cli("new-plugin", "grpo-rewards-plain", "--dir", str(plain), "--no-input").returncode == 0
    assert "monitor" not in (plain / "grpo_rewards_plain" / "rewards.py").read_text()


def test_a_pack_rendered_with_an_environment_registers_it_and_its_own_tests_pass(tmp_path):
    dist, name = "grpo-env-guess", "word_guess"
    pack = tmp_path / dist
    proc = run_cli("new-plugin", dist, "--dir", str(pack), "--environment", name, "--no-input")
    assert proc.returncode == 0, proc.stderr
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--target", str(site), str(pack)], check=True, capture_output=True, timeout=300)
    [listed] = [e for e in cli_json("environments", "list", pythonpath=[site]) if e["name"] == name]
    assert (listed["pack"], [t["call"] for t in listed["tools"]], listed["requires"], listed["reward"]) == (
        dist, ["check_guess(guess)"], {"expected or answer": "str"}, True)
    assert set(listed["params"]["properties"]) == {"max_guesses"}
    result = run_pack_tests(pack, [site])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "26 passed" in result.stdout  # the 15 of a plain pack, and the environment's 11
    assert f"grpo-host environments show {name}" in (pack / ".github/workflows/test.yml").read_text()


def test_an_environment_name_that_is_not_an_identifier_is_an_error_and_writes_nothing(tmp_path):
    proc = run_cli("new-plugin", "grpo-env-x", "--dir", str(tmp_path / "x"), "--environment", "word-guess",
                   "--no-input")
    assert proc.returncode == 2 and "environment name 'word-guess' must be a Python identifier" in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_the_rendered_suite_fails_when_the_pack_is_importable_but_not_installed(pack, tmp_path):
    """Its discovery test proves the entry point, not the import: the source tree alone must not pass it.

    The copy leaves out what ``pip install`` wrote into the pack's directory
    (``*.egg-info`` carries the entry points, so it would count as installed).
    """
    source = tmp_path / DIST
    shutil.copytree(pack, source, ignore=shutil.ignore_patterns("*.egg-info", "build"))
    proc = run_pack_tests(source, [source], "-k", "discovers")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"no installed 'grpo_host' entry point or distribution is named {DIST!r}" in proc.stdout


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("bad name", "is not a valid distribution name"),
        ("pack-", "is not a valid distribution name"),
        ("3d-rewards", "which Python cannot import"),
        ("json", "the standard library or grpo-host already uses"),
        ("grpo-host", "the standard library or grpo-host already uses"),
    ],
)
def test_an_invalid_name_is_an_error_and_writes_nothing(tmp_path, name, message):
    target = tmp_path / "nested" / "pack"
    proc = run_cli("new-plugin", name, "--dir", str(target), "--no-input")
    assert proc.returncode == 2
    assert message in proc.stderr and repr(name) in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_an_invalid_reward_name_is_an_error_and_writes_nothing(tmp_path):
    proc = run_cli("new-plugin", "grpo-rewards-x", "--dir", str(tmp_path / "x"), "--reward", "not-an-id",
                   "--no-input")
    assert proc.returncode == 2 and "reward name 'not-an-id' must be a Python identifier" in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_non_empty_target_is_refused_and_left_as_it_was(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    proc = run_cli("new-plugin", "grpo-rewards-x", "--dir", str(tmp_path), "--no-input")
    assert proc.returncode == 2 and "exists and is not an empty directory" in proc.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_asking_without_a_terminal_is_an_error_that_points_to_no_input(tmp_path):
    proc = run_cli("new-plugin", "grpo-rewards-x", "--dir", str(tmp_path / "x"), input="")
    assert proc.returncode == 2 and "input is not a terminal; pass --no-input" in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_an_empty_target_directory_is_filled(tmp_path):
    target = render_pack("grpo-rewards-x", tmp_path, interactive=False)
    assert target == tmp_path and (tmp_path / "grpo_rewards_x" / "rewards.py").is_file()
    assert 'name="grpo_rewards_x_contains_answer"' in (tmp_path / "grpo_rewards_x" / "rewards.py").read_text()


def test_a_failure_while_rendering_writes_nothing(tmp_path):
    """The pack is rendered into a scratch directory first: a template error leaves no half-written pack."""
    template = tmp_path / "template-with-a-bug"
    (template / "template").mkdir(parents=True)
    (template / "copier.yml").write_text("_subdirectory: template\n")
    (template / "template" / "a.txt").write_text("fine\n")
    (template / "template" / "b.txt.jinja").write_text("{{ unclosed\n")
    target = tmp_path / "out" / "pack"
    with pytest.raises(Exception, match="unclosed|unexpected|expected token"):
        render_pack("grpo-rewards-x", target, interactive=False, template=template)
    assert not (tmp_path / "out").exists()


# grpo_host.testing, checked against the built-in R1 pack (distribution grpo-host, entry point r1)

def test_load_pack_holds_only_that_pack():
    plugins = load_pack("r1")
    assert [r.name for r in plugins.records] == ["r1"]
    assert plugins.registry.reward("accuracy").pack == "grpo-host"


def test_load_pack_names_what_is_installed_when_the_pack_is_not():
    with pytest.raises(AssertionError, match=r"named 'grpo-no-such-pack'.*installed: .*r1 \(grpo-host\)"):
        load_pack("grpo-no-such-pack")


def test_assert_discovered_names_the_rewards_a_pack_did_not_register():
    assert assert_discovered("r1", rewards=["accuracy"]).name == "r1"
    with pytest.raises(AssertionError, match=r"did not register \['no_such_reward'\]; it registered: accuracy"):
        assert_discovered("r1", rewards=["accuracy", "no_such_reward"])


def test_assert_listing_is_light_passes_for_r1_and_fails_for_a_pack_that_is_absent():
    assert_listing_is_light("r1")
    with pytest.raises(AssertionError, match="no installed grpo_host entry point"):
        assert_listing_is_light("grpo-no-such-pack")


def test_score_rows_scores_like_the_ensemble_and_names_bad_rows():
    r1 = load_pack("r1")
    rows = [{"completion": "<answer>4</answer>", "answer": "4"}, {"completion": "<answer>5</answer>", "answer": "4"}]
    assert score_rows("accuracy", rows, plugins=r1) == [1.0, 0.0]
    with pytest.raises(ValueError, match="row 1: reward 'accuracy' needs column 'answer': missing"):
        score_rows("accuracy", [rows[0], {"completion": "<answer>4</answer>"}], plugins=r1)
    with pytest.raises(ValueError, match="scores one reward"):
        score_rows("accuracy, r1_int", rows, plugins=r1)


def test_data_check_reads_files_and_row_lists(tmp_path):
    r1 = load_pack("r1")
    path = write_jsonl(tmp_path / "rows.jsonl", [{"prompt": "2+2?", "answer": "4"}, {"prompt": "3+3?"}])
    for rows, where in ((path, "line 2"), ([{"prompt": "2+2?", "answer": "4"}, {"prompt": "3+3?"}], "row 2")):
        report = data_check("accuracy", rows, plugins=r1)
        assert [(p.column, p.problem, p.rows) for p in report.problems] == [("answer", "missing", [where])]
