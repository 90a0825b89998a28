"""The ``ifeval`` pack: the share of a row's verifiable instructions the completion follows, as IFEval defines them.

The reward and its registration hook live in :mod:`.rewards` (the entry point names it).
"""
