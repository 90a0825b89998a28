"""A pack whose import fails, as a pack with a missing dependency does."""

import grpo_test_dependency_that_does_not_exist  # noqa: F401
