"""``grpo-host serve``: one ensemble over HTTP, for trainers that cannot load a grpo-host pack themselves.

OpenRLHF posts to a reward URL (``/get_reward``); verl's and TRL's users
want the code reward's sandbox on another machine than the trainer
(``/score``, the ``remote`` reward).  This module holds what a server is:
its settings (:class:`ServeSettings`, ``grpo-host serve``'s options), the
ensembles and the scoring threads that take every request's rows in
micro-batches, admission counted in rows, and :func:`serve`, which runs
the app on uvicorn.  The HTTP side is :mod:`~grpo_host.serving.http`, the
endpoints :mod:`~grpo_host.serving.endpoints`; docs/scaling.md says what the
server does under load and at the edges, and why.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..batches import score_file_rows
from ..errors import UnscoredRowsError
from ..scoring.ensemble import Ensemble
from ..scoring.special_tokens import COMMON_END_TOKENS
from ..scoring.stats import Tally
from .batching import DEFAULT_MAX_ROWS, DEFAULT_WINDOW, MicroBatcher
from .endpoints import Endpoints
from .http import App, HTTPError, access_logging, listen_socket, timed_protocol

__all__ = ["ServeSettings", "build_app", "serve"]

TOKEN_ENV = "GRPO_HOST_SERVE_TOKEN"


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
    """Where process-executor rewards run (see :data:`grpo_host.scoring.ensemble.POOLS`)."""

    @property
    def openrlhf_tokens(self) -> tuple[str, ...]:
        return COMMON_END_TOKENS if self.end_tokens is None else self.end_tokens


Labelled = Sequence[tuple[str, Any]]
"""Rows with the label their errors name (``"row 3"``: the index in the request)."""


def _score(ensemble: Ensemble, rows: Labelled) -> tuple[Tally, list[dict[str, Any]]]:
    tally = Tally(ensemble.names)
    return tally, list(score_file_rows(rows, ensemble, tally, batch_size=max(len(rows), 1)))


Scored = tuple[Tally | None, list[dict[str, Any]]]


def _score_parts(ensemble: Ensemble, parts: list[Labelled], *, strict: bool = False
                 ) -> Sequence[Scored | UnscoredRowsError]:
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


class Server:
    """The state behind the endpoints: the ensembles behind one micro-batcher, the row counts, the token.

    ``build`` makes an ensemble like the served ones (``/audit`` makes its own with it).
    """

    def __init__(self, build: Callable[[], Ensemble], settings: ServeSettings) -> None:
        self.build, self.settings = build, settings
        self.ensembles = [build() for _ in range(settings.concurrency)]
        self.names = self.ensembles[0].names
        # ``strict`` is the server's to apply, per request (_score_parts): an ensemble raising for a merged
        # micro-batch would fail every request in it for one request's row.
        self.strict = any(e.strict for e in self.ensembles)
        for ensemble in self.ensembles:
            ensemble.strict = False
        self._batcher: MicroBatcher | None = None  # started with the server (lifespan), stopped after the last request
        self.dropped = self.late = 0
        self.token = os.environ.get(settings.token_env) or None

    @property
    def batcher(self) -> MicroBatcher:
        """The scoring threads, from :meth:`start` (the app's lifespan) on."""
        if self._batcher is None:
            raise RuntimeError("the server's scoring threads have not started (no lifespan startup)")
        return self._batcher

    def start(self) -> None:
        self._batcher = MicroBatcher(self.ensembles, functools.partial(_score_parts, strict=self.strict),
                                    window=self.settings.batch_window,
                                    max_rows=self.settings.batch_rows, name="grpo-host-serve")

    def stop(self) -> None:
        if self._batcher is not None:
            self._batcher.close()
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


def build_app(build: Callable[[], Ensemble], settings: ServeSettings | None = None) -> App:
    """The ASGI app serving ensembles made by ``build()`` (called ``concurrency`` times, at once).

    Building them before the first request means an unknown reward or a bad
    parameter stops ``grpo-host serve`` at start, not a trainer's first step.
    """
    server = Server(build, settings or ServeSettings())
    return App(server, Endpoints(server).routes())


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
    access_logging()
    config = uvicorn.Config(app, access_log=False, log_level="info", http=timed_protocol(settings.header_timeout),
                            # uvicorn types it int, and waits it out with asyncio, which takes any seconds
                            timeout_graceful_shutdown=settings.deadline + 5,  # type: ignore[arg-type]
                            lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])
