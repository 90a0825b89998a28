"""Agreement of the `contest` judge with real judges, on the judges' own test suites.

Usage (as root: the contest sandbox's root mode)::

    python benchmarks/contest_agreement.py [--only domjudge|dmoj|kattis|cms] [--json PATH] [--repeat N]

Four suites, each a set of submissions with the verdict (or score) that judge gives:

* **DOMjudge** ``example_problems`` (``benchmarks/data/contest_judges/domjudge``,
  GPL-2.0, commit in ``SOURCE.md``): ``hello`` (the judge's own test
  submissions: compile errors, crashes, limits, odd output), ``fltcmp``
  (``float_tolerance 1E-6``), ``boolfind`` (interactive, a Kattis-protocol
  validator); the verdict is the ``@EXPECTED_RESULTS@`` tag (any of its
  list), else the folder's;
* **DMOJ** ``testsuite`` (``benchmarks/data/contest_judges/dmoj``, AGPL-3.0):
  ``helloworld`` (the language rules: Java class names and modifiers, Go
  packages, grace, limits), ``aplusb``, ``floats`` (``floats`` checker,
  precision 2), each ``test.yml``'s ``expect`` or per-case ``cases``;
* **Kattis** problemtools' examples, the suite vendored for the tests
  (``tests/data/contest/kattis``, MIT): the folder's verdict, as Kattis
  reports it (memory as a run-time error);
* **CMS** ``cmstestsuite`` (``tests/data/contest/cms``, AGPL-3.0): Batch
  tasks with standard I/O, file I/O, and a grader with a Python checker,
  read as rows of the reward; the score ``Tests.py`` expects (under the
  default ``kattis`` rules: CMS is not among ``rules``).

Each suite is judged under its own judge's rules where the judges differ
(``rules=`` ``domjudge``, ``dmoj``, ``kattis``: :mod:`reward_plugins.contest.rules`).
Only submissions in a language the judge runs count (C, C++, Java, Python 3,
JavaScript, Go, Rust where installed; a DMOJ ``PY2`` program that is Python 3
too); the others are listed as skipped.  Excluded, and listed with why: DMOJ
tests under a memory limit no row may set (below 1 MiB) and those of DMOJ's
Java agent's bans (``nobigmath``, ``Unsafe``).  Our
verdict is the first test's that is not AC (ICPC-style), per test where DMOJ
gives one per test.  Verdict names are mapped one to one (AC CORRECT, WA
WRONG-ANSWER, TLE TIMELIMIT, RE RUN-ERROR / RTE / IR, CE COMPILER-ERROR, OLE
OUTPUT-LIMIT), with two documented equivalences: DOMjudge's NO-OUTPUT is a
wrong answer with empty output (our WA), and a judge that reports memory as a
run-time error (DOMjudge, Kattis) agrees with our MLE.  Printed: per suite,
cases, agreement, false accepts (we say AC, the judge does not), and every
disagreement with both verdicts.  ``--repeat N`` judges every interactive
submission N times more and prints each whose verdicts differ between runs
(the order of two ends must not depend on timing).
"""

from __future__ import annotations

import argparse
import io
import json
import re
import sys
import time
import zipfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import yaml

from reward_plugins.contest.judge import MIB, Case, Checker, Group, Problem, Program, judge
from reward_plugins.contest.languages import LANGUAGES, missing
from reward_plugins.contest.rows import problem_from_row
from reward_plugins.contest.rules import RULES

ROOT = Path(__file__).resolve().parent
DATA = ROOT / "data" / "contest_judges"
KATTIS = ROOT.parent / "tests" / "data" / "contest"
EXTENSIONS = {".c": "c", ".cc": "cpp", ".cpp": "cpp", ".c++": "cpp", ".java": "java", ".js": "javascript",
              ".py": "python", ".rs": "rust", ".go": "go"}
DMOJ_LANGUAGES = {"C": "c", "CPP11": "cpp", "CPP14": "cpp", "CPP17": "cpp", "GO": "go", "JAVA": "java",
                  "JAVA8": "java", "PY3": "python", "PY2": "python"}
FOLDERS = {"accepted": "AC", "wrong_answer": "WA", "time_limit_exceeded": "TLE", "run_time_error": "RE",
           "compiler_error": "CE", "no_output": "WA", "output_limit": "OLE", "memory_limit_exceeded": "MLE"}
NAMES = {"CORRECT": "AC", "ACCEPTED": "AC", "WRONG-ANSWER": "WA", "WRONG_ANSWER": "WA", "NO-OUTPUT": "WA",
         "TIMELIMIT": "TLE", "TIME_LIMIT_EXCEEDED": "TLE", "RUN-ERROR": "RE", "RUN_TIME_ERROR": "RE",
         "COMPILER-ERROR": "CE", "OUTPUT-LIMIT": "OLE", "AC": "AC", "WA": "WA", "TLE": "TLE", "MLE": "MLE",
         "RTE": "RE", "IR": "RE", "CE": "CE", "OLE": "OLE"}
MEMORY_AS_RE = {"domjudge", "kattis"}  # judges that report an exceeded memory limit as a run-time error


@dataclass
class Item:
    suite: str
    name: str
    language: str
    source: str
    problem: Problem
    expected: tuple[frozenset[str], ...]  # one set of accepted verdicts, or one per test (DMOJ's cases)
    score: float | None = None  # Kattis partial scoring: the score expected instead
    excluded: str | None = None  # why this case is outside what the reward judges


def _pairs(folder: Path) -> list[Case]:
    return [Case(i.read_text(), i.with_suffix(".ans").read_text()) for i in sorted(folder.glob("*.in"))]


def _validator(root: Path, where: str | None = None) -> Checker | None:
    folders = [root / where] if where else sorted((root / "output_validators").glob("*")) + sorted(
        (root / "output_validator").glob("*"))
    for folder in folders:
        if folder.is_dir():
            return Checker(tuple((f.name, f.read_text()) for f in sorted(folder.iterdir())), "kattis")
    return None


def _tag(source: str) -> frozenset[str] | None:
    found = re.search(r"@EXPECTED_(?:RESULTS|SCORE)@:\s*([A-Z_, -]+)", source)
    if found is None:
        return None
    return frozenset(NAMES[v.strip()] for v in found[1].split(",") if v.strip())


def domjudge() -> list[Item]:
    """DOMjudge's example problems (Kattis format, DOMjudge's defaults: 2 GiB memory, 8 MiB output, the
    case-insensitive default compare)."""
    items = []
    for root in sorted(p for p in (DATA / "domjudge").iterdir() if p.is_dir()):
        spec = yaml.safe_load((root / "problem.yaml").read_text()) or {}
        flags = str(spec.get("validator_flags", "")).split()
        tolerance = float(flags[flags.index("float_tolerance") + 1]) if "float_tolerance" in flags else None
        interactive = "interactive" in str(spec.get("validation", ""))
        tests = _pairs(root / "data" / "sample") + _pairs(root / "data" / "secret")
        problem = Problem(tuple(tests), float((root / ".timelimit").read_text()), 2048 * MIB, 8 * MIB,
                          "float" if tolerance else "token", tolerance or 1e-6, tolerance or 1e-6,
                          case_sensitive=False, interactor=_validator(root) if interactive else None)
        for path in sorted((root / "submissions").glob("*/*")):
            text = path.read_text(errors="replace")
            expected = _tag(text) or frozenset({FOLDERS[path.parent.name]})
            items.append(Item("domjudge", f"{root.name}/{path.parent.name}/{path.name}",
                              EXTENSIONS.get(path.suffix, path.suffix), text, problem, (expected,)))
    return items


def dmoj() -> list[Item]:
    """DMOJ's test suite: ``init.yml`` (tests, an archive, the checker) and each test's ``test.yml``."""
    items = []
    for root in sorted(p for p in (DATA / "dmoj").iterdir() if p.is_dir()):
        init = yaml.safe_load((root / "init.yml").read_text())
        archive = zipfile.ZipFile(io.BytesIO((root / init["archive"]).read_bytes())) if "archive" in init else None

        def read(name: str, archive: zipfile.ZipFile | None = archive, root: Path = root) -> str:
            return archive.read(name).decode() if archive is not None else (root / name).read_text()

        tests = tuple(Case(read(t["in"]), read(t["out"])) for t in init["test_cases"])
        checker = init.get("checker") or "standard"
        checker_name = checker["name"] if isinstance(checker, dict) else checker
        precision = int(checker.get("args", {}).get("precision", 6)) if isinstance(checker, dict) else 6
        for spec_path in sorted((root / "tests").glob("*/test*.yml")):
            spec = yaml.safe_load(spec_path.read_text())
            if spec_path.name not in ("test.yml", "test.linux.yml", "test.posix.yml"):
                continue
            language = DMOJ_LANGUAGES.get(spec["language"], spec["language"])
            problem = Problem(tests, float(spec["time"]), int(spec["memory"]) * 1024,
                              compare="float" if checker_name == "floats" else "token",
                              float_abs=10.0 ** -precision, float_rel=10.0 ** -precision)
            if "cases" in spec:
                expected = tuple(frozenset({NAMES[c]}) for c in spec["cases"])
            else:
                codes = spec["expect"] if isinstance(spec["expect"], list) else [spec["expect"]]
                expected = (frozenset(NAMES[c] for c in codes),)
            source = (spec_path.parent / spec["source"]).read_text(errors="replace")
            items.append(Item("dmoj", f"{root.name}/{spec_path.parent.name}", language, source, problem, expected,
                              excluded=_outside(spec, source)))
    return items


def _outside(spec: dict, source: str) -> str | None:
    """Why a DMOJ test is not one the reward judges: a memory limit no row may have (the reward refuses rows
    under 1 MiB), DMOJ's own Java agent's bans (``hints: [nobigmath]``, ``sun.misc.Unsafe``), Python 2."""
    if int(spec["memory"]) < 1024:
        return f"memory limit {spec['memory']} KiB: rows may not go under 1 MiB"
    if "ca.dmoj.java." in str(spec.get("feedback", "")):
        return f"DMOJ's Java agent ban ({spec['feedback']})"
    if spec["language"] == "PY2":
        try:
            compile(source, "main.py", "exec")
        except SyntaxError:
            return "Python 2 (not Python 3 too)"
    return None


def kattis() -> list[Item]:
    """Kattis problemtools' examples as the test suite vendors them (limits and validators from suite.json), with
    Kattis's own verdicts (the folder's), not the suite's stricter MLE."""
    manifest = json.loads((KATTIS / "suite.json").read_text())["problems"]
    items = []
    for name, spec in manifest.items():
        if not name.startswith("kattis/"):
            continue
        root = KATTIS / name
        tests, groups = [], []
        if spec.get("subtasks"):
            for folder in sorted(p for p in (root / "data" / "secret").iterdir() if p.is_dir()):
                config = dict(line.split(":", 1) for line in (folder / "testdata.yaml").read_text().splitlines()
                              if ":" in line)
                accept, members = float(config["accept_score"]), _pairs(folder)
                span = tuple(range(len(tests), len(tests) + len(members)))  # Kattis grader flags: min, else sum
                groups.append(Group(accept, span, "min") if "min" in config.get("grader_flags", "").split()
                              else Group(accept * len(members), span, "sum"))
                tests += members
        else:
            tests = _pairs(root / "data" / "sample") + _pairs(root / "data" / "secret")
        validator = _validator(root, spec.get("checker") or spec.get("interactor"))
        problem = Problem(tuple(tests), spec["time_limit"], spec["memory_mb"] * MIB, case_sensitive=False,
                          checker=validator if "checker" in spec else None,
                          interactor=validator if "interactor" in spec else None, groups=tuple(groups))
        for path in sorted((root / "submissions").glob("*/*")):
            if path.parent.name == "slow_accepted" or not path.is_file():
                continue
            text = path.read_text(errors="replace")
            partial = path.parent.name == "partially_accepted"
            expected = frozenset({"AC"} if partial else {FOLDERS[path.parent.name]})
            language = "python2" if path.stem.endswith("_py2") else EXTENSIONS.get(path.suffix, path.suffix)
            items.append(Item("kattis", f"{name.split('/')[1]}/{path.parent.name}/{path.name}", language, text,
                              problem, (expected,), spec.get("expect", {}).get(str(path.relative_to(root)))
                              if partial else None))
    return items


def cms() -> list[Item]:
    """CMS's functional tests (the test suite's copy, ``tests/data/contest/cms``, AGPL-3.0): three Batch tasks
    (standard I/O, file I/O, file I/O with a grader and a Python checker) as rows of the reward
    (``suite.json``), each submission's expected score ``Tests.py``'s."""
    items = []
    root = KATTIS / "cms"
    for task, spec in json.loads((root / "suite.json").read_text())["tasks"].items():
        row = dict(spec["row"], tests=[{"input": (root / task / "data" / f"{n}.in").read_text(),
                                        "output": (root / task / "data" / f"{n}.out").read_text()} for n in (1, 2)])
        for column in ("grader", "checker"):
            names = [row[column]] if isinstance(row.get(column), str) else row.get(column, [])
            if names:
                row[column] = {name: (root / task / "managers" / name).read_text() for name in names}
        problem = problem_from_row(row, time_limit=1.0, memory_mb=256, output_mb=16, compare="token",
                                   float_tolerance=1e-6)
        for stem, score in spec["expect"].items():
            for path in sorted((root / "code").glob(f"{stem}.*")):
                items.append(Item("cms", f"{task}/{path.name}", EXTENSIONS[path.suffix], path.read_text(), problem,
                                  (frozenset({"AC" if score == 1.0 else "WA"}),), score))
    return items


def verdicts_agree(ours: str, theirs: frozenset[str], suite: str) -> bool:
    return ours in theirs or (ours == "MLE" and "RE" in theirs and suite in MEMORY_AS_RE)


def run(item: Item) -> tuple[bool, str]:
    """Judge one submission; whether we agree, and what we said."""
    language = LANGUAGES[item.language]
    per_test = len(item.expected) > 1
    report = judge(Program(language, item.source), item.problem, deadline=time.monotonic() + 600,
                   stop_on_failure=item.suite != "cms" and not per_test and not item.problem.groups,
                   rules=RULES.get(item.suite, RULES["kattis"]))
    if item.score is not None:
        return report.score == item.score, f"score {report.score}"
    if per_test:
        said = report.verdicts
        return all(verdicts_agree(v, e, item.suite) for v, e in zip(said, item.expected, strict=True)), str(said)
    first = next((v for v in report.verdicts if v not in ("AC", "SKIP")), "AC")
    return verdicts_agree(first, item.expected[0], item.suite), first


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=["domjudge", "dmoj", "kattis", "cms"])
    parser.add_argument("--json", type=Path, help="write every case's outcome here")
    parser.add_argument("--repeat", type=int, default=0, help="judge each interactive submission N times more")
    args = parser.parse_args()
    suites = {"domjudge": domjudge, "dmoj": dmoj, "kattis": kattis, "cms": cms}
    items = [item for name, load in suites.items() if args.only in (None, name) for item in load()]
    rows, skipped, outcomes = Counter(), Counter(), []
    start = time.monotonic()
    excluded: list[str] = []
    unstable: list[str] = []
    for item in items:
        if item.excluded:
            excluded.append(f"{item.suite}/{item.name}: {item.excluded}")
            outcomes.append({"suite": item.suite, "case": item.name, "excluded": item.excluded})
            continue
        if item.language not in LANGUAGES or missing(LANGUAGES[item.language]):
            skipped[(item.suite, item.language)] += 1
            outcomes.append({"suite": item.suite, "case": item.name, "skipped": item.language})
            continue
        agree, said = run(item)
        expected = f"score {item.score}" if item.score is not None else " | ".join(
            "/".join(sorted(e)) for e in item.expected)
        rows[(item.suite, "cases")] += 1
        rows[(item.suite, "agree")] += agree
        false_accept = not agree and said == "AC"
        rows[(item.suite, "false_accepts")] += false_accept
        outcomes.append({"suite": item.suite, "case": item.name, "language": item.language, "ours": said,
                         "theirs": expected, "agree": agree})
        print(f"{'ok ' if agree else 'DIFF'} {item.suite:8} {item.name:70} ours {said:12} theirs {expected}",
              flush=True)
        if item.problem.interactor is not None and args.repeat:
            said_all = Counter([said, *(run(item)[1] for _ in range(args.repeat))])
            rows[("repeat", "judged")] += 1
            if len(said_all) > 1:
                unstable.append(f"{item.suite}/{item.name}: {dict(said_all)}")
    print(f"\n{'suite':10} {'cases':>6} {'agree':>6} {'%':>7} {'false accepts':>14}")
    total = Counter()
    for suite in suites:
        cases = rows[(suite, "cases")]
        if cases:
            agree = rows[(suite, "agree")]
            print(f"{suite:10} {cases:6} {agree:6} {100 * agree / cases:6.1f}% {rows[(suite, 'false_accepts')]:14}")
            for key in ("cases", "agree", "false_accepts"):
                total[key] += rows[(suite, key)]
    if total["cases"]:
        print(f"{'all':10} {total['cases']:6} {total['agree']:6} {100 * total['agree'] / total['cases']:6.1f}% "
              f"{total['false_accepts']:14}")
    print("skipped (language not judged here):", ", ".join(f"{s}/{lang} {n}" for (s, lang), n in
                                                          sorted(skipped.items())) or "none")
    print("excluded (outside what the reward judges):", *excluded, sep="\n  ")
    if args.repeat:
        print(f"interactive submissions judged {args.repeat + 1} times: {rows[('repeat', 'judged')]}, "
              f"verdicts that differ between runs: {len(unstable)}", *unstable, sep="\n  ")
    print(f"{time.monotonic() - start:.0f} s")
    if args.json:
        args.json.write_text(json.dumps(outcomes, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
