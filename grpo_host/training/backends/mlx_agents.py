"""Environments on the MLX backend: the agent loop inside mlx-lm-lora's GRPO trainer.

mlx-lm-lora generates one completion per prompt and has no hook for a
multi-turn rollout, nor for a loss mask other than "every completion
token".  So, for the length of a run with an environment (and only then),
:func:`swapped` replaces two functions of
``mlx_lm_lora.trainer.grpo_trainer``, which its ``train_grpo``,
``evaluate_grpo`` and ``grpo_loss`` look up at call time, and restores them
afterwards, also when the run fails:

* ``generate_grpo`` (rollouts) becomes :meth:`AgentRollouts.generate`:
  ``group_size`` episodes per prompt through
  :func:`grpo_host.training.agent_loop.run_episode`, sampling with mlx-lm's
  ``generate_step`` and the trainer's own sampler settings (each episode's
  KV cache kept across its turns, each prompt prefilled once per group).  It returns, as
  the trainer expects, the completion tokens (generated and tool-result
  tokens, after the episode's own prompt) and, where the trainer has the
  decoded text, the trajectory as a message list: that is what reaches the
  reward functions, the record and the monitors, as on TRL.
* ``_prepare_grpo_inputs`` (the loss inputs) becomes
  :meth:`AgentRollouts.prepare_inputs`: each sequence is the episode's own
  prompt (with the tools and the ``reset`` observation) and its completion,
  and the mask keeps only the tokens the model generated: tool results are
  out of the loss, as TRL's ``tool_mask`` keeps them out.

Everything else (advantages, the clipped objective, KL, gradient
accumulation, the optimizer step) is mlx-lm-lora's, unchanged.  The row of
each prompt is found from the batch the backend's ``iterate_batches``
wrapper handed the trainer (:meth:`AgentRollouts.batch_started`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ...errors import ConfigError, DataRefused
from ...kinds.environment import Session, own_rewards
from ..agent_loop import ChatTools, Episode, run_episode, session_tools

if TYPE_CHECKING:
    from ..train import Job

__all__ = ["AgentRollouts", "EnvironmentReward", "loss_inputs", "swapped"]


class EnvironmentReward:
    """An environment's own ``reward`` as one more reward function, named after its session class with weight 1, as
    TRL adds it; None for rollouts of other environments."""

    def __init__(self, rollouts: AgentRollouts, session_type: type[Session]) -> None:
        self.rollouts, self.session_type, self.__name__ = rollouts, session_type, session_type.__name__

    def values(self, count: int) -> list[float | None]:
        sessions = self.rollouts.sessions
        if len(sessions) != count:
            raise RuntimeError(f"{self.__name__}: {count} completions to score but {len(sessions)} episodes ran")
        return own_rewards(sessions)[0].get(self.__name__, [None] * count)


class AgentRollouts:
    """The episodes of one run: sessions pooled per environment, the last batch's episodes kept for the loss."""

    def __init__(self, job: Job, factories: dict[str | None, Callable[[], Any]], choices: list[str | None],
                 tokenizer: Any, context: int | None) -> None:
        self.job, self.factories, self.choices, self.context = job, factories, choices, context
        self.tokenizer = tokenizer
        try:
            self.chat = ChatTools(tokenizer._tokenizer)
        except ValueError as exc:
            raise ConfigError(f"config key 'environment': the model {job.config.model!r} cannot run an environment on "
                              f"the mlx backend: {exc}") from None
        for where, row in job.rows:
            if not isinstance(row["prompt"], list):
                raise DataRefused(where, "an environment needs the prompt as a list of chat messages (its "
                                         "observation is appended to the last one)")
        self.pool: dict[str | None, list[Any]] = {}
        self.sessions: list[Any] = []
        self.episodes: list[Episode] = []
        self.indices: list[int] = []
        self.cursor = 0
        self.latest: dict[bool, Any] = {}
        self.rewards = [EnvironmentReward(self, t) for t in self._session_types() if t.environment.has_reward]
        self.figures: dict[str, float] = {}

    def _session_types(self) -> list[type[Session]]:
        """Each session class once (the run's environment is listed under its name and under None), in name order."""
        types = [getattr(f, "func", None) for _, f in sorted(self.factories.items(), key=lambda kv: str(kv[0]))]
        return list(dict.fromkeys(t for t in types if isinstance(t, type) and issubclass(t, Session)))

    def prompt_ids(self, where: str, row_id: int) -> list[int]:
        """The row's prompt as its episodes start: rendered with its environment's tools (without the observation,
        which only lengthens it); the trainer's batches carry these tokens."""
        session = self._session(self.choices[row_id], 0)
        return self.chat.render(self.job.rows[row_id].data["prompt"], session_tools(session))

    def _session(self, name: str | None, index: int) -> Any:
        """The ``index``-th pooled session of environment ``name`` (None: the run's): constructed once, reset for
        each episode, as TRL pools them."""
        pool = self.pool.setdefault(name, [])
        while len(pool) <= index:
            pool.append(self.factories[name]())
        return pool[index]

    def batch_started(self, batch: Any, train: bool) -> None:
        """The batch the trainer was just handed, training or validation: the trainer takes its next training
        batch before it evaluates, so the last one of each kind is kept."""
        self.latest[train] = batch

    def generate(self, model: Any, tokenizer: Any, prompt_tokens: Sequence[Any], max_tokens: int, group_size: int,
                 batch_size: int, end_token: str, temperature: float, top_p: float, top_k: int,
                 min_p: float) -> tuple[list[Any], list[Any], list[int]]:
        """``generate_grpo``'s contract: ``group_size`` episodes per prompt of the batch."""
        import mlx.core as mx
        from mlx_lm.sample_utils import make_sampler

        batch = next((b for b in self.latest.values() if b[0] is prompt_tokens), None)
        if batch is None:
            raise RuntimeError("mlx-lm-lora generated for a batch its iterate_batches did not hand out; the agent "
                               "loop cannot tell which rows it holds (install the mlx-lm-lora version grpo-host[mlx] "
                               "names)")
        row_ids = [int(r) for r in batch[4]]
        sampler = make_sampler(temperature, top_p=top_p, min_p=min_p, top_k=top_k)
        stops = set(tokenizer.eos_token_ids)
        end = tokenizer.encode(end_token, add_special_tokens=False) if end_token else []
        was_training = model.training
        model.eval()
        completions, trajectories, indices, sessions = [], [], [], []
        episodes: list[Episode] = []
        counts: dict[str | None, int] = {}
        prompts: dict[tuple[int, ...], Any] = {}  # each prompt's KV cache, prefilled once for its group
        calls = failures = 0
        try:
            for index, row_id in enumerate(row_ids):
                name = self.choices[row_id]
                for _ in range(group_size):
                    slot = counts[name] = counts.get(name, -1) + 1
                    session = self._session(name, slot)
                    episode = run_episode(self.chat, session, self.job.rows[row_id].data["prompt"], row_id,
                                          _sampling(model, sampler, stops, end, prompts), max_tokens=max_tokens,
                                          max_tool_calls=self.job.config.max_tool_calls, context=self.context)
                    if len(episode.prompt_ids) < len(prompt_tokens[index]):
                        raise RuntimeError(f"{self.job.rows[row_id].where}: the episode's prompt is shorter than the "
                                           "row's; the loss would be computed from the wrong position")
                    episodes.append(episode)
                    completions.append(mx.array(episode.ids, dtype=mx.int32))
                    trajectories.append(episode.messages)
                    indices.append(index)
                    sessions.append(session)
                    calls, failures = calls + episode.calls, failures + episode.failures
        finally:
            model.train(was_training)
        self.sessions, self.episodes, self.indices, self.cursor = sessions, episodes, indices, 0
        self.figures = {"tools/call_frequency": calls / len(completions),
                        "tools/failure_frequency": failures / calls if calls else 0.0}
        return completions, trajectories, indices

    def prepare_inputs(self, batch: Any, completions: Sequence[Any], batch_indices: Sequence[int]) -> tuple[Any, ...]:
        """``_prepare_grpo_inputs``'s contract (see :func:`loss_inputs`) for the episodes of these completions.

        The trainer passes the generated completions back in consecutive
        chunks, but not as the same array objects (``mx.value_and_grad``
        hands its function new ones), so each chunk is found among the last
        batch's episodes by its position and checked token for token.
        """
        if not completions or len(batch_indices) != len(completions):
            raise ValueError("batch_indices must identify the prompt for each completion.")
        tokens = [[int(t) for t in c.tolist()] for c in completions]
        starts = [self.cursor, *range(len(self.episodes))]
        for start in starts:
            chunk = self.episodes[start:start + len(tokens)]
            if [e.ids for e in chunk] == tokens and [self.indices[start + j] for j in range(len(chunk))] == list(
                    batch_indices):
                self.cursor = start + len(tokens)
                return loss_inputs(chunk)
        raise RuntimeError("mlx-lm-lora asked for the loss of completions the agent loop did not generate last")


def loss_inputs(episodes: Sequence[Episode]) -> tuple[Any, Any, Any]:
    """The loss's inputs for ``episodes``, shaped as mlx-lm-lora's ``_prepare_grpo_inputs`` makes them.

    ``inputs``: each episode's prompt and completion, right-padded to the
    trainer's bucket width; ``mask[i, p]``: whether the target at position
    ``p`` (token ``p + 1``) is trained on: the episode's generated tokens,
    not its prompt, padding or tool results; ``lengths``: generated tokens
    per episode (TRL's completion length counts only those too).
    """
    import mlx.core as mx
    from mlx_lm_lora.trainer.online_rl_utils import bucket_sequence_length

    sequences = [e.prompt_ids + e.ids for e in episodes]
    width = max(2, bucket_sequence_length(max(len(s) for s in sequences)))
    inputs = mx.array([s + [0] * (width - len(s)) for s in sequences], dtype=mx.int32)
    mask = [[0] * (width - 1) for _ in episodes]
    for row, e in zip(mask, episodes, strict=True):
        start = len(e.prompt_ids) - 1
        row[start:start + len(e.mask)] = e.mask
    lengths = mx.array([sum(e.mask) for e in episodes])
    return inputs, mx.array(mask, dtype=mx.bool_), lengths


def _sampling(model: Any, sampler: Any, stops: set[int], end: list[int],
              prompts: dict[tuple[int, ...], Any] | None = None) -> Callable[[list[int], int], list[int]]:
    """mlx-lm's ``generate_step`` as one episode's ``generate``: stop at EOS or the end token, within the budget.

    The episode's KV cache is kept from turn to turn, so a turn after a tool
    result reads only the result's tokens, not the whole context again.  With
    ``prompts`` (one dict for a batch's episodes), an episode's first turn
    starts from a copy of the cache of its prompt, prefilled once for every
    episode of that prompt, as mlx-lm-lora's ``generate_grpo`` shares it
    within a group.  The tokens are those without the caches, up to float
    rounding in the attention sums.
    """
    import mlx.core as mx
    from mlx_lm.generate import generate_step
    from mlx_lm.models.cache import can_trim_prompt_cache, trim_prompt_cache
    from mlx_lm_lora.trainer.online_rl_utils import build_shared_prompt_cache, fork_prompt_cache

    cache: list[Any] | None = None
    held: list[int] = []  # the tokens whose keys and values the cache holds

    def start(context: list[int]) -> tuple[list[Any] | None, list[int]]:
        if prompts is None:
            return None, []
        key = tuple(context)
        if key not in prompts:
            prompts[key] = build_shared_prompt_cache(model, context)
        forked = fork_prompt_cache(model, prompts[key])
        return (forked, context[:-1]) if forked is not None else (None, [])

    def generate(context: list[int], budget: int) -> list[int]:
        nonlocal cache, held
        out: list[int] = []
        if budget < 1:
            return out
        if cache is None or len(held) >= len(context) or context[:len(held)] != held:
            cache, held = start(context)
        if cache is None:
            from mlx_lm.models.cache import make_prompt_cache

            cache, held = make_prompt_cache(model), []
        for token, _ in generate_step(mx.array(context[len(held):]), model, max_tokens=budget, sampler=sampler,
                                      prompt_cache=cache):
            out.append(int(token))
            if out[-1] in stops or (end and out[-len(end):] == end):
                break
        seen, offset = context + out, cache[0].offset  # generate_step may have read the last token in already
        if offset > len(seen) and can_trim_prompt_cache(cache):
            trim_prompt_cache(cache, offset - len(seen))
            offset = len(seen)
        held = seen[:offset] if offset <= len(seen) else []
        if not held:
            cache = None
        return out

    return generate


@contextlib.contextmanager
def swapped(rollouts: AgentRollouts) -> Iterator[None]:
    """mlx-lm-lora's ``generate_grpo`` and ``_prepare_grpo_inputs`` replaced by the agent loop's, restored after."""
    from mlx_lm_lora.trainer import grpo_trainer

    saved = grpo_trainer.generate_grpo, grpo_trainer._prepare_grpo_inputs
    grpo_trainer.generate_grpo = rollouts.generate
    grpo_trainer._prepare_grpo_inputs = rollouts.prepare_inputs
    try:
        yield
    finally:
        grpo_trainer.generate_grpo, grpo_trainer._prepare_grpo_inputs = saved
