"""A program's output against the expected output, line by line, as judges compare it (the ``code`` pack's stdin
cases, the ``contest`` pack's ``lines`` checker)."""

from __future__ import annotations

__all__ = ["same_output"]


def same_output(actual: str, expected: str) -> bool:
    """Equal line by line after stripping trailing whitespace from each line, ignoring trailing blank lines."""
    return _lines(actual) == _lines(expected)


def _lines(text: str) -> list[str]:
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines
