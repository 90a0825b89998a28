"""``remote``: a member whose work is done by a ``grpo-host serve`` instance elsewhere.

A TRL or MLX run on a GPU node can send its CPU-heavy member (the code
sandbox, sympy) to a reward server on other machines with one spec entry::

    remote(url="http://rewards:8000", reward="code"):1

It is a batch reward: one ``POST /score`` per batch, the rows as the run has
them (completion, prompt and every column), so the server's own data checks
see the same rows.  A failure is a counted result, never a crash, and never
a silent 0:

* the server is unreachable, times out, answers 5xx or keeps answering 429
  after the retries: every row of the batch scores None and counts
  ``remote/unreachable``;
* the server calls a row bad (a column missing) or its reward failed on it:
  that row scores None and counts ``remote/bad_rows`` or ``remote/row_errors``;
* the server refuses the request itself (401 wrong token, 404 wrong URL, 413
  a batch over its limits, an unknown ``reward``): nothing this run sends
  will ever score, so :class:`~grpo_host.RewardUnusable` stops the run with
  the server's reason.

Completions are sent without their trailing EOS/pad strings (the
``tokenizer``'s, those listed in ``end_tokens``, or by default the common
ones: :mod:`grpo_host.scoring.special_tokens`), so the server's rewards see the
response the model meant whatever the trainer decoded.

The spec's ``[timeout=...]`` bounds the whole call on the host's side (600 s
by default); ``timeout`` bounds each HTTP attempt and is sent to the server
as ``X-Deadline``, so neither side waits for the other past it.  httpx is
imported on the first call: discovering this pack stays light.
"""

from __future__ import annotations

import functools
import json
import os
import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from grpo_host import RewardUnusable, Scored, hookimpl, reward

RETRY_STATUSES = (429, 502, 503, 504)


class RemoteParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(description="the grpo-host serve instance, e.g. http://rewards:8000 (its /score is called)")
    reward: str | None = Field(
        None, description="which of the server's rewards to use; None: the server's weighted total")
    timeout: float = Field(120.0, gt=0, description="seconds each HTTP attempt may take (also sent as X-Deadline)")
    retries: int = Field(2, ge=0, description="further attempts after a connection error, a timeout, 429 or 502-504")
    token_env: str = Field("GRPO_HOST_SERVE_TOKEN", description="environment variable holding the bearer token, if any")
    tokenizer: str | None = Field(None, description="tokenizer (path or hub id) whose EOS/pad strings are stripped "
                                                    "from the end of completions before sending")
    end_tokens: list[str] | None = Field(None, description="strings stripped from the end of completions; None: the "
                                                           "tokenizer's, else the common EOS/pad strings; []: none")


@functools.lru_cache(maxsize=16)
def _end_tokens(tokenizer: str | None, listed: tuple[str, ...] | None) -> tuple[str, ...]:
    from grpo_host import end_tokens

    if listed is not None and not listed and not tokenizer:
        return ()
    try:
        return end_tokens(tokenizer, listed or ())
    except ValueError as exc:
        raise RewardUnusable(f"remote: {exc}") from None


def _endpoint(url: str) -> str:
    url = url.rstrip("/")
    return url if url.endswith("/score") else url + "/score"


def _post(params: RemoteParams, rows: list[dict[str, Any]]) -> dict[str, Any] | str:
    """The server's reply, or why no reply came (a string) after the retries."""
    import httpx

    headers = {"Content-Type": "application/json", "X-Deadline": str(params.timeout)}
    token = os.environ.get(params.token_env)
    if token:
        headers["Authorization"] = f"Bearer {token}"
    try:
        body = json.dumps({"rows": rows})
    except (TypeError, ValueError) as exc:  # a column the run holds that JSON cannot carry
        raise RewardUnusable(f"remote: the rows cannot be sent as JSON ({exc}); drop or convert that column") from None
    url, problem, retry_after = _endpoint(params.url), "", None
    with httpx.Client(timeout=params.timeout) as client:
        for attempt in range(params.retries + 1):
            if attempt:
                time.sleep(min(float(retry_after or 0.5 * 2 ** (attempt - 1)), 5.0))
            retry_after = None
            try:
                reply = client.post(url, content=body, headers=headers)
            except httpx.TransportError as exc:  # refused, reset, timed out
                problem = f"{url}: {type(exc).__name__}: {exc}"
                continue
            if reply.status_code == 200:
                return reply.json()
            reason = _reason(reply)
            if reply.status_code in RETRY_STATUSES or reply.status_code >= 500:
                problem = f"{url} answered {reply.status_code}: {reason}"
                retry_after = reply.headers.get("retry-after")
                retry_after = retry_after if retry_after and retry_after.replace(".", "", 1).isdigit() else None
                continue
            raise RewardUnusable(f"remote: {url} refused the batch with {reply.status_code}: {reason}")
    return problem


def _reason(reply: Any) -> str:
    try:
        return str(reply.json().get("error", reply.text))
    except ValueError:
        return reply.text[:200]


@reward(
    name="remote",
    batch=True,
    params=RemoteParams,
    timeout=600.0,
    description="""The value a grpo-host serve instance at `url` gives each row: its `reward` member, or its
weighted total when `reward` is None. One POST /score per batch with every column of the rows. A server that
cannot be reached (after `retries`), times out or answers 5xx scores the batch None and counts
`unreachable`; a row the server calls bad or failed on scores None and counts `bad_rows` or `row_errors`;
a request the server refuses (wrong token, URL, limits, unknown reward) stops the run. Trailing EOS/pad strings
(`tokenizer`'s, `end_tokens`, else the common ones) are stripped from completions before they are sent.""",
)
def remote(completions: list[str], *, prompts: list[Any], params: RemoteParams, **columns: list[Any]) -> list[Scored]:
    from grpo_host import strip_end_tokens

    tokens = _end_tokens(params.tokenizer, None if params.end_tokens is None else tuple(params.end_tokens))
    rows = [{"completion": strip_end_tokens(c, tokens), "prompt": p, **{k: v[i] for k, v in columns.items()}}
            for i, (c, p) in enumerate(zip(completions, prompts, strict=False))]
    reply = _post(params, rows)
    if isinstance(reply, str):
        return [Scored(None, {"unreachable": 1})] * len(rows)
    results = reply.get("results")
    if not isinstance(results, list) or len(results) != len(rows):
        raise RewardUnusable(f"remote: {params.url} is not a grpo-host serve /score (its reply has no results per row)")
    if params.reward is not None and params.reward not in reply.get("weights", {}):
        raise RewardUnusable(f"remote: {params.url} serves no reward {params.reward!r}; it serves "
                             f"{', '.join(reply.get('weights', {})) or 'none'}")
    out = []
    for line in results:
        if "rewards" not in line:
            out.append(Scored(None, {"bad_rows": 1}))
            continue
        value = line["total"] if params.reward is None else line["rewards"][params.reward]
        out.append(Scored(value, {"row_errors": 1} if "error" in line and value is None else {}))
    return out


@hookimpl
def register_rewards(register):
    register.add_reward(remote)
