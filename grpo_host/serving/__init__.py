"""Scoring beyond one process: the reward server and the micro-batcher that feeds it.

* :mod:`~grpo_host.serving.server`: ``grpo-host serve``: its settings, the ensembles and their
  scoring threads, admission in rows, and ``serve()`` on uvicorn.
* :mod:`~grpo_host.serving.endpoints`: OpenRLHF's ``/get_reward``, the batch ``/score``, ``/check``,
  ``/audit``, ``/rewards`` and ``/health``.
* :mod:`~grpo_host.serving.http`: the plain ASGI app, uvicorn's protocol with a first-byte clock, the
  access log and the listening socket.
* :mod:`~grpo_host.serving.batching`: gathers concurrent calls (HTTP requests, the verl adapter's
  threads) into micro-batches for the ensemble, with admission counted in rows.

The trainers' own adapters live in :mod:`grpo_host.integrations` (a public path).  This layer sits
above the scoring core and the plugin machinery.  This ``__init__`` imports nothing.
"""
