"""A third-party agent pack: a note-keeping environment with tools, and a reward over whole trajectories.

``notes`` gives the model a notebook: ``write(text)`` stores a note,
``read()`` returns the notes so far, ``wait(seconds)`` sleeps (a tool that
can hang, for the limits' tests).  Its own reward is 1.0 when a note holds
the row's ``answer``.  ``seen_tools`` scores a trajectory by the tool calls
it made and, when ``SEEN_FILE`` is set, records each trajectory it saw, so
a test can compare what the rewards saw with what was generated.
"""

import json
import os
import time

from grpo_host import hookimpl, reward
from grpo_host.environments import ToolLimits, environment


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


@reward(name="seen_tools", trajectory=True)
def seen_tools(rollout, **_):
    """The number of tool calls the rollout made, and a record of the rollout when SEEN_FILE is set."""
    if os.environ.get("SEEN_FILE"):
        with open(os.environ["SEEN_FILE"], "a") as f:
            f.write(json.dumps({"calls": [[c.name, c.arguments] for c in rollout.tool_calls],
                                "results": list(rollout.tool_results), "text": rollout.text,
                                "finished": rollout.finished}) + "\n")
    return float(len(rollout.tool_calls))


@hookimpl
def register_environments(register):
    register.add_environment(Notes)


@hookimpl
def register_rewards(register):
    register(seen_tools)
