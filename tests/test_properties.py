"""Hostile and arbitrary input never breaks the contract (hypothesis).

* The spec parser returns items or raises :class:`SpecError`, nothing else.
* The row loader yields a row or a :class:`DataError` in its place for any bytes, and ``normalize``
  returns a row or raises :class:`DataError` for any JSON value.
* Every built-in reward, on any completion text (and, for ``math`` and ``code``, through the ensemble
  with its timeout, as a run scores), returns a float in its documented range or None, never raises,
  and never takes longer than its timeout.  json_schema has its own properties
  (tests/test_json_schema_properties.py).
"""

from __future__ import annotations

import math
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grpo_host import Ensemble, get_reward
from grpo_host.data import DataError, normalize, read_rows
from grpo_host.reward_spec import SpecError, parse_spec

FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])

SPEC_PIECES = st.sampled_from(["accuracy", "math", "r1_int", "(", ")", "[", "]", ":", ",", "=", "'", '"', "2",
                               "-1e9", "on_error", "timeout", "skip", " ", "x", "\\", "{", "}", "nan", "1" * 5000])
SPEC_TEXT = st.one_of(st.text(max_size=200), st.lists(SPEC_PIECES, max_size=40).map("".join))


@FAST
@given(SPEC_TEXT)
def test_the_spec_parser_returns_items_or_raises_spec_error(text):
    try:
        items = parse_spec(text)
    except SpecError:
        return
    assert items and all(item.name for item in items)


@pytest.mark.parametrize("text", ["math(x=" + "[" * 5000 + "]" * 5000 + ")", "math:nan", "math:1e999",
                                  "math [timeout=-1]", "math [timeout=nan]", "math [timeout=1e999]"])
def test_deep_and_invalid_spec_values_are_spec_errors(text):
    with pytest.raises(SpecError):
        parse_spec(text)


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                    max_leaves=20)
ROWISH = st.dictionaries(st.sampled_from(["prompt", "messages", "instruction", "input", "output", "question",
                                          "answer", "completion", "x"]), JSON, max_size=6)


@FAST
@given(st.one_of(JSON, ROWISH))
def test_normalize_returns_a_row_or_raises_data_error(raw):
    try:
        row = normalize(raw, "row 1")
    except DataError as exc:
        assert str(exc).startswith("row 1: ")
        return
    assert isinstance(row, dict) and row["prompt"]


@FAST
@given(st.binary(max_size=400), st.sampled_from([".jsonl", ".json", ".csv"]))
def test_the_row_loader_never_raises_mid_file(tmp_path_factory, data, suffix):
    path = tmp_path_factory.mktemp("rows") / f"rows{suffix}"
    path.write_bytes(data)
    try:
        rows = list(read_rows(path))
    except DataError as exc:  # a whole-file problem (.json that is not a list), named by the file
        assert str(exc).startswith(str(path))
        return
    except UnicodeDecodeError:
        pytest.fail("a CSV that is not UTF-8 must be a DataError naming the file")
    for where, row in rows:
        assert where.startswith(("line ", "row ")) and (isinstance(row, DataError) or row is not None)


HOSTILE = st.one_of(
    st.text(max_size=300),
    st.lists(st.sampled_from(["<think>", "</think>", "<answer>", "</answer>", "\n", "\\boxed{", "}", "{", "```",
                              "```python\n", "9^{9^{9}}", "x" * 1000, "\x00", "\u202e", "0.5", "-", "e"]),
             max_size=30).map("".join),
)
RANGES = {  # documented ranges of the inline built-ins (None is always allowed)
    "accuracy": (0.0, 1.0), "r1_int": (0.0, 1.0), "r1_strict_format": (0.0, 1.0), "r1_soft_format": (0.0, 1.0),
    "think_format": (0.0, 1.0), "r1_xmlcount": (-math.inf, 1.0), "repetition": (-1.0, 0.0), "overlong": (-1.0, 0.0),
}


@FAST
@given(HOSTILE, st.text(max_size=20))
@pytest.mark.parametrize("name", sorted(RANGES))
def test_inline_built_ins_return_a_float_in_range_or_none(name, completion, answer):
    reward = get_reward(name)
    value = reward.score_one(completion, None, answer=answer or "4", completion_ids=list(range(len(completion))))
    low, high = RANGES[name]
    assert value is None or (math.isfinite(value) and low <= value <= high)


@pytest.fixture(scope="module")
def worker_ensemble():
    spec = "math [timeout=8], code(timeout=1) [timeout=20]"
    with Ensemble.from_spec(spec, workers=1) as ensemble:
        yield ensemble


@SLOW
@given(HOSTILE, st.sampled_from(["4", "\\frac{1}{2}", "x**2 + 1", "1.5e-3", "[1, 2)"]))
def test_math_and_code_through_the_ensemble_return_in_range_within_their_timeouts(worker_ensemble, completion, gold):
    start = time.monotonic()
    result = worker_ensemble.score([completion], [None], answer=[gold], tests=[[{"input": "", "output": "1"}]])
    assert time.monotonic() - start < 8 + 20 + 10  # both timeouts, plus a replacement worker's start
    assert result.row_errors == {}, result.row_errors  # a counted timeout is allowed; an error out of a reward not
    for name in ("math", "code"):
        value = result.values[name][0]
        assert value is None or 0.0 <= value <= 1.0

