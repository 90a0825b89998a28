"""``grpo-host serve``: one ensemble over HTTP, for trainers that cannot load a grpo-host pack themselves.

OpenRLHF posts batches to a reward URL; verl's and TRL's users want the code
reward's sandbox on another machine than the trainer.  Both are served by one
ASGI app (Starlette, run by uvicorn) around one spec:

* ``POST /get_reward``: OpenRLHF's remote reward protocol as its client sends
  it, ``{"query", "prompts", "labels"}`` in, ``{"rewards", "scores",
  "extra_logs"}`` out (see :func:`openrlhf_rows`);
* ``POST /score``: ``{"rows": [...]}`` in, the summary ``grpo-host score
  --json`` prints plus ``results``, one line per row exactly as ``grpo-host
  score --out`` writes them: both come from :func:`grpo_host.offline.score_file_rows`,
  so a row lacking a column a reward needs is a bad row named by its index
  (``"row 3"``, 0-based in the request's list), never a failed request;
* ``POST /check``: ``{"rows": [...]}`` in, the report ``grpo-host data check
  --json`` prints (:func:`grpo_host.data.check_rows`, row checks included);
* ``GET /rewards``: the served members with weights and parameters;
* ``GET /health``: liveness and load, for load balancers (never behind the token).

Scoring is synchronous CPU work (and an :class:`~grpo_host.Ensemble` serves
one caller at a time), so the server keeps ``concurrency`` ensembles and runs
each request's scoring on a thread of its own holding one of them, off the
event loop.  What a production reward service must do on top:

* **Back-pressure, not a queue that grows:** at most ``concurrency`` requests
  score and ``backlog`` more wait for an ensemble; the next is answered 429
  with ``Retry-After`` at once, so a client (or a load balancer) retries
  elsewhere instead of piling on.
* **Deadlines:** a request is answered within ``deadline`` seconds (a client
  may ask for less with ``X-Deadline: SECONDS``), with 504 past it.  A thread
  cannot be killed, so the late scoring runs on and its ensemble comes back
  when it ends; its slot stays taken until then, so back-pressure still tells
  the truth.  Per-item timeouts (the spec's) bound that time.
* **Size limits:** a body over ``max_body`` bytes is 413 (the stream is cut,
  whatever Content-Length says); a batch over ``max_rows`` rows is 413.
* **A bearer token** from an environment variable (``GRPO_HOST_SERVE_TOKEN``
  by default): when it is set, every endpoint but ``/health`` needs
  ``Authorization: Bearer <token>``.
* **Graceful shutdown:** on SIGTERM or SIGINT uvicorn stops accepting,
  requests in flight finish and are answered, then the ensembles close.
* **Structured access logs:** one JSON object per request on stderr (method,
  path, status, milliseconds, rows, bad and failed rows, client, request id).
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import os
import sys
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from .catalog import reward_row
from .data import check_rows
from .ensemble import Ensemble
from .offline import Tally, score_file_rows

__all__ = ["ServeSettings", "build_app", "openrlhf_rows", "serve"]

TOKEN_ENV = "GRPO_HOST_SERVE_TOKEN"
ACCESS_LOG = "grpo_host.serve.access"


@dataclass
class ServeSettings:
    """How one server behaves; ``grpo-host serve``'s options, one field each."""

    concurrency: int = field(default_factory=lambda: max(1, min(4, os.cpu_count() or 1)))
    """Requests scored at once (one ensemble and one thread each)."""
    backlog: int = 16
    """Requests that may wait for a free ensemble; past ``concurrency + backlog`` the answer is 429."""
    deadline: float = 120.0
    """Seconds within which a request is answered (504 past it); ``X-Deadline`` may only shorten it."""
    max_body: int = 32 * 1024 * 1024
    """Largest request body in bytes (413 past it)."""
    max_rows: int = 8192
    """Most rows in one request (413 past it)."""
    token_env: str = TOKEN_ENV
    """The environment variable holding the bearer token; unset or empty: no token needed."""
    workers: int | None = None
    """Worker processes per ensemble for process-executor rewards (default: the cores shared out)."""
    pool: str = "local"
    """Where process-executor rewards run (see :data:`grpo_host.ensemble.POOLS`)."""


class HTTPError(Exception):
    """An answer other than 200: status, a message for the client, optional headers."""

    def __init__(self, status: int, message: str, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.headers = status, message, dict(headers or {})


def openrlhf_rows(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Rows from OpenRLHF's remote-reward request: ``query`` is prompt plus response as text.

    The completion is the query with its prompt taken off the front (the
    whole query when it does not start with the prompt, as when OpenRLHF
    sends no ``prompts``); ``labels`` become the ``answer`` column.  Other
    keys OpenRLHF may add (``metas``) are ignored.
    """
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
        row: dict[str, Any] = {"completion": completion, "prompt": prompt}
        if label is not None:
            row["answer"] = label if isinstance(label, str) else json.dumps(label)
        rows.append(row)
    return rows


class _Server:
    """The state behind the endpoints: the ensembles, the admission count, the token."""

    def __init__(self, build: Callable[[], Ensemble], settings: ServeSettings) -> None:
        self.settings = settings
        self.ensembles = [build() for _ in range(settings.concurrency)]
        self.names = self.ensembles[0].names
        self.executor = ThreadPoolExecutor(settings.concurrency, thread_name_prefix="grpo-host-serve")
        self.free: asyncio.Queue[Ensemble] | None = None  # made on the server's event loop, at start-up
        self.waiting = 0
        self.token = os.environ.get(settings.token_env) or None

    async def start(self) -> None:
        self.free = asyncio.Queue()
        for ensemble in self.ensembles:
            self.free.put_nowait(ensemble)

    @property
    def busy(self) -> int:
        """Ensembles scoring now, late batches of requests already answered 504 included."""
        return self.settings.concurrency - self.free.qsize()

    def stop(self) -> None:
        self.executor.shutdown(wait=True)
        for ensemble in self.ensembles:
            ensemble.close()

    async def run(self, deadline: float, job: Callable[[Ensemble], Any]) -> Any:
        """Run ``job(ensemble)`` on a thread with an ensemble of its own, within admission and the deadline."""
        if self.busy + self.waiting >= self.settings.concurrency + self.settings.backlog:
            raise HTTPError(429, f"busy: {self.busy} requests scoring and {self.waiting} waiting; retry later or "
                            "elsewhere", {"Retry-After": "1"})
        loop = asyncio.get_running_loop()
        self.waiting += 1
        try:
            ensemble = await asyncio.wait_for(self.free.get(), max(deadline - time.monotonic(), 0))
        except TimeoutError:
            raise HTTPError(504, "the deadline passed while waiting for a free ensemble") from None
        finally:
            self.waiting -= 1
        def work() -> Any:
            try:
                return job(ensemble)
            finally:  # a late job gives its ensemble back only when it ends: its slot is busy until then
                loop.call_soon_threadsafe(self.free.put_nowait, ensemble)

        future = loop.run_in_executor(self.executor, work)
        try:
            return await asyncio.wait_for(asyncio.shield(future), max(deadline - time.monotonic(), 0))
        except TimeoutError:
            future.add_done_callback(lambda f: f.exception())  # retrieved: no "never retrieved" warning
            raise HTTPError(504, "the deadline passed while scoring; the batch was not scored in time") from None


def _score(ensemble: Ensemble, rows: Sequence[Any]) -> tuple[Tally, list[dict[str, Any]]]:
    tally = Tally(ensemble.names)
    lines = list(score_file_rows(((f"row {i}", raw) for i, raw in enumerate(rows)), ensemble, tally,
                                 batch_size=max(len(rows), 1)))
    return tally, lines


def _summary(ensemble: Ensemble, tally: Tally) -> dict[str, Any]:
    """The object ``grpo-host score --json`` prints."""
    return {"rows": tally.rows, "scored": tally.rows - tally.bad, "bad_rows": tally.bad,
            "failed_rows": tally.failed, "unscored": tally.unscored, "rewards": tally.per_reward(),
            "weights": dict(zip(ensemble.names, ensemble.weights))}


def build_app(build: Callable[[], Ensemble], settings: ServeSettings | None = None):
    """The ASGI app serving ensembles made by ``build()`` (called ``concurrency`` times, at once).

    Building them before the first request means an unknown reward or a bad
    parameter stops ``grpo-host serve`` at start, not a trainer's first step.
    """
    from starlette.applications import Starlette
    from starlette.requests import ClientDisconnect, Request
    from starlette.responses import Response
    from starlette.routing import Route

    settings = settings or ServeSettings()
    server = _Server(build, settings)
    members = server.ensembles[0].members

    def reply(payload: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> Response:
        import orjson

        return Response(orjson.dumps(payload), status, headers=dict(headers or {}), media_type="application/json")

    def deadline_of(request: Request) -> float:
        seconds = settings.deadline
        asked = request.headers.get("x-deadline")
        if asked is not None:
            try:
                seconds = min(seconds, float(asked))
            except ValueError:
                raise HTTPError(422, f"X-Deadline must be a number of seconds, got {asked!r}") from None
        return request.scope["grpo_host.start"] + seconds

    async def read_json(request: Request) -> Any:
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > settings.max_body:
            raise HTTPError(413, f"the body is {declared} bytes; this server takes at most {settings.max_body}")
        chunks, size = [], 0
        try:
            async for chunk in request.stream():
                size += len(chunk)
                if size > settings.max_body:
                    raise HTTPError(413, f"the body is over {settings.max_body} bytes, this server's limit")
                chunks.append(chunk)
        except ClientDisconnect:
            raise HTTPError(400, "the client went away before sending the whole body") from None
        try:
            return json.loads(b"".join(chunks))
        except ValueError as exc:
            raise HTTPError(400, f"the body is not JSON: {exc}") from None

    def take_rows(request: Request, rows: Any) -> list[Any]:
        if not isinstance(rows, list):
            raise HTTPError(422, "'rows' must be a list of row objects")
        if len(rows) > settings.max_rows:
            raise HTTPError(413, f"{len(rows)} rows; this server takes at most {settings.max_rows} per request")
        request.scope["grpo_host.log"]["rows"] = len(rows)
        return rows

    def note(request: Request, tally: Tally) -> None:
        request.scope["grpo_host.log"].update(bad_rows=tally.bad, failed_rows=tally.failed)

    async def score(request: Request) -> Response:
        body = await read_json(request)
        rows = take_rows(request, body.get("rows") if isinstance(body, dict) else None)
        tally, lines = await server.run(deadline_of(request), lambda e: _score(e, rows))
        note(request, tally)
        return reply({**_summary(server.ensembles[0], tally), "results": lines})

    async def get_reward(request: Request) -> Response:
        body = await read_json(request)
        if not isinstance(body, dict):
            raise HTTPError(422, "the body must be an object with 'query', 'prompts' and 'labels'")
        rows = take_rows(request, openrlhf_rows(body))
        tally, lines = await server.run(deadline_of(request), lambda e: _score(e, rows))
        note(request, tally)
        # OpenRLHF turns every list into a tensor: a row no reward scored (or a bad row) is 0.0 there, and
        # ``grpo_host/scored`` says which rows those were; the reasons are in this server's access log.
        rewards = [line.get("total") or 0.0 for line in lines]
        extra: dict[str, list[float]] = {
            name: [(line.get("rewards") or {}).get(name) or 0.0 for line in lines] for name in server.names}
        extra["grpo_host/scored"] = [float(line.get("total") is not None) for line in lines]
        errors = [f"{line['row']}: {line['error']}" for line in lines if "error" in line]
        if errors:
            request.scope["grpo_host.log"]["errors"] = errors[:5]
        return reply({"rewards": rewards, "scores": rewards, "extra_logs": extra})

    async def check(request: Request) -> Response:
        body = await read_json(request)
        rows = take_rows(request, body.get("rows") if isinstance(body, dict) else None)
        rewards = [m.reward for m in members]
        report = await server.run(deadline_of(request), lambda _: check_rows(
            ((f"row {i}", raw) for i, raw in enumerate(rows)), rewards, extra_columns=("completion",)))
        return reply(report.as_dict())

    async def listing(request: Request) -> Response:
        return reply([{**reward_row(m.reward), "weight": m.weight, "on_error": m.on_error, "timeout": m.timeout,
                       "bound": m.reward.bound.model_dump() if m.reward.bound is not None else None}
                      for m in members])

    async def health(request: Request) -> Response:
        return reply({"status": "ok", "rewards": server.names, "concurrency": settings.concurrency,
                      "backlog": settings.backlog, "scoring": server.busy, "waiting": server.waiting})

    async def http_error(request: Request, exc: HTTPError) -> Response:
        request.scope["grpo_host.log"]["error"] = exc.message
        return reply({"error": exc.message}, exc.status, exc.headers)

    async def crash(request: Request, exc: Exception) -> Response:
        """A broken reward (:class:`~grpo_host.RewardError`) or a bug here: the client hears why, as JSON."""
        request.scope["grpo_host.log"]["error"] = message = f"{type(exc).__name__}: {exc}"
        return reply({"error": message}, 500)

    @asynccontextmanager
    async def lifespan(app):
        await server.start()
        yield
        server.stop()

    app = Starlette(routes=[
        Route("/get_reward", get_reward, methods=["POST"]),
        Route("/score", score, methods=["POST"]),
        Route("/check", check, methods=["POST"]),
        Route("/rewards", listing, methods=["GET"]),
        Route("/health", health, methods=["GET"]),
    ], lifespan=lifespan, exception_handlers={HTTPError: http_error, Exception: crash})
    return _Edge(app, server, reply)


class _Edge:
    """ASGI middleware outside the app: the access log line (whatever the answer) and the bearer token."""

    def __init__(self, app: Any, server: _Server, reply: Callable[..., Any]) -> None:
        self.app, self.server, self.reply = app, server, reply
        self.log = logging.getLogger(ACCESS_LOG)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        start = time.monotonic()
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        request_id = headers.get("x-request-id") or uuid.uuid4().hex
        entry: dict[str, Any] = {"method": scope["method"], "path": scope["path"], "request_id": request_id}
        scope["grpo_host.start"], scope["grpo_host.log"] = start, entry
        status: list[int | None] = [None]

        async def send_logged(message) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
                message.setdefault("headers", []).append((b"x-request-id", request_id.encode("latin-1")))
            await send(message)

        try:
            token = self.server.token
            if token and scope["path"] != "/health" and not hmac.compare_digest(
                    headers.get("authorization", "").encode(), f"Bearer {token}".encode()):
                entry["error"] = "no or wrong bearer token"
                await self.reply({"error": "a bearer token is required (Authorization: Bearer ...)"}, 401,
                                 {"WWW-Authenticate": "Bearer"})(scope, receive, send_logged)
                return
            try:
                await self.app(scope, receive, send_logged)
            except Exception:  # Starlette answered 500 already (``crash``) and re-raises so that servers log it
                if status[0] is None:
                    raise
        finally:
            client = scope.get("client")
            entry.update(status=status[0], ms=round((time.monotonic() - start) * 1000, 2),
                         client=f"{client[0]}:{client[1]}" if client else None)
            self.log.info(json.dumps(entry))


def _access_logging() -> None:
    """One JSON object per line on stderr: the message is already JSON, so the format adds nothing around it."""
    log = logging.getLogger(ACCESS_LOG)
    if not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter('{"time": "%(asctime)s", "access": %(message)s}'))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
        log.propagate = False


def serve(spec: str, *, host: str = "127.0.0.1", port: int = 8000, settings: ServeSettings | None = None,
          strict: bool = False) -> None:
    """Serve ``spec`` until SIGTERM or SIGINT, then finish the requests in flight and close the ensembles."""
    import uvicorn

    settings = settings or ServeSettings()
    workers = settings.workers or max(1, (os.cpu_count() or 1) // settings.concurrency)
    app = build_app(lambda: Ensemble.from_spec(spec, strict=strict, workers=workers, pool=settings.pool), settings)
    _access_logging()
    config = uvicorn.Config(app, host=host, port=port, access_log=False, log_level="info",
                            timeout_graceful_shutdown=settings.deadline + 5, lifespan="on")
    uvicorn.Server(config).run()
