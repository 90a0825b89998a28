"""The `json_schema` reward: extraction, validation with jsonschema, partial credit, hostile input."""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest

from grpo_host import Ensemble
from grpo_host.testing import assert_discovered, assert_listing_is_light, data_check, load_pack
from reward_plugins import json_schema as pack
from tests.conftest import run_cli

PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
    "required": ["name", "age"],
    "additionalProperties": False,
}


@pytest.fixture(scope="module")
def reward():
    return load_pack("json_schema").registry.reward("json_schema")


def score(reward, completion, schema, **params):
    return reward.bind(params).score_one(completion, schema=schema)


def test_installed_pack_registers_json_schema_and_listing_stays_light():
    assert_discovered("json_schema", ["json_schema"])
    assert_listing_is_light("json_schema", ("jsonschema", "referencing", "sympy", "torch"))


@pytest.mark.parametrize(
    "completion",
    [
        '{"name": "Ada", "age": 36}',
        '  \n{"name": "Ada", "age": 36}\n',
        'Here it is:\n```json\n{"name": "Ada", "age": 36}\n```\nDone.',
        'Draft:\n```\n{"name": 1}\n```\nFinal:\n```json\n{"name": "Ada", "age": 36}\n```',
        'Sure! {"name": "Ada", "age": 36} Anything else?',
        'Using {braces} in prose, then {"name": "Ada", "age": 36}.',
    ],
)
def test_valid_json_anywhere_scores_one(reward, completion):
    assert score(reward, completion, PERSON) == 1.0


def test_schema_may_be_a_json_string(reward):
    assert score(reward, '{"name": "Ada", "age": 36}', json.dumps(PERSON)) == 1.0


def test_partial_credit_rule(reward):
    # fields: age, name (+ rest).  age wrong type: (1 + 1) / 3 * 0.5
    assert score(reward, '{"name": "Ada", "age": "36"}', PERSON) == pytest.approx(0.5 * 2 / 3)
    # age missing (required): name passes, rest passes
    assert score(reward, '{"name": "Ada"}', PERSON) == pytest.approx(0.5 * 2 / 3)
    # both fields right, an extra property breaks additionalProperties: rest fails
    assert score(reward, '{"name": "Ada", "age": 36, "x": 1}', PERSON) == pytest.approx(0.5 * 2 / 3)
    # nothing right
    assert score(reward, '{"x": 1}', PERSON) == pytest.approx(0.0)
    # wrong top-level type
    assert score(reward, '["Ada", 36]', PERSON) == 0.0
    # arrays: items are the fields
    ints = {"type": "array", "items": {"type": "integer"}, "minItems": 1}
    assert score(reward, '[1, 2, "three", 4]', ints) == pytest.approx(0.5 * (3 + 1) / 5)
    # strict: no partial credit
    assert score(reward, '{"name": "Ada", "age": "36"}', PERSON, strict=True) == 0.0
    assert score(reward, '{"name": "Ada", "age": 36}', PERSON, strict=True) == 1.0


@pytest.mark.parametrize(
    "completion",
    [
        "no JSON at all",
        "",
        '{"name": "Ada", "age": NaN}',
        '{"name": "Ada", "age": Infinity}',
        '{"name": "Ada", "age": -Infinity}',
        '{"name": "Ada", "age": 1e999}',
        '{"name": "Ada", "age": ' + "9" * 5000 + "}",
        "[" * 5000 + "]" * 5000,
        '{"a": ' * 100 + "1" + "}" * 100,
    ],
)
def test_missing_or_hostile_json_scores_zero(reward, completion):
    assert score(reward, completion, {"type": ["object", "array"]}) == 0.0


def test_completion_longer_than_max_chars_scores_zero(reward):
    assert score(reward, '{"name": "Ada", "age": 36}' + " " * 200, PERSON, max_chars=100) == 0.0


def test_draft_is_chosen_by_dollar_schema(reward):
    # Draft 4: exclusiveMaximum is a boolean modifier; in 2020-12 it must be a number (invalid schema -> None)
    draft4 = {"$schema": "http://json-schema.org/draft-04/schema#", "type": "integer", "maximum": 5,
              "exclusiveMaximum": True}
    assert score(reward, "5", draft4) == 0.0
    assert score(reward, "4", draft4) == 1.0
    assert score(reward, "4", {k: v for k, v in draft4.items() if k != "$schema"}) is None
    # 2020-12 by default: prefixItems exists
    tuple_schema = {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]}
    assert score(reward, '["a", 1]', tuple_schema) == 1.0
    assert score(reward, '[1, "a"]', tuple_schema) < 1.0


def test_local_refs_resolve(reward):
    schema = {"$defs": {"pos": {"type": "integer", "minimum": 1}}, "type": "array", "items": {"$ref": "#/$defs/pos"}}
    assert score(reward, "[1, 2]", schema) == 1.0
    assert score(reward, "[1, 0]", schema) == pytest.approx(0.5 * 2 / 3)


def test_remote_ref_is_never_fetched(reward):
    """A listener on 127.0.0.1 stands in for a remote host: it must see no connection."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.5)
    port = server.getsockname()[1]
    connections = []

    def accept():
        try:
            connections.append(server.accept())
        except OSError:
            pass

    listener = threading.Thread(target=accept)
    listener.start()
    schema = {"type": "object", "properties": {"a": {"$ref": f"http://127.0.0.1:{port}/schema.json"}}}
    try:
        assert score(reward, '{"a": 1}', schema) is None
        problem = pack.check_schema_row({"schema": schema})
        assert problem is not None and "never fetched" in problem
    finally:
        listener.join()
        server.close()
    assert connections == []


@pytest.mark.parametrize(
    ("schema", "needle"),
    [
        ({"type": "objekt"}, "invalid schema"),
        ({"properties": {"a": {"minimum": "zero"}}}, "invalid schema at properties/a/minimum"),
        ('{"type": "object"', "not valid JSON"),
        ('["not", "a", "schema"]', "JSON object or boolean"),
        ({"$ref": "#/$defs/missing"}, "does not resolve"),
    ],
)
def test_invalid_schemas_are_reported_and_not_applicable(reward, schema, needle):
    problem = pack.check_schema_row({"schema": schema})
    assert problem is not None and needle in problem
    assert score(reward, "{}", schema) is None


def test_catastrophic_patterns_run_in_linear_time_through_the_ensemble():
    """`^(a+)+$` against a long near-miss backtracks for ages on Python's `re`; the ECMA engine answers at once."""
    schema = {"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a+)+$"}}}
    keyed = {"type": "object", "patternProperties": {"^(a+)+$": {"type": "integer"}}, "additionalProperties": False}
    lookaround = {"type": "object", "properties": {"s": {"type": "string", "pattern": "^(?=a)(a|a)*\\1?$"}}}
    near_miss = "a" * 5000 + "!"
    with Ensemble.from_spec([{"name": "json_schema", "timeout": 3}], workers=2) as ensemble:
        ensemble.score(["{}"], schema=[schema])  # warm the workers
        start = time.perf_counter()
        result = ensemble.score(
            [json.dumps({"s": near_miss}), json.dumps({near_miss: 1}), json.dumps({"s": near_miss}),
             json.dumps({"s": "aaa"})],
            schema=[schema, keyed, lookaround, schema],
        )
        elapsed = time.perf_counter() - start
    # one field failing (1 of 1, rest passes): 0.5 x 1 / 2; the unmatched key is an additional property
    assert result.values["json_schema"] == [0.25, 0.0, 0.25, 1.0]
    assert (result.metrics["json_schema"].timeouts, result.metrics["json_schema"].errors) == (0, 0)
    assert elapsed < 2


def test_data_check_reports_invalid_schemas_by_row(tmp_path):
    rows = [
        {"prompt": "a person", "schema": PERSON},
        {"prompt": "broken", "schema": {"type": "objekt"}},
        {"prompt": "as a string", "schema": json.dumps(PERSON)},
        {"prompt": "remote", "schema": {"$ref": "https://example.com/s.json"}},
    ]
    path = tmp_path / "schemas.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    report = data_check("json_schema", path)
    flagged = {row for p in report.problems for row in p.rows}
    assert flagged == {"line 2", "line 4"}

    proc = run_cli("data", "check", str(path), "--rewards", "json_schema")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "line 2" in proc.stdout and "line 4" in proc.stdout


def test_rewards_show_documents_scoring_with_scored_examples():
    proc = run_cli("rewards", "show", "json_schema")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "Partial credit" in out and "strict" in out and "NaN" in out
    scores = [line.rstrip(" │").rsplit("│", 1)[-1].strip() for line in out.splitlines() if line.startswith("│")]
    assert {"1.0", "0.0", "0.3333333333333333"} <= set(scores)
