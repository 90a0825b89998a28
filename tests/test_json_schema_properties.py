"""Property-based tests of the `json_schema` reward's extraction and scoring (hypothesis).

Whatever the completion and whatever the schema, the reward returns None or a
float in [0, 1] (strict: 0.0 or 1.0), never raises, and answers well inside
its timeout; a JSON value is found whether it is bare, fenced or in prose.
"""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grpo_host.testing import load_pack
from reward_plugins.json_schema.rewards import MAX_DEPTH, extract_json

TIMEOUT = 5.0  # the reward's own per-item timeout
PROPERTY_SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

SCHEMAS = [
    True,
    False,
    {},
    {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
     "required": ["name", "age"], "additionalProperties": False},
    {"type": "array", "items": {"type": "integer"}, "minItems": 1, "uniqueItems": True},
    {"allOf": [{"properties": {"bar": {"type": "integer"}}, "required": ["bar"]},
               {"properties": {"foo": {"type": "string"}}, "required": ["foo"]}]},
    {"anyOf": [{"type": "array", "items": {"$ref": "#"}}, {"type": "string", "pattern": "^(a+)+$"}]},
    {"allOf": [{"allOf": [{"type": "array", "items": {"$ref": "#"}}]}]},
    {"patternProperties": {"^\\p{Letter}+$": {"type": "integer"}, "(?<=a)b": False}},
    {"$ref": "#"},
    {"$schema": "https://example.com/unknown"},
    '{"type": "object"',
]

JSON_TOKENS = ["{", "}", "[", "]", '"', ":", ",", "```", "```json\n", "\n```", "NaN", "Infinity", "1e999", "-0",
               "\\ud800", "\\u0000", "\\", "true", "null", '"a"', "9" * 70, " ", "\n", "é", "\U0001F600"]

hostile_text = st.one_of(
    st.text(max_size=300),
    st.lists(st.sampled_from(JSON_TOKENS), max_size=200).map("".join),
    st.integers(1, 5000).map(lambda n: "[" * n + "]" * n),
    st.integers(1, 5000).map(lambda n: "```json\n" * n),
    st.tuples(st.text(max_size=50), st.sampled_from(JSON_TOKENS), st.integers(1, 3000)).map(
        lambda t: t[0] + t[1] * t[2]),
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**18, 10**18)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=10), children, max_size=5),
    max_leaves=30,
)

schema_keywords = st.sampled_from(
    ["type", "properties", "required", "items", "prefixItems", "allOf", "anyOf", "oneOf", "not", "$ref", "$defs",
     "$dynamicRef", "$dynamicAnchor", "pattern", "patternProperties", "additionalProperties", "enum", "const",
     "default", "minimum", "maxLength", "$schema", "$id", "if", "then", "else", "dependentSchemas", "format"])
generated_schemas = st.recursive(
    st.booleans() | st.sampled_from(["string", "integer", "object", "#", "#/$defs/a", "^a+$", "[", 3, -1, None]),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(schema_keywords | st.text(max_size=5), children, max_size=4),
    max_leaves=25,
)


@pytest.fixture(scope="module")
def reward():
    return load_pack("json_schema").registry.reward("json_schema")


def timed(fn, *args, **kwargs):
    start = time.process_time()  # CPU seconds of this process, where the call runs: the work, not the load
    value = fn(*args, **kwargs)
    assert time.process_time() - start < TIMEOUT
    return value


def in_range(value, strict: bool = False) -> bool:
    if value is None:
        return True
    return isinstance(value, float) and (value in (0.0, 1.0) if strict else 0.0 <= value <= 1.0)


@PROPERTY_SETTINGS
@given(completion=hostile_text, schema=st.sampled_from(SCHEMAS), strict=st.booleans())
def test_any_completion_scores_in_range(reward, completion, schema, strict):
    bound = reward.bind({"strict": strict})
    value = timed(bound.score_one, completion, schema=schema)
    assert in_range(value, strict)
    assert bound.score_one(completion, schema=schema) == value  # deterministic


@PROPERTY_SETTINGS
@given(schema=generated_schemas, completion=st.one_of(hostile_text, json_values.map(json.dumps)))
def test_any_schema_scores_in_range(reward, schema, completion):
    assert in_range(timed(reward.score_one, completion, schema=schema))
    assert in_range(timed(reward.score_one, completion, schema=json.dumps(schema)))


@PROPERTY_SETTINGS
@given(completion=hostile_text)
def test_extraction_finds_plain_json_or_nothing(completion):
    try:
        found, value = timed(extract_json, completion)
    except ValueError:  # JsonRejected: the best candidate broke a limit
        return
    if found:
        json.dumps(value, allow_nan=False)  # plain JSON data: no NaN, nothing exotic


prose = st.text(alphabet=st.characters(blacklist_characters="{[`\"\\"), max_size=40)


@PROPERTY_SETTINGS
@given(value=json_values, before=prose, after=prose)
def test_a_json_value_is_found_bare_fenced_or_in_prose(reward, value, before, after):
    text = json.dumps(value)
    schema = {"const": value}
    assert reward.score_one(text, schema=schema) == 1.0
    assert reward.score_one(f"{before}\n```json\n{text}\n```\n{after}", schema=schema) == 1.0
    if isinstance(value, dict | list):
        assert reward.score_one(f"{before} {text} {after}", schema=schema) == 1.0


@PROPERTY_SETTINGS
@given(depth=st.integers(1, 3 * MAX_DEPTH))
def test_depth_limit_is_exact(reward, depth):
    text = "[" * depth + "]" * depth
    assert reward.score_one(text, schema=True) == (1.0 if depth <= MAX_DEPTH else 0.0)
