"""The ``json_schema`` pack: does the completion's JSON validate against the row's JSON Schema?

:mod:`.rewards` holds the reward, its registration hooks (the entry point names it) and the schema compiler;
:mod:`.probes` the audit probes: JSON that looks right without being the object asked for.
"""
