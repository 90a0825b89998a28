"""The Ray executor on a local two-CPU Ray cluster started here: order, warm actors, hangs, lost actors.

Tasks are functions of this module; the actors import it, because the
cluster is started with this folder on ``PYTHONPATH`` (as every node of a
real cluster has the reward packs installed).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sample_rewards

ray = pytest.importorskip("ray")

from grpo_host import Ensemble  # noqa: E402
from grpo_host.discovery.plugins import load_plugins  # noqa: E402
from grpo_host.scoring.ray_pool import RayPool  # noqa: E402

pytestmark = pytest.mark.slow  # left out of the fast lane (-m "not slow"): a local Ray cluster

CALLS = {"n": 0}  # module state: lives as long as the actor process that imported this module


def square(x):
    CALLS["n"] += 1
    return x * x, os.getpid(), CALLS["n"]


def fails(x):
    raise ValueError(f"bad item {x}")


def sleeps(seconds):
    time.sleep(seconds)
    return seconds


def ignores_the_alarm(seconds):
    signal.signal(signal.SIGALRM, signal.SIG_IGN)  # as C code that never returns to Python would
    time.sleep(seconds)
    return seconds


def spins():
    while True:
        pass


def dies(code):
    os._exit(code)


@pytest.fixture(scope="module")
def cluster():
    here = str(Path(__file__).parent)
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (here, old) if p)
    ray.init(num_cpus=2, include_dashboard=False, logging_level="warning")
    yield
    ray.shutdown()
    if old is None:
        os.environ.pop("PYTHONPATH")
    else:
        os.environ["PYTHONPATH"] = old


@pytest.fixture
def pool(cluster):
    p = RayPool(2, grace=2.0)  # a loaded 2-core machine can take over a second to answer an alarm
    yield p
    p.close()


def test_outcomes_in_order_from_warm_actors(pool):
    first = pool.run([(square, (i,), {}) for i in range(6)] + [(fails, (9,), {})], timeout=10)
    assert [o.value[0] for o in first[:6]] == [i * i for i in range(6)]
    assert first[6].status == "error" and str(first[6].error).startswith("ValueError: bad item 9")
    second = pool.run([(square, (i,), {}) for i in range(4)], timeout=10)
    pids = {o.value[1] for o in first[:6]}
    assert len(pids) == 2 and {o.value[1] for o in second} <= pids  # the same two processes, kept warm
    assert sum(o.value[2] for o in second) > 4  # each actor's module state carried over from the first run
    assert pool.killed == 0


def test_hanging_items_time_out_and_the_stuck_actor_is_replaced(pool):
    """Two items that wait (using no CPU) are stopped at the backstop, 10 x their 1 s timeout, not after the 30 s
    they asked for (then they would be ``ok``); one that spins by its CPU seconds."""
    out = pool.run([(sleeps, (30,), {}), (ignores_the_alarm, (30,), {}), (square, (3,), {}), (spins, (), {})],
                   timeout=1.0)
    assert [o.status for o in out] == ["backstop", "backstop", "ok", "timeout"] and out[2].value[0] == 9
    assert pool.killed == 1  # the alarms stopped the first and last items; only the second needed its actor killed
    assert [o.status for o in pool.run([(square, (i,), {}) for i in range(3)], timeout=5)] == ["ok"] * 3


def test_chunked_calls_count_only_the_item_that_hangs_or_kills(pool):
    """16 items on 2 actors: the first two calls carry items 0-3 and 4-7.  The call holding a stuck item (1)
    and the one holding a dying item (6) run again item by item, so exactly those two items are counted."""
    tasks = [(square, (i,), {}) for i in range(16)]
    tasks[1] = (ignores_the_alarm, (30,), {})
    tasks[6] = (dies, (4,), {})
    out = pool.run(tasks, timeout=0.5)
    assert [o.status for o in out] == ["ok", "backstop"] + ["ok"] * 4 + ["error"] + ["ok"] * 9
    assert [o.value[0] for i, o in enumerate(out) if i not in (1, 6)] == [i * i for i in range(16) if i not in (1, 6)]
    assert str(out[6].error).startswith("Ray actor lost: ")
    assert pool.killed == 4  # each bad item's actor was killed twice: once with its chunk, once alone


def test_a_lost_actor_is_a_counted_error_and_replaced(pool):
    out = pool.run([(dies, (3,), {}), (square, (2,), {}), (square, (5,), {})], timeout=10)
    assert out[0].status == "error" and str(out[0].error).startswith("Ray actor lost: ")
    assert [o.value[0] for o in out[1:]] == [4, 25]
    assert pool.killed == 1
    assert [o.value[0] for o in pool.run([(square, (i,), {}) for i in range(4)], timeout=5)] == [0, 1, 4, 9]


def test_an_ensemble_on_the_ray_pool_scores_as_the_local_pool_does(cluster):
    rows = [{"completion": f"so \\boxed{{{n}}}", "answer": str(n if n % 2 else n + 1)} for n in range(8)]
    with Ensemble.from_spec("math", workers=2, pool="ray") as on_ray, Ensemble.from_spec("math", workers=2) as local:
        assert on_ray.score_rows(rows).values == local.score_rows(rows).values == {
            "math": [0.0 if n % 2 == 0 else 1.0 for n in range(8)]}


def test_ray_gives_the_same_exception_chain_under_on_error_raise_as_the_other_executors(cluster):
    from test_ensemble import check_raise_chain, raised_under_raise

    reward = load_plugins(entry_points_group=None, plugins=[sample_rewards]).registry.reward("in_worker")
    check_raise_chain(raised_under_raise(reward, workers=1, pool="ray"), "ValueError: bad item")


def test_ray_is_not_imported_unless_the_pool_is_used():
    code = ("import sys, grpo_host.scoring.ensemble, grpo_host.cli\n"
            "from grpo_host.scoring.ensemble import POOLS\n"
            "assert 'ray' in POOLS and 'ray' not in sys.modules, sorted(m for m in sys.modules if 'ray' in m)\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
