"""``grpo-host eval``'s client of an OpenAI-compatible endpoint: one for plain completions and for episodes.

Why it is one small class: a plain evaluation asks for one completion per
sample, an environment's episode asks for one chat turn at a time; both need
the same things of the endpoint (the served model's name, the bearer key,
the sampling options, the retries of 429, 5xx and dropped connections, an
error naming the route and the endpoint's answer otherwise), so they share
:class:`Endpoint` rather than each writing its own HTTP client.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import UserError

if TYPE_CHECKING:
    from .evaluate import EvalSettings

__all__ = ["RETRIES", "Endpoint"]

RETRIES = 4
"""Attempts past the first for a request an endpoint answers 429 or 5xx, or drops."""


class Endpoint:
    """An OpenAI-compatible base URL with the evaluation's model name, key and sampling.

    :raises UserError: httpx is not installed, or the endpoint cannot list its models and none was named.
    """

    def __init__(self, url: str, s: EvalSettings) -> None:
        try:
            import httpx
        except ImportError:
            raise UserError("httpx is not installed: an endpoint needs pip install 'grpo-host[serve]'") from None
        self.httpx, self.url, self.settings = httpx, url, s
        key = os.environ.get(s.api_key_env)
        self.headers = {"Authorization": f"Bearer {key}"} if key else {}
        self.model = s.served_model or self._served_model()

    def _served_model(self) -> str:
        httpx = self.httpx
        try:
            response = httpx.get(f"{self.url}/models", headers=self.headers, timeout=30)
            response.raise_for_status()
            return str(response.json()["data"][0]["id"])
        except (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError) as exc:
            raise UserError(f"endpoint {self.url}: cannot list its models at {self.url}/models ({exc}); name the "
                            "model with --served-model") from None

    def client(self) -> Any:
        """An ``httpx.AsyncClient`` for one batch, with ``--concurrency`` connections."""
        limits = self.httpx.Limits(max_connections=self.settings.concurrency)
        return self.httpx.AsyncClient(timeout=self.httpx.Timeout(600.0), limits=limits)

    def body(self, seed: int, max_tokens: int | None) -> dict[str, Any]:
        """A request's sampling: one sample (``n: 1``) with its own seed; vLLM's ``top_k``/``min_p`` only when set."""
        s = self.settings
        body: dict[str, Any] = {"model": self.model, "max_tokens": max_tokens, "temperature": s.temperature,
                                "top_p": s.top_p, "seed": seed, "n": 1}
        if s.top_k:
            body["top_k"] = s.top_k
        if s.min_p:
            body["min_p"] = s.min_p
        return body

    async def post(self, client: Any, route: str, body: Mapping[str, Any]) -> Any:
        """POST ``body`` to ``route`` and return the answer's JSON; 429, 5xx and dropped connections are retried
        :data:`RETRIES` times with backoff, anything else is a :class:`UserError` with the endpoint's answer."""
        httpx = self.httpx
        for attempt in range(RETRIES + 1):
            try:
                response = await client.post(f"{self.url}/{route}", json=body, headers=self.headers)
            except httpx.TransportError as exc:
                problem = f"{type(exc).__name__}: {exc}"
            else:
                if response.status_code == 200:
                    try:
                        return response.json()
                    except ValueError as exc:
                        raise UserError(f"endpoint {self.url}: an answer that is not JSON ({exc})") from None
                problem = f"HTTP {response.status_code}: {' '.join(response.text[:200].split())}"  # one line
                if response.status_code != 429 and response.status_code < 500:
                    break
            if attempt < RETRIES:
                await asyncio.sleep(0.5 * 2 ** attempt)
        raise UserError(f"endpoint {self.url}/{route}: {problem}")
