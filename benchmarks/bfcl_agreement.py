"""Agreement of the tool-call rewards with BFCL's own checker, on cases built from BFCL's data.

Usage::

    python -m venv /tmp/bfcl-venv && /tmp/bfcl-venv/bin/pip install bfcl-eval==2026.3.23 soundfile
    python benchmarks/bfcl_agreement.py --bfcl-python /tmp/bfcl-venv/bin/python [--every N] [--write-cases PATH]
    python benchmarks/bfcl_agreement.py --bfcl-python /tmp/bfcl-venv/bin/python --real

Every row of BFCL's Python categories (``bfcl_eval/data/BFCL_v4_*.json`` of
the installed package, with ``possible_answer/``) gives model outputs:
the ground truth called, and perturbed (calls reordered, one missing, one
extra, a wrong argument value, a wrong name, arguments that are not JSON,
calls written as text in BFCL's prompting formats, OpenAI-style names);
irrelevance rows give no call, a call, and calls BFCL decodes as none;
multi-turn rows give the ground truth turn by turn, step by step,
reversed within turns, turns swapped, everything in the first turn, a call
missing, extra calls (unknown, repeated), a wrong argument.  BFCL's verdict
on each comes from ``bfcl_reference.py`` run by ``--bfcl-python`` (the
package's own runner and handlers); ours from ``tool_call_match`` or
``tool_call_state`` on the same output as a chat rollout.  Printed: per
category, cases, agreement, and false accepts (we pay 1.0, BFCL refuses) and
false rejects.  ``--write-cases`` writes every case in our form with BFCL's
verdict (the test suite's ``tests/data/bfcl/agreement.jsonl``).

``--real`` scores real model outputs instead: the BFCL result files vendored
under ``data/bfcl_real/`` (see its ``SOURCE.md``), each output given as it is
to BFCL's checker and, as a chat rollout, to ours.
"""

from __future__ import annotations

import argparse
import inspect
import itertools
import json
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from grpo_host.discovery.plugins import load_plugins
from reward_plugins.tool_calls.dispatch import BACKENDS, Call, backend, parse_call

AST = ["simple_python", "multiple", "parallel", "parallel_multiple", "live_simple", "live_multiple", "live_parallel",
       "live_parallel_multiple"]
IRRELEVANCE = ["irrelevance", "live_irrelevance"]
MULTI_TURN = ["multi_turn_base", "multi_turn_long_context", "multi_turn_miss_func", "multi_turn_miss_param"]
FC_MODEL = "firefunction-v2-FC"  # a function-calling model BFCL does not rename tools for
DOT_MODEL = "gpt-4.1-2025-04-14-FC"  # one it does (dots to underscores)
TEXT_MODEL = "gpt-5-mini-2025-08-07"  # a prompting-mode model (calls written as text)
REAL = Path(__file__).with_name("data") / "bfcl_real"
REAL_MODELS = {"glyphh-ada-1.1": FC_MODEL, "gemma4-e4b-toolcall-v02": TEXT_MODEL,  # how each wrote its calls
               "AIREV-Agent-0.8B": TEXT_MODEL}


def load(data: Path, category: str) -> list[tuple[dict, Any]]:
    rows = [json.loads(line) for line in (data / f"BFCL_v4_{category}.json").open()]
    answers_file = data / "possible_answer" / f"BFCL_v4_{category}.json"
    answers = [json.loads(line)["ground_truth"] for line in answers_file.open()] if answers_file.exists() else \
        [None] * len(rows)
    return list(zip(rows, answers, strict=True))


def first(allowed: list) -> Any:
    """A value BFCL's possible answers allow: the first that is not "" (dicts one level in)."""
    value = next(v for v in allowed if v != "")
    if isinstance(value, dict):
        return {k: first(a) for k, a in value.items() if isinstance(a, list) and any(x != "" for x in a)}
    if isinstance(value, list) and value and all(isinstance(x, dict) for x in value):
        return [{k: first(a) for k, a in x.items() if isinstance(a, list) and any(x != "" for x in a)} for x in value]
    return value


def called(answer: list[dict]) -> list[tuple[str, dict]]:
    return [(name, {k: first(v) for k, v in allowed.items() if any(x != "" for x in v)})
            for call in answer for name, allowed in call.items()]


def wrong(value: Any) -> Any:
    return value + " zz" if isinstance(value, str) else ("zz" if not isinstance(value, bool) else not value)


def python_text(calls: list[tuple[str, dict]]) -> str:
    return "[" + ", ".join(f"{n}({', '.join(f'{k}={v!r}' for k, v in a.items())})" for n, a in calls) + "]"


def json_text(calls: list[tuple[str, dict]]) -> str:
    return json.dumps([{"function": n, "parameters": a} for n, a in calls])


def fc(calls: list[tuple[str, Any]]) -> list[dict]:
    """BFCL's function-calling model result: one {name: arguments as JSON text} per call."""
    return [{n: a if isinstance(a, str) else json.dumps(a)} for n, a in calls]


def rollout(steps: list, final: str = "Done.") -> list[dict]:
    """Our side: the same output as chat messages (a text step as content, a call step as tool_calls)."""
    messages: list[dict] = []
    for step in steps:
        if isinstance(step, str):
            messages.append({"role": "assistant", "content": step})
            continue
        messages.append({"role": "assistant", "content": "", "tool_calls": [
            {"type": "function", "function": {"name": n, "arguments": a}} for call in step for n, a in call.items()]})
        messages += [{"role": "tool", "content": "ok"} for _ in step]
    return messages + ([{"role": "assistant", "content": final}] if final else [])


def single_turn_cases(data: Path, every: int) -> list[dict]:
    cases = []
    for category in AST:
        for row, answer in load(data, category)[::every]:
            calls = called(answer)
            columns = {"tools": row["function"], "ground_truth": answer}
            entry = {k: row[k] for k in ("id", "function")}

            def add(variant: str, result: Any, *, ours: list, params: dict | None = None, model: str = FC_MODEL,
                    fmt: str = "python", answer: Any = answer, columns: dict = columns, category: str = category,
                    entry: dict = entry) -> None:
                cases.append({"category": category, "variant": variant, "reward": "tool_call_match",
                              "params": params or {}, "columns": columns, "completion": ours,
                              "bfcl": {"kind": "ast", "category": category, "entry": entry, "answer": answer,
                                       "result": result, "model": model, "fc": model != TEXT_MODEL,
                                       "format": fmt}})

            add("correct", fc(calls), ours=rollout([fc(calls)]))
            if len(calls) > 1:
                add("reordered", fc(calls[::-1]), ours=rollout([fc(calls[::-1])]))
                add("missing", fc(calls[:-1]), ours=rollout([fc(calls[:-1])]))
            add("extra", fc(calls + calls[:1]), ours=rollout([fc(calls + calls[:1])]))
            name, args = calls[0]
            if args:
                key = next(iter(args))
                bad = [(name, {**args, key: wrong(args[key])}), *calls[1:]]
                add("wrong_argument", fc(bad), ours=rollout([fc(bad)]))
            add("wrong_name", fc([(name + "_x", args), *calls[1:]]), ours=rollout([fc([(name + "_x", args),
                                                                                        *calls[1:]])]))
            add("arguments_not_json", fc([(name, "{not json"), *calls[1:]]),
                ours=rollout([fc([(name, "{not json"), *calls[1:]])]))
            text = python_text(calls)
            add("text_python", text, ours=rollout([text], final=""), params={"text_calls": "python"},
                model=TEXT_MODEL)
            add("text_json", json_text(calls), ours=rollout([json_text(calls)], final=""),
                params={"text_calls": "json"}, model=TEXT_MODEL, fmt="json")
            if any("." in n for n, _ in calls):
                renamed = [(n.replace(".", "_"), a) for n, a in calls]
                add("underscored_names", fc(renamed), ours=rollout([fc(renamed)]),
                    params={"dots_to_underscores": True}, model=DOT_MODEL)
                add("dotted_names_to_an_underscoring_model", fc(calls), ours=rollout([fc(calls)]),
                    params={"dots_to_underscores": True}, model=DOT_MODEL)
    for category in IRRELEVANCE:
        for row, _ in load(data, category)[::every]:
            entry = {k: row[k] for k in ("id", "function")}
            columns = {"tools": row["function"], "ground_truth": []}
            some = row["function"][0]["name"] if row["function"] else "lookup"
            outputs = {"no_call": ("I cannot help with that.", []),
                       "call": (fc([(some, {"query": "x"})]), [fc([(some, {"query": "x"})])]),
                       "arguments_not_json": (fc([(some, "{not json")]), [fc([(some, "{not json")])]),
                       "arguments_a_list": (fc([(some, "[1, 2]")]), [fc([(some, "[1, 2]")])]),
                       "one_of_two_not_json": (fc([(some, "{}"), (some, "{x")]), [fc([(some, "{}"), (some, "{x")])])}
            for variant, (result, steps) in outputs.items():
                cases.append({"category": category, "variant": variant, "reward": "tool_call_match", "params": {},
                              "columns": columns, "completion": rollout(steps, final="I cannot help with that."),
                              "bfcl": {"kind": "relevance", "category": category, "entry": entry, "result": result,
                                       "model": FC_MODEL, "fc": True}})
            text = f"[{some}(query='x')]"
            for variant, output in (("text_call", text), ("text_no_call", "I cannot help with that.")):
                cases.append({"category": category, "variant": variant, "reward": "tool_call_match",
                              "params": {"text_calls": "python"}, "columns": columns,
                              "completion": rollout([output], final=""),
                              "bfcl": {"kind": "relevance", "category": category, "entry": entry, "result": output,
                                       "model": TEXT_MODEL, "fc": False}})
    return cases


def keyword_call(call: Call, classes: list[str]) -> tuple[str, dict]:
    """A ground-truth call with its positional arguments named, as a function-calling model writes it."""
    for class_name in reversed(classes):
        method = getattr(backend(class_name), call.name, None)
        if method is not None:
            names = [p for p in inspect.signature(method).parameters if p != "self"]
            return call.name, {**dict(zip(names, call.args, strict=False)), **call.kwargs}
    return call.name, dict(call.kwargs)


def multi_turn_cases(data: Path, every: int) -> list[dict]:
    cases = []
    for category in MULTI_TURN:
        for row, answer in load(data, category)[::every]:
            classes = row["involved_classes"]
            truth = [[keyword_call(parse_call(c), classes) for c in turn] for turn in answer]
            columns = {"initial_config": row["initial_config"], "involved_classes": classes, "ground_truth": answer,
                       "id": row["id"]}
            variants: dict[str, list[list[list]]] = {  # per turn, its steps, each step a list of calls
                "correct": [[t] if t else [] for t in truth],
                "step_by_step": [[[c] for c in t] for t in truth],
                "reversed_within_turns": [[t[::-1]] if t else [] for t in truth],
                "all_in_first_turn": [[[c for t in truth for c in t]]] + [[] for _ in truth[1:]],
                "extra_unknown_call": [[t + [("nonexistent_tool", {})]] if t else [] for t in truth],
                "extra_repeated_call": [[t + t[:1]] if t else [] for t in truth],
                "arguments_not_json": [[[(t[0][0], "{x")]] + [t] if t else [] for t in truth],
            }
            full = [i for i, t in enumerate(truth) if t]
            pair = next(((i, j) for i, j in zip(full, full[1:], strict=False) if truth[i] != truth[j]), None)
            if pair:
                swapped = [list(t) for t in truth]
                swapped[pair[0]], swapped[pair[1]] = swapped[pair[1]], swapped[pair[0]]
                variants["turns_swapped"] = [[t] if t else [] for t in swapped]
            last = full[-1] if full else None
            if last is not None:
                missing = [list(t) for t in truth]
                missing[last] = missing[last][:-1]
                variants["missing_call"] = [[t] if t else [] for t in missing]
            at = next((i for i in full if any(isinstance(v, str) for v in truth[i][0][1].values())), None)
            if at is not None:
                name, args = truth[at][0]
                key = next(k for k, v in args.items() if isinstance(v, str))
                bad = [list(t) for t in truth]
                bad[at][0] = (name, {**args, key: args[key] + "_x"})
                variants["wrong_argument"] = [[t] if t else [] for t in bad]
            for variant, turns in variants.items():
                result = [[fc(step) for step in steps] + ["Done."] for steps in turns]
                ours: list[dict] = []
                for steps in turns:
                    ours += [{"role": "user", "content": "..."}] + rollout([fc(step) for step in steps])
                entry = {"id": f"{row['id']}_{variant.replace('_', '')}", "initial_config": row["initial_config"],
                         "involved_classes": classes}
                cases.append({"category": category, "variant": variant, "reward": "tool_call_state", "params": {},
                              "columns": columns, "completion": ours,
                              "bfcl": {"kind": "multi_turn", "category": category, "entry": entry, "answer": answer,
                                       "result": result, "model": FC_MODEL, "fc": True}})
    return cases


def real_cases(data: Path, every: int) -> list[dict]:
    """Cases from real model outputs: every Nth line of each vendored result file, as BFCL's runner judges it."""
    cases = []
    for model, bfcl_model in REAL_MODELS.items():
        fc_mode = bfcl_model != TEXT_MODEL
        params = {} if fc_mode else {"text_calls": "python"}
        for path in sorted((REAL / model).glob("BFCL_v4_*_result.json")):
            category = path.name.removeprefix("BFCL_v4_").removesuffix("_result.json")
            rows = {row["id"]: (row, answer) for row, answer in load(data, category)}
            for line in itertools.islice(path.open(), 0, None, every):
                output = json.loads(line)
                row, answer = rows[output["id"]]
                result, label = output["result"], f"{model} {category}"
                entry = {k: row[k] for k in ("id", "function") if k in row}
                if category in MULTI_TURN:
                    ours: list[dict] = []
                    for steps in result:
                        ours += [{"role": "user", "content": "..."}] + rollout(steps)
                    entry |= {k: row[k] for k in ("initial_config", "involved_classes")}
                    cases.append({"category": label, "variant": "real", "reward": "tool_call_state", "params": params,
                                  "columns": {"initial_config": row["initial_config"], "ground_truth": answer,
                                              "involved_classes": row["involved_classes"], "id": row["id"]},
                                  "completion": ours,
                                  "bfcl": {"kind": "multi_turn", "category": category, "entry": entry, "answer": answer,
                                           "result": result, "model": bfcl_model, "fc": fc_mode}})
                    continue
                relevance = category in IRRELEVANCE
                steps = [result] if result else []  # one assistant step: its calls, or its text
                final = "Done." if fc_mode else ""  # (a prompting model's last message is its output)
                bfcl = {"kind": "relevance" if relevance else "ast", "category": category, "entry": entry,
                        "result": result, "model": bfcl_model, "fc": fc_mode}
                if not relevance:
                    bfcl |= {"answer": answer, "format": "python"}
                cases.append({"category": label, "variant": "real", "reward": "tool_call_match", "params": params,
                              "columns": {"tools": row["function"], "ground_truth": answer if not relevance else []},
                              "completion": rollout(steps, final=final), "bfcl": bfcl})
    return cases


def bfcl_verdicts(python: str, cases: list[dict]) -> list[bool]:
    script = Path(__file__).with_name("bfcl_reference.py")
    stdin = "".join(json.dumps(c["bfcl"]) + "\n" for c in cases)
    out = subprocess.run([python, str(script)], input=stdin, capture_output=True, text=True, check=True).stdout
    return [json.loads(line) for line in out.splitlines()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bfcl-python", required=True, help="a Python with bfcl-eval==2026.3.23 installed")
    parser.add_argument("--every", type=int, default=1, help="use every Nth row of each category (or output)")
    parser.add_argument("--write-cases", type=Path, help="write the cases in our form with BFCL's verdicts")
    parser.add_argument("--real", action="store_true", help=f"score the real model outputs under {REAL}")
    args = parser.parse_args()
    data = Path(subprocess.run([args.bfcl_python, "-c", "import bfcl_eval, os; print(os.path.dirname("
                                "bfcl_eval.__file__))"], capture_output=True, text=True, check=True).stdout.strip())
    data = data / "data"
    registry = load_plugins(env={"GRPO_HOST_LOAD_PLUGINS": "tool_calls"}).registry
    cases = (real_cases(data, args.every) if args.real
             else single_turn_cases(data, args.every) + multi_turn_cases(data, args.every))
    refused = sorted({c["bfcl"]["entry"]["id"] for c in cases
                      if registry.reward(c["reward"]).check_row(c["columns"]) is not None})
    cases = [c for c in cases if c["bfcl"]["entry"]["id"] not in refused]
    assert set(BACKENDS) >= {c for case in cases for c in case["columns"].get("involved_classes", [])}
    started = time.perf_counter()
    theirs = bfcl_verdicts(args.bfcl_python, cases)
    bfcl_seconds = time.perf_counter() - started
    started = time.perf_counter()
    ours = [registry.reward(c["reward"]).bind(c["params"]).score_one(c["completion"], **c["columns"]) == 1.0
            for c in cases]
    our_seconds = time.perf_counter() - started
    table: dict[str, Counter] = defaultdict(Counter)
    disagreements = []
    for case, mine, bfcl in zip(cases, ours, theirs, strict=True):
        for key in (case["category"], "single-turn" if case["reward"] == "tool_call_match" else "multi-turn"):
            table[key].update(cases=1, agree=int(mine == bfcl), bfcl_accepts=int(bfcl),
                              false_accepts=int(mine and not bfcl), false_rejects=int(bfcl and not mine))
        if mine != bfcl:
            disagreements.append((case["bfcl"]["entry"]["id"], case["variant"], bfcl, mine))
    print("| category | cases | BFCL accepts | agreement | false accepts | false rejects |\n"
          "| --- | ---: | ---: | ---: | ---: | ---: |")
    for key, c in table.items():
        print(f"| {key} | {c['cases']:,} | {c['bfcl_accepts']:,} | {100 * c['agree'] / c['cases']:.2f} % | "
              f"{c['false_accepts']} | {c['false_rejects']} |")
    print(f"\nBFCL {bfcl_seconds:.1f} s, ours {our_seconds:.1f} s for {len(cases):,} cases; rows `data check` "
          f"refuses (no call could match their ground truth), left out: {', '.join(refused) or 'none'}")
    for d in disagreements[:40]:
        print("disagree:", *d)
    if args.write_cases:  # one line per BFCL row: its columns, then each case with BFCL's verdict
        rows: dict[int, dict] = {}
        for case, bfcl in zip(cases, theirs, strict=True):
            row = rows.setdefault(id(case["columns"]), {"category": case["category"], "reward": case["reward"],
                                                         "columns": case["columns"], "cases": []})
            row["cases"].append({k: case[k] for k in ("variant", "params", "completion")} | {"bfcl": bfcl})
        with args.write_cases.open("w") as out:
            out.writelines(json.dumps(row) + "\n" for row in rows.values())
    sys.exit(1 if any(c["agree"] != c["cases"] for c in table.values()) else 0)


if __name__ == "__main__":
    main()
