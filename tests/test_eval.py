"""``grpo-host eval``: the real CLI, the built-in tiny model on CPU, the letters example's rewards.

Every evaluation here is a real subprocess generating with the real
``builtin:tiny`` (transformers), or asking a real OpenAI-compatible server
on 127.0.0.1 that generates with the same model; the record it leaves is
read back with the reader ``report`` uses.
"""

from __future__ import annotations

import asyncio
import json
import math
import shutil
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import GRPO_HOST, write_jsonl
from train_helpers import kill_when

from grpo_host.runs.record import read_record
from grpo_host.training.evaluate import interval, pass_at_k

ROOT = Path(__file__).resolve().parents[1]
LETTERS = ROOT / "examples" / "letters.jsonl"
PACK = ROOT / "examples" / "letters_rewards.py"
SPEC = "letter_share:1, lowercase_share:0.5"


def letters(tmp_path: Path, n: int) -> Path:
    """The first ``n`` rows of the letters example."""
    rows = [json.loads(line) for line in LETTERS.read_text().splitlines()[:n]]
    return write_jsonl(tmp_path / f"letters{n}.jsonl", rows)


def eval_cmd(model: str, data: Path, out: Path, *extra: str) -> list[str]:
    return [GRPO_HOST, "eval", model, str(data), "--plugins", str(PACK), "-r", SPEC, "-o", str(out),
            "--max-completion-length", "6", *extra]


def run(cmd: list[str], env: dict[str, str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=600, **kw)


# --- the estimator and the interval ---------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "c", "k", "expected"), [
    (5, 2, 1, 2 / 5),
    (5, 2, 2, 1 - 3 / 10),           # 1 - C(3,2)/C(5,2)
    (10, 3, 5, 1 - 21 / 252),        # 1 - C(7,5)/C(10,5)
    (4, 0, 4, 0.0),
    (4, 1, 4, 1.0),                  # k = n: any pass
    (6, 5, 2, 1.0),                  # fewer failures than k
    (20, 1, 10, 1 - 92378 / 184756),  # 1 - C(19,10)/C(20,10) = 0.5
])
def test_pass_at_k_matches_hand_computed_values(n, c, k, expected):
    assert math.isclose(pass_at_k(n, c, k), expected, rel_tol=1e-12)


@pytest.mark.parametrize(("n", "c", "k"), [(4, 5, 1), (4, 1, 0), (4, 1, 5), (3, -1, 1)])
def test_pass_at_k_refuses_impossible_counts(n, c, k):
    with pytest.raises(ValueError, match="pass@k needs"):
        pass_at_k(n, c, k)


def test_the_bootstrap_interval_is_fixed_and_holds_the_mean():
    values = [0.0, 1.0, 0.5, 0.25, 1.0, 0.0, 0.75, 0.5]
    low, high = interval(values)
    assert (low, high) == interval(values)  # a fixed seed: the same evaluation reports the same interval
    assert low < sum(values) / len(values) < high and low >= 0.0 and high <= 1.0
    assert interval([0.3] * 5) == pytest.approx((0.3, 0.3))


# --- the command --------------------------------------------------------------------------------------------


@pytest.mark.slow  # an eval run and a report: about 7 s
def test_eval_writes_pass_at_k_with_intervals_and_a_record_report_draws(env, tmp_path):
    data, out = letters(tmp_path, 6), tmp_path / "ev"
    proc = run(eval_cmd("builtin:tiny", data, out, "-k", "3", "--threshold", "0.5", "--json"), env)
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    assert found == json.loads((out / "eval.json").read_text())
    assert (found["prompts"], found["samples"], found["k"]) == (6, 18, 3)
    assert set(found["metrics"]) == {"letter_share", "lowercase_share", "total"}
    table = read_record(out).to_pylist()
    assert len(table) == 18 and sorted({r["row_id"] for r in table}) == list(range(6))
    for name in ("letter_share", "lowercase_share"):
        m = found["metrics"][name]
        assert m["threshold"] == 0.5
        # recomputed by hand from the record: per prompt, c of 3 samples at or over 0.5
        per_prompt = [[r[f"reward/{name}"] for r in table if r["row_id"] == i] for i in range(6)]
        c = [sum(v >= 0.5 for v in vs) for vs in per_prompt]
        assert m["pass@1"]["value"] == pytest.approx(sum(x / 3 for x in c) / 6)
        assert m["pass@3"]["value"] == pytest.approx(sum(x > 0 for x in c) / 6)
        assert m["mean@k"]["value"] == pytest.approx(sum(sum(vs) / 3 for vs in per_prompt) / 6)
        for key in ("mean@k", "pass@1", "pass@3"):
            assert m[key]["low"] <= m[key]["value"] <= m[key]["high"]
    assert found["metrics"]["total"]["threshold"] == 0.5 * 1 + 0.5 * 0.5  # the weighted sum of the thresholds
    report = run([GRPO_HOST, "report", str(out)], env)
    assert report.returncode == 0, report.stderr
    assert "letter_share" in (out / "report.html").read_text()


@pytest.mark.slow  # two eval runs: about 6 s
def test_the_table_fits_80_columns_and_a_finished_folder_is_not_started_again(env, tmp_path):
    data, out = letters(tmp_path, 3), tmp_path / "ev"
    proc = run(eval_cmd("builtin:tiny", data, out, "-k", "2"), {**env, "COLUMNS": "80"})
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert any(line.startswith("letter_share") for line in lines)
    assert max(map(len, lines)) <= 80, proc.stdout
    again = run(eval_cmd("builtin:tiny", data, out, "-k", "2"), env)
    assert again.returncode == 2 and "--resume" in again.stderr
    changed = run(eval_cmd("builtin:tiny", data, out, "-k", "3", "--resume"), env)
    assert changed.returncode == 2 and "k 2 -> 3" in changed.stderr


@pytest.mark.slow  # eval runs on two models: about 5 s
def test_a_resumed_evaluation_of_other_weights_is_refused_naming_them(env, tmp_path):
    """A model folder is pinned by its weights too: new weights saved under the same path (a run resumed to more
    steps) are another model, whose evaluation must not be merged with the old one's."""
    from grpo_host.training.builtin_model import tiny_model_dir

    model = tmp_path / "model"
    shutil.copytree(tiny_model_dir(env["GRPO_HOST_CACHE"]), model)
    data, out = letters(tmp_path, 2), tmp_path / "ev"
    first = run(eval_cmd(str(model), data, out, "-k", "1"), env)
    assert first.returncode == 0, first.stderr
    assert next(line for line in first.stdout.splitlines() if line.startswith("reward")).split() == [
        "reward", "mean@k", "pass@1"]  # k = 1: pass@1 once
    weights = next(model.glob("*.safetensors"))
    weights.write_bytes(weights.read_bytes())  # the same bytes, saved again
    again = run(eval_cmd(str(model), data, out, "-k", "1", "--resume"), env)
    assert again.returncode == 2 and "--resume continues the same evaluation, but weights" in again.stderr, (
        again.stderr)


def test_temperature_0_is_greedy_k_times(env, tmp_path):
    data, out = letters(tmp_path, 2), tmp_path / "ev"
    proc = run(eval_cmd("builtin:tiny", data, out, "-k", "3", "--temperature", "0", "--json"), env)
    assert proc.returncode == 0, proc.stderr
    table = read_record(out).to_pylist()
    for i in range(2):  # the same prompt, the same greedy answer
        assert len({r["completion"] if isinstance(r["completion"], str) else json.dumps(r["completion"])
                    for r in table if r["row_id"] == i}) == 1


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_the_model_s_generation_config_shapes_eval_s_samples_no_more_than_training_s(tmp_path, temperature):
    """TRL's GRPOTrainer sets temperature, top_p, top_k, min_p and repetition_penalty itself, so a model's
    ``generation_config.json`` (Qwen2.5's says repetition_penalty 1.05) does not change how training samples; eval
    left repetition_penalty to it, and sampled another distribution than the one trained on."""
    from grpo_host.training.builtin_model import build_tiny
    from grpo_host.training.evaluate import EvalSettings, transformers_generator

    clean, penalised = build_tiny(tmp_path / "clean"), build_tiny(tmp_path / "penalised")
    config = json.loads((penalised / "generation_config.json").read_text())
    (penalised / "generation_config.json").write_text(json.dumps(config | {"repetition_penalty": 50.0}))
    settings = dict(data="-", temperature=temperature, top_p=1.0, top_k=0, min_p=0.0, max_completion_length=24,
                    seed=0, device="cpu")
    prompts = ["abc", "hello there"]
    samples = [transformers_generator(str(path), EvalSettings(model=str(path), **settings))(prompts, 2, 7)
               for path in (clean, penalised)]
    ids = [[sample.ids for sample in row] for row in samples[0]]
    assert any(len(set(i)) < len(i) for row in ids for i in row)  # a token repeats: the penalty would tell
    assert ids == [[sample.ids for sample in row] for row in samples[1]]


def test_the_data_check_refuses_a_broken_row_before_anything_is_generated(env, tmp_path):
    rows = [json.loads(line) for line in LETTERS.read_text().splitlines()[:4]]
    del rows[2]["answer"]
    data, out = write_jsonl(tmp_path / "broken.jsonl", rows), tmp_path / "ev"
    with socket.socket() as closed:  # an endpoint nothing listens on: generating would fail with exit 2
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}/v1"
    proc = run(eval_cmd(url, data, out, "--served-model", "m"), env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "line 3" in proc.stderr and "answer" in proc.stderr and "letter_share" in proc.stderr
    assert not (out / "rollouts").exists()


def test_train_checks_the_eval_data_before_it_trains(env, tmp_path):
    rows = [json.loads(line) for line in LETTERS.read_text().splitlines()[:4]]
    del rows[2]["answer"]
    broken, out = write_jsonl(tmp_path / "broken.jsonl", rows), tmp_path / "run"
    proc = run([GRPO_HOST, "train", str(ROOT / "examples" / "letters.yaml"), "--set", f"output_dir={out}",
                "--set", "eval_k=2", "--set", f"eval_data={broken}"], env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "line 3" in proc.stderr and "answer" in proc.stderr, proc.stderr
    assert not list(out.glob("checkpoint-*"))


@pytest.mark.slow  # two eval runs: about 10 s
def test_resume_after_sigkill_generates_only_the_missing_prompts(env, tmp_path):
    data, out = letters(tmp_path, 24), tmp_path / "ev"
    cmd = eval_cmd("builtin:tiny", data, out, "-k", "2", "--batch-size", "2")
    kill_when(cmd, lambda: len(list((out / "rollouts").glob("*.parquet"))) >= 2, "two record parts", env=env,
              cwd=ROOT)
    assert not (out / "eval.json").exists()
    before = {p.name: pq.read_table(p)["row_id"].to_pylist() for p in (out / "rollouts").glob("*.parquet")}
    held = {i for ids in before.values() for i in ids}
    assert 0 < len(held) < 24

    resumed = run([*cmd, "--resume", "--json"], env)
    assert resumed.returncode == 0, resumed.stderr
    found = json.loads(resumed.stdout)
    assert (found["resumed_prompts"], found["generated_prompts"]) == (len(held), 24 - len(held))
    after = {p.name: pq.read_table(p)["row_id"].to_pylist() for p in (out / "rollouts").glob("*.parquet")}
    assert {name: after[name] for name in before} == before  # the finished prompts' parts are kept as they were
    new = [i for name, ids in after.items() if name not in before for i in ids]
    assert not set(new) & held  # and none of their prompts was generated again
    ids = read_record(out)["row_id"].to_pylist()
    assert sorted(ids) == sorted(list(range(24)) * 2) and found["samples"] == 48


@pytest.mark.slow  # two eval runs: about 10 s
def test_sigterm_ends_with_130_and_resume_finishes(env, tmp_path):
    data, out = letters(tmp_path, 16), tmp_path / "ev"
    cmd = eval_cmd("builtin:tiny", data, out, "-k", "2", "--batch-size", "2")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    try:
        deadline = time.monotonic() + 300  # a guard against a hang, not a measure
        while not list((out / "rollouts").glob("*.parquet")):
            assert proc.poll() is None and time.monotonic() < deadline, "no part written before the eval ended"
            time.sleep(0.02)
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=300)
    finally:
        proc.kill()
    assert proc.returncode == 130, stderr
    assert "interrupted" in stderr and "--resume" in stderr and "Traceback" not in stderr
    resumed = run([*cmd, "--resume", "--json"], env)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["samples"] == 32


def test_mlx_generates_where_mlx_lm_is_installed(env, tmp_path):
    pytest.importorskip("mlx_lm")
    data, out = letters(tmp_path, 2), tmp_path / "ev"
    proc = run(eval_cmd("builtin:tiny", data, out, "-k", "2", "--backend", "mlx", "--json"), env)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["samples"] == 4
    table = read_record(out).to_pylist()
    assert all(0 < r["length"] <= 6 for r in table)
    # decoded as transformers decodes: no special token's text in a completion
    assert not any(tok in r["completion"] for r in table for tok in ("<s>", "</s>", "<pad>", "<|assistant|>"))


# --- an OpenAI-compatible endpoint ---------------------------------------------------------------------------


class TinyServer:
    """``/v1/models``, ``/v1/chat/completions`` and ``/v1/completions`` answered by the built-in tiny model
    (transformers, CPU), each request generated in a thread; counts requests and how many were in flight."""

    def __init__(self, model_dir: Path) -> None:
        self.model_dir = model_dir
        self.requests: list[dict] = []
        self.in_flight = self.max_in_flight = 0
        self.parts = False
        """Answer chat content as a list of parts (``[{"type": "text", "text": ...}]``), as multimodal servers do."""
        self._lock = threading.Lock()

    def start(self) -> TinyServer:
        import torch
        import uvicorn
        from starlette.applications import Starlette
        from starlette.routing import Route
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.torch = torch
        self.model = AutoModelForCausalLM.from_pretrained(self.model_dir).eval()
        self.tokenizer = AutoTokenizer.from_pretrained(self.model_dir)
        app = Starlette(routes=[Route("/v1/models", self.models), Route("/v1/chat/completions", self.complete,
                                                                         methods=["POST"]),
                                Route("/v1/completions", self.complete, methods=["POST"])])
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="error"))
        self._thread = threading.Thread(target=self.server.run, kwargs={"sockets": [sock]}, daemon=True)
        self._thread.start()
        while not self.server.started:
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self._thread.join(10)

    async def models(self, request):
        from starlette.responses import JSONResponse

        return JSONResponse({"object": "list", "data": [{"id": "tiny", "object": "model"}]})

    def _generate(self, body: dict) -> tuple[str, int]:
        chat = "messages" in body
        text = (self.tokenizer.apply_chat_template(body["messages"], tokenize=False, add_generation_prompt=True)
                if chat else body["prompt"])
        ids = self.tokenizer(text, return_tensors="pt", add_special_tokens=False)
        with self._lock:  # one seeded generation at a time: the seed decides the sample
            self.torch.manual_seed(body["seed"])
            with self.torch.no_grad():
                out = self.model.generate(**ids, do_sample=True, max_new_tokens=body["max_tokens"],
                                          temperature=body["temperature"], top_p=body["top_p"],
                                          pad_token_id=self.tokenizer.pad_token_id)
        new = out[0, ids["input_ids"].shape[1]:]
        return self.tokenizer.decode(new, skip_special_tokens=True), len(new)

    async def complete(self, request):
        from starlette.responses import JSONResponse

        body = await request.json()
        self.requests.append(body)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(0.05)  # let the client's other requests arrive: concurrency is what is measured
            text, tokens = await asyncio.to_thread(self._generate, body)
        finally:
            self.in_flight -= 1
        content = [{"type": "text", "text": text}] if self.parts else text
        choice = {"index": 0, "finish_reason": "stop",
                  **({"message": {"role": "assistant", "content": content}} if "messages" in body else {"text": text})}
        return JSONResponse({"id": "x", "object": "chat.completion", "model": body["model"], "choices": [choice],
                             "usage": {"completion_tokens": tokens}})


@pytest.fixture
def tiny_server(tmp_path):
    from grpo_host.training.builtin_model import tiny_model_dir

    server = TinyServer(tiny_model_dir(tmp_path / "cache")).start()
    yield server
    server.stop()


@pytest.mark.slow  # left out of the fast lane: a model server
def test_an_openai_compatible_endpoint_is_asked_k_times_per_prompt_within_the_concurrency(env, tmp_path,
                                                                                         tiny_server):
    data, out = letters(tmp_path, 4), tmp_path / "ev"
    url = f"http://127.0.0.1:{tiny_server.port}/v1"
    proc = run(eval_cmd(url, data, out, "-k", "3", "--concurrency", "4", "--json"), env)
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    assert (found["prompts"], found["samples"]) == (4, 12)
    sent = tiny_server.requests
    assert len(sent) == 12 and {b["model"] for b in sent} == {"tiny"}  # the name the server lists at /models
    assert len({b["seed"] for b in sent}) == 12  # every sample its own seed
    assert all("messages" in b and b["max_tokens"] == 6 for b in sent)
    assert 1 < tiny_server.max_in_flight <= 4
    table = read_record(out).to_pylist()
    assert all(r["length"] is not None for r in table)  # the server's usage counts reach the record
    # text prompts go to /v1/completions
    text = write_jsonl(tmp_path / "text.jsonl", [{"prompt": "letter b", "answer": "b"}])
    proc = run(eval_cmd(url, text, tmp_path / "ev-text", "-k", "2", "--json"), env)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["samples"] == 2
    assert [b["prompt"] for b in tiny_server.requests[12:]] == ["letter b"] * 2
    # chat content as a list of parts: its text is the completion, not the list's repr
    tiny_server.parts = True
    proc = run(eval_cmd(url, data, tmp_path / "ev-parts", "-k", "3", "--json"), env)
    assert proc.returncode == 0, proc.stderr
    assert read_record(tmp_path / "ev-parts")["completion"].to_pylist() == [r["completion"] for r in table]


# --- a run's checkpoints, evaluated at the end of train (eval_k) ----------------------------------------------


@pytest.mark.slow  # a training run
@pytest.mark.timeout(1800)
def test_a_runs_last_checkpoint_scores_higher_than_its_first_on_letters(env, tmp_path):
    """``eval_k`` evaluates every checkpoint and the saved model at the end of ``train``; on the letters task the
    last checkpoint's mean total is higher than the first's, and each is a folder ``grpo-host eval`` continues."""
    out, data = tmp_path / "run", letters(tmp_path, 16)
    proc = run([GRPO_HOST, "train", str(ROOT / "examples" / "letters.yaml"), "--set", f"output_dir={out}",
                "--set", "max_steps=16", "--set", "save_every=4", "--set", "eval_k=2", "--set",
                f"eval_data={data}"], env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    folders = sorted(p.name for p in (out / "eval").iterdir())
    assert folders == ["model", "step-12", "step-16", "step-4", "step-8"]
    first = json.loads((out / "eval" / "step-4" / "eval.json").read_text())
    last = json.loads((out / "eval" / "step-16" / "eval.json").read_text())
    assert (first["step"], last["step"], first["samples"]) == (4, 16, 32)
    assert last["metrics"]["total"]["mean@k"]["value"] > first["metrics"]["total"]["mean@k"]["value"], (first, last)
    assert "eval step-16 (step 16): total mean@2" in proc.stdout
    # the same checkpoint through the command, with the run's rewards, plugins and sampling, into its own folder
    again = run([GRPO_HOST, "eval", str(out / "checkpoint-16"), str(data), "-k", "2", "-o", str(tmp_path / "ev"),
                 "--json"], env)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["metrics"] == last["metrics"]  # the same seed, the same samples
    # resumed to more steps, the run saves a new model: the old model's evaluation is kept beside, not continued
    before = (out / "eval" / "model" / "eval.json").read_text()
    more = run([GRPO_HOST, "train", str(ROOT / "examples" / "letters.yaml"), "--set", f"output_dir={out}",
                "--set", "max_steps=20", "--set", "save_every=4", "--set", "eval_k=2", "--set", f"eval_data={data}",
                "--set", "resume=true"], env)
    assert more.returncode == 0, more.stdout + more.stderr
    assert sorted(p.name for p in (out / "eval").iterdir()) == [
        "model", "model.before-1", "step-12", "step-16", "step-20", "step-4", "step-8"]
    assert (out / "eval" / "model.before-1" / "eval.json").read_text() == before
    assert json.loads((out / "eval" / "model" / "eval.json").read_text())["generated_prompts"] == 16
