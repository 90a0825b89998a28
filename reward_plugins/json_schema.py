"""json_schema: does the completion's JSON validate against the row's JSON Schema?

The validator is the ``jsonschema`` library (Draft 2020-12 unless the
schema's ``$schema`` names another draft).  Completions are untrusted, so:

* JSON is read with hard limits: ``NaN``/``Infinity`` are rejected (they are
  not JSON), as are number literals longer than ``MAX_NUMBER_CHARS`` or that
  overflow a float, nesting deeper than ``MAX_DEPTH`` and text longer than
  ``max_chars``; a rejected value scores 0 like a missing one.
* ``$ref`` is resolved only inside the schema and the bundled meta-schemas:
  the registry has no retriever, so a remote reference is never fetched
  (jsonschema's default would download it).
* Regular expressions (``pattern``, ``patternProperties``, the ``regex``
  format) run on Python's backtracking ``re``, where ``^(a+)+$`` against a
  long near-miss takes exponential time.  Rather than swap the engine under
  jsonschema's keywords one by one (and miss ``additionalProperties``, which
  matches ``patternProperties`` itself), every item runs in a worker process
  (``executor="process"``): the worker's timer interrupts ``re`` (CPython's
  matcher checks signals) and a worker that still does not answer is killed
  and replaced.  A timed-out item scores None and is counted as a timeout.
  The cost, a pipe round trip per item, is small next to validation.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from grpo_host import hookimpl, reward

MAX_DEPTH = 64
"""Deepest nesting of arrays/objects accepted in a completion's JSON."""
MAX_NUMBER_CHARS = 64
"""Longest number literal accepted (a 10^5-digit integer is an attack, not an answer)."""
DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
MAX_CANDIDATES = 16
"""How many `{`/`[` positions are tried when the JSON is embedded in prose."""

_FENCE = re.compile(r"```[ \t]*(?:json[\w-]*)?[ \t]*\n(.*?)```", re.S | re.I)


class JsonRejected(ValueError):
    """The text is JSON-like but breaks a limit (NaN, depth, number size): it scores as no JSON."""


class JsonSchemaParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    strict: bool = Field(False, description="no partial credit: 1.0 when valid, 0.0 otherwise")
    max_chars: int = Field(
        100_000, ge=16, le=10_000_000, description="a completion longer than this scores 0.0 without being parsed"
    )


# -- reading JSON with limits -------------------------------------------------------------------------------------


def _reject_constant(name: str) -> Any:
    raise JsonRejected(f"{name} is not JSON")


def _parse_int(text: str) -> int:
    if len(text) > MAX_NUMBER_CHARS:
        raise JsonRejected(f"number with {len(text)} characters")
    return int(text)


def _parse_float(text: str) -> float:
    if len(text) > MAX_NUMBER_CHARS:
        raise JsonRejected(f"number with {len(text)} characters")
    value = float(text)
    if math.isinf(value):
        raise JsonRejected(f"{text} overflows a float")
    return value


_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_int=_parse_int, parse_float=_parse_float)


def _depth_ok(value: Any) -> bool:
    """Iterative depth check: validating a 10,000-deep value would blow the recursion limit."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > MAX_DEPTH:
                return False
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return True


def _decode(text: str, start: int = 0, *, whole: bool) -> Any:
    """Decode one JSON value at ``start`` (the whole text when ``whole``); raise ValueError or JsonRejected."""
    try:
        value, end = _DECODER.raw_decode(text, start)
    except RecursionError:
        raise JsonRejected("nesting too deep") from None
    if whole and text[end:].strip():
        raise ValueError("extra data after the value")
    if not _depth_ok(value):
        raise JsonRejected(f"nesting deeper than {MAX_DEPTH}")
    return value


def _candidates(text: str) -> Iterator[tuple[str, int, bool]]:
    """Where the JSON may be, best first: the whole text, fenced blocks (last first), then `{`/`[` positions."""
    stripped = text.strip()
    yield stripped, 0, True
    for block in reversed(_FENCE.findall(text)):
        yield block.strip(), 0, True
    starts = (m.start() for m in re.finditer(r"[\[{]", text))
    for _, start in zip(range(MAX_CANDIDATES), starts):
        yield text, start, False


def extract_json(text: str) -> tuple[bool, Any]:
    """``(found, value)``: the completion's JSON value (bare, fenced, or the first `{...}`/`[...]` that parses).

    Raises :class:`JsonRejected` when the best candidate breaks a limit, so
    a NaN-laden or 10,000-deep answer is not rescued by a smaller fragment.
    """
    for candidate, start, whole in _candidates(text):
        if not candidate:
            continue
        try:
            return True, _decode(candidate, start, whole=whole)
        except JsonRejected:
            raise
        except ValueError:
            continue
    return False, None


# -- schemas --------------------------------------------------------------------------------------------------------


class SchemaProblem(ValueError):
    """The row's schema is unusable: not JSON, not a schema, or a ``$ref`` that would need a download."""


def _schema_key(schema: Any) -> str:
    return schema if isinstance(schema, str) else json.dumps(schema, sort_keys=True)


@lru_cache(maxsize=1024)
def _validator(key: str) -> Any:
    """A checked validator for one schema, cached per worker (a group shares its schema)."""
    import jsonschema
    import referencing

    try:
        schema = json.loads(key)
    except ValueError as exc:
        raise SchemaProblem(f"schema is not valid JSON: {exc}") from None
    if not isinstance(schema, dict | bool):
        raise SchemaProblem(f"a schema is a JSON object or boolean, not {type(schema).__name__}")
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        where = "/".join(map(str, exc.absolute_path)) or "(root)"
        raise SchemaProblem(f"invalid schema at {where}: {exc.message}") from None
    # An empty registry has no retriever: only the schema itself and the meta-schemas resolve.
    _check_refs(schema)
    return cls(schema, registry=referencing.Registry())


def _check_refs(schema: Any) -> None:
    """Resolve every ``$ref`` now, so one that would need a download is reported instead of failing later."""
    if not isinstance(schema, dict):
        return
    import referencing.exceptions
    import referencing.jsonschema
    from jsonschema_specifications import REGISTRY as META_SCHEMAS

    def resource(node: dict) -> Any:
        spec = referencing.jsonschema.specification_with(
            node.get("$schema", DRAFT_2020_12), default=referencing.jsonschema.DRAFT202012
        )
        return spec.create_resource(node)

    def walk(node: Any, resolver: Any) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item, resolver)
        if not isinstance(node, dict):
            return
        if "$id" in node and node is not schema:
            resolver = resolver.in_subresource(resource(node))
        ref = node.get("$ref")
        if isinstance(ref, str):
            try:
                resolver.lookup(ref)
            except referencing.exceptions.Unresolvable:
                raise SchemaProblem(
                    f"$ref {ref!r} does not resolve inside the schema (remote references are never fetched)"
                ) from None
        for key, child in node.items():
            if key not in ("const", "enum", "examples", "default"):
                walk(child, resolver)

    walk(schema, META_SCHEMAS.resolver_with_root(resource(schema)))


def schema_problem(schema: Any) -> str | None:
    """Why ``schema`` (an object or a JSON string) cannot be used, or None."""
    try:
        _validator(_schema_key(schema))
    except SchemaProblem as exc:
        return str(exc)
    return None


# -- scoring --------------------------------------------------------------------------------------------------------


def partial_credit(schema: Any, value: Any, errors: list) -> float:
    """0.5 x the share of fields that pass (the rule in the reward's description)."""
    root_errors = [e for e in errors if not e.absolute_path]
    if any(e.validator == "type" for e in root_errors):
        return 0.0
    if isinstance(value, dict) and isinstance(schema, dict):
        required = schema.get("required") if isinstance(schema.get("required"), list) else []
        properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        fields = sorted(set(properties) | {r for r in required if isinstance(r, str)})
        passes = [(name in value) if name in required else True for name in fields]
    elif isinstance(value, list):
        fields, passes = list(range(len(value))), [True] * len(value)
    else:
        return 0.0
    index = {name: i for i, name in enumerate(fields)}
    rest_ok = True
    for error in errors:
        if error.absolute_path and error.absolute_path[0] in index:
            passes[index[error.absolute_path[0]]] = False
        elif error.absolute_path or error.validator != "required":
            rest_ok = False  # e.g. additionalProperties, minItems, an extra property's own error
    return 0.5 * (sum(passes) + rest_ok) / (len(fields) + 1)


def check_schema_row(row: Mapping[str, Any]) -> str | None:
    """Row check for ``data check``: the row's schema is valid and needs no download."""
    schema = row.get("schema")
    if not isinstance(schema, dict | str) or not schema:
        return None  # the column check reports it
    return schema_problem(schema)


@reward(
    name="json_schema",
    requires={"schema": dict | str},
    params=JsonSchemaParams,
    executor="process",
    timeout=5.0,
    check_row=check_schema_row,
    examples=[
        {"completion": '{"name": "Ada", "age": 36}',
         "schema": {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
                    "required": ["name", "age"]}},
        {"completion": 'Here you go:\n```json\n{"name": "Ada", "age": "36"}\n```',
         "schema": {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
                    "required": ["name", "age"]}},
        {"completion": 'Sure: {"name": "Ada"} hope that helps',
         "schema": {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
                    "required": ["name", "age"], "additionalProperties": False}},
        {"completion": "[1, 2, \"three\"]", "schema": {"type": "array", "items": {"type": "integer"}}},
        {"completion": '{"x": NaN}', "schema": {"type": "object"}},
        {"completion": "no JSON here", "schema": '{"type": "object"}'},
    ],
)
def json_schema(completion: str, *, schema: Any, params: JsonSchemaParams, **_) -> float | None:
    """1.0 when the completion's JSON value validates against the row's `schema` (jsonschema; Draft 2020-12
    unless `$schema` says otherwise), else partial credit or 0.0; None (not applicable) when the schema is not
    valid JSON, not a valid schema, or has a $ref that does not resolve inside it (remote refs are never
    fetched).  The JSON value is the whole completion, else the last ```json (or plain ```) fenced block, else
    the first {...} or [...] in the text that parses.  0.0 when there is none, or when it contains NaN or
    Infinity, a number literal over 64 characters or overflowing a float, nesting deeper than 64, or the
    completion is longer than max_chars.  Partial credit for an invalid value (strict=false): 0.0 when its
    top-level type is wrong; for an object, 0.5 x (passing fields + rest) / (fields + 1), where the fields are the
    names in the schema's top-level `properties` and `required` (a field passes when present and valid, or
    absent and not required) and `rest` is 1 when no error lies outside those fields (e.g. additionalProperties,
    minProperties); for an array, the same with its items as the fields; any other invalid value 0.0.  With
    strict=true an invalid value scores 0.0.  Each item runs in a worker process under the timeout (default
    5 s), which bounds catastrophic regex `pattern`s; a timed-out item scores None and is counted."""
    try:
        validator = _validator(_schema_key(schema))
    except SchemaProblem:
        return None
    if len(completion) > params.max_chars:
        return 0.0
    try:
        found, value = extract_json(completion)
    except JsonRejected:
        return 0.0
    if not found:
        return 0.0
    errors = list(validator.iter_errors(value))
    if not errors:
        return 1.0
    return 0.0 if params.strict else partial_credit(validator.schema, value, errors)


@hookimpl
def register_rewards(register):
    register(json_schema)
