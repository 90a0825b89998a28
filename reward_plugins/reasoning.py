"""Where a completion's reasoning ends and its answer begins, for rewards that score one or the other.

R1-style completions put the chain of thought in ``<think>...</think>`` and
the answer after it; chat templates that pre-fill ``<think>`` leave only the
closing tag in the completion, and the host restores reasoning that engines
moved into ``reasoning_content`` in the same form.  An instruction such as
"no commas" or "answer in French" is about the answer, while a
language-consistency reward may look at the reasoning: both split the text
the same way, here.
"""

from __future__ import annotations

from typing import NamedTuple


class Parts(NamedTuple):
    reasoning: str
    answer: str


def split_reasoning(text: str, tag: str = "think") -> Parts:
    """``(reasoning, answer)``: the text before the last ``</tag>`` (without a leading ``<tag>``) and after it.

    Without a closing tag, a text that opens with ``<tag>`` is reasoning that
    never finished (its answer is empty: nothing was answered), and any other
    text is all answer.
    """
    opening, closing = f"<{tag}>", f"</{tag}>"
    head, sep, tail = text.rpartition(closing)
    if sep:
        stripped = head.lstrip()
        return Parts(stripped[len(opening):] if stripped.startswith(opening) else head, tail)
    stripped = text.lstrip()
    if stripped.startswith(opening):
        return Parts(stripped[len(opening):], "")
    return Parts("", text)
