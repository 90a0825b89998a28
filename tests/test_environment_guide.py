"""docs/writing-an-environment-pack.md says what runs: its code blocks are executed, its fields kept complete.

The Python blocks run in order in one namespace, as a reader would paste
them (later blocks use the environment and the reward the first ones
declare), so a sample that drifts from the API fails here.  The YAML blocks
are validated as run-configuration keys.  Every field of ``ToolLimits`` and
``Trajectory`` must appear in the guide's text.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
import yaml

from grpo_host.kinds.environment import ToolLimits
from grpo_host.scoring.trajectory import Trajectory
from grpo_host.training.config import RunConfig

GUIDE = Path(__file__).parent.parent / "docs" / "writing-an-environment-pack.md"


def blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```$", GUIDE.read_text(), flags=re.S | re.M)


@pytest.mark.slow  # transformers' get_json_schema and the r1 pack are imported: ~2-6 s on 2 shared cores
def test_the_python_blocks_run_in_order():
    code = blocks("python")
    assert len(code) >= 6
    namespace: dict = {"__name__": "guide"}
    for number, block in enumerate(code, 1):
        try:
            exec(compile(block, f"{GUIDE.name} python block {number}", "exec"), namespace)
        except Exception as exc:
            pytest.fail(f"python block {number} of {GUIDE.name} fails: {type(exc).__name__}: {exc}\n{block}")
    assert namespace["Glossary"].name == "glossary"


@pytest.mark.parametrize("block", blocks("yaml"), ids=lambda b: b.splitlines()[0])
def test_the_yaml_blocks_are_valid_run_configuration_keys(block):
    RunConfig.model_validate({"model": "builtin:tiny-tools", "data": "rows.jsonl", "rewards": "accuracy",
                              **yaml.safe_load(block)})


def test_every_limit_and_trajectory_field_is_described():
    text = GUIDE.read_text()
    fields = [f.name for f in dataclasses.fields(ToolLimits)] + [f.name for f in dataclasses.fields(Trajectory)]
    fields += ["text", "counts"]
    assert [f for f in fields if f"`{f}`" not in text] == []
