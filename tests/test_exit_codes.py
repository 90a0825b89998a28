"""Every exit code, for every command that can return it, as the README's table lists them.

:data:`EXIT_CODES` is that table as data; a test reads the README's table and
compares.  Each (command, code) pair is then shown by a CLI run here (the
cheap ones, in :data:`CASES`) or by a named test elsewhere in the suite (the
ones that train or kill a run, in :data:`ELSEWHERE`); a pair with neither
fails :func:`test_every_code_of_every_command_is_tested`.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import test_audit
import test_eval
import test_faults
import test_record
import test_serve
import test_train_monitors
import test_train_trl
from conftest import HERE, run_cli, write_jsonl

EXIT_CODES: dict[str, set[int]] = {
    "rewards list": {0}, "plugins list": {0}, "monitors list": {0}, "environments list": {0},
    "rewards show": {0, 2}, "monitors show": {0, 2}, "environments show": {0, 2},
    "data check": {0, 1, 2}, "data import": {0, 1, 2}, "score": {0, 1, 2, 130}, "train": {0, 1, 2, 3},
    "audit": {0, 1, 2},
    "report": {0, 2}, "rescore": {0, 1, 2}, "serve": {0, 2}, "new-plugin": {0, 2}, "eval": {0, 1, 2, 130},
}
"""Command -> the exit codes it can end with (besides 1 for a bug, with its traceback, which any command may)."""


def _rows(tmp: Path, rows: list[dict]) -> str:
    return str(write_jsonl(tmp / "rows.jsonl", rows))


GOOD = [{"prompt": "2+2?", "completion": "<answer>4</answer>", "answer": "4"}]
BAD = [{"prompt": "2+2?", "completion": "<answer>4</answer>"}]  # no answer column: a data problem


def _train_config(tmp: Path, rows: list[dict]) -> str:
    write_jsonl(tmp / "train.jsonl", rows)
    (tmp / "run.yaml").write_text(f"model: builtin:tiny\ndata: {tmp / 'train.jsonl'}\nrewards: accuracy\n"
                                  f"output_dir: {tmp / 'out'}\n")
    return str(tmp / "run.yaml")


CASES: dict[tuple[str, int], object] = {
    ("rewards list", 0): lambda tmp: ["rewards", "list"],
    ("plugins list", 0): lambda tmp: ["plugins", "list"],
    ("monitors list", 0): lambda tmp: ["monitors", "list"],
    ("environments list", 0): lambda tmp: ["environments", "list"],
    ("rewards show", 0): lambda tmp: ["rewards", "show", "accuracy"],
    ("rewards show", 2): lambda tmp: ["rewards", "show", "no_such_reward"],
    ("monitors show", 0): lambda tmp: ["monitors", "show", "zero_advantage"],
    ("monitors show", 2): lambda tmp: ["monitors", "show", "no_such_monitor"],
    ("environments show", 0): lambda tmp: ["environments", "show", "python"],
    ("environments show", 2): lambda tmp: ["environments", "show", "no_such_environment"],
    ("data check", 0): lambda tmp: ["data", "check", _rows(tmp, GOOD), "--rewards", "accuracy"],
    ("data check", 1): lambda tmp: ["data", "check", _rows(tmp, BAD), "--rewards", "accuracy"],
    ("data check", 2): lambda tmp: ["data", "check", str(tmp / "missing.jsonl"), "--rewards", "accuracy"],
    ("data import", 0): lambda tmp: ["data", "import", "kattis", str(HERE / "data" / "contest" / "kattis" / "hello"),
                                     "--out", str(tmp / "rows.jsonl")],
    ("data import", 1): lambda tmp: ["data", "import", "kattis", str(tmp), "--out", str(tmp / "rows.jsonl")],
    ("data import", 2): lambda tmp: ["data", "import", "no_such_format", str(tmp), "--out", str(tmp / "rows.jsonl")],
    ("score", 0): lambda tmp: ["score", _rows(tmp, GOOD), "--rewards", "accuracy"],
    ("score", 1): lambda tmp: ["score", _rows(tmp, [*GOOD, {"prompt": "x"}]), "--rewards", "accuracy"],
    ("score", 2): lambda tmp: ["score", _rows(tmp, GOOD), "--rewards", "no_such_reward"],
    ("train", 1): lambda tmp: ["train", _train_config(tmp, BAD)],  # the data check fails before any model loads
    ("train", 2): lambda tmp: ["train", str(tmp / "missing.yaml")],
    ("audit", 0): lambda tmp: ["audit", _rows(tmp, GOOD), "--rewards", "accuracy"],
    ("audit", 2): lambda tmp: ["audit", _rows(tmp, GOOD), "--rewards", "accuracy(no_such_param=1)"],
    ("report", 2): lambda tmp: ["report", str(tmp)],
    ("rescore", 2): lambda tmp: ["rescore", str(tmp)],
    ("new-plugin", 0): lambda tmp: ["new-plugin", "grpo-rewards-exit", "--no-input", "--dir", str(tmp / "pack")],
    ("new-plugin", 2): lambda tmp: ["new-plugin", "not a name!", "--no-input", "--dir", str(tmp / "pack")],
    ("eval", 2): lambda tmp: ["eval", "builtin:tiny", str(tmp / "missing.jsonl"), "--rewards", "accuracy"],
}
"""(command, code) -> the arguments (made in a temporary folder) of a run that ends with that code."""

ELSEWHERE = {
    ("score", 130): test_faults.test_score_killed_at_a_random_point_continues_to_the_uninterrupted_file,
    ("train", 0): test_train_trl.test_trains_the_embedded_default_through_the_cli,
    ("train", 1): test_train_trl.test_a_prompt_over_max_prompt_length_is_a_data_error_naming_the_row,
    ("train", 3): test_train_monitors.test_a_stop_alert_saves_a_checkpoint_ends_the_run_and_resume_continues,
    ("audit", 1): test_audit.test_the_cli_prints_80_columns_names_the_fix_and_exits_1,
    ("report", 0): test_record.test_the_mlx_host_records_its_rollouts_and_report_and_rescore_read_them,
    ("rescore", 0): test_record.test_rescore_counts_a_broken_release_exactly,
    ("rescore", 1): test_record.test_rescore_counts_a_broken_release_exactly,
    ("serve", 0): test_serve.test_graceful_shutdown_answers_requests_in_flight,
    ("serve", 2): test_serve.test_bad_spec_stops_at_start,
    ("eval", 0): test_eval.test_eval_writes_pass_at_k_with_intervals_and_a_record_report_draws,
    ("eval", 1): test_eval.test_the_data_check_refuses_a_broken_row_before_anything_is_generated,
    ("eval", 130): test_eval.test_sigterm_ends_with_130_and_resume_finishes,
}
"""(command, code) -> the test elsewhere that runs the command to that code (a training run, a killed run,
a server)."""


def readme_table() -> dict[str, set[int]]:
    """The README's "Exit codes" table as command -> codes."""
    text = (HERE.parent / "README.md").read_text()
    section = text.split("### Exit codes", 1)[1].split("\n#", 1)[0]
    table: dict[str, set[int]] = {}
    for code, commands in re.findall(r"^\| (\d+) \| [^|]+ \| ([^|]+) \|$", section, flags=re.M):
        for command in re.findall(r"`([a-z -]+)`", commands):
            table.setdefault(command, set()).add(int(code))
    return table


def test_the_readme_lists_every_code_of_every_command():
    assert readme_table() == EXIT_CODES


def test_every_code_of_every_command_is_tested():
    pairs = {(command, code) for command, codes in EXIT_CODES.items() for code in codes}
    assert pairs == set(CASES) | set(ELSEWHERE), "untested: " + str(sorted(pairs - set(CASES) - set(ELSEWHERE)))
    assert all(callable(test) and test.__name__.startswith("test_") for test in ELSEWHERE.values())


@pytest.mark.slow  # one CLI run per case
@pytest.mark.parametrize(("command", "code"), sorted(CASES), ids=[f"{c}-{n}" for c, n in sorted(CASES)])
def test_the_command_ends_with_the_code(tmp_path, command, code):
    proc = run_cli(*CASES[command, code](tmp_path), env={"HF_HUB_OFFLINE": "1"})
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    if code == 2:
        assert proc.stderr.startswith("error: "), proc.stderr
