"""One scored batch per pass: a chat completion is read once, and every sink (record, monitors, tally, metric log)
takes the same batch, on ``score``'s path and on the training backends'."""

from __future__ import annotations

import pytest

from grpo_host import Ensemble, Member, reward
from grpo_host.batches import score_file_batches
from grpo_host.discovery.plugins import default_plugins
from grpo_host.kinds.monitor import MonitorSet, choose
from grpo_host.runs.record import RolloutRecord, read_record
from grpo_host.scoring.stats import Tally
from grpo_host.scoring.trajectory import Trajectory
from grpo_host.training.backends.reward_funcs import ROW_ID, EnsembleRewardFuncs
from grpo_host.training.train import Row


@reward(name="answer_length")
def answer_length(completion, **_):
    return float(len(completion))


@reward(name="turns", trajectory=True)
def turns(trajectory, **_):
    return float(trajectory.turns)


def chat(answer: str) -> list[dict]:
    """A two-turn agent rollout: a tool call, its result, the final answer."""
    return [{"role": "assistant", "content": "", "tool_calls": [
                {"type": "function", "function": {"name": "calc", "arguments": "{\"x\": 1}"}}]},
            {"role": "tool", "content": "1"}, {"role": "assistant", "content": answer}]


@pytest.fixture
def reads(monkeypatch):
    """Every message list read into a Trajectory, anywhere (the ensemble, the record, the monitors)."""
    seen: list[int] = []
    read = Trajectory.of

    def counting(cls, completion):
        if isinstance(completion, list):
            seen.append(id(completion))
        return read(completion)

    monkeypatch.setattr(Trajectory, "of", classmethod(counting))
    return seen


@pytest.fixture
def ensemble():
    with Ensemble([Member(answer_length), Member(turns, weight=0.5)]) as ensemble:
        yield ensemble


def sinks(tmp_path, ensemble):
    record = RolloutRecord(tmp_path / "rollouts", ensemble.names)
    monitors = MonitorSet(choose("all", default_plugins().registry, action="log"), quiet=1 << 30, echo=None)
    return record, monitors


def test_score_reads_each_chat_completion_once_for_rewards_record_and_monitors(tmp_path, ensemble, reads):
    record, monitors = sinks(tmp_path, ensemble)
    rows = [(f"line {i + 1}", {"prompt": f"p{i // 2}", "completion": chat(f"answer {i}")}) for i in range(6)]
    tally = Tally(ensemble.names)
    [lines] = list(score_file_batches(rows, ensemble, tally, sinks=[record, monitors]))
    assert sorted(reads) == sorted(id(row["completion"]) for _, row in rows)  # each one, once
    assert [line["rewards"] for line in lines[:2]] == [{"answer_length": 8.0, "turns": 2.0}] * 2
    assert tally.batches == 1 and tally.monitor_metrics()  # the monitors' metrics reached the tally
    assert "monitors/tool_use/calls_mean" in tally.monitor_metrics()
    table = read_record(tmp_path / "rollouts")
    assert table.num_rows == 6 and table.column("completion").to_pylist()[0] == "answer 0"


def test_a_training_pass_reads_each_chat_completion_once_and_logs_every_sinks_figures(tmp_path, ensemble, reads):
    record, monitors = sinks(tmp_path, ensemble)
    rows = [Row("line 1", {"prompt": "p"}), Row("line 2", {"prompt": "q"})]
    logged: dict[str, float] = {}
    funcs = EnsembleRewardFuncs(ensemble, rows, log_metric=logged.__setitem__, monitors=monitors, record=record,
                                group_size=2)
    completions = [chat("a"), chat("bb"), chat("ccc"), chat("dddd")]
    assert funcs.funcs[0](prompts=["p", "p", "q", "q"], completions=completions, **{ROW_ID: [0, 0, 1, 1]}) == [
        1.0, 2.0, 3.0, 4.0]
    assert funcs.funcs[1](prompts=["p", "p", "q", "q"], completions=completions, **{ROW_ID: [0, 0, 1, 1]}) == [
        2.0] * 4
    assert sorted(reads) == sorted(map(id, completions))
    assert logged["rewards/answer_length/coverage"] == 1.0 and logged["unscored"] == 0.0
    assert "record/seconds" in logged and "monitors/tool_use/calls_mean" in logged
    assert read_record(tmp_path / "rollouts").column("group").to_pylist() == ["0:0", "0:0", "1:1", "1:1"]
