"""Problem packages as data: a Kattis/ICPC problem package or a CMS task folder read into one ``contest`` row.

``grpo-host data import kattis|cms FOLDER... --out rows.jsonl`` calls :func:`kattis` or :func:`cms` on each
folder (registered through the host's ``register_importers`` hook), so users train on existing problem archives
without writing a converter.  The row carries what :mod:`reward_plugins.contest.rows` reads (``tests``,
``time_limit``, ``memory_limit``, ``compare``, ``float_tolerance``, ``checker`` / ``interactor`` with
``checker_protocol``, ``subtasks`` with their ``aggregate``, ``score_max``, ``input_file`` / ``output_file``,
``grader`` with ``submission_name``) and ``prompt``: the statement's text, or, where the package has none (a PDF
only, or none at all), a placeholder naming the problem, with ``statement`` null so a user can tell and map a
prompt of their own.

A package is read as its judge reads it (the references: the problem package format at
https://www.kattis.com/problem-package-format/ and Kattis problemtools; cms-dev/cms's
``cmscontrib/loaders/italy_yaml.py``).  What the ``contest`` reward cannot judge as that judge would (Kattis's
submit-answer, CMS's output-only test cases inside a Batch task, communication with more than 8 processes, interactive
multi-pass, a validator in another language than C++ or Python, a CMS comparator that is a binary without its C++
source, validator flags it cannot pass on, a Kattis scoring group other than ``min`` or ``sum`` with ``on_reject:
continue``, validator scores in groups of different worth, an output limit of the problem's own) refuses the package
with a :class:`grpo_host.DataError` naming the package and the feature: a row that silently judged something else
would train on the wrong reward.  Where the row's built-in comparison cannot say the judge's exactly, the stricter
one is written (it may reject what the judge accepts, never the reverse): Kattis's default validator ignores case,
the ``token`` comparison does not; CMS's white-space diff compares lines token by token, ``lines`` also keeps the
spaces inside a line.  Files are read as bytes and decoded as UTF-8 (a test's ``\\r\\n`` is kept); a symbolic link
that leads out of the package is refused."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from grpo_host import DataError

from .judge import PROCESSES

__all__ = ["cms", "kattis"]

CPP_SUFFIXES = (".cc", ".cpp", ".cxx", ".c++", ".h", ".hpp", ".hh", ".hxx")
STATEMENT_NAMES = ("problem.en.md", "problem.md", "problem.en.tex", "problem.tex")


class _Package:
    """One folder being read: every error names the format, the package and the file."""

    def __init__(self, kind: str, folder: Path) -> None:
        self.kind, self.folder = kind, Path(folder)
        self.root = self.folder.resolve()
        if not self.folder.is_dir():
            raise self.error("", "not a folder")

    def error(self, file: str, message: str) -> DataError:
        where = f"{self.kind} package {self.folder.name!r} ({self.folder})"
        return DataError(where, f"{file}: {message}" if file else message)

    def refuse(self, feature: str) -> DataError:
        return self.error("", f"the contest reward cannot judge {feature}; the package is not imported")

    def path(self, relative: str) -> Path:
        return self.folder / relative

    def text(self, path: Path) -> str:
        """A file's text, exactly (no newline translation); refused where a link leads out of the package."""
        name = str(path.relative_to(self.folder))
        if not path.resolve().is_relative_to(self.root):
            raise self.error(name, "a symbolic link that leads out of the package")
        try:
            return path.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            raise self.error(name, "not UTF-8 text") from None
        except OSError as exc:
            raise self.error(name, f"cannot be read ({exc.strerror or exc})") from None

    def yaml(self, relative: str, *, required: bool = False) -> dict[str, Any]:
        path = self.path(relative)
        if not path.is_file():
            if required:
                raise self.error(relative, "missing")
            return {}
        try:
            value = yaml.safe_load(self.text(path))
        except yaml.YAMLError as exc:
            raise self.error(relative, f"not valid YAML ({exc})") from None
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.error(relative, "expected a mapping of keys to values")
        return value

    def statement(self, folders: tuple[str, ...], names: tuple[str, ...]) -> str | None:
        """The relative path of the first statement text found: the named files first, then any .md, then .tex."""
        for folder in folders:
            base = self.path(folder)
            if not base.is_dir():
                continue
            found = [base / n for n in names if (base / n).is_file()]
            found += sorted(base.glob("*.md")) + sorted(base.glob("*.tex"))
            if found:
                return str(found[0].relative_to(self.folder))
        return None

    def row(self, title: str, statement: str | None, tests: list[dict[str, str]], **columns: Any) -> dict[str, Any]:
        if not tests:
            raise self.error("", "no test cases")
        prompt = self.text(self.path(statement)) if statement else (
            f"{title}\n\n(placeholder: the {self.kind} package {self.folder.name!r} has no statement text; "
            "map a prompt of your own)")
        return {"prompt": prompt, "statement": statement, "problem": self.folder.name, "title": title,
                "package_format": self.kind, "tests": tests,
                **{k: v for k, v in columns.items() if v is not None}}


def _number(package: _Package, file: str, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise package.error(file, f"{key}: {value!r} is not a number")
    try:
        return float(value)
    except ValueError:
        raise package.error(file, f"{key}: {value!r} is not a number") from None


# Kattis / ICPC problem packages


def kattis(folder: Path) -> dict[str, Any]:
    """A Kattis/ICPC problem package (the legacy format and 2023-07): ``problem.yaml``, ``data/sample`` and
    ``data/secret`` (``*.in`` / ``*.ans``, nested groups, ``testdata.yaml``), the output validator or interactor,
    the limits (``limits.time_limit``, DOMjudge's ``.timelimit``; ``limits.memory``), ``scoring`` groups."""
    package = _Package("kattis", folder)
    spec = package.yaml("problem.yaml", required=True)
    kinds = _kattis_types(package, spec)
    validation = str(spec.get("validation", "")).split()
    if "submit-answer" in kinds:
        raise package.refuse("output-only submissions (type: submit-answer)")
    interactive = "interactive" in kinds or "interactive" in validation
    multi_pass = "multi-pass" in kinds or "multi-pass" in validation
    if multi_pass and interactive:
        raise package.refuse("interactive multi-pass validation")
    scoring = "scoring" in kinds
    root_data = package.yaml("data/testdata.yaml")
    flags = _words(spec.get("validator_flags") or root_data.get("output_validator_flags")
                   or root_data.get("output_validator_args"))
    _no_group_flags(package)
    validator = _validator(package)
    # legacy: `validation: custom` says so; 2023-07 has no `validation`, the validator's folder says so
    legacy = str(spec.get("problem_format_version", "legacy")).startswith("legacy")
    custom = interactive or multi_pass or "custom" in validation or (not legacy and validator is not None)
    columns: dict[str, Any] = {}
    if custom:
        if validator is None:
            raise package.error("output_validators/", "the problem asks for a custom validator and has none")
        if flags:
            raise package.refuse(f"validator flags passed to a custom validator ({' '.join(flags)})")
        columns["interactor" if interactive else "checker"] = validator
        columns["checker_protocol"] = "kattis"
    else:
        columns.update(_default_validator(package, flags))
    if scoring:
        tests, groups = _kattis_groups(package, root_data)
        columns["subtasks"] = [{k: v for k, v in g.items() if k != "worth"} for g in groups]
        if "score" in validation:  # the validator's score.txt is in the group's units: one worth for all tests
            worths = sorted({g["worth"] for g in groups})
            if len(worths) > 1:
                raise package.refuse(f"validator scores (validation: custom score) in groups of different worth "
                                     f"(accept_score {', '.join(f'{w:g}' for w in worths)}; the row has one "
                                     "score_max)")
            columns["score_max"] = worths[0]
    elif "score" in validation:
        raise package.refuse("scores from a custom validator in a problem that is not type: scoring")
    else:
        tests = [*_cases(package, "data/sample", interactive), *_cases(package, "data/secret", interactive)]
    limits = spec.get("limits") or {}
    if not isinstance(limits, dict):
        raise package.error("problem.yaml", "limits: expected a mapping")
    if package.path(".timelimit").is_file():
        columns["time_limit"] = _number(package, ".timelimit", "time limit", package.text(package.path(".timelimit"))
                                        .strip())
    elif "time_limit" in limits:
        columns["time_limit"] = _number(package, "problem.yaml", "limits.time_limit", limits["time_limit"])
    if "output" in limits:
        raise package.refuse(f"a per-problem output limit (limits.output: {limits['output']} MiB; the output_mb "
                             "parameter applies to every row)")
    if "memory" in limits:
        columns["memory_limit"] = _number(package, "problem.yaml", "limits.memory", limits["memory"])
    if multi_pass:  # problemtools' default: 2 passes
        columns["validation_passes"] = int(_number(package, "problem.yaml", "limits.validation_passes",
                                                   limits.get("validation_passes", 2)))
    return package.row(_title(spec, package.folder.name), package.statement(
        ("problem_statement", "statement"), STATEMENT_NAMES), tests, **columns)


def _kattis_types(package: _Package, spec: dict[str, Any]) -> set[str]:
    value = spec.get("type", "pass-fail")
    kinds = value.split() if isinstance(value, str) else value
    if not isinstance(kinds, list) or not all(isinstance(k, str) for k in kinds):
        raise package.error("problem.yaml", f"type: {value!r} is neither a word nor a list of words")
    known = {"pass-fail", "scoring", "interactive", "multi-pass", "submit-answer"}
    if unknown := sorted(set(kinds) - known):
        raise package.error("problem.yaml", f"type: unknown {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    return set(kinds)


def _words(value: Any) -> list[str]:
    """Flags as the package gives them: one string, or (2023-07) a list."""
    if not value:
        return []
    return [str(v) for v in value] if isinstance(value, list) else str(value).split()


def _title(spec: dict[str, Any], fallback: str) -> str:
    name = spec.get("name")
    if isinstance(name, dict):
        name = name.get("en") or next(iter(name.values()), None)
    return str(name) if name else fallback


def _no_group_flags(package: _Package) -> None:
    """Validator flags set per test group: the row has one comparison for all its tests."""
    for path in sorted(package.path("data").rglob("testdata.yaml")):
        relative = str(path.relative_to(package.folder))
        if relative == "data/testdata.yaml":
            continue
        data = package.yaml(relative)
        if data.get("output_validator_flags") or data.get("output_validator_args"):
            raise package.refuse(f"output validator flags that differ by test group ({relative})")


def _validator(package: _Package) -> dict[str, str] | None:
    """The output validator's (or interactor's) C++ or Python files, by name; None when the package has none."""
    for name in ("output_validators", "output_validator"):
        base = package.path(name)
        if not base.is_dir():
            continue
        entries = sorted(base.iterdir())
        folders = [e for e in entries if e.is_dir()]
        if folders and len(entries) == 1:
            base, entries = folders[0], sorted(folders[0].iterdir())
        elif len(folders) > 1:
            raise package.refuse(f"several output validators ({', '.join(f.name for f in folders)})")
        files: dict[str, str] = {}
        for entry in entries:
            if entry.name.startswith("."):  # .gitignore and the like: no part of the program
                continue
            relative = str(entry.relative_to(package.folder))
            if entry.is_dir():
                raise package.error(relative, "a folder inside the validator (its files must sit side by side)")
            if not entry.name.lower().endswith((*CPP_SUFFIXES, ".py")):
                raise package.refuse(f"an output validator that is neither C++ nor Python ({relative})")
            files[entry.name] = package.text(entry)
        if not any(n.lower().endswith((*CPP_SUFFIXES[:4], ".py")) for n in files):
            raise package.error(str(base.relative_to(package.folder)), "no C++ or Python source in the validator")
        return files
    return None


def _default_validator(package: _Package, flags: list[str]) -> dict[str, Any]:
    """The row's built-in comparison for the default validator's flags: case ignored unless ``case_sensitive``
    (problemtools' default validator), spaces unless ``space_change_sensitive`` (then byte-exact lines, and
    case-sensitive: stricter than the judge)."""
    tolerances: dict[str, float] = {}
    space = False
    cased = "case_sensitive" in flags
    i = 0
    while i < len(flags):
        flag = flags[i]
        if flag in ("float_tolerance", "float_relative_tolerance", "float_absolute_tolerance"):
            if i + 1 >= len(flags):
                raise package.error("problem.yaml", f"validator flag {flag} has no value")
            tolerances[flag] = _number(package, "problem.yaml", flag, flags[i + 1])
            i += 2
            continue
        if flag == "space_change_sensitive":
            space = True
        elif flag != "case_sensitive":
            raise package.refuse(f"the default validator's flag {flag!r}")
        i += 1
    if not tolerances:
        return {"compare": "exact"} if space else {"compare": "token", "case_sensitive": cased}
    if space:
        raise package.refuse("a float tolerance together with space_change_sensitive")
    both = tolerances.get("float_tolerance")
    relative = tolerances.get("float_relative_tolerance", both)
    absolute = tolerances.get("float_absolute_tolerance", both)
    if relative is None or absolute is None:  # the row's tolerance is both; one alone would accept more
        raise package.refuse("a float tolerance that is only relative or only absolute")
    return {"compare": "float", "float_tolerance": min(relative, absolute), "case_sensitive": cased}


def _cases(package: _Package, relative: str, interactive: bool = False) -> Iterator[dict[str, str]]:
    """The test cases under a data folder, in the judge's order: by name, a group's cases and subgroups sorted
    together; an interactive sample's ``.interaction`` transcript is no test."""
    base = package.path(relative)
    if not base.is_dir():
        return
    for entry in sorted(base.iterdir(), key=lambda p: p.name):
        name = str(entry.relative_to(package.folder))
        if entry.is_dir():
            yield from _cases(package, name, interactive)
        elif entry.suffix == ".in":
            answer = entry.with_suffix(".ans")
            if not answer.is_file():
                raise package.error(name, f"no answer file {answer.name} beside it")
            yield {"input": package.text(entry), "output": package.text(answer)}
        elif entry.suffix == ".ans" and not entry.with_suffix(".in").is_file():
            raise package.error(name, f"an answer without its input {entry.with_suffix('.in').name}")


def _kattis_groups(package: _Package, root_data: dict[str, Any]) -> tuple[list[dict[str, str]],
                                                                          list[dict[str, Any]]]:
    """A scoring problem's tests and groups: each folder under ``data/secret`` a group of its tests, each test
    worth the group's ``accept_score`` (its ``worth`` here); ``grader_flags: min`` takes the least (as IOI
    subtasks), the default ``sum`` adds them, which the row says as ``aggregate: sum`` over ``points`` = worth x
    tests, and only where the group runs every test (``on_reject: continue``, here or inherited from
    ``data/secret`` or ``data``; the default ``break`` stops at a rejection, and the sum would then depend on
    the order).  The samples score nothing, as the format's default ``accept_score: 0`` for them says, and are
    left out."""
    secret = package.path("data/secret")
    if not secret.is_dir():
        raise package.error("data/secret", "missing")
    tests: list[dict[str, str]] = []
    groups: list[dict[str, Any]] = []
    for entry in sorted(secret.iterdir(), key=lambda p: p.name):
        relative = str(entry.relative_to(package.folder))
        if entry.suffix in (".in", ".ans") and entry.is_file():
            raise package.refuse(f"a scoring problem's test case outside a group ({relative.rpartition('.')[0]}): "
                                 "its score is summed per test, on_reject deciding what follows a failure")
        if not entry.is_dir():
            continue
        data = {**root_data, **package.yaml("data/secret/testdata.yaml"), **package.yaml(f"{relative}/testdata.yaml")}
        grader = str(data.get("grader_flags", "")).split()
        aggregate = "min" if "min" in grader else "sum" if set(grader) <= {"sum", "ignore_sample"} else None
        if aggregate is None:
            raise package.refuse(f"a scoring group's grader_flags {data['grader_flags']!r} ({relative}; the row "
                                 "aggregates by min or sum)")
        if aggregate == "sum" and data.get("on_reject", "break") != "continue":
            raise package.refuse(f"a summed scoring group that stops at its first rejection ({relative}: on_reject "
                                 f"{data.get('on_reject', 'break')!r}, not continue)")
        worth = _number(package, f"{relative}/testdata.yaml", "accept_score", data.get("accept_score", 1))
        members = list(_cases(package, relative))
        if not members:
            raise package.error(relative, "a group with no test cases")
        groups.append({"points": worth * (len(members) if aggregate == "sum" else 1), "aggregate": aggregate,
                       "tests": list(range(len(tests), len(tests) + len(members))), "worth": worth})
        tests += members
    if not groups:
        raise package.error("data/secret", "a scoring problem with no test groups")
    return tests, groups


# CMS tasks, Italian YAML format


def cms(folder: Path) -> dict[str, Any]:
    """A CMS task folder in the Italian YAML format ``cmsImportTask`` reads (``italy_yaml``): ``task.yaml``,
    ``input/inputN.txt`` and ``output/outputN.txt``, subtasks from ``gen/GEN``'s ``#ST:`` lines (or
    ``score_type`` and ``n_input`` in ``task.yaml``), file I/O (``infile`` / ``outfile``), ``sol/grader.*`` with
    ``sol/``'s headers (linked with the submission, which CMS names after the task: ``name.%l``), the comparator
    ``check/checker`` or ``cor/correttore`` (a Python script, or the C++ source beside the binary); an
    ``output_only`` task's row is ``output_only`` (:mod:`reward_plugins.contest.outputs`)."""
    package = _Package("cms", folder)
    conf = package.yaml("task.yaml", required=True)
    title = str(_first(conf, "title", "nome") or _first(conf, "name", "nome_breve") or package.folder.name)
    if conf.get("output_only_testcases") or conf.get("output_optional_testcases"):
        raise package.refuse("output-only test cases (output_only_testcases / output_optional_testcases)")
    columns: dict[str, Any] = {"compare": "lines"}
    manager = None if conf.get("output_only") else _cms_judge(package, ("check/manager", "cor/manager"))
    if conf.get("output_only"):  # italy_yaml: task type OutputOnly, files output_%03d.txt; no program, no limits
        columns |= {"output_only": True, **_cms_checker(package)}
    elif manager is not None:  # italy_yaml: Communication, a stub sol/stub.%l where there is one
        processes = conf.get("num_processes", 1)
        if isinstance(processes, bool) or not isinstance(processes, int) or not 1 <= processes <= PROCESSES:
            raise package.refuse(f"communication with {processes} processes (num_processes; 1 to {PROCESSES} are "
                                 "judged)")
        columns |= {"manager": manager, **_cms_grader(package, conf, "stub"), "num_processes": processes}
        if conf.get("user_io") in ("std_io", "fifo_io"):
            columns["user_io"] = conf["user_io"]
    else:
        columns |= {**_cms_checker(package), **_cms_grader(package, conf, "grader")}
    infile, outfile = conf.get("infile", "input.txt"), conf.get("outfile", "output.txt")
    batch = not conf.get("output_only") and manager is None
    for column, value in ((("input_file", infile), ("output_file", outfile)) if batch else ()):
        if value:
            if not isinstance(value, str) or "/" in value or value.startswith("."):
                raise package.error("task.yaml", f"{column.replace('put_file', 'file')}: {value!r} is not a plain "
                                    "file name")
            columns[column] = value
    count, groups = _cms_scoring(package, conf)
    tests = []
    for i in range(count):
        pair = []
        for name in (f"input/input{i}.txt", f"output/output{i}.txt"):
            if not package.path(name).is_file():
                raise package.error(name, f"missing (the task has {count} test cases; cmsMake or task-maker "
                                          "generate them from gen/)")
            pair.append(package.text(package.path(name)))
        tests.append({"input": pair[0], "output": pair[1]})
    columns["subtasks"] = groups or None
    if (seconds := _first(conf, "time_limit", "timeout")) is not None:
        columns["time_limit"] = _number(package, "task.yaml", "time_limit", seconds)
    if (mib := _first(conf, "memory_limit", "memlimit")) is not None:
        columns["memory_limit"] = _number(package, "task.yaml", "memory_limit", mib)
    statement = package.statement(("statement", "testo"), ("statement.md", "testo.md", "statement.tex",
                                                           "testo.tex"))
    return package.row(title, statement, tests, **columns)


def _cms_checker(package: _Package) -> dict[str, Any]:
    """The comparator as ``italy_yaml`` finds it (``check/checker``, else ``cor/correttore``), judged with the
    ``cms`` protocol."""
    found = _cms_judge(package, ("check/checker", "cor/correttore"))
    return {"checker": found, "checker_protocol": "cms"} if found else {}


def _cms_judge(package: _Package, places: tuple[str, ...]) -> dict[str, str] | None:
    """A comparator's or manager's files, the first of ``places`` there is: a Python script as it is, a binary by
    its C++ source beside it (``checker.cpp``, ``manager.cpp``, which ``cmsMake`` compiles into it)."""
    for where in places:
        path = package.path(where)
        if not path.exists():
            continue
        head = path.read_bytes()[:200]
        if head.startswith(b"#!") and b"python" in head.split(b"\n", 1)[0]:
            return {f"{path.name}.py": package.text(path)}
        for suffix in CPP_SUFFIXES[:4]:
            if (source := path.with_name(path.name + suffix)).is_file():
                return {source.name: package.text(source)}
        raise package.refuse(f"a CMS {path.name} that is neither a Python script nor beside its C++ source ({where})")
    return None


def _cms_grader(package: _Package, conf: dict[str, Any], stem: str) -> dict[str, Any]:
    """``sol/<stem>.<ext>`` for each language (``grader``, or a communication task's ``stub``) and ``sol/``'s
    headers, as ``italy_yaml`` takes them; the submission is named after the task (``submission_format:
    name.%l``), so the grader or stub includes or imports it by that name."""
    sol = package.path("sol")
    graders = sorted(sol.glob(f"{stem}.*")) if sol.is_dir() else []
    if not graders:
        return {}
    headers = [p for p in sorted(sol.iterdir()) if p.suffix in (".h", ".hpp", ".hh", ".hxx")]
    name = conf.get("name", conf.get("nome_breve"))
    if not isinstance(name, str) or not name.isidentifier():
        raise package.error("task.yaml", f"name: {name!r} is not a plain name, which the grader's submission is "
                            "named after")
    return {"grader": {p.name: package.text(p) for p in [*graders, *headers]}, "submission_name": name}


def _first(conf: dict[str, Any], *keys: str) -> Any:
    return next((conf[k] for k in keys if k in conf), None)


def _cms_scoring(package: _Package, conf: dict[str, Any]) -> tuple[int, list[dict[str, Any]]]:
    """The number of test cases and the subtasks, as ``italy_yaml`` finds them: ``score_type`` with its
    parameters and ``n_input`` in ``task.yaml``; else ``gen/GEN`` (a test per non-comment line or ``#COPY:``, a
    subtask per ``#ST: points``); else ``n_input``; else, as task-maker does, the ``input/inputN.txt`` files."""
    if {"score_type", "score_type_parameters", "n_input"} <= conf.keys():
        count = int(_number(package, "task.yaml", "n_input", conf["n_input"]))
        kind, parameters = conf["score_type"], conf["score_type_parameters"]
        if kind == "Sum":
            return count, []
        if kind in ("GroupMin", "GroupMul") and isinstance(parameters, list):
            groups = _cms_groups(package, "task.yaml", [(p[0], p[1]) for p in parameters
                                                         if isinstance(p, list) and len(p) >= 2], count)
            return count, [{**g, "aggregate": "mul"} for g in groups] if kind == "GroupMul" else groups
        raise package.refuse(f"score_type {kind!r} with these parameters")
    gen = package.path("gen/GEN")
    if gen.is_file():
        subtasks: list[tuple[Any, int]] = []
        count = 0
        points = None
        for line in package.text(gen).splitlines():
            test, _, comment = line.strip().partition("#")
            comment = comment.strip()
            if test.strip() or comment.startswith("COPY:"):
                count += 1
            elif comment.startswith("ST:"):
                if points is not None:
                    subtasks.append((points, count))
                elif count:
                    raise package.error("gen/GEN", f"{count} test cases before the first #ST: line")
                points, count = comment[3:].strip(), 0
        if points is None:
            return count, []
        subtasks.append((points, count))
        total = sum(c for _, c in subtasks)
        return total, _cms_groups(package, "gen/GEN", subtasks, total)
    if "n_input" in conf:
        return int(_number(package, "task.yaml", "n_input", conf["n_input"])), []
    return len(list(package.path("input").glob("input*.txt"))), []


def _cms_groups(package: _Package, file: str, subtasks: list[tuple[Any, Any]], count: int) -> list[dict[str, Any]]:
    """GroupMin subtasks, (points, number of tests) in order, as the row's ``subtasks`` (all-or-nothing groups)."""
    groups, start = [], 0
    for points, size in subtasks:
        size = int(_number(package, file, "a subtask's test count", size))
        groups.append({"points": _number(package, file, "a subtask's points", points),
                       "tests": list(range(start, start + size))})
        start += size
    if start != count or any(not g["tests"] for g in groups):
        raise package.error(file, f"the subtasks cover {start} test cases of {count}, or one is empty")
    return groups

