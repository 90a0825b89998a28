"""``rescore`` finds an environment's own reward column by what the record says, not by the packs installed now.

A real record is written by the reward functions both trainers call, with
the test agent pack's ``step_notes`` sessions as TRL hands them over; it is
then re-scored with the agent pack not loaded (as after it was uninstalled),
and with a part whose statement is damaged.
"""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from grpo_host.discovery.plugins import load_plugins
from grpo_host.errors import RecordError
from grpo_host.runs.record import ENVIRONMENTS, RolloutRecord, environment_rewards, read_record
from grpo_host.runs.rescore import rescore
from grpo_host.scoring.ensemble import Ensemble
from grpo_host.training.backends.reward_funcs import ROW_ID, EnsembleRewardFuncs
from grpo_host.training.train import Row

ROWS = [{"prompt": [{"role": "user", "content": "Check your notes."}], "answer": "1"}]
CALL = {"type": "function", "function": {"name": "read", "arguments": {}}}
CALLED = [{"role": "assistant", "content": "", "tool_calls": [CALL]}, {"role": "tool", "name": "read", "content": ""},
          {"role": "assistant", "content": "done"}]


@pytest.fixture
def recorded(packs, monkeypatch, tmp_path):
    """Two rollouts of one group: the notebook pays 0.25 + 1.0 (a read, then the answer noted), then 0.0; only
    the environment's reward is weighted, so it alone makes the totals and the advantages."""
    monkeypatch.syspath_prepend(str(packs["agentpack"]))
    agentpack = load_plugins(env={"GRPO_HOST_LOAD_PLUGINS": "agentpack"})
    rows = [Row("line 1", ROWS[0])]
    ensemble = Ensemble.from_spec("seen_tools:0", plugins=agentpack)
    funcs = EnsembleRewardFuncs(ensemble, rows, record=RolloutRecord(tmp_path / "rollouts", ensemble.names))
    session = agentpack.registry.environment("step_notes").session_class()  # one class, as TRL's factory makes
    sessions = [session(rows=rows) for _ in range(2)]
    for session in sessions:
        session.reset(_grpo_host_row=0)
    sessions[0].read()
    sessions[0].write(text="it is 1")
    funcs.funcs[0](prompts=[ROWS[0]["prompt"]] * 2, environments=sessions, **{ROW_ID: [0, 0]},
                   completions=[CALLED, [{"role": "assistant", "content": "nothing"}]])
    ensemble.close()
    return tmp_path / "rollouts"


def test_the_record_says_which_columns_are_environments_own_rewards(recorded):
    table = read_record(recorded).to_pylist()
    assert [r["reward/StepNotesSession"] for r in table] == [1.25, 0.0]
    assert table[0]["advantage"] > 0 > table[1]["advantage"]
    assert environment_rewards(recorded) == {"StepNotesSession"}


def test_rescore_keeps_an_uninstalled_environment_s_recorded_reward_in_the_totals(recorded):
    """Without the agent pack no environment named StepNotesSession is registered: before the record said which
    columns are environments', its value was left out of the new totals and both advantages flipped."""
    without = load_plugins(env={"GRPO_HOST_LOAD_PLUGINS": "tool_calls"})  # the agent pack is not loaded
    assert "step_notes" not in without.registry.names("environment")
    found = rescore(recorded, "tool_efficiency:0", plugins=without)
    assert found["advantage_sign_changed"] == 0
    assert found["environments"] == ["StepNotesSession"]


def test_a_part_that_misstates_its_environments_is_an_error_naming_it(recorded):
    [part] = recorded.glob("*.parquet")
    table = pq.read_table(part)
    pq.write_table(table.replace_schema_metadata({ENVIRONMENTS: b'["NoSuchSession"]'}), part)
    with pytest.raises(RecordError, match=r"\.parquet: a damaged rollout part: it names 'NoSuchSession'"):
        rescore(recorded, "tool_efficiency:0", plugins=load_plugins(env={"GRPO_HOST_LOAD_PLUGINS": "tool_calls"}))
    pq.write_table(table.replace_schema_metadata({ENVIRONMENTS: b"{not json"}), part)
    with pytest.raises(RecordError, match="are not a list of names"):
        environment_rewards(recorded)


def test_a_record_from_before_parts_said_takes_the_environments_registered_now(recorded, packs):
    [part] = recorded.glob("*.parquet")
    pq.write_table(pq.read_table(part).replace_schema_metadata(None), part)
    assert environment_rewards(recorded) is None
    agentpack = load_plugins(env={"GRPO_HOST_LOAD_PLUGINS": "agentpack"})  # on the path (the fixture's)
    assert rescore(recorded, "seen_tools:0", plugins=agentpack)["environments"] == ["StepNotesSession"]
