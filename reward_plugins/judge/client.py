"""Talking to an OpenAI-compatible chat-completions server: concurrency, rate limits, retries, deadline, cache.

This module imports httpx (the ``judge`` extra); the pack's ``__init__``
imports it only when a judgment is made, so listing rewards stays free of an
HTTP stack.

One :class:`JudgeClient` exists per event loop and per server settings
(address, key variable, limits): every judge reward of a run pointed at the
same server with the same limits shares one connection pool, one
concurrency bound and one rate budget, which is what the server's limits
are about.  Per event loop, because an httpx client and its connections
belong to the loop that made them (the ensemble's loop, or TRL's).

A judgment's life:

1. The response cache is asked first; a hit costs no request.
2. Each attempt waits for a free slot (``concurrency``) and for the rate
   budgets (``requests_per_minute``; ``tokens_per_minute``, charged with an
   estimate up front and corrected with the server's reported usage).
3. The ``deadline`` clock starts once the first attempt holds a slot and
   covers the rate waits and every later attempt, backoff sleeps included.
   A server's reported usage is clamped to what the request could have
   used (its prompt's bytes plus ``max_tokens``).  A 429, a 408, a 5xx, a
   timeout or a broken connection is retried after an exponential backoff
   with jitter (a longer ``Retry-After`` wins); any other 4xx fails at once.
   A 401, 403 or 404 means the server, the key or the model name is wrong,
   which no row can get past: it raises :class:`grpo_host.RewardUnusable`.
4. A judgment that gets no reply is a counted failure (None), never a 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import weakref
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx

from grpo_host import RewardUnusable

from .cache import ResponseCache, request_key

__all__ = ["JudgeClient", "Reply", "Tally", "TokenBucket", "client_for"]

log = logging.getLogger("reward_plugins.judge")

RETRY_STATUS = frozenset({408, 409, 429}) | frozenset(range(500, 600))
"""Statuses worth asking again: timeouts, conflicts, rate limits and server errors."""
UNUSABLE_STATUS = frozenset({401, 403, 404})
"""Statuses that say the configuration is wrong (key, permissions, model or path): every row would fail alike."""
POOL_SIZE = 4
"""Connections per httpx pool.  httpcore scans every connection of a pool for each request it places, so one pool
of 256 connections spends more CPU than the requests themselves; pools of 4, each slot bound to one, keep that scan
short (benchmarks/judge.md: about 30 against 150 to 200 requests a second at concurrency 64 on two cores)."""


@dataclass
class Tally:
    """One item's counters, returned with its score as :class:`grpo_host.Scored` counts."""

    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    failures: int = 0
    unparseable: int = 0
    tokens: int = 0

    def counts(self) -> dict[str, float]:
        return {k: float(v) for k, v in vars(self).items()}


@dataclass(frozen=True)
class Reply:
    """A complete reply: the message text, and whether the server stopped it at ``max_tokens``."""

    content: str
    truncated: bool


class TokenBucket:
    """A budget refilled at ``per_minute / 60`` units a second, holding at most one second's worth (at least one
    request's), so a limit is met evenly rather than in a burst at the start of each minute.

    ``acquire(n)`` waits until the bucket holds ``n`` (or is full, for a charge larger than it can hold) and
    takes it; ``adjust(n)`` corrects a charge once the real figure is known, and may leave the bucket in debt.
    """

    def __init__(self, per_minute: float) -> None:
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, self.rate)
        self.level = self.capacity
        self.stamp: float | None = None
        self._lock = asyncio.Lock()

    def _refill(self, now: float) -> None:
        if self.stamp is not None:
            self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
        self.stamp = now

    async def acquire(self, n: float) -> None:
        loop = asyncio.get_running_loop()
        async with self._lock:  # first come, first served: a waiter is not overtaken by later small charges
            need = min(n, self.capacity)
            self._refill(loop.time())
            while self.level < need:
                await asyncio.sleep((need - self.level) / self.rate)
                self._refill(loop.time())
            self.level -= n

    def adjust(self, n: float) -> None:
        self.level -= n


@dataclass
class JudgeClient:
    """Requests to one server under one set of limits (see the module docstring)."""

    settings: Any
    """The first reward's bound parameters: only the fields of :func:`client_for`'s key are read from them."""
    pools: list[httpx.AsyncClient] = field(init=False)
    slots: asyncio.Queue = field(init=False)
    """One entry per request allowed in flight (``concurrency``), each naming the pool it sends through."""
    rpm: TokenBucket | None = field(init=False)
    tpm: TokenBucket | None = field(init=False)
    cache: ResponseCache = field(init=False)
    warned: set[str] = field(default_factory=set, init=False)

    def __post_init__(self) -> None:
        s = self.settings
        tls = httpx.create_ssl_context()  # one for all pools: building one costs milliseconds
        self.pools = [
            httpx.AsyncClient(base_url=s.base_url.rstrip("/") + "/", timeout=httpx.Timeout(s.request_timeout),
                              limits=httpx.Limits(max_connections=POOL_SIZE, max_keepalive_connections=POOL_SIZE),
                              verify=tls)
            for _ in range(-(-s.concurrency // POOL_SIZE))
        ]
        self.slots = asyncio.Queue()
        for i in range(s.concurrency):
            self.slots.put_nowait(self.pools[i % len(self.pools)])
        self.rpm = TokenBucket(s.requests_per_minute) if s.requests_per_minute else None
        self.tpm = TokenBucket(s.tokens_per_minute) if s.tokens_per_minute else None
        self.cache = ResponseCache()

    @contextlib.asynccontextmanager
    async def _slot(self) -> AsyncIterator[httpx.AsyncClient]:
        """Hold one of the ``concurrency`` slots for a request; yields the pool to send it through."""
        http = await self.slots.get()
        try:
            yield http
        finally:
            self.slots.put_nowait(http)

    def _headers(self) -> dict[str, str]:
        name = self.settings.api_key_env
        if name is None:
            return {}
        key = os.environ.get(name, "")
        if not key:
            raise RewardUnusable(f"the judge's API key variable {name} is not set (api_key_env={name!r}); "
                                 f"export {name}=<key> before the run")
        return {"Authorization": f"Bearer {key}"}

    def _warn(self, model: str, kind: str, message: str) -> None:
        """Log a failure kind once per client at warning level (then at debug), so a dead server is one line."""
        level = logging.DEBUG if kind in self.warned else logging.WARNING
        self.warned.add(kind)
        log.log(level, "judge %s at %s: %s", model, self.settings.base_url, message)

    async def complete(self, s: Any, messages: list[dict[str, str]], tally: Tally) -> Reply | None:
        """The judge's reply to ``messages`` under the reward's settings ``s`` (model, sampling, retries, deadline),
        from the cache or the server; None (counted) when none came."""
        request = {"model": s.model, "messages": messages, "temperature": s.temperature,
                   "max_tokens": s.max_tokens, **s.extra_body}
        key = request_key({"base_url": s.base_url, **request})
        headers = self._headers()  # before the cache: a missing key is reported on every run, not on the first miss
        if s.cache and (hit := self.cache.get(key)) is not None:
            tally.cache_hits += 1
            return Reply(hit["content"], hit["truncated"])
        estimate = sum(len(m["content"]) for m in messages) / 4 + s.max_tokens
        loop = asyncio.get_running_loop()
        attempt = 0
        try:
            async with asyncio.timeout(None) as deadline:
                while True:
                    async with self._slot() as http:
                        if attempt == 0:  # the rate waits count: a budget in debt cannot hold a judgment forever
                            deadline.reschedule(loop.time() + s.deadline)
                        if self.rpm is not None:
                            await self.rpm.acquire(1)
                        if self.tpm is not None:
                            await self.tpm.acquire(estimate)
                        tally.calls += 1
                        outcome, detail, wait = await self._attempt(http, request, headers, estimate, tally)
                    if outcome == "ok":
                        if s.cache:
                            self.cache.put(key, {"content": detail.content, "truncated": detail.truncated})
                        return detail
                    if outcome == "retry" and attempt < s.retries:
                        attempt += 1
                        tally.retries += 1
                        delay = min(s.max_backoff, s.backoff * 2 ** (attempt - 1))
                        await asyncio.sleep(max(delay / 2 + random.uniform(0, delay / 2), wait))
                        continue
                    tally.failures += 1
                    self._warn(s.model, detail.split(":")[0],
                               f"{detail} (after {attempt} retries); the judgment scores None")
                    return None
        except TimeoutError:
            tally.failures += 1
            self._warn(s.model, "deadline", f"no reply within the deadline of {s.deadline:g} s ({attempt} retries); "
                                   "the judgment scores None")
            return None

    async def _attempt(self, http: httpx.AsyncClient, request: dict[str, Any], headers: dict[str, str],
                       estimate: float, tally: Tally) -> tuple[str, Any, float]:
        """One request: ``("ok", Reply, 0)``, ``("retry", reason, retry_after)`` or ``("fail", reason, 0)``."""
        try:
            response = await http.post("chat/completions", json=request, headers=headers)
        except httpx.TimeoutException:
            return "retry", f"no reply within request_timeout={self.settings.request_timeout:g} s", 0.0
        except httpx.RequestError as exc:  # a refused or dropped connection, a protocol or decoding error
            return "retry", f"{type(exc).__name__}: {exc}", 0.0
        status = response.status_code
        if status in UNUSABLE_STATUS:
            raise RewardUnusable(
                f"the judge server at {self.settings.base_url} answered {status} for model {request['model']!r}: "
                f"{response.text[:300]!r}; check base_url, model and api_key_env"
            )
        if status != 200:
            reason = f"HTTP {status}: {response.text[:200]!r}"
            return ("retry" if status in RETRY_STATUS else "fail"), reason, _retry_after(response)
        try:
            body = response.json()
            choice = body["choices"][0]
            content = choice["message"].get("content") or ""
            if not isinstance(content, str):
                raise TypeError("content is not text")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            return "retry", f"a reply that is not a chat completion: {response.text[:200]!r}", 0.0
        usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
        tokens = usage.get("total_tokens")
        if not isinstance(tokens, int) or isinstance(tokens, bool):
            tokens = int(sum(len(m["content"]) for m in request["messages"]) / 4 + len(content) / 4)
        tokens = min(max(tokens, 0), _most_tokens(request))
        tally.tokens += tokens
        if self.tpm is not None:
            self.tpm.adjust(tokens - estimate)
        return "ok", Reply(content, choice.get("finish_reason") == "length"), 0.0


MESSAGE_OVERHEAD = 16
"""Tokens a chat template may add per message (role markers, separators); generous, so no honest count is cut."""


def _most_tokens(request: dict[str, Any]) -> int:
    """The most tokens ``request`` could have used: a token holds at least one byte of the prompt, plus the
    template's markers and the reply's ``max_tokens``.  A server's usage claim is clamped to this, so a reply
    claiming 10^12 tokens cannot put the token budget in a debt that stalls every later request."""
    limit = request.get("max_tokens")
    reply = limit if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0 else 0
    prompt = sum(len(str(m.get("content", "")).encode("utf-8", "surrogatepass")) + MESSAGE_OVERHEAD
                 for m in request["messages"])
    return prompt + reply


def _retry_after(response: httpx.Response) -> float:
    """The server's ``Retry-After`` in seconds (the numeric form), or 0."""
    try:
        return max(0.0, float(response.headers.get("retry-after", "")))
    except ValueError:
        return 0.0


_CLIENTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple, JudgeClient]] = weakref.WeakKeyDictionary()


def client_for(settings: Any) -> JudgeClient:
    """The running loop's client for these server settings, made on first use."""
    loop = asyncio.get_running_loop()
    key = (settings.base_url, settings.api_key_env, settings.concurrency, settings.requests_per_minute,
           settings.tokens_per_minute, settings.request_timeout)
    clients = _CLIENTS.setdefault(loop, {})
    client = clients.get(key)
    if client is None:
        client = clients[key] = JudgeClient(settings)
    return client
