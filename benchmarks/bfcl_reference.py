"""BFCL's own verdicts: run under a Python with ``bfcl-eval`` installed, by ``bfcl_agreement.py``.

Reads cases (one JSON object a line) on stdin and writes one verdict a line
(``true``/``false``) on stdout, each from the evaluation runner's own
per-entry functions of the installed ``bfcl_eval`` (the ones
``bfcl evaluate`` calls for each entry), with a model handler of BFCL's own
doing the decoding: ``_evaluate_single_ast_entry`` for the AST categories,
``_evaluate_single_relevance_entry`` for irrelevance, and
``_evaluate_single_multi_turn_entry`` for the multi-turn ones.  Nothing here
judges anything itself.
"""

import json
import os
import sys

os.environ.setdefault("OPENAI_API_KEY", "unused: nothing is sent")  # the handler makes a client it never calls

from bfcl_eval.constants.enums import Language, ReturnFormat  # noqa: E402
from bfcl_eval.eval_checker import eval_runner  # noqa: E402
from bfcl_eval.model_handler.api_inference.openai_completion import OpenAICompletionsHandler  # noqa: E402

_handlers: dict = {}


def handler(model: str, fc: bool) -> OpenAICompletionsHandler:
    if (model, fc) not in _handlers:
        _handlers[model, fc] = OpenAICompletionsHandler(model_name=model, temperature=0, registry_name=model,
                                                        is_fc_model=fc)
    return _handlers[model, fc]


def verdict(case: dict) -> bool:
    h = handler(case["model"], case["fc"])
    entry, kind = case["entry"], case["kind"]
    if kind == "ast":
        result = eval_runner._evaluate_single_ast_entry(
            h, entry["id"], case["result"], case["answer"], entry, case["model"], case["category"],
            language=Language.PYTHON, return_format=ReturnFormat(case.get("format", "python")), has_tool_call_tag=False)
    elif kind == "relevance":
        result = eval_runner._evaluate_single_relevance_entry(h, entry["id"], case["result"], entry, case["model"],
                                                              case["category"])
    else:
        result = eval_runner._evaluate_single_multi_turn_entry(h, entry["id"], case["result"], case["answer"], entry,
                                                               case["model"], case["category"])
    return bool(result["valid"])


if __name__ == "__main__":
    for line in sys.stdin:
        print(json.dumps(verdict(json.loads(line))), flush=True)
