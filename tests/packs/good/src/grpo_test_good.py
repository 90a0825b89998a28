"""A well-behaved third-party pack: an any-of column, parameters, a batch reward."""

from pydantic import BaseModel, ConfigDict, Field

from grpo_host import hookimpl, reward


class LengthParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    target: int = Field(10, gt=0, description="length that scores 1.0")


@reward(requires={("expected", "answer"): str}, description="1.0 when the completion contains the expected text")
def contains_expected(completion, *, expected=None, answer=None, **_):
    gold = expected or answer
    return float(gold in completion)


@reward(params=LengthParams, description="1 - |len - target| / target, floored at 0")
def good_length(completion, *, params, **_):
    return max(0.0, 1 - abs(len(completion) - params.target) / params.target)


@reward(batch=True, description="share of the batch's completions equal to this one")
def good_agreement(completions, **_):
    return [completions.count(c) / len(completions) for c in completions]


@hookimpl
def register_rewards(register):
    register(contains_expected)
    register(good_length)
    register(good_agreement)
