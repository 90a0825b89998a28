"""The micro-batcher with real threads: rows of concurrent callers share batches, each caller gets its own answer."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from grpo_host.serving.batching import MicroBatcher, chunks


def doubler(calls: list):
    def score(owner, parts):
        calls.append((owner, [list(p) for p in parts]))
        return [[2 * x for x in part] for part in parts]
    return score


def test_concurrent_single_rows_share_batches_and_get_their_own_answers():
    calls: list = []
    with (MicroBatcher(["ensemble"], doubler(calls), window=0.05, max_rows=64) as batcher,
          ThreadPoolExecutor(32) as pool):
        answers = list(pool.map(lambda i: batcher.submit([i]).result(), range(256)))
    assert answers == [[2 * i] for i in range(256)]
    assert sum(len(p) for _, parts in calls for p in parts) == 256
    assert len(calls) < 256 and max(sum(map(len, parts)) for _, parts in calls) <= 64


def test_alone_parts_and_the_size_cap():
    calls: list = []
    gate = threading.Event()

    def score(owner, parts):
        gate.wait(5)
        return doubler(calls)(owner, parts)

    with MicroBatcher([0], score, window=0.0, max_rows=3) as batcher:
        first = batcher.submit([0])  # taken at once; the thread waits at the gate while the rest queue up
        while batcher.waiting_rows or not batcher.busy_threads:
            time.sleep(0.001)
        queued = [batcher.submit([1, 2]), batcher.submit([3]), batcher.submit([4, 5, 6, 7], alone=True),
                  batcher.submit([8])]
        assert batcher.waiting_rows == 8 and batcher.scoring_rows == 1
        gate.set()
        assert [f.result() for f in [first, *queued]] == [[0], [2, 4], [6], [8, 10, 12, 14], [16]]
    # [1, 2] + [3] fill the cap of 3; the alone part (over the cap) goes by itself; [8] after it
    assert [parts for _, parts in calls] == [[[0]], [[1, 2], [3]], [[4, 5, 6, 7]], [[8]]]


def test_a_cancelled_part_is_not_scored_and_a_failure_reaches_every_caller():
    gate = threading.Event()
    seen: list = []

    def score(owner, parts):
        gate.wait(5)
        seen.extend(parts)
        if any("bad" in p for p in parts):
            raise ValueError("broken reward")
        return [list(p) for p in parts]

    with MicroBatcher([0], score, window=0.0) as batcher:
        batcher.submit(["first"])
        while not batcher.busy_threads:
            time.sleep(0.001)
        dropped, bad, good = batcher.submit(["dropped"]), batcher.submit(["bad"]), batcher.submit(["good"])
        assert dropped.cancel()  # its caller gave up before a thread took it
        gate.set()
        for future in (bad, good):  # scored in one batch: both callers hear why it failed
            with pytest.raises(ValueError, match="broken reward"):
                future.result()
    assert ["dropped"] not in seen


def test_an_exception_returned_for_one_part_fails_that_caller_only():
    gate = threading.Event()

    def score(owner, parts):
        gate.wait(5)
        return [ValueError(f"part {list(p)} refused") if "bad" in p else list(p) for p in parts]

    with MicroBatcher([0], score, window=0.0) as batcher:
        batcher.submit(["first"])
        while not batcher.busy_threads:
            time.sleep(0.001)
        before, bad, after = batcher.submit(["a"]), batcher.submit(["bad"]), batcher.submit(["b"])
        gate.set()  # the three are taken as one micro-batch
        assert before.result() == ["a"] and after.result() == ["b"]
        with pytest.raises(ValueError, match=r"part \['bad'\] refused"):
            bad.result()
    assert batcher.batches == 2  # counted once a batch's futures are set: read after close


def test_no_window_is_waited_while_the_batcher_is_busy():
    """A closed loop (callers that call again once answered, as verl's threads do) is not held a window per batch:
    a row arriving just after a batch ended is scored at once, not after a quarter of the (here 2-minute)
    window."""
    calls: list = []
    with MicroBatcher([0], doubler(calls), window=120, max_rows=2) as batcher:
        assert batcher.submit([1, 2]).result(20) == [2, 4]  # full at the cap: scored without a window
        assert batcher.submit([3]).result(20) == [6]  # the cap is not reached, but a batch just ended
    assert [parts for _, parts in calls] == [[[1, 2]], [[3]]]


def test_chunks():
    assert [list(c) for c in chunks(list(range(5)), 2)] == [[0, 1], [2, 3], [4]]
    assert [list(c) for c in chunks([], 2)] == [[]]
