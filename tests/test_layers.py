"""The layers point one way: the scoring core imports nothing of grpo-host above it.

Below it there are only the two foundation modules, which import nothing:
:mod:`grpo_host.errors` (``UserError``, which every layer may raise) and
:mod:`grpo_host.deprecation` (how a public name is renamed once there are releases).

Checked twice: statically (every ``import`` in ``grpo_host/scoring/``, at
any depth of a function, read with :mod:`ast`), so a lazy import in a branch
no test reaches still fails; and at run time (a subprocess that builds and
scores an ensemble, from members and from a spec against a registry it
passes, then lists the grpo-host modules it loaded), so an import made any
other way fails too.
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


def test_the_scoring_core_imports_nothing_of_grpo_host_above_it():
    upward = [f"{path.relative_to(SCORING.parent.parent)}:{line}: {name}"
              for path in sorted(SCORING.glob("*.py"))
              for line, name in imported_modules(path, "grpo_host.scoring")
              if name.split(".")[0] == "grpo_host" and not name.startswith("grpo_host.scoring")
              and name not in BELOW and name.rsplit(".", 1)[0] not in FOUNDATION]
    assert not upward, "the scoring core imports a layer above it:\n" + "\n".join(upward)


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


TOP_LEVEL = {"__init__.py", "__main__.py", "audit", "cli.py", "data.py", "deprecation.py", "discovery",
             "environments.py", "errors.py", "integrations", "monitoring.py", "offline.py", "runs", "scaffold.py",
             "scoring", "serving", "testing.py", "training"}
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
