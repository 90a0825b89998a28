"""The ``language`` pack: how much of a completion is written in the language it should be in.

The reward and its registration hook live in :mod:`.rewards` (the entry point names it).
"""
