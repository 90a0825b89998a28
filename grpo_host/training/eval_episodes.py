"""``grpo-host eval`` on an environment: each of the k samples of a prompt is one episode of the agent loop.

Why it is built this way:

* **The training loop's rules, not a second loop.**  Each sample is one
  :func:`grpo_host.training.agent_loop.run_episode` (TRL's rules step for
  step: the chat template with the session's tools and the ``reset``
  observation, TRL's response parser, the guarded tool calls, their results
  appended, the ``max_tool_calls`` and ``max_completion_length`` budgets),
  so a model is measured the way the MLX backend and TRL train it.  The
  engine supplies only ``generate(context_ids, max_tokens)``: transformers'
  ``generate`` or mlx-lm's ``generate_step`` (the MLX backend's sampler),
  one episode at a time, each seeded with its sample's seed.
* **Checked before anything loads.**  The environments (``--environment``,
  the run's own, or a row's ``environment`` column) are found and their
  parameters validated by the function the training backends use
  (:func:`grpo_host.training.backends.steps.environment_factories`), and
  every row's prompt must be a message list, before the model is loaded.
* **The environment's own reward is one more reward.**  As on both training
  backends it is named after the session class (``NotesSession``), weighs 1
  and is summed into the total; it is read as each episode ends, before the
  session is reset for the next one.
* **An endpoint speaks the chat API.**  ``run_episode`` works on token ids
  (the prompt as the model's chat template renders it, each turn parsed by
  TRL's parser); an OpenAI-compatible endpoint renders and parses on its
  server, so its episodes are
  :func:`grpo_host.training.chat_episodes.run_chat_episode`: the tools
  offered as ``tools``, the server's ``tool_calls`` run by the same guarded
  ``call_tools``, the budget counted in the server's ``usage``, the same
  trajectory recorded.  Episodes run ``--concurrency`` at a time, each with a
  session of its own (kept for later episodes), through the client plain
  endpoint evaluation uses (:class:`~grpo_host.training.endpoint.Endpoint`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import DataRefused, DuplicateNameError, UnknownNameError, UserError
from ..kinds.environment import Session
from ..scoring.spec import parse_spec
from ..scoring.trajectory import completion_text
from ..scoring.turns import TurnRule
from .agent_loop import ChatTools, run_episode
from .backends.steps import environment_factories
from .chat_episodes import Reply, reply_of, run_chat_episode
from .config import EnvironmentSettings
from .endpoint import Endpoint

if TYPE_CHECKING:
    from ..discovery.plugins import Plugins
    from .agent_loop import Generate as Step
    from .evaluate import EvalSettings, Model, Sample
    from .train import Row

__all__ = ["Episodes", "environment_option", "episodes_for"]

Play = Callable[[Sequence[int], int, int], "list[list[Sample]]"]
"""``(row indices, k, seed) -> k episodes per row``, the sample of index ``j`` of the ``i``-th row seeded
``seed + i * k + j``."""


def environment_option(text: str) -> EnvironmentSettings:
    """``--environment NAME`` or ``NAME(key=value, ...)`` (a reward spec's syntax for one item, without a weight)."""
    try:
        items = parse_spec(text)
    except UserError as exc:
        raise UserError(f"--environment {text!r}: {exc}") from None
    if len(items) != 1 or items[0].weight != 1.0 or items[0].timeout is not None or items[0].on_error != "auto":
        raise UserError(f"--environment {text!r}: expected one environment, NAME or NAME(key=value, ...)")
    return EnvironmentSettings(name=items[0].name, params=items[0].params)


@dataclass
class Episodes:
    """The evaluation's environments, checked: a session factory per name (None: the default), each row's choice,
    and the names of the environments' own rewards (the session classes that have one, in name order)."""

    factories: dict[str | None, Callable[[], Any]]
    choices: list[str | None]
    names: list[str]

    def player(self, model: Model, s: EvalSettings, rows: Sequence[Row]) -> Play:
        """The episodes' sampler: the chat API for an endpoint, else the model's engine (transformers or MLX)."""
        if model.url is not None:
            return self._chat_player(model.url, s, rows)
        assert model.path is not None and s.max_completion_length is not None and s.seed is not None

        chat, step, context = (_mlx if s.backend == "mlx" else _transformers)(model.path, s)
        pool: dict[str | None, Any] = {}
        budget, rounds = s.max_completion_length, s.max_tool_calls

        def play(chosen: Sequence[int], k: int, seed: int) -> list[list[Sample]]:
            out: list[list[Sample]] = []
            for i, row_id in enumerate(chosen):
                name = self.choices[row_id]
                if name not in pool:  # one session per environment, reset for each episode
                    pool[name] = self.factories[name]()
                session = pool[name]
                got = []
                for j in range(k):
                    episode = run_episode(chat, session, rows[row_id].data["prompt"], row_id, step(seed + i * k + j),
                                          max_tokens=budget, max_tool_calls=rounds, context=context)
                    text = str(chat.tokenizer.decode(episode.ids, skip_special_tokens=True))
                    got.append(self._sample(session, episode.messages, text, episode.ids, len(episode.ids)))
                out.append(got)
            return out

        return play

    def _chat_player(self, url: str, s: EvalSettings, rows: Sequence[Row]) -> Play:
        """Episodes against an OpenAI-compatible endpoint, ``s.concurrency`` at a time (each holds a session)."""
        assert s.max_completion_length is not None
        endpoint = Endpoint(url, s)
        free: dict[str | None, list[Any]] = {}
        budget, rounds = s.max_completion_length, s.max_tool_calls

        async def one(client: Any, gate: asyncio.Semaphore, row_id: int, seed: int) -> Sample:
            async def ask(messages: list[dict[str, Any]], tools: list[dict[str, Any]], most: int) -> Reply:
                body = {**endpoint.body(seed, most), "messages": messages, **({"tools": tools} if tools else {})}
                return reply_of(await endpoint.post(client, "chat/completions", body), url)

            name = self.choices[row_id]
            async with gate:
                kept = free.setdefault(name, [])
                session = kept.pop() if kept else self.factories[name]()
                try:
                    episode = await run_chat_episode(ask, session, rows[row_id].data["prompt"], row_id,
                                                     max_tokens=budget, max_tool_calls=rounds)
                    return await asyncio.to_thread(self._sample, session, episode.messages,
                                                   completion_text(episode.messages), None, episode.length)
                finally:
                    kept.append(session)

        async def run(chosen: Sequence[int], k: int, seed: int) -> list[list[Sample]]:
            gate = asyncio.Semaphore(s.concurrency)
            async with endpoint.client() as client:
                done = await asyncio.gather(*(one(client, gate, row_id, seed + i * k + j)
                                              for i, row_id in enumerate(chosen) for j in range(k)))
            return [list(done[i * k:(i + 1) * k]) for i in range(len(chosen))]

        return lambda chosen, k, seed: asyncio.run(run(chosen, k, seed))

    def _sample(self, session: Any, messages: list[dict[str, Any]], text: str, ids: list[int] | None,
                length: int) -> Sample:
        """An episode as a sample, with the environment's own reward read before the session is reset again."""
        from .evaluate import Sample

        own = {n: session._reward() if type(session).__name__ == n else None for n in self.names}
        session._check_turns(messages)
        turns = {type(session).__name__: session.turns} if session.turns is not None else {}
        return Sample(text, ids, length, messages=messages, own=own, own_turns=turns)


def episodes_for(default: EnvironmentSettings | None, rows: Sequence[Row], plugins: Plugins, *,
                 turn_reward: str | TurnRule = "episode") -> Episodes | None:
    """The evaluation's environments, checked before any model loads (None: no environment, plain completions);
    a per-turn environment's reward is made one number by ``turn_reward``, as in training.

    An unknown ``--environment`` or bad parameters are a :class:`UserError` naming the option, a row's unknown
    environment or a prompt that is not a message list a :class:`DataRefused` naming the row."""
    if default is not None:
        try:
            plugins.registry.environment(default.name).create(default.params)
        except (UnknownNameError, DuplicateNameError, ValueError) as exc:
            raise UserError(f"--environment {default.name!r}: {exc}") from None
    factories, choices = environment_factories(default, rows, plugins, turn_reward=turn_reward)
    if not factories:
        return None
    for row in rows:
        if not isinstance(row.data["prompt"], list):
            raise DataRefused(row.where, "an environment needs the prompt as a list of chat messages (its "
                                         "observation is appended to the last one)")
    types = {getattr(f, "func", None) for f in factories.values()}
    names = sorted(t.__name__ for t in types if isinstance(t, type) and issubclass(t, Session)
                   and t.environment.has_reward)
    return Episodes(factories, choices, names)


def _chat(tokenizer: Any, model: Model | str) -> ChatTools:
    try:
        return ChatTools(tokenizer)
    except ValueError as exc:
        raise UserError(f"model {model!r} cannot run an environment: {exc}") from None


def _transformers(path: str, s: EvalSettings) -> tuple[ChatTools, Callable[[int], Step], int | None]:
    """transformers' ``generate`` as the agent loop's step, up to and with the first stop token."""
    import torch

    from .evaluate import load_transformers, sampling_options

    model, tokenizer, device = load_transformers(path, s)
    chat = _chat(tokenizer, path)
    configured = model.generation_config.eos_token_id
    stops = {tokenizer.eos_token_id, *(configured if isinstance(configured, list) else [configured])} - {None}
    options = sampling_options(s)

    def seeded(seed: int) -> Step:
        torch.manual_seed(seed)

        def step(context: list[int], budget: int) -> list[int]:
            if budget < 1:
                return []
            ids = torch.tensor([context], device=device)
            with torch.no_grad():
                out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=budget,
                                     eos_token_id=sorted(stops), pad_token_id=tokenizer.pad_token_id, **options)
            new = [int(t) for t in out[0, len(context):].tolist()]
            end = next((j + 1 for j, t in enumerate(new) if t in stops), len(new))
            return new[:end]

        return step

    return chat, seeded, getattr(model.config, "max_position_embeddings", None)


def _mlx(path: str, s: EvalSettings) -> tuple[ChatTools, Callable[[int], Step], int | None]:
    """The MLX backend's own step (mlx-lm's ``generate_step``, stopping at EOS), seeded per episode."""
    from .evaluate import load_mlx

    model, tokenizer, sampler = load_mlx(path, s)
    import mlx.core as mx

    from .backends.mlx_agents import _sampling

    chat = _chat(tokenizer._tokenizer, path)
    step = _sampling(model, sampler, set(tokenizer.eos_token_ids), [])

    def seeded(seed: int) -> Step:
        mx.random.seed(seed)
        return step

    return chat, seeded, getattr(getattr(model, "args", None), "max_position_embeddings", None)
