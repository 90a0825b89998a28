"""The ``remote`` pack: a member whose work is done by a ``grpo-host serve`` instance elsewhere.

The reward and its registration hook live in :mod:`.rewards` (the entry point names it).
"""
