"""The no-work reward server: what OpenRLHF's own client can reach on this machine, whatever the server does.

A trivial ASGI app on uvicorn with its defaults (httptools and uvloop where
installed, no access log): it reads each request's body and answers every
``POST /get_reward`` with a constant reward in OpenRLHF's reply shape,
``{"rewards": [0.0], "scores": [0.0], "extra_logs": {}}`` (OpenRLHF's
current client posts one rollout per request), and ``GET /health`` with 200.
It parses nothing and scores nothing, so a step of OpenRLHF's client
against it costs the client's own work (tokenizing, decoding, a new aiohttp
session per request) plus uvicorn's HTTP handling and nothing else: the
ceiling any reward server can reach with that client on the same cores.
``benchmarks/serve.py`` runs it beside ``grpo-host serve`` and one
1,024-row ``/score`` request, in the same run (benchmarks/serve.md).

Usage: ``python benchmarks/serve_ceiling.py --port PORT``
"""

from __future__ import annotations

import argparse

REPLY = b'{"rewards":[0.0],"scores":[0.0],"extra_logs":{}}'
HEADERS = [(b"content-type", b"application/json"), (b"content-length", str(len(REPLY)).encode())]


async def app(scope, receive, send) -> None:
    """Drain the body, answer the constant; lifespan and other scopes get nothing (uvicorn carries on)."""
    if scope["type"] != "http":
        return
    more = True
    while more:
        more = (await receive()).get("more_body", False)
    await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
    await send({"type": "http.response.body", "body": REPLY})


def main() -> None:
    import uvicorn

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    uvicorn.run(app, host="127.0.0.1", port=args.port, access_log=False, log_level="warning", lifespan="off")


if __name__ == "__main__":
    main()
