"""A third-party pack with an ``async def`` reward, as a pack calling a remote service would write one."""

import asyncio

from grpo_host import Scored, hookimpl, reward

_awaiting = 0  # items of this process awaiting their remote call right now


@reward(concurrency=64, description="The completion's length in characters, after awaiting 0.5 s (a remote call).")
async def awaited_length(completion, **_):
    """Counts ``beside``: how many other items were already awaiting when this one began (what overlapped)."""
    global _awaiting
    beside = _awaiting
    _awaiting += 1
    try:
        await asyncio.sleep(0.5)
    finally:
        _awaiting -= 1
    return Scored(float(len(completion)), counts={"awaited": 1, "beside": beside})


@hookimpl
def register_rewards(register):
    register(awaited_length)
