"""The mechanism a rename of a public name will use once there are releases: the old name warns and works.

Nothing in grpo-host uses it before its first release (0.1.0 kept no old
names); these tests keep it working for the first rename of a public name,
which ``CHANGELOG.md`` then lists.
"""

from __future__ import annotations

import pytest

from grpo_host.deprecation import deprecated, renamed


class Thing:
    pack = "grpo-host"
    plugin = renamed("pack")


def test_deprecated_warns_naming_the_replacement():
    with pytest.deprecated_call(match=r"old\(\) is deprecated and goes in the next release; use new\(\)"):
        deprecated("old()", "new()", stacklevel=2)


def test_a_renamed_attribute_reads_the_new_one_and_warns():
    with pytest.deprecated_call(match=r"Thing\.plugin is deprecated .* use Thing\.pack"):
        assert Thing().plugin == "grpo-host"
    assert isinstance(Thing.__dict__["plugin"], renamed)
