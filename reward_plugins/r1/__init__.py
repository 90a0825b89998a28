"""The ``r1`` pack: the answer and format rewards of DeepSeek-R1-style GRPO recipes.

The rewards and their registration hook live in :mod:`.rewards` (the entry point names it).
"""
