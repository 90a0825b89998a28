"""The ``tool_calls`` reward pack: rewards over the tool calls of a rollout (``Trajectory.tool_calls``).

``rewards`` holds ``tool_call_format``, ``tool_call_match`` and ``tool_efficiency``, their row checks and the
registration hook; ``multi_turn`` holds ``tool_call_state`` (BFCL's multi-turn verdict); ``tools`` reads the row's
tool schemas and expected calls; ``calls`` reads a rollout's calls as BFCL decodes them; ``dispatch`` runs calls on
BFCL's backends as data.  Vendored from BFCL (Apache-2.0, ``LICENSE-bfcl``): ``bfcl`` (its AST checker),
``bfcl_decode`` (its text-call decoder), ``bfcl_multi_turn`` (its multi-turn checker) and ``bfcl_backends`` (the
classes its multi-turn categories run).
"""
