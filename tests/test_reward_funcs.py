"""The ensemble as engine reward functions (what both training hosts hand their trainer)."""

import sample_rewards

from grpo_host import Ensemble
from grpo_host.discovery.plugins import load_plugins
from grpo_host.training.backends.reward_funcs import ROW_ID, EnsembleRewardFuncs
from grpo_host.training.train import Row
from reward_plugins.shaping import rewards as shaping


def funcs_for(spec, rows):
    plugins = load_plugins(entry_points_group=None, plugins=[sample_rewards, shaping])
    ensemble = Ensemble.from_spec(spec, plugins=plugins)
    return EnsembleRewardFuncs(ensemble, [Row(f"line {i + 1}", row) for i, row in enumerate(rows)])


def test_weight_zero_members_do_not_make_an_unscored_row_scorable():
    rows = [{"prompt": "p", "answer": "a"}, {"prompt": "q", "answer": "b"}]
    funcs = funcs_for("echo:1, batch_count:0", rows)
    echo, count = funcs.funcs
    assert [echo.__name__, count.__name__] == ["echo", "batch_count"] and funcs.weights == [1.0, 0.0]
    kw = {ROW_ID: [0, 1], "completions": ["2", "x"], "prompts": ["p", "q"]}
    assert echo(**kw) == [2.0, None]  # "x" is no number: the only weighted reward does not apply to row 1
    # batch_count scores both rows (1.0 each), but row 1 is unscored, so the engine sees no value there:
    # TRL's "every function returned None" then agrees with the ensemble's rule (weighted rewards only)
    assert count(**kw) == [1.0, None]


def test_completion_ids_reach_length_rewards():
    funcs = funcs_for("overlong(max_length=4, cache=2):1", [{"prompt": "p"}, {"prompt": "q"}])
    [overlong] = funcs.funcs
    out = overlong(prompts=["p", "q"], completions=["a", "b"], completion_ids=[[1, 2], [1, 2, 3]], **{ROW_ID: [0, 1]})
    assert out == [0.0, -0.5]


def test_rows_come_from_the_run_not_from_the_engine():
    rows = [{"prompt": "p", "answer": "x", "meta": {"a": 1}}, {"prompt": "q", "answer": "y", "meta": {"b": [2]}}]
    seen = []

    from grpo_host import reward

    @reward
    def spy(completion, *, meta, **_):
        seen.append(meta)
        return 1.0

    ensemble = Ensemble.from_spec("spy", plugins=load_plugins(entry_points_group=None, plugins=[_module(spy)]))
    funcs = EnsembleRewardFuncs(ensemble, [Row("line 1", rows[0]), Row("line 2", rows[1])])
    assert funcs.funcs[0](prompts=["p", "q"], completions=["c", "d"], **{ROW_ID: [1, 0]}) == [1.0, 1.0]
    assert seen == [{"b": [2]}, {"a": 1}]


def _module(item):
    import types

    from grpo_host import hookimpl

    module = types.ModuleType("spy_pack")
    module.register_rewards = hookimpl(lambda register: register(item))
    return module
