"""Agreement of the `contest` judge with real judges, on the judges' own test suites.

Usage (as root: the contest sandbox's root mode)::

    python benchmarks/contest_agreement.py [--only domjudge|dmoj|kattis|cms] [--match TEXT] [--json PATH] [--repeat N]

Four suites, each a set of submissions with the verdict (or score) that judge gives:

* **DOMjudge** ``example_problems`` (``benchmarks/data/contest_judges/domjudge``,
  GPL-2.0, commit in ``SOURCE.md``): ``hello`` (the judge's own test
  submissions: compile errors, crashes, limits, odd output), ``fltcmp``
  (``float_tolerance 1E-6``), ``boolfind`` (interactive, a Kattis-protocol
  validator); the verdict is the ``@EXPECTED_RESULTS@`` tag (any of its
  list), else the folder's; and the tests' newer copy
  (``tests/data/contest/domjudge``), read with the reward's Kattis importer:
  ``hello``'s Bash programs and multi-file submissions (each folder a
  completion naming its files, judged through the reward: accepted or not),
  ``jumble`` (multi-pass, a Python validator);
* **DMOJ** ``testsuite`` (``benchmarks/data/contest_judges/dmoj``, AGPL-3.0):
  ``helloworld`` (the language rules: Java class names and modifiers, Go
  packages, grace, limits), ``aplusb``, ``floats`` (``floats`` checker,
  precision 2), each ``test.yml``'s ``expect`` or per-case ``cases``; and
  ``testlib_partial`` (``tests/data/contest/dmoj``: partial credit from a
  testlib checker's points), its ``score``;
* **Kattis** problemtools' examples, the suite vendored for the tests
  (``tests/data/contest/kattis``, MIT): the folder's verdict, as Kattis
  reports it (memory as a run-time error);
* **CMS** ``cmstestsuite`` (``tests/data/contest/cms``, AGPL-3.0): every
  task vendored (Batch with standard I/O, file I/O, a grader in each language
  CMS links one for; Communication with one or two processes, with or
  without a stub; TwoSteps; OutputOnly), read as rows of the reward; the
  score ``Tests.py`` expects (under the default ``kattis`` rules: CMS is not
  among ``rules``).

The Kattis, CMS and DMOJ-partial rows are read by ``tests/contest_suites.py``,
the readers the tests judge them with (imported by path), so the benchmark
and the tests judge the same rows.  Agreement is printed per suite and per
task kind (a submission counts under each kind its task has: checker,
interactive, subtasks, file I/O, grader or stub, communication, two-step,
output-only, multi-pass, Python judge, partial credit per test, multi-file,
and "more languages (X)" for a language the reward did not run before issue
41; "batch" where none applies); a false accept is our AC where the judge
says otherwise, or a score above the expected one.

Each suite is judged under its own judge's rules where the judges differ
(``rules=`` ``domjudge``, ``dmoj``, ``kattis``: :mod:`reward_plugins.contest.rules`).
Only submissions in a language the judge runs count (``languages.LANGUAGES``
where installed; a DMOJ ``PY2`` program that is Python 3 too); the others are
listed as skipped.  Excluded, and listed with why: DMOJ
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
import dataclasses
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

from grpo_host.testing import score_rows
from reward_plugins.contest.judge import MIB, Case, Checker, Problem, Program, judge
from reward_plugins.contest.languages import LANGUAGES, missing
from reward_plugins.contest.packages import kattis as kattis_package
from reward_plugins.contest.rows import problem_from_row
from reward_plugins.contest.rules import RULES

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "tests"))  # the suites' readers the tests use (tests/contest_suites.py)
import contest_suites as suites  # noqa: E402

DATA = ROOT / "data" / "contest_judges"
KATTIS = suites.DATA
DEFAULTS = {"time_limit": 1.0, "memory_mb": 256, "output_mb": 16, "compare": "token", "float_tolerance": 1e-6}
"""The reward's defaults, which a row's own columns override (``ContestParams``)."""
FIRST_LANGUAGES = {"c", "cpp", "java", "javascript", "python", "rust", "go"}
"""The languages the reward ran before issue 41: a submission in another counts under "more languages"."""
EXTENSIONS = {".c": "c", ".cc": "cpp", ".cpp": "cpp", ".c++": "cpp", ".java": "java", ".js": "javascript",
              ".py": "python", ".rs": "rust", ".go": "go", ".cs": "csharp", ".hs": "haskell", ".kt": "kotlin",
              ".php": "php", ".rb": "ruby", ".pas": "pascal", ".sh": "bash"}
DIALECTS = {"cpp": ("cpp", "cpp14", "cpp20"), "python": ("python", "pypy3")}
"""CMS's ``MANAGER_LANGUAGES`` / ``COMMUNICATION_LANGUAGES`` run one ``.cpp`` / ``.py`` file as each dialect."""
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
    completion: str | None = None  # judged through the reward as a completion (several files, output files)
    row: dict | None = None  # the row the completion is judged on
    spec: str = "contest"  # the reward, with the suite's rules, that judges ``completion``
    files: int = 1  # how many files the submission is


def kinds(item: Item) -> list[str]:
    """Every task kind the item's task has (a submission counts under each), and its language's where the reward
    did not run that language before issue 41."""
    problem, found = item.problem, []
    for kind, present in (("output-only", problem.output_only), ("communication", problem.manager is not None),
                          ("communication, several processes", problem.processes > 1),
                          ("two-step", problem.two_steps), ("interactive", problem.interactor is not None),
                          ("multi-pass", problem.passes > 1), ("checker", problem.checker is not None),
                          ("Python judge", any(j is not None and j.language == "python"
                                               for j in (problem.checker, problem.interactor))),
                          ("subtasks", bool(problem.groups)), ("partial credit per test", problem.score_max != 1.0),
                          ("file I/O", bool(problem.input_file or problem.output_file)),
                          ("grader or stub", bool(problem.grader)), ("multi-file", item.files > 1)):
        if present:
            found.append(kind)
    if not found:
        found.append("batch")
    if item.language and item.language not in FIRST_LANGUAGES:  # output-only: no language
        found.append(f"more languages ({item.language})")
    return found


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
        tests = suites.pairs(root / "data" / "sample") + suites.pairs(root / "data" / "secret")
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
    """Kattis problemtools' examples as the test suite vendors them (limits and validators from suite.json, read
    by the tests' reader), with Kattis's own verdicts (the folder's), not the suite's stricter MLE, and Kattis's
    case-insensitive default comparison."""
    items = []
    for name, spec in suites.MANIFEST.items():
        if not name.startswith("kattis/"):
            continue
        root = KATTIS / name
        problem = dataclasses.replace(suites.suite_problem(name), case_sensitive=False)
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


def _cms_item(task: str, name: str, language: str, source: str, row: dict, score: float, **extra) -> Item:
    return Item("cms", f"{task}/{name}" + (f" ({language})" if language in ("cpp14", "cpp20", "pypy3") else ""),
                language, source, problem_from_row(row, **DEFAULTS), (frozenset({"AC" if score == 1.0 else "WA"}),),
                score, row=row, **extra)


def _cms_languages(path: Path, dialects: bool) -> tuple[str, ...]:
    language = EXTENSIONS[path.suffix]
    return DIALECTS.get(language, (language,)) if dialects else (language,)


def cms() -> list[Item]:
    """CMS's functional tests (the test suite's copy, ``tests/data/contest/cms``, AGPL-3.0), each task read as a
    row by the tests' reader (``tests/contest_suites.py``), each submission's expected score ``Tests.py``'s:
    Batch (standard I/O, file I/O, a grader with a Python checker; the grader task in every language CMS links one
    for, C++ and Python in each dialect), Communication (one process with or without a stub, in every language CMS
    has a stub for; two processes, each submission its two files ``user1``, ``user2``), TwoSteps (its two files
    ``first``, ``second``), OutputOnly (the files Tests.py submits)."""
    items = []
    for task, spec in suites.CMS_BATCH.items():
        row = suites.cms_batch_row(task)
        for stem, score in spec["expect"].items():
            for path in sorted(suites.CMS_CODE.glob(f"{stem}.*")):
                for language in _cms_languages(path, task == "batch_fileio_managed"):
                    items.append(_cms_item(task, path.name, language, path.read_text(), row, score))
    for task, stem in (("communication_stdio", "communication-stdio"),
                       ("communication_stdio_stubbed", "communication-stubbed"),
                       ("communication_fifoio_stubbed", "communication-stubbed")):
        row = suites.cms_communication_row(task)
        for kind, score in (("correct", 1.0), ("incorrect", 0.0)):
            for path in sorted(suites.CMS_CODE.glob(f"{stem}-{kind}.*")):
                for language in _cms_languages(path, "stubbed" in task):
                    items.append(_cms_item(task, path.name, language, path.read_text(), row, score))
    forbidden = suites.CMS_CODE / "write-forbidden-communication.c"
    items.append(_cms_item("communication_fifoio_stubbed", forbidden.name, "c", forbidden.read_text(),
                           suites.cms_communication_row("communication_fifoio_stubbed"), 0.0))
    many, steps = (("correct", 1.0), ("incorrect", 0.0)), (("correct", 1.0), ("half-correct", 0.5), ("incorrect", 0.0))
    for task, parts, outcomes in (("communication_many_fifoio_stubbed", ("user1", "user2"), many),
                                  ("communication_many_stdio_stubbed", ("user1", "user2"), many),
                                  ("twosteps", ("first", "second"), steps),
                                  ("twosteps_comparator", ("first", "second"), steps)):
        row = suites.cms_files_row(task)
        for ext in (".c", ".cpp", ".py"):
            for kind, score in outcomes:
                if task.startswith("twosteps"):  # Tests.py: one first file per outcome, one correct second, C only
                    names = {"first": f"twosteps-{kind}-first{ext}", "second": f"twosteps-correct-second{ext}"}
                else:
                    names = {part: f"communication-many-{kind}-{part}{ext}" for part in parts}
                if not all((suites.CMS_CODE / n).is_file() for n in names.values()):
                    continue
                files = {f"{part}{ext}": (suites.CMS_CODE / n).read_text() for part, n in names.items()}
                items.append(_cms_item(task, f"{kind}{ext} ({' + '.join(names.values())})", EXTENSIONS[ext], "", row,
                                       score, completion=suites.files_completion(files), files=2))
    for task in ("outputonly", "outputonly_comparator"):
        row = suites.cms_output_only_row(task)
        for name, files, score in suites.OUTPUT_ONLY_TESTS_PY:
            items.append(_cms_item(task, name, "", "", row, score, completion=suites.output_only_completion(files)))
    return items


def domjudge_kinds() -> list[Item]:
    """DOMjudge's example problems the tests vendor (``tests/data/contest/domjudge``, GPL-2.0), read with the
    reward's Kattis importer: ``hello``'s Bash programs and multi-file submissions (a folder each, judged as a
    completion naming its files), and ``jumble`` (multi-pass, a Python validator); DOMjudge's defaults (8 MiB of
    output), the ``@EXPECTED_RESULTS@`` tag, else the folder's verdict."""
    items = []
    for root in (suites.HELLO, suites.DATA / "domjudge" / "jumble"):
        problem = problem_from_row(kattis_package(root), **{**DEFAULTS, "output_mb": 8})
        for path in sorted((root / "submissions").glob("*/*")):
            name = f"{root.name}/{path.parent.name}/{path.name}"
            if path.is_dir():
                files = {f.name: f.read_text(errors="replace") for f in sorted(path.iterdir())}
                expected = _tag("\n".join(files.values())) or frozenset({FOLDERS[path.parent.name]})
                language = next(EXTENSIONS[Path(f).suffix] for f in files if Path(f).suffix in EXTENSIONS)
                items.append(Item("domjudge", name + "/", language, "", problem, (expected,),
                                  completion=suites.files_completion(files), row=kattis_package(root),
                                  files=len(files), spec="contest(rules=domjudge, output_mb=8)"))
            elif path.suffix in (".sh", ".py") and (path.suffix == ".sh" or root.name == "jumble"):
                text = path.read_text(errors="replace")
                expected = _tag(text) or frozenset({FOLDERS[path.parent.name]})
                items.append(Item("domjudge", name, EXTENSIONS[path.suffix], text, problem, (expected,)))
    return items


def dmoj_partial() -> list[Item]:
    """DMOJ's ``testlib_partial`` (``tests/data/contest/dmoj``, AGPL-3.0): a testlib checker's ``quitp`` points
    out of the case's, read as a row by the tests' reader; the score its ``test.yml`` expects."""
    items = []
    row = suites.dmoj_partial_row()
    for folder in sorted((suites.DMOJ_PARTIAL / "tests").iterdir()):
        spec = yaml.safe_load((folder / "test.yml").read_text())
        task = {**row, "time_limit": spec["time"], "memory_limit": spec["memory"] // 1024}
        items.append(Item("dmoj", f"testlib_partial/{folder.name}", "python", (folder / spec["source"]).read_text(),
                          problem_from_row(task, **DEFAULTS), (frozenset({"AC"}),), spec["score"] / row["score_max"]))
    return items


def verdicts_agree(ours: str, theirs: frozenset[str], suite: str) -> bool:
    return ours in theirs or (ours == "MLE" and "RE" in theirs and suite in MEMORY_AS_RE)


def run(item: Item) -> tuple[bool, str]:
    """Judge one submission; whether we agree, and what we said."""
    if item.completion is not None:  # through the reward: only a score comes back
        assert item.row is not None
        [score] = score_rows(item.spec, [{**item.row, "completion": item.completion}])
        if item.score is not None:
            return score == item.score, f"score {score}"
        said = "AC" if score == 1.0 else f"not AC ({score})"
        return ("AC" in item.expected[0]) if score == 1.0 else bool(item.expected[0] - {"AC"}), said
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
    parser.add_argument("--match", default="", help="judge only the cases whose name contains this")
    parser.add_argument("--json", type=Path, help="write every case's outcome here")
    parser.add_argument("--repeat", type=int, default=0, help="judge each interactive submission N times more")
    args = parser.parse_args()
    loaders = {"domjudge": (domjudge, domjudge_kinds), "dmoj": (dmoj, dmoj_partial), "kattis": (kattis,),
               "cms": (cms,)}
    items = [item for name, loads in loaders.items() if args.only in (None, name) for load in loads
             for item in load() if args.match in item.name]
    rows: Counter = Counter()
    skipped: Counter = Counter()
    outcomes: list[dict] = []
    start = time.monotonic()
    excluded: list[str] = []
    by_kind: Counter = Counter()
    unstable: list[str] = []
    for item in items:
        if item.excluded:
            excluded.append(f"{item.suite}/{item.name}: {item.excluded}")
            outcomes.append({"suite": item.suite, "case": item.name, "excluded": item.excluded})
            continue
        if item.language and (item.language not in LANGUAGES or missing(LANGUAGES[item.language])):
            skipped[(item.suite, item.language)] += 1
            outcomes.append({"suite": item.suite, "case": item.name, "skipped": item.language})
            continue
        agree, said = run(item)
        expected = f"score {item.score}" if item.score is not None else " | ".join(
            "/".join(sorted(e)) for e in item.expected)
        rows[(item.suite, "cases")] += 1
        rows[(item.suite, "agree")] += agree
        false_accept = not agree and (said == "AC" or (item.score is not None and said != "score None"
                                                       and float(said.split()[1]) > item.score))
        rows[(item.suite, "false_accepts")] += false_accept
        for kind in kinds(item):
            by_kind[(kind, "cases")] += 1
            by_kind[(kind, "agree")] += agree
            by_kind[(kind, "false_accepts")] += false_accept
        outcomes.append({"suite": item.suite, "case": item.name, "language": item.language, "kinds": kinds(item),
                         "ours": said, "theirs": expected, "agree": agree})
        print(f"{'ok ' if agree else 'DIFF'} {item.suite:8} {item.name:70} ours {said:12} theirs {expected}",
              flush=True)
        if item.problem.interactor is not None and args.repeat:
            said_all = Counter([said, *(run(item)[1] for _ in range(args.repeat))])
            rows[("repeat", "judged")] += 1
            if len(said_all) > 1:
                unstable.append(f"{item.suite}/{item.name}: {dict(said_all)}")
    print(f"\n{'suite':10} {'cases':>6} {'agree':>6} {'%':>7} {'false accepts':>14}")
    total = Counter()
    for suite in loaders:
        cases = rows[(suite, "cases")]
        if cases:
            agree = rows[(suite, "agree")]
            print(f"{suite:10} {cases:6} {agree:6} {100 * agree / cases:6.1f}% {rows[(suite, 'false_accepts')]:14}")
            for key in ("cases", "agree", "false_accepts"):
                total[key] += rows[(suite, key)]
    if total["cases"]:
        print(f"{'all':10} {total['cases']:6} {total['agree']:6} {100 * total['agree'] / total['cases']:6.1f}% "
              f"{total['false_accepts']:14}")
    print(f"\n{'kind':40} {'cases':>6} {'agree':>6} {'%':>7} {'false accepts':>14}")
    for kind in sorted({k for k, _ in by_kind}):
        cases, agree = by_kind[(kind, "cases")], by_kind[(kind, "agree")]
        print(f"{kind:40} {cases:6} {agree:6} {100 * agree / cases:6.1f}% {by_kind[(kind, 'false_accepts')]:14}")
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
