"""The judge pack's rewards: an LLM judge over any OpenAI-compatible chat-completions server.

Four rewards, one per kind of question, so that each declares exactly the
columns it reads (the host checks them before a run):

* ``judge``: how good is the response, on a rubric?  A pointwise score on
  0..10, or a Likert scale 1..N, mapped linearly to [0, 1].
* ``judge_reference``: is the response right, given the reference answer in
  the ``answer`` column?  PASS is 1.0, FAIL 0.0.
* ``judge_criteria``: which of several criteria does the response meet?
  Each criterion is judged in a request of its own (MET or NOT_MET) and the
  score is the weighted share met, ``sum(weight * met) / sum(weight)``.
* ``judge_group``: how good is each response, next to the others written for
  the same prompt?  One request per GRPO group (ART's RULER): GRPO uses only
  scores relative to the group, and a judge that sees the whole group
  compares instead of guessing an absolute scale.  The group is shown in a
  seeded shuffle and, by default, a second time in the reverse order, each
  member's scores averaged, so a judge's preference for early (or late)
  positions cancels; how much the orders disagreed is counted.

They are async rewards: the ensemble (or TRL) awaits many judgments at once.
Every reward carries the server settings of :class:`JudgeServer`: the
address, the model, the name of an environment variable holding the key,
sampling, the rate limits, retries and the deadline; see
:mod:`reward_plugins.judge.client` for how a judgment is made and
:mod:`reward_plugins.judge.prompts` for the prompt-injection rules.  A
judgment that fails or whose reply holds no verdict scores None and is
counted, never 0.  Counters per reward and batch: ``calls`` (HTTP requests,
retries included), ``cache_hits``, ``retries``, ``failures`` (judgments that
got no reply), ``unparseable`` (replies without a verdict) and ``tokens``.

This module imports no HTTP stack (httpx comes in with the first judgment),
so listing rewards stays fast.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from grpo_host import Scored, hookimpl, reward

from . import prompts

__all__ = [
    "CriteriaParams",
    "Criterion",
    "GroupParams",
    "JudgeParams",
    "JudgeServer",
    "ReferenceParams",
    "judge",
    "judge_criteria",
    "judge_group",
    "judge_reference",
]

ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"
"""What ``api_key_env`` must look like: a variable's name, which no API key does (they hold '-')."""

POINTWISE_RUBRIC = ("Rate how well the response answers the prompt: correct, complete, clear and concise. "
                    "0 is useless or wrong, 10 is an answer an expert could not improve.")
GROUP_RUBRIC = ("Rate how well each response answers the prompt: correct, complete, clear and concise. Compare the "
                "responses: a better response gets a higher score, equally good ones the same score. 0 is useless "
                "or wrong, 10 is an answer an expert could not improve.")
REFERENCE_RUBRIC = ("Decide whether the response's final answer agrees with the reference answer. Equivalent "
                    "forms (1/2 and 0.5, reordered lists, other wording of the same fact) agree; a response that "
                    "hedges between several answers, or gives none, does not.")


class JudgeServer(BaseModel):
    """The settings every judge reward shares: where the server is, how to ask it and how hard to push it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str = Field(
        pattern=r"^https?://",
        description="the server's OpenAI-compatible API root, ending in /v1: vllm serve and transformers serve "
        "http://127.0.0.1:8000/v1, SGLang http://127.0.0.1:30000/v1, Ollama http://127.0.0.1:11434/v1, or an API's",
    )
    model: str = Field(min_length=1, description="the model name the server answers to (vLLM: --served-model-name)")
    api_key_env: str | None = Field(
        None,
        pattern=ENV_NAME,
        description="the NAME of the environment variable holding the API key, sent as a bearer token (never the "
        "key itself: specs are written to the run's config.yaml); None sends no key (local servers)",
    )
    temperature: float = Field(0.0, ge=0.0, le=2.0, description="sampling temperature (0: the same reply every time)")
    max_tokens: int = Field(
        1024, ge=1, description="most tokens per reply; a reply cut off here has no verdict and counts as unparseable"
    )
    score_format: prompts.Format = Field(
        "tag",
        description="how the verdict ends the reply: tag (<score>7</score>, <verdict>PASS</verdict>) or line "
        "(a last line 'Score: 7' or 'Verdict: PASS'); the last verdict in the reply counts",
    )
    extra_body: dict[str, Any] = Field(
        default_factory=dict,
        description="extra JSON fields sent with every request, e.g. {'chat_template_kwargs': {'enable_thinking': "
        "false}} for vLLM or SGLang; part of the cache key",
    )
    concurrency: int = Field(
        32, ge=1, le=4096,
        description="requests in flight at once (shared by the judge rewards of a run that use the same base_url, "
        "key variable, limits and request_timeout)",
    )
    requests_per_minute: float | None = Field(
        None, gt=0, description="request rate limit, met evenly (at most a second's worth at once); None: no limit"
    )
    tokens_per_minute: float | None = Field(
        None, gt=0,
        description="token rate limit: each request is charged len(messages)/4 + max_tokens up front, corrected by "
        "the server's reported usage; None: no limit",
    )
    retries: int = Field(4, ge=0, le=50, description="times a request is sent again after a 408, 409, 429, 5xx, "
                         "timeout or broken connection")
    backoff: float = Field(
        0.5, gt=0,
        description="seconds before the first retry, doubled for each further one up to max_backoff; a delay d is "
        "slept as d/2 plus a uniform jitter up to d/2, or the server's Retry-After when that is longer",
    )
    max_backoff: float = Field(30.0, gt=0, description="the longest backoff delay in seconds")
    request_timeout: float = Field(120.0, gt=0, description="seconds one request may take before it is retried")
    deadline: float = Field(
        300.0, gt=0,
        description="seconds one judgment may take from its first request, retries, backoff and waits included; "
        "past it the judgment scores None and counts as a failure",
    )
    cache: bool = Field(
        True,
        description="keep complete replies on disk under the grpo-host cache, keyed by server, model, messages and "
        "sampling parameters, so scoring the same completion again makes no request",
    )


class JudgeParams(JudgeServer):
    rubric: str = Field(POINTWISE_RUBRIC, min_length=1, description="what the judge rates, in plain words")
    scale: Literal["pointwise", "likert"] = Field(
        "pointwise",
        description="pointwise: an integer 0..10, scored v/10; likert: an integer 1..likert_points, scored "
        "(v - 1) / (likert_points - 1)",
    )
    likert_points: int = Field(5, ge=2, le=10, description="the top of the Likert scale (5: a 1-5 scale)")


class ReferenceParams(JudgeServer):
    rubric: str = Field(REFERENCE_RUBRIC, min_length=1,
                        description="when the response passes, given the reference answer")


class Criterion(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, description="a short name, shown to the judge")
    description: str = Field(min_length=1, description="what a response must do to meet this criterion")
    weight: float = Field(1.0, gt=0, description="this criterion's share: weight / sum of all weights")


class CriteriaParams(JudgeServer):
    criteria: list[Criterion] = Field(
        min_length=1,
        description="the criteria, each judged in its own request as MET or NOT_MET; the score is the weighted "
        "share met, and None when any criterion got no verdict",
    )


class GroupParams(JudgeServer):
    rubric: str = Field(GROUP_RUBRIC, min_length=1, description="what the judge rates and compares, in plain words")
    orders: int = Field(
        2, ge=1, le=8,
        description="orders each group is judged in, one request each: a seeded shuffle, then its reverse, then "
        "further shuffles; every member's score is the mean over the orders, so a linear position bias cancels "
        "with 2 (fewer for a group with fewer distinct orders: 1 member, 1 order; 2 members, 2)",
    )
    seed: int = Field(0, description="the shuffle's seed, mixed with a hash of the group's text (the same group is "
                      "shown the same way every time, so the cache holds)")


async def _verdict(s: JudgeServer, tally: Any, verdict: prompts.Verdict, instructions: str, prompt: Any,
                   completion: str, reference: str | None = None, low: int = 0, high: int = 10) -> float | None:
    """One judgment: ask, then parse; None (and counted) when no reply came or it held no verdict."""
    from .client import client_for

    messages = prompts.messages(instructions=instructions, verdict=verdict, fmt=s.score_format, prompt=prompt,
                                completion=completion, reference=reference, low=low, high=high)
    reply = await client_for(s).complete(s, messages, tally)
    if reply is None:
        return None
    value = None if reply.truncated else prompts.parse(reply.content, verdict, s.score_format, low, high)
    if value is None:
        tally.unparseable += 1
    return value


def _tally() -> Any:
    from .client import Tally

    return Tally()


JUDGE_CONCURRENCY = 4096
"""How many items the ensemble hands the judge at once: the pack's own ``concurrency`` bounds the requests."""
JUDGE_TIMEOUT = 3600.0
"""The ensemble's per-item bound, a backstop only: the pack's ``deadline`` governs a judgment."""


def _judge_reward(**declaration: Any):
    """``@reward`` with what every judge reward shares: the ensemble hands over a whole batch at once (the pack
    bounds the requests) and its timeout is only a backstop."""
    return reward(concurrency=JUDGE_CONCURRENCY, timeout=JUDGE_TIMEOUT, **declaration)


@_judge_reward(
    requires={"prompt": Any},
    params=JudgeParams,
    description="An LLM judge rates the response against a rubric: 0..10 (scored v/10) or a Likert scale 1..N "
    "(scored (v-1)/(N-1)). The judge reasons first and ends with the verdict; a reply without one, or a judgment "
    "that got no reply after retries and within the deadline, scores None and is counted (unparseable, failures). "
    "The completion is shown to the judge as marked data that it must not obey.",
    examples=[  # each states the judge's reply and the score the reward derives from it
        {"prompt": "What is 2+2?", "completion": "4", "judge_reply": "Correct and concise.\n<score>10</score>",
         "score": 1.0},
        {"prompt": "What is 2+2?", "completion": "4, I think", "judge_reply": "Hedged.\n<score>7/10</score>",
         "score": 0.7},
        {"prompt": "What is 2+2?", "completion": "5", "params": {"scale": "likert", "score_format": "line"},
         "judge_reply": "Wrong.\nScore: 1", "score": 0.0},
        {"prompt": "What is 2+2?", "completion": "4", "judge_reply": "A fine answer, I would say.", "score": None},
    ],
)
async def judge(completion: str, *, prompt: Any = None, params: JudgeParams, **_: Any) -> Scored:
    tally = _tally()
    low, high = (0, 10) if params.scale == "pointwise" else (1, params.likert_points)
    value = await _verdict(params, tally, "score", f"Rubric: {params.rubric}", prompt, completion, low=low, high=high)
    return Scored(value, tally.counts())


@_judge_reward(
    requires={"prompt": Any, "answer": str},
    params=ReferenceParams,
    description="An LLM judge compares the response with the reference answer (the answer column): PASS scores "
    "1.0, FAIL 0.0. No verdict, or no reply after retries and within the deadline, scores None and is counted.",
    examples=[
        {"prompt": "Capital of France?", "completion": "Paris", "answer": "Paris",
         "judge_reply": "Same city.\n<verdict>PASS</verdict>", "score": 1.0},
        {"prompt": "Capital of France?", "completion": "Lyon", "answer": "Paris",
         "judge_reply": "A different city.\n<verdict>FAIL</verdict>", "score": 0.0},
    ],
)
async def judge_reference(completion: str, *, prompt: Any = None, answer: str, params: ReferenceParams,
                          **_: Any) -> Scored:
    tally = _tally()
    value = await _verdict(params, tally, "pass_fail", f"Rubric: {params.rubric}", prompt, completion,
                           reference=str(answer))
    return Scored(value, tally.counts())


@_judge_reward(
    requires={"prompt": Any},
    params=CriteriaParams,
    description="An LLM judge decides, one request per criterion, whether the response meets each of the given "
    "criteria (MET or NOT_MET); the score is sum(weight * met) / sum(weight). A criterion without a verdict "
    "makes the row None (counted), since a partial sum would be biased low.",
    examples=[  # the judge gives the same reply for every criterion here
        {"prompt": "Greet the user.", "completion": "Hello!", "judge_reply": "<verdict>MET</verdict>", "score": 1.0,
         "params": {"criteria": [{"name": "greets", "description": "says hello"},
                                 {"name": "brief", "description": "one sentence", "weight": 3}]}},
        {"prompt": "Greet the user.", "completion": "Go away.", "judge_reply": "<verdict>NOT_MET</verdict>",
         "score": 0.0, "params": {"criteria": [{"name": "greets", "description": "says hello"}]}},
    ],
)
async def judge_criteria(completion: str, *, prompt: Any = None, params: CriteriaParams, **_: Any) -> Scored:
    tally = _tally()

    async def one(c: Criterion) -> float | None:
        instructions = f"Criterion '{c.name}': {c.description}\nDecide whether the response meets this criterion."
        return await _verdict(params, tally, "met", instructions, prompt, completion)

    verdicts = await asyncio.gather(*(one(c) for c in params.criteria))
    met = [m for m in verdicts if m is not None]
    if len(met) < len(verdicts):
        return Scored(None, tally.counts())
    total = sum(c.weight for c in params.criteria)
    return Scored(sum(c.weight * m for c, m in zip(params.criteria, met, strict=False)) / total, tally.counts())


def _orders(n: int, count: int, rng: random.Random) -> list[list[int]]:
    """``count`` distinct orders of ``n`` members (fewer when there are not that many): a shuffle, its reverse, then
    further shuffles."""
    first = list(range(n))
    rng.shuffle(first)
    orders = [first]
    candidates = itertools.chain([first[::-1]], iter(lambda: rng.sample(first, n), None))
    possible = 1
    for k in range(2, n + 1):
        possible *= k
        if possible >= count:
            break
    while len(orders) < min(count, possible):
        order = next(candidates)
        if order not in orders:
            orders.append(order)
    return orders


def position_counts(orders: Sequence[Sequence[int]], scores: Sequence[Sequence[float]]) -> dict[str, float]:
    """Position-bias counters of one group judged in several orders (``scores[k][m]``: member m's score in order k).

    For every two orders and every member shown at two different positions: ``position_pairs`` counts them and
    ``position_gap`` adds (score at the earlier position - score at the later one), so gap / pairs is the mean
    advantage of coming first (0 for a judge without position bias).  For every two orders and every two members
    scored apart in both: ``rank_pairs`` counts them and ``rank_flips`` those ranked the other way round."""
    counts = dict.fromkeys(("position_pairs", "position_gap", "rank_pairs", "rank_flips"), 0.0)
    where = [{member: at for at, member in enumerate(order)} for order in orders]
    for a, b in itertools.combinations(range(len(orders)), 2):
        for member in where[a]:
            if where[a][member] != where[b][member]:
                early, late = (a, b) if where[a][member] < where[b][member] else (b, a)
                counts["position_pairs"] += 1
                counts["position_gap"] += scores[early][member] - scores[late][member]
        for i, j in itertools.combinations(where[a], 2):
            first, second = scores[a][i] - scores[a][j], scores[b][i] - scores[b][j]
            if first and second:
                counts["rank_pairs"] += 1
                counts["rank_flips"] += (first > 0) != (second > 0)
    return counts


async def _judge_one_group(s: GroupParams, prompt: Any, completions: list[str]) -> tuple[list[float] | None,
                                                                                         dict[str, float]]:
    """One group's scores by member (None when any order's reply is unreadable or missing) and its counters."""
    from .client import client_for

    tally = _tally()
    rng = random.Random(f"{s.seed}:{prompts.data_tag(prompts.render_prompt(prompt), *completions)}")
    orders = _orders(len(completions), s.orders, rng)
    instructions = f"Rubric: {s.rubric}"

    async def ask(order: list[int]) -> list[float] | None:
        messages = prompts.group_messages(instructions=instructions, fmt=s.score_format, prompt=prompt,
                                          completions=[completions[m] for m in order])
        reply = await client_for(s).complete(s, messages, tally)
        if reply is None:
            return None
        by_position = None if reply.truncated else prompts.parse_group(reply.content, len(order), s.score_format)
        if by_position is None:
            tally.unparseable += 1
            return None
        by_member = [0.0] * len(order)
        for position, member in enumerate(order):
            by_member[member] = by_position[position]
        return by_member

    judged = await asyncio.gather(*(ask(order) for order in orders))
    counts = {"groups": 1.0, "orders": float(len(orders)), **tally.counts()}
    complete = [scores for scores in judged if scores is not None]
    if len(complete) < len(judged):
        return None, counts
    counts.update(position_counts(orders, complete))
    return [sum(scores[m] for scores in complete) / len(complete) for m in range(len(completions))], counts


@_judge_reward(
    requires={"prompt": Any},
    params=GroupParams,
    batch=True,
    description="An LLM judge scores every completion of a GRPO group (the completions of one prompt in the batch) "
    "in one request, side by side, 0..10 each (scored v/10). The group is shown in a seeded shuffle and, with "
    "orders=2 (the default), again in the reverse order; a completion's score is its mean over the orders, so a "
    "judge's position bias cancels. A reply that misses a completion, scores one off the scale or names one that "
    "does not exist, or no reply after retries and within the deadline, makes the whole group None (counted: "
    "unparseable, failures). Counters on the group's first row: groups, orders, and the position-bias statistics "
    "position_gap / position_pairs (mean score advantage of being shown earlier) and rank_flips / rank_pairs "
    "(pairs of completions the orders rank the other way round). Completions are shown as marked data that the "
    "judge must not obey.",
    examples=[  # each states the judge's reply (served to every request) and the score each member derives from it
        {"prompt": "Name a prime number.", "completions": ["7"],
         "judge_reply": "A correct, minimal answer.\n<scores>\nResponse 1: 7\n</scores>", "scores": [0.7]},
        # shown in two orders, a judge that only favours whatever comes first gives every member the same score
        {"prompt": "Name a prime number.", "completions": ["7", "9"],
         "judge_reply": "The first response is better.\n<scores>\nResponse 1: 9\nResponse 2: 3\n</scores>",
         "scores": [0.6, 0.6]},
        # a reply that misses a response, or scores one off the 0..10 scale, makes the whole group None
        {"prompt": "Name a prime number.", "completions": ["7", "9"],
         "judge_reply": "<scores>\nResponse 1: 8\n</scores>", "scores": [None, None]},
        {"prompt": "Name a prime number.", "completions": ["7", "9"], "params": {"score_format": "line"},
         "judge_reply": "Both are numbers.\nScore 1: 10\nScore 2: 12", "scores": [None, None]},
    ],
)
async def judge_group(completions: list[str], *, prompts: list[Any], params: GroupParams, **_: Any) -> list[Scored]:
    groups: dict[str, list[int]] = {}
    for i, prompt in enumerate(prompts):
        groups.setdefault(json.dumps(prompt, sort_keys=True, default=str), []).append(i)
    members = list(groups.values())
    results = await asyncio.gather(*(_judge_one_group(params, prompts[rows[0]], [completions[i] for i in rows])
                                     for rows in members))
    out = [Scored(None)] * len(completions)
    for rows, (values, counts) in zip(members, results, strict=True):
        for k, i in enumerate(rows):
            out[i] = Scored(None if values is None else values[k], counts if k == 0 else {})
    return out


@hookimpl
def register_rewards(register):
    for item in (judge, judge_reference, judge_criteria, judge_group):
        register(item)


@hookimpl
def register_probes(register):
    """The attacks ``grpo-host audit`` tries on the judges (reward_plugins/judge/probes.py)."""
    from . import probes

    register.add_probe(probes.judge_injection)
    register.add_probe(probes.judge_fake_verdict)
