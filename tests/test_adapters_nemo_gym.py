"""``POST /verify`` on a real ``grpo-host serve``, in NeMo Gym's own schema: requests built and answers validated by
NeMo Gym's models, and filed by its rollout collection's routing (``tests/vendored/nemo_gym_verify.py``, vendored
from NVIDIA-NeMo/Gym at the commit its header names, with its license: nemo-gym needs Python >= 3.13 and openai
<= 2.7.2, so it cannot be installed beside grpo-host)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "vendored"))
import nemo_gym_verify as ng  # noqa: E402
from test_serve import Server  # noqa: E402

httpx = pytest.importorskip("httpx")

pytestmark = pytest.mark.slow  # a real server


class MathVerifyRequest(ng.BaseVerifyRequest):
    """A task row as NeMo Gym's math resources servers declare theirs: the request plus the gold."""

    expected_answer: str | int | None = None
    task_id: int = 0


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    srv = Server(tmp_path_factory.mktemp("verify"), tmp_path_factory.mktemp("verify-log") / "stderr.log",
                 "accuracy:2, r1_strict_format:0.5")
    yield srv
    srv.stop()


def response(output: list[dict]) -> dict:
    return {"id": "resp_1", "created_at": 0, "model": "policy", "object": "response", "output": output,
            "parallel_tool_calls": True, "tool_choice": "auto", "tools": []}


def message(text: str, i: int = 0) -> dict:
    return {"type": "message", "id": f"msg_{i}", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def reasoning(text: str, i: int = 0) -> dict:
    return {"type": "reasoning", "id": f"rs_{i}", "summary": [{"type": "summary_text", "text": text}]}


PARAMS = {"input": [{"role": "user", "content": "What is 2+2? Use the python tool."}],
          "tools": [{"type": "function", "name": "python", "parameters": {"type": "object"}, "strict": True}]}
TEXT = [reasoning("add"), message("<answer>\n4\n</answer>")]
TOOLS = [reasoning("use the tool", 1),
         {"type": "function_call", "call_id": "c1", "name": "python", "arguments": '{"code": "print(2+2)"}'},
         {"type": "function_call_output", "call_id": "c1", "output": "4"},
         reasoning("add", 2), message("<answer>\n4\n</answer>", 2)]


def verify(server, output: list[dict], **task) -> tuple[dict, ng.BaseMultiRewardVerifyResponse]:
    """POST a request validated by NeMo Gym's own model, as its agents send it; the answer, raw and as NeMo Gym's
    multi-reward response model reads it."""
    body = MathVerifyRequest(responses_create_params=PARAMS, response=response(output), **task)
    reply = httpx.post(server.url + "/verify", json=body.model_dump(mode="json"), timeout=30)
    assert reply.status_code == 200, reply.text
    return reply.json(), ng.BaseMultiRewardVerifyResponse.model_validate(reply.json())


def test_a_rollout_in_nemo_gyms_schema_gets_its_reward_and_components(server):
    raw, parsed = verify(server, TEXT, expected_answer="4", task_id=7)
    assert parsed.reward == 2.5 and parsed.reward_components == {"accuracy": 1.0, "r1_strict_format": 1.0}
    assert raw["task_id"] == 7 and raw["expected_answer"] == "4"  # the request comes back, as NeMo Gym's servers do
    assert ng.route(raw) == "results" and ng.MASK_SAMPLE_KEY not in raw
    number, _ = verify(server, TEXT, expected_answer=4)  # a numeric gold is its JSON text
    assert number["reward"] == 2.5
    wrong, _ = verify(server, [reasoning("add"), message("<answer>\n5\n</answer>")], expected_answer="4")
    assert wrong["reward"] == 0.5 and wrong["reward_components"] == {"accuracy": 0.0, "r1_strict_format": 1.0}


class SolvedRequest(MathVerifyRequest):
    """A row that also keeps its worked solution, as SkyRL's GSM8K rows do under ``answer``."""

    answer: str = ""


def test_the_gold_is_expected_answer_over_a_field_named_answer(server):
    """The protocol's gold decides (as SkyRL's ``ground_truth`` does there): a dataset's own ``answer`` field, here
    a worked solution, is not what ``accuracy`` compares with."""
    body = SolvedRequest(responses_create_params=PARAMS, response=response(TEXT), expected_answer="4",
                         answer="2 + 2 makes 4. #### 4")
    reply = httpx.post(server.url + "/verify", json=body.model_dump(mode="json"), timeout=30)
    assert reply.status_code == 200 and reply.json()["reward_components"]["accuracy"] == 1.0, reply.text


def test_a_tool_using_rollout_scores_as_its_final_text(server):
    """Function calls, their outputs and reasoning items: text rewards score the final answer with its reasoning,
    exactly as the same text written without tools."""
    text, _ = verify(server, TEXT, expected_answer="4")
    tools, _ = verify(server, TOOLS, expected_answer="4")
    assert (tools["reward"], tools["reward_components"]) == (text["reward"], text["reward_components"]) == (
        2.5, {"accuracy": 1.0, "r1_strict_format": 1.0})


def test_an_unscored_rollout_is_masked_and_filed_as_a_failure_not_paid_zero(server):
    raw, parsed = verify(server, TEXT)  # no gold: the data check fails the row
    assert parsed.reward == 0.0 and raw[ng.MASK_SAMPLE_KEY] is True
    assert raw[ng.NG_FAILURE_CLASS_KEY] == "grpo_host_bad_row" and raw[ng.NG_TERMINAL_KEY] is True
    assert ng.route(raw) == "failures"  # NeMo Gym's collection keeps it out of the metrics
    assert raw["grpo_host_error"] == "verify request: reward 'accuracy' needs column 'answer': missing"
    thought_only, _ = verify(server, [reasoning("hmm")], expected_answer="4")  # no answer at all: still scored
    assert thought_only["reward"] == 0.0 and ng.route(thought_only) == "results"


def test_a_rollout_no_reward_applied_to_is_masked(tmp_path):
    srv = Server(tmp_path, tmp_path / "stderr.log", "accuracy")
    try:
        raw, _ = verify(srv, TEXT, expected_answer="  ")  # accuracy: None for an empty gold
    finally:
        srv.stop()
    assert raw["reward"] == 0.0 and raw["reward_components"] == {} and raw[ng.MASK_SAMPLE_KEY] is True
    assert raw[ng.NG_FAILURE_CLASS_KEY] == "grpo_host_unscored" and ng.route(raw) == "failures"
    assert raw["grpo_host_error"] == "verify request: no reward of the spec applied"


@pytest.mark.parametrize(("body", "says"), [
    ([], "an object with 'responses_create_params' and 'response'"),
    ({"response": response([])}, "'responses_create_params' must be an object"),
    ({"responses_create_params": PARAMS, "response": {"output": "4"}}, "'response' must be an object whose 'output'"),
    ({"responses_create_params": PARAMS, "response": response(["4"])}, "'response.output[0]' must be an object"),
])
def test_a_request_not_in_the_protocol_is_a_422_naming_the_field(server, body, says):
    reply = httpx.post(server.url + "/verify", json=body, timeout=30)
    assert reply.status_code == 422 and says in reply.json()["error"]
