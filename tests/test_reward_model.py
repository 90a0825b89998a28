"""The `reward_model` pack: a tiny locally built reward model with a chat template, scored through the API,
an ensemble and the data check.

The model is a real ``LlamaForSequenceClassification`` (num_labels=1) and a real tokenizer, written with
``save_pretrained`` (the prm pack's builder), whose chat template writes the BOS itself, as Llama 3's does.
Expected values come from the model's own logits on the template's text, one conversation at a time.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from conftest import write_jsonl

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from grpo_host import Ensemble, RewardUnusable, check_rows, get_reward, read_rows  # noqa: E402
from reward_plugins.prm.tiny_prm import build_tiny_prm  # noqa: E402

TEMPLATE = "{{ bos_token }}{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
"""Llama 3's shape: the template writes the BOS, so encoding its text must add no special token."""

CHAT = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is 3*4+1?"}]
COMPLETIONS = ["13", "The answer is 13.", "<think>3*4 = 12, plus 1</think>13", "I do not know, maybe 7 or 9?"]


def build_reward_model(path: Path, *, template: str | None = TEMPLATE, **kwargs) -> Path:
    build_tiny_prm(path, "sequence_classification", step_tag=None, **kwargs)
    if template is not None:
        tokenizer = transformers.AutoTokenizer.from_pretrained(path)
        tokenizer.chat_template = template
        tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def model(tmp_path_factory) -> Path:
    return build_reward_model(tmp_path_factory.mktemp("reward_model") / "rm")


def scorer(model: Path, **params):
    return get_reward("reward_model").bind({"model": str(model), "device": "cpu", **params})


@torch.inference_mode()
def logit(model: Path, messages: list[dict]) -> float:
    """The model's logit on the template's text, encoded with no special token added, alone in its batch."""
    tokenizer = transformers.AutoTokenizer.from_pretrained(model)
    net = transformers.AutoModelForSequenceClassification.from_pretrained(model).eval()
    text = tokenizer.apply_chat_template(messages, tokenize=False)
    ids = tokenizer(text, add_special_tokens=False, return_tensors="pt")
    assert ids["input_ids"][0].tolist().count(tokenizer.bos_token_id) == 1  # the template's BOS, once
    return float(net(**ids).logits[0, 0])


def test_each_conversation_scores_the_models_logit_on_its_chat_template(model):
    rows = [(CHAT, c) for c in COMPLETIONS] + [("What is 3*4+1?", "13")]  # a text prompt is one user turn
    got = scorer(model, batch_size=3)(prompts=[p for p, _ in rows], completions=[c for _, c in rows])
    answers = [*COMPLETIONS[:2], "13", COMPLETIONS[3], "13"]  # reasoning=drop: the answer after </think>
    chats = [CHAT] * 4 + [[{"role": "user", "content": "What is 3*4+1?"}]]
    want = [logit(model, [*chat, {"role": "assistant", "content": a}]) for chat, a in zip(chats, answers, strict=True)]
    assert got == pytest.approx(want, abs=1e-5)
    assert len(set(round(v, 4) for v in got[:4])) > 1  # the model tells the answers apart
    assert got[2] == pytest.approx(got[0], abs=1e-5)  # the same answer once its reasoning is dropped
    kept = scorer(model, reasoning="keep")(prompts=[CHAT], completions=[COMPLETIONS[2]])
    assert kept[0] == pytest.approx(logit(model, [*CHAT, {"role": "assistant", "content": COMPLETIONS[2]}]), abs=1e-5)


def test_a_score_does_not_depend_on_its_batch(model):
    prompts, completions = [CHAT] * 4, COMPLETIONS
    alone = [scorer(model, batch_size=1)(prompts=[p], completions=[c])[0] for p, c in zip(prompts, completions,
                                                                                          strict=True)]
    assert scorer(model, batch_size=4)(prompts=prompts, completions=completions) == pytest.approx(alone, abs=1e-5)


def test_group_normalisation_gives_z_scores_within_each_prompts_group(model):
    other = [{"role": "user", "content": "Name a colour."}]
    prompts = [CHAT] * 4 + [other] * 2 + ["alone"]
    completions = [*COMPLETIONS, "red", "a colour", "x"]
    raw = scorer(model)(prompts=prompts, completions=completions)
    z = scorer(model, normalize="group")(prompts=prompts, completions=completions)
    for members in (range(4), range(4, 6)):
        values = [z[i] for i in members]
        assert math.fsum(values) == pytest.approx(0, abs=1e-9)
        assert math.fsum(v * v for v in values) / (len(values) - 1) == pytest.approx(1)  # sample std 1
        assert sorted(members, key=lambda i: raw[i]) == sorted(members, key=lambda i: z[i])  # order kept
    assert z[6] == 0.0  # a group of one has nothing to be relative to


def test_an_over_long_conversation_is_none_and_counted_never_cut(model):
    with Ensemble.from_spec(f"reward_model(model='{model}', device=cpu, max_length=40)") as ensemble:
        result = ensemble.score([CHAT[1]["content"]] * 2, ["13", "x" * 60])
    values = result.values["reward_model"]
    assert values[0] is not None and values[1] is None
    assert result.metrics["reward_model"].counts["too_long"] == 1


@pytest.mark.parametrize(("build", "message"), [
    ({"kind": "math_shepherd"}, "is a LlamaForCausalLM checkpoint; expected a reward model"),
    ({"num_labels": 2}, "has num_labels=2; expected a reward model"),
    ({"template": None}, "its tokenizer has no chat template; give the one the model was trained with"),
])
def test_a_checkpoint_that_is_not_a_reward_model_is_refused_saying_what_was_expected(tmp_path, build, message):
    kind = build.pop("kind", "sequence_classification")
    path = tmp_path / "not_rm"
    if kind == "sequence_classification":
        build_reward_model(path, **build)
    else:
        build_tiny_prm(path, kind)
    with pytest.raises(RewardUnusable, match=message):
        scorer(path)(prompts=["q"], completions=["a"])


def test_a_given_chat_template_serves_a_tokenizer_without_one(tmp_path):
    path = build_reward_model(tmp_path / "plain", template=None)
    got = scorer(path, chat_template=TEMPLATE)(prompts=["q"], completions=["a"])
    with_template = build_reward_model(tmp_path / "templated")  # the same weights (seed 0), the template saved
    assert got == pytest.approx([logit(with_template, [{"role": "user", "content": "q"},
                                                       {"role": "assistant", "content": "a"}])], abs=1e-5)


def test_data_check_names_rows_whose_prompt_the_model_cannot_read(tmp_path):
    data = write_jsonl(tmp_path / "rows.jsonl", [
        {"prompt": CHAT, "completion": "13"},
        {"prompt": [{"role": "narrator", "content": "hi"}], "completion": "13"},
        {"prompt": [{"role": "user", "content": ["an", "image"]}], "completion": "13"},
    ])
    report = check_rows(read_rows(data), [get_reward("reward_model")])
    assert sorted((p.reward, p.problem, p.rows) for p in report.problems) == [
        ("-", "'prompt' must be a string or a list of {role, content} messages with text contents", ["line 3"]),
        ("reward_model", "prompt message 0 has role 'narrator', not one of assistant, developer, system, tool, user",
         ["line 2"]),
    ]


@pytest.mark.skipif(not torch.cuda.is_available() and not torch.backends.mps.is_available(),
                    reason="no CUDA or MPS device here")
def test_the_accelerator_scores_as_the_cpu_does(model):
    device = "cuda" if torch.cuda.is_available() else "mps"
    on_cpu = scorer(model)(prompts=[CHAT] * 4, completions=COMPLETIONS)
    on_device = scorer(model, device=device, dtype="float32")(prompts=[CHAT] * 4, completions=COMPLETIONS)
    assert on_device == pytest.approx(on_cpu, abs=1e-3)


def test_the_shipped_tiny_model_is_what_its_script_builds_and_reads_sentence_ends(tmp_path):
    """The examples' model (reward_plugins/reward_model/tiny_model) is rebuilt by its script to the same weights and
    template, and its logit is +-1 by whether the answer ends a sentence, as its docstring says."""
    import subprocess
    import sys

    from safetensors.torch import load_file

    from reward_plugins.reward_model.rewards import TINY_MODEL

    script = Path(__file__).resolve().parents[1] / "scripts" / "build_tiny_reward_model.py"
    subprocess.run([sys.executable, str(script), str(tmp_path / "rebuilt")], check=True, capture_output=True)
    shipped, rebuilt = Path(TINY_MODEL), tmp_path / "rebuilt"
    want, got = load_file(shipped / "model.safetensors"), load_file(rebuilt / "model.safetensors")
    assert sorted(want) == sorted(got) and all(torch.equal(want[k], got[k]) for k in want)
    assert (shipped / "chat_template.jinja").read_text() == (rebuilt / "chat_template.jinja").read_text()
    values = scorer(Path(TINY_MODEL))(prompts=["Capital of France?"] * 4,
                                      completions=["Paris.", "Paris", "Is it Paris?", "<think>Paris.</think>Lyon"])
    assert values == pytest.approx([1.0, -1.0, 1.0, -1.0], abs=1e-5)
