"""Scoring a reward's documented examples as a user would run them: ``rewards show`` and ``check_examples``.

An example is a row (``completion``, ``prompt``, the reward's columns) and, optionally, the score it gets.  Three
keys let an example document a reward that cannot score one row on its own:

* ``params``: the parameters the example is scored with (a reward model's checkpoint, ``normalize=group``).
* ``completions`` with ``scores`` instead of ``completion`` with ``score``: a GRPO group, several completions of one
  prompt scored in one call, for rewards whose score depends on the group (a per-group z-score, a group judge).
* ``judge_reply``: what an LLM judge answers.  The example is scored against a real OpenAI-compatible chat server
  on 127.0.0.1 (:func:`chat_server`) that gives this reply to every request, with ``base_url`` and ``model`` set to
  it, so the stated score is what the reward derives from that reply: parsing, averaging, None for no verdict.

This module imports only the standard library at import time, so ``rewards list`` stays fast.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["EXAMPLE_KEYS", "ChatServer", "chat_server", "example_columns", "score_example"]

EXAMPLE_KEYS = ("completion", "completions", "prompt", "score", "scores", "params", "judge_reply")
"""Keys of an example that are not columns of the row it scores."""

JUDGE_MODEL = "example-judge"


@dataclass
class ChatServer:
    """A running chat server: its ``base_url`` (ending in /v1), the model name it answers to, and the requests'
    bodies it has received."""

    base_url: str
    model: str
    requests: list[dict[str, Any]] = field(default_factory=list)


@contextlib.contextmanager
def chat_server(reply: str, model: str = JUDGE_MODEL) -> Iterator[ChatServer]:
    """Serve ``POST /v1/chat/completions`` on 127.0.0.1 (a free port) answering every request with ``reply``, in
    the OpenAI chat-completions format; any other model name or path gets a 404, as a real server answers it."""
    served = ChatServer("", model)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
            served.requests.append(body)
            if self.path.rstrip("/") != "/v1/chat/completions" or body.get("model") != model:
                return self._send(404, {"error": {"message": f"no model {body.get('model')!r} at {self.path}"}})
            return self._send(200, {
                "id": f"chatcmpl-{len(served.requests)}", "object": "chat.completion", "model": model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            })

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:  # requests are recorded, not printed
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    served.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield served
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def example_columns(example: Mapping[str, Any]) -> dict[str, Any]:
    """The example's row columns: everything but the completion(s), prompt, stated score(s) and scoring setup."""
    return {k: v for k, v in example.items() if k not in EXAMPLE_KEYS}


def score_example(reward: Any, example: Mapping[str, Any]) -> list[float | None]:
    """The score of each completion of ``example`` (one for ``completion``, one per member for ``completions``),
    scored by ``reward`` bound with the example's ``params`` and, for a ``judge_reply``, against a chat server
    giving that reply (no cache, no retries: the reply is the whole story)."""
    group = "completions" in example
    single = ("completion", "score")
    if any(k in example for k in single) if group else ("completion" not in example or "scores" in example):
        raise ValueError(f"an example gives 'completion' (and 'score') or a group's 'completions' (and 'scores'), "
                         f"not {', '.join(sorted(set(example) & set(EXAMPLE_KEYS)))}")
    if group and "scores" in example and len(example["scores"]) != len(example["completions"]):
        raise ValueError(f"an example states {len(example['scores'])} scores for {len(example['completions'])} "
                         "completions")
    params = dict(example.get("params") or {})
    completions = list(example["completions"]) if group else [example["completion"]]
    n = len(completions)
    columns = {k: [v] * n for k, v in example_columns(example).items()}
    with contextlib.ExitStack() as stack:
        if "judge_reply" in example:
            server = stack.enter_context(chat_server(str(example["judge_reply"])))
            params |= {"base_url": server.base_url, "model": server.model, "cache": False, "retries": 0}
        bound = reward.bind(params) if params else reward
        scored = bound.score_items(completions, [example.get("prompt")] * n, columns)
    return [s.value for s in scored]
