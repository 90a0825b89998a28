"""Compiling an untrusted JSON Schema: checked, offline, refused with a reason instead of hanging or fetching.

Shared by the ``json_schema`` pack (a row's ``schema``) and the
``tool_calls`` pack (a tool's ``parameters``): both take schemas from a
dataset, so both need the same refusals, and neither may build on the
other's insides.  The validator is ``jsonschema-rs``, built with
``offline=True`` (a remote ``$ref`` is never fetched) and a backtracking
budget for look-around and back-reference patterns; a schema that is not
JSON, not a schema, too deep or too long, names an unknown ``$schema``,
has a ``$ref`` that does not resolve inside it, a ``$recursiveRef`` other
than ``"#"`` or a reference loop that never descends into the value is a
:class:`SchemaProblem` whose message says why (``data check`` prints it).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, NamedTuple

__all__ = ["MAX_SCHEMA_CHARS", "MAX_SCHEMA_DEPTH", "REGEX_BACKTRACK_LIMIT", "Compiled", "SchemaProblem",
           "compile_schema", "too_deep"]

MAX_SCHEMA_DEPTH = 128
"""Deepest nesting of a schema's JSON (jsonschema-rs itself refuses a little deeper)."""
MAX_SCHEMA_CHARS = 1_000_000
"""Longest schema accepted, as JSON text: compiling one runs in Rust, out of reach of the worker's alarm."""
REGEX_BACKTRACK_LIMIT = 1_000_000
"""Backtracking steps a look-around/back-reference pattern may take per match before that value fails it."""


def too_deep(value: Any, limit: int) -> bool:
    """Iterative depth check: a recursive one would itself blow the stack on a 10,000-deep value."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return True
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return False


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


class SchemaProblem(ValueError):
    """The row's schema is unusable; the message says why (for ``data check``)."""


class Compiled(NamedTuple):
    """A row's schema, checked and compiled: the parsed schema and its jsonschema-rs validator."""

    schema: dict | bool
    validator: Any


def compile_schema(schema: Any, *, registry: Any = None) -> Compiled:
    """Check and compile ``schema`` (an object, a boolean, or JSON text); raise :class:`SchemaProblem`.

    ``registry`` (a ``jsonschema_rs.Registry``) supplies extra documents that
    ``$ref`` and ``$schema`` may name, from memory; the reward passes none.
    Nothing is ever fetched: the validator is built with ``offline=True``.
    """
    import jsonschema_rs

    if isinstance(schema, str):
        if len(schema) > MAX_SCHEMA_CHARS:
            raise SchemaProblem(f"schema longer than {MAX_SCHEMA_CHARS:,} characters")
        try:
            schema = json.loads(schema, parse_constant=_reject_constant)
        except RecursionError:
            raise SchemaProblem(f"schema nesting deeper than {MAX_SCHEMA_DEPTH}") from None
        except ValueError as exc:
            raise SchemaProblem(f"schema is not valid JSON: {exc}") from None
    if not isinstance(schema, dict | bool):
        raise SchemaProblem(f"a schema is a JSON object or boolean, not {type(schema).__name__}")
    if too_deep(schema, MAX_SCHEMA_DEPTH):
        raise SchemaProblem(f"schema nesting deeper than {MAX_SCHEMA_DEPTH}")
    options = {
        "registry": registry,
        "offline": True,
        "pattern_options": jsonschema_rs.FancyRegexOptions(backtrack_limit=REGEX_BACKTRACK_LIMIT),
    }
    if isinstance(schema, dict) and "$schema" in schema:
        dialect = schema["$schema"]
        try:
            jsonschema_rs.validator_for({"$schema": dialect}, **options)
        except ValueError:
            raise SchemaProblem(
                f"unknown $schema {dialect!r}: known drafts are 4, 6, 7, 2019-09 and 2020-12 "
                "(a custom meta-schema is never fetched)"
            ) from None
    try:
        validator = jsonschema_rs.validator_for(schema, **options)
    except jsonschema_rs.ValidationError as exc:
        raise SchemaProblem(_describe(exc)) from None
    except ValueError as exc:  # the schema is nested too deep for the compiler, or holds a lone surrogate
        raise SchemaProblem(f"schema cannot be compiled: {exc}") from None
    problem = _walk_problem(schema)
    if problem:
        raise SchemaProblem(problem)
    return Compiled(schema, validator)


def _describe(exc: Any) -> str:
    import jsonschema_rs

    message = exc.message.split("\n", 1)[0]
    if isinstance(exc.kind, jsonschema_rs.ValidationErrorKind.Referencing):
        return f"a reference does not resolve inside the schema (remote references are never fetched): {message}"
    where = "/".join(map(str, exc.instance_path)) or "(root)"
    return f"invalid schema at {where}: {message}"


# Where subschemas sit, by keyword: those applied to the value itself (a cycle of them never ends), and those
# applied to a part of it or kept for references ($defs), which the walk visits but which cannot loop.  A
# keyword's value is one subschema (an object), a list of them, or, for the map keywords, an object of them.
_SAME_VALUE = ("allOf", "anyOf", "oneOf", "not", "if", "then", "else")
_SAME_VALUE_MAPS = {"legacy": ("dependencies",), "modern": ("dependentSchemas",)}
_PARTS = ("items", "additionalItems", "prefixItems", "additionalProperties", "contains", "propertyNames",
          "unevaluatedItems", "unevaluatedProperties")
_PART_MAPS = ("properties", "patternProperties", "$defs", "definitions")
_REFS = {"draft2020-12": ("$ref", "$dynamicRef"), "draft2019-09": ("$ref", "$recursiveRef")}
_LEGACY = {"draft-03", "draft-04", "draft-06", "draft-07"}  # drafts where "$ref" makes its siblings ignored


def _walk_problem(schema: Any) -> str | None:
    """What jsonschema-rs would get wrong or never finish, found by walking the schema by keyword position.

    * A cycle of subschemas applied to one and the same value (``{"$ref": "#"}``,
      a -> b -> a, ``{"allOf": [{"$ref": "#"}]}``): evaluation never ends, and
      the specification leaves its meaning undefined.  References are
      resolved statically (a ``$dynamicRef`` by its initial target) with
      ``referencing`` and followed only inside the row's own document;
      ``items``, ``properties`` and the like descend into a part of the
      value, which bounds them by the value's depth, so they end a cycle.
    * A draft 2019-09 ``$recursiveRef`` other than ``"#"``: jsonschema-rs
      reads every ``$recursiveRef`` as ``"#"``, so another target (remote or
      missing included) would be validated against the wrong schema.

    Iterative, so a deep schema cannot exhaust the stack.
    """
    if not isinstance(schema, dict):
        return None
    import referencing
    import referencing.jsonschema

    spec = referencing.jsonschema.specification_with(
        schema.get("$schema", ""), default=referencing.jsonschema.DRAFT202012
    )
    legacy = spec.name in _LEGACY
    same_value_maps = _SAME_VALUE_MAPS["legacy" if legacy else "modern"]
    refs = _REFS.get(spec.name, ("$ref",))
    pointers = _pointers(schema)
    root = referencing.Registry().resolver_with_root(spec.create_resource(schema))
    in_place: dict[int, list[int]] = {}  # reachable subschema -> the subschemas it applies to the same value
    seen = {id(schema)}
    stack = [(schema, root)]
    while stack:
        node, resolver = stack.pop()
        if node is not schema and ("$id" in node or "id" in node):
            resolver = resolver.in_subresource(spec.create_resource(node))
        if spec.name == "draft2019-09" and node.get("$recursiveRef", "#") != "#":
            return (f"$recursiveRef {node['$recursiveRef']!r} at {pointers[id(node)]}: only '#' is supported "
                    "(the validator reads every $recursiveRef as '#')")
        same: list[dict] = []
        for key in refs:
            ref = node.get(key)
            if isinstance(ref, str):
                try:
                    resolved = resolver.lookup(ref)
                except Exception:  # noqa: BLE001 - jsonschema-rs resolved it already; a gap here only skips an edge
                    continue
                if id(resolved.contents) in pointers and isinstance(resolved.contents, dict):
                    same.append(resolved.contents)
                    if id(resolved.contents) not in seen:
                        seen.add(id(resolved.contents))
                        stack.append((resolved.contents, resolved.resolver))
        parts: list[dict] = []
        if not (legacy and "$ref" in node):
            same += _subschemas(node, _SAME_VALUE, same_value_maps)
            parts = _subschemas(node, _PARTS, _PART_MAPS)
        in_place[id(node)] = [id(child) for child in same]
        for child in same + parts:
            if id(child) not in seen:
                seen.add(id(child))
                stack.append((child, resolver))
    loop = _find_cycle(in_place, pointers)
    return f"reference loop that never descends into the value: {' -> '.join(loop)}" if loop else None


def _subschemas(node: dict, keywords: Iterable[str], map_keywords: Iterable[str]) -> list[dict]:
    """The object subschemas under ``keywords`` (one, or a list) and ``map_keywords`` (an object of them)."""
    out = []
    for key in keywords:
        value = node.get(key)
        out += [value] if isinstance(value, dict) else [v for v in value if isinstance(v, dict)] \
            if isinstance(value, list) else []
    for key in map_keywords:
        value = node.get(key)
        if isinstance(value, dict):
            out += [v for v in value.values() if isinstance(v, dict)]
    return out


def _pointers(schema: Any) -> dict[int, str]:
    """JSON pointer of every object in the document, keyed by ``id`` (identity: equal objects are distinct)."""
    out: dict[int, str] = {}
    stack = [(schema, "#")]
    while stack:
        node, pointer = stack.pop()
        items: Iterable[tuple[Any, Any]]
        if isinstance(node, dict):
            out[id(node)] = pointer
            items = node.items()
        elif isinstance(node, list):
            items = enumerate(node)
        else:
            continue
        for key, child in items:
            stack.append((child, f"{pointer}/{str(key).replace('~', '~0').replace('/', '~1')}"))
    return out


def _find_cycle(graph: dict[int, list[int]], pointers: dict[int, str]) -> list[str] | None:
    """The first cycle in ``graph`` (iterative three-colour DFS), as pointers, or None."""
    state: dict[int, int] = {}  # 1: on the current path, 2: done
    for start in graph:
        if start in state:
            continue
        path = [start]
        state[start] = 1
        iterators = [iter(graph.get(start, ()))]
        while iterators:
            child = next(iterators[-1], None)
            if child is None:
                state[path.pop()] = 2
                iterators.pop()
            elif state.get(child) == 1:
                cycle = path[path.index(child):] + [child]
                return [pointers.get(n, "?") for n in cycle]
            elif child not in state:
                state[child] = 1
                path.append(child)
                iterators.append(iter(graph.get(child, ())))
    return None
