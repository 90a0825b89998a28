"""The ``openenv`` environment: any OpenEnv server, stepped through openenv-core's own client, as a grpo-host agent's
environment.

OpenEnv environments live behind its HTTP/WebSocket server (``reset``,
``step``, ``state``); its client (``GenericEnvClient``, over the
``/ws`` session the server keeps per connection) drives one episode after
another.  This environment is that client inside a grpo-host rollout, so a
run trained with TRL (or any engine grpo-host drives) can act in any OpenEnv
server without a line of glue:

* ``reset(row)`` starts an episode on the server (the row's
  ``reset_columns`` go to the server's ``reset`` as keyword arguments:
  ``seed``, ``episode_id``, a task id) and appends its first observation,
  and the action's JSON schema (the server's ``GET /schema``), to the
  prompt;
* the one tool, ``step(action)``, sends an action (a JSON object of that
  schema) and returns the observation, the step's reward and whether the
  episode is over;
* ``reward()`` is the episode's return: the sum of the steps' rewards
  (``reward="last"``: the last step's); None when no step gave a reward
  (OpenEnv's reward is optional, and a rollout that never acted is not
  paid 0).

Every failure is named and none stops the run: a server that cannot be
reached, or a ``reset`` the server refuses, fails that rollout's ``reset``
(its tool calls answer with the error and its reward is None, as for any
environment, see :mod:`grpo_host.kinds.environment`); an action the server
refuses (not of its schema, or one its environment raises on), a step after
the episode ended and a connection lost mid-episode are tool errors the
model reads.  One WebSocket session per rollout slot: it is kept across
rollouts (each ``reset`` starts a new episode on it), opened again when it
was lost, and closed with the slot.

The server is whatever ``url`` names; its tools reach nothing else, but what
the server does with an action is the server's business: point it at one
you trust, and bound it there (OpenEnv's ``max_concurrent_envs``).
Needs ``pip install 'grpo-host[openenv]'`` (openenv-core 0.3.0).
"""

from __future__ import annotations

import contextlib
import json
import urllib.request
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from grpo_host import ToolError, ToolLimits, environment, hookimpl

__all__ = ["OpenEnvClient", "OpenEnvParams"]


class OpenEnvParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(description="the OpenEnv server's base URL (http://host:port)")
    reset_columns: list[str] = Field(default_factory=list, description="row columns passed to the server's reset "
                                     "as keyword arguments (seed, episode_id, a task id)")
    reward: Literal["sum", "last"] = Field("sum", description="the rollout's reward: the sum of the steps' "
                                           "rewards, or the last step's")
    show_schema: bool = Field(True, description="append the action's JSON schema (the server's /schema) to the "
                              "prompt with the first observation")
    connect_timeout: float = Field(10.0, gt=0, description="seconds to open the WebSocket session")
    message_timeout: float = Field(60.0, gt=0, le=90, description="seconds the server may take to answer one "
                                   "reset or step (under the tool guard's 100 s backstop)")


@environment("openenv", params=OpenEnvParams, limits=ToolLimits(timeout=10.0, max_output_chars=8192))
class OpenEnvClient:
    """An OpenEnv server (params.url), stepped through openenv-core's own client: reset starts an episode and shows
    its first observation, the step tool sends one action and returns the observation and reward.  Reaches the
    network: only the server params.url names, which runs whatever the actions ask of it."""

    def __init__(self, params: OpenEnvParams) -> None:
        self.params = params
        self.client: Any = None
        self.schema: str | None = None
        self.rewards: list[float] = []
        self.done = True

    def reset(self, row: Any) -> str:
        """Start an episode on the server; the text appended to the prompt: its first observation (and the action
        schema)."""
        missing = [c for c in self.params.reset_columns if c not in row]
        if missing:
            raise ValueError(f"the row has no column {', '.join(map(repr, missing))} (params.reset_columns)")
        arguments = {c: row[c] for c in self.params.reset_columns}
        self.rewards, self.done = [], True
        try:
            result = self._connected().reset(**arguments)
        except Exception as exc:
            self._drop()
            raise ConnectionError(self._failure("reset", exc)) from None
        self.done = bool(result.done)
        text = f"\nThe environment's first observation: {_json(result.observation)}"
        if self.params.show_schema:
            text += f"\nAct with the step tool; an action is a JSON object of this schema: {self._action_schema()}"
        return text

    def step(self, action: dict[str, Any]) -> str:
        """Act once: send an action; returns the observation, the step's reward and whether the episode is over.

        Args:
            action: the action, a JSON object of the schema the environment showed
        """
        if self.client is None or self.done:
            raise ToolError("the episode is over: no more actions")
        try:
            result = self.client.step(action)
        except RuntimeError as exc:  # the server's own error answer (openenv's client raises it as RuntimeError)
            raise ToolError(f"the environment refused the action: {exc} (an action is a JSON object of the schema "
                            "shown with the first observation)") from None
        except Exception as exc:
            self._drop()
            self.done = True
            raise ToolError(self._failure("step", exc)) from None
        if result.reward is not None:
            self.rewards.append(float(result.reward))
        self.done = bool(result.done)
        return _json({"observation": result.observation, "reward": result.reward, "done": self.done})

    def reward(self) -> float | None:
        """The episode's return (see the module docstring); None when no step gave a reward."""
        if not self.rewards:
            return None
        return self.rewards[-1] if self.params.reward == "last" else sum(self.rewards)

    def _connected(self) -> Any:
        """This slot's session (openenv-core's synchronous client over its WebSocket), opened on first use."""
        if self.client is None:
            try:
                from openenv.core.generic_client import GenericEnvClient
            except ImportError:
                raise ImportError("the openenv environment needs openenv-core: pip install 'grpo-host[openenv]'"
                                  ) from None
            self.client = GenericEnvClient(base_url=self.params.url, connect_timeout_s=self.params.connect_timeout,
                                           message_timeout_s=self.params.message_timeout).sync()
            self.client.connect()
        return self.client

    def _failure(self, what: str, exc: Exception) -> str:
        return f"OpenEnv server {self.params.url}: {what} failed: {type(exc).__name__}: {exc}"

    def _action_schema(self) -> str:
        """The action's JSON schema from the server's ``/schema``, fetched once per slot."""
        if self.schema is None:
            try:
                with urllib.request.urlopen(f"{self.params.url.rstrip('/')}/schema",
                                            timeout=self.params.message_timeout) as answer:
                    self.schema = _json(json.load(answer)["action"])
            except Exception as exc:
                raise ConnectionError(self._failure("GET /schema", exc)) from None
        return self.schema

    def _drop(self) -> None:
        """Close this slot's session (one that failed, or the slot's at its end); the next reset opens a new one."""
        client, self.client = self.client, None
        if client is not None:
            with contextlib.suppress(Exception):  # already broken: nothing more to release
                client.close()

    def __del__(self) -> None:
        self._drop()


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


@hookimpl
def register_environments(register):
    register.add_environment(OpenEnvClient)
