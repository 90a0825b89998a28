"""The rollout record (grpo_host.runs.record) and grpo-host rescore, \
through the real CLI and a real killed training run."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pyarrow as pa
import pytest
from conftest import CLI_ENV, GRPO_HOST, clean_env, run_cli, write_jsonl
from train_helpers import QUICK, ROOT, kill_after_checkpoint

from grpo_host.errors import RecordError
from grpo_host.runs.record import FOLDER, advantages, arrow_column, read_record

EXAMPLE = ROOT / "examples" / "letters.yaml"

# Four groups of four integers.  The broken parity release forgets 8: "8" in A and B and all of D change verdict
# (6); advantages that change sign: all of A (+,-,-,- become 0), one in B ("8": + becomes -), none in C, none in D
# (every total equal before and after: 0 stays 0).  5 in all.
GROUPS = {"A": ["8", "1", "3", "5"], "B": ["8", "2", "1", "3"], "C": ["2", "4", "1", "3"], "D": ["8", "8", "8", "8"]}
CHANGED, FLIPPED = 6, 5


@pytest.mark.slow  # imports torch and TRL / four CLI runs: a few seconds
def test_advantages_match_trl_group_scaling():
    """The record's advantage is TRL's scale_rewards="group" arithmetic, checked against TRL's own nanstd."""
    torch = pytest.importorskip("torch")
    from trl.trainer.utils import nanstd

    totals = [1.0, 0.0, 0.5, 0.25, 2.0, 2.0, 2.0, 2.0, 3.0, None, 1.0, 1.0]
    groups = [g for g in "abc" for _ in range(4)]
    t = torch.tensor([math.nan if v is None else v for v in totals]).view(-1, 4)
    expected = ((t - torch.nanmean(t, dim=1, keepdim=True)) / (nanstd(t, dim=1).unsqueeze(1) + 1e-4)).flatten()
    got = advantages(totals, groups)
    assert got[9] is None  # an unscored rollout has no advantage (TRL forces it to 0)
    for g, e in zip(got, expected.tolist(), strict=False):
        if g is not None:
            assert g == pytest.approx(e, abs=1e-5)
    assert advantages([1.0], ["solo"]) == [0.0]  # a group of one: no spread, no signal


@pytest.mark.slow  # imports torch and TRL / four CLI runs: a few seconds
def test_rescore_counts_a_broken_release_exactly(tmp_path, packs):
    rows = [{"prompt": f"group {g}", "completion": c, "g": g} for g, cs in GROUPS.items() for c in cs]
    data = write_jsonl(tmp_path / "rows.jsonl", rows)
    out = tmp_path / "scores.jsonl"
    scored = run_cli("score", str(data), "--rewards", "parity", "--group-column", "g", "--out", str(out),
                     "--monitors", "none", pythonpath=[packs["parity"]])
    assert scored.returncode == 0, scored.stderr
    record = read_record(out)
    assert record.num_rows == 16 and record.column("reward/parity").to_pylist()[:4] == [1.0, 0.0, 0.0, 0.0]

    same = run_cli("rescore", str(out), "--rewards", "parity", "--json", pythonpath=[packs["parity"]])
    assert same.returncode == 0, same.stderr
    assert json.loads(same.stdout)["rewards"]["parity"] == {"compared": 16, "changed": 0, "errors": 0, "timeouts": 0}

    broken = run_cli("rescore", str(out), "--rewards", "parity", "--json", pythonpath=[packs["parity_broken"]])
    assert broken.returncode == 1, broken.stderr
    found = json.loads(broken.stdout)
    assert found["rewards"]["parity"]["changed"] == CHANGED
    assert found["advantage_sign_changed"] == FLIPPED
    assert found["steps"] == [{"step": 1, "rollouts": 16, "changed": {"parity": CHANGED},
                               "advantage_sign_changed": FLIPPED}]

    table = run_cli("rescore", str(out), "--rewards", "parity", pythonpath=[packs["parity_broken"]],
                    env={"COLUMNS": "80"})
    assert f"{FLIPPED} advantages changed sign" in " ".join(table.stdout.split())
    assert all(len(line) <= 80 for line in table.stdout.splitlines())


def test_unreadable_records_are_named(tmp_path):
    with pytest.raises(RecordError, match="no rollout record"):
        read_record(tmp_path)
    (tmp_path / FOLDER).mkdir()
    (tmp_path / FOLDER / "step-00000001-x-000000.parquet").write_text("not parquet")
    with pytest.raises(RecordError, match="not a readable rollout part"):
        read_record(tmp_path)
    proc = run_cli("rescore", str(tmp_path), "--rewards", "accuracy")
    assert proc.returncode == 2 and "not a readable rollout part" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_killed_run_keeps_its_record_and_a_resumed_one_records_each_step_once(env, tmp_path):
    out = tmp_path / "run"
    args = [GRPO_HOST, "train", str(EXAMPLE), *QUICK, "--set", "max_steps=6", "--set", "save_every=2",
            "--set", f"output_dir={out}"]
    kill_after_checkpoint(args, out / "checkpoint-2", env=env, cwd=ROOT)
    killed = read_record(out)
    steps = killed.column("step").to_pylist()
    assert {1, 2} <= set(steps), steps  # every step scored before the kill is there, whole
    per_step = {s: steps.count(s) for s in set(steps)}
    assert all(n == 8 for n in per_step.values()), per_step  # batch_size 2 x group_size 4

    again = subprocess.run([*args, "--set", "resume=true"], capture_output=True, text=True, env=env, cwd=ROOT,
                           timeout=600)
    assert again.returncode == 0, again.stdout + again.stderr
    record = read_record(out)
    steps = record.column("step").to_pylist()
    assert sorted(set(steps)) == [1, 2, 3, 4, 5, 6] and all(steps.count(s) == 8 for s in set(steps))
    rollout = record.slice(0, 1).to_pylist()[0]
    assert rollout["split"] == "train" and rollout["row"].startswith("line ") and rollout["total"] is not None
    assert set(record.column("group").to_pylist()[:4]) == {rollout["group"]}  # a group is the 4 completions of a row
    assert sum(record.column("advantage").to_pylist()[:4]) == pytest.approx(0.0, abs=1e-6)  # group-normalised

    # the run's own rewards (a plugin module named in its config), as installed now: nothing changed
    same = subprocess.run([GRPO_HOST, "rescore", str(out), "--json"], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=300)
    assert same.returncode == 0, same.stdout + same.stderr
    found = json.loads(same.stdout)
    assert found["rollouts"] == 48 and found["advantage_sign_changed"] == 0
    assert {n: r["changed"] for n, r in found["rewards"].items()} == {"letter_share": 0, "lowercase_share": 0}


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_mlx_host_records_its_rollouts_and_report_and_rescore_read_them(env, tmp_path):
    pytest.importorskip("mlx_lm_lora", reason="the mlx extra is not installed")
    from grpo_host.runs.report import build_report

    out = tmp_path / "mlx"
    proc = subprocess.run([GRPO_HOST, "train", str(EXAMPLE), *QUICK, "--set", "max_steps=3", "--set",
                           f"output_dir={out}", "--backend", "mlx"], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = read_record(out)
    steps = record.column("step").to_pylist()
    assert sorted(set(steps)) == [1, 2, 3] and all(steps.count(s) == 8 for s in (1, 2, 3))  # 2 prompts x 4
    page = build_report(out)  # mlx-lm-lora passes no token ids: lengths are drawn in characters
    assert "letter_share" in page and "Completion length (mean characters)" in page
    same = subprocess.run([GRPO_HOST, "rescore", str(out), "--json"], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=300)
    assert same.returncode == 0, same.stdout + same.stderr
    assert json.loads(same.stdout)["advantage_sign_changed"] == 0


def _damage(part, how: str) -> None:
    """Rewrite the record part ``part`` damaged as ``how`` says."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(part)

    def replace(name: str, column) -> None:
        pq.write_table(table.set_column(table.column_names.index(name), name, column), part)

    if how == "truncated":
        part.write_bytes(part.read_bytes()[: part.stat().st_size // 2])
    elif how == "not parquet":
        part.write_text("step,completion\n1,x\n")
    elif how == "empty file":
        part.write_bytes(b"")
    elif how == "no completion column":
        pq.write_table(table.drop_columns(["completion"]), part)
    elif how == "step as text":
        replace("step", pa.array([str(s) for s in table["step"].to_pylist()]))
    elif how == "reward as text":
        replace("reward/accuracy", pa.array(["high"] * table.num_rows))
    elif how == "total as a list":
        replace("total", pa.array([[1.0]] * table.num_rows))
    elif how == "null completion":
        replace("completion", pa.array([None] * table.num_rows, pa.string()))
    elif how == "null step":
        replace("step", pa.array([None] * table.num_rows, pa.int64()))
    elif how == "data not JSON":
        replace("data", pa.array(["{not json"] * table.num_rows))
    else:
        raise AssertionError(how)


DAMAGE = {  # how a part is damaged -> what the one line says about it
    "truncated": "not a readable rollout part",
    "not parquet": "not a readable rollout part",
    "empty file": "not a readable rollout part",
    "no completion column": "not a rollout part (no column completion)",
    "step as text": "column 'step' holds string, not an integer",
    "reward as text": "column 'reward/accuracy' holds string, not a number",
    "total as a list": "column 'total' holds list<""",
    "null completion": "3 of 3 rollouts have neither a completion nor a trajectory",
    "null step": "column 'step' is empty in 3 of 3 rollouts",
    "data not JSON": "its data is not JSON text",
}


@pytest.mark.slow  # two CLI runs per case
@pytest.mark.parametrize("how", list(DAMAGE))
def test_a_damaged_part_is_one_line_naming_it(tmp_path, how):
    data = write_jsonl(tmp_path / "rows.jsonl", [{"prompt": "p", "completion": f"<answer>{i}</answer>", "answer": "1"}
                                                 for i in range(3)])
    out = tmp_path / "scores.jsonl"
    assert run_cli("score", str(data), "--rewards", "accuracy", "--out", str(out), "--monitors", "none").returncode == 0
    (part,) = (tmp_path / f"scores.jsonl.{FOLDER}").glob("*.parquet")
    _damage(part, how)
    commands = [("rescore", str(out), "--rewards", "accuracy")]
    if how != "data not JSON":  # the report shows a prompt or data that is not JSON as it is
        commands.append(("report", str(out), "-o", str(tmp_path / "page.html")))
    for command in commands:
        proc = run_cli(*command)
        text = proc.stdout + proc.stderr
        assert proc.returncode == 2 and "Traceback" not in text, text
        assert len([line for line in proc.stderr.splitlines() if line.strip()]) == 1, text  # one line
        assert str(part) in " ".join(text.split()) and DAMAGE[how] in " ".join(text.split()), text
        assert not (tmp_path / "page.html").exists()


def test_a_part_without_optional_columns_is_read_with_them_empty(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    (tmp_path / FOLDER).mkdir()
    pq.write_table(pa.table({"step": [1, 1], "batch": pa.array([0, 0], pa.int32()), "group": ["g", "g"],
                             "prompt": ['"p"', '"p"'], "completion": ["a", "bb"], "data": ["{}", "{}"],
                             "total": [1, 0], "reward/len": [1, 2], "extra": [[1], [2]]}),
                   tmp_path / FOLDER / "step-00000001-x-000000.parquet")
    table = read_record(tmp_path)
    assert table.column("total").to_pylist() == [1.0, 0.0] and table.column("split").to_pylist() == [None, None]
    assert "extra" not in table.column_names and table.column("reward/len").type == "double"


@pytest.mark.parametrize(("values", "type_"), [
    ([1, None, 3, 0, -2**63, 2**63 - 1], pa.int64()),
    ([1.5, None, math.nan, math.inf, -math.inf, -0.0, 3, 5e-324], pa.float64()),
    (["a", None, "", "é 😀 \u200b", "x" * 1000, "\x00 nul"], pa.string()),
    ([[1.0, None, 2], None, [], [math.nan, -0.0]], pa.list_(pa.float64())),
    ([], pa.string()),
    ([None] * 9, pa.string()),
    ([None] * 17, pa.float64()),
    ([None, None], pa.list_(pa.float64())),
])
def test_record_columns_hold_what_pa_array_stores(values, type_):
    built, reference = arrow_column(values, type_), pa.array(values, type=type_)
    built.validate(full=True)
    assert built.type == reference.type and built.null_count == reference.null_count
    assert repr(built.to_pylist()) == repr(reference.to_pylist())  # repr: NaN and -0.0 compared as written


def test_a_lone_surrogate_in_a_record_column_raises_as_pa_array_does():
    with pytest.raises(UnicodeEncodeError) as ours:
        arrow_column(["fine", "half \udc80 a pair"], pa.string())
    with pytest.raises(UnicodeEncodeError) as theirs:
        pa.array(["fine", "half \udc80 a pair"], type=pa.string())
    assert str(ours.value) == str(theirs.value)


SCORE_IN_PROCESS = """
import sys
from grpo_host.cli import app
try:
    app(sys.argv[1:])
except SystemExit as exc:
    assert exc.code in (0, None), exc.code
print("PANDAS" if "pandas" in sys.modules else "NO PANDAS", file=sys.stderr)
"""


@pytest.mark.slow  # over 2 s: a score command in a fresh interpreter, with its worker processes
def test_score_records_its_rollouts_without_importing_pandas(tmp_path):
    rows = write_jsonl(tmp_path / "rows.jsonl", [{"prompt": "p", "completion": f"The answer is {n}.", "answer": "3"}
                                                 for n in (3, 4)])
    out = tmp_path / "scores.jsonl"
    proc = subprocess.run([sys.executable, "-c", SCORE_IN_PROCESS, "score", str(rows), "--rewards", "math", "--out",
                           str(out)], capture_output=True, text=True, env=clean_env(**CLI_ENV), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == "NO PANDAS"
    assert read_record(out).column("reward/math").to_pylist() == [1.0, 0.0]
