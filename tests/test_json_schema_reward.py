"""The `json_schema` reward: extraction, validation with jsonschema-rs, partial credit, hostile rows.

The findings of issue 13 are regression tests here, in the reward and at the
CLI (`grpo-host score` and `grpo-host data check`), where a user meets them.
"""

from __future__ import annotations

import contextlib
import json
import selectors
import socket
import threading
import time
from collections.abc import Iterator

import pytest
from conftest import data_check_problems, run_cli, write_jsonl

from grpo_host import Ensemble
from grpo_host.testing import assert_discovered, assert_listing_is_light, data_check, load_pack
from reward_plugins.json_schema import rewards as pack

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


@contextlib.contextmanager
def listener() -> Iterator[tuple[int, list[bytes]]]:
    """A real HTTP-ish listener on 127.0.0.1 standing in for a remote schema host: ``(port, requests seen)``.

    It accepts for as long as the block runs and records what each connection
    sends, so a test can assert that nothing ever asked it for a schema.
    """
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.setblocking(False)
    seen: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        with selectors.DefaultSelector() as selector:
            selector.register(server, selectors.EVENT_READ)
            while not stop.is_set():
                if selector.select(timeout=0.05):
                    conn, _ = server.accept()
                    with conn:
                        conn.settimeout(1)
                        with contextlib.suppress(OSError):
                            seen.append(conn.recv(4096) or b"(connected, sent nothing)")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1], seen
    finally:
        stop.set()
        thread.join()
        server.close()


def test_installed_pack_registers_json_schema_and_listing_stays_light():
    assert_discovered("json_schema", ["json_schema"])
    assert_listing_is_light("json_schema", ("jsonschema_rs", "jsonschema", "referencing", "sympy", "torch"))


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


def remote_schemas(port: int) -> list[dict]:
    """Schemas that name the listener: under properties *named* like keywords, $dynamicRef, $schema, $id-relative."""
    url = f"http://127.0.0.1:{port}"
    named = [{"type": "object", "properties": {name: {"$ref": f"{url}/int.json"}}}
             for name in ("default", "enum", "const", "examples")]
    return named + [
        {"$dynamicRef": f"{url}/meta.json#meta"},
        {"$schema": f"{url}/meta.json", "type": "object"},
        {"$id": f"{url}/root.json", "properties": {"a": {"$ref": "other.json"}}},
        {"$schema": "https://json-schema.org/draft/2019-09/schema", "$recursiveRef": f"{url}/tree.json"},
        {"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"a": {"$ref": f"{url}/a.json"}}},
    ]


def test_remote_references_are_never_fetched_and_are_reported(reward):
    with listener() as (port, requests):
        for schema in remote_schemas(port):
            assert score(reward, '{"default": 1, "enum": 1, "const": 1, "examples": 1}', schema) is None, schema
            problem = pack.check_schema_row({"schema": schema})
            assert problem is not None and ("never fetched" in problem or "only '#'" in problem), (schema, problem)
        time.sleep(0.2)
    assert requests == []


@pytest.mark.parametrize(
    ("schema", "needle"),
    [
        ({"type": "objekt"}, "invalid schema"),
        ({"properties": {"a": {"minimum": "zero"}}}, "invalid schema at properties/a/minimum"),
        ('{"type": "object"', "not valid JSON"),
        ('["not", "a", "schema"]', "JSON object or boolean"),
        ({"$ref": "#/$defs/missing"}, "does not resolve"),
        # the up-front check walks keyword positions: a property *named* enum/default/... is a subschema
        *[({"properties": {name: {"$ref": "#/nope"}}}, "does not resolve") for name in
          ("enum", "default", "const", "examples")],
        ({"$dynamicRef": "#/nope"}, "does not resolve"),
        ({"properties": {"a": {"$dynamicRef": "#/$defs/nope"}}}, "does not resolve"),
        ({"$schema": "https://json-schema.org/draft/2019-09/schema", "properties": {"a": {"$recursiveRef": "#/no"}}},
         "only '#'"),
        # reference loops: evaluation would never end
        ({"$ref": "#"}, "reference loop that never descends into the value: # -> #"),
        ({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"},
         "#/$defs/a -> #/$defs/b -> #/$defs/a"),
        ({"anyOf": [{"type": "string"}, {"allOf": [{"$ref": "#"}]}]}, "reference loop"),
        ({"$dynamicAnchor": "a", "allOf": [{"$dynamicRef": "#a"}]}, "reference loop"),
        ({"$schema": "http://json-schema.org/draft-07/schema#", "dependencies": {"a": {"$ref": "#"}}},
         "reference loop"),
        # a $schema that is no known draft is refused, not silently read as 2020-12
        ({"$schema": "https://example.com/my-dialect", "type": "integer"}, "unknown $schema"),
        ({"$schema": "http://json-schema.org/draft-03/schema#"}, "unknown $schema"),
        ({"pattern": "\ud800"}, "cannot be compiled"),
        (1, "JSON object or boolean"),  # the column type lets 0 and 1 through as booleans
        ('"a string"', "JSON object or boolean"),
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
        result = ensemble.score(
            [json.dumps({"s": near_miss}), json.dumps({near_miss: 1}), json.dumps({"s": near_miss}),
             json.dumps({"s": "aaa"})],
            schema=[schema, keyed, lookaround, schema],
        )
    # one field failing (1 of 1, rest passes): 0.5 x 1 / 2; the unmatched key is an additional property
    assert result.values["json_schema"] == [0.25, 0.0, 0.25, 1.0]
    assert (result.metrics["json_schema"].timeouts, result.metrics["json_schema"].errors) == (0, 0)  # none ran 3 s


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
    text = " ".join(out.split())  # the description is wrapped to the terminal
    for rule in ("Partial credit", "strict=true an invalid value scores 0.0", "NaN", "the root's own `required`",
                 "a `required` under allOf or $ref included", "remote references are never fetched",
                 "an unknown `$schema`", "reference loop", "ECMA-262"):
        assert rule in text, rule
    scores = [line.rstrip(" │").rsplit("│", 1)[-1].strip() for line in out.splitlines() if line.startswith("│")]
    assert {"1.0", "0.0", "0.3333333333333333"} <= set(scores)


def nested(depth: int, leaf="[]") -> str:
    return "[" * (depth - 1) + leaf + "]" * (depth - 1)


def recursive_allof_schema(layers: int = 6) -> dict:
    """The issue's schema: ``layers`` nested allOf around ``{"type": "array", "items": {"$ref": "#"}}``."""
    schema: dict = {"type": "array", "items": {"$ref": "#"}}
    for _ in range(layers):
        schema = {"allOf": [schema]}
    return schema


@pytest.mark.parametrize("schema", ["[" * 100_000 + "]" * 100_000, '{"not": ' * 100_000 + "{}" + "}" * 100_000])
def test_deep_schema_text_is_refused(reward, schema):
    assert "nesting deeper than 128" in pack.check_schema_row({"schema": schema})
    assert score(reward, "{}", schema) is None


def test_huge_schema_is_refused(reward):
    schema = {"type": "object", "properties": {f"field_{i}": {"type": "string"} for i in range(40_000)}}
    assert "longer than 1,000,000 characters" in pack.check_schema_row({"schema": schema})
    assert "longer than 1,000,000 characters" in pack.check_schema_row({"schema": json.dumps(schema)})
    assert score(reward, "{}", schema) is None


def test_deep_schema_object_is_refused(reward):
    schema: dict = {"type": "integer"}
    for _ in range(10_000):
        schema = {"not": schema}
    assert "nesting deeper than 128" in pack.check_schema_row({"schema": schema})
    assert score(reward, "1", schema) is None


def test_recursion_driven_by_the_completion_is_a_score(reward):
    """6 nested allOf per level and a 64-deep array (the deepest accepted): a score, not a RecursionError."""
    schema = recursive_allof_schema()
    assert score(reward, nested(64), schema) == 1.0
    # invalid deep inside: the one item (field) fails, the rest passes: 0.5 x 1 / 2
    assert score(reward, nested(64, "[1]"), schema) == 0.25
    assert score(reward, nested(65), schema) == 0.0  # deeper than MAX_DEPTH: rejected as no JSON
    assert score(reward, nested(64), recursive_allof_schema(60)) == 1.0


@pytest.mark.slow  # over 2 s: waits out a timeout
def test_exponential_error_report_is_a_counted_timeout_and_the_worker_recovers():
    """An anyOf of two recursive branches makes the error report exponential in the depth: the timeout bounds it."""
    schema = {"anyOf": [{"type": "array", "items": {"$ref": "#"}}, {"type": "array", "items": {"$ref": "#"}}]}
    with Ensemble.from_spec([{"name": "json_schema", "timeout": 1}], workers=1) as ensemble:
        ensemble.score(["[]"], schema=[schema])  # warm the worker
        result = ensemble.score([nested(40, '["x"]'), nested(40), '{"name": "Ada", "age": 36}'],
                                schema=[schema, schema, PERSON])
    assert result.values["json_schema"] == [None, 1.0, 1.0]
    assert (result.metrics["json_schema"].timeouts, result.metrics["json_schema"].errors) == (1, 0)
    assert result.failures == {0: {"json_schema": "timeout"}}  # its CPU second spent, not the backstop


@pytest.mark.parametrize(
    ("completion", "schema", "expected"),
    [
        ('{"any": "thing"}', True, 1.0),
        ("[1, 2]", True, 1.0),
        ('{"any": "thing"}', False, 0.0),
        ('{"a": 1}', "true", 1.0),
        ('{"a": 1}', "false", 0.0),
        ('{"a": 1}', {"properties": {"a": False}}, 0.5 * (0 + 1) / 2),  # field a fails, nothing else does
        ("no JSON", True, 0.0),
    ],
)
def test_boolean_schemas(reward, completion, schema, expected):
    assert score(reward, completion, schema) == pytest.approx(expected)
    assert pack.check_schema_row({"schema": schema}) is None


ALL_OF_REQUIRED = {"allOf": [{"properties": {"bar": {"type": "integer"}}, "required": ["bar"]},
                             {"properties": {"foo": {"type": "string"}}, "required": ["foo"]}]}


@pytest.mark.parametrize(
    ("completion", "schema", "expected"),
    [
        # no top-level fields; the nested `required` failing is an error outside them: rest fails
        ('{"foo": "baz"}', ALL_OF_REQUIRED, 0.0),
        # field foo passes; the nested `required` (under allOf) fails the rest: 0.5 x (1 + 0) / 2
        ('{"foo": "baz"}', {"properties": {"foo": {"type": "string"}}, "required": ["foo"],
                            "allOf": [{"required": ["bar"]}]}, 0.25),
        # a `$ref` to the real schema: the root has no fields of its own
        ('{"name": "Ada"}', {"$ref": "#/$defs/p", "$defs": {"p": PERSON}}, 0.0),
        # the root's own `required` fails the missing field only
        ('{"name": "Ada"}', {"properties": {"name": {"type": "string"}}, "required": ["name", "age"]},
         0.5 * (1 + 1) / 3),
        # the root's own `type` failing gives 0.0 even where fields would pass
        ('{"name": "Ada"}', {"type": "array", "properties": {"name": {"type": "string"}}}, 0.0),
        # a nested `type` failing about the whole value is an error outside the fields
        ('{"name": "Ada"}', {"properties": {"name": {"type": "string"}}, "allOf": [{"type": "array"}]}, 0.25),
        # an error inside a property that is not a field (additionalProperties' schema) fails the rest
        ('{"name": "Ada", "x": "y"}', {"properties": {"name": {"type": "string"}},
                                       "additionalProperties": {"type": "integer"}}, 0.25),
        # arrays: the items are the fields; uniqueItems is the rest
        ("[1, 1, 2]", {"items": {"type": "integer"}, "uniqueItems": True}, 0.5 * 3 / 4),
        ("[1, 1, 2]", {"prefixItems": [{"type": "string"}]}, 0.5 * (2 + 1) / 4),
        # neither an object nor an array
        ('"text"', {"type": "string", "minLength": 10}, 0.0),
    ],
)
def test_partial_credit_follows_the_documented_rule(reward, completion, schema, expected):
    assert score(reward, completion, schema) == pytest.approx(expected)
    assert score(reward, completion, schema, strict=True) == 0.0


@pytest.mark.parametrize(
    ("completion", "schema"),
    [
        ('Here:\n```json\n"fence with ``` inside"\n```', {"type": "string", "pattern": "```"}),
        ('```\n{"code": "```python\\nprint(1)\\n```"}\n```\nthat is all', {"required": ["code"]}),
        ('Draft:\n```json\n"no"\n```\nFinal:\n```JSON\n"a ``` b"\n```', {"const": "a ``` b"}),
        ('```json   \n  {"name": "Ada", "age": 36}  \n```', PERSON),
    ],
)
def test_fenced_json_holding_a_fence_is_found(reward, completion, schema):
    assert score(reward, completion, schema) == 1.0


def test_hostile_fences_are_read_in_linear_time(reward):
    start = time.process_time()  # CPU seconds: what the work costs, whatever else the machine does
    for completion in ["```json\n" * 12_000, "```" + " " * 90_000 + "x", "```json\n{" * 9_000, "{" * 90_000,
                       "```json\n\"" + "```json\n" * 10_000]:
        assert score(reward, completion, {"type": "object"}) == 0.0
    assert time.process_time() - start < 2


@pytest.mark.parametrize(
    ("pattern", "text", "matches"),
    [
        ("^\\p{Letter}+$", "héllo", True),
        ("^\\p{Letter}+$", "123", False),
        ("^\\d+$", "\u0661\u0662", False),  # ECMA-262 \d is ASCII only
        ("^\\w+$", "é", False),  # so is \w
        ("^a$", "a\n", False),  # $ does not match before a final newline
        ("(?<=a)b", "ab", True),  # look-behind, which Rust's regex crate lacks, runs on fancy-regex
        ("^(a)\\1$", "aa", True),
    ],
)
def test_patterns_are_ecma_262(reward, pattern, text, matches):
    schema = {"type": "object", "properties": {"s": {"type": "string", "pattern": pattern}}}
    assert score(reward, json.dumps({"s": text}), schema) == (1.0 if matches else 0.25)
    keyed = {"type": "object", "patternProperties": {pattern: {"type": "integer"}}}
    assert score(reward, json.dumps({text: "not an integer"}), keyed) == (0.0 if matches else 1.0)


def test_unknown_dollar_schema_is_refused_the_same_way_every_time(reward):
    schema = {"$schema": "https://example.com/my-dialect", "type": "integer"}
    assert [score(reward, completion, schema) for completion in ("1", '"x"', "no JSON")] == [None, None, None]
    assert "unknown $schema 'https://example.com/my-dialect'" in pack.check_schema_row({"schema": schema})
    for draft in ("http://json-schema.org/draft-04/schema#", "http://json-schema.org/draft-06/schema#",
                  "http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft/2019-09/schema",
                  "https://json-schema.org/draft/2020-12/schema"):
        assert score(reward, "1", {"$schema": draft, "type": "integer"}) == 1.0


def cli_rows(port: int) -> list[tuple[dict, float | None, str | None]]:
    """``(row, score, data check problem)`` for every finding, between good rows, as a user's file holds them."""
    good = {"prompt": "a person", "completion": '{"name": "Ada", "age": 36}', "schema": PERSON}
    refused = [(schema, "never fetched" if "$recursiveRef" not in schema else "only '#'")
               for schema in remote_schemas(port)]
    refused += [
        ({"properties": {"enum": {"$ref": "#/nope"}}}, "does not resolve"),
        ({"$dynamicRef": "#/nope"}, "does not resolve"),
        ({"$ref": "#"}, "reference loop"),
        ({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}, "reference loop"),
        ({"$schema": "https://example.com/my-dialect"}, "unknown $schema"),
    ]
    rows = [(good, 1.0, None)]
    rows += [({"prompt": "p", "completion": '{"default": 1}', "schema": schema}, None, needle)
             for schema, needle in refused]
    rows += [
        ({"prompt": "p", "completion": nested(64), "schema": recursive_allof_schema()}, 1.0, None),
        ({"prompt": "p", "completion": '{"a": 1}', "schema": True}, 1.0, None),
        ({"prompt": "p", "completion": '{"a": 1}', "schema": False}, 0.0, None),
        ({"prompt": "p", "completion": '{"foo": "baz"}', "schema": ALL_OF_REQUIRED}, 0.0, None),
        ({"prompt": "p", "completion": '```json\n"a ``` b"\n```', "schema": {"type": "string"}}, 1.0, None),
        ({"prompt": "p", "completion": '"héllo"', "schema": {"pattern": "^\\p{Letter}+$"}}, 1.0, None),
        (good, 1.0, None),
    ]
    return rows


def test_cli_scores_and_checks_every_finding(tmp_path):
    """`grpo-host score` writes every row with its value; `grpo-host data check` names every refused schema."""
    with listener() as (port, requests):
        rows = cli_rows(port)
        path = tmp_path / "findings.jsonl"
        path.write_text("".join(json.dumps(row) + "\n" for row, _, _ in rows))
        out = tmp_path / "scores.jsonl"

        proc = run_cli("score", str(path), "--rewards", "json_schema", "--json", "--out", str(out))
        assert proc.returncode == 0, proc.stdout + proc.stderr
        lines = [json.loads(line) for line in out.read_text().splitlines()]
        assert [line["row"] for line in lines] == [f"line {i}" for i in range(1, len(rows) + 1)]
        assert [line.get("error") for line in lines] == [None] * len(rows)
        assert [line["rewards"]["json_schema"] for line in lines] == [expected for _, expected, _ in rows]
        summary = json.loads(proc.stdout)
        metrics = summary["rewards"]["json_schema"]
        assert (metrics["errors"], metrics["timeouts"]) == (0, 0)
        assert metrics["coverage"] == pytest.approx(sum(e is not None for _, e, _ in rows) / len(rows))

        problems = data_check_problems(path, "json_schema")
        expected = {f"line {i}": needle for i, (_, _, needle) in enumerate(rows, 1) if needle}
        assert sorted(problems) == sorted(expected)
        for row, needle in expected.items():
            assert needle in problems[row], (row, problems[row])
        time.sleep(0.2)
    assert requests == []


def test_data_check_reports_a_non_schema_once(tmp_path):
    """1 passes the column type (pydantic reads it as a boolean), so the row check names it; [1] only the column."""
    path = tmp_path / "odd.jsonl"
    path.write_text("".join(json.dumps({"prompt": "p", "schema": s}) + "\n" for s in (1, [1], True, "false")))
    report = data_check("json_schema", path)
    assert sorted((p.problem.split(":")[0], tuple(p.rows)) for p in report.problems) == [
        ("a schema is a JSON object or boolean, not int", ("line 1",)),
        ("wrong type", ("line 2",)),
    ]


@pytest.mark.parametrize(
    "completion",
    [
        '```json\n"ends with ```"\n```',
        '```json\n"```"\n```\nInfinity and beyond',  # prose after the closing fence is not a candidate
        'Code first:\n```python\nprint("```")\n```\nthen the answer:\n```\n"x ```"\n```',
        '```json\n{"s": "a\\n```\\nb"}\n```',
    ],
)
def test_fences_pair_up_whatever_the_json_between_them_holds(completion):
    found, value = pack.extract_json(completion)
    assert found and value in ("ends with ```", "```", "x ```", {"s": "a\n```\nb"})


def test_the_empty_schema_accepts_everything_and_is_not_an_empty_column(tmp_path):
    data = write_jsonl(tmp_path / "empty.jsonl", [{"prompt": "p", "completion": '{"a": 1}', "schema": {}},
                                                  {"prompt": "p", "completion": "no JSON", "schema": {}},
                                                  {"prompt": "p", "completion": "{}", "schema": None}])
    check = run_cli("data", "check", str(data), "--rewards", "json_schema", "--json")
    assert [(p["column"], p["problem"], p["rows"]) for p in json.loads(check.stdout)["problems"]] == [
        ("schema", "empty", ["line 3"])]  # None is still empty; {} is a schema
    proc = run_cli("score", str(data), "--rewards", "json_schema", "--out", "-")
    assert [json.loads(line).get("total") for line in proc.stdout.splitlines()] == [1.0, 0.0, None]
