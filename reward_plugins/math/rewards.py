"""math: is the completion's final answer mathematically equal to the gold answer?

The reward a reasoning run trains on, so it must never pay a wrong answer
and should pay every right one.  The pack is split by job:
:mod:`~reward_plugins.math.find` finds where the completion states its answer
(and whether it offers alternatives), :mod:`~reward_plugins.math.read` reads
a stated answer or a gold as a value, :mod:`~reward_plugins.math.compare`
decides whether two values are equal.  This module holds the rule as users
read it (``grpo-host rewards show math``), the parameters and the reward.

Each item runs in a worker process (``executor="process"``) whose timer
interrupts a runaway sympy call and which is killed from outside when it does
not come back, so ``\\boxed{9^{9^{9^{9}}}}`` costs one timeout, not the run;
finding is linear in the completion, so the timeout is a backstop only.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from grpo_host import hookimpl, reward
from reward_plugins.math.compare import equal
from reward_plugins.math.find import MAX_ANSWERS, MAX_WITHDRAWN, Answer, find_answers, parse_gold, read_stated
from reward_plugins.math.read import Parsed, read_answer

Target = Literal["answer_tag", "boxed", "gsm8k", "phrase", "line", "latex", "number"]

RULE = (
    "Exact values (integers, fractions, mixed numbers 3\\frac{1}{4} = 13/4, surds, pi, symbolic expressions with "
    "exact numbers) compare exactly. A decimal (written with a point or an exponent: 0.5, .4, 2.0, 1.37e-3, 1.37 "
    "\\times 10^{-3}) equals an exact value only when it is that value rounded at the decimal's last written digit "
    "and within a relative `tolerance` (|a - b| <= tolerance * max(|a|, |b|), 1e-6): 0.6666667 equals 2/3, "
    "0.6666672 and 0.6667 do not (0.6667 does with tolerance >= 5e-5), nor does the truncation 0.6666666, "
    "1.41421356 equals \\sqrt{2}, and a decimal "
    "gold 2.0000001 is not 2; a decimal that is the exact value's binary double as Python prints it "
    "(0.6666666666666666) equals it too. Two decimals must agree to the tolerance and to half a unit of the less "
    "precise one's last digit (3.14159 is not 3.14158; 1e-7 never equals 2e-7); in sets and expressions a "
    "decimal's trailing zeros are not counted; a decimal inside an expression stands for its rounding (half a unit "
    "of its last digit either way: 0.6666667\\pi equals 2\\pi/3, 0.6666672\\pi does not); an expression with both "
    "symbols and decimals is equal only when the difference simplifies to exactly 0 (0.5x equals x/2). A repeating "
    "decimal is exact (0.\\overline{3}, 0.(3), 0.\\dot{3}, and 0.333... or 0.2727... whose last digits repeat a "
    "period written twice); one with an ellipsis and no such period is truncated (3.14159... lies in [3.14159, "
    "3.14160)). A percent p% on both sides compares the percentages; on one side only it equals p/100, and p "
    "itself only when |p| >= 1 (45% equals 0.45 and 45; 0.4% equals 0.004, never 0.4). Units are compared when "
    "both sides carry one, after a number or an expression (2x km is not 2x m): the same quantity in another unit "
    "of the same kind is equal (300 cm equals 3 m, 2 h equals 120 min, \\$1 equals 100 cents, any SI prefix: 2000 "
    "kHz equals 2 MHz, 2 nm is not 2 m, 7 MB is not 7 kB; 25 °C equals 77 °F and 298.15 K), other kinds or "
    "currencies are not (7 m is not 7 km nor 7 kg); a side without a unit is compared by its number (the gold 5 "
    "pays 5 cm); words for counted things (apples, people) are not units. An angle in degrees (135^\\circ, 135°) "
    "equals its radians when the other side is written with pi (3\\pi/4), else it is compared as a number "
    "(45^\\circ equals 45); inside a trigonometric function it is radians (\\sin 30^\\circ equals 1/2). i is the "
    "imaginary unit, also in polar form: (1-i)^2 equals -2i, |5+12i| equals 13, \\sqrt{2}e^{i\\pi/4} equals 1+i; "
    "so is j after a number or a sign when no i is written (3-4j equals 3-4i); elsewhere j is a variable, as is i "
    "bound by a sum. a \\approx b is a when b is its rounding (\\frac{2}{3} \\approx 0.667 "
    "is 2/3; x \\approx 0.67 is 0.67; 4 \\approx 5 is no value). An equation of two numbers (2 = 8), or a chain "
    "with such a link (x = 5+5+1 = 7 = 11), is a false statement: not paid unless its sides are equal. Thousands "
    "separators are ignored (1\\,000, 1{,}000, 1 000); two numbers side by side with only spacing between them (7 "
    "9, 7\\quad 9) are no value."
)

HEDGE_RULE = (
    "Reasoning is no answer: after a </think> only the text after the last one is searched, and a <think> that "
    "never closes holds no answer. Every place the completion states an answer counts: each <answer> block, each "
    "\\boxed{} (a run of boxes joined only by commas, 'and', spaces or \\quad is one list answer: \\boxed{2} and "
    "\\boxed{3} is 2, 3), each GSM8K "
    "'#### 843' line, each answer phrase ('the answer is 12.', 'Final Answer: The final answer is 3.25.', "
    "'**Answer:** 12', 'Answer:' or a '# Answer' heading, indented or not, with the value on the next line, a line "
    "that starts with a short label: 'A: 30', 'Ans: 30', 'Final answer 30'; under a heading also a word, \\text{} "
    "in any case, or a sentence that states one number: 'There are 30 apples.'); a box holds its answer without the "
    "prose written after it inside the box (\\boxed{30. This is because ...}), a box of a word is that word; a sign "
    "just outside math delimiters counts (-$5$ is -5); only when none is there, "
    "a last line that is nothing but a number ('...\\n7') or a concluding last sentence with one number that is "
    "no operand ('So, the total is 12 dollars.', 'Thus x = 5 + 7 = 12.'; not 'So we need 4 more.', and 'So maybe 7.' "
    "is a guess), else the final math span (at most 40 characters after "
    "it) or an answer-anchored one. It is "
    "paid only when every answer that counts equals the gold, so a final answer that offers alternatives is not "
    "paid: values joined by 'or' (either 7 or 9, $y = 1$ or $y = 6$, \\boxed{2} \\quad\\text{or}\\quad \\boxed{4}; "
    "for a gold that is a list or a union, 'x = 1 or x = 6' may also be read whole), several different boxes, an "
    "<answer> and a \\boxed{} that disagree, \\pm 4 (two values: paid only for a gold that is both, \\pm 4 or 4, -4), "
    "a conditional answer (4 \\text{ if } x > 0, 5 \\text{ otherwise}), a question ('Answer: 4?'). "
    "An answer stops counting when the text between it and the next "
    "different answer withdraws it (wait, actually, correction/correcting, mistake, wrong, instead, oops, on "
    "second thought, recheck, reconsider, hold on, double-check, can't be right...) and the sentence that gives "
    "the next one does not hedge (perhaps, maybe, "
    f"possibly, probably, might, could, guess, alternatively, either, or, not sure) nor ask ('Wait, or is it "
    f"\\boxed{{5}}?'). More than {MAX_WITHDRAWN} "
    f"withdrawn answers, or more than {MAX_ANSWERS} different answers, are a run of guesses: 0.0."
)


class MathParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    tolerance: float = Field(
        1e-6,
        ge=0,
        le=0.01,
        description="relative tolerance, applied only where a side is a decimal: |a - b| <= tolerance * max(|a|, "
        "|b|); exact values (integers, fractions, surds) always compare exactly, a decimal against an exact value "
        "must also be its rounding at the decimal's last digit, and two plain decimals must also agree to half a "
        "unit of the less precise one's last digit. 0 makes decimals exact too",
    )
    set_relations: bool = Field(
        False,
        description="also accept a relation for a set or interval gold (x > 1 for (1, oo)); a set answer for a "
        "relation gold is always accepted (math-verify allow_set_relation_comp)",
    )
    extract: tuple[Target, ...] = Field(
        ("answer_tag", "boxed", "gsm8k", "phrase", "line", "latex"),
        min_length=1,
        description="where answers are looked for: answer_tag (every <answer>...</answer>, to its close or the end), "
        "boxed (every \\boxed{} or \\fbox{}), gsm8k (the rest of a '#### ' line, when it reads as a value), phrase "
        "(what follows 'the answer is' / 'final answer:' to the end of its sentence, when it reads as a value); "
        "these all count (see the hedge rule). Only when they find nothing: line (the last line, when it is nothing "
        "but a plain number: '...\\n7', '**7**', or a last sentence starting So/Thus/Therefore/Hence/In total with "
        "one number that is no operand), then latex (a $...$, $$...$$, \\(...\\) or "
        "\\[...\\] span after an answer phrase such as 'final answer is $x$' (math-verify's anchors), else the last "
        "span when it ends the completion: at most 40 characters after it; a span the text goes on from is "
        "reasoning, not an answer), number (the last plain number in the text such as 42, -3.5, .4, 1,234.5, 1 234, "
        "1.5e-3, 3/4 or 28%, a unit after it allowed: 2.5kg, but 2x is no number; taken before latex when it comes "
        "after every math span, otherwise when latex finds nothing)",
    )
    max_chars: int = Field(
        20_000,
        ge=64,
        le=1_000_000,
        description="a stated answer longer than this is not read (and is not equal); without a stated answer, "
        "the last max_chars characters are searched for a final span; a longer gold is not applicable. The whole "
        "completion is searched for stated answers, however long",
    )


def check_gold(row: Mapping[str, Any]) -> str | None:
    """Row check for ``data check``: the gold answer must parse (with the default parameters)."""
    answer = row.get("answer")
    if isinstance(answer, bool) or not isinstance(answer, str | int | float) or not str(answer).strip():
        return None  # the column check reports missing, empty or mistyped golds
    if parse_gold(str(answer)) is None:
        return "gold answer does not parse as math (an unparseable gold scores None)"
    return None


DESCRIPTION = (
    "1.0 when the completion's final answer is mathematically equal to the gold `answer`, else 0.0; None (not "
    "applicable) when the gold is empty, longer than max_chars or does not parse (`data check` lists such rows); "
    "no answer found scores 0.0. " + HEDGE_RULE + " Golds and answers may be plain numbers (42, -3.5, .4, 1,000, "
    "1\\,000, 28 \\%, \\$12.50, 2.5 kg), scientific notation (5.02e-18, 1.37 \\times 10^{-3}), LaTeX (2\\sqrt{3} "
    "is 2*sqrt(3), not 2), or Python/sympy syntax (-896*x**5 + 3*x**2 - 7, sqrt(2)/2). Equal means: the same "
    "number, the same set in any order, the same interval, an equivalent equation or expression (x = 2 equals 2). "
    + RULE + " Completion text is never evaluated: only a LaTeX grammar and Python's ast parser read it. Each item "
    "runs in a worker process under the timeout (default 10 s); a timed-out item scores None and is counted as a "
    "timeout."
)


def _is_list(gold: Parsed) -> bool:
    """Whether the gold has several parts: a list or set (1, 6), a union of intervals or an alternation of
    relations, for which 'x = 1 or x = 6' (or 'x < -1 or x > 3') may be read whole."""
    return any(getattr(e, "is_FiniteSet", False) and len(e.args) > 1 or type(e).__name__ in ("Tuple", "Union", "Or")
               for e in gold.sympy)


def pays(gold: Parsed, answer: Answer, params: MathParams) -> bool:
    """Whether one stated answer equals the gold: each of its alternatives, or (a list gold) all of them as a list."""
    if len(answer.text) > params.max_chars:
        return False
    parts = answer.alternatives()
    if len(parts) == 1:
        pred = read_stated(parts[0], answer.prose)
        return pred is not None and equal(gold, pred, params.tolerance, params.set_relations)
    if _is_list(gold):
        as_list = read_answer(", ".join(p.strip() for p in parts))
        if as_list is not None and equal(gold, as_list, params.tolerance, params.set_relations):
            return True
    for part in parts:
        pred = read_stated(part, False)
        if pred is None or not equal(gold, pred, params.tolerance, params.set_relations):
            return False
    return True


@reward(
    name="math",
    description=DESCRIPTION,
    requires={"answer": str | int | float},
    params=MathParams,
    executor="process",
    timeout=10.0,
    check_row=check_gold,
    examples=[
        {"completion": "... so the answer is $\\boxed{\\sqrt{12}}$.", "answer": "2\\sqrt{3}", "score": 1.0},
        {"completion": "<think>2/4 = 1/2</think><answer>0.5</answer>", "answer": "\\frac{1}{2}", "score": 1.0},
        {"completion": "First \\boxed{3}, but correcting: \\boxed{5}", "answer": "5", "score": 1.0},
        {"completion": "It is \\boxed{3} or \\boxed{5}", "answer": "5", "score": 0.0},
        {"completion": "<answer>4</answer> and so \\boxed{5}", "answer": "5", "score": 0.0},
        {"completion": "The roots satisfy $x \\in [1, 3)$. Final: \\boxed{[1,3)}", "answer": "[1, 3)", "score": 1.0},
        {"completion": "\\boxed{-896x^{5} + 3x^{2} - 7}", "answer": "-896*x**5 + 3*x**2 - 7", "score": 1.0},
        {"completion": "\\boxed{1.37 \\times 10^{-3}}", "answer": "1.37e-3", "score": 1.0},
        {"completion": "\\boxed{0.3333333}", "answer": "1/3", "score": 1.0},
        {"completion": "\\boxed{0.3333332}", "answer": "1/3", "score": 0.0},
        {"completion": "\\boxed{300 \\text{ cm}}", "answer": "3 \\text{ m}", "score": 1.0},
        {"completion": "\\boxed{7 \\text{ m}}", "answer": "7 \\text{ km}", "score": 0.0},
        {"completion": "She pays 843 in all.\n#### 843", "answer": "843", "score": 1.0},
        {"completion": "So the answer is 12.", "answer": "12", "score": 1.0},
        {"completion": "\\boxed{\\frac{1}{2^{98}}}", "answer": "\\frac{1}{2^{99}}", "score": 0.0},
        {"completion": "no final answer here", "answer": "42", "score": 0.0},
        {"completion": "\\boxed{5}", "answer": "\\frac{1}{", "score": None},
    ],
)
def math_answer(completion: str, *, answer: Any, params: MathParams, **_) -> float | None:
    """The reward: None for an unreadable gold (never a free 1.0), 0.0 for no answer or a run of guesses, else
    1.0 when every stated answer that counts equals the gold (HEDGE_RULE, RULE)."""
    gold = parse_gold(str(answer), params.max_chars)
    if gold is None:
        return None
    found = find_answers(completion, params.extract, params.max_chars)
    if not found.answers or found.guessing:
        return 0.0
    return float(all(_pays_text(str(answer), stated.text, stated.parts, params) if _cacheable(stated)
                     else pays(gold, stated, params) for stated in reversed(found.answers)))


MAX_CACHED_ANSWER = 1000
"""Longest stated answer whose verdict is kept (:func:`_pays_text`); prose answers are never kept (they are the
completion's tail, rarely repeated, and long)."""


def _cacheable(answer: Answer) -> bool:
    return not answer.prose and len(answer.text) <= MAX_CACHED_ANSWER


@lru_cache(maxsize=16384)
def _pays_text(gold: str, text: str, parts: tuple[str, ...], params: MathParams) -> bool:
    """:func:`pays`, kept per worker by the texts it is a pure function of (the gold as written, the stated answer's
    text and parts, the parameters): a group's completions repeat each other's answers, and a repeated one is then
    neither read nor compared again."""
    parsed = parse_gold(gold, params.max_chars)
    return parsed is not None and pays(parsed, Answer(text, 0, 0, parts=parts), params)


@hookimpl
def register_rewards(register):
    register(math_answer)
