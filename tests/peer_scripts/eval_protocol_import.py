"""Run in a venv holding eval-protocol 0.3.33 (tests/peers.py) by tests/test_eval_protocol_import.py and
benchmarks/adapters.py: eval-protocol's own ``@reward_function`` functions scored as the grpo-host ``eval_protocol``
reward.  Prints one JSON object.

``cases``: eval-protocol's ``format_reward`` and ``accuracy_reward`` and a function of this test's own
(``my_evals.unit_match``, a ``@reward_function`` reading a ``unit`` column, declining rows it cannot score, with
metrics), through ``grpo-host score``'s path, with what the function received.  ``parity ROWS``: the rows scored
by ``accuracy_reward`` through grpo-host and by eval-protocol's own call of it, row by row, with the seconds each
took after one warm-up row.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from grpo_host.integrations import scorer

ACCURACY = "eval_protocol(function=eval_protocol.rewards.accuracy:accuracy_reward, ground_truth=messages)"
MINE = '''
from eval_protocol import reward_function
from eval_protocol.models import EvaluateResult, Message, MetricResult

CALLS = []


@reward_function
def unit_match(messages: list[Message], ground_truth: str, unit: str, **kwargs) -> EvaluateResult:
    CALLS.append({"roles": [m.role for m in messages], "ground_truth": ground_truth, "unit": unit})
    reply = messages[-1].content or ""
    if not reply.strip():
        return EvaluateResult(score=0.0, is_score_valid=False, reason="no reply")
    right = reply.strip() == f"{ground_truth} {unit}"
    return EvaluateResult(score=float(right), reason="compared",
                          metrics={"has_unit": MetricResult(score=float(unit in reply), reason="unit named"),
                                   "skipped": MetricResult(score=1.0, is_score_valid=False, reason="not scored")})
'''


def line(spec, row):
    return scorer.score(spec, [("row 1", row)])[0]


def cases():
    folder = Path(tempfile.mkdtemp())
    (folder / "my_evals.py").write_text(MINE)
    sys.path.insert(0, str(folder))
    import my_evals

    good = "<think>\nadd\n</think>\n<answer>\n4\n</answer>"
    fmt = "eval_protocol(function=eval_protocol.rewards.format:format_reward), r1_strict_format:0.5"
    mine = "eval_protocol(function=my_evals:unit_match, columns=[unit])"
    from grpo_host import Ensemble

    with Ensemble.from_spec(mine) as ensemble:
        requires = [c.names for c in ensemble.members[0].reward.requires]
    out = {
        "format": line(fmt, {"prompt": "What is 2+2?", "completion": good}),
        "format_empty": line(fmt, {"prompt": "What is 2+2?", "completion": [{"role": "assistant", "content": ""}]}),
        "accuracy": line(ACCURACY, {"prompt": "What is 2+2?", "completion": good, "answer": "4"}),
        "accuracy_no_gold": line(ACCURACY, {"prompt": "What is 2+2?", "completion": good}),
        "mine_requires": requires,
        "mine": line(mine, {"prompt": [{"role": "system", "content": "Use units."},
                                       {"role": "user", "content": "How far?"}],
                            "completion": "4 km", "answer": "4", "unit": "km"}),
        "mine_declined": line(mine, {"prompt": "How far?", "completion": " ", "answer": "4", "unit": "km"}),
        "mine_no_unit": line(mine, {"prompt": "How far?", "completion": "4 km", "answer": "4"}),
    }
    out["calls"] = my_evals.CALLS
    from eval_protocol.rewards.accuracy import accuracy_reward

    own = accuracy_reward(messages=[{"role": "user", "content": "What is 2+2?"},
                                    {"role": "assistant", "content": good}],
                          ground_truth=[{"role": "assistant", "content": "4"}])
    out["accuracy_own"] = [own.score, own.is_score_valid]
    rows = folder / "rows.jsonl"  # the counters as grpo-host score totals them, the function found on PYTHONPATH
    rows.write_text("".join(json.dumps({"prompt": "q", "completion": c, "answer": "4", "unit": "km"}) + "\n"
                            for c in ("4 km", "5 km", "")))
    summary = subprocess.run([sys.executable, "-m", "grpo_host", "score", str(rows), "--rewards", mine, "--json"],
                             capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": str(folder)})
    out["summary"] = json.loads(summary.stdout)["rewards"]["eval_protocol"]
    return out


def parity(path):
    from eval_protocol.rewards.accuracy import accuracy_reward

    rows = [json.loads(text) for text in Path(path).read_text().splitlines()]

    def through_grpo_host(part):
        return [line.get("total") for line in scorer.score(ACCURACY, [(f"row {i}", r) for i, r in enumerate(part)])]

    def own_call(part):
        out = []
        for row in part:
            if "answer" not in row:  # grpo-host's data check refuses the row: the function is never called
                out.append(None)
                continue
            result = accuracy_reward(messages=[{"role": "user", "content": row["prompt"]},
                                               {"role": "assistant", "content": row["completion"]}],
                                     ground_truth=[{"role": "assistant", "content": row["answer"]}])
            out.append(result.score if result.is_score_valid else None)
        return out

    found = {}
    for name, run in (("grpo_host", through_grpo_host), ("eval_protocol", own_call)):
        run(rows[:1])
        start = time.perf_counter()
        found[name] = run(rows)
        found[f"{name}_seconds"] = time.perf_counter() - start
    return found


if __name__ == "__main__":
    print(json.dumps(cases() if sys.argv[1] == "cases" else parity(sys.argv[2])))
