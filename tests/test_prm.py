"""The `prm` pack: tiny locally built PRMs of each kind, scored through the API, an ensemble and the CLI.

Expected values are computed here from the models' own logits on inputs built
by hand in each family's format (TRL PRMTrainer, Math-Shepherd, TRL
RewardTrainer), independently of the pack's encoders.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import GRPO_HOST

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from grpo_host import Ensemble, get_reward  # noqa: E402
from reward_plugins.prm.loading import PRMModelError, load  # noqa: E402
from reward_plugins.prm.rewards import aggregate, split_steps  # noqa: E402
from reward_plugins.prm.tiny_prm import build_tiny_prm  # noqa: E402

KINDS = ("token_classification", "math_shepherd", "sequence_classification")
PROMPT = "What is 3*4+1?"
COMPLETIONS = [
    "3*4 = 12.\n\n12+1 = 13.\n\nThe answer is 13.",
    "3*4 = 7.\n\nSo 8.",
    "The answer is 13.",
    "First, multiply.\n\n\n\n3*4=12\n\nThen add one: 13.\n\nAnswer: 13",
    "  \n\n \n",  # no steps
    "Multiply ки\n\nAdd ки",  # a policy that learnt to write the tag
]


@pytest.fixture(scope="session")
def models(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("prm_models")
    return {kind: build_tiny_prm(root / kind, kind, seed=i) for i, kind in enumerate(KINDS)}


def prm(model: Path, kind: str, **params):
    return get_reward("prm").bind({"model": str(model), "kind": kind, "device": "cpu", **params})


def tokenizer(model: Path):
    return transformers.AutoTokenizer.from_pretrained(model)


@torch.inference_mode()
def expected_probs(
    model: Path, kind: str, prompt, completion: str, separator: str = "\n\n", max_length: int | None = None
) -> list[float]:
    """P(good) per step, from a fresh copy of the model run on a hand-built input, one sequence at a time.

    ``max_length`` cuts the token kinds' input by hand: BOS kept, then the last ``max_length - 1`` tokens.
    """
    tok = tokenizer(model)
    question = prompt if isinstance(prompt, str) else ""
    if kind == "sequence_classification":  # RewardTrainer: prompt + prefix + EOS, once per step prefix
        steps = [s.strip() for s in completion.split(separator) if s.strip()]
        net = transformers.AutoModelForSequenceClassification.from_pretrained(model).eval()
        out = []
        for k in range(1, len(steps) + 1):
            ids = tok(question + separator.join(steps[:k]) + tok.eos_token)["input_ids"]
            out.append(torch.sigmoid(net(torch.tensor([ids])).logits[0, 0]).item())
        return out
    if kind == "token_classification":  # TRL PRMTrainer.tokenize_row with step_separator "\n"
        steps = [s.strip() for s in completion.split(separator) if s.strip()]
        ids, positions = [tok.bos_token_id] + tok(question, add_special_tokens=False)["input_ids"], []
        for step in steps:
            ids += tok(step, add_special_tokens=False)["input_ids"] + tok("\n", add_special_tokens=False)["input_ids"]
            positions.append(len(ids) - 1)
        net = transformers.AutoModelForTokenClassification.from_pretrained(model).eval()
        pick = [1]
    else:  # Math-Shepherd: f"{question} {output}", steps ending in " ки", tokenizer.encode; + versus -
        steps = [s.strip() for s in completion.replace("ки", "").split(separator) if s.strip()]
        ids = tok.encode(f"{question} " + "\n".join(f"{s} ки" for s in steps))
        tag = tok.convert_tokens_to_ids("ки")
        positions = [i for i, t in enumerate(ids) if t == tag]
        net = transformers.AutoModelForCausalLM.from_pretrained(model).eval()
        pick = tok.convert_tokens_to_ids(["+", "-"])
    if max_length is not None and len(ids) > max_length:
        cut = len(ids) - max_length
        ids = ids[:1] + ids[1 + cut:]
        positions = [p - cut for p in positions if p - cut >= 1]
    logits = net(torch.tensor([ids])).logits[0]
    return [logits[p, pick].softmax(-1)[0].item() if len(pick) == 2 else logits[p].softmax(-1)[1].item()
            for p in positions]


# --- steps and aggregation ------------------------------------------------------------------------------


def test_split_steps_on_blank_lines_lines_and_custom_separators():
    text = "Step 1: a\n\nStep 2: b\nmore b\n\n\n\nStep 3: c\n\n"
    assert split_steps(text, "\n\n") == ["Step 1: a", "Step 2: b\nmore b", "Step 3: c"]
    assert split_steps(text, "\n") == ["Step 1: a", "Step 2: b", "more b", "Step 3: c"]
    assert split_steps("x ки y ки", "ки") == ["x", "y"]
    assert split_steps(" \n\n\t\n\n", "\n\n") == []
    assert split_steps("one step", "\n\n") == ["one step"]


def test_aggregations_follow_their_definitions():
    probs = [0.9, 0.5, 0.8]
    assert aggregate(probs, "min") == 0.5
    assert aggregate(probs, "mean") == pytest.approx((0.9 + 0.5 + 0.8) / 3)
    assert aggregate(probs, "last") == 0.8
    assert aggregate(probs, "product") == pytest.approx(0.9 * 0.5 * 0.8)
    assert aggregate([], "min") is None


# --- scores equal the model's own logits ----------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_every_aggregation_equals_hand_computed_values_from_the_logits(models, kind):
    per_step = [expected_probs(models[kind], kind, PROMPT, c) for c in COMPLETIONS]
    assert [len(p) for p in per_step] == [3, 2, 1, 4, 0, 2]
    assert len({round(p, 6) for probs in per_step for p in probs}) > 5  # the tiny model tells steps apart
    for how in ("min", "mean", "last", "product"):
        got = prm(models[kind], kind, aggregation=how)(prompts=[PROMPT] * len(COMPLETIONS), completions=COMPLETIONS)
        want = [aggregate(p, how) for p in per_step]
        assert got[4] is None and want[4] is None
        assert [g for g in got if g is not None] == pytest.approx([w for w in want if w is not None], abs=1e-5)
        assert all(0.0 <= g <= 1.0 and math.isfinite(g) for g in got if g is not None)


@pytest.mark.parametrize("kind", KINDS)
def test_batching_equals_one_by_one_scoring(models, kind):
    completions = COMPLETIONS * 2
    prompts = [PROMPT, "Short?", None, "A much longer prompt, about many things, that pads the batch."] * 3
    together = prm(models[kind], kind, batch_size=5)(prompts=prompts, completions=completions)
    single = prm(models[kind], kind, batch_size=1)
    alone = [single(prompts=[p], completions=[c])[0] for p, c in zip(prompts, completions, strict=False)]
    assert [v is None for v in together] == [v is None for v in alone]
    assert [v for v in together if v is not None] == pytest.approx([v for v in alone if v is not None], abs=1e-5)


def test_chat_prompt_contributes_its_last_user_message(models):
    reward = prm(models["token_classification"], "token_classification", aggregation="mean")
    chat = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": PROMPT}]
    assert reward(prompts=[chat], completions=COMPLETIONS[:1]) == pytest.approx(
        reward(prompts=[PROMPT], completions=COMPLETIONS[:1])
    )
    assert reward(prompts=[chat], completions=COMPLETIONS[:1]) != pytest.approx(
        reward(prompts=["Something else entirely"], completions=COMPLETIONS[:1])
    )


def test_newline_splitting_is_configurable(models):
    model, kind = models["token_classification"], "token_classification"
    completion = "3*4 = 12\n12+1 = 13\nThe answer is 13."
    want = expected_probs(model, kind, PROMPT, completion, separator="\n")
    assert len(want) == 3
    got = prm(model, kind, step_separator="\n", aggregation="product")(prompts=[PROMPT], completions=[completion])
    assert got == pytest.approx([math.prod(want)], abs=1e-6)
    blank = prm(model, kind, aggregation="product")(prompts=[PROMPT], completions=[completion])
    assert blank == pytest.approx([expected_probs(model, kind, PROMPT, completion)[0]], abs=1e-6)  # one step


@pytest.mark.parametrize("kind", ["token_classification", "math_shepherd"])
def test_long_inputs_are_cut_from_the_left_so_the_last_steps_survive(models, kind):
    completion = "\n\n".join(f"Step {i}: carry the {i}." for i in range(40))
    want = expected_probs(models[kind], kind, PROMPT, completion, max_length=64)
    assert 1 <= len(want) < 40  # the first steps were cut off, the last ones survived
    for how in ("last", "min", "product"):
        got = prm(models[kind], kind, max_length=64, aggregation=how)(prompts=[PROMPT], completions=[completion])
        assert got == pytest.approx([aggregate(want, how)], abs=1e-5)


def test_inputs_never_exceed_the_model_positions(tmp_path):
    from reward_plugins.prm.scoring import encode

    path = build_tiny_prm(tmp_path / "short", "token_classification", max_positions=64)
    reward = prm(path, "token_classification", aggregation="last")  # max_length 2048 by default
    completion = "\n\n".join(f"Step {i}: carry the {i}." for i in range(40))
    (item,) = encode([completion], [PROMPT], load(str(path), "token_classification", "cpu", "auto"), reward.bound)
    assert len(item.ids) == 64 and item.positions[-1] == 63
    want = expected_probs(path, "token_classification", PROMPT, completion, max_length=64)
    assert reward(prompts=[PROMPT], completions=[completion]) == pytest.approx([want[-1]], abs=1e-5)


def test_model_is_loaded_once_per_process_and_kind(models):
    path = str(models["token_classification"])
    first = load(path, "token_classification", "cpu", "auto")
    assert load(path, "token_classification", "cpu", "auto") is first
    assert load(path, "token_classification", "cpu", "bfloat16") is not first


# --- error paths ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("checkpoint", "kind", "expected"),
    [
        ("math_shepherd", "token_classification", "LlamaForCausalLM checkpoint; kind=token_classification expects"),
        ("token_classification", "sequence_classification", "expects a AutoModelForSequenceClassification"),
        ("sequence_classification", "math_shepherd", "expects a AutoModelForCausalLM checkpoint"),
    ],
)
def test_a_checkpoint_of_another_head_is_refused_at_load(models, checkpoint, kind, expected):
    with pytest.raises(PRMModelError, match=expected):
        prm(models[checkpoint], kind)(prompts=[PROMPT], completions=COMPLETIONS[:1])


def test_a_checkpoint_without_architectures_is_refused_by_its_missing_head(models, tmp_path):
    path = build_tiny_prm(tmp_path / "causal", "math_shepherd")
    config = json.loads((path / "config.json").read_text())
    del config["architectures"]
    (path / "config.json").write_text(json.dumps(config))
    with pytest.raises(PRMModelError, match=r"no trained weights for score\.(bias|weight).*ForTokenClassification"):
        load(str(path), "token_classification", "cpu", "auto")


def test_a_label_count_mismatch_is_refused(tmp_path):
    path = build_tiny_prm(tmp_path / "three", "token_classification", num_labels=3)
    with pytest.raises(PRMModelError, match="num_labels=3; kind=token_classification .* with num_labels=2"):
        load(str(path), "token_classification", "cpu", "auto")


def test_a_tokenizer_without_the_step_tag_is_refused(tmp_path):
    path = build_tiny_prm(tmp_path / "no_tag", "math_shepherd", step_tag=None)
    reward = get_reward("prm").bind({"model": str(path), "kind": "math_shepherd", "device": "cpu"})
    with pytest.raises(PRMModelError, match="no single token for step_tag='ки'"):
        reward(prompts=[PROMPT], completions=[COMPLETIONS[4]])  # even a batch with no steps checks the model
    custom = reward.bind({"model": str(path), "kind": "math_shepherd", "step_tag": "!", "device": "cpu"})
    assert custom(prompts=[PROMPT], completions=COMPLETIONS[:2])[0] is not None  # a tag it does have works


def test_a_device_that_is_not_there_is_named(models):
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    with pytest.raises(ValueError, match="device='cuda', but torch .* sees no CUDA GPU"):
        prm(models["token_classification"], "token_classification", device="cuda")(prompts=[PROMPT], completions=["a"])


def test_sequence_classification_uses_the_chat_template_for_chat_prompts(models, tmp_path):
    path = tmp_path / "chat_rm"
    shutil.copytree(models["sequence_classification"], path)
    tok = tokenizer(path)
    tok.chat_template = "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    tok.save_pretrained(path)
    chat = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": PROMPT}]
    completion = "3*4 = 12.\n\n12+1 = 13."
    net = transformers.AutoModelForSequenceClassification.from_pretrained(path).eval()
    want = []
    for prefix in ("3*4 = 12.", completion):
        text = f"system: Be brief.\nuser: {PROMPT}\nassistant: {prefix}\n"  # the template, rendered by hand
        ids = tok(text, add_special_tokens=False)["input_ids"]  # a chat template writes its own special tokens
        with torch.inference_mode():
            want.append(torch.sigmoid(net(torch.tensor([ids])).logits[0, 0]).item())
    got = prm(path, "sequence_classification", aggregation="product")(prompts=[chat], completions=[completion])
    assert got == pytest.approx([want[0] * want[1]], abs=1e-6)


def test_parameters_are_validated_with_their_names():
    with pytest.raises(ValueError, match="model"):
        get_reward("prm").bind({"kind": "token_classification"})
    with pytest.raises(ValueError, match="aggregation"):
        get_reward("prm").bind({"model": "x", "aggregation": "median"})
    with pytest.raises(ValueError, match="device"):
        get_reward("prm").bind({"model": "x", "device": "gpu"})


# --- inside an ensemble and through the CLI ------------------------------------------------------------


def test_prm_in_an_ensemble_with_other_rewards(models):
    model = models["math_shepherd"]
    completions = [c + "\n\n<answer>13</answer>" for c in COMPLETIONS[:3]] + [COMPLETIONS[4]]
    spec = f"prm(model='{model}', kind=math_shepherd, aggregation=mean, device=cpu):2, r1_int:1"
    with Ensemble.from_spec(spec) as ensemble:
        result = ensemble.score(completions, [PROMPT] * 4)
    want = [aggregate(expected_probs(model, "math_shepherd", PROMPT, c), "mean") for c in completions]
    assert result.values["prm"][:3] == pytest.approx(want[:3], abs=1e-5)
    assert result.values["prm"][3] is None
    assert result.values["r1_int"] == [1.0, 1.0, 1.0, 0.0]
    assert result.total == pytest.approx([2 * w + 1.0 for w in want[:3]] + [0.0], abs=1e-5)
    assert result.metrics["prm"].coverage == 0.75 and result.metrics["prm"].errors == 0


def run_cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run([GRPO_HOST, *args], capture_output=True, text=True, timeout=300, env=env)


@pytest.mark.slow  # a CLI process loading a model per kind
@pytest.mark.parametrize("kind", KINDS)
def test_cli_score_reports_the_hand_computed_values(models, kind, tmp_path):
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps({"prompt": PROMPT, "completion": c}) + "\n" for c in COMPLETIONS))
    out = tmp_path / "scores.jsonl"
    spec = f"prm(model='{models[kind]}', kind={kind}, aggregation=min, batch_size=4, device=cpu)"
    proc = run_cli("score", str(data), "--rewards", spec, "--out", str(out), "--json")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["rows"] == len(COMPLETIONS) and summary["rewards"]["prm"]["coverage"] == pytest.approx(5 / 6)
    got = [json.loads(line)["rewards"]["prm"] for line in out.read_text().splitlines()]
    want = [aggregate(expected_probs(models[kind], kind, PROMPT, c), "min") for c in COMPLETIONS]
    assert got[4] is None and want[4] is None
    assert [g for g in got if g is not None] == pytest.approx([w for w in want if w is not None], abs=1e-5)


@pytest.mark.slow  # a CLI process loading a model
def test_cli_names_the_expected_head_when_the_kind_is_wrong(models, tmp_path):
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps({"prompt": PROMPT, "completion": COMPLETIONS[0]}) + "\n")
    spec = f"prm(model='{models['sequence_classification']}', kind=token_classification, device=cpu)"
    proc = run_cli("score", str(data), "--rewards", spec)
    assert proc.returncode == 2
    assert "reward 'prm'" in proc.stderr and "expects a AutoModelForTokenClassification" in proc.stderr


def test_listing_and_showing_import_neither_torch_nor_transformers():
    code = (
        "import sys, grpo_host; r = grpo_host.get_reward('prm'); "
        "assert 'torch' not in sys.modules and 'transformers' not in sys.modules, 'heavy import'; print(r.pack)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    show = run_cli("rewards", "show", "prm")
    assert show.returncode == 0, show.stderr
    for text in ("kind=token_classification", "kind=math_shepherd", "kind=sequence_classification",
                 "softmax(logit(good_token), logit(bad_token))[0]", "min = the weakest step", "product = the product",
                 "grpo-host[prm]"):
        assert text in " ".join(show.stdout.split()), text


# --- in a training run --------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(("backend", "engine"), [("trl", "trl"), ("mlx", "mlx_lm_lora")])
def test_a_training_run_trains_with_prm_in_the_ensemble(models, tmp_path, backend, engine):
    """Two GRPO steps of the built-in tiny policy on the letters example, the PRM weighted next to a task reward."""
    pytest.importorskip(engine, reason=f"the {backend} extra is not installed")
    examples = Path(__file__).resolve().parents[1] / "examples"
    config = tmp_path / "run.yaml"
    config.write_text(
        f"model: builtin:tiny\n"
        f"data: {examples / 'letters.jsonl'}\n"
        f"plugins: [{examples / 'letters_rewards.py'}]\n"
        f"rewards: \"letter_share:1, prm(model='{models['token_classification']}', kind=token_classification, "
        f"step_separator=' ', device=cpu):0.5\"\n"
        f"backend: {backend}\ngroup_size: 4\nbatch_size: 2\nmax_steps: 2\nmax_completion_length: 8\nsave_every: 2\n"
        f"output_dir: {tmp_path / 'out'}\n"
    )
    proc = run_cli("train", str(config))
    assert proc.returncode == 0, proc.stderr[-3000:]
    steps = [json.loads(line) for line in (tmp_path / "out" / "metrics.jsonl").read_text().splitlines()]
    steps = [s for s in steps if "rewards/prm/mean" in s]
    assert [s["step"] for s in steps] == [1, 2]
    for s in steps:
        assert 0.0 <= s["rewards/prm/mean"] <= 1.0 and s["rewards/prm/errors"] == 0
        assert s["rewards/prm/coverage"] > 0
