"""OpenEnv's own server for a grpo-host spec (``grpo_host.integrations.openenv.app`` under uvicorn, in a subprocess
on 127.0.0.1), as ``uvicorn server:app`` runs it: what the OpenEnv tests and benchmarks step with OpenEnv's client."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def openenv_server(folder: Path, spec: str, rows: list[dict[str, Any]], sessions: int = 1) -> Iterator[str]:
    """The server's base URL while it serves ``rows`` scored by ``spec`` to at most ``sessions`` concurrent
    WebSocket sessions (OpenEnv's ``max_concurrent_envs``); it is stopped on exit."""
    (folder / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "server.py").write_text(
        "from grpo_host.integrations.openenv import app\n\n"
        f"app = app({spec!r}, 'rows.jsonl', max_concurrent_envs={sessions})\n")
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "uvicorn", "server:app", "--port", str(port)], cwd=folder,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            if proc.poll() is not None:
                raise RuntimeError(f"the OpenEnv server exited: {proc.stderr.read() if proc.stderr else ''}")
            try:
                if httpx.get(f"{url}/health").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(30)
