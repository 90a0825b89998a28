"""The ``reasoning_tasks`` pack: reasoning-gym's procedural tasks, each scored by the task's own ``score_answer``.

The reward and its registration hook live in :mod:`.rewards` (the entry point names it).
"""
