"""The public API: `import grpo_host` loads nothing, and every public name, submodule and type hint still resolves."""

from __future__ import annotations

import subprocess
import sys

CHECK = """
import sys, typing
import grpo_host
loaded = {'pluggy', 'pydantic', 'importlib.metadata'} & set(sys.modules)
assert not loaded, f'import grpo_host imported {loaded}'
# Before any name is touched (touching one imports, and so hides, what is missing):
assert set(grpo_host.__all__) <= set(dir(grpo_host)), 'dir() hides the API'
for function in (grpo_host.list_rewards, grpo_host.get_reward):
    typing.get_type_hints(function)
for name in grpo_host.__all__:
    getattr(grpo_host, name)
assert not hasattr(grpo_host, 'no_such_name')
assert 'accuracy' in {r.name for r in grpo_host.list_rewards()}
print('ok')
"""


def test_import_is_light_and_every_public_name_resolves():
    proc = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr
