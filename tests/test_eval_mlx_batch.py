"""``grpo-host eval --backend mlx`` generates a batch of prompts × k samples with mlx-lm's ``batch_generate``.

The real ``mlx[cpu]`` and the built-in tiny model: greedy batched samples are
the tokens mlx-lm's one-at-a-time generation gives each prompt (prompts of
different lengths, so left padding is in play), the model is called with the
whole batch at once, and through the CLI k samples per prompt reach the
record and a killed evaluation resumes.
"""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from test_eval import ROOT, eval_cmd, letters, run
from train_helpers import kill_when

from grpo_host.runs.record import read_record
from grpo_host.training.builtin_model import resolve_model
from grpo_host.training.evaluate import EvalSettings, mlx_generator

mlx_lm = pytest.importorskip("mlx_lm")

PROMPTS = ["a", "Write three words.", "Say hello to the world in lower case letters, please.", "xyz xyz"]
"""Text prompts of different lengths: the short ones are left-padded in the batch."""
MOST = 12


def settings(**given) -> EvalSettings:
    return EvalSettings(model="builtin:tiny", data="", rewards="", temperature=0.0, top_p=1.0, top_k=0, min_p=0.0,
                        max_completion_length=MOST, seed=7, backend="mlx", **given)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> str:
    return resolve_model("builtin:tiny", tmp_path_factory.mktemp("tiny-cache"))


def one_at_a_time(path: str, prompt: str) -> list[int]:
    """mlx-lm's own single-prompt generation, greedy, cut where eval cuts (EOS or the pad token)."""
    from mlx_lm.sample_utils import make_sampler

    model, tokenizer = mlx_lm.load(path)
    stops = set(tokenizer.eos_token_ids) | ({tokenizer.pad_token_id} - {None})
    ids = tokenizer.encode(prompt, add_special_tokens=False)
    out = []
    for step in mlx_lm.stream_generate(model, tokenizer, ids, max_tokens=MOST, sampler=make_sampler(temp=0.0)):
        if step.token in stops:
            break
        out.append(int(step.token))
    return out


def test_greedy_batched_samples_are_mlx_lm_s_one_at_a_time_tokens(tiny):
    model, tokenizer = mlx_lm.load(tiny)
    assert len({len(tokenizer.encode(p, add_special_tokens=False)) for p in PROMPTS}) == len(PROMPTS)
    got = mlx_generator(tiny, settings())(PROMPTS, 3, 7)
    assert [len(samples) for samples in got] == [3] * len(PROMPTS)
    for prompt, samples in zip(PROMPTS, got, strict=True):
        expected = one_at_a_time(tiny, prompt)
        assert [s.ids for s in samples] == [expected] * 3, prompt
        assert samples[0].text == tokenizer.decode(expected, skip_special_tokens=True)


def test_the_model_is_called_with_every_prompt_k_times_in_one_batch(tiny, monkeypatch):
    widths: list[int] = []
    real_load = mlx_lm.load

    def load_recording(path, *args, **kwargs):  # the real model; its calls' batch widths noted
        loaded = real_load(path, *args, **kwargs)
        kind = type(loaded[0])
        call = kind.__call__

        def recording(self, inputs, *a, **kw):
            widths.append(int(inputs.shape[0]))
            return call(self, inputs, *a, **kw)

        monkeypatch.setattr(kind, "__call__", recording)
        return loaded

    monkeypatch.setattr(mlx_lm, "load", load_recording)
    mlx_generator(tiny, settings())(PROMPTS, 2, 7)
    assert max(widths) == len(PROMPTS) * 2


@pytest.mark.slow  # two eval runs on mlx: about 10 s
def test_k_samples_per_prompt_reach_the_record_and_a_killed_mlx_eval_resumes(env, tmp_path):
    data, out = letters(tmp_path, 24), tmp_path / "ev"
    cmd = eval_cmd("builtin:tiny", data, out, "-k", "3", "--batch-size", "2", "--backend", "mlx")
    kill_when(cmd, lambda: len(list((out / "rollouts").glob("*.parquet"))) >= 2, "two record parts", env=env,
              cwd=ROOT)
    before = {p.name: pq.read_table(p)["row_id"].to_pylist() for p in (out / "rollouts").glob("*.parquet")}
    held = {i for ids in before.values() for i in ids}
    assert 0 < len(held) < 24

    resumed = run([*cmd, "--resume", "--json"], env)
    assert resumed.returncode == 0, resumed.stderr
    found = json.loads(resumed.stdout)
    assert (found["resumed_prompts"], found["generated_prompts"]) == (len(held), 24 - len(held))
    table = read_record(out).to_pylist()
    assert sorted(r["row_id"] for r in table) == sorted(list(range(24)) * 3) and found["samples"] == 72
    # at temperature 1 the tiny model may sample EOS first: an empty completion is a sample too
    assert all(0 <= r["length"] <= 6 for r in table) and {r["completion"] for r in table} != {""}


def test_a_chat_prompt_is_rendered_through_the_template_as_one_at_a_time(tiny):
    _, tokenizer = mlx_lm.load(tiny)
    chat = [{"role": "user", "content": "Write three words."}]
    text = tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
    got = mlx_generator(tiny, settings())([chat, "a"], 1, 7)
    assert got[0][0].ids == one_at_a_time(tiny, text)

