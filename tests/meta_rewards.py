"""Rewards that check what reached them: each row's metadata must arrive exactly as written.

Loaded by training runs through the run config's ``plugins`` (see
``metadata_run.py``); the rows' ``expect`` column holds the JSON of what
``meta`` must be.
"""

import json
import os

from grpo_host import hookimpl, reward


@reward(name="meta_intact", requires={"meta": dict, "expect": str})
def meta_intact(completion, *, meta, expect, mixed=None, **_):
    with open(os.environ["SEEN_FILE"], "a") as f:
        f.write(json.dumps({"meta": meta, "mixed": mixed}) + "\n")
    if meta != json.loads(expect):
        raise ValueError(f"metadata changed on the way: {meta!r} != {expect}")
    return float(len(completion) % 2)


@reward(name="never")
def never(completion, **_):
    return None


@hookimpl
def register_rewards(register):
    register(meta_intact)
    register(never)
