"""Run monitors: each built-in fires on a pathology and stays quiet on a healthy run; the monitor set's policy.

Batches are made the way a run makes them: real completions scored by the
real built-in rewards through an :class:`Ensemble`, then handed to the
monitor as :class:`Batch` (``Batch.of``), so the figures a monitor judges are
real reward values, not numbers set by hand.
"""

from __future__ import annotations

import json
import random
from dataclasses import replace

import pytest
from conftest import cli_json, run_cli, write_jsonl

from grpo_host import Ensemble
from grpo_host.discovery.plugins import default_plugins
from grpo_host.kinds.monitor import Alert, Batch, MonitorSet, Report, choose, monitor
from grpo_host.testing import observe, scored_batch

GROUP = 4


def registry():
    return default_plugins().registry


ENSEMBLES: dict[str, Ensemble] = {}


@pytest.fixture(scope="module", autouse=True)
def _close_ensembles():
    yield
    for ensemble in ENSEMBLES.values():
        ensemble.close()


def scored(spec: str, groups: list[tuple[str, list[str], str]], step: int = 0, lengths=(), max_length=None) -> Batch:
    """A batch of groups ``(prompt, completions, answer)`` scored by the ensemble ``spec``."""
    rows = [{"prompt": p, "completion": c, "answer": a} for p, cs, a in groups for c in cs]
    ensemble = ENSEMBLES.get(spec) or ENSEMBLES.setdefault(spec, Ensemble.from_spec(spec, workers=1))
    return scored_batch(ensemble, rows, step=step, lengths=lengths, max_length=max_length)


def formatted(answer: str) -> str:
    return f"<think>\nworking it out\n</think>\n<answer>\n{answer}\n</answer>\n"


def run(name: str, batches: list[Batch], **params) -> list[Alert]:
    return [alert for report in observe(name, batches, params=params) for alert in report.alerts]


def questions(n: int, seed: int) -> list[tuple[str, int]]:
    rng = random.Random(seed)
    return [(f"What is {a} + {b}?", a + b) for a, b in ((rng.randint(1, 99), rng.randint(1, 99)) for _ in range(n))]


def test_zero_advantage_fires_when_every_group_agrees_and_not_on_mixed_groups():
    flat = [scored("accuracy", [(q, [formatted(str(s))] * GROUP, str(s)) for q, s in questions(4, i)], i)
            for i in range(8)]
    alerts = run("zero_advantage", flat)
    assert alerts and alerts[0].severity == "critical" and "100% of groups had equal rewards" in alerts[0].message
    mixed = [scored("accuracy", [(q, [formatted(str(s)), formatted(str(s + 1))] * 2, str(s))
                                 for q, s in questions(4, i)], i) for i in range(8)]
    assert run("zero_advantage", mixed) == []


def test_reward_collapse_names_a_reward_stuck_at_one_value():
    stuck = [scored("r1_strict_format, accuracy", [(q, [formatted(str(s)), formatted("0")] * 2, str(s))
                                                   for q, s in questions(3, i)], i) for i in range(8)]
    alerts = run("reward_collapse", stuck)
    assert [a.message.split(":")[0] for a in alerts[:1]] == ["reward r1_strict_format collapsed"]
    assert all("accuracy" not in a.message for a in alerts)  # accuracy varies within each batch
    assert {a.severity for a in alerts} == {"warning"}  # stuck from the start: never a signal
    # learned its way to the top (it separated completions before): saturated, said as info, not warned of
    learning = [scored("r1_strict_format, accuracy", [(q, [formatted(str(s)), "no format"] * 2, str(s))
                                                      for q, s in questions(3, i)], i) for i in range(4)]
    learned = run("reward_collapse", learning + [replace(b, step=b.step + 4) for b in stuck])
    assert learned and {a.severity for a in learned} == {"info"}
    assert learned[0].message.startswith("reward r1_strict_format saturated: every completion scored 1, its best")


def test_divergence_fires_when_format_rises_and_accuracy_does_not():
    def batch(i: int, share_formatted: float, share_right: float) -> Batch:
        groups = []
        for q, s in questions(4, i):
            right = [j < share_right * GROUP for j in range(GROUP)]  # right answers are always formatted
            texts = [formatted(str(s)) if ok else formatted(str(s + 7)) if j < share_formatted * GROUP else str(s + 7)
                     for j, ok in enumerate(right)]
            groups.append((q, texts, str(s)))
        return scored("math:1, r1_strict_format:0.5", groups, i)

    hacked = [batch(i, share_formatted=min(1.0, i / 10), share_right=0.25) for i in range(16)]
    alerts = run("divergence", hacked)
    assert alerts and "r1_strict_format rose by" in alerts[0].message and "while math changed by" in alerts[0].message
    learning = [batch(i, share_formatted=min(1.0, i / 10), share_right=min(1.0, 0.25 + i / 20)) for i in range(16)]
    assert run("divergence", learning) == []


def test_echo_fires_on_completions_that_copy_the_prompt():
    prompt = "Explain in one sentence why the sky looks blue on a clear day at noon."
    echoing = [scored("r1_soft_format", [(prompt, [f"<think>{prompt}</think><answer>{prompt}</answer>"] * GROUP, "x")],
                      i) for i in range(8)]
    alerts = run("echo", echoing)
    assert alerts and "completions echo their prompts: 100%" in alerts[0].message and alerts[0].rows
    own = [scored("r1_soft_format", [(prompt, ["<think>light scatters</think><answer>Rayleigh scattering favours "
                                               "short wavelengths</answer>"] * GROUP, "x")], i) for i in range(8)]
    assert run("echo", own) == []


def test_repetition_fires_on_looping_completions():
    loops = [scored("r1_soft_format", [("Count.", ["one two three " * 20] * GROUP, "x")], i) for i in range(8)]
    alerts = run("repetition", loops)
    assert alerts and "degenerate repetition: 100%" in alerts[0].message
    prose = [scored("r1_soft_format", [("Count.", [" ".join(str(k) for k in range(40))] * GROUP, "x")], i)
             for i in range(8)]
    assert run("repetition", prose) == []


def test_word_monitors_judge_an_even_sample_of_a_long_batch_and_read_each_text_once():
    """Echo, repetition, length and code_tamper judge at most `sample` completions spread over the batch (the same
    ones, each text read once for the word counters); `sample=0` judges all, and a share follows what the sample
    holds."""
    prompt = "Explain in one sentence why the sky looks blue on a clear day at noon."
    loop = "one two three " * 20
    own = "Rayleigh scattering favours the short blue wavelengths of sunlight in the upper air."
    texts = [loop if i % 2 else own for i in range(256)]  # every other completion loops
    batch = scored("r1_soft_format", [(prompt, texts, "x")])
    assert list(batch.sample(64)) == list(range(0, 256, 4)) and list(batch.sample(0)) == list(range(256))
    for name in ("echo", "repetition", "length"):
        observe(name, [batch])
    assert sorted(batch._words) == list(range(0, 256, 8))  # only the sample was read, once
    assert observe("repetition", [batch])[0].metrics["share"] == 0.0  # the sample holds the even rows: no loop
    assert observe("repetition", [batch], params={"sample": 0})[0].metrics["share"] == 0.5
    assert observe("length", [batch])[0].metrics["mean"] == len(own.split())
    tampering = scored("r1_soft_format", [(prompt, ["import sys\nsys.exit(0)" if i % 2 else own for i in range(256)],
                                           "x")])
    assert observe("code_tamper", [tampering])[0].metrics["share"] == 0.0  # the same even rows
    assert observe("code_tamper", [tampering], params={"sample": 0})[0].metrics["share"] == 0.5
    assert observe("length", [batch], params={"sample": 0})[0].metrics["mean"] == (60 + len(own.split())) / 2


def test_length_fires_on_completions_pinned_at_the_limit_or_shrinking_to_nothing():
    start = [scored("r1_soft_format", [("Go.", ["word " * 20] * GROUP, "x")], i, lengths=[20] * GROUP, max_length=64)
             for i in range(8)]
    long = [scored("r1_soft_format", [("Go.", ["word " * 64] * GROUP, "x")], i, lengths=[64] * GROUP, max_length=64)
            for i in range(8, 16)]
    grown = run("length", start + long)
    assert any("length explosion: 100% of completions hit max_completion_length=64" in a.message
               and a.severity == "warning" for a in grown)
    # pinned at the limit from the first batch on (a fixed-length task, or a limit too low): said, not warned of
    pinned = run("length", [replace(b, step=b.step - 8) for b in long])
    assert pinned and {a.severity for a in pinned} == {"info"}
    assert "fill max_completion_length=64 from the start" in pinned[0].message
    short = [scored("r1_soft_format", [("Go.", ["", "a", "", "b"], "x")], i, lengths=[1, 1, 0, 1], max_length=64)
             for i in range(8)]
    assert any(a.message.startswith("length collapse") for a in run("length", short))
    fine = [scored("r1_soft_format", [("Go.", ["word " * 20] * GROUP, "x")], i, lengths=[20, 25, 30, 18],
                   max_length=64) for i in range(8)]
    assert run("length", fine) == []


TAMPERING = [
    "```python\nimport sys\ndef add(a, b):\n    sys.exit(0)\n```",
    "```python\nimport builtins\nbuiltins.exec = lambda *a, **k: None\n```",
    "```python\nimport sys\nprint(sys._getframe(1).f_locals)\n```",
    "```python\nimport os\nos.write(1, b'PASS')\n```",
]
HONEST = "```python\ndef add(a, b):\n    return a + b\n```"


def test_code_tamper_fires_on_a_rising_share_of_tampering_code():
    def batch(i: int, tampering: int) -> Batch:
        texts = TAMPERING[:tampering] + [HONEST] * (GROUP * 2 - tampering)
        return scored("r1_soft_format", [("Write add.", texts, "x")], i)

    alerts = run("code_tamper", [batch(i, min(4, i // 2)) for i in range(8)])
    assert alerts and "code tampers with its harness" in alerts[0].message and alerts[0].rows
    assert run("code_tamper", [batch(i, 0) for i in range(8)]) == []
    [report] = observe("code_tamper", [batch(0, 4)])
    metrics = report.metrics
    assert metrics["exit_share"] == metrics["builtins_share"] == metrics["fds_share"] == 1 / 8


@monitor("test_explodes", description="Raises on the second batch.")
class Explodes:
    def __init__(self) -> None:
        self.seen = 0

    def observe(self, batch: Batch) -> Report:
        self.seen += 1
        if self.seen == 2:
            raise RuntimeError("boom")
        return Report({"seen": self.seen}, [Alert("test_explodes", "warning", f"seen: {self.seen}")])


@monitor("test_bursts", description="Fires on batches 0-2 and 10-11.")
class Bursts:
    def observe(self, batch: Batch) -> Report:
        firing = batch.step in (0, 1, 2, 10, 11)
        return Report({}, [Alert("test_bursts", "warning", f"burst: at {batch.step}")] if firing else [])


def test_an_alert_prints_once_when_it_starts_and_is_counted_until_it_stops():
    lines: list[str] = []
    watch = MonitorSet([(Bursts, None, "warn")], quiet=5, echo=lines.append)
    one = scored("accuracy", [("q", [formatted("1")] * GROUP, "1")])
    for step in range(14):
        watch.observe(replace(one, step=step))
    assert [(a.step, a.batches, a.last_step) for a in watch.alerts] == [(0, 3, 2), (10, 2, 11)]
    assert lines == ["warning: monitor test_bursts at batch 0: burst: at 0",
                     "warning: monitor test_bursts at batch 10: burst: at 10"]
    assert watch.alerts[0].as_dict()["batches"] == 3 and watch.alerts[0].as_dict()["last_step"] == 2


def test_the_monitor_set_prints_once_per_episode_switches_off_a_broken_monitor_and_stops():
    lines: list[str] = []
    flat = [scored("accuracy", [(q, [formatted(str(s))] * GROUP, str(s)) for q, s in questions(2, i)], i)
            for i in range(12)]
    zero = registry().monitor("zero_advantage")
    watch = MonitorSet([(zero, {"window": 2}, "warn"), (Explodes, None, "warn")], quiet=5, echo=lines.append)
    metrics = [watch.observe(b) for b in flat]
    assert metrics[0]["monitors/zero_advantage/share"] == 1.0 and metrics[0]["monitors/test_explodes/seen"] == 1
    assert "monitors/test_explodes/seen" not in metrics[2]  # switched off after it raised
    # fired on every batch from the second: one episode, printed once
    assert [(a.step, a.batches, a.last_step) for a in watch.alerts if a.monitor == "zero_advantage"] == [(1, 11, 11)]
    assert sum("monitor zero_advantage" in line for line in lines) == 1
    assert any("monitor 'test_explodes' failed and is switched off: RuntimeError: boom" in line for line in lines)
    assert watch.stop is None and watch.seconds > 0
    stopping = MonitorSet([(zero, {"window": 2}, "stop")], echo=lines.append)
    for b in flat[:3]:
        stopping.observe(b)
    assert stopping.stop is not None and stopping.stop.monitor == "zero_advantage"


def test_choosing_monitors_by_name_and_by_config_entry():
    assert [m.name for m, _, _ in choose(None, registry())] == sorted(registry().names("monitor"))
    assert choose("none", registry()) == []
    [(m, params, action)] = choose([{"name": "echo", "params": {"window": 2}, "action": "stop"}], registry())
    assert (m.name, params, action) == ("echo", {"window": 2}, "stop")
    with pytest.raises(ValueError, match="action must be log, warn or stop"):
        choose([{"name": "echo", "action": "panic"}], registry())
    with pytest.raises(KeyError, match="unknown monitor 'ecco'; available: code_tamper"):
        choose("ecco", registry())
    with pytest.raises(ValueError, match="bad parameters for monitor 'echo'"):
        registry().monitor("echo").create({"window": 0})


def test_score_runs_monitors_over_a_file_and_a_third_party_monitor_is_discovered(tmp_path, packs):
    listed = {m["name"]: m for m in cli_json("monitors", "list", pythonpath=[packs["good"]])}
    assert listed["good_batches"]["pack"] == "grpo-test-good" and "zero_advantage" in listed
    rows = [{"prompt": q, "completion": formatted(str(s)), "answer": str(s)} for q, s in questions(3, 0)
            for _ in range(GROUP)] * 3
    data = write_jsonl(tmp_path / "same.jsonl", rows)
    proc = run_cli("score", str(data), "--rewards", "accuracy", "--batch-size", str(3 * GROUP), "--json",
                   pythonpath=[packs["good"]])
    assert proc.returncode == 0, proc.stderr
    monitors = json.loads(proc.stdout)["monitors"]
    assert monitors["metrics"]["monitors/zero_advantage/share"] == 1.0
    assert monitors["metrics"]["monitors/good_batches/completions"] == 3 * GROUP
    only = run_cli("score", str(data), "--rewards", "accuracy", "--monitors", "echo", "--json")
    assert set(json.loads(only.stdout)["monitors"]["metrics"]) == {"monitors/echo/share"}
    show = run_cli("monitors", "show", "zero_advantage")
    assert show.returncode == 0 and "reaches `warn` (0.5, warning)" in show.stdout


def rollout(calls: int, *, failed: int = 0, finished: bool = True) -> list[dict]:
    """An agent rollout as TRL hands it to rewards: ``calls`` tool calls (``failed`` of them answered with TRL's
    error form), then a final answer unless ``finished`` is False."""
    messages = []
    for i in range(calls):
        messages.append({"role": "assistant", "content": "",
                         "tool_calls": [{"type": "function", "function": {"name": "read", "arguments": {}}}]})
        messages.append({"role": "tool", "name": "read",
                         "content": "{'error': 'Tool read not found.'}" if i < failed else "notes"})
    if finished:
        messages.append({"role": "assistant", "content": "<answer>4</answer>"})
    return messages


def tool_batch(rollouts: list[list[dict]], step: int = 0) -> Batch:
    return scored_batch("accuracy", [{"prompt": "p", "completion": r, "answer": "4"} for r in rollouts], step=step)


def test_tool_use_measures_rollouts_and_stays_silent_on_text():
    [report] = observe("tool_use", [tool_batch([rollout(2, failed=1), rollout(1, finished=False)])])
    assert report.metrics == {"calls_mean": 1.5, "turns_mean": 2.0, "error_share": pytest.approx(1 / 3),
                              "unfinished_share": 0.5}
    assert observe("tool_use", [scored("accuracy", [("p", ["<answer>4</answer>"], "4")])]) == [Report()]


@pytest.mark.parametrize(("rollouts", "message"), [
    ([rollout(2, failed=2)] * 4, "of tool calls failed"),
    ([rollout(3, finished=False)] * 4, "ended still calling tools"),
])
def test_tool_use_alerts_on_failing_or_looping_tools(rollouts, message):
    reports = observe("tool_use", [tool_batch(rollouts, step) for step in range(3)], params={"window": 3})
    assert not reports[1].alerts and any(message in a.message for a in reports[2].alerts)


def test_tool_use_alerts_when_the_policy_stops_calling_tools():
    batches = [tool_batch([rollout(1)] * 2, 0)] + [tool_batch([rollout(0)] * 2, s) for s in (1, 2)]
    reports = observe("tool_use", batches, params={"window": 2})
    assert [bool(r.alerts) for r in reports] == [False, False, True]
    assert "stopped calling tools" in reports[2].alerts[0].message


def test_every_code_tamper_guard_was_read_off_the_expression_it_guards():
    """A signature's substring guard skips the expression on completions that cannot match it; one read off an
    older version of the expression is dropped (the expression then runs on everything), and named here."""
    from reward_plugins.monitors.monitors import _GUARDS, _NEEDS, TAMPER, _digest

    stale = {name: _digest(TAMPER[name]) for name, (digest, _) in _GUARDS.items() if _digest(TAMPER[name]) != digest}
    assert not stale, f"re-read these guards off their expressions, then set their digests: {stale}"
    assert set(_NEEDS) == set(_GUARDS)
