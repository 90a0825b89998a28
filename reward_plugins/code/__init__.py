"""The ``code`` reward pack: completions' Python run against the row's tests in a bubblewrap sandbox that fails closed.

``rewards`` holds the reward and its registration hook; ``sandbox`` the
client of the isolation layer (one warm bubblewrap sandbox per worker
process, built by the shared :mod:`reward_plugins.sandbox`), with
``runner`` (the fork server and the collector that run inside it);
``shapes`` decides which assert tests can be judged outside the program,
and ``plain`` is the only form a result crosses in.  ``environments`` is
the ``python`` tool environment (entry point ``python_tool``): the same
sandbox and limits, for an agent's tool calls.  The threat model is
``docs/sandbox.md``.
"""
