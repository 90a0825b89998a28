"""JSON Schema machinery the ``json_schema`` and ``tool_calls`` packs share, with public names only; no pack of its own.

``compiler`` checks and compiles a dataset's schema (jsonschema-rs, offline,
hostile schemas refused with a reason).
"""
