"""Ensemble semantics: totals, weights, None/NaN, errors, timeouts, worker kills, strict."""

from __future__ import annotations

import asyncio
import dataclasses
import os

import pytest
import sample_rewards

from grpo_host import Ensemble, RewardError
from grpo_host.discovery.plugins import load_plugins
from grpo_host.errors import SpecError, UnknownNameError, UnscoredRowsError
from grpo_host.scoring.calls import RewardCallError
from grpo_host.scoring.ensemble import Member
from grpo_host.scoring.executors import MAX_CHUNK, chunk_size


@pytest.fixture(scope="module")
def plugins():
    return load_plugins(entry_points_group=None, plugins=[sample_rewards])


def ensemble(spec, plugins, **kw):
    return Ensemble.from_spec(spec, plugins=plugins, **kw)


def test_total_is_the_weighted_sum_of_the_rewards_that_applied(plugins):
    with ensemble("echo:2, misbehave:0.5", plugins) as e:
        r = e.score(["1", "nan", "3"], answer=["a", "b", "c"])
    assert r.values["echo"] == [1.0, None, 3.0]
    assert r.values["misbehave"] == [1.0, None, 3.0]
    assert r.total == [2.5, None, 7.5]
    assert r.unscored == 1
    m = r.metrics["echo"]
    assert (m.mean, m.coverage, m.errors, m.timeouts) == (2.0, pytest.approx(2 / 3), 0, 0)
    assert m.std == pytest.approx(2 ** 0.5) and m.seconds >= 0


def test_weight_zero_is_logged_but_not_trained_on(plugins):
    with ensemble("echo:1, misbehave:0", plugins) as e:
        r = e.score(["2", "nan"], answer=["a", "b"])
    assert r.values["misbehave"] == [2.0, None]
    assert r.total == [2.0, None]
    assert r.metrics["misbehave"].mean == 2.0


def test_params_from_the_spec_reach_the_reward(plugins):
    with ensemble("echo(scale=10)", plugins) as e:
        assert e.score(["1.5"], answer=["a"]).values["echo"] == [15.0]


def test_strict_makes_unscored_rows_an_error(plugins):
    with ensemble("echo", plugins, strict=True) as e, pytest.raises(UnscoredRowsError, match=r"rows \['r2'\]"):
        e.score(["1", "nope"], answer=["a", "b"], row_ids=["r1", "r2"])


@pytest.mark.parametrize("text", ["raise", "inf", "text"])
def test_on_error_raise_stops_naming_reward_pack_and_row(plugins, text):
    with (ensemble("misbehave [on_error=raise]", plugins) as e,
          pytest.raises(RewardError, match=r"reward 'misbehave' \(pack sample_rewards 0\) failed on row 7")):
        e.score(["1", text], row_ids=[6, 7])


@pytest.mark.parametrize("text", ["raise", "inf", "text"])
def test_by_default_a_failed_row_is_counted_and_kept_with_its_row(plugins, text):
    with ensemble("misbehave", plugins) as e:
        r = e.score(["1", text, "2"], row_ids=[6, 7, 8])
    assert r.values["misbehave"] == [1.0, None, 2.0]
    assert r.metrics["misbehave"].errors == 1
    assert list(r.row_errors) == [1]
    [message] = r.row_errors[1]
    assert message.startswith("reward 'misbehave' (pack sample_rewards 0) failed on row 7: ")


def raised_under_raise(reward, **kw):
    """The exception ``on_error=raise`` gives for ``reward`` failing on row 'r0' (its text 'raise')."""
    with Ensemble([Member(reward, on_error="raise", timeout=20)], **kw) as e, pytest.raises(RewardError) as caught:
        e.score(["raise"], row_ids=["r0"])
    return caught.value


def check_raise_chain(error, message):
    """One chain from every executor: RewardError naming reward, pack and row, from a RewardCallError
    that carries the reward's exception as data (type, message, its traceback's text)."""
    assert str(error).startswith("reward '") and f"failed on row r0: {message}" in str(error)
    cause = error.__cause__
    assert type(cause) is RewardCallError and str(cause.failure) == message
    assert cause.failure.type == message.split(":")[0] and "raise" in cause.failure.traceback


@pytest.mark.parametrize("executor", ["inline", "process", "async"])
def test_every_executor_gives_the_same_exception_chain_under_on_error_raise(plugins, executor):
    if executor == "async":
        reward, message = plugins.registry.reward("waits"), "ValueError: the judge said no"
    else:
        reward = dataclasses.replace(plugins.registry.reward("in_worker"), executor=executor)
        message = "ValueError: bad item"
    check_raise_chain(raised_under_raise(reward, workers=1), message)


@pytest.mark.parametrize("make", [
    lambda plugins: Member(plugins.registry.reward("echo"), on_error="rase"),
    lambda plugins: Ensemble.from_spec([{"name": "echo", "on_error": "rase"}], plugins=plugins),
    lambda plugins: Ensemble.from_spec("echo [on_error=rase]", plugins=plugins),
])
def test_an_unknown_on_error_is_refused_wherever_a_member_is_made(plugins, make):
    with pytest.raises(ValueError, match="on_error"):
        make(plugins)


def test_by_default_a_reward_failing_row_after_row_stops_as_a_bug(plugins):
    from grpo_host.scoring.ensemble import BUG_STREAK

    with ensemble("misbehave", plugins) as e:
        e.score(["raise"] * (BUG_STREAK - 1) + ["1"])  # a success resets the streak
        r = e.score(["raise"] * (BUG_STREAK - 1))
        assert r.metrics["misbehave"].errors == BUG_STREAK - 1
        with pytest.raises(RewardError, match=rf"reward 'misbehave' \(pack sample_rewards 0\) failed on {BUG_STREAK} "
                                              r"rows in a row, so it is broken"):
            e.score(["raise"])
    with ensemble("misbehave [on_error=skip]", plugins) as e:
        assert e.score(["raise"] * (BUG_STREAK + 1)).metrics["misbehave"].errors == BUG_STREAK + 1


def test_on_error_skip_counts_and_yields_none(plugins):
    spec = [{"name": "misbehave", "on_error": "skip"}]
    with ensemble(spec, plugins) as e:
        r = e.score(["1", "raise", "inf", "text"])
    assert r.values["misbehave"] == [1.0, None, None, None]
    assert r.metrics["misbehave"].errors == 3
    assert "ZeroDivisionError: asked to raise" in r.errors[0]


@pytest.mark.slow  # over 2 s: waits out two backstops of 3 s
def test_inline_timeout_yields_none_and_is_counted(plugins):
    """A call that works past its CPU timeout is a ``timeout``; one that waits (a 30 s sleep, which would answer)
    is stopped at the backstop, 10 x the timeout, and counted among the timeouts as a ``backstop``."""
    spec = [{"name": "misbehave", "timeout": 0.3}]
    with ensemble(spec, plugins) as e:
        r = e.score(["sleep", "2", "spin", "sleep"])
        assert r.values["misbehave"] == [None, 2.0, None, None]
        assert (r.metrics["misbehave"].timeouts, r.metrics["misbehave"].backstops) == (3, 2)
        assert r.failures == {0: {"misbehave": "backstop"}, 2: {"misbehave": "timeout"}, 3: {"misbehave": "backstop"}}
        assert r.timed_out == [0, 2, 3]  # rows whose every reward timed out
        assert e.score(["3"]).values["misbehave"] == [3.0]  # a fresh thread took over


def test_batch_reward_wrong_count_follows_the_error_policy(plugins):
    with ensemble("batch_count [on_error=raise]", plugins) as e:
        assert e.score(["a", "b", "a"]).values["batch_count"] == [2.0, 1.0, 2.0]
        with pytest.raises(RewardError, match=r"failed on rows 0..1: returned 1 values for 2 completions"):
            e.score(["short", "x"])


def test_process_rewards_run_in_warm_workers(plugins):
    with ensemble("in_worker", plugins, workers=2) as e:
        first = e.score(["a"] * 8).values["in_worker"]
        second = e.score(["b"] * 8).values["in_worker"]
    pids = set(first) | set(second)
    assert os.getpid() not in pids and 1 <= len(pids) <= 2  # two workers, reused across calls


@pytest.mark.timeout(60)
def test_a_worker_whose_call_timed_out_is_not_reused(plugins):
    """The alarm can land mid-import or mid-update: the next item gets a fresh interpreter."""
    with ensemble([{"name": "in_worker", "timeout": 0.5, "on_error": "skip"}], plugins, workers=1) as e:
        before = e.score(["a"]).values["in_worker"][0]
        assert e.score(["spin"]).metrics["in_worker"].timeouts == 1
        after = e.score(["b"]).values["in_worker"][0]
        assert before != after and (e.recycled_workers, e.replaced_workers) == (1, 0)


@pytest.mark.timeout(60)
def test_an_alarm_during_an_uninterrupted_block_fires_after_it(plugins, tmp_path):
    """The block finishes (its file is written) although the item's CPU timeout passed inside it; the item then
    times out.  A worker has more than one thread, and the kernel may hand the alarm to any of them."""
    marker = tmp_path / "set-up"
    with ensemble([{"name": "held", "timeout": 0.2, "on_error": "skip"}], plugins, workers=1) as e:
        scored = e.score([f"0.6 {marker}"])
    assert scored.failures == {0: {"held": "timeout"}}
    assert marker.read_text() == "done"


@pytest.mark.slow  # over 2 s: waits out a backstop of 5 s
@pytest.mark.timeout(120)
def test_worker_timeouts_kills_and_deaths(plugins):
    spec = [{"name": "in_worker", "timeout": 0.5, "on_error": "skip"}]
    with ensemble(spec, plugins, workers=2) as e:
        r = e.score(["spin", "stuck", "die", "raise", "ok"])
        v, m = r.values["in_worker"], r.metrics["in_worker"]
        assert v[:4] == [None] * 4 and v[4] is not None
        assert (m.timeouts, m.backstops, m.errors) == (2, 1, 2)
        # 'spin' used its CPU seconds; 'stuck' (sleeping with SIGALRM blocked, so using none) was killed from
        # outside at the backstop: a 30 s sleep that was not cut would have answered
        assert (r.failures[0], r.failures[1]) == ({"in_worker": "timeout"}, {"in_worker": "backstop"})
        assert "worker process died" in r.errors[0] and "ValueError: bad item" in r.errors[1]
        # 'stuck' ignored SIGALRM and was killed, 'die' was replaced, and 'spin''s worker was recycled after its
        # alarm (or, on a machine too loaded for the alarm to be answered within the grace, killed too)
        assert e.replaced_workers >= 2 and e.replaced_workers + e.recycled_workers == 3
        assert all(x is not None for x in e.score(["a", "b", "c"]).values["in_worker"])  # pool recovered


def test_a_large_batch_goes_to_the_workers_in_chunks_of_consecutive_items(plugins):
    """64 items on 2 workers: chunks of 8 consecutive items (one message each way, a GRPO group in one worker)."""
    assert chunk_size(64, 2) == 8 and chunk_size(5, 2) == 1 and chunk_size(10_000, 2) == MAX_CHUNK
    with ensemble("in_worker", plugins, workers=2) as e:
        pids = e.score([str(i) for i in range(64)]).values["in_worker"]
    assert all(len(set(pids[k : k + 8])) == 1 for k in range(0, 64, 8)) and len(set(pids)) == 2


@pytest.mark.timeout(120)
def test_in_a_chunk_only_the_item_that_times_out_raises_or_kills_its_worker_is_counted(plugins):
    """A chunk whose worker dies runs its unanswered items again one per message, so the item that killed it is
    the one counted; one that spins is stopped by its own alarm and the rest of its chunk runs in a fresh worker."""
    items = ["ok"] * 64
    items[10], items[20], items[41] = "die", "raise", "spin"
    with ensemble([{"name": "in_worker", "timeout": 0.5, "on_error": "skip"}], plugins, workers=2) as e:
        r = e.score(items)
        m = r.metrics["in_worker"]
        assert [i for i, v in enumerate(r.values["in_worker"]) if v is None] == [10, 20, 41]
        assert (m.timeouts, m.errors) == (1, 2) and r.failures[41] == {"in_worker": "timeout"}
        assert "worker process died" in r.row_errors[10][0] and "ValueError: bad item" in r.row_errors[20][0]
        # 'die' killed its chunk's worker, then its own alone; 'spin''s worker was recycled after its alarm (or,
        # on a machine too loaded for the alarm to be answered within the grace, killed)
        assert e.replaced_workers >= 2 and e.recycled_workers + e.replaced_workers >= 3


@pytest.mark.slow  # over 2 s: waits out a backstop of 5 s twice (the chunk's, then the item's alone)
@pytest.mark.timeout(120)
def test_in_a_chunk_an_item_stuck_outside_python_is_found_and_counted_alone(plugins):
    """'stuck' ignores its alarm: its chunk's worker is killed from outside, and the chunk's unanswered items run
    again one by one, so the backstop is counted on that item only and the others get their values."""
    items = ["ok"] * 64
    items[30] = "stuck"
    with ensemble([{"name": "in_worker", "timeout": 0.5, "on_error": "skip"}], plugins, workers=2) as e:
        r = e.score(items)
        assert [i for i, v in enumerate(r.values["in_worker"]) if v is None] == [30]
        assert r.failures == {30: {"in_worker": "backstop"}} and r.metrics["in_worker"].backstops == 1
        assert e.replaced_workers == 2  # the chunk's worker, then the one that ran 'stuck' alone


@pytest.mark.parametrize("spec", ["in_worker [on_error=skip]", "misbehave [on_error=skip]"])
def test_a_reward_that_cannot_run_at_all_stops_whatever_the_policy(plugins, spec):
    with (ensemble(spec, plugins, workers=1) as e,
          pytest.raises(RewardError, match=r"reward '\w+' \(pack sample_rewards 0\) cannot run: .*no such model")):
        e.score(["1", "unusable"])


def test_counts_a_reward_returns_are_summed_per_batch_and_over_the_run(plugins):
    with ensemble("counted", plugins, workers=1) as e:
        first = e.score(["ab", "abcd", "abcdef"])
        second = e.score(["abcde", "bad"])
        assert e.counts == {"counted": {"long": 3.0, "rows": 4.0}}
    assert first.values["counted"] == [2.0, 4.0, 6.0]
    assert first.metrics["counted"].counts == {"long": 2.0, "rows": 3.0}
    assert second.values["counted"] == [5.0, None]
    assert "returned a count 'long': 'yes'" in second.row_errors[1][0]
    reward = plugins.registry.reward("counted")
    assert reward(prompts=["p"], completions=["abcd"]) == [4.0]  # TRL's contract: plain floats


def test_unknown_names_and_bad_params_explain_themselves(plugins):
    with pytest.raises(UnknownNameError, match="unknown reward 'eco'; available: batch_count, counted, echo, "
                       "held, in_worker, misbehave, starved, sync_wait, waits, waits_batch"):
        ensemble("eco", plugins)
    with pytest.raises(ValueError, match=r"parameters of 'echo': scale \(number, default 1.0\): multiplier"):
        ensemble("echo(scale=big)", plugins)
    with pytest.raises(SpecError):
        ensemble("echo:heavy", plugins)


def test_columns_must_match_the_batch(plugins):
    with (ensemble("echo", plugins) as e,
          pytest.raises(ValueError, match="column 'answer' has 1 values for 2 completions")):
        e.score(["1", "2"], answer=["a"])


def _most_at_once(spans):
    """The most spans (start, end) that were open at the same moment."""
    edges = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])  # an end before a start
    most = open_now = 0
    for _, step in edges:
        open_now += step
        most = max(most, open_now)
    return most


def test_async_items_overlap_up_to_the_reward_s_concurrency(plugins):
    spans = sample_rewards.SPANS["waits"]
    with ensemble("waits", plugins) as e:  # concurrency=4
        spans.clear()
        r = e.score(["0.4"] * 4)
        assert r.values["waits"] == [1.0] * 4 and _most_at_once(spans) == 4  # four 0.4 s waits at once
        spans.clear()
        assert e.score(["0.4"] * 8).values["waits"] == [1.0] * 8
        assert _most_at_once(spans) == 4  # eight with four slots: never more than four at a time


def test_async_and_sync_members_run_at_the_same_time(plugins):
    for spans in sample_rewards.SPANS.values():
        spans.clear()
    with ensemble("waits, sync_wait, waits_batch", plugins) as e:
        r = e.score(["0.6", "0.6", "0.6"])
    assert r.values == {"waits": [1.0] * 3, "sync_wait": [1.0] * 3, "waits_batch": [3.0] * 3}
    (sync_start, sync_end), = sample_rewards.SPANS["sync_wait"]
    awaited = sample_rewards.SPANS["waits"] + sample_rewards.SPANS["waits_batch"]
    assert len(awaited) == 4 and all(start < sync_end and end > sync_start for start, end in awaited)


@pytest.mark.slow  # over 2 s: waits out timeouts and a blocked event loop's backstop
def test_async_timeouts_errors_and_a_blocked_loop_are_counted(plugins):
    with ensemble("waits [timeout=1, on_error=skip]", plugins) as e:
        r = e.score(["0", "30", "raise", "0"])
        assert r.values["waits"] == [1.0, None, None, 1.0]
        m = r.metrics["waits"]
        assert (m.timeouts, m.errors) == (1, 1) and "ValueError: the judge said no" in r.errors[0]
        blocked = e.score(["0", "0", "0", "0", "block", "0"])  # four slots: the first four finish, then it blocks
        # both None: had the 8 s block been waited out, each would have answered 1.0
        assert blocked.values["waits"] == [1.0] * 4 + [None, None] and blocked.metrics["waits"].timeouts == 2
    with ensemble("waits [timeout=1, on_error=skip], waits_batch [timeout=1, on_error=skip]", plugins) as e:
        both = e.score(["block", "0"])  # one loop, blocked by one member: the other's items are lost with it
        assert both.values == {"waits": [None, None], "waits_batch": [None, None]}
        assert (both.metrics["waits"].timeouts, both.metrics["waits_batch"].timeouts) == (2, 2)
        assert e.score(["0"]).values["waits"] == [1.0]  # a new event loop took over
        with pytest.raises(RewardError, match="cannot run: RewardUnusable: no judge server configured"):
            e.score(["unusable"])


@pytest.mark.slow  # over 2 s: a real GRPOTrainer; waits out timeouts
def test_an_async_reward_is_an_async_trl_reward_function(plugins):
    is_async_callable = pytest.importorskip("trl.trainer.utils").is_async_callable

    waits = plugins.registry.reward("waits")
    assert is_async_callable(waits) and not is_async_callable(plugins.registry.reward("echo"))
    assert asyncio.run(waits(prompts=["p", "q"], completions=["0", "0.1"])) == [1.0, 1.0]
    assert waits.score_one("0") == 1.0  # the synchronous path (rewards show, scripts)


def test_a_worker_starts_without_asyncio():
    """The command and every worker import the executors; only async rewards need asyncio (~50 ms of CPU to
    import, issue 39), so it is imported when the first coroutine is submitted, not with the module."""
    import subprocess
    import sys

    probe = ("import sys\nimport grpo_host.scoring.executors as e\nassert 'asyncio' not in sys.modules\n"
             "async def one():\n    return 1\n"
             "runner = e.AsyncRunner()\nassert runner.wait(runner.submit(one()), 5.0) == 1\nrunner.close()\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
