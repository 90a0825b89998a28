"""A well-behaved third-party pack: an any-of column, parameters, a batch reward, a prompt reader,
a reward that (like many real ones) raises on a completion it cannot read, and a monitor."""

from pydantic import BaseModel, ConfigDict, Field

from grpo_host import Report, hookimpl, monitor, reward


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


@reward(description="the completion read as an integer (raises ValueError when it is not one)")
def good_int(completion, **_):
    return float(int(completion.strip()))


@reward(requires={"prompt": str}, description="1.0 when the completion does not repeat the prompt")
def good_no_echo(completion, *, prompt, **_):
    return float(prompt.strip() not in completion)


@hookimpl
def register_rewards(register):
    for item in (contains_expected, good_length, good_agreement, good_int, good_no_echo):
        register.add_reward(item)


@monitor("good_batches", description="Counts the completions of each batch (metric `completions`); never alerts.")
class GoodBatches:
    def observe(self, batch):
        return Report({"completions": len(batch.completions)})


@hookimpl
def register_monitors(register):
    register.add_monitor(GoodBatches)
