"""Loading, normalising and checking datasets in every supported format."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest
from conftest import run_cli, write_jsonl

from grpo_host import get_reward
from grpo_host.data import check_rows, normalize, read_rows
from grpo_host.errors import DataError

GOOD = [
    {"prompt": "2+2?", "answer": "4"},
    {"prompt": "3+3?", "answer": "6"},
]
BAD = [
    {"prompt": "2+2?", "answer": "4"},
    {"prompt": "3+3?"},  # row 2: answer missing
    {"prompt": "4+4?", "answer": ""},  # row 3: empty
    {"prompt": "5+5?", "answer": 10},  # row 4: wrong type
]


def write(path, rows, fmt):
    if fmt == "jsonl":
        return write_jsonl(path.with_suffix(".jsonl"), rows)
    if fmt == "json":
        p = path.with_suffix(".json")
        p.write_text(json.dumps(rows))
        return p
    if fmt == "csv":
        p = path.with_suffix(".csv")
        keys = sorted({k for r in rows for k in r})
        with p.open("w", newline="") as f:
            w = csv.DictWriter(f, keys)
            w.writeheader()
            w.writerows(rows)
        return p
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        p = path.with_suffix(".parquet")
        pq.write_table(pa.Table.from_pylist(rows), p)
        return p
    if fmt == "datasets":
        from datasets import Dataset

        p = path.with_suffix("")
        Dataset.from_list(rows).save_to_disk(str(p))
        return p
    raise AssertionError(fmt)


FORMATS = ["jsonl", "json", "csv", "parquet", "datasets"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_good_files_of_every_format_check_clean(tmp_path, fmt):
    path = write(tmp_path / "good", GOOD, fmt)
    rows = [(where, normalize(raw, where)) for where, raw in read_rows(path)]
    assert [(w, r["prompt"], r["answer"]) for w, r in rows] == [("line 1" if fmt == "jsonl" else "row 1", "2+2?", "4"),
                                                               ("line 2" if fmt == "jsonl" else "row 2", "3+3?", "6")]
    proc = run_cli("data", "check", str(path), "--rewards", "accuracy")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 rows carry what accuracy need" in proc.stdout


@pytest.mark.parametrize("fmt", ["jsonl", "json", "datasets"])
def test_bad_files_report_reward_column_problem_and_rows(tmp_path, fmt):
    path = write(tmp_path / "bad", BAD, fmt) if fmt != "datasets" else write(tmp_path / "bad", BAD[:3], fmt)
    proc = run_cli("data", "check", str(path), "--rewards", "accuracy:2, r1_int", "--json")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert report["ok"] is False
    problems = {(p["reward"], p["column"], p["problem"]): p for p in report["problems"]}
    label = "line" if fmt == "jsonl" else "row"
    if fmt == "datasets":  # Arrow fills the missing answer with None: empty
        assert problems[("accuracy", "answer", "empty")]["rows"] == [f"{label} 2", f"{label} 3"]
    else:
        assert problems[("accuracy", "answer", "missing")]["rows"] == [f"{label} 2"]
        assert problems[("accuracy", "answer", "empty")]["rows"] == [f"{label} 3"]
        assert problems[("accuracy", "answer", "wrong type: expected str, got int")]["count"] == 1


def test_bad_csv_and_parquet_rows(tmp_path):
    path = write(tmp_path / "bad", [{"prompt": "p", "answer": ""}, {"prompt": "q", "answer": "1"}], "csv")
    proc = run_cli("data", "check", str(path), "--rewards", "accuracy")
    assert proc.returncode == 1 and "row 1" in proc.stdout and "empty" in proc.stdout
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("prompt,answer\np,1,extra\n")
    report = check_rows(read_rows(ragged), [get_reward("accuracy")])
    assert [(p.problem, p.rows) for p in report.problems] == [("more cells than header columns", ["row 1"])]
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"question": ["a", "b"], "answer": ["1", None]}), tmp_path / "q.parquet")
    report = check_rows(read_rows(tmp_path / "q.parquet"), [get_reward("accuracy")])
    assert [(p.column, p.problem, p.rows) for p in report.problems] == [("answer", "empty", ["row 2"])]


def test_malformed_json_lines_and_missing_prompts_name_the_line(tmp_path):
    path = tmp_path / "broken.jsonl"
    path.write_text('{"prompt": "ok", "answer": "1"}\n{"prompt": "half\n\n{"answer": "2"}\n[1, 2]\n')
    unreadable = [raw for _, raw in read_rows(path) if isinstance(raw, DataError)]
    assert [str(e).split(":")[:2] for e in unreadable] == [["line 2", " invalid JSON"]]
    report = check_rows(read_rows(path), [get_reward("accuracy")])
    found = {p.problem: p.rows for p in report.problems}
    assert found["invalid JSON"] == ["line 2"]
    assert found["no prompt: expected one of messages, prompt, instruction, question"] == ["line 4"]
    assert found["expected an object with named columns, got list"] == ["line 5"]
    proc = run_cli("data", "check", str(path), "--rewards", "accuracy")
    assert proc.returncode == 1 and "line 2" in proc.stdout


def test_unknown_format_and_missing_file(tmp_path):
    (tmp_path / "x.txt").write_text("hi")
    proc = run_cli("data", "check", str(tmp_path / "x.txt"), "--rewards", "accuracy")
    assert proc.returncode == 2 and "unknown format '.txt'" in proc.stderr
    proc = run_cli("data", "check", str(tmp_path / "nope.jsonl"), "--rewards", "accuracy")
    assert proc.returncode == 2 and "no such dataset" in proc.stderr


def test_normalise_chat_messages_final_assistant_turn_becomes_answer():
    chat = [{"role": "system", "content": "s"}, {"role": "user", "content": "2+2?"},
            {"role": "assistant", "content": "4"}]
    row = normalize({"messages": chat})
    assert row["prompt"] == chat[:2] and row["answer"] == "4"
    kept = normalize({"messages": chat, "answer": "four"})
    assert kept["prompt"] == chat[:2] and kept["answer"] == "four"
    open_chat = normalize({"messages": chat[:2]})
    assert open_chat["prompt"] == chat[:2] and "answer" not in open_chat


def test_normalise_prompt_instruction_and_question():
    assert normalize({"prompt": [{"role": "user", "content": "hi"}]})["prompt"][0]["content"] == "hi"
    alpaca = normalize({"instruction": "Add", "input": "2 and 2", "output": "4"})
    assert alpaca["prompt"] == "Add\n\n2 and 2" and alpaca["answer"] == "4"
    assert normalize({"instruction": "Say hi", "input": "", "output": "hi"})["prompt"] == "Say hi"
    assert normalize({"question": "2+2?", "answer": "4"})["prompt"] == "2+2?"
    with pytest.raises(DataError, match="row 9: 'prompt' must be a string or a list"):
        normalize({"prompt": 5}, "row 9")
    with pytest.raises(DataError, match=r"no prompt: .* \(row has: answer\)"):
        normalize({"answer": "4"})
    with pytest.raises(DataError, match="the prompt is empty"):
        normalize({"prompt": ""})


def test_row_checks_contributed_by_a_reward():
    from grpo_host import reward

    @reward(requires={"answer": str}, check_row=lambda row: None if row["answer"].isdigit() else "gold is not a number")
    def digits(completion, **_):
        return 1.0

    rows = [("row 1", {"prompt": "p", "answer": "12"}), ("row 2", {"prompt": "p", "answer": "x"})]
    report = check_rows(rows, [digits])
    assert [(p.column, p.problem, p.rows) for p in report.problems] == [
        ("(row check)", "gold is not a number", ["row 2"])]


def _peak_rss_of_check(path) -> int:
    code = ("import resource, sys; from grpo_host import get_reward; from grpo_host.data import check_rows, read_rows;"
            "r = check_rows(read_rows(sys.argv[1]), [get_reward('accuracy')]); assert not r.ok;"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True)
    return int(out.stdout)


def test_checking_streams_memory_does_not_grow_with_file_size(tmp_path):
    row = json.dumps({"prompt": "What is 12 + 30? Think step by step." * 4, "answer": "42"}) + "\n"
    bad = json.dumps({"prompt": "no answer here"}) + "\n"
    small, large = tmp_path / "small.jsonl", tmp_path / "large.jsonl"
    small.write_text((row * 99 + bad) * 200)  # 20k rows
    large.write_text((row * 99 + bad) * 2000)  # 200k rows, ~40 MB
    growth_kib = _peak_rss_of_check(large) - _peak_rss_of_check(small)
    assert growth_kib < 8 * 1024, f"peak RSS grew by {growth_kib} KiB for 10x the rows"


@pytest.mark.parametrize(("completion", "problem"), [
    (42, "'completion' must be text or a list of chat messages, got int"),
    (True, "'completion' must be text or a list of chat messages, got bool"),
    ({"role": "assistant"}, "'completion' must be text or a list of chat messages, got dict"),
    ([{"role": "assistant", "content": 5}], "'completion' message 0 has content that is not text"),
    ([{"content": "x"}], "'completion' message 0 is not a {role, content} object"),
    ([{"role": "user", "content": "x"}], "'completion' holds no assistant message"),
])
def test_a_completion_that_is_not_text_is_a_row_error(completion, problem):
    with pytest.raises(DataError) as exc:
        normalize({"prompt": "p", "completion": completion}, "line 7")
    assert str(exc.value) == f"line 7: {problem}"
    for fine in ("", "text", [{"role": "assistant", "content": None}],
                 [{"role": "assistant", "content": [{"type": "text", "text": "hi"}]}]):
        assert normalize({"prompt": "p", "completion": fine})["completion"] == fine


def test_integers_beyond_64_bits_are_read_exactly(tmp_path):
    big = [123456789012345678901234567890, -(2**70), 2**64]
    rows = [{"prompt": "p", "answer": n, "text": "1234567890123456789012 digits in text", "x": 1.5} for n in big]
    (tmp_path / "rows.json").write_text(json.dumps(rows))
    for path in (write_jsonl(tmp_path / "rows.jsonl", rows), tmp_path / "rows.json"):
        assert [raw for _, raw in read_rows(path)] == rows
    (tmp_path / "nan.jsonl").write_text('{"prompt": "p", "answer": NaN, "n": 12345678901234567890}\n')
    [(_, raw)] = read_rows(tmp_path / "nan.jsonl")
    assert isinstance(raw, DataError) and "NaN is not JSON" in str(raw)  # as orjson refuses it
    (tmp_path / "inf.jsonl").write_text('{"prompt": "p", "answer": 1e400, "n": 12345678901234567890}\n')
    [(_, raw)] = read_rows(tmp_path / "inf.jsonl")
    assert isinstance(raw, DataError) and "infinity" in str(raw)


def test_csv_unclosed_quote_is_named_and_long_fields_are_read(tmp_path):
    (tmp_path / "q.csv").write_text('prompt,answer\np,1\np,"2\np,3\n')
    with pytest.raises(DataError, match=r"row 2 \(from line 3\): a quoted cell opens there and its closing quote"):
        list(read_rows(tmp_path / "q.csv"))
    (tmp_path / "long.csv").write_text("prompt,answer\np," + "9" * 300_000 + "\n")
    [(_, row)] = read_rows(tmp_path / "long.csv")
    assert len(row["answer"]) == 300_000


def test_rows_nested_too_deep_are_bad_rows_and_the_rest_is_read(tmp_path):
    deep = "[" * 5000 + "]" * 5000
    path = tmp_path / "deep.jsonl"
    path.write_text(f'{{"prompt": "p", "x": {deep}}}\n{{"prompt": "p", "n": 12345678901234567890123, "x": {deep}}}\n'
                    f'{{"prompt": "p", "x": {"[" * 200 + "]" * 200}}}\n{{"prompt": "ok", "x": [[1]]}}\n')
    rows = list(read_rows(path))
    assert [str(raw).split(": ", 1)[0] for _, raw in rows[:3]] == ["line 1", "line 2", "line 3"]
    assert all(isinstance(raw, DataError) for _, raw in rows[:3])  # line 1: orjson's own depth limit
    assert all("nested more than 128 levels deep" in str(raw) for _, raw in rows[1:3])
    assert rows[3][1] == {"prompt": "ok", "x": [[1]]}


def test_a_file_that_is_not_parquet_is_named(tmp_path):
    (tmp_path / "rows.parquet").write_bytes(b"PAR1 not really" * 100)
    with pytest.raises(DataError, match=r"rows.parquet: not readable as Parquet after row 0"):
        list(read_rows(tmp_path / "rows.parquet"))


def test_a_file_that_fails_while_read_is_named(tmp_path):
    (tmp_path / "mem.jsonl").symlink_to("/proc/self/mem")  # opens, then every read fails with EIO
    proc = run_cli("data", "check", str(tmp_path / "mem.jsonl"), "--rewards", "accuracy")
    assert proc.returncode == 2 and "mem.jsonl: cannot be read: Input/output error" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_prompt_messages_whose_content_is_not_text_are_a_row_error():
    for row, key in (({"messages": [{"role": "user", "content": 42}]}, "'messages'"),
                     ({"prompt": [{"role": "user", "content": {"a": 1}}]}, "'prompt'"),
                     ({"prompt": [{"role": 7, "content": "hi"}]}, "'prompt'")):
        with pytest.raises(DataError, match=f"line 3: {key} must be .*with text contents"):
            normalize(row, "line 3")


def test_a_leading_byte_order_mark_is_not_data(tmp_path):
    bom = "\ufeff"
    (tmp_path / "rows.csv").write_text(f"{bom}prompt,answer\np,1\n", encoding="utf-8")
    (tmp_path / "rows.jsonl").write_text(f'{bom}{{"prompt": "p", "answer": "1"}}\n', encoding="utf-8")
    (tmp_path / "rows.json").write_text(f'{bom}[{{"prompt": "p", "answer": "1"}}]', encoding="utf-8")
    for name in ("rows.csv", "rows.jsonl", "rows.json"):
        assert [raw for _, raw in read_rows(tmp_path / name)] == [{"prompt": "p", "answer": "1"}], name
