"""The tool-call rewards against BFCL's own verdicts, and the rules that make them agree.

``tests/data/bfcl/agreement.jsonl`` holds cases built from BFCL's data by
``benchmarks/bfcl_agreement.py --every 40`` with the verdict the installed
``bfcl-eval`` 2026.3.23 gave each (its runner, its handlers, its checkers);
``tests/data/bfcl/real.jsonl`` holds real model outputs the same way
(``--real --every 20``: result files submitted to BFCL's repository);
the other tests pin one rule each: irrelevance as BFCL decodes it, order
within and across turns, calls written as text, OpenAI-style names, and a
dispatch that never runs model output as code.
"""

from __future__ import annotations

import decimal
import json
from pathlib import Path

import mpmath
import pytest

from grpo_host import Ensemble
from grpo_host.data import check_rows
from grpo_host.discovery.plugins import load_plugins
from reward_plugins.tool_calls.dispatch import Call, execute_multi_turn_func_call, parse_call

DATA = Path(__file__).parent / "data" / "bfcl"
ROWS = [json.loads(line) for line in (DATA / "agreement.jsonl").open()]
REAL = [json.loads(line) for line in (DATA / "real.jsonl").open()]


@pytest.fixture(scope="module")
def rewards():
    registry = load_plugins(env={"GRPO_HOST_LOAD_PLUGINS": "tool_calls"}).registry
    return {name: registry.reward(name) for name in ("tool_call_match", "tool_call_state")}


def verdicts(rewards, row: dict) -> list[tuple[str, bool, bool]]:
    reward = rewards[row["reward"]]
    return [(case["variant"], case["bfcl"],
             reward.bind(case["params"]).score_one(case["completion"], **row["columns"]) == 1.0)
            for case in row["cases"]]


@pytest.mark.slow
@pytest.mark.parametrize("row", ROWS + REAL, ids=lambda r: f"{r['category']}-{r['columns'].get('id', len(r['cases']))}")
def test_every_case_gets_bfcls_verdict(rewards, row):
    assert [(v, bfcl) for v, bfcl, _ in verdicts(rewards, row)] == [(v, ours) for v, _, ours in verdicts(rewards, row)]


@pytest.mark.parametrize("category", sorted({r["category"] for r in ROWS + REAL}))
def test_the_first_row_of_each_category_gets_bfcls_verdicts(rewards, category):
    row = next(r for r in ROWS + REAL if r["category"] == category)
    assert all(bfcl == ours for _, bfcl, ours in verdicts(rewards, row)), verdicts(rewards, row)


def test_the_vendored_cases_cover_what_bfcl_refuses_and_accepts():
    seen = {(r["reward"], c["variant"], c["bfcl"]) for r in ROWS for c in r["cases"]}
    for variant in ("all_in_first_turn", "turns_swapped", "missing_call", "wrong_argument"):
        assert ("tool_call_state", variant, False) in seen and ("tool_call_state", variant, True) not in seen
    for variant in ("correct", "step_by_step", "extra_unknown_call", "arguments_not_json"):
        assert ("tool_call_state", variant, True) in seen and ("tool_call_state", variant, False) not in seen
    assert {("tool_call_state", "extra_repeated_call", True), ("tool_call_state", "extra_repeated_call", False),
            ("tool_call_match", "arguments_not_json", True), ("tool_call_match", "arguments_a_list", True)} <= seen


WEATHER = [{"name": "get_weather", "parameters": {"type": "dict", "properties": {"city": {"type": "string"}},
                                                  "required": ["city"]}}]


def assistant(*calls: tuple[str, object], content: str = "") -> dict:
    return {"role": "assistant", "content": content, "tool_calls": [
        {"type": "function", "function": {"name": n, "arguments": a if isinstance(a, str) else json.dumps(a)}}
        for n, a in calls]}


@pytest.mark.parametrize(("message", "score"), [
    (assistant(("get_weather", "{not json")), 1.0),  # BFCL: the response does not decode: no call
    (assistant(("get_weather", "[1, 2]")), 1.0),  # decodes, but not to a call
    (assistant(("get_weather", {"city": "Oslo"}), ("get_weather", "{x")), 1.0),  # one bad call: the whole message
    (assistant(("get_weather", {})), 0.0),
    ({"role": "assistant", "content": "[get_weather(city='Oslo')]"}, 1.0),  # text is not read unless asked
])
def test_irrelevance_counts_calls_as_bfcl_decodes_them(rewards, message, score):
    for tools in (WEATHER, []):
        assert rewards["tool_call_match"].score_one([message], tools=tools, ground_truth=[]) == score


def test_an_irrelevance_row_may_offer_no_tools(rewards):
    rows = [("line 1", {"prompt": "p", "tools": [], "ground_truth": []}),
            ("line 2", {"prompt": "p", "tools": [], "ground_truth": [{"get_weather": {"city": ["Oslo"]}}]})]
    report = check_rows(rows, [rewards["tool_call_match"]])
    assert [p.rows for p in report.problems] == [["line 2"]]


@pytest.mark.parametrize(("text_calls", "text"), [
    ("python", "[get_weather(city='Oslo')]"),
    ("python", "get_weather(city='Oslo')"),
    ("json", '[{"function": "get_weather", "parameters": {"city": "Oslo"}}]'),
    ("concise_xml", '<functions><function name="get_weather"><param name="city">Oslo</param></function></functions>'),
    ("verbose_xml", '<functions><function name="get_weather"><params><param name="city" value="Oslo" '
                    'type="string"/></params></function></functions>'),
])
def test_calls_written_as_text_are_read_in_bfcls_formats(rewards, text_calls, text):
    match = rewards["tool_call_match"]
    columns = {"tools": WEATHER, "ground_truth": [{"get_weather": {"city": ["Oslo"]}}]}
    assert match.bind({"text_calls": text_calls}).score_one(text, **columns) == 1.0
    assert match.score_one(text, **columns) == 0.0  # off by default: prose is prose


def test_text_calls_are_parsed_never_evaluated(rewards):
    match = rewards["tool_call_match"].bind({"text_calls": "python"})
    columns = {"tools": WEATHER, "ground_truth": [{"get_weather": {"city": ["Oslo"]}}]}
    for text in ("[get_weather(city=__import__('os').getcwd())]", "[get_weather(city='Os' + 'lo')]",
                 "[get_weather(city=(lambda: 'Oslo')())]", "[get_weather(city='Oslo'" + ")" * 10_000):
        assert match.score_one(text, **columns) == 0.0


def test_dots_to_underscores_expects_the_names_an_openai_style_model_saw(rewards):
    tools = [{"name": "math.factorial", "parameters": {"type": "dict", "properties": {"n": {"type": "integer"}}}}]
    columns = {"tools": tools, "ground_truth": [{"math.factorial": {"n": [5]}}]}
    match = rewards["tool_call_match"]
    underscored, dotted = [assistant(("math_factorial", {"n": 5}))], [assistant(("math.factorial", {"n": 5}))]
    assert (match.score_one(underscored, **columns), match.score_one(dotted, **columns)) == (0.0, 1.0)
    renamed = match.bind({"dots_to_underscores": True})
    assert (renamed.score_one(underscored, **columns), renamed.score_one(dotted, **columns)) == (1.0, 0.0)


FILES = {"GorillaFileSystem": {"root": {"alice": {"type": "directory", "contents": {
    "notes.txt": {"type": "file", "content": "draft one\ndraft two"}}}}}}
STATE = {"initial_config": FILES, "involved_classes": ["GorillaFileSystem"],
         "ground_truth": [["mkdir(dir_name='old')", "mv(source='notes.txt', destination='old')"],
                          ["cd(folder='old')", "wc(file_name='notes.txt', mode='l')"]]}


def rollout(*turns: list[tuple[str, object]]) -> list[dict]:
    messages: list[dict] = []
    for calls in turns:
        messages.append({"role": "user", "content": "..."})
        if calls:
            messages += [assistant(*calls)] + [{"role": "tool", "content": "..."} for _ in calls]
        messages.append({"role": "assistant", "content": "Done."})
    return messages


MKDIR, MV = ("mkdir", {"dir_name": "old"}), ("mv", {"source": "notes.txt", "destination": "old"})
CD, WC = ("cd", {"folder": "old"}), ("wc", {"file_name": "notes.txt", "mode": "l"})


@pytest.mark.parametrize(("turns", "score"), [
    ([[MKDIR, MV], [CD, WC]], 1.0),
    ([[("ls", {}), MKDIR, MV], [("pwd", {}), CD, ("cat", {"file_name": "notes.txt"}), WC]], 1.0),  # reads only
    ([[MKDIR, MV, ("nonexistent", {})], [CD, WC]], 1.0),  # an unknown call changes nothing
    ([[MKDIR, MV, CD], [WC]], 1.0),  # the same state at each turn's end, the same results
    ([[MKDIR, MV, CD, WC], []], 0.0),  # everything in the first turn: the second made no call
    # BFCL's own leniency: the working directory is private (not compared), and turn 2's results are among the
    # results so far, so work done a turn early passes once the later turn makes any call
    ([[MKDIR, MV, CD, WC], [("pwd", {})]], 1.0),
    ([[MKDIR, MV, ("touch", {"file_name": "x"})], [CD, WC]], 0.0),  # a file too many: the state differs
    ([[MV, MKDIR], [CD, WC]], 0.0),  # moved before the folder exists: renamed, not moved
    ([[CD, WC], [MKDIR, MV]], 0.0),  # turns swapped
    ([[MKDIR, MV], [CD, ("wc", {"file_name": "notes.txt", "mode": "w"})]], 0.0),  # a different result
    ([[MKDIR, MV]], 0.0),  # one turn of two
])
def test_state_is_checked_turn_by_turn_as_bfcl_does(rewards, turns, score):
    assert rewards["tool_call_state"].score_one(rollout(*turns), **STATE) == score


def test_the_state_reward_reads_text_calls_and_runs_in_worker_processes(rewards):
    text = [{"role": "user", "content": "..."}, {"role": "assistant", "content": "[mkdir(dir_name='old'), "
                                                 "mv(source='notes.txt', destination='old')]"},
            {"role": "user", "content": "..."}, {"role": "assistant", "content": "[cd(folder='old')]"},
            {"role": "assistant", "content": "[wc(file_name='notes.txt', mode='l')]"}]
    assert rewards["tool_call_state"].bind({"text_calls": "python"}).score_one(text, **STATE) == 1.0
    rows = [{"prompt": "p", "completion": rollout([MKDIR, MV], [CD, WC]), **STATE},
            {"prompt": "p", "completion": rollout([MV, MKDIR], [CD, WC]), **STATE}]
    with Ensemble.from_spec("tool_call_state") as ensemble:
        assert ensemble.score_rows(rows).total == [1.0, 0.0]


@pytest.mark.parametrize(("row", "problem"), [
    ({**STATE, "involved_classes": ["WebSearchAPI"]}, "names ['WebSearchAPI']; the backends are"),
    ({**STATE, "ground_truth": [["mkdir(dir_name=name)"]]}, "not a literal"),
    ({**STATE, "ground_truth": [["__import__('os').system('true')"]]}, "not a call of a named function"),
    ({**STATE, "ground_truth": ["mkdir(dir_name='x')"]}, "a list of turns"),
    ({**STATE, "initial_config": "{"}, "text that is not JSON"),
])
def test_data_check_names_unusable_multi_turn_rows(rewards, row, problem):
    assert problem in rewards["tool_call_state"].check_row(row)


def test_dispatch_calls_public_methods_of_the_involved_classes_and_nothing_else():
    instances: dict = {}
    calls = [Call("_load_scenario", {"scenario": {}}), Call("__init__"), Call("eval", {"source": "1"}),
             Call("open", {"file": "/etc/passwd"}), Call("remove", {}), Call("mkdir", {"dir_name": "__import__('os')"}),
             Call("mkdir", {"nonsense": 1}), Call("pwd")]
    results, involved = execute_multi_turn_func_call(calls, FILES, ["GorillaFileSystem"], instances)
    assert results[:5] == ["Error during execution: name '_load_scenario' is not defined",
                           "Error during execution: name '__init__' is not defined",
                           "Error during execution: name 'eval' is not defined",
                           "Error during execution: name 'open' is not defined",
                           "Error during execution: Function call remove is not allowed."]
    assert results[5] == "None" and "__import__('os')" in involved["GorillaFileSystem"].root.contents
    assert results[6].startswith("Error during execution: ") and "unexpected keyword argument" in results[6]
    assert json.loads(results[7]) == {"current_working_directory": "/alice"}
    assert execute_multi_turn_func_call([Call("pwd")], FILES, ["GorillaFileSystem"], instances)[1] == involved


def test_math_calls_leave_the_process_precision_as_it_was_and_bound_their_work():
    dps, prec = mpmath.mp.dps, decimal.getcontext().prec
    results, _ = execute_multi_turn_func_call(
        [Call("logarithm", {"value": 10, "base": 2, "precision": 50}), Call("square_root", {"number": 2,
                                                                                           "precision": 40}),
         Call("power", {"base": 10, "exponent": 10**12}), Call("logarithm", {"value": 2, "base": 3,
                                                                             "precision": 10**9})],
        {}, ["MathAPI"], {})
    assert (mpmath.mp.dps, decimal.getcontext().prec) == (dps, prec)
    assert len(results[0]) > 50 and "3.32192809488736234787031942948939017586483139302458" in results[0]
    assert "refused" in results[2] and "refused" in results[3]


@pytest.mark.parametrize(("text", "call"), [
    ("sort('final_report.pdf')", Call("sort", {}, ("final_report.pdf",))),
    ("mv(source='a', destination='b')", Call("mv", {"source": "a", "destination": "b"})),
    ("f(x=-2, y=[1, {'a': None}], z=(1, 2), t=True)", Call("f", {"x": -2, "y": [1, {"a": None}], "z": (1, 2),
                                                                 "t": True})),
])
def test_ground_truth_calls_are_read_as_literals(text, call):
    assert parse_call(text) == call


@pytest.mark.parametrize("text", ["f(**kw)", "f(x=open('a'))", "os.system('x')", "f(x=1+1)", "[f()]", "f("])
def test_anything_else_is_not_a_ground_truth_call(text):
    with pytest.raises(ValueError):
        parse_call(text)


def test_a_backend_changing_a_list_it_was_given_does_not_change_the_ground_truth(rewards):
    """TwitterAPI keeps a post's `mentions` list and `mention` appends to it: scored twice, the row's ground truth
    (read once, cached) must be what the row says both times (BFCL builds fresh arguments with every eval)."""
    row = {"initial_config": {"TwitterAPI": {"username": "a", "password": "b", "authenticated": True}},
           "involved_classes": ["TwitterAPI"],
           "ground_truth": [["post_tweet(content='hi', tags=['#t'], mentions=['@b'])"],
                            ["mention(tweet_id=0, mentioned_usernames=['@c'])"]]}
    completion = [{"role": "user", "content": "..."},
                  assistant(("post_tweet", {"content": "hi", "tags": ["#t"], "mentions": ["@b"]})),
                  {"role": "user", "content": "..."}, assistant(("mention", {"tweet_id": 0,
                                                                             "mentioned_usernames": ["@c"]}))]
    assert [rewards["tool_call_state"].score_one(completion, **row) for _ in range(3)] == [1.0, 1.0, 1.0]


def test_the_real_outputs_hold_accepts_and_rejects_for_both_rewards():
    seen = {(r["reward"], c["bfcl"]) for r in REAL for c in r["cases"]}
    assert seen == {("tool_call_match", True), ("tool_call_match", False), ("tool_call_state", True),
                    ("tool_call_state", False)}
