"""The `json_schema` reward against the official JSON-Schema-Test-Suite (vendored under tests/data).

Every required case of drafts 2020-12 and 7, and the ECMA-262 regex cases, is
scored through the reward in strict mode: a valid instance must score 1.0, an
invalid one 0.0.  The data is the whole completion (its JSON text).

Groups that name documents under ``http://localhost:1234/`` (the suite's
``remotes/``) cannot go through the registered reward, which refuses every
reference outside the row's schema; they are compiled with
:func:`compile_schema` and a registry built in memory from the vendored files,
then scored by the reward's own :func:`score_completion`, so the network is
never used.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import jsonschema_rs
import pytest

from grpo_host.testing import load_pack
from reward_plugins.json_schema.rewards import JsonSchemaParams, score_completion
from reward_plugins.schemas.compiler import SchemaProblem, compile_schema

SUITE = Path(__file__).parent / "data" / "JSON-Schema-Test-Suite"
REMOTE = "http://localhost:1234/"
DRAFTS = {
    "draft2020-12": (None, jsonschema_rs.Draft202012),
    "draft7": ("http://json-schema.org/draft-07/schema#", jsonschema_rs.Draft7),
}
REQUIRED_AGREEMENT = 0.999
STRICT = JsonSchemaParams(strict=True)


@cache
def remotes_registry(draft: int):
    """The suite's remotes as ``http://localhost:1234/...`` documents; a draft-7 run leaves out the 2019-09 and
    2020-12 folders, whose documents often name no ``$schema`` and would be read as draft 7."""
    skip = "draft20" if draft == jsonschema_rs.Draft7 else "-"
    root = SUITE / "remotes"
    names = sorted(path.relative_to(root).as_posix() for path in root.rglob("*.json"))
    documents = [(REMOTE + name, json.loads((root / name).read_text())) for name in names if not name.startswith(skip)]
    return jsonschema_rs.Registry(documents, draft=draft)


def cases(folder: Path):
    for path in sorted(folder.glob("*.json")):
        for group in json.loads(path.read_text()):
            for case in group["tests"]:
                yield f"{path.stem}: {group['description']}: {case['description']}", group["schema"], case


def run(folder: Path, dialect: str | None, draft: int) -> tuple[int, list[str]]:
    """Score every case of ``folder``; ``(cases, misses)``."""
    reward = load_pack("json_schema").registry.reward("json_schema").bind({"strict": True})
    total, misses = 0, []
    for name, schema, case in cases(folder):
        if dialect and isinstance(schema, dict) and "$schema" not in schema:
            schema = {"$schema": dialect, **schema}  # a draft-07 dataset names its draft
        completion = json.dumps(case["data"])
        if REMOTE in json.dumps(schema):
            try:
                got = score_completion(compile_schema(schema, registry=remotes_registry(draft)), completion, STRICT)
            except SchemaProblem:
                got = None
        else:
            got = reward.score_one(completion, schema=schema)
        total += 1
        if got != (1.0 if case["valid"] else 0.0):
            misses.append(f"{name}: scored {got}, valid={case['valid']}")
    return total, misses


@pytest.mark.parametrize("name", sorted(DRAFTS))
def test_required_suite_agrees(name):
    dialect, draft = DRAFTS[name]
    total, misses = run(SUITE / "tests" / name, dialect, draft)
    assert total > 900
    agreement = 1 - len(misses) / total
    print(f"{name}: {total - len(misses)} of {total} cases agree ({agreement:.3%})", *misses, sep="\n")
    assert agreement >= REQUIRED_AGREEMENT, f"{agreement:.4%} of {total}:\n" + "\n".join(misses)


def test_ecma_262_regexes_agree():
    """``pattern`` is ECMA-262: ``\\d`` is ASCII only, ``\\p{Letter}`` works, ``$`` ignores a final newline..."""
    total, misses = run(SUITE / "tests" / "draft2020-12" / "optional", None, jsonschema_rs.Draft202012)
    assert total > 70
    assert misses == []
