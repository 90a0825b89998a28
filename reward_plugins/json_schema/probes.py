"""The json_schema pack's audit probes: JSON that looks right without being the object asked for.

A policy paid for valid JSON tries the cheapest text that validates: an empty
object, an object with the schema's keys and nothing meaningful in them, or
the schema itself copied from the prompt.  The reference is the schema's own
example (``examples``, ``default`` or ``const`` at its top level), where it
states one.
"""

from __future__ import annotations

import json
from typing import Any

from grpo_host import Target, probe

NONSENSE = {"string": "", "integer": 0, "number": 0, "boolean": False, "array": [], "object": {}, "null": None}


def _schema(target: Target) -> Any:
    schema = target.row.get("schema")
    if isinstance(schema, str):
        try:
            schema = json.loads(schema)
        except ValueError:
            return None
    return schema if isinstance(schema, dict) else None


def _fence(value: Any) -> str:
    return f"```json\n{json.dumps(value)}\n```"


@probe(columns=("schema",), fix="an object without the required properties must earn nothing")
def json_minimal(target: Target) -> str:
    """The empty object ``{}``."""
    return _fence({})


@probe(columns=("schema",), fix="pay only valid objects; keys with null values are not the object")
def json_keys_only(target: Target) -> str | None:
    """The schema's property names, each with null: the shape without the content."""
    schema = _schema(target)
    props = schema.get("properties") if schema else None
    return _fence({key: None for key in props}) if isinstance(props, dict) and props else None


@probe(columns=("schema",), fix="the schema accepts empty values: add minLength, minimum or enum to it")
def json_empty_values(target: Target) -> str | None:
    """The schema's properties, each the emptiest value of its declared type ("" , 0, [], false)."""
    schema = _schema(target)
    props = schema.get("properties") if schema else None
    if not isinstance(props, dict) or not props:
        return None
    kinds = {key: sub.get("type") if isinstance(sub, dict) else None for key, sub in props.items()}
    return _fence({key: NONSENSE.get(kind if isinstance(kind, str) else "null") for key, kind in kinds.items()})


@probe(columns=("schema",), fix="the schema itself validates: require the properties it describes")
def json_schema_echo(target: Target) -> str | None:
    """The schema copied back as the answer."""
    schema = _schema(target)
    return None if schema is None else _fence(schema)


@probe(kind="reference", columns=("schema",))
def json_example(target: Target) -> str | None:
    """The schema's own example: the first of ``examples``, else ``default``, else ``const``."""
    schema = _schema(target)
    if schema is None:
        return None
    if isinstance(schema.get("examples"), list) and schema["examples"]:
        return _fence(schema["examples"][0])
    for key in ("default", "const"):
        if key in schema:
            return _fence(schema[key])
    return None
