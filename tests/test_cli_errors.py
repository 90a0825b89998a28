"""What ``grpo-host`` makes of an exception: a user's error is one line and exit 2, a bug keeps its traceback.

The pack here is laid out on disk as ``pip install --target`` would (a module
and its ``.dist-info`` with the entry point), and run through the real CLI.
Its monitor's ``__init__`` has a bug that raises ``ValueError``: before the
CLI caught only named user errors, that bug read as "error: ..." with exit 2
and no traceback, as if the user had typed something wrong.
"""

from __future__ import annotations

import pytest
from conftest import lay_out_module_pack, run_cli, write_jsonl

PACK = '''
from grpo_host import hookimpl, monitor


@monitor(name="buggy_monitor", description="its __init__ has a bug")
class BuggyMonitor:
    def __init__(self):
        int("not a number")  # a bug in the pack's own code: ValueError

    def observe(self, batch):
        raise AssertionError("never made")


@hookimpl
def register_monitors(register):
    register.add_monitor(BuggyMonitor)
'''


@pytest.fixture(scope="module")
def buggy_pack(tmp_path_factory):
    return lay_out_module_pack(tmp_path_factory.mktemp("buggy-site"), "buggy_pack", PACK, "grpo-test-buggy",
                               entry="buggy")


def test_a_bug_raising_value_error_keeps_its_traceback_and_exit_1(tmp_path, buggy_pack):
    data = write_jsonl(tmp_path / "d.jsonl", [{"prompt": "p", "completion": "c"}])
    proc = run_cli("score", str(data), "--rewards", "r1_int", "--monitors", "buggy_monitor",
                   pythonpath=[buggy_pack])
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" in proc.stderr and "invalid literal for int()" in proc.stderr
    assert "error:" not in proc.stderr


def test_a_user_error_is_still_one_line_and_exit_2(tmp_path, buggy_pack):
    data = write_jsonl(tmp_path / "d.jsonl", [{"prompt": "p", "completion": "c"}])
    unknown = run_cli("score", str(data), "--rewards", "r1_int", "--monitors", "no_such_monitor",
                      pythonpath=[buggy_pack])
    assert unknown.returncode == 2 and "Traceback" not in unknown.stderr
    assert "error: unknown monitor 'no_such_monitor'" in unknown.stderr
    bad_params = run_cli("score", str(data), "--rewards", "r1_int(nope=1)", pythonpath=[buggy_pack])
    assert bad_params.returncode == 2 and "Traceback" not in bad_params.stderr
    assert "error: reward 'r1_int' (pack grpo-host" in bad_params.stderr and "takes no parameters" in bad_params.stderr
