"""The ``tool_calls`` reward pack: rewards over the tool calls of a rollout (``Trajectory.tool_calls``).

``rewards`` holds the three rewards (``tool_call_format``,
``tool_call_match``, ``tool_efficiency``), their row checks and the
registration hook; ``tools`` reads the row's tool schemas and expected calls;
``bfcl`` is BFCL's AST checker, vendored (Apache-2.0, ``LICENSE-bfcl``).
"""
