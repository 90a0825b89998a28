"""The ``monitors`` pack: the built-in run monitors (no rewards).

The monitors and their registration hook live in :mod:`.monitors` (the entry point names it).
"""
