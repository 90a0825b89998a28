"""``grpo_host.integrations.verl`` called by verl's own code: its config, loader, managers and reward loop.

verl itself is not installed in the project's environment: ``pip install
verl`` (0.9.1) would replace transformers 5.24 with 5.10 and antlr4 4.13 with
4.9 (which latex2sympy2, behind ``math``, needs) and pull wandb, tensorboard
and hydra into the environment the TRL tests use.  In a venv of its own it
installs, and ``test_real_verl_modules_drive_the_adapter`` runs
``benchmarks/serve_verl.py`` there (``GRPO_HOST_VERL_PYTHON``: that venv's
interpreter) with verl's real reward loop, managers and ``DataProto``; it
is skipped, saying so, where there is none.  The other tests drive the call
sites vendored with their license and commit (``tests/vendored/verl_reward.py``,
``tests/vendored/verl_managers.py``, verl's generated trainer config) and
driven as verl drives them: the config loaded with OmegaConf and overridden
as Hydra does (``key=value`` must exist, ``+key=value`` adds), the function
loaded by verl's ``get_custom_reward_fn``, responses tokenized with a real
tokenizer (the built-in tiny one; its EOS is ``</s>``) and decoded by the
managers themselves.
"""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from grpo_host import RewardUnusable

pytestmark = pytest.mark.slow  # left out of the fast lane: torch, transformers, a tokenizer, prime's process pool

torch = pytest.importorskip("torch")
omegaconf = pytest.importorskip("omegaconf")
pytest.importorskip("transformers")

from vendored import verl_managers, verl_reward  # noqa: E402

GOOD = "<think>\nadd\n</think>\n<answer>\n4\n</answer>\n"
ADAPTER = "pkg://grpo_host.integrations.verl"


def verl_config(*overrides: tuple[str, object]):
    """verl's default trainer config with Hydra-style overrides: a plain key must exist, ``+`` adds one."""
    config = omegaconf.OmegaConf.load(Path(verl_reward.__file__).with_name("verl_ppo_trainer.yaml"))
    omegaconf.OmegaConf.set_struct(config, True)
    for key, value in overrides:
        omegaconf.OmegaConf.update(config, key.lstrip("+"), value, force_add=key.startswith("+"))
    return config


def current(rewards: str, **kwargs) -> object:
    """verl >= 0.9: the keys under ``reward.``, as docs/scaling.md gives them."""
    return verl_config(("reward.custom_reward_function.path", ADAPTER),
                       ("reward.custom_reward_function.name", "compute_score"),
                       ("+reward.custom_reward_function.reward_kwargs.rewards", rewards),
                       *((f"+reward.custom_reward_function.reward_kwargs.{k}", v) for k, v in kwargs.items()))


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    from grpo_host.training.builtin_model import tiny_model_dir

    return AutoTokenizer.from_pretrained(tiny_model_dir())


class Proto:
    """The surface of verl's ``DataProto`` these call sites use: ``batch`` tensors, ``non_tensor_batch`` arrays,
    ``len``, iteration, an int index (one item) and a slice (a smaller batch)."""

    def __init__(self, batch: dict, non_tensor_batch: dict, meta_info: dict | None = None) -> None:
        self.batch, self.non_tensor_batch, self.meta_info = batch, non_tensor_batch, meta_info or {}

    def __len__(self) -> int:
        return len(self.batch["responses"])

    def __getitem__(self, i):
        if isinstance(i, slice):
            return Proto({k: v[i] for k, v in self.batch.items()}, {k: v[i] for k, v in self.non_tensor_batch.items()},
                         self.meta_info)
        return SimpleNamespace(batch={k: v[i] for k, v in self.batch.items()},
                               non_tensor_batch={k: v[i] for k, v in self.non_tensor_batch.items()})

    def __iter__(self):
        return (self[i] for i in range(len(self)))


def proto(tokenizer, items: list[dict], prompt_len: int = 16, response_len: int = 64) -> Proto:
    """A rollout batch as verl's actor hands it over: left-padded prompts, right-padded responses ending in EOS."""
    pad, eos = tokenizer.pad_token_id, tokenizer.eos_token_id
    prompts, responses, masks = [], [], []
    for it in items:
        p = tokenizer("q", add_special_tokens=False)["input_ids"][-prompt_len:]
        r = (tokenizer(it["response"], add_special_tokens=False)["input_ids"] + [eos])[:response_len]
        prompts.append([pad] * (prompt_len - len(p)) + p)
        responses.append(r + [pad] * (response_len - len(r)))
        masks.append([0] * (prompt_len - len(p)) + [1] * len(p) + [1] * len(r) + [0] * (response_len - len(r)))
    objects = lambda values: np.array(values + [None], dtype=object)[:-1]  # noqa: E731  (one object per row)
    return Proto({"prompts": torch.tensor(prompts), "responses": torch.tensor(responses),
                  "attention_mask": torch.tensor(masks)},
                 {"data_source": objects([it.get("source", "openai/gsm8k") for it in items]),
                  "reward_model": objects([{"ground_truth": it["truth"]} for it in items]),
                  "extra_info": objects([{"split": "train", "index": i, **it.get("extra", {})}
                                         for i, it in enumerate(items)])})


ITEMS = [{"response": GOOD, "truth": "4"}, {"response": GOOD, "truth": "5"}, {"response": "no tags", "truth": "4"},
         {"response": GOOD, "truth": None}]
WANT = [1.5, 0.5, 0.0, 0.0]  # accuracy:1 + r1_strict_format:0.5; the last row lacks accuracy's answer: a bad row


def last_token_rewards(reward_tensor, data: Proto) -> list[float]:
    ends = data.batch["attention_mask"][:, data.batch["prompts"].shape[-1]:].sum(-1) - 1
    return [reward_tensor[i, e].item() for i, e in enumerate(ends.tolist())]


def test_config_keys_for_current_and_older_verl():
    """verl >= 0.9 reads reward.custom_reward_function; the old top-level keys are ignored by main_ppo's path."""
    fn = verl_reward.get_custom_reward_fn(current("accuracy"))
    assert fn.args[0].__module__ == "grpo_host.integrations.verl" and fn.args[1] == {"rewards": "accuracy"}
    legacy = verl_config(("custom_reward_function.path", ADAPTER), ("custom_reward_function.name", "compute_score"),
                         ("+custom_reward_function.reward_kwargs.rewards", "accuracy"))
    assert verl_reward.get_custom_reward_fn(legacy) is None  # silently verl's own scorer: why the docs changed
    # only the fully-async entry point migrates them; a release before 0.9 read them where they are
    assert verl_reward.get_custom_reward_fn(verl_reward.migrate_legacy_reward_impl(legacy)).args[1] == {
        "rewards": "accuracy"}
    older = omegaconf.OmegaConf.create({"custom_reward_function": {
        "path": ADAPTER, "name": "compute_score", "reward_kwargs": {"rewards": "accuracy"}}})
    assert verl_reward.get_custom_reward_fn_before_0_9(older).args[1] == {"rewards": "accuracy"}
    with pytest.raises(omegaconf.errors.ConfigKeyError):  # without "+", a key verl's config lacks is refused
        verl_config(("reward.custom_reward_function.reward_kwargs.rewards", "accuracy"))


def test_naive_manager(tokenizer):
    fn = verl_reward.get_custom_reward_fn(current("accuracy:1, r1_strict_format:0.5"))
    data = proto(tokenizer, ITEMS)
    out = verl_managers.NaiveRewardManager(tokenizer, 0, fn)(data, return_dict=True)
    assert last_token_rewards(out["reward_tensor"], data) == WANT
    extra = out["reward_extra_info"]
    assert extra["grpo_host/accuracy"] == [1.0, 0.0, 0.0, 0.0]
    assert extra["grpo_host/scored"] == [1.0, 1.0, 1.0, 0.0]
    assert {k: np.array(v).shape for k, v in extra.items()} == {k: (4,) for k in extra}  # what verl does next


def test_batch_manager_batched_signature(tokenizer):
    fn = verl_reward.get_custom_reward_fn(current("accuracy:1, r1_strict_format:0.5"))
    data = proto(tokenizer, ITEMS)
    out = verl_managers.BatchRewardManager(tokenizer, 0, fn)(data, return_dict=True)
    assert last_token_rewards(out["reward_tensor"], data) == WANT
    assert out["reward_extra_info"]["grpo_host/scored"] == [1.0, 1.0, 1.0, 0.0]
    assert data.batch["acc"].tolist() == WANT


def test_prime_manager_reads_a_number(tokenizer):
    """prime calls positionally in a process pool and reads float(result) or result[0]: a dict was KeyError 0."""
    fn = verl_reward.get_custom_reward_fn(current("accuracy:1, r1_strict_format:0.5"))
    data = proto(tokenizer, ITEMS[:3])
    reward_tensor = verl_managers.PrimeRewardManager(tokenizer, 0, fn)(data)
    assert last_token_rewards(reward_tensor, data) == WANT[:3]


def test_reward_loop_32_threads_micro_batched(tokenizer):
    """The reward loop's workers call once per response from the event loop's thread pool (32 threads on a big
    node): each thread gets its own row's answer, and the rows arrive at the ensemble in shared micro-batches."""
    from grpo_host.integrations import scorer

    config = current("accuracy:1, r1_strict_format:0.5")
    fn = verl_reward.get_custom_reward_fn(config)
    items = [{"response": GOOD if n % 2 else "plain", "truth": str(n % 3 + 3)} for n in range(96)]
    data = proto(tokenizer, items)

    async def run():
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(32))
        manager = verl_managers.LoopNaiveRewardManager(config, tokenizer, fn)
        return await verl_managers.RewardLoopWorker(config, manager).compute_score_batch(data)

    before = sum(b.batches for b in scorer._batchers.values())
    outputs = asyncio.run(run())
    accuracy = [float(n % 2 == 1 and n % 3 == 1) for n in range(96)]  # tags on odd rows; the gold is 4 when n % 3 == 1
    assert [o["reward_score"] for o in outputs] == [a + 0.5 * (n % 2) for n, a in enumerate(accuracy)]
    assert [o["reward_extra_info"]["grpo_host/accuracy"] for o in outputs] == accuracy
    assert sum(b.batches for b in scorer._batchers.values()) - before < 96  # rows shared micro-batches


def test_code_rows_take_their_tests_from_ground_truth(tokenizer):
    """verl's code datasets: ground_truth is prime_code JSON; stdin/stdout cases and call-based (fn_name) ones."""
    from grpo_host.data import prime_code_tests

    stdin = json.dumps({"inputs": ["1 2\n", "5 5\n"], "outputs": ["3\n", "10\n"]})
    calls = json.dumps({"fn_name": "add", "inputs": [[1, 2], [0, 5]], "outputs": [3, 5]})
    assert prime_code_tests(stdin) == [{"input": "1 2\n", "output": "3\n"}, {"input": "5 5\n", "output": "10\n"}]
    assert prime_code_tests(calls) == "assert add(1, 2) == 3\nassert add(0, 5) == 5"
    assert prime_code_tests("42") is None and prime_code_tests({"inputs": [1]}) is None
    from grpo_host import Ensemble

    try:
        Ensemble.from_spec("code").close()
    except Exception as exc:  # no sandbox on this machine: the code reward refuses to bind
        pytest.skip(f"the code reward cannot run here: {exc}")
    fn = verl_reward.get_custom_reward_fn(current("code"))
    items = [{"response": "```python\nprint(sum(map(int, input().split())))\n```", "truth": stdin,
              "source": "codecontests"},
             {"response": "```python\ndef add(a, b):\n    return a + b if a else 0\n```", "truth": calls,
              "source": "leetcode"},
             {"response": "```python\nprint(0)\n```", "truth": stdin, "source": "codecontests"}]
    data = proto(tokenizer, items, response_len=96)
    out = verl_managers.NaiveRewardManager(tokenizer, 0, fn)(data, return_dict=True)
    assert last_token_rewards(out["reward_tensor"], data) == [1.0, 0.5, 0.0]


def test_trailing_special_tokens_are_stripped():
    """A response decoded with its EOS and padding (skip_special_tokens=False) scores as the bare response."""
    fn = verl_reward.get_custom_reward_fn(current("r1_strict_format", end_tokens=["<|im_end|>", "<|endoftext|>"]))
    reply = fn(data_source="x", solution_str=GOOD + "<|im_end|>\n<|endoftext|><|endoftext|>", ground_truth=None,
               extra_info={})
    assert reply["score"] == 1.0
    inside = fn(data_source="x", solution_str="<|im_end|>" + GOOD, ground_truth=None, extra_info={})
    assert inside["score"] == 0.0  # only the end of the text is touched


def test_data_sources_from_the_environment(monkeypatch, tokenizer):
    monkeypatch.setenv("GRPO_HOST_VERL_REWARDS", '{"openai/gsm8k": "accuracy", "*": "r1_strict_format"}')
    config = verl_config(("reward.custom_reward_function.path", ADAPTER))
    fn = verl_reward.get_custom_reward_fn(config)
    data = proto(tokenizer, [{"response": GOOD, "truth": "4"}, {"response": "plain", "truth": "4", "source": "o"},
                             {"response": GOOD, "truth": "9", "source": "x"}])
    out = verl_managers.NaiveRewardManager(tokenizer, 0, fn)(data, return_dict=True)
    assert last_token_rewards(out["reward_tensor"], data) == [1.0, 0.0, 1.0]
    # every reply carries every configured reward's key, whichever spec scored it
    assert set(out["reward_extra_info"]) == {"score", "grpo_host/accuracy", "grpo_host/r1_strict_format",
                                             "grpo_host/scored"}


def test_extra_info_becomes_columns(monkeypatch, tokenizer):
    from grpo_host.integrations import verl

    monkeypatch.setitem(verl.DATA_SOURCES, "echo", "r1_soft_format:1, accuracy:1")
    fn = verl_reward.get_custom_reward_fn(verl_config(("reward.custom_reward_function.path", ADAPTER)))
    # the gold can also arrive through extra_info: ground_truth None, extra_info {"answer": ...}
    assert fn(data_source="echo", solution_str=GOOD, ground_truth=None, extra_info={"answer": "4"})["score"] == 2.0
    # a ground truth that is not text (a list, a number) reaches the answer column as JSON
    assert fn(data_source="echo", solution_str="<think>\n.\n</think>\n<answer>\n[1, 2]\n</answer>\n",
              ground_truth=[1, 2], extra_info={})["score"] == 2.0


def test_an_unmapped_data_source_is_a_configuration_error(monkeypatch):
    monkeypatch.delenv("GRPO_HOST_VERL_REWARDS", raising=False)
    fn = verl_reward.get_custom_reward_fn(verl_config(("reward.custom_reward_function.path", ADAPTER)))
    with pytest.raises(RewardUnusable, match="no grpo-host rewards for data_source 'openai/gsm8k'"):
        fn(data_source="openai/gsm8k", solution_str=GOOD, ground_truth="4", extra_info={})


def test_numpy_ground_truths_and_mismatched_batches():
    """verl's non-tensor batch holds numpy values: an array gold reaches the answer column as JSON; a batch call
    whose lists differ in length is refused by name rather than scored short."""
    import grpo_host.integrations.verl as adapter

    fn = verl_reward.get_custom_reward_fn(current("accuracy"))
    reply = fn(data_source="x", solution_str="<answer>\n[1, 2]\n</answer>", ground_truth=np.array([1, 2]),
               extra_info={"index": np.int64(3)})
    assert reply["score"] == 1.0
    with pytest.raises(ValueError, match="one entry per response"):
        adapter.compute_score(data_sources=["x", "x"], solution_strs=["a", "b"], ground_truths=["1"],
                              extra_infos=[{}, {}], rewards="accuracy")


VERL_PYTHON = "GRPO_HOST_VERL_PYTHON"


def verl_python() -> str:
    """An interpreter with verl installed: this one, else ``GRPO_HOST_VERL_PYTHON``; the test is skipped without."""
    import importlib.util
    import os
    import subprocess
    import sys

    if importlib.util.find_spec("verl") is not None:
        return sys.executable
    candidate = os.environ.get(VERL_PYTHON)
    if candidate and subprocess.run([candidate, "-c", "import verl, grpo_host"], capture_output=True).returncode == 0:
        return candidate
    pytest.skip(f"verl is not installed here (verl 0.9.1 pins transformers 5.10.4 and antlr4 4.9.3): set {VERL_PYTHON} "
                "to the interpreter of a venv holding verl and grpo-host (benchmarks/serve_verl.py says how)")


@pytest.mark.parametrize("task", ["math", "code"])
def test_real_verl_modules_drive_the_adapter(task):
    """verl's own reward loop and its naive, batch and prime managers, installed, on a real DataProto: each gives
    the batch API's totals (code rows take their tests from the prime_code ground truth, so some score)."""
    import os
    import subprocess

    script = Path(__file__).resolve().parent.parent / "benchmarks" / "serve_verl.py"
    env = {k: v for k, v in os.environ.items() if k != "GRPO_HOST_VERL_REWARDS"}
    proc = subprocess.run([verl_python(), str(script), "--task", task, "--rows", "16", "--repeats", "0", "--json"],
                          capture_output=True, text=True, timeout=900, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["same_as_batch_api"] == {"reward_loop": True, "naive": True, "batch": True, "prime": True}, report
    assert report["scored_nonzero"] > 0
