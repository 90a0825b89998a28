"""The ``python_tool`` pack: the ``python`` environment, a Python interpreter tool run in the code sandbox.

The environment and its registration hook live in :mod:`.environments` (the entry point names it).
"""
