"""The judges' own suites vendored under ``tests/data/contest/``, read as the ``contest`` reward's rows and problems.

One reader per suite layout, shared by the tests that judge each kind (``tests/test_contest_*.py``) and by
``benchmarks/contest_agreement.py``, which imports this module by path: the two must judge the same rows, or the
benchmark would measure something the tests never checked.  These layouts are not problem packages a user has
(cmstestsuite's task settings live in its ``__init__.py`` and ``Tests.py``, transcribed here and in
``cms/suite.json``; ``suite.json`` gives the Kattis examples' limits), so they stay beside the tests rather than in
the public importer, :mod:`reward_plugins.contest.packages`, which reads real Kattis and CMS task folders.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from reward_plugins.contest.judge import Case, Checker, Group, Problem

DATA = Path(__file__).parent / "data" / "contest"
CMS = DATA / "cms"
CMS_CODE = CMS / "code"
CMS_BATCH = json.loads((CMS / "suite.json").read_text())["tasks"]
MANIFEST = json.loads((DATA / "suite.json").read_text())["problems"]
DMOJ_PARTIAL = DATA / "dmoj" / "testlib_partial"
HELLO = DATA / "domjudge" / "hello"


def pairs(folder: Path) -> list[Case]:
    """A Kattis test folder's ``*.in`` / ``*.ans`` pairs, in name order."""
    return [Case(i.read_text(), i.with_suffix(".ans").read_text()) for i in sorted(folder.glob("*.in"))]


def _judge_program(root: Path, where: str, protocol: str) -> Checker:
    path = root / where
    files = sorted(path.iterdir()) if path.is_dir() else [path]
    return Checker(tuple((f.name if path.is_dir() else "main.cpp", f.read_text()) for f in files), protocol)


def suite_problem(name: str) -> Problem:
    """A ``suite.json`` problem: Kattis layout (data/sample, data/secret[/group]) or ours (data/)."""
    spec, root = MANIFEST[name], DATA / name
    tests: list[Case] = []
    groups = []
    if spec.get("subtasks"):  # Kattis scoring: each secret/<group> with its testdata.yaml accept_score; no samples
        for folder in sorted(p for p in (root / "data" / "secret").iterdir() if p.is_dir()):
            config = dict(line.split(":", 1) for line in (folder / "testdata.yaml").read_text().splitlines()
                          if ":" in line)
            accept, members = float(config["accept_score"]), pairs(folder)
            span = tuple(range(len(tests), len(tests) + len(members)))  # Kattis grader flags: min, else sum
            groups.append(Group(accept, span, "min") if "min" in config.get("grader_flags", "").split()
                          else Group(accept * len(members), span, "sum"))
            tests += members
    elif (root / "data" / "secret").is_dir():
        tests = pairs(root / "data" / "sample") + pairs(root / "data" / "secret")
    else:
        tests = pairs(root / "data")
    protocol = spec.get("protocol", "testlib")
    return Problem(
        tuple(tests), spec["time_limit"], spec["memory_mb"] << 20,
        checker=_judge_program(root, spec["checker"], protocol) if "checker" in spec else None,
        interactor=_judge_program(root, spec["interactor"], protocol) if "interactor" in spec else None,
        groups=tuple(groups))


def _cms_tests(folder: Path) -> list[dict]:
    return [{"input": (folder / "data" / f"{n}.in").read_text(), "output": (folder / "data" / f"{n}.out").read_text()}
            for n in (1, 2)]


def cms_batch_row(task: str) -> dict:
    """A ``cms/suite.json`` Batch task as a dataset row: its tests, its settings, its managers' files read in."""
    spec = dict(CMS_BATCH[task]["row"])
    folder = CMS / task
    spec["tests"] = _cms_tests(folder)
    if "grader" in spec:
        spec["grader"] = {name: (folder / "managers" / name).read_text() for name in spec["grader"]}
    if "checker" in spec:
        spec["checker"] = {spec["checker"]: (folder / "managers" / spec["checker"]).read_text()}
    return spec


def cms_communication_row(name: str) -> dict:
    """A Communication task as a row: its tests, its manager, its stub as the grader (submission
    ``communication.%l``); the ``communication_many_*`` tasks with ``num_processes: 2`` (their ``__init__.py``)."""
    folder = CMS / name
    managers = folder / "managers"
    row: dict = {"prompt": f"Solve {name}.", "time_limit": 1.0, "memory_limit": 128, "tests": _cms_tests(folder),
                 "manager": {"manager": (managers / "manager").read_text()},
                 "user_io": "fifo_io" if "fifoio" in name else "std_io"}
    stubs = {p.name: p.read_text() for p in managers.iterdir() if p.name.startswith("stub.")}
    if stubs:
        row |= {"grader": stubs, "submission_name": "communication"}
    if "_many_" in name:
        row["num_processes"] = 2
    return row


def cms_two_steps_row(name: str) -> dict:
    """A TwoSteps task as a row: its tests, its manager and headers as the grader, its comparator where it has one;
    the submission one source holding ``first`` and ``second``."""
    folder = CMS / name
    managers = folder / "managers"
    row: dict = {"prompt": f"Solve {name}.", "time_limit": 1.0, "memory_limit": 128, "two_steps": True,
                 "compare": "lines", "submission_name": "first_second", "tests": _cms_tests(folder),
                 "grader": {p.name: p.read_text() for p in managers.iterdir() if p.name != "checker"}}
    if (managers / "checker").exists():
        row |= {"checker": {"checker": (managers / "checker").read_text()}, "checker_protocol": "cms"}
    return row


def cms_files_row(name: str) -> dict:
    """A ``communication_many_*`` or TwoSteps task as a row whose submission is the files CMS's submission format
    names (``user1.%l``, ``user2.%l``; ``first.%l``, ``second.%l``), each a fenced block named by its file."""
    two_steps = name.startswith("twosteps")
    row = cms_two_steps_row(name) if two_steps else cms_communication_row(name)
    parts = ("first", "second") if two_steps else ("user1", "user2")
    return {**{k: v for k, v in row.items() if k != "submission_name"},
            "submission_files": [f"{part}.%l" for part in parts]}


OUTPUT_ONLY_TESTS_PY = [  # Tests.py: (name, files submitted as output_000.txt and output_001.txt, score / 100)
    ("correct-outputonly", ("correct-outputonly-000.txt", "correct-outputonly-001.txt"), 1.0),
    ("incorrect-outputonly", ("incorrect-outputonly-000.txt", "incorrect-outputonly-001.txt"), 0.0),
    ("partial-correct-outputonly", ("correct-outputonly-000.txt", "incorrect-outputonly-001.txt"), 0.5),
]


def cms_output_only_row(name: str) -> dict:
    """An OutputOnly task as a row: its two tests, output-only, the comparator where it has one (else CMS's white
    diff, which ``lines`` approximates, stricter)."""
    data = CMS / name / "data"
    row: dict = {"prompt": f"Submit the outputs of {name}.", "output_only": True, "compare": "lines",
                 "tests": [{"input": (data / f"input_{c}.txt").read_text(), "output": (data / f"output_{c}.txt")
                            .read_text()} for c in ("000", "001")]}
    if (checker := CMS / name / "managers" / "checker").is_file():
        row |= {"checker": {"checker.py": checker.read_text()}, "checker_protocol": "cms"}
    return row


def submitted(*files: tuple[str, str]) -> str:
    """A completion carrying files as fenced blocks named after them, with prose around them as a model writes."""
    return "Here are my outputs.\n\n" + "".join(f"```{name}\n{text.rstrip()}\n```\n\n" for name, text in files)


def output_only_completion(files: tuple[str, ...]) -> str:
    """Tests.py's submitted files, in order, as ``output_000.txt``, ``output_001.txt``."""
    return submitted(*((f"output_{i:03d}.txt", (CMS_CODE / f).read_text()) for i, f in enumerate(files)))


def files_completion(files: dict[str, str]) -> str:
    """Files as a model writes them: a sentence, then each file in a fenced block named by its file."""
    return "Here is my solution.\n\n" + "\n\n".join(f"```{name}\n{text.rstrip(chr(10))}\n```"
                                                    for name, text in files.items())


def hello_row() -> dict:
    """DOMjudge's ``hello`` as a row: its sample, its time limit (``.timelimit``: 5 s)."""
    return {"prompt": "Print Hello world!", "time_limit": float((HELLO / ".timelimit").read_text()),
            "tests": [{"input": (HELLO / "data/sample/1.in").read_text(),
                       "output": (HELLO / "data/sample/1.ans").read_text()}]}


def dmoj_partial_row() -> dict:
    """DMOJ's ``testlib_partial`` ``init.yml`` as a row: the bridged checker's files, its protocol, one case with
    no input (DMOJ's case has no files) worth its points."""
    init = yaml.safe_load((DMOJ_PARTIAL / "init.yml").read_text())
    checker = init["checker"]["args"]
    assert checker["type"] == "testlib"
    [case] = init["test_cases"]
    return {"prompt": "Anything.", "tests": [{"input": "", "output": ""}], "checker_protocol": "testlib",
            "checker": {name: (DMOJ_PARTIAL / name).read_text() for name in checker["files"]},
            "score_max": case["points"]}
