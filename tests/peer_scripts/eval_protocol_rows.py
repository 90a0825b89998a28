"""Run by tests/test_adapters_eval_protocol.py in a venv holding eval-protocol 0.3.33: a grpo-host spec as an
eval-protocol reward function, called as eval-protocol calls one (its ``Message`` models, or plain dicts it coerces)
and its ``EvaluateResult`` read back.  Prints one JSON object.  (eval-protocol pins antlr4 4.9, under which the
``math`` reward's LaTeX parser cannot load: the spec here reads no LaTeX.)"""

import json

from eval_protocol.models import EvaluateResult, Message

from grpo_host.integrations.eval_protocol import reward_function

evaluate = reward_function("accuracy:1, r1_strict_format:0.5, r1_xmlcount:0")
GOOD = "<think>\nadd\n</think>\n<answer>\n4\n</answer>"
ASK = {"role": "user", "content": "What is 2+2?"}
CALL = {"id": "c1", "type": "function", "function": {"name": "python", "arguments": '{"code": "print(2+2)"}'}}


def result(**kwargs):
    out = evaluate(**kwargs)
    assert isinstance(out, EvaluateResult)
    return out.model_dump(mode="json", exclude_none=True)


print(json.dumps({
    "dicts": result(messages=[ASK, {"role": "assistant", "content": GOOD}], ground_truth="4"),
    "models": result(messages=[Message(**ASK), Message(role="assistant", content=GOOD)], ground_truth="4"),
    "tools": result(messages=[ASK, {"role": "assistant", "content": "", "tool_calls": [CALL]},
                              {"role": "tool", "tool_call_id": "c1", "content": "4\n"},
                              {"role": "assistant", "content": "<answer>\n4\n</answer>", "reasoning_content": "add"}],
                    ground_truth="4"),
    "no_gold": result(messages=[ASK, {"role": "assistant", "content": GOOD}]),
    "no_reply": result(messages=[ASK], ground_truth="4"),
}))
