"""A third-party pack with an ``async def`` reward, as a pack calling a remote service would write one."""

import asyncio

from grpo_host import Scored, hookimpl, reward


@reward(concurrency=64, description="The completion's length in characters, after awaiting 0.5 s (a remote call).")
async def awaited_length(completion, **_):
    await asyncio.sleep(0.5)
    return Scored(float(len(completion)), counts={"awaited": 1})


@hookimpl
def register_rewards(register):
    register(awaited_length)
