"""The HTTP side of ``grpo-host serve``: a plain ASGI app, uvicorn's protocol with a first-byte clock, the access log.

Nothing here knows what is scored: :class:`App` routes requests to the
handlers it is given (:mod:`~grpo_host.serving.endpoints`), answers errors as
JSON, checks the bearer token and starts and stops the :class:`Service`
behind it with uvicorn's lifespan; :func:`timed_protocol` gives uvicorn what
it lacks for deadlines and slow clients; :func:`listen_socket` binds the
address before any reward loads.
"""

from __future__ import annotations

import asyncio
import hmac
import itertools
import logging
import os
import socket
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import Any, Protocol

import orjson

from ..errors import UserError

__all__ = ["ACCESS_LOG", "FIRST_BYTE", "App", "HTTPError", "Handler", "Request", "Service", "access_logging",
           "listen_socket", "timed_protocol"]

ACCESS_LOG = "grpo_host.serving.access"
"""The logger of the access lines (one record per turn of the event loop)."""

FIRST_BYTE = "grpo_host.first_byte"
"""The scope key holding the monotonic time of a request's first byte (set by :func:`timed_protocol`)."""

MAX_HEADER_BYTES = 64 * 1024
"""Most bytes of a request line and headers together on httptools (400 and closed past it); h11 stops at 16 KiB."""

JSON = (b"content-type", b"application/json")


class HTTPError(Exception):
    """An answer other than 200: status, a message for the client, optional headers, and optional fields a
    client reads beside ``error`` in the JSON body (a 413's ``limit`` and ``unit``)."""

    def __init__(self, status: int, message: str, headers: Mapping[str, str] | None = None,
                 fields: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.headers, self.fields = status, message, dict(headers or {}), dict(fields or {})


class Request:
    """What a handler reads of one request: the ASGI scope and receive, the headers, its log entry, its clock."""

    __slots__ = ("scope", "receive", "headers", "log", "start")

    def __init__(self, scope: MutableMapping[str, Any], receive: Callable[[], Awaitable[Any]],
                 headers: dict[str, str], log: dict[str, Any], start: float) -> None:
        self.scope, self.receive, self.headers, self.log, self.start = scope, receive, headers, log, start


Handler = Callable[[Request], Awaitable[Any]]
"""An endpoint: a coroutine function taking the request and returning the JSON payload of a 200 (or raising
:class:`HTTPError`)."""


class Service(Protocol):
    """What the app needs of the server behind it: the bearer token, and to start and stop around the requests."""

    @property
    def token(self) -> str | None: ...

    def start(self) -> None: ...

    def stop(self) -> None: ...


class App:
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

    def __init__(self, service: Service, routes: Mapping[str, tuple[str, Handler]]) -> None:
        self.service, self.routes = service, dict(routes)
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
            payload = await self._answer(Request(scope, receive, headers, entry, start), method, path)
        except HTTPError as exc:
            entry["error"] = exc.message
            status, payload, extra = exc.status, {"error": exc.message, **exc.fields}, exc.headers
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

    async def _answer(self, request: Request, method: str, path: str) -> Any:
        token = self.service.token
        if token and path != "/health" and not hmac.compare_digest(
                request.headers.get("authorization", "").encode(), f"Bearer {token}".encode()):
            request.log["error"] = "no or wrong bearer token"
            raise HTTPError(401, "a bearer token is required (Authorization: Bearer ...)",
                            {"WWW-Authenticate": "Bearer"})
        route = self.routes.get(path)
        if route is None:
            raise HTTPError(404, f"no endpoint {path}; this server has {', '.join(self.routes)}")
        allowed, handler = route
        if method != allowed and not (allowed == "GET" and method == "HEAD"):
            raise HTTPError(405, f"{path} takes {allowed}, not {method}", {"Allow": allowed})
        return await handler(request)

    async def _lifespan(self, receive, send) -> None:
        """Start the service before the first request; after the last one, stop it."""
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    self.service.start()
                except Exception as exc:
                    await send({"type": "lifespan.startup.failed", "message": f"{type(exc).__name__}: {exc}"})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                self.service.stop()
                await send({"type": "lifespan.shutdown.complete"})
                return


def timed_protocol(header_timeout: float) -> type[asyncio.Protocol]:
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
    except ImportError:
        return _h11_protocol(header_timeout)
    return _httptools_protocol(header_timeout, httptools)


class _HeaderClock(asyncio.Protocol):
    """The first-byte clock and the header timer, first among the bases of :func:`timed_protocol`'s classes.

    Each of those sets ``header_timeout`` and calls :meth:`_started` at a request's first byte and
    :meth:`_headers_done` once its headers are complete; uvicorn's protocol, the next base, does the rest.
    """

    header_timeout: float
    loop: asyncio.AbstractEventLoop
    transport: asyncio.Transport
    _first_byte: float | None = None
    _header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self._arm()

    def _arm(self) -> None:
        self._disarm()
        self._header_timer = self.loop.call_later(self.header_timeout, self._too_slow)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _started(self) -> None:
        """A request's first byte arrived: its clock starts, and its headers' timer if none runs."""
        self._first_byte = time.monotonic()
        if self._header_timer is None:
            self._arm()

    def _headers_done(self, scope: MutableMapping[str, Any]) -> None:
        scope[FIRST_BYTE] = self._first_byte or time.monotonic()
        self._first_byte = None
        self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()  # type: ignore[misc]  # uvicorn's protocols have it; asyncio's base does not
        self._first_byte = None

    _draining = False

    def shutdown(self) -> None:
        """On SIGTERM uvicorn closes every connection without a request cycle, and a request whose headers are
        still arriving has none yet: that request was accepted (its first byte is in) and is answered like those
        past their headers, then its connection closes (:meth:`_close_after`).  Idle connections close at once."""
        if self._first_byte is None:
            super().shutdown()  # type: ignore[misc]  # uvicorn's protocols have it; asyncio's base does not
        else:
            self._draining = True

    def _close_after(self) -> None:
        """Called once a request's cycle exists: on a connection draining for shutdown, it is the last one."""
        if self._draining:
            self.cycle.keep_alive = False  # type: ignore[attr-defined]  # uvicorn's protocols have a cycle

    def connection_lost(self, exc) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _too_slow(self) -> None:  # armed only while a request's headers (or a new connection's) are awaited
        self._header_timer = None
        if self.transport.is_closing():
            return
        message = f"the request's headers did not arrive within {self.header_timeout:g} s".encode()
        self.transport.write(b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
                             b"connection: close\r\ncontent-length: " + str(len(message)).encode() +
                             b"\r\n\r\n" + message)
        self.transport.close()


def _h11_protocol(timeout: float) -> type[asyncio.Protocol]:
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class Protocol(_HeaderClock, H11Protocol):
        header_timeout = timeout

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
                self._close_after()

    return Protocol


def _httptools_protocol(timeout: float, httptools: Any) -> type[asyncio.Protocol]:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class Protocol(_HeaderClock, HttpToolsProtocol):
        header_timeout = timeout
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
            self._headers_done(self.scope)  # type: ignore[arg-type]  # ASGI lets a server add keys to the scope
            super().on_headers_complete()
            self._close_after()

    return Protocol


def access_logging() -> None:
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
