"""Which of the real judges' own test submissions the `contest` reward can judge at all: before and now, by kind.

Usage::

    python benchmarks/contest_coverage.py DOMJUDGE_GIT DMOJ_GIT CMS_GIT PROBLEMTOOLS_GIT [--before C] [--json PATH]

Each argument is a git directory (a bare mirror: the ``fetch`` tool's ``/work/.mirror/<owner>+<name>/repo``), read
at its ``HEAD`` with ``git show`` / ``ls-tree`` (nothing is copied; the commits are printed).  Every submission of
DOMjudge's ``example_problems`` and ``example_scoring_problems``, DMOJ judge-server's ``testsuite`` (one per test
folder), CMS's ``cmstestsuite/Tests.py`` (one per test and language) and Kattis problemtools' ``examples`` is
inventoried: its language (the judge's own declaration, else its file extension), and its task's kinds (see
:data:`KINDS`).  A submission is judgeable when the reward has its language (``languages.by_tag`` of the commit in
question: the working tree's ``LANGUAGES`` now, ``git show <before>:reward_plugins/contest/languages.py`` before)
and every kind of its task, and its memory limit is at or above that commit's floor (read from its ``rows.py``).
The kinds a commit supports cannot all be read from code (a task kind is a column's handling, not a table), so
:data:`KINDS` states them, each with the ``docs/contest.md`` section that describes it (its first column is
1456d4e's, the default ``--before``); the grader languages now are ``graders.GRADED``'s.  Whether the toolchain is
installed on this machine (``languages.missing``) is counted apart: it is a property of the machine, not of the reward.

CMS's ``Tests.py`` is a Python list built from its imports; it is executed with those imports replaced by
recorders (its tasks' ``__init__.py`` are executed the same way for their ``task_info``), at the pinned commit.
"""

from __future__ import annotations

import argparse
import fnmatch
import importlib.util
import json
import re
import subprocess
import sys
import tempfile
import types
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reward_plugins.contest import graders, judge, languages  # noqa: E402

KINDS: dict[str, tuple[bool, bool, str]] = {
    # kind: (supported at the session's start, supported now, where docs/contest.md describes it)
    "batch": (True, True, "Use"),
    "interactive": (True, True, "Use (`interactor`)"),
    "checker C++": (True, True, "Use (`checker`, testlib or Kattis protocol)"),
    "checker Python": (False, True, "Task kinds: Python checkers, validators and interactors"),
    "checker C": (False, True, "DMOJ's checker kinds (a judge in C, by its suffix or `checker_language`)"),
    "checker Rust": (False, True, "DMOJ's checker kinds (a judge in Rust)"),
    "interactor C++": (True, True, "Use (`interactor`)"),
    "interactor Python": (False, True, "Task kinds: Python checkers, validators and interactors"),
    "interactor C": (False, True, "DMOJ's checker kinds (a judge in C)"),
    "checker protocol coci/peg": (False, True, "DMOJ's checker kinds (`checker_protocol`: coci, peg)"),
    "DMOJ Python checker (check() API)": (False, True, "DMOJ's checker kinds (`checker_protocol: dmoj`)"),
    "DMOJ custom judge (grader API)": (False, False, "DMOJ's checker kinds: `custom_judge` graders are not run"),
    "built-in compare": (True, True, "Use (`compare`: token, lines, exact, float)"),
    "built-in compare, other": (False, True, "DMOJ's checker kinds (`compare`: easy, linecount, sorted, ...)"),
    "grader": (False, True, "Task kinds: Graders linked with the submission"),
    "file I/O": (False, True, "Task kinds: File I/O"),
    "scoring groups": (True, True, "Use (`subtasks`); Partial credit and subtasks"),
    "partial credit per test": (False, True, "Partial credit and subtasks"),
    "multi-pass": (False, True, "Task kinds: Kattis multi-pass validation (`validation_passes`)"),
    "interactive multi-pass": (False, False, "What is missing (interactive multi-pass)"),
    "output-only": (False, True, "Task kinds: Output-only tasks (`output_only`)"),
    "communication": (False, True, "Task kinds: Communication tasks (`manager`)"),
    "communication, several processes": (False, True, "Task kinds: Communication tasks (`manager`, `num_processes`)"),
    "two-step": (False, True, "Task kinds: Two-step tasks (`two_steps`)"),
    "multi-file submission": (False, True, "Task kinds: Multi-file submissions (in `judge.MULTI_FILE`'s languages)"),
    "generated tests": (False, False, "none: a row's tests are data; DMOJ generates them at judging time"),
    "batch dependencies": (False, False, "Use: `subtasks` are independent"),
}
"""The task kinds, and which the reward supports: at ``--before`` (1456d4e, from its ``docs/contest.md``: batch and
interactive, C++ testlib/Kattis checkers and interactors, built-in compares, subtasks all or nothing) and now."""

JUDGE_FILES = {"c": "C", "h": "C", "cc": "C++", "cpp": "C++", "cxx": "C++", "hpp": "C++", "py": "Python",
               "rs": "Rust"}
"""A checker's or interactor's language, by its source files' extensions."""
DMOJ = {"C": "c", "CPP03": "cpp", "CPP11": "cpp", "CPP14": "cpp14", "CPP17": "cpp17", "CPP20": "cpp20",
        "PY2": "python2", "PY3": "python3", "PYPY3": "pypy3", "JAVA8": "java", "JAVA": "java", "GO": "go",
        "RUST": "rust", "MONOCS": "csharp", "PAS": "pascal", "BF": "brainfuck", "NASM": "nasm", "NASM64": "nasm64",
        "TUR": "turing", "RUBY": "ruby", "PHP": "php"}
CMS = {"C11 / gcc": "c", "C# / Mono": "csharp", "C++11 / g++": "cpp", "C++14 / g++": "cpp14",
       "C++17 / g++": "cpp17", "C++20 / g++": "cpp20", "Haskell / ghc": "haskell", "Java / JDK": "java",
       "Pascal / fpc": "pascal", "PHP": "php", "Python 3 / CPython": "python3", "Python 3 / PyPy": "pypy3",
       "Rust": "rust"}
"""The judges' language names as the reward's tags (``C++11`` as ``cpp``: gnu++17 compiles the suites' C++11)."""
ALIASES = {"golang": "go", "pl": "perl", "f95": "fortran", "sh": "bash"}
"""Judges' language ids shown under one name (each pair means the same to ``by_tag``)."""
DMOJ_COMPARES = {"standard": "token", "identical": "exact", "rstripped": "lines", "floats": "float",
                 "floatsabs": "float", "floatsrel": "float"}
"""DMOJ's built-in checkers that are one of the reward's ``compare`` modes."""


@dataclass
class Submission:
    """One submission of a judge's suite, as that judge declares it."""

    judge: str
    name: str
    language: str  # the judge's language as a tag ``by_tag`` reads ("none": output files only)
    kinds: list[str]
    memory_mib: float | None = None
    files: int = 1


@dataclass
class Capabilities:
    """What one commit of the reward judges: its languages, the kinds of :data:`KINDS` it has, its memory floors."""

    by_tag: Callable[[str], Any]
    kinds: set[str]
    floor_mib: float  # the smallest memory limit a row may give (batch)
    interactive_floor_mib: float
    grader_languages: set[str] | None = None
    multi_file_languages: set[str] | None = None

    def blockers(self, sub: Submission) -> list[str]:
        """What keeps the reward from judging ``sub``: empty when it can."""
        out = [f"kind: {k}" for k in sub.kinds if k not in self.kinds]
        lang = self.by_tag(sub.language) if sub.language != "none" else None
        if sub.language != "none" and lang is None:
            out.append(f"language: {sub.language}")
        if "grader" in sub.kinds and lang is not None and self.grader_languages is not None \
                and lang.name not in self.grader_languages:
            out.append(f"grader in {sub.language}")
        if "multi-file submission" in sub.kinds and lang is not None and self.multi_file_languages is not None \
                and lang.name not in self.multi_file_languages:
            out.append(f"several files in {sub.language}")
        floor = self.interactive_floor_mib if "interactive" in sub.kinds else self.floor_mib
        if sub.memory_mib is not None and sub.memory_mib < floor:
            out.append(f"memory below {floor:g} MiB")
        return out


class Repo:
    """A git directory read at HEAD."""

    def __init__(self, git_dir: str) -> None:
        self.git_dir = git_dir
        self.commit = self._git("rev-parse", "HEAD").strip()
        self.date = self._git("log", "-1", "--format=%cs", "HEAD").strip()

    def _git(self, *args: str) -> str:
        return subprocess.run(["git", "--git-dir", self.git_dir, *args], capture_output=True, text=True,
                              errors="replace", check=True).stdout

    def files(self, prefix: str) -> list[str]:
        return self._git("ls-tree", "-r", "--name-only", "HEAD", prefix).splitlines()

    def show(self, path: str) -> str:
        return self._git("show", f"HEAD:{path}")

    def yaml(self, path: str) -> dict:
        try:
            return yaml.safe_load(self.show(path)) or {}
        except subprocess.CalledProcessError:
            return {}


def domjudge_languages(repo: Repo) -> dict[str, str]:
    """Extension -> language id, from DOMjudge's own default language table (``LanguageFixture.php``)."""
    table = repo.show("webapp/src/DataFixtures/DefaultData/LanguageFixture.php")
    return {ext: lang for lang, exts in re.findall(r"\['(\w+)',\s*'[^']*',\s*\[([^\]]*)\]", table)
            for ext in re.findall(r"'([^']+)'", exts)}


def kattis_languages(repo: Repo) -> list[tuple[str, list[str], str | None]]:
    """(language, file globs, shebang the file must match or None), in problemtools' own order
    (``problemtools/config/languages.yaml``): a ``.py`` is Python 2 when its ``#!`` line says so, else Python 3."""
    table = yaml.safe_load(repo.show("problemtools/config/languages.yaml"))
    return [(lang, str(spec["files"]).split(), spec.get("shebang")) for lang, spec in table.items()]


def _language(path: str, text: str, table: dict[str, str] | list) -> str:
    """The judge's language for a submission file: DOMjudge's by extension, Kattis's by glob and shebang."""
    name = path.rsplit("/", 1)[-1]
    if isinstance(table, dict):
        return table.get(name.rsplit(".", 1)[-1] if "." in name else "", "unknown")
    for lang, globs, shebang in table:
        if any(fnmatch.fnmatchcase(name, g) for g in globs) and (shebang is None or re.match(shebang, text)):
            return lang
    return "unknown"


def _judge_language(files: list[str], declared: str | None = None) -> str:
    """C, C++, Python, Rust or other: a judge program's language, as declared (DMOJ's ``lang``) or by its files."""
    if declared:
        return {"c": "C", "python3": "Python", "rust": "Rust"}.get(
            DMOJ.get(declared, ""), "C++" if DMOJ.get(declared, "").startswith("cpp") else "other")
    found = {JUDGE_FILES.get(f.rsplit(".", 1)[-1], "other") for f in files}  # C++ first: a validate.h is "C"
    for lang in ("C++", "Python", "C", "Rust"):
        if lang in found:
            return lang
    return "other"


def _judge_kind(role: str, files: list[str], repo: Repo, scoring: bool) -> list[str]:
    """The kinds of a Kattis-format output validator or interactor, from its files: partial credit where the
    problem is a scoring one and a source (not the shared ``validate.h``) writes ``score.txt``."""
    kinds = [f"{role} {_judge_language(files)}"]
    if scoring and any("score.txt" in repo.show(f) for f in files if not f.endswith(".h")):
        kinds.append("partial credit per test")
    return kinds


def kattis_format(repo: Repo, roots: list[str], judge_name: str, table: dict[str, str] | list) -> list[Submission]:
    """Kattis-format problems (DOMjudge's examples, problemtools' examples): ``problem.yaml``, the validator's
    folder, ``submissions/<verdict>/`` (a file, or a folder that is one submission: several sources in it are a
    multi-file submission; a lone source beside other files, DOMjudge's ``extra-file-*``, is not)."""
    subs = []
    for root in roots:
        spec = repo.yaml(f"{root}/problem.yaml")
        kinds_of = str(spec.get("type", "")) + " " + str(spec.get("validation", ""))
        scoring = "scoring" in kinds_of
        all_files = repo.files(root + "/")
        validator = [f for f in all_files if re.match(rf"{re.escape(root)}/output_validators?/", f)]
        if "interactive" in kinds_of:
            kinds = [*_judge_kind("interactor", validator, repo, scoring), "interactive"]
        elif "custom" in kinds_of or validator:
            kinds = _judge_kind("checker", validator, repo, scoring)
        else:
            kinds = ["built-in compare"]
        kinds += [] if "interactive" in kinds else ["batch"]
        if "multi-pass" in kinds_of:
            kinds.append("interactive multi-pass" if "interactive" in kinds else "multi-pass")
        kinds += ["scoring groups"] if scoring else []
        memory = (spec.get("limits") or {}).get("memory")
        entries: dict[str, list[str]] = {}
        for f in all_files:
            parts = f[len(root) + 1:].split("/")
            if parts[0] == "submissions" and len(parts) >= 3:
                entries.setdefault("/".join(parts[:3]), []).append(f)
        for entry, files in sorted(entries.items()):
            langs = [(f, _language(f, repo.show(f), table)) for f in files]
            sources = [(f, lang) for f, lang in langs if lang != "unknown"] or langs
            lang = ALIASES.get(sources[0][1], sources[0][1])
            extra = ["multi-file submission"] if len(sources) > 1 else []
            subs.append(Submission(judge_name, f"{root.rsplit('/', 1)[-1]}/{entry}", lang, kinds + extra,
                                   float(memory) if memory else None, len(sources)))
    return subs


def domjudge(repo: Repo) -> list[Submission]:
    roots = sorted({"/".join(f.split("/")[:2]) for f in repo.files("example_problems/") +
                    repo.files("example_scoring_problems/") if f.endswith("/problem.yaml")})
    return kattis_format(repo, roots, "DOMjudge", domjudge_languages(repo))


def kattis(repo: Repo) -> list[Submission]:
    roots = sorted({"/".join(f.split("/")[:2]) for f in repo.files("examples/") if f.endswith("/problem.yaml")})
    return kattis_format(repo, roots, "Kattis", kattis_languages(repo))


def dmoj(repo: Repo) -> list[Submission]:
    """DMOJ's testsuite: each ``tests/<name>/`` folder is one submission (its ``test.yml``, else the platform's)."""
    subs = []
    specs: dict[str, str] = {}
    for f in sorted(repo.files("testsuite/"), key=lambda f: ("test.yml" not in f, f)):
        parts = f.split("/")
        if len(parts) == 5 and parts[2] == "tests" and parts[4].endswith(".yml"):
            specs.setdefault("/".join(parts[:4]), f)
    for folder, spec_path in sorted(specs.items()):
        problem = folder.split("/")[1]
        init = repo.yaml(f"testsuite/{problem}/init.yml")
        spec = repo.yaml(spec_path)
        kinds = []
        checker = init.get("checker") or "standard"
        name = checker.get("name") if isinstance(checker, dict) else checker
        args = checker.get("args", {}) if isinstance(checker, dict) else {}
        if name == "bridged":
            files = args.get("files")
            sources = [files] if isinstance(files, str) else files or []
            kinds.append(f"checker {_judge_language(sources, args.get('lang'))}")
            if args.get("type") in ("coci", "peg"):
                kinds.append("checker protocol coci/peg")
            if any("quitp" in repo.show(f"testsuite/{problem}/{s}") for s in sources if not s.endswith(".h")):
                kinds.append("partial credit per test")
        elif str(name).endswith(".py"):
            kinds.append("DMOJ Python checker (check() API)")
        elif name in DMOJ_COMPARES:
            kinds.append("built-in compare")
        else:
            kinds.append("built-in compare, other")
        if "interactive" in init:
            files = init["interactive"].get("files")
            sources = [files] if isinstance(files, str) else files or []
            kinds = [f"interactor {_judge_language(sources, init['interactive'].get('lang'))}", "interactive"]
        if "custom_judge" in init:
            kinds = ["DMOJ custom judge (grader API)"]
        kinds += [] if "interactive" in init or "custom_judge" in init else ["batch"]
        if "signature_grader" in init:
            kinds.append("grader")
        if "generator" in init:
            kinds.append("generated tests")
        cases = init.get("test_cases") or []
        if isinstance(cases, list) and any(isinstance(c, dict) and "dependencies" in c for c in cases):
            kinds.append("batch dependencies")
        if isinstance(cases, list) and any(isinstance(c, dict) and "batched" in c for c in cases):
            kinds.append("scoring groups")
        language = DMOJ.get(str(spec.get("language")), str(spec.get("language")).lower())
        memory = spec.get("memory")
        source = spec.get("source")
        files = len(source) if isinstance(source, list) else 1
        subs.append(Submission("DMOJ", f"{problem}/{folder.split('/')[3]}", language,
                               kinds + (["multi-file submission"] if files > 1 else []),
                               memory / 1024 if memory else None, files))
    return subs


class _Recorder:
    """Stands for any name ``Tests.py`` imports: calls return a fresh recorder of their arguments."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        self.args, self.kwargs = args, kwargs

    def __call__(self, *args: object, **kwargs: object) -> _Recorder:
        return _Recorder(*args, **kwargs)


def cms(repo: Repo) -> list[Submission]:
    """CMS's functional tests: ``Tests.py``'s ``ALL_TESTS``, one submission per test and language."""
    tasks = {}
    for f in repo.files("cmstestsuite/tasks/"):
        if f.count("/") == 3 and f.endswith("/__init__.py"):
            scope: dict = {}
            exec(compile(repo.show(f), f, "exec"), scope)  # noqa: S102 - the pinned commit's task_info dicts
            tasks[f.split("/")[2]] = types.SimpleNamespace(name=f.split("/")[2], **{
                k: v for k, v in scope.items() if k in ("task_info", "managers", "test_cases")})
    source = repo.show("cmstestsuite/Tests.py")
    scope = {"__builtins__": __builtins__}
    text = re.sub(r"import cmstestsuite\.tasks\.(\w+) \\\n\s*as (\w+)", r"\2 = _tasks['\1']", source)
    text = re.sub(r"import cmstestsuite\.tasks\.(\w+) as (\w+)", r"\2 = _tasks['\1']", text)
    text = re.sub(r"from cmstestsuite\.Test import [^\n]*\\\n[^\n]*\n", "", text)
    imported = re.search(r"from cmstestsuite\.Test import ([^\n]*\\\n[^\n]*)\n", source)[1]  # type: ignore[index]
    scope.update(_tasks=tasks, **{n.strip(): _Recorder for n in imported.replace("\\", "").split(",")})
    exec(compile(text, "cmstestsuite/Tests.py", "exec"), scope)  # noqa: S102 - the pinned commit's test list
    subs = []
    for test in scope["ALL_TESTS"]:
        task = test.kwargs["task"]
        info = {k.split("}}_", 1)[-1].replace("{{dataset_id}}", ""): v for k, v in task.task_info.items()}
        kind = info.get("task_type_", "Batch")
        kinds = []
        names = [f for f in test.kwargs["filenames"] if f]
        program = any("%l" in f for f in names)
        if kind in ("Batch", "BatchAndOutput"):  # BatchAndOutput: a program, output files for some tests, or both
            kinds += ["batch"] if program else []
            kinds += ["output-only"] if not program or len(names) > 1 else []
            if info.get(f"{kind}_compilation") == "grader":
                kinds.append("grader")
            if info.get(f"{kind}_io_0_inputfile") or info.get(f"{kind}_io_1_outputfile"):
                kinds.append("file I/O")
        else:
            kinds.append({"OutputOnly": "output-only", "Communication": "communication", "TwoSteps": "two-step"}[kind])
            if kind == "Communication" and int(info.get("Communication_num_processes", 1) or 1) > 1:
                kinds[-1] = "communication, several processes"
            if kind == "Communication" and info.get("Communication_compilation") == "stub":
                kinds.append("grader")  # the stub is linked with the submission as a grader is: its languages
        if sum("%l" in f for f in names) > 1:
            kinds.append("multi-file submission")  # user1.%l and user2.%l, TwoSteps' first and second
        if any(v == "comparator" for k, v in info.items() if k.endswith("output_eval")):
            checker = repo.show(f"cmstestsuite/tasks/{task.name}/code/checker")
            kinds.append("checker Python" if checker.startswith("#!") and "python" in checker.split("\n")[0]
                         else "checker C++")
            kinds.append("partial credit per test")  # a CMS comparator's outcome is a fraction
        elif kind != "Communication":
            kinds.append("built-in compare")  # CMS's white-space diff
        memory = float(info.get("memory_limit_", 0)) or None
        for lang in test.kwargs["languages"]:
            subs.append(Submission("CMS", f"{task.name}/{test.args[0]}/{lang}", CMS.get(lang, lang) if program
                                   else "none", kinds, memory, len(names)))
    return subs


def before_languages(commit: str) -> Callable[[str], Any]:
    """``by_tag`` of the reward at ``commit``: its ``languages.py`` loaded as a module of its own."""
    text = subprocess.run(["git", "-C", str(ROOT), "show", f"{commit}:reward_plugins/contest/languages.py"],
                          capture_output=True, text=True, check=True).stdout
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(text)
    name = f"_contest_languages_{commit}"
    spec = importlib.util.spec_from_file_location(name, f.name)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[name] = module
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    Path(f.name).unlink()
    return module.by_tag


def floor_mib(commit: str | None) -> float:
    """The smallest memory limit a row may give, as that commit's ``rows.py`` checks it (``N * MIB <= memory``)."""
    text = (subprocess.run(["git", "-C", str(ROOT), "show", f"{commit}:reward_plugins/contest/rows.py"],
                           capture_output=True, text=True, check=True).stdout if commit
            else (ROOT / "reward_plugins/contest/rows.py").read_text())
    found = re.search(r"if not \((?:(\d+) \* )?MIB <= memory", text)
    if found is None:
        raise SystemExit("rows.py's memory floor check was not found: update floor_mib")
    return float(found[1] or 1)


def share(subs: list[Submission], ok: set[int], key) -> dict[str, tuple[int, int]]:
    out: dict[str, list[int]] = {}
    for i, sub in enumerate(subs):
        for k in key(sub):
            out.setdefault(k, [0, 0])
            out[k][0] += i in ok
            out[k][1] += 1
    return {k: (a, b) for k, (a, b) in out.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for name in ("domjudge", "dmoj", "cms", "problemtools"):
        parser.add_argument(name, help=f"{name}'s git directory")
    parser.add_argument("--before", default="1456d4e")
    parser.add_argument("--json")
    a = parser.parse_args()
    repos = {"DOMjudge": Repo(a.domjudge), "DMOJ": Repo(a.dmoj), "CMS": Repo(a.cms), "Kattis": Repo(a.problemtools)}
    subs = domjudge(repos["DOMjudge"]) + dmoj(repos["DMOJ"]) + cms(repos["CMS"]) + kattis(repos["Kattis"])
    unknown = {k for sub in subs for k in sub.kinds} - KINDS.keys()
    if unknown:
        raise SystemExit(f"kinds missing from KINDS: {sorted(unknown)}")
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    caps = {
        "before": Capabilities(before_languages(a.before), {k for k, v in KINDS.items() if v[0]},
                               floor_mib(a.before), floor_mib(a.before)),  # no graders: no grader languages
        "now": Capabilities(languages.by_tag, {k for k, v in KINDS.items() if v[1]}, floor_mib(None),
                            judge.SMALL_MEMORY / judge.MIB, set(graders.GRADED), set(judge.MULTI_FILE)),
    }
    print("# sources: " + "; ".join(f"{n} {r.commit[:12]} ({r.date})" for n, r in repos.items()))
    print(f"# reward: before {a.before}, now {head} (working tree); {len(subs)} submissions")
    blocked = {when: [c.blockers(s) for s in subs] for when, c in caps.items()}
    ok = {when: {i for i, b in enumerate(blocked[when]) if not b} for when in caps}
    installed = {i for i in ok["now"] if (lang := languages.by_tag(subs[i].language)) is None
                 or languages.missing(lang) is None}
    rows = []
    for title, key in (("judge", lambda s: [s.judge]), ("kind", lambda s: s.kinds),
                       ("language", lambda s: [s.language])):
        b, n = share(subs, ok["before"], key), share(subs, ok["now"], key)
        print(f"\n| {title} | submissions | judgeable before | now |\n|---|---:|---:|---:|")
        for k in sorted(n, key=lambda k: (-n[k][1], k)):
            print(f"| {k} | {n[k][1]} | {b[k][0]} ({100 * b[k][0] / n[k][1]:.0f} %) | "
                  f"{n[k][0]} ({100 * n[k][0] / n[k][1]:.0f} %) |")
            rows.append({"by": title, "group": k, "submissions": n[k][1], "before": b[k][0], "now": n[k][0]})
    total = len(subs)
    print(f"\n| all | {total} | {len(ok['before'])} ({100 * len(ok['before']) / total:.1f} %) | "
          f"{len(ok['now'])} ({100 * len(ok['now']) / total:.1f} %) |")
    print(f"\nnow, with the toolchain installed on this machine: {len(installed)} of {len(ok['now'])}")
    for when in caps:
        alone = Counter(b for bs in blocked[when] for b in bs)
        print(f"\neach blocker {when}, and the submissions it blocks (alone or with others): "
              + "; ".join(f"{b} {n}" for b, n in alone.most_common()))
        groups = Counter("; ".join(sorted(b)) for b in blocked[when] if b)
        print(f"\nlargest groups not judgeable {when} (what blocks them: submissions)")
        for why, count in groups.most_common(12):
            print(f"  {count:4d}  {why}")
    if a.json:
        Path(a.json).write_text(json.dumps({
            "sources": {n: r.commit for n, r in repos.items()}, "before": a.before, "now": head, "rows": rows,
            "submissions": [{**vars(s), "before": blocked["before"][i], "now": blocked["now"][i]}
                            for i, s in enumerate(subs)]}, indent=1))


if __name__ == "__main__":
    main()
