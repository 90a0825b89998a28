"""json_schema: does the completion's JSON validate against the row's JSON Schema?

The validator is ``jsonschema-rs`` (Rust), chosen over the pure-Python
``jsonschema`` by benchmarks/json_schema.py: it agrees with every required
case of the official JSON-Schema-Test-Suite and with its ECMA-262 regex
cases, where ``jsonschema`` on Python's ``re`` has no ``\\p{...}``, reads
``\\d`` as Unicode and backtracks exponentially; and it is 27x to 97x faster.
It runs ECMA-262 patterns on Rust's linear-time ``regex`` engine, falling
back to ``fancy-regex`` with a backtracking budget only for look-around and
back-references.

Completions and schemas are both untrusted (an optimiser writes one, a
dataset the other), so every failure they can cause is a scored result:

* JSON is read with hard limits: ``NaN``/``Infinity`` are rejected (they are
  not JSON), as are number literals longer than ``MAX_NUMBER_CHARS`` or that
  overflow a float, strings with lone surrogates (not Unicode text), nesting
  deeper than ``MAX_DEPTH`` and text longer than ``max_chars``; a rejected
  value scores 0 like a missing one.
* A schema is compiled once, up front, by :mod:`reward_plugins.schemas.compiler`
  (shared with the ``tool_calls`` pack), and refused (the reward returns None
  and ``data check`` names the problem) when it is not JSON, not a schema,
  nested deeper than ``MAX_SCHEMA_DEPTH`` or longer than
  ``MAX_SCHEMA_CHARS``, names a ``$schema`` that is not a known draft, has a
  ``$ref`` or ``$dynamicRef`` that does not resolve inside it (the validator
  runs offline: a remote reference is never fetched) or a ``$recursiveRef``
  other than ``"#"``, or has a reference loop that never descends into the
  value (``{"$ref": "#"}``: the specification leaves its meaning undefined).
  jsonschema-rs resolves references while compiling, walking the schema by
  keyword position, so a property *named* ``enum`` or ``default`` is checked
  like any other.
* Validation runs in a worker process (``executor="process"``) under the
  reward's timeout; the rare schema whose error report is exponential (an
  ``anyOf`` of recursive branches) is stopped there and counted as a timeout.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from grpo_host import hookimpl, reward
from reward_plugins.schemas.compiler import (
    MAX_SCHEMA_CHARS,
    MAX_SCHEMA_DEPTH,
    Compiled,
    SchemaProblem,
    compile_schema,
    too_deep,
)

MAX_DEPTH = 64
"""Deepest nesting of arrays/objects accepted in a completion's JSON."""
MAX_NUMBER_CHARS = 64
"""Longest number literal accepted (a 10^5-digit integer is an attack, not an answer)."""
MAX_CANDIDATES = 16
"""How many fences, and how many `{`/`[` positions, are tried when the JSON is embedded in prose."""

_FENCE = re.compile(r"```(?:[ \t]*([\w+#.-]+))?[ \t]*\r?(?:\n|\Z)")
"""A fence line: ```, an optional language, the end of the line.  It never occurs inside a JSON value (a JSON
string holds no raw newline), so fences pair up in order whatever the JSON between them contains."""
_SURROGATE = re.compile("[\ud800-\udfff]")


class JsonRejected(ValueError):
    """The text is JSON-like but breaks a limit (NaN, depth, number size): it scores as no JSON."""


class JsonSchemaParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    strict: bool = Field(False, description="no partial credit: 1.0 when valid, 0.0 otherwise")
    max_chars: int = Field(
        100_000, ge=16, le=10_000_000, description="a completion longer than this scores 0.0 without being parsed"
    )


# -- reading JSON with limits -------------------------------------------------------------------------------------


class _Broken:
    """Stands in, while a completion is decoded, for a part that breaks a limit (NaN, a 70-digit number).

    Decoding goes on, so the candidate's extent is known: a value that is the
    answer (the whole text, a fenced block) is rejected, while prose that
    merely starts with "NaN" is not mistaken for one.
    """

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


def _parse_constant(name: str) -> _Broken:
    return _Broken(f"{name} is not JSON")


def _parse_int(text: str) -> int | _Broken:
    if len(text) > MAX_NUMBER_CHARS:
        return _Broken(f"number with {len(text)} characters")
    return int(text)


def _parse_float(text: str) -> float | _Broken:
    if len(text) > MAX_NUMBER_CHARS:
        return _Broken(f"number with {len(text)} characters")
    value = float(text)
    return _Broken(f"{text} overflows a float") if math.isinf(value) else value


_DECODER = json.JSONDecoder(parse_constant=_parse_constant, parse_int=_parse_int, parse_float=_parse_float)


def _value_problem(value: Any) -> str | None:
    """Why a decoded completion value breaks a limit, or None (iterative, like
    :func:`~reward_plugins.schemas.compiler.too_deep`).

    A :class:`_Broken` part, nesting deeper than ``MAX_DEPTH``, or a string or
    key with a lone surrogate (``"\\ud800"`` decodes to one; it is not Unicode
    text and cannot be handed to the validator).
    """
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, _Broken):
            return item.reason
        if isinstance(item, str):
            if not item.isascii() and _SURROGATE.search(item):
                return "a string holds a lone surrogate"
        elif isinstance(item, dict | list):
            if depth > MAX_DEPTH:
                return f"nesting deeper than {MAX_DEPTH}"
            if isinstance(item, dict):
                stack.extend((key, depth) for key in item)
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return None


def _decode_at(text: str, start: int) -> tuple[Any, int, str | None]:
    """Decode one JSON value at ``start``: ``(value, end, problem)``.  Raises ValueError when there is none."""
    try:
        value, end = _DECODER.raw_decode(text, start)
    except RecursionError:  # ~1,000 levels: an attack wherever it sits
        raise JsonRejected("nesting too deep") from None
    return value, end, _value_problem(value)


def _skip_space(text: str, start: int) -> int:
    while start < len(text) and text[start] in " \t\r\n":
        start += 1
    return start


def _candidates(text: str) -> Iterator[tuple[int, int | None]]:
    """Where the JSON may be, best first: ``(start, end)``, where only whitespace may lie between the value and
    ``end`` (None: anything may follow).

    The whole text first; then the blocks between paired fence lines whose
    info string is empty or ``json...``, last first (a final answer after a
    draft); then the first `{`/`[` positions.
    """
    yield 0, len(text)
    fences = list(_FENCE.finditer(text))
    blocks = [(opening, closing) for opening, closing in zip(fences[::2], fences[1::2], strict=False)
              if (opening.group(1) or "json").lower().startswith("json")]
    for opening, closing in reversed(blocks[-MAX_CANDIDATES:]):
        yield opening.end(), closing.start()
    starts = (m.start() for m in re.finditer(r"[\[{]", text))
    for _, start in zip(range(MAX_CANDIDATES), starts, strict=False):
        yield start, None


def extract_json(text: str) -> tuple[bool, Any]:
    """``(found, value)``: the completion's JSON value (bare, fenced, or the first `{...}`/`[...]` that parses).

    Raises :class:`JsonRejected` when the best complete candidate breaks a
    limit, so a NaN-laden or 10,000-deep answer is not rescued by a smaller
    fragment.
    """
    for start, end in _candidates(text):
        start = _skip_space(text, start)
        if start >= (len(text) if end is None else end):
            continue
        try:
            value, value_end, problem = _decode_at(text, start)
        except JsonRejected:
            raise
        except ValueError:
            continue
        if end is None or _skip_space(text, value_end) >= end:
            if problem:
                raise JsonRejected(problem)
            return True, value
    return False, None


# -- schemas --------------------------------------------------------------------------------------------------------


def _schema_key(schema: Any) -> str:
    return schema if isinstance(schema, str) else json.dumps(schema, sort_keys=True)


@lru_cache(maxsize=1024)
def _compiled(key: str) -> Compiled:
    """The compiled schema for one cache key, per worker (a group of completions shares its schema)."""
    return compile_schema(key)


def _compile_row_schema(schema: Any) -> Compiled:
    """Compile a row's schema through the cache; deep objects are refused before ``json.dumps`` recurses."""
    if isinstance(schema, dict) and too_deep(schema, MAX_SCHEMA_DEPTH):
        raise SchemaProblem(f"schema nesting deeper than {MAX_SCHEMA_DEPTH}")
    if not isinstance(schema, dict | bool | str):
        raise SchemaProblem(f"a schema is a JSON object or boolean, not {type(schema).__name__}")
    try:
        key = _schema_key(schema)
    except (TypeError, ValueError) as exc:  # a value JSON cannot hold (a row read from Python, not from a file)
        raise SchemaProblem(f"schema is not JSON data: {exc}") from None
    if len(key) > MAX_SCHEMA_CHARS:
        raise SchemaProblem(f"schema longer than {MAX_SCHEMA_CHARS:,} characters")
    return _compiled(key)


def schema_problem(schema: Any) -> str | None:
    """Why ``schema`` (an object, a boolean or JSON text) cannot be used, or None."""
    try:
        _compile_row_schema(schema)
    except SchemaProblem as exc:
        return str(exc)
    return None


# -- scoring --------------------------------------------------------------------------------------------------------


def partial_credit(schema: Any, value: Any, errors: Iterable[Any]) -> float:
    """The documented partial credit for an invalid ``value``, from its jsonschema-rs errors.

    Fields are the names in the root's ``properties`` and ``required`` (for an
    object) or the items (for an array).  An error inside a field fails that
    field; the root's own ``required`` failing for a name fails that field;
    every other error, a nested ``required`` (under ``allOf``, ``$ref``...)
    included, fails the ``rest``.  The root's own ``type`` failing gives 0.0.
    """
    if not isinstance(schema, dict) or not isinstance(value, dict | list):
        return 0.0
    if isinstance(value, dict):
        required = [r for r in schema.get("required", ()) if isinstance(r, str)] \
            if isinstance(schema.get("required"), list) else []
        properties = schema["properties"] if isinstance(schema.get("properties"), dict) else {}
        fields: list[Any] = sorted(set(properties) | set(required))
    else:
        fields = list(range(len(value)))
    field_set = set(fields)
    failed: set[Any] = set()
    rest_ok = True
    for error in errors:
        path, at = error.instance_path, error.schema_path
        if not path and at == ["type"]:
            return 0.0
        if path and path[0] in field_set:
            failed.add(path[0])
        elif not path and at == ["required"] and isinstance(value, dict):
            failed.add(error.kind.property)
        else:
            rest_ok = False  # additionalProperties, minItems, a nested required, an extra property's own error...
    passing = sum(1 for name in fields if name not in failed)
    return 0.5 * (passing + rest_ok) / (len(fields) + 1)


def score_value(compiled: Compiled, value: Any, *, strict: bool) -> float:
    """1.0 when ``value`` is valid, else 0.0 (strict) or its partial credit."""
    if compiled.validator.is_valid(value):
        return 1.0
    if strict:
        return 0.0
    return partial_credit(compiled.schema, value, compiled.validator.iter_errors(value))


def score_completion(compiled: Compiled, completion: str, params: JsonSchemaParams) -> float:
    """The reward's score of one completion against an already compiled schema (see the reward's description)."""
    if len(completion) > params.max_chars:
        return 0.0
    try:
        found, value = extract_json(completion)
    except JsonRejected:
        return 0.0
    if not found:
        return 0.0
    return score_value(compiled, value, strict=params.strict)


def check_schema_row(row: Mapping[str, Any]) -> str | None:
    """Row check for ``data check``: every schema the reward would refuse, with the reason."""
    schema = row.get("schema")
    if schema is None or schema == "" or schema == {}:
        return None  # the column check reports it as empty or missing
    if not isinstance(schema, dict | str | bool) and schema not in (0, 1):
        return None  # the column check reports the wrong type; it lets 0 and 1 through as booleans (pydantic)
    return schema_problem(schema)


@reward(
    name="json_schema",
    requires={"schema": dict | str | bool},
    empty_ok=("schema",),  # {} is the schema that accepts everything
    params=JsonSchemaParams,
    executor="process",
    timeout=5.0,
    check_row=check_schema_row,
    examples=[
        {"completion": '{"name": "Ada", "age": 36}',
         "schema": {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
                    "required": ["name", "age"]}, "score": 1.0},
        {"completion": 'Here you go:\n```json\n{"name": "Ada", "age": "36"}\n```',
         "schema": {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
                    "required": ["name", "age"]}, "score": 1 / 3},
        {"completion": 'Sure: {"name": "Ada"} hope that helps',
         "schema": {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
                    "required": ["name", "age"], "additionalProperties": False}, "score": 1 / 3},
        {"completion": '{"bar": 1}',
         "schema": {"allOf": [{"properties": {"bar": {"type": "integer"}}, "required": ["bar"]},
                              {"properties": {"foo": {"type": "string"}}, "required": ["foo"]}]}, "score": 0.0},
        {"completion": "[1, 2, \"three\"]", "schema": {"type": "array", "items": {"type": "integer"}}, "score": 0.375},
        {"completion": '{"x": NaN}', "schema": {"type": "object"}, "score": 0.0},
        {"completion": "no JSON here", "schema": '{"type": "object"}', "score": 0.0},
        {"completion": "anything", "schema": {"$ref": "#"}, "score": None},
    ],
)
def json_schema(completion: str, *, schema: Any, params: JsonSchemaParams, **_) -> float | None:
    """1.0 when the completion's JSON value validates against the row's `schema` (an object, true/false, or
    JSON text; jsonschema-rs, offline; Draft 2020-12 unless `$schema` names draft 4, 6, 7 or 2019-09; ECMA-262
    regexes), else partial credit or 0.0.  None (not applicable) when the schema is refused: not JSON, not a
    valid schema, nested deeper than 128 or longer than 1,000,000 characters, an unknown `$schema`, a $ref or
    $dynamicRef that does not resolve inside the schema (remote references are never fetched), a $recursiveRef
    other than "#", or a reference loop that never descends into the value such as {"$ref": "#"}; `data check`
    names each of these.  The JSON value is the whole
    completion, else the last ```json (or plain ```) fenced block, else the first {...} or [...] in the text that
    parses.  0.0 when there is none, or when it contains NaN or Infinity, a number literal over 64 characters or
    overflowing a float, a lone surrogate, nesting deeper than 64, or the completion is longer than max_chars.
    Partial credit for an invalid value (strict=false): 0.0 when the schema is a boolean, the value is neither
    an object nor an array, or the root schema's own `type` fails; otherwise 0.5 x (passing fields + rest) /
    (fields + 1).  For an object the fields are the names in the root schema's `properties` and `required`; a
    field fails when an error lies inside it, or when it is absent and named by the root's own `required`.
    For an array the fields are its items, failing when an error lies inside them.  `rest` is 1 when no other
    error exists: additionalProperties, minItems, and any error from a nested subschema about the whole
    value (a `required` under allOf or $ref included) make it 0.  With strict=true an invalid value scores 0.0.
    A pattern needing look-around or back-references that exceeds 1,000,000 backtracking steps fails the
    value.  Each item runs in a worker process under the timeout (default 5 s); a timed-out item scores None
    and is counted."""
    try:
        compiled = _compile_row_schema(schema)
    except SchemaProblem:
        return None
    return score_completion(compiled, completion, params)


@hookimpl
def register_rewards(register):
    register(json_schema)


@hookimpl
def register_probes(register):
    """The attacks ``grpo-host audit`` tries on JSON rewards, and the schema's example as the reference."""
    from . import probes

    for item in (probes.json_minimal, probes.json_keys_only, probes.json_empty_values, probes.json_schema_echo,
                 probes.json_example):
        register.add_probe(item)
