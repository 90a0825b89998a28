"""``grpo-host serve`` as a user runs it: a real uvicorn process on 127.0.0.1, hit with httpx and the trainers' clients.

Each server is ``grpo-host serve`` in a subprocess with a probe pack on its
path (a real distribution: a module plus a ``dist-info`` folder with its
entry point), whose ``slow`` reward sleeps for the row's ``sleep`` seconds,
so back-pressure, deadlines and shutdown are tested against real waiting.
OpenRLHF's own clients (``tests/vendored/openrlhf_*.py``, with its license
and commits) drive ``/get_reward`` as a training step does; raw sockets play
the slow and hostile clients.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
from conftest import CLI_ENV, GRPO_HOST, run_cli, write_jsonl

httpx = pytest.importorskip("httpx")
pytest.importorskip("uvicorn")

pytestmark = pytest.mark.slow  # left out of the fast lane (-m "not slow"): real servers, saturated

PROBE = '''
import time
from grpo_host import hookimpl, reward


@reward(description="1.0 after sleeping the row's `sleep` seconds, or N for a completion 'sleep N' (else 0)")
def slow(completion, *, sleep=None, **_):
    if sleep is None and completion.startswith("sleep "):
        sleep = completion.split()[1]
    time.sleep(float(sleep or 0))
    return 1.0


@reward(description="1.0, or None (it does not apply) for the completion 'unscorable'")
def maybe(completion, **_):
    return None if completion == "unscorable" else 1.0


@reward(description="The completion's length in characters, exactly as received (nothing stripped)")
def chars(completion, **_):
    return float(len(completion))


@hookimpl
def register_rewards(register):
    register.add_reward(slow)
    register.add_reward(maybe)
    register.add_reward(chars)
'''

TOKEN = "s3cret-token"
GOOD = "<think>\nsum\n</think>\n<answer>\n4\n</answer>\n"
ROWS = [
    {"prompt": "2+2?", "completion": GOOD, "answer": "4"},
    {"prompt": "2+2?", "completion": "four", "answer": "4"},
    {"prompt": "2+2?", "completion": GOOD},  # no answer: a bad row, named
    {"prompt": "2+3?", "completion": GOOD, "answer": "5"},
]


@pytest.fixture(scope="session")
def probe_site(tmp_path_factory) -> Path:
    """A folder holding the probe pack as an installed distribution (what pip would leave)."""
    site = tmp_path_factory.mktemp("serve-probe")
    (site / "grpo_serve_probe.py").write_text(PROBE)
    info = site / "grpo_serve_probe-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: grpo-serve-probe\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[grpo_host]\nprobe = grpo_serve_probe\n")
    return site


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One ``grpo-host serve`` subprocess; its stderr (the JSON access log) goes to a file."""

    def __init__(self, site: Path, log: Path, spec: str, *args: str, env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("GRPO_HOST_")}
        full_env.update(CLI_ENV, PYTHONPATH=str(site))
        full_env.update(env or {})  # may replace PYTHONPATH too
        self.stderr = log.open("w")
        self.process = subprocess.Popen([GRPO_HOST, "serve", "--rewards", spec, "--port", str(self.port), *args],
                                        stdout=subprocess.DEVNULL, stderr=self.stderr, env=full_env)
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(self.url + "/health", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise AssertionError(f"grpo-host serve did not start:\n{log.read_text()}")
            time.sleep(0.1)

    def access(self, path: str | None = None, *, at_least: int = 0, seconds: float = 10) -> list[dict]:
        """The access log's entries so far (for ``path`` only, if given), waiting up to ``seconds`` for
        ``at_least`` of them: the server writes a request's line after the client has its answer."""
        deadline = time.monotonic() + seconds
        while True:
            lines = [json.loads(line) for line in self.log.read_text().splitlines() if line.startswith("{")]
            entries = [line["access"] for line in lines if path is None or line["access"]["path"] == path]
            if len(entries) >= at_least or time.monotonic() > deadline:
                return entries
            time.sleep(0.05)

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(30)
        self.stderr.close()
        return code


def until(condition, url: str, seconds: float = 10) -> None:
    """Poll ``/health`` until ``condition(health)`` holds (a ConnectError once the server stops listening)."""
    stop = time.monotonic() + seconds
    while not condition(httpx.get(url + "/health", timeout=2).json()):
        if time.monotonic() > stop:
            raise AssertionError(f"{url}/health never met the condition")
        time.sleep(0.02)


@pytest.fixture(scope="module")
def server(probe_site, tmp_path_factory):
    """r1 format, accuracy and the probe; one request at a time plus one waiting; small limits; a token."""
    srv = Server(probe_site, tmp_path_factory.mktemp("serve") / "stderr.log", "r1_strict_format, accuracy:2, slow:0",
                 "--concurrency", "1", "--backlog", "1", "--deadline", "20", "--max-body-mb", "0.05",
                 "--max-rows", "100", env={"GRPO_HOST_SERVE_TOKEN": TOKEN})
    yield srv
    srv.stop()


AUTH = {"Authorization": f"Bearer {TOKEN}"}


def test_token_guards_everything_but_health(server):
    assert httpx.get(server.url + "/health").json()["rewards"] == ["r1_strict_format", "accuracy", "slow"]
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
        reply = httpx.get(server.url + "/rewards", headers=headers)
        assert reply.status_code == 401 and reply.headers["www-authenticate"] == "Bearer"
        assert httpx.post(server.url + "/score", json={"rows": ROWS}, headers=headers).status_code == 401
    listing = httpx.get(server.url + "/rewards", headers=AUTH).json()
    assert [(r["name"], r["weight"], r["pack"]) for r in listing] == [
        ("r1_strict_format", 1.0, "grpo-host"), ("accuracy", 2.0, "grpo-host"), ("slow", 0.0, "grpo-serve-probe")]
    assert listing[0]["bound"] == {"reasoning_tag": "think"}


def test_score_matches_grpo_host_score(server, probe_site, tmp_path):
    reply = httpx.post(server.url + "/score", json={"rows": ROWS}, headers=AUTH)
    assert reply.status_code == 200
    got = reply.json()
    data = write_jsonl(tmp_path / "rows.jsonl", ROWS)
    cli = run_cli("score", str(data), "-r", "r1_strict_format, accuracy:2, slow:0", "--json", "--out",
                  str(tmp_path / "out.jsonl"), pythonpath=[probe_site])
    assert cli.returncode == 1, cli.stderr  # the row without an answer is bad for both
    want = json.loads(cli.stdout)
    for summary in (got, want):
        for stats in summary["rewards"].values():
            stats.pop("seconds")
    summary = {k: v for k, v in got.items() if k != "results"}
    assert summary == {k: want[k] for k in summary}  # score --json may add sections the server does not compute
    assert {"rows", "scored", "bad_rows", "failed_rows", "unscored", "rewards", "weights"} <= set(summary)
    lines = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    # the same lines, labelled by the row's index in the request instead of its line in the file
    assert [{**line, "row": None} for line in got["results"]] == [{**line, "row": None} for line in lines]
    assert got["results"][2] == {"row": "row 2", "error": "reward 'accuracy' needs column 'answer': missing"}
    assert got["results"][0] == {"row": "row 0", "rewards": {"r1_strict_format": 1.0, "accuracy": 1.0, "slow": 1.0},
                                 "total": 3.0}


def test_openrlhf_get_reward(server):
    prompts = [row["prompt"] for row in ROWS]
    body = {"query": [row["prompt"] + row["completion"] for row in ROWS], "prompts": prompts,
            "labels": [row.get("answer") for row in ROWS], "metas": [{}] * 4}
    reply = httpx.post(server.url + "/get_reward", json=body, headers=AUTH)
    assert reply.status_code == 200
    got = reply.json()
    assert set(got) == {"rewards", "scores", "extra_logs"}
    # row 1: format 0, accuracy 0; row 2 has no label, so accuracy cannot apply: a bad row, 0.0 and not scored
    assert got["rewards"] == got["scores"] == [3.0, 0.0, 0.0, 1.0]
    assert got["extra_logs"]["accuracy"] == [1.0, 0.0, 0.0, 0.0]
    assert got["extra_logs"]["grpo_host/scored"] == [1.0, 1.0, 0.0, 1.0]
    logged = server.access("/get_reward", at_least=1)[-1]
    assert logged["status"] == 200 and logged["rows"] == 4 and logged["bad_rows"] == 1
    assert logged["errors"] == ["row 2: reward 'accuracy' needs column 'answer': missing"]
    bad = httpx.post(server.url + "/get_reward", json={"query": ["a", "b"], "prompts": ["a"]}, headers=AUTH)
    assert bad.status_code == 422 and "one entry per query (2)" in bad.json()["error"]


def test_routing_errors_head_request_ids_and_oversized_headers(server):
    """The plain ASGI app's own answers: 404 and 405 as JSON, HEAD on a GET endpoint, request ids, 64 KiB of
    headers at most."""
    missing = httpx.get(server.url + "/nope", headers=AUTH)
    assert missing.status_code == 404 and "/get_reward" in missing.json()["error"]
    wrong = httpx.get(server.url + "/get_reward", headers=AUTH)
    assert wrong.status_code == 405 and wrong.headers["allow"] == "POST"
    head = httpx.head(server.url + "/health")
    assert head.status_code == 200 and head.content == b"" and int(head.headers["content-length"]) > 0
    ids = {httpx.get(server.url + "/health").headers["x-request-id"] for _ in range(3)}
    assert len(ids) == 3
    assert httpx.get(server.url + "/health", headers={"X-Request-Id": "mine"}).headers["x-request-id"] == "mine"
    huge = httpx.get(server.url + "/health", headers={f"X-Pad-{i}": "y" * 1000 for i in range(70)})
    assert huge.status_code == 400
    assert httpx.get(server.url + "/health").status_code == 200


def test_check_reports_rows_like_data_check(server):
    report = httpx.post(server.url + "/check", json={"rows": ROWS + [{"completion": "x"}]}, headers=AUTH).json()
    assert not report["ok"] and report["rows"] == 5
    problems = {(p["reward"], p["column"], p["problem"]): p["rows"] for p in report["problems"]}
    assert problems[("accuracy", "answer", "missing")] == ["row 2"]  # row 4 stops at its missing prompt
    assert problems[("-", "(row)", "no prompt: expected one of messages, prompt, instruction, question")] == ["row 4"]


BYTES_413 = {"limit": 52428, "unit": "bytes"}
ROWS_413 = {"limit": 100, "unit": "rows"}


def _refused(reply, limit: dict) -> None:
    """A 413 whose body names the limit (in its fields and its message) and the option that raises it."""
    assert reply.status_code == 413, reply.text
    got = reply.json()
    assert {k: got.get(k) for k in limit} == limit, got
    option = "--max-body-mb 0.05" if limit["unit"] == "bytes" else "--max-rows 100"
    assert f"at most {limit['limit']} {limit['unit']} per request ({option})" in got["error"], got
    assert f"start the server with a larger {option.split()[0]}" in got["error"], got


def test_size_limits(server):
    big = {"rows": [{"prompt": "p", "completion": "x" * 60_000}]}
    reply = httpx.post(server.url + "/score", json=big, headers=AUTH)
    _refused(reply, BYTES_413)

    def chunks():  # no Content-Length: the stream itself is cut at the limit
        yield b'{"rows": [{"completion": "'
        for _ in range(40):
            yield b"y" * 2000
        yield b'"}]}'

    streamed = httpx.post(server.url + "/score", content=chunks(), headers={**AUTH, "Content-Type": "application/json"})
    _refused(streamed, BYTES_413)
    many = httpx.post(server.url + "/score", json={"rows": [{"completion": "x"}] * 101}, headers=AUTH)
    _refused(many, ROWS_413)
    # every endpoint that takes a batch: OpenRLHF's (its rows counted before they are read: 101 queries with 100
    # prompts was a 422 about the prompts), the data check and the audit
    queries = {"query": ["2+2?" + GOOD] * 101, "prompts": ["2+2?"] * 100}
    _refused(httpx.post(server.url + "/get_reward", json=queries, headers=AUTH), ROWS_413)
    _refused(httpx.post(server.url + "/get_reward", json={"query": ["x" * 60_000]}, headers=AUTH), BYTES_413)
    for path in ("/check", "/audit"):
        _refused(httpx.post(server.url + path, json={"rows": [{"prompt": "p", "completion": "x"}] * 101},
                            headers=AUTH), ROWS_413)
    assert httpx.post(server.url + "/score", content=b"{not json", headers=AUTH).status_code == 400


def test_deadline_then_back_pressure(server):
    # X-Deadline shortens the server's 20 s: the reply comes at 0.5 s, while the 3 s row is still being scored
    late = httpx.post(server.url + "/score", json={"rows": [{"completion": "x", "answer": "4", "sleep": 3}]},
                      headers={**AUTH, "X-Deadline": "0.5"})
    assert late.status_code == 504 and "deadline" in late.json()["error"]
    assert httpx.get(server.url + "/health").json()["scoring"] == 1
    # that late batch still holds the one ensemble; one request may wait, the next is turned away at once
    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        waiting = pool.submit(httpx.post, server.url + "/score",
                              json={"rows": [{"completion": "x", "answer": "4", "sleep": 0.5}]},
                              headers=AUTH, timeout=30)
        until(lambda h: h["scoring"] == 1 and h["waiting"] == 1, server.url)
        busy = httpx.post(server.url + "/score", json={"rows": [{"completion": "x"}]}, headers=AUTH)
        assert busy.status_code == 429 and busy.headers["retry-after"] == "1"
        assert not waiting.done()  # turned away at once, not after the queue ahead of it
        assert waiting.result().status_code == 200
    statuses = [e["status"] for e in server.access("/score", at_least=3)]
    assert 504 in statuses and 429 in statuses


def test_get_reward_past_the_backlog_is_dropped_and_counted_not_refused(server):
    """/get_reward never answers 429: rows the queue has no room for get 0.0 at once and are counted."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        hold = pool.submit(httpx.post, server.url + "/score", headers=AUTH, timeout=30,
                           json={"rows": [{"completion": "x", "answer": "4", "sleep": 1.5}]})
        until(lambda h: h["scoring"] == 1, server.url)  # the one ensemble is busy; the backlog is 1 row
        before = httpx.get(server.url + "/health").json()["dropped_rows"]
        body = {"query": ["2+2?" + GOOD] * 2, "prompts": ["2+2?"] * 2, "labels": ["4"] * 2}
        reply = httpx.post(server.url + "/get_reward", json=body, headers=AUTH)
        assert reply.status_code == 200
        got = reply.json()
        assert got["rewards"] == [0.0, 0.0] and got["extra_logs"]["grpo_host/dropped"] == [1.0, 1.0]
        assert httpx.get(server.url + "/health").json()["dropped_rows"] == before + 2
        assert hold.result().status_code == 200


def test_graceful_shutdown_answers_requests_in_flight(probe_site, tmp_path):
    srv = Server(probe_site, tmp_path / "stderr.log", "slow")
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        in_flight = pool.submit(httpx.post, srv.url + "/score", json={"rows": [{"completion": "x", "sleep": 1.5}]},
                                timeout=30)
        until(lambda h: h["scoring"] == 1, srv.url)
        srv.process.send_signal(signal.SIGTERM)
        with pytest.raises(httpx.TransportError):  # soon no longer listening...
            until(lambda h: False, srv.url)
        reply = in_flight.result()  # ...but the request already taken is answered
    assert reply.status_code == 200 and reply.json()["results"][0]["total"] == 1.0
    # uvicorn re-raises the signal once it has shut down, as process managers expect (0 from older uvicorns)
    assert srv.stop() in (0, -signal.SIGTERM)
    assert "Finished server process" in srv.log.read_text()
    assert [(e["path"], e["status"]) for e in srv.access()][-1] == ("/score", 200)


def _answer(sock: socket.socket) -> bytes:
    """Everything the server sends on ``sock`` until it closes the connection."""
    sock.settimeout(30)
    answer = b""
    while chunk := sock.recv(65536):
        answer += chunk
    return answer


@pytest.mark.parametrize("protocol", ["httptools", "h11"])
def test_sigterm_answers_every_request_begun_and_refuses_new_connections(probe_site, tmp_path, protocol):
    """Requests in flight when SIGTERM comes are answered, whatever part of them had arrived: one being scored,
    one queued behind it, one whose body had not come, one whose headers were only begun (uvicorn closed that one
    unanswered, a broken pipe for the client).  A connection made after the signal is refused."""
    env = {}
    if protocol == "h11":
        blocker = tmp_path / "blocker"
        blocker.mkdir()
        (blocker / "httptools.py").write_text('raise ImportError("httptools is blocked for this test")\n')
        env["PYTHONPATH"] = f"{blocker}{os.pathsep}{probe_site}"
    srv = Server(probe_site, tmp_path / "stderr.log", "slow", "--concurrency", "1", env=env)
    body = json.dumps({"rows": [{"completion": "x", "sleep": 0.5}]}).encode()
    head = (f"POST /score HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    with concurrent.futures.ThreadPoolExecutor(2) as pool, \
            socket.create_connection(("127.0.0.1", srv.port)) as begun, \
            socket.create_connection(("127.0.0.1", srv.port)) as no_body:
        scored, queued = (pool.submit(httpx.post, srv.url + "/score", timeout=30,
                                      json={"rows": [{"completion": "x", "sleep": 1}]}) for _ in range(2))
        until(lambda h: h["scoring"] == 1 and h["waiting"] == 1, srv.url)
        begun.sendall(head[:20])
        no_body.sendall(head)
        until(lambda h: True, srv.url)  # one more round trip: both are read by the server
        srv.process.send_signal(signal.SIGTERM)
        with pytest.raises(httpx.TransportError):  # a new connection is refused (the listener is closed)...
            until(lambda h: False, srv.url)
        begun.sendall(head[20:] + body)  # ...and the requests begun before the signal are answered
        no_body.sendall(body)
        answers = [_answer(begun), _answer(no_body)]
        replies = [scored.result(), queued.result()]
    for answer in answers:
        assert answer.startswith(b"HTTP/1.1 200"), answer[:300]  # and the connection closed after it
        assert json.loads(answer.partition(b"\r\n\r\n")[2])["results"][0]["total"] == 1.0
    assert [r.status_code for r in replies] == [200, 200]
    assert srv.stop() in (0, -signal.SIGTERM)
    assert sorted(e["status"] for e in srv.access("/score")) == [200, 200, 200, 200]


def test_bad_spec_stops_at_start(probe_site):
    proc = run_cli("serve", "--rewards", "no_such_reward", "--port", str(free_port()), pythonpath=[probe_site],
                   timeout=60)
    assert proc.returncode == 2 and "no_such_reward" in proc.stderr


# ---- the trainers' own clients (tests/vendored: OpenRLHF's code at its commit, with its license) ----

class ReplayEngine:
    """What vLLM's engine hands OpenRLHF's executor: one output with the response's token ids (ending in EOS).
    The responses are fixed, keyed by prompt: generation is not under test here, the reward call is."""

    def __init__(self, tokenizer, responses: dict[str, str]) -> None:
        self.tokenizer, self.responses = tokenizer, responses

    async def generate(self, prompt_token_ids, sampling_params, multi_modal_data=None):
        from types import SimpleNamespace

        prompt = self.tokenizer.decode(prompt_token_ids, skip_special_tokens=False)
        ids = self.tokenizer(self.responses[prompt], add_special_tokens=False)["input_ids"] + [
            self.tokenizer.eos_token_id]
        return SimpleNamespace(outputs=[SimpleNamespace(token_ids=ids, finish_reason="stop", logprobs=None)])


@pytest.fixture(scope="module")
def tiny_tokenizer():
    from transformers import AutoTokenizer

    from grpo_host.training.builtin_model import tiny_model_dir

    return AutoTokenizer.from_pretrained(tiny_model_dir())


def rollouts(n: int) -> list[tuple[str, str, str]]:
    """(prompt, label, response): well-formed right, well-formed wrong, no tags, an unclosed <answer>."""
    shapes = [GOOD, GOOD.replace("4", "5"), "four", "<think>\nx\n</think>\n<answer>\n4"]
    return [(f"Q{i}: 2+2?", "4", shapes[i % 4]) for i in range(n)]


def openrlhf_step(urls: list[str], tokenizer, batch: list[tuple[str, str, str]]):
    """One OpenRLHF step's rewards, as its current code gets them: every rollout's executor at once, then the
    experiences made and merged (``concat_experiences`` raises on a rollout whose reward is missing)."""
    import asyncio
    from types import SimpleNamespace

    from vendored.openrlhf_agent import Experience, SingleTurnAgentExecutor, process_response_into_experience

    engine = ReplayEngine(tokenizer, {prompt: response for prompt, _, response in batch})
    executor = SingleTurnAgentExecutor(urls if len(urls) > 1 else urls[0])
    params = SimpleNamespace(max_tokens=256, logprobs=None)  # the two vllm.SamplingParams fields execute reads

    async def step():
        return await asyncio.gather(*(executor.execute(prompt, label, params, 1024, tokenizer, engine)
                                      for prompt, label, _ in batch))

    outputs = asyncio.run(step())
    experiences = [process_response_into_experience(out, max_len=1024) for out in outputs]
    return outputs, Experience.concat_experiences(experiences, tokenizer.pad_token_id)


def test_openrlhf_current_client_burst_loses_nothing(probe_site, tmp_path, tiny_tokenizer):
    """256 one-rollout requests at once against a server with its default options: every reward arrives, and
    each equals what ``grpo-host score`` gives the response without its EOS string."""
    spec = "r1_strict_format, accuracy:2"
    srv = Server(probe_site, tmp_path / "stderr.log", spec)
    try:
        batch = rollouts(256)
        outputs, merged = openrlhf_step([srv.url + "/get_reward"], tiny_tokenizer, batch)
        health = httpx.get(srv.url + "/health").json()
    finally:
        srv.stop()
    assert all(out["reward"] is not None for out in outputs)
    got = merged.rewards.flatten().tolist()
    data = write_jsonl(tmp_path / "rows.jsonl", [{"prompt": p, "completion": r, "answer": a} for p, a, r in batch])
    cli = run_cli("score", str(data), "-r", spec, "--out", str(tmp_path / "out.jsonl"))
    assert cli.returncode == 0, cli.stderr
    want = [json.loads(line)["total"] for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert got == want and want[:4] == [3.0, 1.0, 0.0, 2.0]  # the unclosed <answer> reads 4, not "4</s>"
    assert health["dropped_rows"] == health["late_rows"] == 0
    assert health["batches"] < 256  # the one-row requests were scored in shared micro-batches
    statuses = {e["status"] for e in srv.access("/get_reward", at_least=256)}
    assert statuses == {200}


def test_openrlhf_late_rows_get_a_defined_reward(probe_site, tmp_path, tiny_tokenizer):
    """A row not scored within the deadline is 0.0 and counted, not a 504 the client retries into a crash."""
    srv = Server(probe_site, tmp_path / "stderr.log", "slow", "--deadline", "1", "--concurrency", "1")
    try:
        batch = [("Q0", "4", "sleep 3"), ("Q1", "4", "quick")]
        outputs, merged = openrlhf_step([srv.url + "/get_reward"], tiny_tokenizer, batch)
        health = httpx.get(srv.url + "/health").json()
    finally:
        srv.stop()
    assert [out["reward"] for out in outputs] == [[0.0], [0.0]]  # the quick row queued behind the slow batch
    assert [out["extra_logs"]["grpo_host/late"] for out in outputs] == [[1.0], [1.0]]
    assert merged.rewards.flatten().tolist() == [0.0, 0.0]
    assert health["late_rows"] == 2


def test_strict_fails_only_the_request_holding_an_unscored_row(probe_site, tmp_path):
    """--strict with concurrent one-row requests merged into one micro-batch: the request whose row no reward
    scored is 500 naming its row; the fifteen merged with it get their rewards."""
    srv = Server(probe_site, tmp_path / "stderr.log", "maybe, slow:0", "--strict", "--concurrency", "1",
                 "--batch-window-ms", "200")
    try:
        url = srv.url + "/get_reward"
        completions = ["fine"] * 8 + ["unscorable"] + ["fine"] * 7
        with concurrent.futures.ThreadPoolExecutor(17) as pool:
            hold = pool.submit(httpx.post, url, json={"query": ["sleep 1"]}, timeout=30)
            until(lambda h: h["scoring"] == 1, srv.url)  # the one scoring thread is busy: the next ones queue
            batches = httpx.get(srv.url + "/health").json()["batches"]
            replies = list(pool.map(lambda c: httpx.post(url, json={"query": [c]}, timeout=30), completions))
            assert hold.result().status_code == 200
        health = httpx.get(srv.url + "/health").json()
    finally:
        srv.stop()
    assert health["batches"] - batches < len(completions)  # they shared micro-batches
    assert [r.status_code for r in replies] == [200] * 8 + [500] + [200] * 7
    assert replies[8].json()["error"] == ("UnscoredRowsError: 1 rows were scored by no reward (strict): "
                                          "rows ['row 0']")
    assert {r.json()["rewards"][0] for i, r in enumerate(replies) if i != 8} == {1.0}


def test_openrlhf_several_urls_and_the_previous_client(probe_site, tmp_path, tiny_tokenizer):
    """The current client sends every rollout to its first URL and an empty request to the others; the previous
    one sends a whole step in one request (8,200 rows were 413 before) or shards it across URLs."""
    from vendored.openrlhf_remote_rm import get_rewards

    srv = Server(probe_site, tmp_path / "stderr.log", "r1_strict_format, accuracy:2")
    try:
        url = srv.url + "/get_reward"
        outputs, _ = openrlhf_step([url, url], tiny_tokenizer, rollouts(8))
        assert [out["reward"][0] for out in outputs] == [3.0, 1.0, 0.0, 2.0] * 2
        empty = [e for e in srv.access("/get_reward", at_least=16) if e.get("rows") == 0]
        assert len(empty) == 8 and {e["status"] for e in empty} == {200}
        batch = rollouts(8200)
        queries = [prompt + response + "</s>" for prompt, _, response in batch]
        prompts, labels = [p for p, _, _ in batch], [a for _, a, _ in batch]
        whole = get_rewards([url], queries, prompts, labels)
        assert len(whole) == 1 and whole[0]["rewards"] == [3.0, 1.0, 0.0, 2.0] * 2050
        sharded = get_rewards([url, url, url], queries, prompts, labels)
        assert sum(len(r["rewards"]) for r in sharded) == 8200
        assert [r for part in sharded for r in part["rewards"]] == whole[0]["rewards"]
    finally:
        srv.stop()


# ---- hostile and slow clients, start-up failures (issue 29) ----

def test_hostile_bodies_and_slow_clients(probe_site, tmp_path):
    srv = Server(probe_site, tmp_path / "stderr.log", "r1_strict_format", "--header-timeout", "1",
                 "--tokenizer", str(tiny_dir()))
    try:
        deep = httpx.post(srv.url + "/score", content=b"[" * 100_000 + b"]" * 100_000)
        assert deep.status_code == 400 and "nested too deeply" in deep.json()["error"]
        # the served tokenizer's EOS is stripped on /score too when the server was given one
        stripped = httpx.post(srv.url + "/score", json={"rows": [{"completion": GOOD + "</s><pad>"}]}).json()
        assert stripped["results"][0]["total"] == 1.0
        # slowloris: 200 clients sending a header line every 0.5 s are answered 408 and closed, each before it
        # could finish its headers (40 lines), while an ordinary request is still served
        slow = [socket.create_connection(("127.0.0.1", srv.port)) for _ in range(200)]
        for sock in slow:
            sock.sendall(b"POST /score HTTP/1.1\r\nHost: x\r\n")
        closed = set()
        for line in range(40):
            assert httpx.get(srv.url + "/health", timeout=10).status_code == 200
            for i, sock in enumerate(slow):
                if i in closed:
                    continue
                try:
                    sock.sendall(f"X-Pad-{line}: y\r\n".encode())
                except OSError:
                    closed.add(i)
            if len(closed) == 200:
                break
            time.sleep(0.5)
        assert len(closed) == 200, f"{200 - len(closed)} slow clients were still held after {line + 1} header lines"
        for sock in slow:
            sock.close()
        # X-Deadline counts from the first byte: a body sent slowly spends it, and the 504 says so
        with socket.create_connection(("127.0.0.1", srv.port)) as sock:
            sock.sendall(b"POST /score HTTP/1.1\r\nHost: x\r\nX-Deadline: 1\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 100\r\n\r\n{")
            sock.settimeout(30)
            answer = b""
            for _ in range(99):  # far more than the deadline's worth of bytes, one every 0.1 s
                try:
                    sock.sendall(b" ")
                except OSError:
                    break
                sock.setblocking(False)
                with contextlib.suppress(BlockingIOError):
                    answer += sock.recv(65536)
                sock.setblocking(True)
                if answer:
                    break
                time.sleep(0.1)
            sock.settimeout(10)
            while b"\r\n\r\n" not in answer:
                answer += sock.recv(65536)
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 504"), answer[:200]
        assert b"first byte" in answer and b"reading the request body" in answer
    finally:
        srv.stop()


def test_without_httptools_h11_keeps_the_header_timeout(probe_site, tmp_path):
    """httptools is optional (the serve extra does not pull it): without it serve runs on uvicorn's h11 protocol,
    with the same first-byte clock and header timeout."""
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "httptools.py").write_text('raise ImportError("httptools is blocked for this test")\n')
    srv = Server(probe_site, tmp_path / "stderr.log", "r1_strict_format", "--header-timeout", "1",
                 env={"PYTHONPATH": f"{blocker}{os.pathsep}{probe_site}"})
    try:
        body = {"query": ["2+2?" + GOOD + "</s>"], "prompts": ["2+2?"], "labels": ["4"]}
        assert httpx.post(srv.url + "/get_reward", json=body).json()["rewards"] == [1.0]
        with socket.create_connection(("127.0.0.1", srv.port)) as sock:
            sock.sendall(b"POST /score HTTP/1.1\r\nHost: x\r\n")  # and nothing more
            sock.settimeout(30)
            answer = b""
            while b"\r\n\r\n" not in answer:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    finally:
        srv.stop()


def tiny_dir() -> Path:
    from grpo_host.training.builtin_model import tiny_model_dir

    return tiny_model_dir()


def test_start_up_failures_name_host_and_port(probe_site):
    for port in ("70000", "-1", "0"):
        proc = run_cli("serve", "--rewards", "accuracy", "--port", port, timeout=60)
        assert proc.returncode == 2 and "--port" in proc.stderr and "Traceback" not in proc.stderr
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = run_cli("serve", "--rewards", "accuracy", "--port", str(port), timeout=60)
        assert proc.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in proc.stderr
    proc = run_cli("serve", "--rewards", "accuracy", "--host", "no-such-host.invalid", "--port", "8123", timeout=60)
    assert proc.returncode == 2 and "no-such-host.invalid:8123" in proc.stderr and "does not resolve" in proc.stderr
    proc = run_cli("serve", "--rewards", "accuracy", "--host", "192.0.2.1", "--port", "8123", timeout=60)
    assert proc.returncode == 2 and "cannot listen on 192.0.2.1:8123" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_openrlhf_code_labels_become_tests(probe_site, tmp_path):
    """A code task's label in verl's prime_code JSON reaches the code reward as its tests."""
    from grpo_host import Ensemble

    try:
        Ensemble.from_spec("code").close()
    except Exception as exc:  # no sandbox on this machine: the code reward refuses to bind
        pytest.skip(f"the code reward cannot run here: {exc}")
    srv = Server(probe_site, tmp_path / "stderr.log", "code")
    try:
        label = json.dumps({"inputs": ["1 2\n", "5 5\n"], "outputs": ["3\n", "10\n"]})
        program = "```python\nprint(sum(map(int, input().split())))\n```"
        body = {"query": ["Q: add" + program + "<|im_end|>", "Q: add" + "```python\nprint(3)\n```"],
                "prompts": ["Q: add"] * 2, "labels": [label] * 2}
        assert httpx.post(srv.url + "/get_reward", json=body, timeout=60).json()["rewards"] == [1.0, 0.5]
    finally:
        srv.stop()
