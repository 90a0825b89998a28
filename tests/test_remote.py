"""The ``remote`` reward against a real ``grpo-host serve``: values, counted failures, refusals that stop.

The ensemble here is the one a TRL or MLX run builds (``Ensemble.from_spec``
with a ``remote(...)`` member); the server is the ``grpo-host serve``
subprocess of ``test_serve``.
"""

from __future__ import annotations

import socket
import threading

import pytest
from test_serve import GOOD, TOKEN, Server, free_port, probe_site, until  # noqa: F401  (probe_site is a fixture)

from grpo_host import Ensemble, RewardError

pytestmark = pytest.mark.slow  # left out of the fast lane (-m "not slow"): real reward servers

pytest.importorskip("httpx")

ROWS = [
    {"prompt": "2+2?", "completion": GOOD, "answer": "4"},
    {"prompt": "2+2?", "completion": "four", "answer": "4"},
    {"prompt": "2+2?", "completion": GOOD},  # the server's accuracy needs an answer: a bad row there
]


@pytest.fixture(scope="module")
def server(probe_site, tmp_path_factory):  # noqa: F811
    srv = Server(probe_site, tmp_path_factory.mktemp("remote") / "stderr.log",
                 "r1_strict_format, accuracy:2, slow:0, chars:0",
                 "--concurrency", "1", "--backlog", "0", env={"GRPO_HOST_SERVE_TOKEN": TOKEN})
    yield srv
    srv.stop()


def spec(url: str, *extra: str) -> str:
    return f"remote(url={url!r}{''.join(', ' + e for e in extra)})"


def test_remote_values_and_counts(server, monkeypatch):
    monkeypatch.setenv("GRPO_HOST_SERVE_TOKEN", TOKEN)
    with Ensemble.from_spec(spec(server.url)) as ens:
        result = ens.score_rows(ROWS)
    # the server's weighted total; the row it calls bad scores None here
    assert result.values["remote"] == [3.0, 0.0, None]
    assert result.metrics["remote"].counts == {"bad_rows": 1.0}
    assert result.metrics["remote"].errors == 0 and not result.row_errors
    # one request per batch: the server logged one /score of all 3 rows
    assert [e["rows"] for e in server.access("/score", at_least=1)] == [3]


def test_remote_picks_one_member(server, monkeypatch):
    monkeypatch.setenv("GRPO_HOST_SERVE_TOKEN", TOKEN)
    with Ensemble.from_spec(spec(server.url, 'reward="accuracy"')) as ens:
        assert ens.score_rows(ROWS).values["remote"] == [1.0, 0.0, None]
    with (Ensemble.from_spec(spec(server.url, 'reward="nope"')) as ens,
          pytest.raises(RewardError, match="serves no reward 'nope'")):
        ens.score_rows(ROWS)


def test_wrong_token_stops_the_run(server, monkeypatch):
    monkeypatch.setenv("GRPO_HOST_SERVE_TOKEN", "wrong")
    with Ensemble.from_spec(spec(server.url)) as ens, pytest.raises(RewardError, match="refused the batch with 401"):
        ens.score_rows(ROWS)


def test_unreachable_server_is_counted_not_a_crash():
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    rows = ROWS * 20  # 60 rows: more than BUG_STREAK, and still no stop
    with Ensemble.from_spec(spec(url, "retries=1", "timeout=2")) as ens:
        result = ens.score_rows(rows)
    assert result.values["remote"] == [None] * 60 and result.unscored == 60
    assert result.metrics["remote"].counts == {"unreachable": 60.0}
    assert result.metrics["remote"].errors == 0


def test_a_server_that_hangs_times_out_and_is_counted():
    """A listener that accepts and never answers: the HTTP timeout ends the wait, the rows are counted."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        held = []
        stop = threading.Event()

        def accept() -> None:
            listener.settimeout(0.2)
            while not stop.is_set():
                try:
                    held.append(listener.accept()[0])
                except OSError:
                    continue

        thread = threading.Thread(target=accept, daemon=True)
        thread.start()
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        try:
            with Ensemble.from_spec(spec(url, "retries=0", "timeout=0.5")) as ens:
                result = ens.score_rows(ROWS)
        finally:
            stop.set()
            thread.join()
            for conn in held:
                conn.close()
    assert result.values["remote"] == [None] * 3
    assert result.metrics["remote"].counts == {"unreachable": 3.0}


def test_server_busy_is_retried_then_counted(server, monkeypatch):
    """429 from a full server is retried; a server still full after the retries counts the batch unreachable."""
    import concurrent.futures

    import httpx

    monkeypatch.setenv("GRPO_HOST_SERVE_TOKEN", TOKEN)
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        hold = pool.submit(httpx.post, server.url + "/score", headers=auth, timeout=30,
                           json={"rows": [{"completion": "x", "answer": "4", "sleep": 3}]})
        until(lambda h: h["scoring"] == 1, server.url)  # the held request occupies the one slot
        with Ensemble.from_spec(spec(server.url, "retries=1")) as ens:
            result = ens.score_rows(ROWS)
        assert hold.result().status_code == 200
    assert result.metrics["remote"].counts == {"unreachable": 3.0}
    assert [e["status"] for e in server.access("/score", at_least=3)][-3:] == [429, 429, 200]


def test_trailing_special_tokens_are_stripped_before_sending(server, monkeypatch):
    """A trainer's completion that still ends in its EOS (and padding) scores as the response the model meant."""
    monkeypatch.setenv("GRPO_HOST_SERVE_TOKEN", TOKEN)
    rows = [{"prompt": "2+2?", "completion": GOOD + "<|im_end|>\n<|endoftext|><|endoftext|>", "answer": "4"}]
    with Ensemble.from_spec(spec(server.url)) as ens:
        assert ens.score_rows(rows).values["remote"] == [3.0]
    # what reached the server: the response without its end markers, or (end_tokens=[]) the text as given
    with Ensemble.from_spec(spec(server.url, 'reward="chars"')) as ens:
        assert ens.score_rows(rows).values["remote"] == [float(len(GOOD))]
    with Ensemble.from_spec(spec(server.url, 'reward="chars"', "end_tokens=[]")) as ens:
        assert ens.score_rows(rows).values["remote"] == [float(len(rows[0]["completion"]))]
