"""The ``shaping`` pack: overlong, repetition, cosine and length rewards beside correctness.

The rewards and their registration hook live in :mod:`.rewards` (the entry point names it).
"""
