"""The layers point one way: every part of grpo_host imports only the parts its row of :data:`ALLOWED` names.

A part is a package (``scoring``, ``kinds``, ``discovery``, ...) or a
top-level module (``data``, ``errors``, ...).  Checked twice: statically
(every ``import`` in ``grpo_host/``, at any depth of a function, read with
:mod:`ast`), so a lazy import in a branch no test reaches still fails, and
so does a cycle between two parts; and, for the scoring core, at run time
(a subprocess that builds and scores an ensemble, from members and from a
spec against a registry it passes, then lists the grpo-host modules it
loaded), so an import made any other way fails too.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import grpo_host.scoring

SCORING = Path(grpo_host.scoring.__file__).parent
FOUNDATION = ("grpo_host.errors", "grpo_host.deprecation")
BELOW = ("grpo_host", *FOUNDATION)
"""What the scoring core may import outside itself: the root package (every import of a submodule imports it)
and the foundation modules."""


def imported_modules(path: Path, package: str) -> list[tuple[int, str]]:
    """Every module ``path`` imports (line, absolute dotted name), relative imports resolved against ``package``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            # ``from . import x`` may import the module ``x``: count each name as a module too
            found += [(node.lineno, name)] + [(node.lineno, f"{name}.{a.name}") for a in node.names]
    return found


def test_imported_modules_resolves_relative_imports(tmp_path):
    """The checker itself: a relative import one level up is seen as the module it names."""
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from ..discovery.plugins import default_plugins\n")
    assert (2, "grpo_host.discovery.plugins") in imported_modules(module, "grpo_host.scoring")


ALLOWED: dict[str, set[str]] = {
    "errors": set(), "deprecation": set(), "distributed": set(),
    "scoring": {"errors", "deprecation"},
    "kinds": {"errors", "scoring"},
    "data": {"errors", "scoring"},
    "discovery": {"errors", "scoring", "kinds"},
    "audit": {"errors", "scoring", "kinds", "data", "discovery"},
    "batches": {"errors", "scoring", "data"},
    "runs": {"errors", "distributed", "scoring", "discovery", "data", "batches"},
    "scaffold": {"errors"},
    "testing": {"errors", "scoring", "kinds", "data", "discovery", "audit"},
    "training": {"errors", "distributed", "scoring", "kinds", "data", "discovery", "audit", "runs"},
    "serving": {"errors", "scoring", "data", "discovery", "audit", "batches"},
    "integrations": {"scoring", "data", "batches", "serving"},
    "cli": {"errors", "distributed", "scoring", "kinds", "data", "discovery", "audit", "runs", "scaffold",
            "training", "serving"},
    "__main__": {"cli"},
    "__init__": {"errors", "scoring", "kinds", "data", "discovery", "training"},
}
"""Each part of grpo_host (a package or a top-level module) -> the parts it may import.  ``__init__`` is the
public API, which re-exports what packs and scripts use."""


def part(module: str) -> str:
    """``grpo_host.scoring.ensemble`` -> ``scoring``; ``grpo_host.data`` -> ``data``; ``grpo_host`` -> ``__init__``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def imports_by_part() -> list[tuple[str, str, str]]:
    """(importing part, imported part, where) for every import of another grpo_host part."""
    root = SCORING.parent
    found = []
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        package = ".".join(parts if path.name == "__init__.py" else parts[:-1])
        here = part(".".join(parts)) if len(parts) > 1 else "__init__"
        for line, name in imported_modules(path, package):
            if name.split(".")[0] != "grpo_host" or name == "grpo_host":
                continue
            target = part(name)
            if target != here and ((root / target).is_dir() or (root / f"{target}.py").is_file()):
                found.append((here, target, f"{path.relative_to(root.parent)}:{line}: {name}"))
    return found


def test_every_part_of_grpo_host_has_a_row_in_the_table():
    root = SCORING.parent
    parts = {p.stem if p.suffix == ".py" else p.name for p in root.iterdir() if p.name != "__pycache__"}
    assert parts == set(ALLOWED)


def test_every_import_crosses_only_to_a_part_its_row_allows():
    crossing = [where for here, target, where in imports_by_part() if target not in ALLOWED[here]]
    assert not crossing, "imports the layer table does not allow:\n" + "\n".join(crossing)


def test_the_table_has_no_cycle():
    """A part may not reach itself through the parts it may import: the table is a ladder, not a web."""
    def reach(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for nxt in ALLOWED[todo.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    assert not [name for name in ALLOWED if name in reach(name)]


def test_the_checker_sees_a_forbidden_import(tmp_path, monkeypatch):
    """The checker itself: a scoring module importing the plugin machinery is reported with its line."""
    fake = tmp_path / "grpo_host"
    (fake / "scoring").mkdir(parents=True)
    (fake / "discovery").mkdir()
    (fake / "scoring" / "bad.py").write_text("def f():\n    from ..discovery import plugins\n")
    monkeypatch.setattr(sys.modules[__name__], "SCORING", fake / "scoring")
    assert [(h, t) for h, t, _ in imports_by_part()] == [("scoring", "discovery"), ("scoring", "discovery")]


RUN = """
import sys
from grpo_host.scoring.contract import reward
from grpo_host.scoring.ensemble import Ensemble, Member
from grpo_host.scoring.spec import parse_spec

@reward(name="echo_len")
def echo_len(completion, **_):
    return float(len(completion))

class Registry:
    def reward(self, name):
        return {"echo_len": echo_len}[name]

class Found:
    registry = Registry()

with Ensemble([Member(echo_len, weight=2.0)]) as ensemble:
    assert ensemble.score(["ab"]).total == [4.0]
with Ensemble.from_spec("echo_len:0.5", plugins=Found()) as ensemble:
    assert ensemble.score(["abcd"]).total == [2.0]
try:
    Ensemble.from_spec("echo_len")
except TypeError as exc:
    assert "needs plugins=" in str(exc), exc
else:
    raise AssertionError("from_spec without plugins looked names up somewhere")
print(sorted(m for m in sys.modules if m.startswith("grpo_host") and not m.startswith("grpo_host.scoring")))
"""


def test_scoring_at_run_time_loads_no_module_above_it():
    proc = subprocess.run([sys.executable, "-c", RUN], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "['grpo_host', 'grpo_host.errors']", proc.stdout


@pytest.mark.parametrize("module", FOUNDATION)
def test_a_foundation_module_imports_nothing_of_grpo_host(module):
    path = SCORING.parent / f"{module.rsplit('.', 1)[1]}.py"
    assert not [name for _, name in imported_modules(path, "grpo_host") if name.split(".")[0] == "grpo_host"]


TOP_LEVEL = {"__init__.py", "__main__.py", "audit", "batches.py", "cli.py", "data.py", "deprecation.py", "discovery",
             "distributed.py", "errors.py", "integrations", "kinds", "runs", "scaffold.py", "scoring", "serving",
             "testing.py", "training"}
"""The names at the top of ``grpo_host/``: one per idea, no module that only points at another."""


def test_only_the_intended_names_stand_at_the_top_of_grpo_host():
    root = SCORING.parent
    found = {p.name for p in root.iterdir() if p.name != "__pycache__" and not p.name.endswith(".pyc")}
    assert found == TOP_LEVEL, f"unexpected: {sorted(found - TOP_LEVEL)}, missing: {sorted(TOP_LEVEL - found)}"
    assert len(TOP_LEVEL) < 20


def test_no_module_replaces_itself_in_sys_modules():
    """A redirect module (``sys.modules[__name__] = other``) gives one idea two import paths."""
    root = SCORING.parent
    found = [str(p.relative_to(root.parent)) for p in root.rglob("*.py") if "sys.modules[__name__]" in p.read_text()]
    assert not found, found
