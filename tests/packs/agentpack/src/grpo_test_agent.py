"""A third-party agent pack: a note-keeping environment with tools, and a reward over whole trajectories.

``scripted`` and ``one_short`` are rollout functions (TRL's ``rollout_func``), one right and one
returning a completion too few.  ``notes`` gives the model a notebook: ``write(text)`` stores a note,
``read()`` returns the notes so far, ``wait(seconds)`` sleeps (a tool that
can hang, for the limits' tests).  Its own reward is 1.0 when a note holds
the row's ``answer``.  ``seen_tools`` scores a trajectory by the tool calls
it made and, when ``SEEN_FILE`` is set, records each trajectory it saw, so
a test can compare what the rewards saw with what was generated.
``step_notes`` is ``notes`` scored per turn (0.25 for each tool call's
turn, then 1.0 for the final turn when a note holds the answer), and
``turn_calls`` a per-turn reward: the tool calls of each assistant turn.
"""

import json
import os
import time

from grpo_host import ToolLimits, environment, hookimpl, reward, rollout


@environment("notes", requires={"answer": str}, limits=ToolLimits(timeout=1.0, max_output_chars=64))
class Notes:
    """A notebook the model writes to and reads from; it reaches nothing outside this object."""

    def reset(self, row):
        self.answer, self.notes = row["answer"], []
        return "You can write notes."

    def write(self, text: str) -> str:
        """Store a note.

        Args:
            text: the note to keep
        """
        self.notes.append(text)
        return f"stored note {len(self.notes)}"

    def read(self) -> str:
        """Return every note so far, one a line."""
        return "\n".join(self.notes)

    def wait(self, seconds: float) -> str:
        """Wait a while before answering.

        Args:
            seconds: how long to wait
        """
        time.sleep(seconds)
        return "waited"

    def reward(self):
        return float(any(self.answer in note for note in self.notes))


@environment("step_notes", requires={"answer": str}, limits=ToolLimits(timeout=1.0, max_output_chars=64),
             per_turn=True)
class StepNotes(Notes.factory):
    """The notebook of ``notes``, whose reward pays each turn: a tool call's turn 0.25, the answer's 1.0."""

    def reset(self, row):
        self.calls = 0
        return super().reset(row)

    def read(self) -> str:
        """Return every note so far, one a line."""
        self.calls += 1
        return super().read()

    def reward(self):
        return [0.25] * self.calls + [float(any(self.answer in note for note in self.notes))]


@reward(name="turn_calls", per_turn=True)
def turn_calls(rollout, **_):
    """Per assistant turn, the tool calls it made."""
    return [float(len(turn[0].get("tool_calls") or [])) for turn in rollout.by_turn]


@reward(name="seen_tools", trajectory=True)
def seen_tools(rollout, **_):
    """The number of tool calls the rollout made, and a record of the rollout when SEEN_FILE is set."""
    if os.environ.get("SEEN_FILE"):
        with open(os.environ["SEEN_FILE"], "a") as f:
            f.write(json.dumps({"calls": [[c.name, c.arguments] for c in rollout.tool_calls],
                                "results": list(rollout.tool_results), "text": rollout.text,
                                "finished": rollout.finished}) + "\n")
    return float(len(rollout.tool_calls))


def _scripted(prompts, trainer, answer="<answer>\n4\n</answer>"):
    """Every completion is ``answer``: what an external agent framework hands TRL back, in TRL's shape."""
    tokenizer = trainer.processing_class
    prompt_ids = [tokenizer.apply_chat_template(p, add_generation_prompt=True) if isinstance(p, list)
                  else tokenizer.encode(p) for p in prompts]
    completion = tokenizer.encode(answer, add_special_tokens=False) + [tokenizer.eos_token_id]
    return {"prompt_ids": [list(ids) for ids in prompt_ids], "completion_ids": [list(completion) for _ in prompts],
            "logprobs": [[0.0] * len(completion) for _ in prompts]}


@rollout("scripted")
def scripted(prompts, trainer):
    """A stand-in for an external agent loop: every completion answers 4."""
    return _scripted(prompts, trainer)


@rollout("one_short")
def one_short(prompts, trainer):
    """A broken agent loop: one completion fewer than the trainer asked for."""
    out = _scripted(prompts, trainer)
    return {key: values[:-1] for key, values in out.items()}


@hookimpl
def register_environments(register):
    register.add_environment(Notes)
    register.add_environment(StepNotes)
    register.add_rollout(scripted)
    register.add_rollout(one_short)


@hookimpl
def register_rewards(register):
    register(seen_tools)
    register(turn_calls)
