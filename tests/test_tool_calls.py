"""The tool-call rewards on real trajectories: BFCL's own test data, hostile calls, and the efficiency rule."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grpo_host import Ensemble
from grpo_host.data import check_rows
from grpo_host.discovery.plugins import load_plugins
from grpo_host.scoring.contract import score_row
from reward_plugins.tool_calls.tools import _as_json_schema

BFCL = [json.loads(line) for line in (Path(__file__).parent / "data" / "bfcl" / "sample.jsonl").open()]
UNMATCHABLE = {"live_simple_106-63-0": "gives no value for the required", "live_multiple_862-181-3": "needs arguments"}


@pytest.fixture(scope="module")
def rewards():
    """The built-in pack's rewards, found through its entry point."""
    registry = load_plugins(env={"GRPO_HOST_LOAD_PLUGINS": "tool_calls"}).registry
    return {name: registry.reward(name) for name in ("tool_call_format", "tool_call_match", "tool_efficiency")}


def turn(*calls: tuple[str, object], as_text: bool = False) -> dict:
    """An assistant turn with tool calls in OpenAI's shape (arguments as JSON text when ``as_text``)."""
    return {"role": "assistant", "content": "", "tool_calls": [
        {"id": f"call_{i}", "type": "function",
         "function": {"name": name, "arguments": json.dumps(args) if as_text else args}}
        for i, (name, args) in enumerate(calls)]}


def rollout(*turns: dict, answer: str | None = "Done.") -> list[dict]:
    messages = []
    for t in turns:
        messages.append(t)
        messages += [{"role": "tool", "content": "ok"} for _ in t["tool_calls"]]
    return messages + ([{"role": "assistant", "content": answer}] if answer is not None else [])


def value(allowed: list):
    """A value BFCL's possible answers allow: the first that is not "" (dicts and lists of dicts, one level in)."""
    first = next(v for v in allowed if v != "")
    one = lambda a: a[0] if isinstance(a, list) else a  # noqa: E731
    if isinstance(first, dict):
        return {k: one(a) for k, a in first.items() if not (isinstance(a, list) and a[:1] == [""])}
    if isinstance(first, list) and first and all(isinstance(x, dict) for x in first):
        return [{k: one(a) for k, a in x.items() if not (isinstance(a, list) and a[:1] == [""])} for x in first]
    return first


def ground_truth_calls(row: dict) -> list[tuple[str, dict]]:
    """The row's ground truth as the calls a model would make."""
    return [(name, {k: value(v) for k, v in allowed.items() if any(x != "" for x in v)})
            for call in row["ground_truth"] for name, allowed in call.items()]


def matchable(row: dict) -> bool:
    properties = {t["name"]: t["parameters"].get("properties", {}) for t in row["tools"]}
    return row["id"] not in UNMATCHABLE and all(set(args) <= set(properties[name])
                                                for name, args in ground_truth_calls(row))


@pytest.mark.parametrize("row", [r for r in BFCL if matchable(r)], ids=lambda r: r["id"])
def test_bfcl_ground_truth_called_matches_and_a_wrong_call_does_not(rewards, row):
    match = rewards["tool_call_match"]
    calls = ground_truth_calls(row)
    columns = {"tools": row["tools"], "ground_truth": row["ground_truth"]}
    assert match.check_row(columns) is None
    assert match.score_one(rollout(turn(*calls)), **columns) == 1.0
    assert match.score_one(rollout(*[turn(c, as_text=True) for c in reversed(calls)]), **columns) == 1.0  # any order
    assert match.score_one(rollout(turn(*calls, calls[0])), **columns) == 0.0  # one call too many
    assert match.bind({"partial": True}).score_one(rollout(turn(*calls, calls[0])), **columns) == pytest.approx(
        len(calls) / (len(calls) + 1))
    name, args = calls[0]
    assert match.score_one(rollout(turn((name + "_x", args), *calls[1:])), **columns) == 0.0  # wrong function
    assert match.score_one(rollout(turn((name, {**args, "zz_unknown": 1}), *calls[1:])), **columns) == 0.0
    if args:
        key = next(iter(args))
        wrong = {**args, key: "zz wrong value" if not isinstance(args[key], str) else args[key] + " zz wrong"}
        assert match.score_one(rollout(turn((name, wrong), *calls[1:])), **columns) == 0.0


@pytest.mark.parametrize("row", BFCL, ids=lambda r: r["id"])
def test_the_format_reward_agrees_with_the_jsonschema_package_on_bfcl_calls(rewards, row):
    """An independent validator (the pure-Python ``jsonschema``) on every call: right name, schema-valid arguments."""
    calls = ground_truth_calls(row) + [(row["tools"][0]["name"], {})]
    schemas = {t["name"]: _as_json_schema(t["parameters"]) for t in row["tools"]}
    expected = sum(jsonschema.Draft202012Validator(schemas[n]).is_valid(a) for n, a in calls) / len(calls)
    assert rewards["tool_call_format"].score_one(rollout(turn(*calls)), tools=row["tools"]) == pytest.approx(expected)


def test_data_check_names_the_rows_no_call_could_match(rewards):
    rows = [(f"line {i + 1}", {"prompt": "p", "tools": r["tools"], "ground_truth": r["ground_truth"]})
            for i, r in enumerate(BFCL)]
    report = check_rows(rows, [rewards["tool_call_match"]])
    found = {p.problem: p for p in report.problems}
    assert len(found) == 2 and all(p.reward == "tool_call_match" for p in found.values())
    for row_id, phrase in UNMATCHABLE.items():
        where = f"line {next(i for i, r in enumerate(BFCL) if r['id'] == row_id) + 1}"
        assert any(phrase in text and where in p.rows for text, p in found.items()), (row_id, found)


WEATHER = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}},
    "required": ["city"]}}}]


@pytest.mark.parametrize(("arguments", "valid"), [
    ({"city": "Oslo"}, True),
    ({"city": "Oslo", "days": 3}, True),
    ({"city": 7}, False),
    ({"days": 3}, False),
    ({"city": "Oslo", "days": 0}, False),
    ("{not json", False),
    ("[1, 2]", False),
    ({"city": "x" * 1_000_000}, True),
    ({"city": "Oslo", "nested": json.loads("[" * 500 + "]" * 500)}, True),  # extra properties are allowed
])
def test_a_call_is_well_formed_only_with_a_schema_valid_json_object(rewards, arguments, valid):
    call = {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {
        "name": "get_weather", "arguments": arguments}}]}
    assert rewards["tool_call_format"].score_one(rollout(call), tools=json.dumps(WEATHER)) == float(valid)


def test_hostile_calls_score_as_not_matching_and_never_raise(rewards):
    columns = {"tools": WEATHER, "expected_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}]}
    hostile = [
        [{"role": "assistant", "tool_calls": [{"function": {"name": None, "arguments": {"city": "Oslo"}}}]}],
        [{"role": "assistant", "tool_calls": ["not a call", {"function": "x"}]}],
        rollout(turn(("get_weather", {"city": ["Oslo"]}))),
        rollout(turn(("get_weather", {"city": {"$ref": "#"}}))),
        rollout(turn(("get_weather", "[" * 100_000))),
        rollout(turn(("get_weather", {"city": "Oslo"})), answer=None),  # ends in a call: still the expected call
    ]
    scores = [rewards["tool_call_match"].score_one(h, **columns) for h in hostile]
    assert scores == [0.0, 0.0, 0.0, 0.0, 0.0, 1.0]


@pytest.mark.parametrize(("row", "problem"), [
    ({"tools": "[{", "expected_calls": []}, "column 'tools' is text that is not JSON"),
    ({"tools": [], "expected_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}]},
     "names 'get_weather', which is not among the row's tools []"),
    ({"tools": {"name": "f"}, "expected_calls": []}, "must be a list of function schemas"),
    ({"tools": [{"name": "f", "parameters": {"type": "objekt"}}], "expected_calls": []}, "not a usable JSON Schema"),
    ({"tools": [{"name": "f", "parameters": {"$ref": "https://example.com/s.json"}}], "expected_calls": []},
     "remote references are never fetched"),
    ({"tools": [{"name": "f"}, {"name": "f"}], "expected_calls": []}, "two tools are named 'f'"),
    ({"tools": WEATHER, "expected_calls": [{"name": "get_time", "arguments": {}}]}, "names 'get_time', which is not"),
    ({"tools": WEATHER, "expected_calls": [{"name": "get_weather", "arguments": {"days": 2}}]},
     "no value for the required ['city']"),
    ({"tools": WEATHER, "expected_calls": [{"get_weather": {"city": "Oslo"}}]}, "list of allowed values"),
])
def test_unusable_columns_are_named_by_data_check_and_by_the_rows_error(rewards, row, problem):
    match = rewards["tool_call_match"]
    assert problem in match.check_row(row)
    with Ensemble.from_spec("tool_call_match") as ensemble:
        result = ensemble.score_rows([{"prompt": "p", "completion": rollout(turn(("get_weather", {"city": "Oslo"}))),
                                       **row}])
    assert result.total == [None]
    assert problem in str(result.row_errors)


def test_efficiency_decays_past_the_free_calls_and_counts_tool_errors(rewards):
    efficiency = rewards["tool_efficiency"]
    one = turn(("get_weather", {"city": "Oslo"}))
    failed = [one, {"role": "tool", "content": str({"error": "tool get_weather failed: timeout"})}]
    assert efficiency.score_one(rollout(one)) == 1.0
    assert efficiency.score_one(rollout(one, one, one)) == 0.5
    assert efficiency.bind({"max_calls": 0, "decay": 0.9}).score_one(rollout(one, one)) == pytest.approx(0.81)
    # 3 calls (one past max_calls=2) in 3 assistant turns, the answer's included (one past max_turns=2)
    assert efficiency.bind({"max_turns": 2}).score_one(rollout(turn(*[("get_weather", {"city": "x"})] * 2), one)) \
        == 0.25
    scored = score_row(efficiency, failed + failed + [{"role": "assistant", "content": "Sorry."}])
    assert (scored.value, scored.counts) == (1.0, {"tool_errors": 2, "unfinished": 0})
    unfinished = score_row(efficiency, [one])
    assert (unfinished.value, unfinished.counts) == (0.0, {"tool_errors": 0, "unfinished": 1})


def test_the_ensemble_reports_the_counts_beside_the_means(rewards):
    rows = [{"prompt": "p", "tools": WEATHER, "expected_calls": [{"name": "get_weather", "arguments": {"city": "a"}}],
             "completion": rollout(turn(("get_weather", {"city": "A"})), turn(("get_weather", {"town": "a"})))}]
    with Ensemble.from_spec("tool_call_format, tool_call_match(partial=true), tool_efficiency") as ensemble:
        result = ensemble.score_rows(rows)
    assert result.values["tool_call_format"] == [0.5] and result.values["tool_call_match"] == [0.5]
    assert result.metrics["tool_call_format"].counts == {"invalid_calls": 1.0}
    assert result.metrics["tool_efficiency"].counts == {"tool_errors": 0.0, "unfinished": 0.0}


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                    max_leaves=20)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(calls=st.lists(st.tuples(st.sampled_from(["get_weather", "", "GET_WEATHER", "x" * 300]),
                                JSON | st.dictionaries(st.sampled_from(["city", "days", "unit"]), JSON, max_size=3)),
                      max_size=5),
       finished=st.booleans())
def test_any_calls_a_policy_makes_score_in_range_and_never_raise(rewards, calls, finished):
    completion = rollout(turn(*calls), answer="ok" if finished else None) if calls else "ok"
    columns = {"tools": WEATHER, "expected_calls": [{"get_weather": {"city": ["Oslo", "oslo"], "days": ["", 3]}}]}
    fmt = rewards["tool_call_format"].score_one(completion, tools=WEATHER)
    assert (fmt is None) == (not calls) and (fmt is None or 0.0 <= fmt <= 1.0)
    assert rewards["tool_call_match"].score_one(completion, **columns) in (0.0, 1.0)
    assert 0.0 <= rewards["tool_call_match"].bind({"partial": True}).score_one(completion, **columns) <= 1.0
    assert 0.0 <= rewards["tool_efficiency"].score_one(completion) <= 1.0
