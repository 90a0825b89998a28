"""Finding the final answer: where a completion (or a gold) states it, and whether it offers alternatives.

A completion may state its answer in several places: ``<answer>`` blocks,
``\\boxed{}`` (a run of boxes joined by commas or "and" is one list answer),
GSM8K's ``#### 843`` line, an answer phrase ("the answer is 12.", "Final
Answer: The final answer is 3.25."), and only when none of those is there, a
last line or concluding sentence that states one number (``line``), a final
LaTeX span or (``number``) the last plain number.  Reasoning inside
``<think>...</think>`` is never an answer.  Every one of them is an
:class:`Answer`; the rule (``rewards.HEDGE_RULE``) pays only when every answer
that counts equals the gold, so an answer that offers alternatives (or asks,
or holds conditions), or a box and an ``<answer>`` that disagree, is not paid.
An earlier answer stops counting when the text before the next one withdraws
it (:data:`CORRECTION`) without hedging (:data:`HEDGE`) or asking.

Every finder is one linear pass (braces matched with a stack, spans that
cannot hold their own opening delimiter, phrases read a bounded distance), so
a megabyte of unclosed ``\\boxed{`` costs milliseconds; the whole completion is
searched, so an answer followed by long text is still found.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from grpo_host import COMMON_END_TOKENS, answer_blocks, strip_end_tokens
from reward_plugins.math.read import (
    GOLD_CACHE_SIZE,
    SPAN,
    Number,
    Parsed,
    has_delimiters,
    has_words,
    parse_latex,
    read_answer,
    read_number,
    sign_inside,
)

MAX_FINAL_TAIL = 40
"""Characters that may follow the last math span for it to count as the final answer without an answer phrase."""
MAX_PHRASE = 200
"""Characters after an answer phrase read as its answer (to the end of the sentence)."""
MAX_WITHDRAWN = 2
"""More withdrawn answers than this make the completion a run of guesses: not paid."""
MAX_ANSWERS = 8
"""More different answers than this that count make a run of guesses: not paid, and nothing is read."""
MAX_READ_PHRASES = 8
"""Only the last this many answer phrases and ``####`` lines are read (each read may cost a LaTeX parse)."""

CORRECTION = re.compile(
    r"(?i)\b(?:wait|actually|correct(?:ion|ing|ed)?|mistake|wrong|incorrect|error|oops|instead|on second thought"
    r"|scratch that|re-?check(?:ing)?|redo(?:ing)?|not right|miscalculated|reconsider(?:ing)?|re-?examin(?:e|ing)"
    r"|re-?evaluat(?:e|ing|ion)|revis(?:e|ing|ion)|hold on|double[- ]check(?:ing)?|try again|not correct"
    r"|(?:can't|cannot|doesn't|does not)(?: seem)? (?:be )?right|not (?:done|finished)(?: yet)?)\b")
"""Words that withdraw the answer before them."""
HEDGE = re.compile(r"(?i)\b(?:perhaps|maybe|possibly|probably|might|could|guess|alternatively|either|or|not sure)\b")
"""Words that make the next answer one more guess, not a correction ("Wait, or is it 5?")."""
_ALTERNATIVE = re.compile(r"\\(?:text|mbox|textrm|mathrm|textbf|operatorname)\s*\{[^{}]*?"
                          r"\b(?:or|either|if|otherwise|when|unless)\b[^{}]*\}|\b(?:or|either)\b|\\lor\b|\\vee\b")
"""What joins the alternatives of one answer: "or" (also in \\text{ (or }), and the cases of a conditional answer
(``4 \\text{ if } x > 0, 5 \\text{ otherwise}``)."""
_QUESTION = re.compile(r"[\s$)\]]*\?")
"""An answer followed by a question mark (``Or is it \\boxed{5}?``, ``Answer: 4?``) asks, it does not state."""
THINK_CLOSE = "</think>"
THINK_OPEN = "<think>"


@dataclass(frozen=True)
class Answer:
    """One place the completion states an answer: its text, where it is, and whether it is prose to search."""

    text: str
    start: int
    end: int
    prose: bool = False
    parts: tuple[str, ...] = ()

    def alternatives(self) -> list[str]:
        """The values it offers: the text split at top-level "or" / ``\\text{or}`` / "either" (one part if none);
        in prose, the final math spans that "or" or a hedge joins (``Perhaps $3$. Perhaps $4$.``)."""
        if self.parts:
            return list(self.parts)
        if self.prose:
            final = final_spans(self.text)
            return list(final.parts) if final is not None and final.parts else [self.text]
        return split_alternatives(self.text)


@dataclass(frozen=True)
class Found:
    """The answers that count (in text order) and how many earlier answers were withdrawn."""

    answers: tuple[Answer, ...]
    withdrawn: int = 0

    @property
    def guessing(self) -> bool:
        """More than MAX_WITHDRAWN answers withdrawn, or more than MAX_ANSWERS different ones left: a run of guesses."""
        return self.withdrawn > MAX_WITHDRAWN or len({a.text.strip() for a in self.answers}) > MAX_ANSWERS


def split_alternatives(text: str) -> list[str]:
    """``text`` split at the "or"s outside braces (``x = 1 \\text{ or } x = 6``, ``either 7 or 9``), empty parts
    dropped."""
    depth_at, parts, last = _depths(text), [], 0
    for m in _ALTERNATIVE.finditer(text):
        if depth_at(m.start()) == 0:
            parts.append(text[last : m.start()])
            last = m.end()
    parts.append(text[last:])
    return [p for p in parts if p.strip(" \t\n,;.$\\()[]")] or [text]


def _depths(text: str):
    """A function giving the brace depth at a position, built in one pass (positions asked in increasing order)."""
    braces = [(m.start(), 1 if m[0] == "{" else -1) for m in re.finditer(r"(?<!\\)[{}]", text)]
    state = {"i": 0, "depth": 0}

    def depth_at(pos: int) -> int:
        while state["i"] < len(braces) and braces[state["i"]][0] < pos:
            state["depth"] += braces[state["i"]][1]
            state["i"] += 1
        return state["depth"]

    return depth_at


# -- boxes ----------------------------------------------------------------------------------------------------------

_BOX_TOKEN = re.compile(r"\\(?:boxed|fbox)\s*\{|\{|\}")
_BOX_JOINER = re.compile(r"(?:\s|,|;|\$|\\[()\[\],;! ]|\\q?quad|\band\b|\\text\{\s*+(?:and|,)?\s*+\})*+")


def boxes(text: str) -> list[tuple[int, int, int]]:
    """Every outermost ``\\boxed{}`` / ``\\fbox{}`` whose braces close: (start, content start, end), in text order.

    One pass with a stack of open braces: linear in the text however many
    boxes are left open.
    """
    starts = [i for i in (text.find("\\boxed"), text.find("\\fbox")) if i >= 0]
    if not starts:
        return []  # no box: the braces need no matching (a megabyte of "{" costs a find)
    stack: list[tuple[bool, int, int]] = []
    found: list[tuple[int, int, int]] = []
    for m in _BOX_TOKEN.finditer(text, min(starts)):
        if m[0] != "}":
            stack.append((m[0] != "{", m.start(), m.end()))
        elif stack:
            is_box, start, content = stack.pop()
            if is_box:
                found.append((start, content, m.end()))
    found.sort()
    outer: list[tuple[int, int, int]] = []
    for box in found:  # a box inside a box is part of its content
        if not outer or box[0] >= outer[-1][2]:
            outer.append(box)
    return outer


def box_runs(text: str) -> list[Answer]:
    """The boxes as answers: a run joined only by commas, "and", spaces or ``\\quad`` is one list (``2, 3``)."""
    runs: list[list[tuple[int, int, int]]] = []
    for box in boxes(text):
        if runs and _BOX_JOINER.fullmatch(text, runs[-1][-1][2], box[0]):
            runs[-1].append(box)
        else:
            runs.append([box])
    return [Answer(", ".join(_box_value(text[content : end - 1]) for _, content, end in run), run[0][0], run[-1][2])
            for run in runs]


_BOX_PROSE = re.compile(r"(?<!\d)\.\s+(?=[A-Za-z\\])|(?<=\d)\.\s+(?=[A-Za-z])|,?\s*(?:\\text\s*\{\s*[,.;]?\s*)?"
                        r"(?=(?:since|because|as|which|where|so|this|that|we|it)\b)")


def _box_value(content: str) -> str:
    """A box's answer without the prose the model went on to write inside it (``\\boxed{30. This is because
    ...}``, ``\\boxed{30 \\text{, since ...}}``): the text before the first sentence or clause of words, when it
    reads as a value; a box of a word or two (``\\boxed{circle}``) as ``\\text{circle}``, not a product of letters;
    else the content as it is."""
    if has_words(content) and _WORD_ANSWER.fullmatch(content.strip()):
        return f"\\text{{{content.strip()}}}"
    m = _BOX_PROSE.search(content) if has_words(content) else None
    if m is None or not has_words(content[m.end() :]):
        return content
    value = content[: m.start()].strip()
    return value if value and read_answer(value) is not None else content


def last_boxed(text: str) -> str | None:
    """The content of the last run of boxes (see :func:`box_runs`), or None without a closed box."""
    runs = box_runs(text)
    return runs[-1].text if runs else None


# -- answer blocks, GSM8K lines, answer phrases -----------------------------------------------------------------------

_HASHES = re.compile(r"####[ \t]*([^\n]*)")
_PHRASE = re.compile(
    r"(?im)(?<![A-Za-z])(?:final\s+answer|answer)[*_]*"
    r"(?:\s+(?:is|was|would\s+be|will\s+be|should\s+be)\s*:?|\s*[:=]|\s+[-–—](?=\s))[*_]*\s*"
    r"|^[ \t]*[*_]*(?:a|ans)[*_]*[ \t]*:[*_]*[ \t]*"
    r"|^[ \t]*[*_]*final[ \t]+answer[*_]*[ \t]+(?=[-+−$\\(\d])"
    r"|(?P<heading>^[ \t]*\#{1,6}[ \t]*(?:final[ \t]+)?answer[ \t]*:?[ \t]*$\s*)")
"""'the answer is', 'Final Answer:', '**Final answer**:', 'Answer – ', a line that starts with a short label ('A: 30'
as OpenAI's GSM8K solutions end, 'Ans: 30', 'Final answer 30'), a '# Answer' heading line (PRM800K), indented or not."""
_PHRASE_HINT = re.compile(r"(?i)answer|(?m:^)[ \t]*[*_]*a(?:ns)?[*_]*[ \t]*:")
"""What every :data:`_PHRASE` match holds ("answer", or a line starting with a short label), found several times
faster than the phrase itself: text without it has no answer phrase."""
_PHRASE_END = re.compile(r"[?;](?=\s|$)|(?<![\d)])!(?=\s|$)|(?<!\.\.)\.(?=\s|$)|\n|</|<\|")
"""Where a phrase's sentence ends: <|im_end|> ends it; 0.333... does not, nor a factorial (``7! * 2``, ``5*4!``: a
``!`` after a digit or a bracket is one, as the LaTeX reader reads it)."""
_CLAUSE = re.compile(r",\s|\s\(")


def _reads_as_value(text: str) -> bool:
    """Whether the text after a phrase or ``####`` is a value, not more prose (``12 apples`` is; ``at most 3`` is
    not): readable, and without words unless it is a plain number with a unit."""
    if has_words(text) and read_number(text) is None:
        return False
    return read_answer(text) is not None


_COUNTED = re.compile(r"(?P<number>[-+]?\$?[\d.,]*\d%?)\s+(?P<noun>[a-z]{3,})")
_NOT_NOUNS = frozenset(["more", "less", "fewer", "greater", "larger", "smaller", "bigger", "higher", "lower", "over",
                       "under", "above", "below", "plus", "minus", "than", "times", "and", "or", "percent", "per",
                       "each", "squared", "cubed", "factorial", "hundred", "thousand", "million", "billion",
                       "trillion", "dozen"])
"""Words after a number that change its value or compare it (3 squared, 2 million, 5 more): never a counted noun."""


def _counted(value: str) -> str | None:
    """The number of "12 cookies" (a number and one word naming what is counted), or None: "5 more" is not 5."""
    m = _COUNTED.fullmatch(value)
    if m is None or m["noun"] in _NOT_NOUNS or read_number(m["number"]) is None:
        return None
    return m["number"]


def _offers_alternatives(value: str) -> bool:
    """Whether a phrase's or ``####`` line's value hedges (``12 (or possibly 21)``): then it is an answer, and one
    that is not paid, even when it does not read as a value."""
    return len(split_alternatives(value)) > 1 or HEDGE.search(value) is not None


_WORD_ANSWER = re.compile(r"[A-Za-z]+(?:[ -][A-Za-z]+)?")


def _value_of_prose(value: str, heading: bool) -> str | None:
    """The value that words after an answer phrase state, or None: the first clause when it reads (``12, as
    shown``), a counted number (``12 cookies``); under an answer heading also a word or two (``blue``, ``No``: as
    ``\\text{}``, which a ``\\text{Blue}`` gold equals whatever the case) and a sentence that states one number
    (``The answer is that there are 30 apples.``)."""
    clause = _CLAUSE.split(value, maxsplit=1)[0].strip()
    if clause != value and _reads_as_value(clause):
        return clause
    if heading and _WORD_ANSWER.fullmatch(value) and not HEDGE.search(value):
        return f"\\text{{{value}}}"
    counted = _counted(clause)
    if counted is not None or not heading:
        return counted
    stated = sentence_number(value)
    return stated[0] if stated else None


def tag_answers(text: str) -> list[Answer]:
    """``<answer>`` blocks (to their close, or the end): their content is prose when it has math delimiters."""
    return [Answer(m[1].strip(), m.start(), m.end(), prose=has_delimiters(m[1])) for m in answer_blocks(text)]


def hash_answers(text: str) -> list[Answer]:
    """GSM8K's ``#### 843``: the rest of the line, when it reads as a value (otherwise it is no answer)."""
    found = []
    for m in list(_HASHES.finditer(text))[-MAX_READ_PHRASES:]:
        value = _PHRASE_END.split(m[1], maxsplit=1)[0].strip()
        value = value if not value or _reads_as_value(value) or _offers_alternatives(value) else _counted(value)
        if value:
            found.append(Answer(value, m.start(), m.end()))
    return found


def phrase_answers(text: str) -> list[Answer]:
    """What follows "the answer is" / "final answer:" to the end of its sentence, when it reads as a value.

    ``So the answer is 12.`` gives 12; ``the answer is 12, as shown`` its
    first clause; ``12 cookies`` the number; a phrase followed by words (``the answer is at most 3``) is
    no answer; one that ends in a question mark is an answer that reads as no value.  Boxes after a phrase are
    found as boxes.
    """
    found: list[Answer] = []
    if not _PHRASE_HINT.search(text):
        return found
    for m in list(_PHRASE.finditer(text))[-MAX_READ_PHRASES:]:
        window = text[m.end() : m.end() + MAX_PHRASE]
        end = _PHRASE_END.search(window)
        value: str | None = (window[: end.start()] if end else window).strip().strip("*_").strip()
        if not value or "\\boxed" in value or "\\fbox" in value:
            continue
        if end is not None and window[end.start()] == "?":  # Answer: 4? 5?: a question, never paid
            found.append(Answer(value + "?", m.start(), m.end() + len(value)))
            continue
        if not _reads_as_value(value) and not _offers_alternatives(value):
            value = _value_of_prose(value, heading=m["heading"] is not None)
            if value is None:
                continue
        found.append(Answer(value, m.start(), m.end() + len(value)))
    return found


# -- the final LaTeX span and the last plain number (only when nothing else states an answer) ------------------------

_PLAIN_NUMBER = re.compile(
    r"(?<![\w.{^_\\])[-+−]?(?:\\?\$)?(?>(?:\d{1,3}(?:,\d{3})+|\d{1,3}(?: \d{3})+|\d+)(?:\.\d+)?|\.\d+)(?![.,]?\d|[}^_])"
    r"(?:[eE][-+]?\d+)?(?:/\d+)?(?P<pct>\s*(?:\\?%|percent\b))?(?P<unit>[A-Za-z]+[²³]?)?"
)
_MATH_END = re.compile(r"(?<!\\)\$|\\\)|\\\]")
_SPAN_OR = re.compile(r"(?i)\s*+[,.;]?\s*+(?:(?:or|either|perhaps|maybe|possibly|probably|\\text\{\s*+or\s*+\})"
                      r"\s*+,?\s*+)++")  # possessive: a long gap is scanned once


def last_plain_number(text: str) -> tuple[Number, int, int] | None:
    """The last plain number in prose and where it starts and ends: ``2.5kg`` is 2.5, ``3 hours`` is 3, ``2x`` none.

    Letters right after the digits must be a unit word (``kg``, ``m``, ``cm``);
    anything else (``2x``, ``3a``) makes it an expression, not a number.
    """
    for m in reversed(list(_PLAIN_NUMBER.finditer(text))):
        number = read_number(m[0].replace(",", "").replace("\\$", "").replace("$", "").replace("−", "-"))
        if number is not None:
            return number, m.start(), m.end()
    return None


def final_spans(text: str) -> Answer | None:
    """The last math span when it ends the text (at most MAX_FINAL_TAIL characters after it), with the spans
    that "or" or a hedge joins to it (``either $7$ or $9$.``, its ``parts``): a span the completion goes on from is
    reasoning, not an answer."""
    spans = list(SPAN.finditer(text))
    if not spans or len(text[spans[-1].end() :].strip()) > MAX_FINAL_TAIL:
        return None
    first = len(spans) - 1
    while first and _SPAN_OR.fullmatch(text, spans[first - 1].end(), spans[first].start()):
        first -= 1
    parts = tuple(m[0] for m in spans[first:]) if first < len(spans) - 1 else ()
    return Answer(text[spans[first].start() : spans[-1].end()], spans[first].start(), spans[-1].end(), parts=parts)


_CONCLUSION = re.compile(r"(?i)(?:^|(?<=[.!?\n]))\s*(?:so|thus|therefore|hence|in total|altogether|in conclusion)\b"
                         r"(?:[^.!?\n]|(?<=\d)\.(?=\d))*+(?:[.!?]\s*)?$")
"""A last sentence that concludes; possessive, so a long tail without one is scanned once per start."""
_OPERATOR = "-+*/×÷^_"
_SENTENCE_NUMBER = re.compile(rf"(?<![\w.^_{{}}\\])(?<![{_OPERATOR}]\s)(?<![{_OPERATOR}])[-−]?\$?\d[\d,]*(?:\.\d+)?"
                              rf"(?![\w.]*\d)(?!\w)(?!\s*[{_OPERATOR}=])")
"""A number in prose that is no operand: ``12`` in ``5 + 7 = 12``, never 5 or 7 (nor the 2 of ``2^3``)."""


def final_line(text: str) -> Answer | None:
    """The last line when it is nothing but a plain number (``...\\n7``, ``**7**``, ``7 cm.``), or a last sentence
    that concludes (So, Thus, Therefore, Hence, In total...) with exactly one number in it (``So, the total is 12
    dollars.``): the completion ends on its answer."""
    body = strip_end_tokens(text, COMMON_END_TOKENS).rstrip()
    start = body.rfind("\n") + 1
    value = body[start:].strip().strip("*").strip().removesuffix(".").strip()
    if value and read_number(value) is not None:
        return Answer(value, start, len(body))
    tail = body[-MAX_PHRASE:]
    sentence = _CONCLUSION.search(tail)
    stated = sentence_number(sentence[0]) if sentence else None
    if sentence is None or stated is None:
        return None
    value, offset = stated
    at = len(body) - len(tail) + sentence.start() + offset
    return Answer(value, at, at + len(value))


def sentence_number(sentence: str) -> tuple[str, int] | None:
    """The one number a sentence states (no operand, no math span; ``So, the total is 12 dollars.``, ``The answer is
    that there are 30 apples.``) and where it starts; None for none or several, or a difference (``4 more``).  A
    hedged or asked sentence (``So maybe 7.``) gives the number with a question mark: an answer that reads as no
    value."""
    numbers = list(_SENTENCE_NUMBER.finditer(sentence)) if not SPAN.search(sentence) else []
    if len(numbers) != 1 or read_number(numbers[0][0].replace(",", "")) is None:
        return None
    after = re.match(r"\s+([a-z]+)", sentence[numbers[0].end() :])
    if after and after[1] in _NOT_NOUNS:
        return None  # So we need 4 more: a difference, not the answer
    value = numbers[0][0].replace(",", "")
    if HEDGE.search(sentence) or sentence.rstrip().endswith("?"):
        value += "?"
    return value, numbers[0].start()


def find_answers(completion: str, targets: tuple[str, ...], max_chars: int) -> Found:
    """Every answer the completion states by the ``extract`` targets, less the withdrawn ones (see the module).

    Reasoning is not an answer: after a ``</think>`` only the text that
    follows the last one is searched, and a ``<think>`` that never closes
    (the completion ran out inside its reasoning) holds none.
    """
    close = completion.rfind(THINK_CLOSE)
    if close >= 0:
        completion = completion[close + len(THINK_CLOSE) :]
    elif THINK_OPEN in completion:
        return Found(())
    completion = sign_inside(completion)
    stated: list[Answer] = []
    if "answer_tag" in targets:
        stated += tag_answers(completion)
    if "boxed" in targets:
        stated += box_runs(completion)
    if "gsm8k" in targets:
        stated += hash_answers(completion)
    if "phrase" in targets:
        stated += phrase_answers(completion)
    stated = _outermost(stated)
    if stated:
        return _withdraw(completion, stated)
    text = completion[-max_chars:]
    line = final_line(text) if "line" in targets else None
    if line is not None:
        return Found((line,))
    plain = last_plain_number(text) if "number" in targets else None
    if plain is not None and "latex" in targets:
        spans_end = max((m.end() for m in _MATH_END.finditer(text)), default=0)
        if plain[1] >= spans_end:  # "... so $x = 3$, and the total is 42": the later answer wins
            return Found((Answer(text[plain[1] : plain[2]], plain[1], plain[2]),))
    if "latex" in targets:
        final = final_spans(text) if has_delimiters(text) else None
        if final is not None and len(final.alternatives()) > 1:
            return Found((final,))
        if plain is None or read_prose(text) is not None:
            return Found((Answer(text, 0, len(text), prose=True),))
    if plain is not None:
        return Found((Answer(text[plain[1] : plain[2]], plain[1], plain[2]),))
    return Found(())


def _outermost(stated: list[Answer]) -> list[Answer]:
    """Answers in text order, each inside another dropped, except that boxes replace the block that holds them
    (``<answer>\\boxed{4}</answer>`` is one answer, 4) and an answer block's phrase is the block's."""
    stated.sort(key=lambda a: (a.start, -a.end))
    kept: list[Answer] = []
    for answer in stated:
        if kept and answer.start < kept[-1].end:
            outer = kept[-1]
            if "\\boxed" in outer.text or "\\fbox" in outer.text:  # the block's boxes are its answers
                kept[-1] = answer
            continue
        kept.append(answer)
    return [a for a in kept if not (a.prose and ("\\boxed" in a.text or "\\fbox" in a.text))]


def _withdraw(text: str, stated: list[Answer]) -> Found:
    """Drop each answer that the text before the next different answer withdraws (CORRECTION, no HEDGE there).

    A repeated answer counts once, at its last place in a row of repeats, so
    each stretch of text is searched once.
    """
    rows = [a for k, a in enumerate(stated) if k + 1 == len(stated) or stated[k + 1].text.strip() != a.text.strip()]
    counted, withdrawn = [], 0
    for answer, later in zip(rows, [*rows[1:], None], strict=False):
        if later is not None:
            gap = text[answer.end : later.start]
            sentence = re.split(r"[.!?\n]", gap)[-1]
            asked = _QUESTION.match(text, later.end) is not None
            if CORRECTION.search(gap) and not HEDGE.search(sentence) and not asked:
                withdrawn += 1
                continue
        counted.append(answer)
    return Found(tuple(counted), withdrawn)


@lru_cache(maxsize=64)
def read_prose(text: str) -> Parsed | None:
    """A stretch of prose with no stated answer: an answer-anchored LaTeX span (math-verify's anchors), else the
    final span; text without a math span is read as bare LaTeX (``\\frac{10}{9}``).  Cached: finding asks first
    whether the prose reads before it falls back to the last plain number."""
    found = parse_latex(text, anywhere=not has_delimiters(text))
    if found:
        return Parsed(sympy=tuple(found))
    final = final_spans(text)
    if final is None:
        return None
    span = SPAN.fullmatch(final.text)
    inner = next(g for g in span.groups() if g is not None) if span else final.text
    return read_answer(inner) or Parsed(sympy=(inner,))  # unreadable: compared as text, as math-verify does


def read_stated(answer: str, prose: bool) -> Parsed | None:
    """One stated answer's value: its own text, or (prose, or text with math delimiters) :func:`read_prose`."""
    if prose:
        return read_prose(answer)
    return read_answer(answer)


@lru_cache(maxsize=GOLD_CACHE_SIZE)
def parse_gold(gold: str, max_chars: int = 20_000) -> Parsed | None:
    """The gold answer, parsed once per worker and cached; None when it is empty, too long or does not parse.

    A gold with a ``\\boxed{}`` is its last box; a gold that is one math span
    (``$\\frac{1}{2}$``) or has no math delimiters at all (``2\\sqrt{3}``,
    ``-896*x**5 + 3*x**2``, ``5.02e-18``, ``\\$12.50``) is read by
    :func:`read_answer`; a gold in prose with math spans goes to
    math-verify's extraction.  It parses when it yields a number or at
    least one sympy value (a string fallback alone does not count); a gold
    without math delimiters does not parse when it is prose
    (:func:`read.has_words`).
    """
    gold = gold.strip()
    if not gold or len(gold) > max_chars:
        return None
    boxed = last_boxed(gold)
    if boxed is not None:
        return read_answer(boxed)
    if not has_delimiters(gold):
        if has_words(gold) and read_number(gold) is None:
            return None  # "see the figure above" is prose, not a product of fifteen symbols
        return read_answer(gold)
    if SPAN.fullmatch(gold):
        return read_answer(gold)
    found = parse_latex(gold)
    return Parsed(sympy=tuple(found)) if any(not isinstance(x, str) for x in found) else None
