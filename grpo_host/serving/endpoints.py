"""What ``grpo-host serve`` answers: one method of :class:`Endpoints` per endpoint, and OpenRLHF's request format.

Each endpoint reads its JSON body within the request's deadline, hands the
rows to the server's scoring threads (``/score``, ``/get_reward``, ``/verify``) or to a
thread of its own (``/check``, ``/audit``) and returns the payload of a 200;
anything else is an :class:`~grpo_host.serving.http.HTTPError`.  What each
takes and answers, and why, is in docs/scaling.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from ..data import check_rows
from ..discovery.catalog import reward_row
from ..scoring.special_tokens import strip_end_tokens
from ..scoring.stats import Tally
from . import nemo_gym
from .batching import chunks
from .http import Handler, HTTPError, Request

if TYPE_CHECKING:  # the server builds the endpoints (build_app); at run time this module never imports it
    from .server import Server

__all__ = ["Endpoints", "openrlhf_rows"]


def openrlhf_rows(body: Mapping[str, Any], end_tokens: Sequence[str] = (), *, tests: bool = False
                  ) -> list[dict[str, Any]]:
    """Rows from OpenRLHF's remote-reward request: ``query`` is prompt plus response as text.

    The completion is the query with its prompt taken off the front (the
    whole query when it does not start with the prompt, as when OpenRLHF
    sends no ``prompts``) and the trailing ``end_tokens`` off the back;
    ``labels`` become the ``answer`` column, and with ``tests`` (a served
    reward reads that column) a label holding prime_code JSON becomes the
    ``tests`` column too (:func:`~grpo_host.data.prime_code_tests`).
    Other keys OpenRLHF may add (``metas``) are ignored.
    """
    from ..data import prime_code_tests

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
    for query, prompt, label in zip(queries, prompts, labels, strict=True):
        completion = query[len(prompt):] if isinstance(prompt, str) and prompt and query.startswith(prompt) else query
        row: dict[str, Any] = {"completion": strip_end_tokens(completion, end_tokens), "prompt": prompt}
        if label is not None:
            row["answer"] = label if isinstance(label, str) else json.dumps(label)
            if tests and (cases := prime_code_tests(label)) is not None:
                row["tests"] = cases
        rows.append(row)
    return rows


async def _wait(futures: list[Future], deadline: float) -> None:
    """Wait for ``futures`` until ``deadline``; the ones not taken yet are cancelled (and so never scored)."""
    wrapped = [asyncio.wrap_future(f) for f in futures]
    left = deadline - time.monotonic()
    if wrapped and left > 0:
        await asyncio.wait(wrapped, timeout=left)
    for future, outer in zip(futures, wrapped, strict=True):
        if not future.done():
            future.cancel()
            outer.add_done_callback(lambda f: f.cancelled() or f.exception())  # retrieved: no "never retrieved"


async def _wait_async(futures: list[asyncio.Future], deadline: float) -> None:
    """:func:`_wait` for the asyncio futures of :meth:`~grpo_host.serving.batching.MicroBatcher.submit_async`."""
    try:
        async with asyncio.timeout(max(deadline - time.monotonic(), 0)):
            for future in futures:
                with contextlib.suppress(Exception):  # the caller reads it from the future
                    await future
    except TimeoutError:
        pass
    for future in futures:
        future.cancel()  # nothing for a done one; one not taken yet is dropped unscored


class Endpoints:
    """The endpoints of one server: each method takes the :class:`~grpo_host.serving.http.Request` and returns the
    JSON payload of a 200 (see :meth:`routes`)."""

    def __init__(self, server: Server) -> None:
        self.server, self.settings = server, server.settings
        self.members = server.ensembles[0].members
        self.reads_tests = any("tests" in col.names for m in self.members for col in m.reward.requires)
        self.score_tokens = self.settings.end_tokens or ()

    def routes(self) -> dict[str, tuple[str, Handler]]:
        """Path -> (method, handler), in the order a 404 lists them."""
        return {"/get_reward": ("POST", self.get_reward), "/score": ("POST", self.score),
                "/verify": ("POST", self.verify), "/check": ("POST", self.check), "/audit": ("POST", self.audit),
                "/rewards": ("GET", self.listing), "/health": ("GET", self.health)}

    def deadline_of(self, request: Request) -> tuple[float, float]:
        """(seconds granted, the monotonic time they end), counted from the request's first byte."""
        seconds = self.settings.deadline
        asked = request.headers.get("x-deadline")
        if asked is not None:
            try:
                seconds = min(seconds, float(asked))
            except ValueError:
                raise HTTPError(422, f"X-Deadline must be a number of seconds, got {asked!r}") from None
            if not seconds > 0:
                raise HTTPError(422, f"X-Deadline must be a positive number of seconds, got {asked!r}")
        return seconds, request.start + seconds

    async def read_json(self, request: Request) -> Any:
        max_body = self.settings.max_body
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > max_body:
            raise self.too_big(f"the body is {declared} bytes")
        seconds, deadline = self.deadline_of(request)
        body_ends = time.monotonic() + self.settings.body_timeout
        chunks_, size = [], 0
        try:
            async with asyncio.timeout(max(min(deadline, body_ends) - time.monotonic(), 0)):
                while True:
                    message = await request.receive()
                    if message["type"] == "http.disconnect":
                        raise HTTPError(400, "the client went away before sending the whole body")
                    chunk = message.get("body", b"")
                    size += len(chunk)
                    if size > max_body:
                        raise self.too_big(f"the body is over {max_body} bytes (the stream was cut there)")
                    chunks_.append(chunk)
                    if not message.get("more_body"):
                        break
        except TimeoutError:
            if deadline <= body_ends:
                raise HTTPError(504, f"the deadline ({seconds:g} s from the request's first byte) passed while "
                                f"reading the request body ({size} bytes received)") from None
            raise HTTPError(408, f"the body did not arrive within {self.settings.body_timeout:g} s ({size} bytes "
                            "received)", {"Connection": "close"}) from None
        try:
            return json.loads(b"".join(chunks_))
        except RecursionError:
            raise HTTPError(400, "the body is nested too deeply to read as JSON") from None
        except ValueError as exc:
            raise HTTPError(400, f"the body is not JSON: {exc}") from None

    def too_big(self, what: str) -> HTTPError:
        """The 413 for a body over ``--max-body-mb``: what was sent, the limit in bytes, and how to raise it."""
        limit = self.settings.max_body
        return HTTPError(413, f"{what}; this server takes at most {limit} bytes per request (--max-body-mb "
                         f"{limit / 2**20:.4g}): send fewer rows per request, or start the server with a larger "
                         "--max-body-mb", fields={"limit": limit, "unit": "bytes"})

    def count_rows(self, n: int) -> None:
        """The 413 for more rows than ``--max-rows``, checked before any row is read: the limit, and how to
        raise it."""
        limit = self.settings.max_rows
        if n > limit:
            raise HTTPError(413, f"{n} rows; this server takes at most {limit} rows per request (--max-rows "
                            f"{limit}): split the request, or start the server with a larger --max-rows",
                            fields={"limit": limit, "unit": "rows"})

    def take_rows(self, request: Request, rows: Any) -> list[Any]:
        if not isinstance(rows, list):
            raise HTTPError(422, "'rows' must be a list of row objects")
        self.count_rows(len(rows))
        request.log["rows"] = len(rows)
        return rows

    @staticmethod
    def note(request: Request, lines: list[dict[str, Any]]) -> None:
        request.log.update(bad_rows=sum("rewards" not in line for line in lines),
                           failed_rows=sum("rewards" in line and "error" in line for line in lines))

    async def score(self, request: Request) -> Any:
        server = self.server
        body = await self.read_json(request)
        raw = self.take_rows(request, body.get("rows") if isinstance(body, dict) else None)
        seconds, deadline = self.deadline_of(request)
        if not raw:
            tally, lines = Tally(server.names), []
        else:
            if not server.room(len(raw)):
                raise server.busy(len(raw))
            if self.score_tokens:
                raw = [{**r, "completion": strip_end_tokens(r["completion"], self.score_tokens)}
                       if isinstance(r, dict) and isinstance(r.get("completion"), str) else r for r in raw]
            future = server.batcher.submit([(f"row {i}", r) for i, r in enumerate(raw)], alone=True)
            await _wait([future], deadline)
            if future.cancelled() or not future.done():
                waited = "while this batch was scored" if future.running() else "before a scoring thread was free"
                raise HTTPError(504, f"the deadline ({seconds:g} s from the request's first byte) passed {waited}")
            tally, lines = future.result()
        self.note(request, lines)
        return {**tally.summary(server.ensembles[0]), "results": lines}

    async def get_reward(self, request: Request) -> Any:
        """OpenRLHF's remote reward: its rows merged with other requests' into micro-batches; every row gets a
        number, a row not taken for want of room (dropped) or not scored in time (late) 0.0, counted."""
        server = self.server
        body = await self.read_json(request)
        if not isinstance(body, dict):
            raise HTTPError(422, "the body must be an object with 'query', 'prompts' and 'labels'")
        if isinstance(body.get("query"), list):  # over the limit is 413 before any query is read
            self.count_rows(len(body["query"]))
        rows = self.take_rows(request, openrlhf_rows(body, self.settings.openrlhf_tokens, tests=self.reads_tests))
        _, deadline = self.deadline_of(request)
        labelled = [(f"row {i}", row) for i, row in enumerate(rows)]
        parts = list(chunks(labelled, self.settings.batch_rows)) if rows else []
        futures: list[asyncio.Future | None] = []
        for part in parts:  # a part the queue has no room for is not scored: its rows count as dropped
            futures.append(server.batcher.submit_async(part) if server.room(len(part)) else None)
        await _wait_async([f for f in futures if f is not None], deadline)
        lines: list[dict[str, Any]] = []
        dropped, late = [], []
        for part, future in zip(parts, futures, strict=True):
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
        self.note(request, lines)
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

    async def verify(self, request: Request) -> Any:
        """NeMo Gym's resources-server ``/verify``: one rollout in its own schema, merged with other requests' rows
        into micro-batches; the request back with ``reward`` and ``reward_components``, an unscored row masked
        rather than paid 0 (:mod:`grpo_host.serving.nemo_gym`)."""
        server = self.server
        body = await self.read_json(request)
        try:
            row = nemo_gym.row_of(body)
        except ValueError as exc:
            raise HTTPError(422, str(exc)) from None
        request.log["rows"] = 1
        seconds, deadline = self.deadline_of(request)
        if not server.room(1):
            raise server.busy(1)
        future = server.batcher.submit_async([("verify request", row)])
        await _wait_async([future], deadline)
        if future.cancelled() or not future.done():
            raise HTTPError(504, f"the deadline ({seconds:g} s from the request's first byte) passed before the "
                            "rollout was scored")
        lines = future.result()[1]
        self.note(request, lines)
        return nemo_gym.verify_response(body, lines[0])

    @staticmethod
    async def off_loop(work: Callable[[], Any], seconds: float, deadline: float, what: str) -> Any:
        """``work()`` on a thread, off the event loop; a 504 saying what was under way when the deadline passes."""
        job = asyncio.get_running_loop().run_in_executor(None, work)
        try:
            return await asyncio.wait_for(job, max(deadline - time.monotonic(), 0))
        except TimeoutError:
            raise HTTPError(504, f"the deadline ({seconds:g} s from the request's first byte) passed while {what}"
                            ) from None

    async def check(self, request: Request) -> Any:
        body = await self.read_json(request)
        rows = self.take_rows(request, body.get("rows") if isinstance(body, dict) else None)
        seconds, deadline = self.deadline_of(request)
        rewards = [m.reward for m in self.members]
        report = await self.off_loop(lambda: check_rows(((f"row {i}", raw) for i, raw in enumerate(rows)), rewards,
                                                        extra_columns=("completion",)),
                                     seconds, deadline, "the rows were checked")
        return report.as_dict()

    async def audit(self, request: Request) -> Any:
        """``grpo-host audit`` over the posted rows with this server's rewards, on an ensemble of its own (the
        scoring threads keep theirs): ``{"rows": [...], "sample": N}`` -> the audit's report (docs/audit.md)."""
        from ..audit import DEFAULT_SAMPLE, audit_rows

        body = await self.read_json(request)
        rows = self.take_rows(request, body.get("rows") if isinstance(body, dict) else None)
        sample = body.get("sample", DEFAULT_SAMPLE)
        if not isinstance(sample, int) or isinstance(sample, bool) or sample < 1:
            raise HTTPError(422, f"'sample' must be a positive number of rows, got {sample!r}")
        seconds, deadline = self.deadline_of(request)
        build = self.server.build

        def run() -> Any:
            with build() as ensemble:
                return audit_rows(((f"row {i}", raw) for i, raw in enumerate(rows)), None, sample=sample,
                                  ensemble=ensemble, data="request")

        report = await self.off_loop(run, seconds, deadline, "the rewards were audited")
        return report.as_dict()

    async def listing(self, request: Request) -> Any:
        return [{**reward_row(m.reward), "weight": m.weight, "on_error": m.on_error, "timeout": m.timeout,
                 "bound": m.reward.bound.model_dump() if m.reward.bound is not None else None} for m in self.members]

    async def health(self, request: Request) -> Any:
        server, settings = self.server, self.settings
        b = server.batcher
        return {"status": "ok", "rewards": server.names, "concurrency": settings.concurrency,
                "backlog": settings.backlog, "scoring": b.scoring_rows, "waiting": b.waiting_rows,
                "batches": b.batches, "dropped_rows": server.dropped, "late_rows": server.late}
