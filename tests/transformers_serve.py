"""``transformers serve`` on a free 127.0.0.1 port, offline: the real OpenAI-compatible server the judge and the
endpoint episode tests ask."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx


@contextmanager
def transformers_serve(model: Path) -> Iterator[str]:
    """Serve ``model`` on the CPU until the block ends; yields the base URL (``http://127.0.0.1:PORT/v1``)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    proc = subprocess.Popen([str(Path(sys.executable).with_name("transformers")), "serve", str(model), "--host",
                             "127.0.0.1", "--port", str(port), "--device", "cpu"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "transformers serve did not start"
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        proc.wait(10)
