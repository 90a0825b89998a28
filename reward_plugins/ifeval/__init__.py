"""The ``ifeval`` pack: the share of a row's verifiable instructions the completion follows, as IFEval and IFBench
define them (rewards ``ifeval`` and ``ifbench``).

The rewards and their registration hook live in :mod:`.rewards` (the entry point names it); ``nltk_data/`` holds
the NLTK data IFBench's checkers read, so nothing is downloaded.
"""
