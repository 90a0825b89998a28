"""Plain data across the sandbox's walls: builtin values to tagged JSON and back, and nothing else.

The unforgeable assert path (see ``docs/sandbox.md``) hands a candidate's
return values out of its process as data, and the judge compares them with
the expected values in a process the candidate never ran in.  That only
holds if what crosses is inert: no object whose ``__eq__``, ``__bool__`` or
``__hash__`` the candidate wrote.  So only the exact builtin types a test
literal can produce are encoded (``None``, ``bool``, ``int``, ``float``,
``complex``, ``str``, ``bytes`` and ``list``, ``tuple``, ``set``,
``frozenset``, ``dict`` of them); a subclass or any other type raises
:class:`NotPlain`, and the case fails.  Decoding builds fresh builtin
objects from JSON, so even a candidate that wrote its own bytes can only
ever hand over plain values.

Stdlib only: the sandbox's server imports this file directly.
"""

import json

__all__ = ["MAX_DEPTH", "NotPlain", "copy", "decode", "encode"]

MAX_DEPTH = 100
"""Deepest nesting encoded or decoded (also what stops a self-containing list)."""


class NotPlain(ValueError):
    """A value that is not made only of exact builtin types (or nests deeper than :data:`MAX_DEPTH`)."""


def encode(value) -> str:
    """One line of JSON for a plain value; raises :class:`NotPlain` for anything else."""
    return json.dumps(_tag(value, 0), separators=(",", ":"))


def _tag(value, depth):
    kind = type(value)
    if value is None or kind is bool or kind is str or kind is int:
        return value
    if depth >= MAX_DEPTH:
        raise NotPlain(f"nested deeper than {MAX_DEPTH}")
    if kind is float:
        return {"f": value.hex()}
    if kind is list:
        return [_tag(v, depth + 1) for v in value]
    if kind is tuple:
        return {"t": [_tag(v, depth + 1) for v in value]}
    if kind is dict:
        return {"d": [[_tag(k, depth + 1), _tag(v, depth + 1)] for k, v in value.items()]}
    if kind is set or kind is frozenset:
        return {"s" if kind is set else "z": [_tag(v, depth + 1) for v in value]}
    if kind is bytes:
        return {"b": value.hex()}
    if kind is complex:
        return {"c": [value.real.hex(), value.imag.hex()]}
    raise NotPlain(f"{kind.__module__}.{kind.__qualname__} is not a builtin value")


_SCALARS = frozenset({type(None), bool, int, float, complex, str, bytes})


def copy(value, depth=0):
    """What ``decode(encode(value))`` gives, without the text: scalars of exact builtin types as they are (no
    method of theirs is the program's), containers rebuilt; raises :class:`NotPlain` for anything else."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if depth >= MAX_DEPTH:
        raise NotPlain(f"nested deeper than {MAX_DEPTH}")
    if kind is list:
        return [copy(v, depth + 1) for v in value]
    if kind is tuple:
        return tuple(copy(v, depth + 1) for v in value)
    if kind is dict:
        return {copy(k, depth + 1): copy(v, depth + 1) for k, v in value.items()}
    if kind is set or kind is frozenset:
        return kind(copy(v, depth + 1) for v in value)
    raise NotPlain(f"{kind.__module__}.{kind.__qualname__} is not a builtin value")


def decode(text: str):
    """The value :func:`encode` wrote; raises ValueError for anything it would not have written."""
    return _untag(json.loads(text), 0)


def _untag(node, depth):
    if node is None or type(node) in (bool, int, str):
        return node
    if depth >= MAX_DEPTH:
        raise ValueError(f"nested deeper than {MAX_DEPTH}")
    if type(node) is list:
        return [_untag(v, depth + 1) for v in node]
    if type(node) is not dict or len(node) != 1:
        raise ValueError("not a tagged plain value")
    ((tag, body),) = node.items()
    try:
        if tag == "f":
            return float.fromhex(body)
        if tag == "b":
            return bytes.fromhex(body)
        if tag == "c":
            return complex(float.fromhex(body[0]), float.fromhex(body[1]))
        items = [_untag(v, depth + 1) for v in body]
        if tag == "t":
            return tuple(items)
        if tag == "s":
            return set(items)
        if tag == "z":
            return frozenset(items)
        if tag == "d":
            return dict(items)
    except (TypeError, IndexError, AttributeError) as exc:  # unhashable keys, malformed pairs, a non-string hex
        raise ValueError(f"malformed {tag!r} value: {exc}") from None
    raise ValueError(f"unknown tag {tag!r}")
