"""``grpo-host serve``: one ensemble over HTTP, for trainers that cannot load a grpo-host pack themselves.

OpenRLHF posts to a reward URL; verl's and TRL's users want the code
reward's sandbox on another machine than the trainer.  Both are served by one
ASGI app (a plain ASGI callable, run by uvicorn) around one spec:

* ``POST /get_reward``: OpenRLHF's remote reward protocol as its clients send
  it, ``{"query", "prompts", "labels"}`` in, ``{"rewards", "scores",
  "extra_logs"}`` out (see :func:`openrlhf_rows`);
* ``POST /score``: ``{"rows": [...]}`` in, the summary ``grpo-host score
  --json`` prints plus ``results``, one line per row exactly as ``grpo-host
  score --out`` writes them: both come from :func:`grpo_host.offline.score_file_rows`,
  so a row lacking a column a reward needs is a bad row named by its index
  (``"row 3"``, 0-based in the request's list), never a failed request;
* ``POST /check``: ``{"rows": [...]}`` in, the report ``grpo-host data check
  --json`` prints (:func:`grpo_host.data.check_rows`, row checks included);
* ``POST /audit``: ``{"rows": [...], "sample": N}`` in, the report ``grpo-host
  audit --json`` prints for the served rewards (:func:`grpo_host.audit.audit_rows`);
* ``GET /rewards``: the served members with weights and parameters;
* ``GET /health``: liveness and load, for load balancers (never behind the token).

Trainers call per sample now (OpenRLHF's agent executor posts one rollout
per request, a whole step's rollouts at once), so the server does not score
per request: a :class:`~grpo_host.serving.batching.MicroBatcher` with one thread per
ensemble (``concurrency`` of them) gathers concurrent requests' rows into
micro-batches of up to ``batch_rows`` rows within ``batch_window`` seconds.
A ``/score`` request is scored as one batch of its own (its summary is per
request); ``/get_reward`` rows are merged across requests, and a large
request is split into micro-batches.  What a production reward service must
do on top:

* **Admission in rows**: at most ``backlog`` rows wait for a scoring thread.
  ``/score`` past that is answered 429 with ``Retry-After`` at once (the
  ``remote`` reward and load balancers retry).  ``/get_reward`` never answers
  429 or 504 for load, because OpenRLHF's client turns five failed tries into
  a missing reward and then a crash: a row it cannot take or score within
  the deadline gets reward 0.0 and is counted (``grpo_host/dropped`` or
  ``grpo_host/late`` in ``extra_logs``, and in ``/health``).
* **Deadlines from the first byte**: a request is answered within
  ``deadline`` seconds (a client may ask for less with ``X-Deadline:
  SECONDS``), counted from the first byte of the request, so a slowly sent
  body spends it; the 504 says what it was waiting for.  A batch already
  being scored runs on (a thread cannot be killed; the spec's per-item
  timeouts bound it) and its rows count as scoring until it ends, so
  back-pressure still tells the truth; rows not yet taken are dropped.
* **Slow clients are not held**: the headers must arrive within
  ``header_timeout`` seconds of the request's first byte (or of the
  connection), the body within ``body_timeout``; past either the client gets
  408 and the connection is closed.
* **Size limits**: a body over ``max_body`` bytes is 413 (the stream is cut,
  whatever Content-Length says); a request over ``max_rows`` rows is 413; a
  body nested too deeply to parse is 400, and so are headers over 64 KiB.
* **Special tokens**: OpenRLHF's text ends in the tokenizer's EOS and pad
  strings; ``/get_reward`` strips them from each response before scoring
  (:mod:`grpo_host.scoring.special_tokens`), and ``/score`` does when the server was
  given a tokenizer or end tokens explicitly.
* **A bearer token** from an environment variable (``GRPO_HOST_SERVE_TOKEN``
  by default): when it is set, every endpoint but ``/health`` needs
  ``Authorization: Bearer <token>``.
* **Graceful shutdown:** on SIGTERM or SIGINT uvicorn stops accepting,
  requests in flight finish and are answered, then the ensembles close.
* **Start-up failures name the address**: a port in use, a host that does
  not resolve, an address this machine lacks are a :class:`ValueError` naming
  host and port (exit 2 from the CLI), before any ensemble is built.
* **Structured access logs:** one JSON object per request on stderr (method,
  path, status, milliseconds, rows, bad and failed rows, client, request id),
  written once per turn of the event loop.
* **Cheap per request**: OpenRLHF posts one rollout per request, so the app
  is a plain ASGI callable (:class:`_App`) on uvicorn's httptools parser,
  and ``/get_reward`` waits on asyncio futures the scoring threads settle
  once per micro-batch (benchmarks/serve.md has the figures).
"""

from __future__ import annotations

import asyncio
import functools
import hmac
import itertools
import json
import logging
import os
import socket
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..data import check_rows
from ..discovery.catalog import reward_row
from ..errors import UnscoredRowsError, UserError
from ..offline import Tally, score_file_rows
from ..scoring.ensemble import Ensemble
from ..scoring.special_tokens import COMMON_END_TOKENS, strip_end_tokens
from .batching import DEFAULT_MAX_ROWS, DEFAULT_WINDOW, MicroBatcher, chunks

__all__ = ["ServeSettings", "build_app", "listen_socket", "openrlhf_rows", "serve"]

TOKEN_ENV = "GRPO_HOST_SERVE_TOKEN"
ACCESS_LOG = "grpo_host.serve.access"


@dataclass
class ServeSettings:
    """How one server behaves; ``grpo-host serve``'s options, one field each."""

    concurrency: int = field(default_factory=lambda: max(1, min(4, os.cpu_count() or 1)))
    """Ensembles, each scoring one micro-batch at a time on a thread of its own."""
    backlog: int = 65536
    """Rows that may wait for a scoring thread; past that ``/score`` is 429 and ``/get_reward`` rows score 0.0,
    counted as dropped."""
    deadline: float = 120.0
    """Seconds from a request's first byte within which it is answered; ``X-Deadline`` may only shorten it."""
    max_body: int = 128 * 1024 * 1024
    """Largest request body in bytes (413 past it)."""
    max_rows: int = 65536
    """Most rows in one request (413 past it); ``/get_reward`` splits a large request into micro-batches."""
    batch_rows: int = DEFAULT_MAX_ROWS
    """Most rows in one micro-batch."""
    batch_window: float = DEFAULT_WINDOW
    """Seconds a scoring thread waits for more rows after the first."""
    end_tokens: tuple[str, ...] | None = None
    """EOS/pad strings stripped from responses: None strips :data:`COMMON_END_TOKENS` on ``/get_reward`` only;
    a tuple (from ``--tokenizer`` or ``--end-token``) strips those on ``/get_reward`` and ``/score``; empty: none."""
    header_timeout: float = 10.0
    """Seconds from a request's first byte (or a new connection) within which its headers must have arrived."""
    body_timeout: float = 60.0
    """Seconds within which the whole body must have arrived once the headers have."""
    token_env: str = TOKEN_ENV
    """The environment variable holding the bearer token; unset or empty: no token needed."""
    workers: int | None = None
    """Worker processes per ensemble for process-executor rewards (default: the cores shared out)."""
    pool: str = "local"
    """Where process-executor rewards run (see :data:`grpo_host.ensemble.POOLS`)."""

    @property
    def openrlhf_tokens(self) -> tuple[str, ...]:
        return COMMON_END_TOKENS if self.end_tokens is None else self.end_tokens


class HTTPError(Exception):
    """An answer other than 200: status, a message for the client, optional headers."""

    def __init__(self, status: int, message: str, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.headers = status, message, dict(headers or {})


def openrlhf_rows(body: Mapping[str, Any], end_tokens: Sequence[str] = (), *, tests: bool = False
                  ) -> list[dict[str, Any]]:
    """Rows from OpenRLHF's remote-reward request: ``query`` is prompt plus response as text.

    The completion is the query with its prompt taken off the front (the
    whole query when it does not start with the prompt, as when OpenRLHF
    sends no ``prompts``) and the trailing ``end_tokens`` off the back;
    ``labels`` become the ``answer`` column, and with ``tests`` (a served
    reward reads that column) a label holding prime_code JSON becomes the
    ``tests`` column too (:func:`~grpo_host.integrations.code_tests.prime_code_tests`).
    Other keys OpenRLHF may add (``metas``) are ignored.
    """
    from ..integrations.code_tests import prime_code_tests

    queries = body.get("query")
    if not isinstance(queries, list) or not all(isinstance(q, str) for q in queries):
        raise HTTPError(422, "'query' must be a list of strings (prompt + response)")
    n = len(queries)
    prompts = body.get("prompts") or [None] * n
    labels = body.get("labels") or [None] * n
    for key, values in (("prompts", prompts), ("labels", labels)):
        if not isinstance(values, list) or len(values) != n:
            raise HTTPError(422, f"'{key}' must be a list with one entry per query ({n})")
    rows = []
    for query, prompt, label in zip(queries, prompts, labels):
        completion = query[len(prompt):] if isinstance(prompt, str) and prompt and query.startswith(prompt) else query
        row: dict[str, Any] = {"completion": strip_end_tokens(completion, end_tokens), "prompt": prompt}
        if label is not None:
            row["answer"] = label if isinstance(label, str) else json.dumps(label)
            if tests and (cases := prime_code_tests(label)) is not None:
                row["tests"] = cases
        rows.append(row)
    return rows


Labelled = Sequence[tuple[str, Any]]
"""Rows with the label their errors name (``"row 3"``: the index in the request)."""


def _score(ensemble: Ensemble, rows: Labelled) -> tuple[Tally, list[dict[str, Any]]]:
    tally = Tally(ensemble.names)
    return tally, list(score_file_rows(rows, ensemble, tally, batch_size=max(len(rows), 1)))


Scored = tuple[Tally | None, list[dict[str, Any]]]


def _score_parts(ensemble: Ensemble, parts: list[Labelled], *, strict: bool = False
                 ) -> list[Scored | UnscoredRowsError]:
    """One micro-batch: a part alone keeps its own tally; merged parts share one scoring call and get their lines.

    ``strict`` is applied per part, after the merged call (the ensemble itself scores non-strict): a part
    holding a row no reward scored gets an :class:`~grpo_host.scoring.ensemble.UnscoredRowsError` naming its
    rows, which fails that request only; the requests merged with it get their lines.
    """
    if len(parts) == 1:
        out: list[Scored] = [_score(ensemble, parts[0])]
    else:
        _, lines = _score(ensemble, [row for part in parts for row in part])
        out, start = [], 0
        for part in parts:
            out.append((None, lines[start:start + len(part)]))
            start += len(part)
    return [_strict(scored) for scored in out] if strict else out


def _strict(scored: Scored) -> Scored | UnscoredRowsError:
    """``scored``, or the error ``Ensemble(strict=True)`` raises when one of its rows was scored by no reward."""
    rows = [line["row"] for line in scored[1] if "rewards" in line and line.get("total") is None]
    if not rows:
        return scored
    return UnscoredRowsError(f"{len(rows)} rows were scored by no reward (strict): rows {rows[:10]}")


class _Server:
    """The state behind the endpoints: the ensembles behind one micro-batcher, the row counts, the token."""

    def __init__(self, build: Callable[[], Ensemble], settings: ServeSettings) -> None:
        self.settings = settings
        self.ensembles = [build() for _ in range(settings.concurrency)]
        self.names = self.ensembles[0].names
        # ``strict`` is the server's to apply, per request (_score_parts): an ensemble raising for a merged
        # micro-batch would fail every request in it for one request's row.
        self.strict = any(e.strict for e in self.ensembles)
        for ensemble in self.ensembles:
            ensemble.strict = False
        self.batcher: MicroBatcher | None = None  # started with the server (lifespan), stopped after the last request
        self.dropped = self.late = 0
        self.token = os.environ.get(settings.token_env) or None

    def start(self) -> None:
        self.batcher = MicroBatcher(self.ensembles, functools.partial(_score_parts, strict=self.strict),
                                    window=self.settings.batch_window,
                                    max_rows=self.settings.batch_rows, name="grpo-host-serve")

    def stop(self) -> None:
        if self.batcher is not None:
            self.batcher.close()
        for ensemble in self.ensembles:
            ensemble.close()

    def room(self, n: int) -> bool:
        """Admission in rows: ``n`` more may wait within the backlog, or start at once on an idle thread."""
        return self.batcher.waiting_rows + n <= self.settings.backlog or self.batcher.idle

    def busy(self, n: int) -> HTTPError:
        b = self.batcher
        return HTTPError(429, f"busy: {b.waiting_rows} rows waiting and {b.scoring_rows} being scored; this server "
                         f"queues at most {self.settings.backlog} rows and this request has {n}; retry later or "
                         "elsewhere", {"Retry-After": "1"})


async def _wait(futures: list[Future], deadline: float) -> None:
    """Wait for ``futures`` until ``deadline``; the ones not taken yet are cancelled (and so never scored)."""
    wrapped = [asyncio.wrap_future(f) for f in futures]
    left = deadline - time.monotonic()
    if wrapped and left > 0:
        await asyncio.wait(wrapped, timeout=left)
    for future, outer in zip(futures, wrapped):
        if not future.done():
            future.cancel()
            outer.add_done_callback(lambda f: f.cancelled() or f.exception())  # retrieved: no "never retrieved"


async def _wait_async(futures: list[asyncio.Future], deadline: float) -> None:
    """:func:`_wait` for the asyncio futures of :meth:`~grpo_host.serving.batching.MicroBatcher.submit_async`."""
    try:
        async with asyncio.timeout(max(deadline - time.monotonic(), 0)):
            for future in futures:
                try:
                    await future
                except Exception:  # noqa: S110  (the caller reads it from the future)
                    pass
    except TimeoutError:
        pass
    for future in futures:
        future.cancel()  # nothing for a done one; one not taken yet is dropped unscored


class _Request:
    """What a handler reads of one request: the ASGI scope and receive, the headers, its log entry, its clock."""

    __slots__ = ("scope", "receive", "headers", "log", "start")

    def __init__(self, scope: dict, receive: Callable[[], Any], headers: dict[str, str], log: dict[str, Any],
                 start: float) -> None:
        self.scope, self.receive, self.headers, self.log, self.start = scope, receive, headers, log, start


Handler = Callable[[_Request], Any]
"""An endpoint: a coroutine function taking the request and returning the JSON payload of a 200 (or raising
:class:`HTTPError`)."""


def build_app(build: Callable[[], Ensemble], settings: ServeSettings | None = None) -> _App:
    """The ASGI app serving ensembles made by ``build()`` (called ``concurrency`` times, at once).

    Building them before the first request means an unknown reward or a bad
    parameter stops ``grpo-host serve`` at start, not a trainer's first step.
    """
    settings = settings or ServeSettings()
    server = _Server(build, settings)
    members = server.ensembles[0].members
    reads_tests = any("tests" in col.names for m in members for col in m.reward.requires)
    score_tokens = settings.end_tokens or ()

    def deadline_of(request: _Request) -> tuple[float, float]:
        """(seconds granted, the monotonic time they end), counted from the request's first byte."""
        seconds = settings.deadline
        asked = request.headers.get("x-deadline")
        if asked is not None:
            try:
                seconds = min(seconds, float(asked))
            except ValueError:
                raise HTTPError(422, f"X-Deadline must be a number of seconds, got {asked!r}") from None
            if not seconds > 0:
                raise HTTPError(422, f"X-Deadline must be a positive number of seconds, got {asked!r}")
        return seconds, request.start + seconds

    async def read_json(request: _Request) -> Any:
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > settings.max_body:
            raise HTTPError(413, f"the body is {declared} bytes; this server takes at most {settings.max_body}")
        seconds, deadline = deadline_of(request)
        body_ends = time.monotonic() + settings.body_timeout
        chunks_, size = [], 0
        try:
            async with asyncio.timeout(max(min(deadline, body_ends) - time.monotonic(), 0)):
                while True:
                    message = await request.receive()
                    if message["type"] == "http.disconnect":
                        raise HTTPError(400, "the client went away before sending the whole body")
                    chunk = message.get("body", b"")
                    size += len(chunk)
                    if size > settings.max_body:
                        raise HTTPError(413, f"the body is over {settings.max_body} bytes, this server's limit")
                    chunks_.append(chunk)
                    if not message.get("more_body"):
                        break
        except TimeoutError:
            if deadline <= body_ends:
                raise HTTPError(504, f"the deadline ({seconds:g} s from the request's first byte) passed while "
                                f"reading the request body ({size} bytes received)") from None
            raise HTTPError(408, f"the body did not arrive within {settings.body_timeout:g} s ({size} bytes "
                            "received)", {"Connection": "close"}) from None
        try:
            return json.loads(b"".join(chunks_))
        except RecursionError:
            raise HTTPError(400, "the body is nested too deeply to read as JSON") from None
        except ValueError as exc:
            raise HTTPError(400, f"the body is not JSON: {exc}") from None

    def take_rows(request: _Request, rows: Any) -> list[Any]:
        if not isinstance(rows, list):
            raise HTTPError(422, "'rows' must be a list of row objects")
        if len(rows) > settings.max_rows:
            raise HTTPError(413, f"{len(rows)} rows; this server takes at most {settings.max_rows} per request")
        request.log["rows"] = len(rows)
        return rows

    def note(request: _Request, lines: list[dict[str, Any]]) -> None:
        request.log.update(bad_rows=sum("rewards" not in line for line in lines),
                           failed_rows=sum("rewards" in line and "error" in line for line in lines))

    async def score(request: _Request) -> Any:
        body = await read_json(request)
        raw = take_rows(request, body.get("rows") if isinstance(body, dict) else None)
        seconds, deadline = deadline_of(request)
        if not raw:
            tally, lines = Tally(server.names), []
        else:
            if not server.room(len(raw)):
                raise server.busy(len(raw))
            if score_tokens:
                raw = [{**r, "completion": strip_end_tokens(r["completion"], score_tokens)}
                       if isinstance(r, dict) and isinstance(r.get("completion"), str) else r for r in raw]
            future = server.batcher.submit([(f"row {i}", r) for i, r in enumerate(raw)], alone=True)
            await _wait([future], deadline)
            if future.cancelled() or not future.done():
                raise HTTPError(504, f"the deadline ({seconds:g} s from the request's first byte) passed "
                                f"{'while this batch was scored' if future.running() else 'before a scoring thread was free'}")
            tally, lines = future.result()
        note(request, lines)
        return {**tally.summary(server.ensembles[0]), "results": lines}

    async def get_reward(request: _Request) -> Any:
        body = await read_json(request)
        if not isinstance(body, dict):
            raise HTTPError(422, "the body must be an object with 'query', 'prompts' and 'labels'")
        rows = take_rows(request, openrlhf_rows(body, settings.openrlhf_tokens, tests=reads_tests))
        _, deadline = deadline_of(request)
        labelled = [(f"row {i}", row) for i, row in enumerate(rows)]
        parts = list(chunks(labelled, settings.batch_rows)) if rows else []
        futures: list[asyncio.Future | None] = []
        for part in parts:  # a part the queue has no room for is not scored: its rows count as dropped
            futures.append(server.batcher.submit_async(part) if server.room(len(part)) else None)
        await _wait_async([f for f in futures if f is not None], deadline)
        lines: list[dict[str, Any]] = []
        dropped, late = [], []
        for part, future in zip(parts, futures):
            if future is not None and future.done() and not future.cancelled():
                lines += future.result()[1]
                dropped += [0.0] * len(part)
                late += [0.0] * len(part)
                continue
            where = "no room in the queue" if future is None else "the deadline passed before it was scored"
            lines += [{"row": label, "error": where} for label, _ in part]
            dropped += [float(future is None)] * len(part)
            late += [float(future is not None)] * len(part)
        server.dropped += int(sum(dropped))
        server.late += int(sum(late))
        note(request, lines)
        # OpenRLHF turns every list into a tensor: a row no reward scored (or a bad, dropped or late row) is 0.0
        # there, and ``grpo_host/scored`` says which rows those were; the reasons are in this server's access log.
        rewards = [line.get("total") or 0.0 for line in lines]
        extra: dict[str, list[float]] = {
            name: [(line.get("rewards") or {}).get(name) or 0.0 for line in lines] for name in server.names}
        extra["grpo_host/scored"] = [float(line.get("total") is not None) for line in lines]
        extra["grpo_host/dropped"], extra["grpo_host/late"] = dropped, late
        errors = [f"{line['row']}: {line['error']}" for line in lines if "error" in line]
        if errors:
            request.log["errors"] = errors[:5]
        return {"rewards": rewards, "scores": rewards, "extra_logs": extra}

    async def off_loop(work: Callable[[], Any], seconds: float, deadline: float, what: str) -> Any:
        """``work()`` on a thread, off the event loop; a 504 saying what was under way when the deadline passes."""
        job = asyncio.get_running_loop().run_in_executor(None, work)
        try:
            return await asyncio.wait_for(job, max(deadline - time.monotonic(), 0))
        except TimeoutError:
            raise HTTPError(504, f"the deadline ({seconds:g} s from the request's first byte) passed while {what}"
                            ) from None

    async def check(request: _Request) -> Any:
        body = await read_json(request)
        rows = take_rows(request, body.get("rows") if isinstance(body, dict) else None)
        seconds, deadline = deadline_of(request)
        rewards = [m.reward for m in members]
        report = await off_loop(lambda: check_rows(((f"row {i}", raw) for i, raw in enumerate(rows)), rewards,
                                                   extra_columns=("completion",)),
                                seconds, deadline, "the rows were checked")
        return report.as_dict()

    async def audit(request: _Request) -> Any:
        """``grpo-host audit`` over the posted rows with this server's rewards, on an ensemble of its own (the
        scoring threads keep theirs): ``{"rows": [...], "sample": N}`` -> the audit's report (docs/audit.md)."""
        from ..audit import DEFAULT_SAMPLE, audit_rows

        body = await read_json(request)
        rows = take_rows(request, body.get("rows") if isinstance(body, dict) else None)
        sample = body.get("sample", DEFAULT_SAMPLE)
        if not isinstance(sample, int) or isinstance(sample, bool) or sample < 1:
            raise HTTPError(422, f"'sample' must be a positive number of rows, got {sample!r}")
        seconds, deadline = deadline_of(request)

        def run() -> Any:
            with build() as ensemble:
                return audit_rows(((f"row {i}", raw) for i, raw in enumerate(rows)), None, sample=sample,
                                  ensemble=ensemble, data="request")

        report = await off_loop(run, seconds, deadline, "the rewards were audited")
        return report.as_dict()

    async def listing(request: _Request) -> Any:
        return [{**reward_row(m.reward), "weight": m.weight, "on_error": m.on_error, "timeout": m.timeout,
                 "bound": m.reward.bound.model_dump() if m.reward.bound is not None else None} for m in members]

    async def health(request: _Request) -> Any:
        b = server.batcher
        return {"status": "ok", "rewards": server.names, "concurrency": settings.concurrency,
                "backlog": settings.backlog, "scoring": b.scoring_rows, "waiting": b.waiting_rows,
                "batches": b.batches, "dropped_rows": server.dropped, "late_rows": server.late}

    return _App(server, {
        "/get_reward": ("POST", get_reward), "/score": ("POST", score), "/check": ("POST", check),
        "/audit": ("POST", audit), "/rewards": ("GET", listing), "/health": ("GET", health),
    })


FIRST_BYTE = "grpo_host.first_byte"
"""The scope key holding the monotonic time of a request's first byte (set by :func:`_protocol`)."""

JSON = (b"content-type", b"application/json")


class _App:
    """The ASGI app: a table of endpoints, the bearer token, the errors as JSON, the access log, the lifespan.

    A plain ASGI callable rather than a framework's router and middleware
    stack: OpenRLHF posts one rollout per request, so what a request costs
    before and after its handler is paid a thousand times a step.  Here that
    is one dict lookup, one header dict, one JSON encoding and a log line;
    request ids are a per-server random prefix and a counter (``uuid4`` read
    the kernel's random source once a request, 0.1 ms each on a VM), and the
    access log is written once per turn of the event loop, one JSON line per
    request (a write per line was 0.08 ms).  A GET endpoint answers HEAD too
    (headers only), as load balancers probe.
    """

    def __init__(self, server: _Server, routes: Mapping[str, tuple[str, Handler]]) -> None:
        self.server, self.routes = server, dict(routes)
        self.log = logging.getLogger(ACCESS_LOG)
        self._ids = itertools.count(1)
        self._id_prefix = os.urandom(6).hex()
        self._lines: list[str] = []
        self._second: tuple[int, str] = (0, "")

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "lifespan":
            return await self._lifespan(receive, send)
        if scope["type"] != "http":
            return
        start = scope.get(FIRST_BYTE) or time.monotonic()
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        request_id = headers.get("x-request-id") or f"{self._id_prefix}-{next(self._ids)}"
        method, path = scope["method"], scope["path"]
        entry: dict[str, Any] = {"method": method, "path": path, "request_id": request_id}
        status, extra = 200, {}
        try:
            payload = await self._answer(_Request(scope, receive, headers, entry, start), method, path)
        except HTTPError as exc:
            entry["error"] = exc.message
            status, payload, extra = exc.status, {"error": exc.message}, exc.headers
        except RecursionError:  # a value nested deeper than Python can walk, wherever it was walked first
            entry["error"] = message = "a value in the body is nested too deeply to read"
            status, payload = 400, {"error": message}
        except Exception as exc:  # a broken reward (RewardError) or a bug here: the client hears why, as JSON
            entry["error"] = message = f"{type(exc).__name__}: {exc}"
            status, payload = 500, {"error": message}
            logging.getLogger("uvicorn.error").exception("%s %s failed (request %s)", method, path, request_id)
        body = orjson.dumps(payload)
        head = [JSON, (b"content-length", str(len(body)).encode()), (b"x-request-id", request_id.encode("latin-1"))]
        head += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in extra.items()]
        try:
            await send({"type": "http.response.start", "status": status, "headers": head})
            await send({"type": "http.response.body", "body": b"" if method == "HEAD" else body})
        finally:
            client = scope.get("client")
            entry.update(status=status, ms=round((time.monotonic() - start) * 1000, 2),
                         client=f"{client[0]}:{client[1]}" if client else None)
            self._access(entry)

    def _access(self, entry: dict[str, Any]) -> None:
        """Queue the request's access line (stamped as logging's ``asctime``); the first one of a turn schedules
        the write of them all."""
        now = time.time()
        second = int(now)
        if second != self._second[0]:
            self._second = (second, time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(second)))
        self._lines.append(f'{{"time": "{self._second[1]},{int((now - second) * 1000):03d}", "access": '
                           f'{orjson.dumps(entry).decode()}}}')
        if len(self._lines) == 1:
            asyncio.get_running_loop().call_soon(self._write_access)

    def _write_access(self) -> None:
        lines, self._lines = self._lines, []
        self.log.info("\n".join(lines))

    async def _answer(self, request: _Request, method: str, path: str) -> Any:
        token = self.server.token
        if token and path != "/health" and not hmac.compare_digest(
                request.headers.get("authorization", "").encode(), f"Bearer {token}".encode()):
            request.log["error"] = "no or wrong bearer token"
            raise HTTPError(401, "a bearer token is required (Authorization: Bearer ...)", {"WWW-Authenticate": "Bearer"})
        route = self.routes.get(path)
        if route is None:
            raise HTTPError(404, f"no endpoint {path}; this server has {', '.join(self.routes)}")
        allowed, handler = route
        if method != allowed and not (allowed == "GET" and method == "HEAD"):
            raise HTTPError(405, f"{path} takes {allowed}, not {method}", {"Allow": allowed})
        return await handler(request)

    async def _lifespan(self, receive, send) -> None:
        """Start the scoring threads before the first request; after the last one, stop them and close the ensembles."""
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    self.server.start()
                except Exception as exc:
                    await send({"type": "lifespan.startup.failed", "message": f"{type(exc).__name__}: {exc}"})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                self.server.stop()
                await send({"type": "lifespan.shutdown.complete"})
                return


MAX_HEADER_BYTES = 64 * 1024
"""Most bytes of a request line and headers together on httptools (400 and closed past it); h11 stops at 16 KiB."""


def _protocol(header_timeout: float) -> type:
    """uvicorn's HTTP protocol, plus what it lacks: a clock from each request's first byte, and a header timeout.

    uvicorn starts a request when its headers are complete and has no limit
    on how long they may take, so a client sending one header line a second
    holds its connection forever; two hundred of them hold the server.  Here
    a request (and a new connection) must finish its headers within
    ``header_timeout`` seconds of its first byte, or it is answered 408 and
    closed; the first byte's time reaches the app as :data:`FIRST_BYTE`, so
    deadlines count from it.

    The base is uvicorn's httptools protocol where httptools is installed
    (a C parser: about half the server's CPU per one-row request of h11's),
    else its h11 one.
    """
    try:
        import httptools
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as Base
    except ImportError:
        httptools = None
        from uvicorn.protocols.http.h11_impl import H11Protocol as Base

    class Timed(Base):
        _first_byte: float | None = None
        _header_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            self._arm()

        def _arm(self) -> None:
            self._disarm()
            self._header_timer = self.loop.call_later(header_timeout, self._too_slow)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _started(self) -> None:
            """A request's first byte arrived: its clock starts, and its headers' timer if none runs."""
            self._first_byte = time.monotonic()
            if self._header_timer is None:
                self._arm()

        def _headers_done(self, scope: dict) -> None:
            scope[FIRST_BYTE] = self._first_byte or time.monotonic()
            self._first_byte = None
            self._disarm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._first_byte = None

        def connection_lost(self, exc) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _too_slow(self) -> None:  # armed only while a request's headers (or a new connection's) are awaited
            self._header_timer = None
            if self.transport.is_closing():
                return
            message = f"the request's headers did not arrive within {header_timeout:g} s".encode()
            self.transport.write(b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
                                 b"connection: close\r\ncontent-length: " + str(len(message)).encode() +
                                 b"\r\n\r\n" + message)
            self.transport.close()

    if httptools is None:
        import h11

        class Protocol(Timed):
            def data_received(self, data: bytes) -> None:
                if self.conn.their_state is h11.IDLE and self._first_byte is None:
                    self._started()
                super().data_received(data)

            def handle_events(self) -> None:
                before = self.scope if hasattr(self, "scope") else None
                super().handle_events()
                scope = getattr(self, "scope", None)
                if scope is not None and scope is not before:  # a request's headers are complete
                    self._headers_done(scope)

        return Protocol

    class Protocol(Timed):  # type: ignore[no-redef]
        _header_bytes = 0

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._started()
            self._header_bytes = 0

        def on_url(self, url: bytes) -> None:
            self._count(len(url))
            super().on_url(url)

        def on_header(self, name: bytes, value: bytes) -> None:
            self._count(len(name) + len(value))
            super().on_header(name, value)

        def _count(self, n: int) -> None:
            self._header_bytes += n
            if self._header_bytes > MAX_HEADER_BYTES:  # the parser stops; uvicorn answers 400 and closes
                raise httptools.HttpParserError(f"the request's headers are over {MAX_HEADER_BYTES} bytes")

        def on_headers_complete(self) -> None:
            self._headers_done(self.scope)
            super().on_headers_complete()

    return Protocol


def _access_logging() -> None:
    """One JSON object per line on stderr: a record is the lines of one turn of the event loop, already JSON with
    their time, so the format adds nothing around it."""
    log = logging.getLogger(ACCESS_LOG)
    if not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
        log.propagate = False


def listen_socket(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``, or a ``ValueError`` naming both and the cause.

    Bound here rather than by uvicorn, whose failures exit with its own code
    and no clear message, so that a port in use, a host that does not
    resolve or an address this machine lacks stop ``grpo-host serve`` before
    any reward is loaded.
    """
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise UserError(f"port {port!r} is not a TCP port: choose one from 1 to 65535")
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        raise UserError(f"cannot listen on {host}:{port}: the host does not resolve ({exc})") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        raise UserError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.set_inheritable(True)
    return sock


def serve(spec: str, *, host: str = "127.0.0.1", port: int = 8000, settings: ServeSettings | None = None,
          strict: bool = False) -> None:
    """Serve ``spec`` until SIGTERM or SIGINT, then finish the requests in flight and close the ensembles."""
    import uvicorn

    from ..discovery.plugins import default_plugins

    settings = settings or ServeSettings()
    sock = listen_socket(host, port)  # before the ensembles: a bad address costs no reward start-up
    workers = settings.workers or max(1, (os.cpu_count() or 1) // settings.concurrency)
    app = build_app(lambda: Ensemble.from_spec(spec, plugins=default_plugins(), strict=strict, workers=workers,
                                               pool=settings.pool), settings)
    _access_logging()
    config = uvicorn.Config(app, access_log=False, log_level="info", http=_protocol(settings.header_timeout),
                            timeout_graceful_shutdown=settings.deadline + 5, lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])
