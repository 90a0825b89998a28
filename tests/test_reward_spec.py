"""Reward specs: the string form and the YAML list form."""

import pytest

from grpo_host.errors import SpecError
from grpo_host.scoring.spec import parse_spec


def test_string_form_with_weights_and_params():
    items = parse_spec("accuracy:2, r1_strict_format:0.5, math(tolerance=1e-6, targets=[boxed, answer]):1")
    assert [(i.name, i.weight) for i in items] == [("accuracy", 2.0), ("r1_strict_format", 0.5), ("math", 1.0)]
    assert items[2].params == {"tolerance": 1e-6, "targets": ["boxed", "answer"]}
    assert parse_spec("accuracy")[0].weight == 1.0


def test_param_values_parse_as_python_literals_or_words():
    [item] = parse_spec("x(a=true, b='quoted, with comma', c=None, d=word, e=-3, f=[])")
    assert item.params == {"a": True, "b": "quoted, with comma", "c": None, "d": "word", "e": -3, "f": []}


def test_yaml_list_form_with_policies():
    items = parse_spec([{"name": "math", "weight": 2, "params": {"tolerance": 0.01}, "on_error": "skip",
                         "timeout": 5}, "accuracy:0"])
    assert (items[0].on_error, items[0].timeout, items[0].params) == ("skip", 5.0, {"tolerance": 0.01})
    assert (items[1].name, items[1].weight) == ("accuracy", 0.0)


@pytest.mark.parametrize(("spec", "message"), [
    ("", "empty reward spec"),
    ("accuracy:heavy", "weight 'heavy' of 'accuracy' is not a number"),
    ("math(tolerance)", "cannot parse parameter 'tolerance' of 'math'"),
    ("3rd:1", "cannot parse '3rd:1'"),
    ("accuracy, accuracy:2", "'accuracy' appears twice"),
    ([{"name": "math", "wieght": 2}], "reward spec entry 'math'"),
    ([{"name": "math", "on_error": "ignore"}], "on_error"),
    ([{"name": "math", "timeout": 0}], "timeout"),
])
def test_errors_point_at_the_part(spec, message):
    with pytest.raises(SpecError, match=message):
        parse_spec(spec)
