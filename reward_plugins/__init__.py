"""The built-in reward packs of grpo-host.

Each module is a plugin registered through grpo-host's own
``[project.entry-points.grpo_host]``, exactly like a third-party pack, so the
built-ins can be listed, blocked (``GRPO_HOST_DISABLE_PLUGINS``) and versioned
the same way.  Heavy imports (sympy, transformers) stay inside functions:
listing plugins must stay fast.
"""
