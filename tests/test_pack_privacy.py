"""No built-in pack builds on another pack's insides: what packs share is a shared package with public names.

A pack is a package under ``reward_plugins/`` (``code``, ``contest``,
``r1``, ...).  Read statically with :mod:`ast` (every import at any depth,
so a lazy import in a branch no test reaches still counts), every module
under ``reward_plugins/``:

* uses no name starting with ``_`` of a module outside its own pack,
  imported (``from m import _x``) or reached through an imported module
  (``m._x``), so renaming a private never breaks another pack;
* imports no module of another pack, except the shared packages
  :data:`SHARED` (``reward_plugins.sandbox``, the sandbox machinery of
  ``code`` and ``contest``; ``reward_plugins.schemas``, the JSON Schema
  compiler of ``json_schema`` and ``tool_calls``).

A sandbox server runs as a script and imports its neighbours by bare name
(``from primitives import ...``, ``import plain``) from a folder it puts on
``sys.path``; such a name counts as the module under ``reward_plugins/``
whose file it names.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

import reward_plugins

ROOT = Path(reward_plugins.__file__).parent
SHARED = {"reward_plugins.sandbox", "reward_plugins.schemas"}
"""The packages packs share, with public names only; no pack of their own."""


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def pack(name: str) -> str:
    """``reward_plugins.code.runner`` -> ``reward_plugins.code``."""
    return ".".join(name.split(".")[:2])


def bare(name: str) -> str:
    """A server's bare import of a module under ``reward_plugins/`` (not importable as itself) as that module."""
    head = name.split(".")[0]
    found = [m for m in MODULES if m.rsplit(".", 1)[-1] == head]
    if len(found) == 1 and importlib.util.find_spec(head) is None:
        return found[0] + name[len(head):]
    return name


def uses(module: str) -> list[tuple[int, str, str | None]]:
    """What ``module`` uses of other modules: (line, module, name or None for the module itself)."""
    tree = ast.parse(MODULES[module].read_text(), str(MODULES[module]))
    package = module if MODULES[module].name == "__init__.py" else module.rsplit(".", 1)[0]
    found: list[tuple[int, str, str | None]] = []
    aliases: dict[str, str] = {}  # a local name -> the module it is bound to
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.append((node.lineno, bare(alias.name), None))
                if alias.asname:  # ``import a.b as c`` binds c to a.b; ``import a.b`` binds a to a
                    aliases[alias.asname] = bare(alias.name)
                else:
                    aliases[alias.name.split(".")[0]] = bare(alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = bare(node.module or "")
            found.append((node.lineno, source, None))
            for alias in node.names:
                if f"{source}.{alias.name}" in MODULES:  # ``from . import sandbox``: a module
                    found.append((node.lineno, f"{source}.{alias.name}", None))
                    aliases[alias.asname or alias.name] = f"{source}.{alias.name}"
                else:
                    found.append((node.lineno, source, alias.name))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            found.append((node.lineno, aliases[node.value.id], node.attr))
    return found


def private(name: str | None) -> bool:
    return name is not None and name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def outside(module: str, other: str) -> bool:
    """Whether ``other`` is a module of ``reward_plugins`` outside ``module``'s own pack."""
    return other in MODULES and pack(other) != pack(module) and other != "reward_plugins"


def test_the_scan_sees_private_names_and_bare_imports(tmp_path, monkeypatch):
    """The checker itself: a private name imported, one reached through a module alias, a server's bare import."""
    fake = tmp_path / "reward_plugins" / "contest" / "fake.py"
    fake.parent.mkdir(parents=True)
    fake.write_text("def f():\n    from reward_plugins.code import sandbox as s\n    s._tail(None)\n"
                    "    from reward_plugins.code.sandbox import _Namespace\n    import runner\n    runner._libc\n")
    monkeypatch.setitem(MODULES, "reward_plugins.contest.fake", fake)
    found = uses("reward_plugins.contest.fake")
    assert (3, "reward_plugins.code.sandbox", "_tail") in found
    assert (4, "reward_plugins.code.sandbox", "_Namespace") in found
    assert (6, "reward_plugins.code.runner", "_libc") in found


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_pack_uses_another_packs_private_names(module):
    reached = [f"{line}: {other}.{name}" for line, other, name in uses(module)
               if private(name) and outside(module, other)]
    assert not reached, f"{module} uses private names of another pack: {reached}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_packs_share_only_through_reward_plugins_sandbox(module):
    crossing = sorted({other for _, other, name in uses(module) if name is None and outside(module, other)
                       and pack(other) not in SHARED})
    assert not crossing, f"{module} imports another pack's modules {crossing}: share through {sorted(SHARED)}"
