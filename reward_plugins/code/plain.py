"""Plain data across the sandbox's walls: builtin values to tagged JSON and back, and nothing else.

Both assert paths (see ``docs/sandbox.md``) hand a candidate's return
values out of its process as data, and a judge compares them with
the expected values in a process the candidate never ran in.  That only
holds if what crosses is inert: no object whose ``__eq__``, ``__bool__`` or
``__hash__`` the candidate wrote.  So only the exact builtin types a test
literal can produce are encoded (``None``, ``bool``, ``int``, ``float``,
``complex``, ``str``, ``bytes`` and ``list``, ``tuple``, ``set``,
``frozenset``, ``dict`` of them, and ``bytearray``, which a script's
in-place mutation of an argument must carry back), and the standard
library's containers that honest programs return in their place:
``collections.Counter``, ``OrderedDict``, ``defaultdict`` (its factory only
when it is a builtin type: any other is code), ``deque`` and the classes ``namedtuple`` and
``typing.NamedTuple`` make (with no method of the program's own), and the
builtin classes themselves (``int``, ``ValueError``), by name.  A
subclass or any other type raises :class:`NotPlain`, and the case fails.
Decoding builds fresh objects of those exact types from JSON (a namedtuple
class from its validated names), so even a candidate that wrote its own
bytes can only ever hand over plain values, and each compares as the same
type would in the candidate's process: a ``Counter`` ignores zero counts
against a ``Counter``, an ``OrderedDict`` minds order against another, a
``deque`` never equals a ``list``.

Script mode's judge talks to the program's process with the same nodes
(:func:`tag`, :func:`untag`): there an object that is not plain crosses as a
*reference* (``{"h": n}``), given by the caller's ``ref`` and resolved by its
``deref`` (the judge's proxies, the program's own objects), never as the
object itself.

Stdlib only: the sandbox's server imports this file directly.
"""

import builtins
import json
from collections import Counter, OrderedDict, defaultdict, deque, namedtuple

__all__ = ["MARSHAL_TYPES", "MAX_DEPTH", "NotPlain", "decode", "dumps", "encode", "key", "marshallable", "tag",
           "untag"]

MAX_DEPTH = 100
"""Deepest nesting encoded or decoded (also what stops a self-containing list)."""
BIG = 1 << 1024
"""Integers of this size or larger cross as hex (``{"i": ...}``)."""


CLASS_KEYS = frozenset({"__module__", "__qualname__", "__doc__", "__slots__", "__firstlineno__",
                        "__static_attributes__"})
"""What any class body holds (3.13 adds the last two): a subclass with no more than these adds nothing."""
NAMEDTUPLE_KEYS = (frozenset(namedtuple("_", "a").__dict__) - {"a"}
                   | {"__annotations__", "__orig_bases__", "__parameters__", "__class_getitem__"} | CLASS_KEYS)
"""What a class made by ``namedtuple`` or ``typing.NamedTuple`` (generic or not) holds besides its fields: with
anything more it has methods of its own, and crosses as an object."""
TYPES = {name: kind for name, kind in vars(builtins).items() if type(kind) is type and not name.startswith("_")}
"""The builtin classes (``int``, ``str``, ``ValueError``...), which cross by name: a test passes ``int`` to a
program (MBPP 533's ``remove_datatype(t, int)``), and each side gets its own interpreter's class."""
TYPE_NAMES = {kind: name for name, kind in TYPES.items()}
FACTORIES = {factory: factory.__name__ for factory in (list, dict, set, int, float, str, bytes, tuple, frozenset,
                                                       bool, complex, bytearray)}
"""The ``defaultdict`` factories that cross with it (builtin types, named): any other is code, and the
``defaultdict`` crosses as a plain ``dict``."""
FACTORY_NAMES = {name: factory for factory, name in FACTORIES.items()}
NEW_CLASSES = 32
"""Namedtuple classes one decoded value may make (each is compiled): a value of many distinct ones is refused,
so no line of a program's makes the shared collector compile for seconds."""
_namedtuples: dict = {}  # (typename, fields) -> the class decoding made for them, the 256 newest
_made = [0]  # classes made for the value being decoded


class NotPlain(ValueError):
    """A value that is not made only of exact builtin types (or nests deeper than :data:`MAX_DEPTH`)."""


def _is_namedtuple(kind) -> bool:
    """Whether ``kind`` is a namedtuple class and nothing more: made by ``namedtuple`` or ``typing.NamedTuple``
    (generic or not), or a subclass of one that adds no attribute (``__slots__ = ()`` aside)."""
    bases = kind.__bases__
    if bases[:1] == (tuple,):
        fields = kind.__dict__.get("_fields")
        return (all(b is tuple or (b.__module__, b.__qualname__) == ("typing", "Generic") for b in bases)
                and type(fields) is tuple and all(type(f) is str for f in fields)
                and set(kind.__dict__) - set(fields) <= NAMEDTUPLE_KEYS)
    return len(bases) == 1 and set(kind.__dict__) <= CLASS_KEYS and _is_namedtuple(bases[0])


def _namedtuple(typename, fields):
    """The class decoding builds a namedtuple with: made by ``namedtuple`` itself (``rename``: a name that is not
    an identifier becomes ``_1``, as the program's own ``rename=True`` made it), so nothing of the program's
    runs; at most :data:`NEW_CLASSES` per decoded value."""
    if type(typename) is not str or type(fields) is not list or not all(type(f) is str for f in fields):
        raise ValueError("a namedtuple's names must be a string and a list of strings")
    made = _namedtuples.get((typename, tuple(fields)))
    if made is None:
        if len(fields) > 255 or sum(map(len, (typename, *fields))) > 4096:  # the class is compiled: keep it small
            raise ValueError("a namedtuple of over 255 fields or 4096 characters of names")
        _made[0] += 1
        if _made[0] > NEW_CLASSES:
            raise ValueError(f"over {NEW_CLASSES} namedtuple classes in one value")
        made = namedtuple(typename, fields, rename=True)
        if len(_namedtuples) >= 256:
            del _namedtuples[next(iter(_namedtuples))]
        _namedtuples[(typename, tuple(fields))] = made
    return made


dumps = json.JSONEncoder(separators=(",", ":")).encode
"""Compact JSON (``json.dumps(value, separators=(",", ":"))``) from one encoder made once, not one per value: a
program's process encodes each of its results with it, and every object ``json.dumps`` makes is paid in copied
pages there."""


def encode(value) -> str:
    """One line of JSON for a plain value; raises :class:`NotPlain` for anything else."""
    return dumps(tag(value))


def tag(value, ref=None, depth=0):
    """The JSON node of ``value``; anything not plain becomes ``{"h": ref(value)}`` when ``ref`` gives an int for
    it, else raises :class:`NotPlain`."""
    kind = type(value)
    if value is None or kind is bool or kind is str:
        return value
    if kind is int:  # a long one as hex: a decimal text beyond 4300 digits is refused both ways (int_max_str_digits)
        return value if -BIG < value < BIG else {"i": format(value, "x")}
    if depth >= MAX_DEPTH:
        raise NotPlain(f"nested deeper than {MAX_DEPTH}")
    if kind is float:
        return {"f": value.hex()}
    if kind is list:
        return [tag(v, ref, depth + 1) for v in value]
    if kind is tuple:
        return {"t": [tag(v, ref, depth + 1) for v in value]}
    if kind is dict:
        return {"d": [[tag(k, ref, depth + 1), tag(v, ref, depth + 1)] for k, v in value.items()]}
    if kind is set or kind is frozenset:
        return {"s" if kind is set else "z": [tag(v, ref, depth + 1) for v in value]}
    if kind is bytes:
        return {"b": value.hex()}
    if kind is complex:
        return {"c": [value.real.hex(), value.imag.hex()]}
    if kind is bytearray:
        return {"y": value.hex()}
    if kind is type and value in TYPE_NAMES:
        return {"T": TYPE_NAMES[value]}
    if kind is Counter or kind is OrderedDict or kind is defaultdict:
        items = [[tag(k, ref, depth + 1), tag(v, ref, depth + 1)] for k, v in value.items()]
        if kind is defaultdict:
            made = value.default_factory
            factory = "None" if made is None else FACTORIES.get(made) if type(made) is type else None
            return {"e": [factory, items]} if factory else {"d": items}
        return {"k" if kind is Counter else "o": items}
    if kind is deque:
        return {"q": [[tag(v, ref, depth + 1) for v in value], value.maxlen]}
    if issubclass(kind, tuple) and _is_namedtuple(kind):
        return {"n": [kind.__name__, list(kind._fields), [tag(v, ref, depth + 1) for v in tuple.__iter__(value)]]}
    if ref is not None and type(handle := ref(value)) is int:
        return {"h": handle}
    raise NotPlain(f"{kind.__module__}.{kind.__qualname__} is not a builtin value")


def decode(text: str):
    """The value :func:`encode` wrote; raises ValueError for anything it would not have written (and for nothing
    else: a program's bytes reach the collector and the judge through here, and no line may end either)."""
    try:
        return untag(json.loads(text))
    except ValueError:
        raise
    except Exception as exc:  # RecursionError of a deep JSON text, MemoryError
        raise ValueError(f"not plain data: {type(exc).__name__}") from None


def untag(node, deref=None, depth=0):
    """The value of a :func:`tag` node, references resolved by ``deref`` (an int to an object; without it a
    reference is refused); raises ValueError for anything :func:`tag` would not have written."""
    if node is None or type(node) in (bool, int, str):
        return node
    if depth == 0:
        _made[0] = 0
    if depth >= MAX_DEPTH:
        raise ValueError(f"nested deeper than {MAX_DEPTH}")
    if type(node) is list:
        return [untag(v, deref, depth + 1) for v in node]
    if type(node) is not dict or len(node) != 1:
        raise ValueError("not a tagged plain value")
    ((kind, body),) = node.items()
    try:
        if kind == "f":
            return float.fromhex(body)
        if kind == "b":
            return bytes.fromhex(body)
        if kind == "y":
            return bytearray.fromhex(body)
        if kind == "i" and type(body) is str:
            return int(body, 16)
        if kind == "c":
            return complex(float.fromhex(body[0]), float.fromhex(body[1]))
        if kind == "h":
            if deref is None or type(body) is not int:
                raise ValueError("a reference where plain data was expected")
            return deref(body)
        if kind == "T":
            if type(body) is not str or body not in TYPES:
                raise ValueError(f"not the name of a builtin class: {body!r}")
            return TYPES[body]
        if kind == "q":
            items, maxlen = body
            if maxlen is not None and type(maxlen) is not int:
                raise ValueError("a deque's maxlen must be an int or None")
            return deque(untag(items, deref, depth + 1), maxlen)
        if kind == "n":
            typename, fields, items = body
            return _namedtuple(typename, fields)(*untag(items, deref, depth + 1))
        if kind == "e":
            factory, items = body
            if factory != "None" and factory not in FACTORY_NAMES:
                raise ValueError(f"a defaultdict's factory is a builtin type's name, not {factory!r}")
            return defaultdict(FACTORY_NAMES.get(factory), dict(untag(items, deref, depth + 1)))
        items = [untag(v, deref, depth + 1) for v in body]
        if kind == "t":
            return tuple(items)
        if kind == "s":
            return set(items)
        if kind == "z":
            return frozenset(items)
        if kind == "d":
            return dict(items)
        if kind == "k":
            return Counter(dict(items))
        if kind == "o":
            return OrderedDict(items)
    except ValueError:
        raise
    except Exception as exc:  # unhashable keys, malformed pairs, a non-string hex, float.fromhex's OverflowError
        raise ValueError(f"malformed {kind!r} value: {type(exc).__name__}") from None
    raise ValueError(f"unknown tag {kind!r}")


MARSHAL_TYPES = frozenset({type(None), bool, int, float, complex, str, bytes, tuple, list, dict})
"""The plain types :mod:`marshal` writes and reads back as the same exact type, built in the same order (it would
write a ``bytearray`` and read back ``bytes``, and refuses the standard library's containers and classes).  Not
sets: marshal writes a set in the writer's iteration order, and a set built in another order may iterate in
another (colliding hashes), where :func:`decode` builds it in the order of the test's literal."""


def marshallable(value, depth=0) -> bool:
    """Whether ``value`` is made only of :data:`MARSHAL_TYPES`, so that ``marshal.loads(marshal.dumps(value, 2))``
    is an equal value of the same types throughout (version 2 writes no back-references: every occurrence of an
    object is read back as an object of its own, as :func:`decode` makes them)."""
    kind = type(value)
    if kind not in MARSHAL_TYPES or depth >= MAX_DEPTH:
        return False
    if kind is dict:
        return all(marshallable(k, depth + 1) and marshallable(v, depth + 1) for k, v in value.items())
    if kind is tuple or kind is list:
        return all(marshallable(v, depth + 1) for v in value)
    return True


def key(value, other=None):
    """A hashable key of a plain value, equal for values that Python's ``==`` makes equal (``5``, ``5.0``, ``True``
    and ``5+0j`` by number; a set and a frozenset; bytes and a bytearray; a namedtuple and its tuple; a Counter and
    the same Counter with zero counts, so every mapping's key leaves zero values out, which makes some unequal
    mappings share a key: the theft rule then reruns a call it need not), so that a value can be looked up among
    others by equality in constant time; ``other(value)`` keys anything else (a judge's proxy), else its ``id``."""
    kind = type(value)
    if value is None or kind in (bool, int, float, complex, str, bytes) or kind is type and value in TYPE_NAMES:
        return value
    if kind is bytearray:
        return bytes(value)
    if kind is list or kind is tuple or kind is deque or issubclass(kind, tuple) and _is_namedtuple(kind):
        return ("list" if kind is list else "deque" if kind is deque else "tuple", tuple(key(v, other) for v in value))
    if kind is set or kind is frozenset:
        return ("set", frozenset(key(v, other) for v in value))
    if kind is dict or kind is Counter or kind is OrderedDict or kind is defaultdict:  # zero values left out: a
        return ("dict", frozenset((key(k, other), key(v, other)) for k, v in value.items()  # Counter equals one
                                  if type(v) not in (int, float, bool, complex) or v != 0))  # without its zeros
    return ("object", other(value) if other is not None else id(value))
