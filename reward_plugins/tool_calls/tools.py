"""A row's tool schemas and expected calls, read once and checked: what the tool-call rewards compare calls with.

Rows come from many datasets, so both columns are read in the shapes they
use, as JSON values or as JSON text (xLAM and others store JSON strings):

* ``tools``: a list of function schemas, OpenAI's
  ``{"type": "function", "function": {"name", "description", "parameters"}}``
  (what chat templates and TRL's ``tools`` take) or the bare
  ``{"name", "description", "parameters"}`` BFCL and xLAM use.
  ``parameters`` is JSON Schema; BFCL's own type names (``dict``,
  ``float``, ``tuple``, ``any``) are read as ``object``, ``number``,
  ``array`` and any type, so BFCL's data validates as it means to.
* ``expected_calls`` (or BFCL's ``ground_truth``): the calls the rollout
  should make, as BFCL's possible answers ``[{name: {argument: [allowed
  values]}}]`` (``""`` among the values: the argument may be left out), or
  plainly ``[{"name", "arguments"}]`` (each value the one allowed; an
  argument of the schema left out of it may be left out or given its
  schema ``default``).  ``[]``: no call should be made.

Both are dataset values, so anything may be wrong with them: every
problem is a :class:`ToolsProblem` whose message names the column and the
tool, which ``data check`` reports per row and scoring raises as the row's
error.  The schemas are compiled as the ``json_schema`` pack compiles its rows'
(:func:`~reward_plugins.schemas.compiler.compile_schema`: jsonschema-rs, offline:
a remote ``$ref`` is never fetched; hostile schemas refused).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from reward_plugins.schemas.compiler import Compiled, SchemaProblem, compile_schema

__all__ = ["MAX_COLUMN_CHARS", "Tool", "ToolsProblem", "expected_calls", "read_tools"]

MAX_COLUMN_CHARS = 1_000_000
"""Longest ``tools`` or expected-calls value accepted, as JSON text."""

_BFCL_TYPES = {"dict": "object", "float": "number", "tuple": "array"}
"""BFCL's type names that JSON Schema spells otherwise (``any`` means no type at all)."""
_ONE_SCHEMA = ("items", "additionalProperties", "additionalItems", "not", "contains", "propertyNames", "if", "then",
               "else")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems", "items")
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")


class ToolsProblem(ValueError):
    """The row's tools or expected calls cannot be used; the message names the column and what is wrong."""


@dataclass(frozen=True)
class Tool:
    """One function the model may call: its name, its parameters as given, and their compiled JSON Schema."""

    name: str
    parameters: Mapping[str, Any]
    compiled: Compiled

    def accepts(self, arguments: Any) -> bool:
        return self.compiled.validator.is_valid(arguments)


def _json(value: Any, column: str) -> Any:
    """A column's value, parsed when it is JSON text, with its size bounded either way."""
    try:
        text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    except (TypeError, ValueError, RecursionError):
        raise ToolsProblem(f"column {column!r} is not JSON data") from None
    if len(text) > MAX_COLUMN_CHARS:
        raise ToolsProblem(f"column {column!r} is longer than {MAX_COLUMN_CHARS:,} characters as JSON")
    if not isinstance(value, str):
        return value
    try:
        return json.loads(text)
    except RecursionError:
        raise ToolsProblem(f"column {column!r} is nested too deep") from None
    except ValueError as exc:
        raise ToolsProblem(f"column {column!r} is text that is not JSON: {exc}") from None


def _as_json_schema(schema: Any) -> Any:
    """``schema`` with BFCL's type names in JSON Schema's spelling, walking only where subschemas sit."""
    if not isinstance(schema, Mapping):
        return schema
    out = dict(schema)
    kind = out.get("type")
    if kind == "any":
        del out["type"]
    elif isinstance(kind, str):
        out["type"] = _BFCL_TYPES.get(kind, kind)
    elif isinstance(kind, list):
        out["type"] = [_BFCL_TYPES.get(k, k) if isinstance(k, str) else k for k in kind]
    for key in _ONE_SCHEMA:
        if isinstance(out.get(key), Mapping):
            out[key] = _as_json_schema(out[key])
    for key in _SCHEMA_LISTS:
        if isinstance(out.get(key), list):
            out[key] = [_as_json_schema(s) for s in out[key]]
    for key in _SCHEMA_MAPS:
        if isinstance(out.get(key), Mapping):
            out[key] = {k: _as_json_schema(s) for k, s in out[key].items()}
    return out


def read_tools(value: Any, empty_ok: bool = False) -> dict[str, Tool]:
    """The row's ``tools`` by name; :class:`ToolsProblem` for anything that is not a usable list of functions.

    ``empty_ok``: an empty list is a row that offers no tools (BFCL's irrelevance rows without functions), not
    a gap."""
    tools = _read_tools(value if isinstance(value, str) else _key(value, "tools"))
    if not tools and not empty_ok:
        raise ToolsProblem("column 'tools' must be a non-empty list of function schemas")
    return tools


def _key(value: Any, column: str) -> str:
    """A JSON value's canonical text: the cache key under which a group of completions shares its row's work."""
    try:
        return json.dumps(value, sort_keys=True)
    except (TypeError, ValueError, RecursionError):
        raise ToolsProblem(f"column {column!r} is not JSON data") from None


@lru_cache(maxsize=256)
def _read_tools(text: str) -> dict[str, Tool]:
    tools = _json(text, "tools")
    if not isinstance(tools, list):
        raise ToolsProblem("column 'tools' must be a list of function schemas")
    found: dict[str, Tool] = {}
    for i, item in enumerate(tools):
        function = item.get("function") if isinstance(item, Mapping) and item.get("type") == "function" else item
        if not isinstance(function, Mapping):
            raise ToolsProblem(f"column 'tools': item {i} is not a function schema (an object)")
        name = function.get("name")
        if not isinstance(name, str) or not name.strip():
            raise ToolsProblem(f"column 'tools': item {i} has no name")
        if name in found:
            raise ToolsProblem(f"column 'tools': two tools are named {name!r}")
        parameters = function.get("parameters", {"type": "object", "properties": {}})
        if not isinstance(parameters, Mapping):
            raise ToolsProblem(f"column 'tools': the parameters of {name!r} are not a JSON Schema object")
        properties = parameters.get("properties", {})
        required = parameters.get("required", [])
        if not isinstance(properties, Mapping) or not all(isinstance(p, Mapping) for p in properties.values()):
            raise ToolsProblem(f"column 'tools': the properties of {name!r} are not an object of schemas")
        if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
            raise ToolsProblem(f"column 'tools': 'required' of {name!r} is not a list of names")
        try:
            compiled = compile_schema(_as_json_schema(parameters))
        except RecursionError:
            raise ToolsProblem(f"column 'tools': the parameters of {name!r} are nested too deep") from None
        except SchemaProblem as exc:
            raise ToolsProblem(f"column 'tools': the parameters of {name!r} are not a usable JSON Schema: {exc}") \
                from None
        found[name] = Tool(name, parameters, compiled)
    return found


def expected_calls(value: Any, tools: Mapping[str, Tool], column: str = "expected_calls") -> list[dict[str, dict]]:
    """The expected calls in BFCL's possible-answer form ``[{name: {argument: [allowed values]}}]``, checked
    against ``tools``: every call names a tool of the row, every argument one of its parameters, every required
    parameter has a value.  :class:`ToolsProblem` names what is wrong."""
    calls = _json(value, column)
    if not isinstance(calls, list):
        raise ToolsProblem(f"column {column!r} must be a list of calls")
    out = []
    for i, call in enumerate(calls):
        if isinstance(call, Mapping) and set(call) == {"name", "arguments"}:
            name, arguments = call["name"], call["arguments"]
            if isinstance(arguments, str):
                arguments = _json(arguments, column)
            if not isinstance(name, str) or not isinstance(arguments, Mapping):
                raise ToolsProblem(f"column {column!r}: call {i} needs a name and an object of arguments")
            allowed = _plain_allowed(name, arguments, tools, column)
        elif isinstance(call, Mapping) and len(call) == 1:
            ((name, allowed),) = call.items()
            if not isinstance(allowed, Mapping) or not all(isinstance(v, list) for v in allowed.values()):
                raise ToolsProblem(f"column {column!r}: call {i} ({name!r}) must map each argument to a list of "
                                   "allowed values (BFCL's possible answers)")
        else:
            raise ToolsProblem(f"column {column!r}: call {i} is neither {{name, arguments}} nor {{name: {{argument: "
                               "[allowed values]}}}}")
        tool = tools.get(name)
        if tool is None:
            raise ToolsProblem(f"column {column!r}: call {i} names {name!r}, which is not among the row's tools "
                               f"{sorted(tools)}")
        properties = tool.parameters.get("properties", {})
        unknown = sorted(k for k, values in allowed.items() if k not in properties and "" not in values)
        if unknown:  # no call could match: giving the argument is refused by the schema, leaving it out by the row
            raise ToolsProblem(f"column {column!r}: call {i} ({name!r}) needs arguments {unknown} that the tool's "
                               "schema does not define")
        missing = [p for p in tool.parameters.get("required", []) if not any(v != "" for v in allowed.get(p, []))]
        if missing:
            raise ToolsProblem(f"column {column!r}: call {i} ({name!r}) gives no value for the required {missing}")
        out.append({name: dict(allowed)})
    return out


def _plain_allowed(name: str, arguments: Mapping[str, Any], tools: Mapping[str, Tool], column: str) -> dict:
    """A plain ``{name, arguments}`` call as BFCL's allowed values: each given value, and the tool's other
    parameters optional (left out, or their schema's ``default``)."""
    tool = tools.get(name)
    if tool is None:
        raise ToolsProblem(f"column {column!r}: a call names {name!r}, which is not among the row's tools "
                           f"{sorted(tools)}")
    allowed = {key: [value] for key, value in arguments.items()}
    for key, schema in tool.parameters.get("properties", {}).items():
        if key not in allowed:
            allowed[key] = ["", schema["default"]] if "default" in schema else [""]
    return allowed
