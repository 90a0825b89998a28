"""The judge's response cache: one small JSON file per request, under the grpo-host cache folder.

Scoring the same completions twice (``grpo-host score`` rerun after changing
another reward's weight, an evaluation repeated) should not pay for the same
judgments twice.  The key is a hash of everything that decides the reply:
the server, the model, the messages and the sampling parameters; the value is
the judge's raw reply text, parsed again on every read so
a fixed parser applies to old replies too.  Only replies are stored, a reply
cut off at ``max_tokens`` included (it would be cut off again); a request
that failed is asked again next time.

One file per key, written to a temporary name and renamed into place, keeps
concurrent writers (two runs, or two items of one batch) from ever leaving a
half-written entry, without a lock or a database.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from grpo_host import cache_dir

__all__ = ["ResponseCache", "request_key"]


def request_key(request: dict[str, Any]) -> str:
    """A stable hash of a request: its JSON with sorted keys."""
    return hashlib.sha256(json.dumps(request, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


class ResponseCache:
    """Replies by request key in ``<grpo-host cache>/judge/``."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = (root or cache_dir()) / "judge"

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored reply (``{"content": str, "truncated": bool}``), or None when there is none or unreadable."""
        try:
            return json.loads(self._path(key).read_text())
        except (OSError, ValueError):
            return None

    def put(self, key: str, reply: dict[str, Any]) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(reply, f)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
