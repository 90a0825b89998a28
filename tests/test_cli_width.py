"""What the CLI prints reads in an 80-column terminal: one line per item in the listings, whole figures in score."""

from __future__ import annotations

from pathlib import Path

from conftest import cli_json, run_cli

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

NARROW = {"COLUMNS": "80"}


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def test_listings_print_one_line_per_item_and_never_wrap():
    for command, key in ((("rewards", "list"), "name"), (("plugins", "list"), "name"), (("monitors", "list"), "name")):
        items = cli_json(*command)
        proc = run_cli(*command, env=NARROW)
        assert proc.returncode == 0, proc.stderr
        lines = _lines(proc.stdout)
        assert len(lines) == 1 + len(items), (command, lines)  # a header, then one line each
        assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
        assert [line.split()[0] for line in lines[1:]] == [item[key] for item in items]


def test_score_summary_shows_whole_headers_and_numbers_at_80_columns():
    proc = run_cli("score", str(EXAMPLES / "r1_completions.jsonl"), "--rewards",
                   "accuracy:2, r1_strict_format:0.5", env=NARROW)
    assert proc.returncode == 0, proc.stderr
    lines = _lines(proc.stdout)
    assert all(len(line) <= 80 for line in lines) and "…" not in proc.stdout
    header = next(line for line in lines if line.startswith("reward "))
    assert header.split() == ["reward", "weight", "mean", "std", "coverage", "errors", "timeouts", "seconds"]
    accuracy = next(line for line in lines if line.startswith("accuracy ")).split()
    assert accuracy[1:6] == ["2", "0.6667", "0.5164", "100%", "0"]  # 4 of 6 rows correct: every digit shown
