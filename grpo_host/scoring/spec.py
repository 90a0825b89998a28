"""Reward specs: which rewards, with which weights and parameters.

Two spellings of one thing.  On the command line a string,
``"accuracy:2, r1_strict_format:0.5, math(tolerance=1e-6):1 [timeout=10, on_error=skip]"``;
in YAML a list of ``{name, weight, params, on_error, timeout}``.  In the
string, parentheses hold the reward's own parameters and the bracket after
the weight holds the host's policies for it, so the two never share a
namespace.  Both parse to a list of :class:`SpecItem`, validated by pydantic
so a bad key is named.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import SpecError
from .policy import OnError

__all__ = ["SpecItem", "parse_spec"]


class SpecItem(BaseModel):
    """One reward in an ensemble."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="registered reward name")
    weight: float = Field(1.0, allow_inf_nan=False,
                          description="multiplier in the total; 0 logs the reward without training on it")
    params: dict[str, Any] = Field(default_factory=dict, description="validated against the reward's params model")
    on_error: OnError = Field(
        "auto",
        description="what a reward that raises on a row does: auto (default): the row scores None and is counted "
        "as an error, but the run stops, naming the reward and its pack, once the reward has failed on "
        "BUG_STREAK rows in a row (a bug in the pack, not a bad row); skip: always count and go on; "
        "raise: stop at the first error",
    )
    timeout: float | None = Field(None, gt=0, allow_inf_nan=False,
                                  description="per-item seconds; None: the reward's own default")


_ITEM = re.compile(
    r"^\s*(?P<name>[A-Za-z_][\w.\-]*)\s*(?:\((?P<params>.*)\))?\s*(?::\s*(?P<weight>[^:()\[\]]+?))?"
    r"\s*(?:\[(?P<policies>[^\[\]]*)\])?\s*$",
    re.S,
)
POLICIES = ("on_error", "timeout")
"""The keys a spec string's bracket may set (the same keys as a YAML entry's)."""


def _split_top(text: str, sep: str = ",") -> list[str]:
    """Split on ``sep`` outside brackets and quotes."""
    parts, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def _value(text: str) -> Any:
    text = text.strip()
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("none", "null"):
        return None
    if text.startswith("[") and text.endswith("]"):
        inner = text[1:-1].strip()
        return [_value(p) for p in _split_top(inner)] if inner else []
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text  # a bare word: a string


def _parse_string(spec: str) -> list[dict[str, Any]]:
    items = []
    for part in _split_top(spec):
        if not part.strip():
            continue
        m = _ITEM.match(part)
        if not m:
            raise SpecError(
                f"cannot parse {part.strip()!r} in reward spec {spec!r}: "
                "expected name[(param=value, ...)][:weight][ [on_error=..., timeout=...]]"
            )
        item: dict[str, Any] = {"name": m["name"], "params": _pairs(m["params"], "parameter", m["name"])}
        policies = _pairs(m["policies"], "policy", m["name"])
        unknown = sorted(set(policies) - set(POLICIES))
        if unknown:
            raise SpecError(f"unknown policy {unknown[0]!r} for {m['name']!r} in [...]: the bracket sets "
                            f"{' and '.join(POLICIES)}; the reward's own parameters go in (...)")
        item.update(policies)
        if m["weight"] is not None:
            try:
                item["weight"] = float(m["weight"])
            except ValueError:
                raise SpecError(f"weight {m['weight']!r} of {m['name']!r} is not a number") from None
        items.append(item)
    return items


def _pairs(text: str | None, what: str, name: str) -> dict[str, Any]:
    """``key=value, ...`` as a dict (values read by :func:`_value`)."""
    out: dict[str, Any] = {}
    for kv in _split_top(text or ""):
        if not kv.strip():
            continue
        key, eq, value = kv.partition("=")
        if not eq or not key.strip().isidentifier():
            raise SpecError(f"cannot parse {what} {kv.strip()!r} of {name!r}: expected key=value")
        if key.strip() in out:  # the last one winning would hide a typo or a pasted edit
            raise SpecError(f"{what} {key.strip()!r} of {name!r} is given twice")
        out[key.strip()] = _value(value)
    return out


MAX_SPEC_CHARS = 100_000
"""A longer spec string is refused before parsing: specs are typed by people, not generated by the megabyte."""


def parse_spec(spec: str | Sequence[Mapping[str, Any] | str | SpecItem] | Mapping[str, Any]) -> list[SpecItem]:
    """Parse a spec string, or a YAML-style list of items (dicts or spec strings; a parsed item is kept as it is)."""
    if isinstance(spec, str):
        if len(spec) > MAX_SPEC_CHARS:
            raise SpecError(f"reward spec of {len(spec)} characters (at most {MAX_SPEC_CHARS})")
        try:
            raw: list[Any] = _parse_string(spec)
        except (RecursionError, MemoryError):
            raise SpecError("reward spec nests brackets too deeply to read") from None
    elif isinstance(spec, Mapping):
        raw = [spec]
    else:
        raw = []
        for entry in spec:
            raw.extend(parse_spec(entry) if isinstance(entry, str) else [entry])
    if not raw:
        raise SpecError("empty reward spec: name at least one reward, e.g. 'accuracy:1'")
    items = []
    for i, entry in enumerate(raw):
        try:
            items.append(SpecItem.model_validate(entry))
        except ValidationError as exc:
            where = entry.get("name", f"item {i + 1}") if isinstance(entry, Mapping) else f"item {i + 1}"
            raise SpecError(f"reward spec entry {where!r}: {exc}") from None
    seen: set[str] = set()
    for item in items:
        if item.name in seen:
            raise SpecError(f"reward {item.name!r} appears twice in the spec")
        seen.add(item.name)
    if sum(abs(item.weight) for item in items) == float("inf"):
        raise SpecError("the weights add up past the largest float, so every total would be infinite: "
                        "scale them down (only their ratios matter)")
    return items
