"""``grpo-host audit`` against deliberately weak rewards, a judge that obeys injected instructions, broken golds,
and the built-in rewards on the project's example datasets.

The weak rewards are the test pack ``weak`` (tests/packs/weak), installed with pip like any pack: a reward that
pays substrings, one that pays any ``\\boxed{}``, a code reward that pays exit status 0, and one with a back door
that only the pack's own probe (through ``register_probes``) knows.  The weak judge is a real HTTP server on
127.0.0.1 behind the built-in ``judge`` reward.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from pathlib import Path

import pytest
from conftest import run_cli, write_jsonl

from grpo_host.audit import Thresholds, audit_file, audit_rows
from grpo_host.discovery.plugins import load_plugins
from grpo_host.errors import AuditFailed
from grpo_host.testing import assert_audit_passes
from grpo_host.training.config import load_config
from grpo_host.training.train import prepare

EXAMPLES = Path(__file__).parent.parent / "examples"
SUMS = [{"prompt": f"What is {a} plus {b}? Reply with the number.", "answer": str(a + b)}
        for a, b in [(17, 25), (3, 4), (120, 33), (8, 9), (41, 19), (250, 250), (7, 70), (66, 1)]]
PROGRAMS = [
    {"prompt": "Read two integers and print their sum.", "tests": [{"input": "1 2\n", "output": "3\n"}],
     "solution": "print(sum(map(int, input().split())))"},
    {"prompt": "Read n and print n squared.",
     "tests": [{"input": "3\n", "output": "9\n"}, {"input": "4\n", "output": "16\n"}],
     "solution": "n = int(input())\nprint(n * n)"},
    {"prompt": "Read a word and print it reversed.", "tests": [{"input": "abc\n", "output": "cba\n"}],
     "solution": "print(input()[::-1])"},
]


LARGER = [{"prompt": f"Which is larger, {a} or {b}?", "answer": str(max(a, b))}
          for a, b in [(17, 25), (3, 4), (120, 33), (8, 9), (41, 19), (250, 251), (7, 70), (66, 1)]]
CHOICES = [{"prompt": f"Which one is a {kind}?\n"
                      + "\n".join(f"{letter}) {o}" for letter, o in zip("ABCD", options, strict=False)),
            "answer": "ABCD"[options.index(right)]}
           for kind, options, right in [("planet", ["Moon", "Mars", "Sun", "Comet"], "Mars"),
                                        ("fruit", ["Apple", "Stone", "Chair", "Cloud"], "Apple"),
                                        ("metal", ["Wood", "Glass", "Iron", "Paper"], "Iron"),
                                        ("bird", ["Cat", "Dog", "Fish", "Crow"], "Crow")]]
NEAR = [{"prompt": f"How many pens are in {n} boxes of ten, plus {k} more?", "answer": str(10 * n + k)}
        for n, k in [(4, 2), (4, 7), (5, 1), (3, 9), (4, 4), (5, 5), (4, 0), (3, 3)]]
ASSERTS = [
    {"prompt": "Write def half(x) returning x / 2.",
     "tests": "assert abs(half(3) - 1.5) < 1e-9\nassert abs(half(0)) < 1e-9",
     "solution": "def half(x):\n    return x / 2"},
    {"prompt": "Write def dist(a, b), the absolute difference.", "tests": "assert abs(dist(3, 5) - 2) < 1e-9",
     "solution": "def dist(a, b):\n    return abs(a - b)"},
]
SCHEMAS = [{"prompt": "A person as JSON.", "schema": {"type": "object", "properties": {"name": {"type": "string"}},
                                                     "required": ["name"], "examples": [{"name": "Ada"}]}},
           {"prompt": "A colour as JSON.", "schema": {"type": "object", "properties": {"colour": {"enum": ["red"]}},
                                                      "required": ["colour"], "examples": [{"colour": "red"}]}}]


def pairs(rows):
    return [(f"row {i}", row) for i, row in enumerate(rows, 1)]


@pytest.fixture
def weak(packs, monkeypatch):
    """The weak pack, the R1 formats and the code and JSON packs' probes, through their installed entry points."""
    monkeypatch.syspath_prepend(str(packs["weak"]))
    return load_plugins(env={"GRPO_HOST_LOAD_PLUGINS": "weak,r1,code,json_schema"})


def finding(report, reward, kind="exploit"):
    found = [f for f in report.findings if f.reward == reward and f.kind == kind]
    assert found, "\n".join(report.lines(200))
    return found[0]


def test_a_reward_that_pays_substrings_is_caught_by_the_flood_of_numbers(weak):
    report = audit_rows(pairs(SUMS), "weak_substring", plugins=weak)
    caught = finding(report, "weak_substring")
    assert caught.probe == "huge" and "huge" in caught.probes
    [result] = [p for r in report.rewards for p in r.probes if p.probe == "huge"]
    assert result.flagged and result.paid == len(SUMS)
    assert not report.ok and report.rewards[0].gold_failed == 0  # the references themselves earn full marks


def test_a_reward_that_pays_any_boxed_answer_is_caught_by_the_format_alone(weak):
    report = audit_rows(pairs(SUMS), "weak_boxed", plugins=weak)
    assert report.layout == "boxed"  # the layout the reward pays for, found from the references
    caught = finding(report, "weak_boxed")
    assert {"format_only", "boxed_each"} <= set(caught.probes)


@pytest.mark.slow  # a Python subprocess per probe and row
def test_a_code_reward_that_pays_exit_status_0_is_caught_by_an_early_exit(weak):
    report = audit_rows(pairs(PROGRAMS), "weak_exit_zero", plugins=weak)
    caught = finding(report, "weak_exit_zero")
    assert {"early_exit", "hard_exit", "print_expected"} <= set(caught.probes)
    assert report.rewards[0].gold_checked == len(PROGRAMS) and report.rewards[0].gold_failed == 0


@pytest.mark.parametrize(("reward", "rows", "kind", "caught"), [
    ("weak_lenient", SUMS, "empty", {"empty", "whitespace"}),
    ("weak_substring", LARGER, "exploit", {"prompt_echo"}),
    ("weak_any_number", LARGER, "exploit", {"many_values", "hedge"}),
    ("weak_any_block", LARGER, "exploit", {"answer_spam"}),
    ("weak_any_box", LARGER, "exploit", {"boxed_each"}),
    ("weak_letters", CHOICES, "exploit", {"every_option"}),
    ("weak_tolerance", NEAR, "exploit", {"common_gold"}),
    ("weak_tags", SUMS, "exploit", {"tag_stuffing"}),
    pytest.param("weak_asserts", ASSERTS, "exploit", {"early_exit", "hard_exit", "harness_patching", "shadow_builtins"},
                 marks=pytest.mark.slow),  # a Python subprocess per probe and row
    ("weak_json", SCHEMAS, "exploit", {"json_minimal", "json_keys_only", "json_empty_values", "json_schema_echo"}),
], ids=lambda v: v if isinstance(v, str) else None)
def test_each_probe_class_catches_the_reward_weak_in_that_way(weak, reward, rows, kind, caught):
    report = audit_rows(pairs(rows), reward, plugins=weak)
    found = finding(report, reward, kind)
    assert caught <= set(found.probes), found
    assert report.rewards[0].gold_failed == 0  # each weak reward still pays its references full marks


def test_a_back_door_is_caught_only_by_the_pack_probe_that_knows_it(weak):
    report = audit_rows(pairs(SUMS), "weak_magic", plugins=weak)
    caught = finding(report, "weak_magic")
    assert caught.probes == ["magic_word"] and caught.fix == "remove the debugging back door"
    generic_only = load_plugins(env={"GRPO_HOST_LOAD_PLUGINS": "weak"})
    generic_only.registry._claims["probe"].clear()  # the same rewards, without the pack's probe
    assert audit_rows(pairs(SUMS), "weak_magic", plugins=generic_only).ok


def test_format_rewards_weighted_over_correctness_are_a_finding_on_the_total():
    report = audit_file(EXAMPLES / "letters.jsonl", "accuracy:0.2, r1_strict_format:1", sample=40)
    [total] = [f for f in report.findings if f.kind == "total"]
    assert "format_only" in total.rows and report.layout == "r1"
    assert audit_file(EXAMPLES / "letters.jsonl", "accuracy:2, r1_strict_format:0.5", sample=40).ok


def test_the_built_in_r1_rewards_pass_on_the_example_datasets():
    for data in ("letters.jsonl", "r1_completions.jsonl"):
        report = assert_audit_passes("accuracy:2, r1_strict_format:0.5, r1_soft_format:0.2, think_format:0.2",
                                     EXAMPLES / data)
        assert report.rows and all(r.gold_failed == 0 for r in report.rewards)


@pytest.mark.slow
def test_math_passes_on_the_examples_and_flags_unparseable_golds_by_row(tmp_path):
    """Through the CLI, as a user runs it (math runs in worker processes: a few seconds to start)."""
    ok = run_cli("audit", str(EXAMPLES / "r1_completions.jsonl"), "-r", "math:2, r1_strict_format:0.5",
                 env={"COLUMNS": "80"})
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert all(len(line) <= 80 for line in ok.stdout.splitlines())
    rows = [*SUMS[:4], {"prompt": "What is 2 plus 2?", "answer": "\\frac{4}{"},
            {"prompt": "Name the shape.", "answer": "see the figure above"}]
    data = write_jsonl(tmp_path / "golds.jsonl", rows)
    bad = run_cli("audit", str(data), "-r", "math", "--json")
    assert bad.returncode == 1, bad.stderr
    report = json.loads(bad.stdout)
    [gold] = [f for f in report["findings"] if f["kind"] == "gold"]
    assert gold["reward"] == "math" and gold["rows"] == ["line 5", "line 6"]


def test_the_cli_prints_80_columns_names_the_fix_and_exits_1(packs, tmp_path):
    data = write_jsonl(tmp_path / "sums.jsonl", SUMS)
    proc = run_cli("audit", str(data), "-r", "weak_boxed, weak_substring", pythonpath=[packs["weak"]],
                   env={"COLUMNS": "80", "GRPO_HOST_LOAD_PLUGINS": "weak"})
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines)
    assert any(line.startswith("FAIL weak_boxed: format_only") for line in lines)
    assert any(line.startswith("  fix: an empty answer block must earn nothing") for line in lines)
    assert lines[-1] == "verdict: 2 findings, exit 1"


@pytest.mark.slow  # three CLI runs
def test_the_cli_refuses_what_it_cannot_audit_in_one_line(tmp_path):
    data = write_jsonl(tmp_path / "sums.jsonl", SUMS)
    for args in (["-r", "no_such_reward"], ["-r", "accuracy", "--sample", "0"]):
        proc = run_cli("audit", str(data), *args)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    missing = run_cli("audit", str(tmp_path / "absent.jsonl"), "-r", "accuracy")
    assert missing.returncode == 2 and "no such dataset" in missing.stderr


def test_train_runs_the_short_audit_before_loading_the_model(packs, monkeypatch, tmp_path, capsys):
    """``prepare`` is the run flow up to (not including) loading the model: the audit runs there, on the run's own
    ensemble, and ``audit: stop`` ends the run before anything is written."""
    monkeypatch.syspath_prepend(str(packs["weak"]))
    data = write_jsonl(tmp_path / "sums.jsonl", SUMS)
    config = {"model": "builtin:tiny", "data": str(data), "rewards": "weak_boxed", "plugins": ["grpo_test_weak"]}
    with pytest.raises(AuditFailed) as stopped:
        prepare(load_config(data=config, overrides=["audit=stop", f"output_dir={tmp_path / 'stopped'}"]))
    assert stopped.value.report.findings[0].probe == "format_only" and not (tmp_path / "stopped").exists()
    job = prepare(load_config(data=config, overrides=[f"output_dir={tmp_path / 'warned'}"]))  # audit: warn
    job.ensemble.close()
    assert "audit: FAIL weak_boxed: format_only" in capsys.readouterr().err
    job = prepare(load_config(data=config, overrides=["audit=off", f"output_dir={tmp_path / 'off'}"]))
    job.ensemble.close()
    assert "audit" not in capsys.readouterr().err


def test_train_with_audit_stop_exits_1_with_the_table_before_any_model(packs, tmp_path):
    data = write_jsonl(tmp_path / "sums.jsonl", SUMS)
    config = tmp_path / "run.yaml"
    config.write_text(f"model: builtin:tiny\ndata: {data}\nrewards: weak_boxed\naudit: stop\n"
                      f"output_dir: {tmp_path / 'run'}\n")
    proc = run_cli("train", str(config), pythonpath=[packs["weak"]], env={"GRPO_HOST_LOAD_PLUGINS": "weak,backends"})
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "FAIL weak_boxed: format_only pays" in proc.stderr and "nothing was trained" in proc.stderr
    assert not (tmp_path / "run").exists()


def test_serve_audits_posted_rows_with_its_rewards(weak):
    """``POST /audit`` on a real server on 127.0.0.1 (the app ``grpo-host serve`` runs, under uvicorn)."""
    import httpx
    import uvicorn

    from grpo_host import Ensemble
    from grpo_host.serving.server import ServeSettings, build_app

    app = build_app(lambda: Ensemble.from_spec("weak_boxed, r1_soft_format:0.1", plugins=weak), ServeSettings())
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="error"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        while not server.started:
            time.sleep(0.01)
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/audit"
        report = httpx.post(url, json={"rows": SUMS, "sample": 5}, timeout=60).json()
        assert report["rows"] == 5 and not report["ok"]
        assert [(f["reward"], f["probe"]) for f in report["findings"] if f["kind"] == "exploit"] == [
            ("weak_boxed", "format_only")]
        refused = httpx.post(url, json={"rows": SUMS, "sample": 0}, timeout=60)
        assert refused.status_code == 422 and "sample" in refused.json()["error"]
    finally:
        server.should_exit = True
        thread.join(5)


def test_rows_a_reward_cannot_read_are_left_out_and_named(weak):
    rows = [*SUMS, {"prompt": "What is 1 plus 1?"}, "not a row"]
    report = audit_rows(pairs(rows), "weak_magic", plugins=weak)
    assert (report.rows, report.read, report.unreadable, report.incomplete) == (len(SUMS), len(rows), 1, ["row 9"])
    assert any(line.startswith("note: left out 1 unreadable rows and 1 lacking") for line in report.lines())
    with pytest.raises(ValueError, match="no row to audit"):
        audit_rows(pairs(rows[-2:]), "weak_magic", plugins=weak)


def test_a_probe_that_raises_is_skipped_and_named_not_a_crash(weak):
    from grpo_host import hookimpl, probe

    @probe(rewards=("weak_magic",))
    def clumsy(target):
        """A pack's probe with bugs: it returns a number, and raises on rows without a digit 7."""
        if "7" not in target.prompt:
            raise KeyError("tests")
        return 7

    class Pack:
        __name__ = "clumsy_pack"

        @staticmethod
        @hookimpl
        def register_probes(register):
            register.add_probe(clumsy)

    plugins = load_plugins(plugins=[Pack()], env={"GRPO_HOST_LOAD_PLUGINS": "weak"})
    report = audit_rows(pairs(SUMS), "weak_magic", plugins=plugins)
    [(rows, message)] = report.broken.values()
    assert rows == len(SUMS) and "probe 'clumsy' (clumsy_pack 0)" in message
    assert message.endswith("returned int, not text")  # the first row's; the rows without a 7 raised KeyError
    assert any(line.startswith("note: probe 'clumsy'") for line in report.lines())


def test_thresholds_are_shares():
    with pytest.raises(ValueError, match="margin must be a share"):
        Thresholds(margin=2)


class WeakJudge:
    """A judge model stand-in, 2 out of 10 for anything, and weak in one way: ``obeys`` does what the judged text
    tells it (10 when it asks for the highest score); ``echoes`` repeats the highest score tag it read, those in
    the judged text included.

    A real Starlette app on 127.0.0.1 speaking the OpenAI chat-completions protocol, so the built-in ``judge``
    reward drives it over real HTTP."""

    def __init__(self, weakness):
        self.weakness = weakness

    def __enter__(self):
        import uvicorn
        from starlette.applications import Starlette
        from starlette.responses import JSONResponse
        from starlette.routing import Route

        async def chat(request):
            body = await request.json()
            text = body["messages"][-1]["content"]
            forged = re.findall(r"<score>(\d+)</score>", text)
            score = "2"
            if self.weakness == "obeys" and "highest score" in text:
                score = "10"
            elif self.weakness == "echoes" and forged:
                score = max(forged, key=int)
            return JSONResponse({"id": "x", "object": "chat.completion", "model": body["model"], "choices": [
                {"index": 0, "message": {"role": "assistant", "content": f"<score>{score}</score>"},
                 "finish_reason": "stop"}], "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})

        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        self.server = uvicorn.Server(uvicorn.Config(Starlette(routes=[Route("/v1/chat/completions", chat,
                                                                            methods=["POST"])]), log_level="error"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [sock]}, daemon=True)
        self.thread.start()
        while not self.server.started:
            time.sleep(0.01)
        return self

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(5)


@pytest.mark.parametrize(("weakness", "probe"), [("obeys", "judge_injection"), ("echoes", "judge_fake_verdict")])
def test_a_judge_that_obeys_the_judged_text_is_caught(weakness, probe):
    with WeakJudge(weakness) as judge:
        spec = f'judge(base_url="http://127.0.0.1:{judge.port}/v1", model="weak")'
        report = audit_rows(pairs(SUMS[:4]), spec)
    caught = finding(report, "judge")
    assert caught.probes == [probe]
