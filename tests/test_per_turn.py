"""Per-turn rewards: the contract, the run's turn_reward rule, the record, the report, rescore and both backends.

The rewards and the environment are the test agent pack's (``turn_calls``: the tool calls of each assistant turn;
``step_notes``: the notes notebook scored per turn), found through its entry point; records are real Parquet
parts, the report a real page, the backends' reward functions the ones their trainers call.
"""

from __future__ import annotations

import json
import math
import re

import pytest

from grpo_host import Ensemble, Scored, reward
from grpo_host.discovery.plugins import load_plugins
from grpo_host.errors import RewardError, UserError
from grpo_host.kinds.environment import environment
from grpo_host.runs.record import RolloutRecord, advantages, read_record
from grpo_host.runs.report import build_report
from grpo_host.runs.rescore import rescore
from grpo_host.scoring.ensemble import Member
from grpo_host.scoring.trajectory import Trajectory
from grpo_host.scoring.turns import TurnRule
from grpo_host.training.backends.reward_funcs import ROW_ID, EnsembleRewardFuncs
from grpo_host.training.train import Row


def call(name: str) -> dict:
    return {"type": "function", "function": {"name": name, "arguments": {}}}


TWO_CALLS = [{"role": "assistant", "content": "", "tool_calls": [call("read"), call("read")]},
             {"role": "tool", "name": "read", "content": ""}, {"role": "tool", "name": "read", "content": ""},
             {"role": "assistant", "content": "", "tool_calls": [call("read")]},
             {"role": "tool", "name": "read", "content": ""},
             {"role": "assistant", "content": "done"}]
"""Three assistant turns: two tool calls, one, then the answer: turn_calls gives [2, 1, 0]."""
ROWS = [{"prompt": [{"role": "user", "content": "Check your notes."}], "answer": "1"}]


@pytest.fixture
def agentpack(packs, monkeypatch):
    monkeypatch.syspath_prepend(str(packs["agentpack"]))
    return load_plugins(env={"GRPO_HOST_LOAD_PLUGINS": "agentpack"})


@pytest.mark.parametrize(("rule", "episode", "turns", "expected"), [
    ("episode", 3.0, [2.0, 1.0, 0.0], 3.0),
    ("episode", 7.0, [2.0, 1.0, 0.0], 7.0),  # the episode value the reward gave, not its turns
    ("sum", 7.0, [2.0, None, 1.0], 3.0),  # a turn without a value adds nothing
    ("discounted:0.5", 0.0, [2.0, 1.0, 4.0], 2.0 + 0.5 + 1.0),
    ("discounted:0.5", 0.0, [None, None], None),  # no turn has a value: the reward does not apply
    ("sum", 5.0, None, 5.0),  # a reward without turns is its value under every rule
])
def test_turn_rules_combine_the_turns_as_documented(rule, episode, turns, expected):
    assert TurnRule.parse(rule).combine(episode, turns) == expected


@pytest.mark.parametrize("rule", ["last", "discounted", "discounted:0", "discounted:1.5", "discounted:x", "Sum"])
def test_a_rule_that_is_not_one_is_refused_saying_which_are(rule):
    with pytest.raises(UserError, match="turn_reward must be episode, sum or discounted:GAMMA"):
        Ensemble([Member(reward(lambda c, **_: 1.0))], turn_reward=rule)


def test_a_trajectory_is_cut_at_each_assistant_turn():
    turns = Trajectory.of(TWO_CALLS).by_turn
    assert [[m["role"] for m in turn] for turn in turns] == [["assistant", "tool", "tool"], ["assistant", "tool"],
                                                             ["assistant"]]
    assert len(turns) == Trajectory.of(TWO_CALLS).turns
    assert Trajectory.of("plain text").by_turn == (({"role": "assistant", "content": "plain text"},),)


def test_the_episode_value_is_the_sum_of_the_turns_unless_the_reward_gives_one():
    assert Scored.of_turns([2, None, 1.5], 3) == Scored(3.5, {}, (2.0, None, 1.5))
    assert Scored.of_turns(Scored(1.0, {"n": 2}, [0, 0]), 2) == Scored(1.0, {"n": 2.0}, (0.0, 0.0))
    assert Scored.of_turns(None, 4) == Scored(None)  # the reward does not apply to this rollout


@pytest.mark.parametrize(("returned", "message"), [
    ([1.0], "returned 1 turn values for a rollout of 3 assistant turns"),
    ([1.0, math.nan, 0.0], "returned nan for turn 2"),
    ([1.0, 0.0, math.inf], "returned inf for turn 3"),
    (["1", 0.0, 0.0], "returned str '1' for turn 1"),
    (2.0, "returned float 2.0 (a per_turn reward returns a list with one value per assistant turn)"),
    ("1 0 0", "returned str '1 0 0' (a per_turn reward returns a list"),
])
def test_a_per_turn_reward_outside_its_contract_is_an_error_naming_the_reward_and_the_row(returned, message):
    @reward(name="broken_turns", per_turn=True)
    def broken(rollout, **_):
        return returned

    with Ensemble([Member(broken, on_error="skip")]) as ensemble:
        result = ensemble.score([TWO_CALLS], row_ids=["line 7"])
    assert result.values["broken_turns"] == [None] and result.turns["broken_turns"] == [None]
    [error] = result.errors
    assert "reward 'broken_turns'" in error and "line 7" in error and message in error
    with pytest.raises(RewardError, match=f"reward 'broken_turns' .*{re.escape(message)}"):  # as TRL calls it
        broken(prompts=["p"], completions=[TWO_CALLS])


def test_turns_from_a_reward_not_declared_per_turn_are_refused():
    @reward(name="undeclared")
    def undeclared(completion, **_):
        return Scored(1.0, turns=[1.0])

    with pytest.raises(RewardError, match="returned turn values, but the reward is not declared per_turn"):
        undeclared(prompts=["p"], completions=["x"])


def test_an_environment_declared_per_turn_needs_a_reward():
    with pytest.raises(TypeError, match="per_turn=True, but the class has no reward method"):
        @environment("rewardless", per_turn=True)
        class Rewardless:
            def reset(self, row):
                return None

            def look(self) -> str:
                """Look around."""
                return ""


@pytest.mark.parametrize(("returned", "message"), [
    ([0.5, math.nan], "returned nan for turn 2"),
    ([0.5, "a lot"], "returned str 'a lot' for turn 2"),
    (1.0, "a per_turn reward returns a list"),
])
def test_an_environments_per_turn_reward_outside_the_contract_names_the_environment_and_the_row(returned, message):
    @environment("scored_badly", per_turn=True)
    class ScoredBadly:
        def reset(self, row):
            return None

        def look(self) -> str:
            """Look around."""
            return ""

        def reward(self):
            return returned

    session = ScoredBadly.session_class()(rows=[Row("line 3", {"x": 1})])
    session.reset(_grpo_host_row=0)
    with pytest.raises(RewardError, match=f"environment 'scored_badly' .* reward on line 3: .*{re.escape(message)}"):
        session.get_reward()


def _step_notes(agentpack, rule: str, rows):
    """One step_notes session per rollout, as the engines pool them: the first read its notes twice (with the answer
    in them), the second wrote nothing."""
    factory = agentpack.registry.environment("step_notes").session_class()
    first, second = factory(rows=rows, turn_reward=rule), factory(rows=rows, turn_reward=rule)
    first.reset(_grpo_host_row=0)
    first.write(text="it is 1")
    first.read()
    first.read()
    second.reset(_grpo_host_row=0)
    return [first, second]


def _scored_pass(agentpack, rule: str, folder):
    """One scoring pass of two rollouts through the engines' reward functions, with the rollouts' sessions as TRL
    passes them, into a real record."""
    rows = [Row("line 1", ROWS[0])]
    ensemble = Ensemble.from_spec("turn_calls:1, seen_tools:0", plugins=agentpack, turn_reward=rule)
    record = RolloutRecord(folder, ensemble.names)
    funcs = EnsembleRewardFuncs(ensemble, rows, record=record, group_size=2)
    sessions = _step_notes(agentpack, rule, rows)
    completions = [TWO_CALLS, [{"role": "assistant", "content": "no tools"}]]
    values = funcs.funcs[0](prompts=[ROWS[0]["prompt"]] * 2, completions=completions, environments=sessions,
                            **{ROW_ID: [0, 0]})
    ensemble.close()
    return values, sessions


@pytest.mark.parametrize(("rule", "trained", "own"), [
    ("episode", [3.0, 0.0], [1.5, 0.0]),  # the turns' sums: [2, 1, 0] and [0]; the notebook's [.25, .25, 1], [0]
    ("discounted:0.5", [2.5, 0.0], [0.25 + 0.125 + 0.25, 0.0]),
])
def test_the_engines_train_on_what_the_rule_makes_of_the_turns(agentpack, tmp_path, rule, trained, own):
    """TRL calls these reward functions and the environments' get_reward; the MLX backend calls the same ones
    (:class:`MlxRewardFuncs` wraps them), so both train on the same number."""
    values, sessions = _scored_pass(agentpack, rule, tmp_path / "rollouts")
    assert values == trained
    assert [s.get_reward() for s in sessions] == own  # TRL's environment reward
    [table] = [read_record(tmp_path / "rollouts").to_pylist()]
    assert [r["reward/turn_calls"] for r in table] == trained
    assert [r["turns/turn_calls"] for r in table] == [[2.0, 1.0, 0.0], [0.0]]
    assert [r["reward/StepNotesSession"] for r in table] == own
    assert [r["turns/StepNotesSession"] for r in table] == [[0.25, 0.25, 1.0], [0.0]]
    # the total trained on adds the environment's reward with weight 1, as TRL and mlx-lm-lora add it
    totals = [t + o for t, o in zip(trained, own, strict=True)]
    assert [r["total"] for r in table] == totals
    assert [r["advantage"] for r in table] == advantages(totals, ["0:0", "0:0"])


def test_an_environments_turns_that_are_not_one_per_assistant_turn_name_the_environment_and_the_row(agentpack,
                                                                                                     tmp_path):
    """TRL asks the environment for its reward without the trajectory; the reward functions' pass has it."""
    rows = [Row("line 1", ROWS[0])]
    ensemble = Ensemble.from_spec("turn_calls", plugins=agentpack)
    funcs = EnsembleRewardFuncs(ensemble, rows, record=RolloutRecord(tmp_path / "rollouts", ensemble.names))
    sessions = _step_notes(agentpack, "episode", rows)  # turns [0.25, 0.25, 1.0] and [0.0]
    swapped = [[{"role": "assistant", "content": "no tools"}], TWO_CALLS]
    with pytest.raises(RewardError, match=r"environment 'step_notes' \(pack .*\) reward on line 1: returned 3 turn "
                                          r"values for a rollout of 1 assistant turn\b"):
        funcs.funcs[0](prompts=[ROWS[0]["prompt"]] * 2, completions=swapped, environments=sessions,
                       **{ROW_ID: [0, 0]})
    ensemble.close()


def test_the_report_shows_each_per_turn_reward_by_turn_index(agentpack, tmp_path):
    _scored_pass(agentpack, "discounted:0.5", tmp_path / "rollouts")
    page = build_report(tmp_path / "rollouts")
    assert "Per-turn reward means by turn index" in page
    # turn_calls by turn: (2 + 0) / 2, then 1 and 0 from the one rollout that had them
    plot = next(p for p in page.split("Plotly.newPlot(")[1:] if "Per-turn reward means" in p.split("</script>")[0])
    traces, _ = json.JSONDecoder().raw_decode(plot[plot.index("["):])  # the figure's data, as plotly wrote it
    series = {trace["name"]: (trace["x"], trace["y"]) for trace in traces}
    assert series["turn_calls"] == ([1, 2, 3], [1.0, 1.0, 0.0])
    assert series["StepNotesSession"] == ([1, 2, 3], [0.125, 0.25, 1.0])
    assert "<th>turn_calls per turn</th>" in page and "<pre>2, 1, 0</pre>" in page


def test_rescore_compares_per_turn_values_under_the_runs_rule(agentpack, tmp_path):
    _scored_pass(agentpack, "discounted:0.5", tmp_path / "rollouts")
    same = rescore(tmp_path / "rollouts", "turn_calls", plugins=agentpack, turn_reward="discounted:0.5")
    assert same["rewards"]["turn_calls"] == {"compared": 2, "changed": 0, "errors": 0, "timeouts": 0}
    assert "StepNotesSession" in same["not_rescored"]  # an environment's reward is the environment's, not a spec's
    other = rescore(tmp_path / "rollouts", "turn_calls", plugins=agentpack, turn_reward="sum")
    assert other["rewards"]["turn_calls"]["changed"] == 1  # 2.5 recorded, 3.0 now; the no-tool rollout is 0 both


def test_rollouts_only_the_environment_scored_are_scored_and_rescore_keeps_its_reward(agentpack, tmp_path):
    """Only the environment's reward is weighted here, so it alone makes the totals and advantages (no rollout is
    unscored); it cannot be scored again (the environment's state is gone), so rescore adds its recorded value and
    no sign changes."""
    rows = [Row("line 1", ROWS[0])]
    ensemble = Ensemble.from_spec("turn_calls:0", plugins=agentpack)
    logged: dict[str, float] = {}
    funcs = EnsembleRewardFuncs(ensemble, rows, record=RolloutRecord(tmp_path / "rollouts", ensemble.names),
                                log_metric=logged.__setitem__)
    sessions = _step_notes(agentpack, "episode", rows)  # the notebook pays 1.5, then 0.0
    funcs.funcs[0](prompts=[ROWS[0]["prompt"]] * 2, completions=[TWO_CALLS, [{"role": "assistant", "content": "x"}]],
                   environments=sessions, **{ROW_ID: [0, 0]})
    ensemble.close()
    table = read_record(tmp_path / "rollouts").to_pylist()
    assert [r["total"] for r in table] == [1.5, 0.0]
    assert logged["unscored"] == 0.0
    assert table[0]["advantage"] > 0 > table[1]["advantage"]
    again = rescore(tmp_path / "rollouts", "turn_calls:0", plugins=agentpack)
    assert again["advantage_sign_changed"] == 0
    assert again["not_rescored"] == ["StepNotesSession"]


def test_score_combines_per_turn_values_by_the_rule_it_is_given(packs, tmp_path):
    from conftest import cli_json, run_cli, write_jsonl

    rows = write_jsonl(tmp_path / "rows.jsonl", [{"prompt": "p", "completion": TWO_CALLS}])
    means = {rule: cli_json("score", str(rows), "--rewards", "turn_calls", "--turn-reward", rule,
                            pythonpath=[packs["agentpack"]])["rewards"]["turn_calls"]["mean"]
             for rule in ("episode", "discounted:0.5")}
    assert means == {"episode": 3.0, "discounted:0.5": 2.5}  # turns [2, 1, 0]
    bad = run_cli("score", str(rows), "--rewards", "turn_calls", "--turn-reward", "discounted:2",
                  pythonpath=[packs["agentpack"]])
    assert bad.returncode == 2 and "--turn-reward: turn_reward must be episode, sum or discounted:GAMMA" in bad.stderr
    bad = run_cli("eval", "builtin:tiny", str(rows), "--rewards", "turn_calls", "--turn-reward", "sum:1",
                  "--out", str(tmp_path / "eval"), pythonpath=[packs["agentpack"]])
    assert bad.returncode == 2 and "--turn-reward: turn_reward must be" in bad.stderr, bad.stderr
    assert not (tmp_path / "eval").exists()  # refused before anything was written


def test_the_listings_say_which_rewards_and_environments_are_per_turn(packs):
    from conftest import cli_json, run_cli

    path = [packs["agentpack"]]
    rewards = {r["name"]: r["per_turn"] for r in cli_json("rewards", "list", pythonpath=path)}
    assert rewards["turn_calls"] is True and rewards["seen_tools"] is False
    environments = {e["name"]: e["per_turn"] for e in cli_json("environments", "list", pythonpath=path)}
    assert environments == {"notes": False, "step_notes": True} | {k: v for k, v in environments.items()
                                                                  if k not in ("notes", "step_notes")}
    assert "a value per assistant turn" in run_cli("rewards", "show", "turn_calls", pythonpath=path).stdout
    assert "a value per assistant turn" not in run_cli("rewards", "show", "seen_tools", pythonpath=path).stdout
    assert "own reward: yes, per turn" in run_cli("environments", "show", "step_notes", pythonpath=path).stdout
    assert "own reward: yes\n" in run_cli("environments", "show", "notes", pythonpath=path).stdout


@pytest.mark.slow  # ~13 s on a shared CPU: a run's preparation (the tiny model) and importing mlx-lm-lora
def test_the_mlx_backend_hands_mlx_lm_lora_the_combined_value(tmp_path, monkeypatch):
    """Through mlx-lm-lora's own reward and advantage computation (its ``calculate_rewards_and_advantages``)."""
    pytest.importorskip("mlx_lm_lora", reason="the mlx extra is not installed")
    import yaml
    from mlx_lm_lora.trainer.grpo_trainer import calculate_rewards_and_advantages

    from grpo_host.training.backends.mlx import MlxRewardFuncs, RewardStats
    from grpo_host.training.config import load_config
    from grpo_host.training.train import prepare

    monkeypatch.chdir(tmp_path)
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS * 2))
    (tmp_path / "calls.py").write_text(
        "from grpo_host import hookimpl, reward\n"
        "@reward(name='calls', per_turn=True)\n"
        "def calls(rollout, **_):\n"
        "    return [float(len(t[0].get('tool_calls') or [])) for t in rollout.by_turn]\n"
        "@hookimpl\n"
        "def register_rewards(register):\n"
        "    register(calls)\n")
    (tmp_path / "run.yaml").write_text(yaml.safe_dump({
        "model": "builtin:tiny", "data": "rows.jsonl", "plugins": ["calls.py"], "rewards": "calls",
        "turn_reward": "discounted:0.5", "group_size": 2, "batch_size": 1, "max_steps": 1, "output_dir": "out",
        "audit": "off"}))
    job = prepare(load_config(tmp_path / "run.yaml", [], backend="mlx"), echo=False)
    stats = RewardStats()
    record = RolloutRecord(tmp_path / "rollouts", job.ensemble.names)
    record.population = True  # as the backend sets it
    rewards = MlxRewardFuncs(job, len(job.train), stats, record)
    completions = [TWO_CALLS, [{"role": "assistant", "content": "no tools"}]]
    advantages, _ = calculate_rewards_and_advantages(
        rewards.funcs, ["p"] * 2, completions, [""] * 2, [0, 0], [0, 0], [0], rewards.weights)
    assert stats.take("train")["rewards/calls/mean"] == pytest.approx((2.5 + 0.0) / 2)
    assert advantages.tolist()[0] > 0 > advantages.tolist()[1]
    # the record's advantage is the one mlx-lm-lora trained on (its std has no Bessel's correction: +-1, not +-0.71)
    table = read_record(tmp_path / "rollouts").to_pylist()
    assert [r["advantage"] for r in table] == pytest.approx(advantages.tolist(), rel=1e-6)
    job.ensemble.close()


# An SFT warm-up with torch (shared with the agent tests), then a one-step TRL run and its eval_k (two models, two
# episodes each): minutes on a shared CPU; the timeout is a limit against hangs, not a speed assertion.
@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_a_trl_run_trains_on_the_combined_turns_and_records_them(tmp_path_factory, packs, env):
    import subprocess

    import yaml
    from agent_helpers import ROWS as AGENT_ROWS
    from agent_helpers import shared_warm_up
    from conftest import GRPO_HOST, write_jsonl
    from train_helpers import read_metrics

    root = tmp_path_factory.mktemp("per-turn-run")
    model = shared_warm_up(tmp_path_factory, packs["agentpack"])
    write_jsonl(root / "rows.jsonl", AGENT_ROWS)
    config = {"model": str(model), "data": "rows.jsonl", "rewards": "turn_calls:1, seen_tools:0",
              "environment": "step_notes", "turn_reward": "discounted:0.5", "max_tool_calls": 2, "group_size": 2,
              "batch_size": 2, "max_steps": 1, "max_completion_length": 120, "temperature": 0.3,
              "learning_rate": 1e-5, "output_dir": "out", "audit": "off", "eval_k": 1}
    (root / "run.yaml").write_text(yaml.safe_dump(config))
    proc = subprocess.run([GRPO_HOST, "train", "run.yaml"], capture_output=True, text=True, cwd=root, timeout=900,
                          env={**env, "PYTHONPATH": str(packs["agentpack"]), "TRL_EXPERIMENTAL_SILENCE": "1"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rule = TurnRule.parse("discounted:0.5")
    rows = read_record(root / "out" / "rollouts").to_pylist()
    assert len(rows) == 4
    for row in rows:  # each rollout's recorded value is the rule applied to its recorded turns
        turns = row["turns/turn_calls"]
        assert len(turns) == len(Trajectory.of(json.loads(row["trajectory"])).by_turn)
        assert row["reward/turn_calls"] == pytest.approx(rule.combine(None, turns))
        assert row["reward/StepNotesSession"] == pytest.approx(rule.combine(None, row["turns/StepNotesSession"]))
    assert any(len(r["turns/turn_calls"]) > 1 for r in rows)  # the warmed-up policy called its tool
    [logged] = [r for r in read_metrics(root / "out") if "reward" in r]
    # what TRL logged, and trained on, is what the record holds
    assert logged["rewards/turn_calls/mean"] == pytest.approx(sum(r["reward/turn_calls"] for r in rows) / 4)
    assert logged["rewards/StepNotesSession/mean"] == pytest.approx(
        sum(r["reward/StepNotesSession"] for r in rows) / 4)
    totals = [r["total"] for r in rows if r["total"] is not None]  # TRL's mean leaves unscorable rollouts out
    assert logged["reward"] == pytest.approx(sum(totals) / len(totals))
    assert "Per-turn reward means by turn index" in build_report(root / "out")
    # eval_k: the checkpoint and the saved model evaluated in the run's environment, under the run's turn_reward
    evaluated = sorted(p.name for p in (root / "out" / "eval").iterdir())
    assert "model" in evaluated
    for name in evaluated:
        found = json.loads((root / "out" / "eval" / name / "eval.json").read_text())
        assert found["environment"]["name"] == "step_notes" and found["turn_reward"] == "discounted:0.5"
        for row in read_record(root / "out" / "eval" / name).to_pylist():
            assert row["reward/StepNotesSession"] == pytest.approx(rule.combine(None, row["turns/StepNotesSession"]))
            assert row["reward/turn_calls"] == pytest.approx(rule.combine(None, row["turns/turn_calls"]))
