"""``grpo-host audit`` against rewards that fight the host (the test pack ``hostile``, tests/packs/hostile): a reward
that never returns (inline, or in a worker that ignores its alarm), kills its worker with a signal, calls
``os._exit(3)`` or ``sys.exit(3)``, prints to stdout, returns inf, a string or one value too few, or raises.

Each audit must finish within the stated bound (a reward whose items time out or lose their worker is called no
more after ``HANG_STREAK`` of them in a row or ``HANG_TOTAL`` in all), report exactly what the reward did, exit 0, 1
or 2, and keep stdout for the report alone.  The pack's timeouts are 0.5 s, so the bounds below are generous
multiples of what the stop allows (interpreter start-ups included), not of the machine's speed.
"""

from __future__ import annotations

import json

import pytest
from conftest import run_cli, write_jsonl

from grpo_host.audit import audit_rows
from grpo_host.audit.run import HANG_STREAK, HANG_TOTAL
from grpo_host.discovery.plugins import load_plugins

ROWS = [{"prompt": f"What is {a} plus {b}? Reply with the number.", "answer": str(a + b)}
        for a, b in [(17, 25), (3, 4), (120, 33), (8, 9), (41, 19), (250, 250), (7, 70), (66, 1)]]


def pairs(rows):
    return [(f"row {i}", row) for i, row in enumerate(rows, 1)]


@pytest.fixture
def hostile(packs, monkeypatch):
    monkeypatch.syspath_prepend(str(packs["hostile"]))
    return load_plugins(env={"GRPO_HOST_LOAD_PLUGINS": "hostile"})


def kinds(report, name):
    """Every failure kind the reward's probes saw, summed."""
    [audit] = [r for r in report.rewards if r.name == name]
    out: dict[str, int] = {}
    for probe in audit.probes:
        for kind, count in probe.failures.items():
            out[kind] = out.get(kind, 0) + count
    return audit, out


@pytest.mark.slow  # waits out a few timeouts: 10-15 s
@pytest.mark.parametrize("name", ["hostile_hang", "hostile_hang_worker"])
def test_a_reward_that_never_returns_is_stopped_after_a_few_timeouts(hostile, name):
    """Before: every probe of every row waited out the timeout (about 16 per row), and nothing stopped it.  Now at
    most HANG_TOTAL items (+ one per other worker) wait out their bound (the backstop: a sleeping reward uses no
    CPU), however long each takes on a busy machine."""
    report = audit_rows(pairs(ROWS), f"{name}, hostile_print", plugins=hostile, workers=2)
    audit, seen = kinds(report, name)
    waited = seen.get("timeout", 0) + seen.get("backstop", 0)
    assert seen["skipped"] > 0 and 0 < waited + audit.gold_checked <= HANG_TOTAL + 2
    assert audit.stopped.startswith(f"timed out on {HANG_STREAK} items in a row, so it was called no more")
    [hangs] = [f for f in report.findings if f.kind == "hangs"]
    assert hangs.reward == name and "timed out" in hangs.message
    # the other reward was probed in full: only the hanging one stopped
    healthy, other = kinds(report, "hostile_print")
    assert not other and not healthy.stopped and healthy.empty == 0.0
    assert {p.probe for p in healthy.probes if p.rows == len(ROWS)} >= {"empty", "prompt_echo", "huge"}


@pytest.mark.slow  # waits out a few timeouts: 10-15 s
@pytest.mark.parametrize(("name", "calls"), [
    ("hostile_hang_batch", HANG_STREAK),  # one call a batch: each timed-out batch counts once
    ("hostile_hang_async_batch", HANG_STREAK),
    ("hostile_hang_async", HANG_STREAK + 1),  # two at a time: the pair under way when the third timed out finishes
])
def test_an_async_or_batch_reward_that_never_returns_is_stopped_as_a_sync_one_is(hostile, name, calls):
    """The bound holds whatever the reward's kind.  An async per-item reward was counted only once its whole batch
    was in: every item of the batch (16 rows here, 8 rounds of two) waited out its timeout before the stop."""
    import grpo_test_hostile

    grpo_test_hostile.CALLS.clear()
    report = audit_rows(pairs(ROWS * 2), name, plugins=hostile)
    audit, seen = kinds(report, name)
    assert audit.stopped.startswith(f"timed out on {HANG_STREAK} items in a row, so it was called no more"), audit
    assert seen["skipped"] > 0 and seen.get("timeout", 0) + seen.get("backstop", 0) > 0 and "raised" not in seen
    assert grpo_test_hostile.CALLS[name] <= calls, grpo_test_hostile.CALLS
    [hangs] = [f for f in report.findings if f.kind == "hangs"]
    assert hangs.reward == name and "timed out" in hangs.message


def test_a_reward_that_kills_its_worker_is_reported_as_such_and_stopped(hostile):
    report = audit_rows(pairs(ROWS), "hostile_signal", plugins=hostile, workers=2)
    audit, seen = kinds(report, "hostile_signal")
    assert "raised" not in seen and seen["skipped"] > 0
    assert audit.stopped.startswith(f"lost its worker process on {HANG_STREAK} items in a row")
    [errors] = [f for f in report.findings if f.kind == "errors"]
    assert "made it kill its worker process" in errors.message and "killed by signal SIGKILL" in errors.message


@pytest.mark.parametrize(("name", "did", "said"), [
    ("hostile_inf", "return a bad value", "returned inf (rewards must be finite)"),
    ("hostile_text", "return a bad value", "returned str '1.0' (expected a float or None)"),
    ("hostile_short", "return a bad value", "values for"),
    ("hostile_sys_exit", "try to end the process", "called sys.exit(3)"),
    ("hostile_os_exit", "try to end the process", "called os._exit(3)"),
    ("hostile_raise", "raise", "ValueError: hostile"),
])
def test_each_failure_is_named_as_what_it_was(hostile, name, did, said):
    """Before: every one of these read "made it raise" (and os._exit ended the test process)."""
    report = audit_rows(pairs(ROWS), name, plugins=hostile)
    [errors] = [f for f in report.findings if f.kind == "errors"]
    assert f"made it {did} (" in errors.message and said in errors.message, errors.message
    _, seen = kinds(report, name)
    expected = {"return a bad value": "bad value", "try to end the process": "exited", "raise": "raised"}[did]
    assert set(seen) <= {expected, "skipped"}, seen


def test_the_cli_survives_os_exit_and_keeps_stdout_for_the_json(packs, tmp_path):
    """Before: os._exit(3) ended ``audit`` with exit 3 and no output; a reward's prints landed in the JSON."""
    data = write_jsonl(tmp_path / "sums.jsonl", ROWS[:3])
    env = {"GRPO_HOST_LOAD_PLUGINS": "hostile"}
    exited = run_cli("audit", str(data), "-r", "hostile_os_exit", "--json", pythonpath=[packs["hostile"]], env=env)
    assert exited.returncode == 1, exited.stderr
    report = json.loads(exited.stdout)
    [errors] = [f for f in report["findings"] if f["kind"] == "errors"]
    assert "called os._exit(3)" in errors["message"]
    printed = run_cli("audit", str(data), "-r", "hostile_print", "--json", pythonpath=[packs["hostile"]], env=env)
    assert printed.returncode in (0, 1), printed.stderr
    assert json.loads(printed.stdout)["rewards"][0]["name"] == "hostile_print"  # stdout is the JSON alone
    assert "HOSTILE PRINT" in printed.stderr and "HOSTILE WRITE" in printed.stderr


@pytest.mark.slow  # waits out a hang's timeouts: about 11 s
def test_the_cli_reports_a_hang_and_a_dead_worker_within_the_bound(packs, tmp_path):
    data = write_jsonl(tmp_path / "sums.jsonl", ROWS)
    proc = run_cli("audit", str(data), "-r", "hostile_hang_worker, hostile_signal, hostile_inf", "--workers", "2",
                   pythonpath=[packs["hostile"]], env={"GRPO_HOST_LOAD_PLUGINS": "hostile", "COLUMNS": "200"},
                   timeout=600)  # a liveness bound only: the hanging reward is stopped after HANG_STREAK items
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stdout.splitlines()
    assert any(line.startswith("FAIL hostile_hang_worker: timed out on 3 items in a row") for line in lines)
    assert any(line.startswith("FAIL hostile_signal: lost its worker process on 3 items in a row") for line in lines)
    assert any(line.startswith("FAIL hostile_inf: ") and "made it return a bad value" in line for line in lines)
