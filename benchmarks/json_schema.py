"""Validators for the `json_schema` reward: jsonschema-rs against the pure-Python jsonschema, side by side.

Run:  python benchmarks/json_schema.py [--schemas 200] [--group 8] [--rounds 3] [--json]

Three questions decide which validator the reward keeps:

* **Correct?**  Agreement with the official JSON-Schema-Test-Suite vendored
  under tests/data (the required cases of drafts 2020-12 and 7, the remote
  documents served from memory, and the optional ECMA-262 regex cases).  Each
  validator runs as the reward would run it: jsonschema-rs offline with the
  reward's pattern options, jsonschema with a ``referencing`` registry that
  never retrieves.  An exception counts as a miss.
* **Faster?**  GRPO-shaped work: ``--schemas`` distinct, realistic schemas
  (objects with nested objects, enums, patterns, ``$defs``/``$ref``, arrays,
  ``anyOf``), ``--group`` completions per schema, half valid and half invalid.
  Timed per operation: compiling a schema (meta-schema check included, as the
  reward does once per schema), ``is_valid`` on every value, and the full
  error list of each invalid value (partial credit needs it).  The
  validators take turns, ``--rounds`` times, and the best round is kept.
* **Bounded?**  Inputs an optimiser or a dataset can use to stall a worker:
  ``^(a+)+$`` against a near miss (Python's ``re``, PyPI ``regress``, which is
  the Rust regress ECMA-262 engine, and jsonschema-rs), and the error report
  of an ``anyOf`` of two recursive branches.

Ratios are from one run on one machine; the figures are documentation, never a test.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import random
import time
from importlib.metadata import version
from pathlib import Path

SUITE = Path(__file__).resolve().parents[1] / "tests" / "data" / "JSON-Schema-Test-Suite"
REMOTE = "http://localhost:1234/"
DIALECTS = {"draft2020-12": "https://json-schema.org/draft/2020-12/schema",
            "draft7": "http://json-schema.org/draft-07/schema#"}


# -- the two validators, configured as the reward would use them ---------------------------------------------------


def rs_factory(remotes: list[tuple[str, object]] | None, draft: str):
    import jsonschema_rs

    from reward_plugins.schemas.compiler import REGEX_BACKTRACK_LIMIT

    kind = jsonschema_rs.Draft7 if draft == "draft7" else jsonschema_rs.Draft202012
    registry = jsonschema_rs.Registry(remotes, draft=kind) if remotes else None
    options = {"offline": True, "registry": registry,
               "pattern_options": jsonschema_rs.FancyRegexOptions(backtrack_limit=REGEX_BACKTRACK_LIMIT)}
    return lambda schema: jsonschema_rs.validator_for(schema, **options)


def py_factory(remotes: list[tuple[str, object]] | None, draft: str):
    import jsonschema
    import referencing
    import referencing.jsonschema

    default = jsonschema.Draft7Validator if draft == "draft7" else jsonschema.Draft202012Validator
    spec = referencing.jsonschema.DRAFT7 if draft == "draft7" else referencing.jsonschema.DRAFT202012
    registry = referencing.Registry()  # no retrieve: a reference outside it is Unresolvable, never fetched
    for uri, document in remotes or ():
        dialect = document.get("$schema", "") if isinstance(document, dict) else ""
        registry = registry.with_resource(uri, referencing.jsonschema.specification_with(
            dialect, default=spec).create_resource(document))

    def build(schema):
        cls = jsonschema.validators.validator_for(schema, default=default)
        cls.check_schema(schema)
        return cls(schema, registry=registry)

    return build


VALIDATORS = {"jsonschema-rs": rs_factory, "jsonschema": py_factory}


# -- correctness -----------------------------------------------------------------------------------------------------


def suite_remotes(draft: str) -> list[tuple[str, object]]:
    """The suite's remote documents; a draft-7 run leaves out the 2019-09/2020-12 ones that name no ``$schema``."""
    root = SUITE / "remotes"
    names = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.json"))
    return [(REMOTE + n, json.loads((root / n).read_text())) for n in names
            if not (draft == "draft7" and n.startswith("draft20"))]


def agreement(name: str, folder: Path, draft: str) -> dict:
    build = VALIDATORS[name](suite_remotes(draft), draft)
    total, misses = 0, []
    for path in sorted(folder.glob("*.json")):
        for group in json.loads(path.read_text()):
            schema = group["schema"]
            if isinstance(schema, dict) and "$schema" not in schema:
                schema = {"$schema": DIALECTS[draft], **schema}
            for case in group["tests"]:
                total += 1
                try:
                    ok = build(schema).is_valid(case["data"]) == case["valid"]
                except Exception as exc:  # noqa: BLE001 - an exception is a miss, and is reported
                    ok, case = False, {**case, "raised": f"{type(exc).__name__}: {str(exc)[:80]}"}
                if not ok:
                    misses.append(f"{path.stem}: {group['description']}: {case['description']}"
                                  + (f" ({case['raised']})" if "raised" in case else ""))
    return {"cases": total, "agree": total - len(misses), "misses": misses}


def regex_engines_on_ecma_cases() -> dict:
    """Python ``re`` and PyPI ``regress`` on the suite's ECMA-262 ``pattern`` cases (string data only)."""
    import re

    import regress

    engines = {"python re": lambda p, s: re.search(p, s) is not None,
               "regress": lambda p, s: regress.Regex(p).find(s) is not None}
    out = {}
    for engine, search in engines.items():
        total = agree = 0
        for path in sorted((SUITE / "tests" / "draft2020-12" / "optional").glob("*regex*.json")):
            for group in json.loads(path.read_text()):
                pattern = group["schema"].get("pattern") if isinstance(group["schema"], dict) else None
                if pattern is None:
                    continue
                for case in group["tests"]:
                    if isinstance(case["data"], str):
                        total += 1
                        with contextlib.suppress(Exception):  # a pattern the engine cannot compile is a miss
                            agree += search(pattern, case["data"]) == case["valid"]
        out[engine] = {"cases": total, "agree": agree}
    return out


# -- speed -----------------------------------------------------------------------------------------------------------


def make_schema(rng: random.Random, i: int) -> dict:
    """A realistic structured-output schema, distinct per ``i`` so nothing is shared between schemas."""
    field = f"field_{i}"
    return {
        "$schema": DIALECTS["draft2020-12"],
        "type": "object",
        "$defs": {"address": {"type": "object", "properties": {
            "street": {"type": "string", "minLength": 1}, "zip": {"type": "string", "pattern": "^[0-9]{5}$"}},
            "required": ["street", "zip"], "additionalProperties": False}},
        "properties": {
            "name": {"type": "string", "maxLength": 40 + i % 7},
            "age": {"type": "integer", "minimum": 0, "maximum": 150},
            "email": {"type": "string", "pattern": "^[^@\\s]+@[^@\\s]+\\.[a-z]{2,}$"},
            "status": {"enum": ["active", "inactive", f"pending_{i}"]},
            "address": {"$ref": "#/$defs/address"},
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True, "maxItems": 5},
            "score": {"anyOf": [{"type": "number", "minimum": 0}, {"type": "null"}]},
            field: {"type": "boolean"},
        },
        "required": ["name", "age", "status", field] + (["address"] if rng.random() < 0.5 else []),
        "additionalProperties": False,
    }


def make_value(rng: random.Random, i: int, valid: bool) -> dict:
    value = {"name": "Ada", "age": 36, "email": "ada@example.org", "status": "active",
             "address": {"street": "1 Main St", "zip": "12345"}, "tags": ["x", "y"], "score": 0.5, f"field_{i}": True}
    if not valid:
        breakage = rng.choice(["age", "zip", "tags", "extra", "missing", "email"])
        if breakage == "age":
            value["age"] = "36"
        elif breakage == "zip":
            value["address"]["zip"] = "1234"
        elif breakage == "tags":
            value["tags"] = ["x", "x"]
        elif breakage == "extra":
            value["unexpected"] = 1
        elif breakage == "missing":
            del value["status"]
        else:
            value["email"] = "not an email"
    return value


def speed(schemas: int, group: int, rounds: int, seed: int) -> dict:
    rng = random.Random(seed)
    docs = [make_schema(rng, i) for i in range(schemas)]
    values = [[make_value(rng, i, valid=k % 2 == 0) for k in range(group)] for i in range(schemas)]
    best: dict[str, dict[str, float]] = {}
    verdicts: dict[str, list] = {}
    for _ in range(rounds):
        for name, factory in VALIDATORS.items():
            build = factory(None, "draft2020-12")
            t0 = time.perf_counter()
            validators = [build(doc) for doc in docs]
            t1 = time.perf_counter()
            valid = [[v.is_valid(x) for x in xs] for v, xs in zip(validators, values, strict=False)]
            t2 = time.perf_counter()
            errors = [len(list(v.iter_errors(x))) for v, xs, oks in zip(validators, values, valid, strict=False)
                      for x, ok in zip(xs, oks, strict=False) if not ok]
            t3 = time.perf_counter()
            verdicts[name] = [ok for oks in valid for ok in oks]
            n_invalid = len(errors)
            now = {"compile_us_per_schema": (t1 - t0) / schemas * 1e6,
                   "is_valid_us_per_value": (t2 - t1) / (schemas * group) * 1e6,
                   "errors_us_per_invalid_value": (t3 - t2) / max(n_invalid, 1) * 1e6}
            best[name] = {k: min(v, best.get(name, {}).get(k, float("inf"))) for k, v in now.items()}
    same = sum(a == b for a, b in zip(verdicts["jsonschema-rs"], verdicts["jsonschema"], strict=False))
    return {"schemas": schemas, "group": group, "rounds": rounds, "same_verdicts": same,
            "values": schemas * group, "per_validator": {k: {m: round(x, 2) for m, x in v.items()}
                                                         for k, v in best.items()}}


def reward_throughput(schemas: int, group: int, seed: int) -> dict:
    """The reward end to end (text in, score out, worker processes): what a training step pays per completion."""
    from grpo_host import Ensemble

    rng = random.Random(seed)
    docs = [make_schema(rng, i) for i in range(schemas)]
    texts, columns = [], []
    for i, doc in enumerate(docs):
        for k in range(group):
            texts.append("Here is the record:\n```json\n" + json.dumps(make_value(rng, i, k % 2 == 0)) + "\n```")
            columns.append(doc)
    with Ensemble.from_spec("json_schema") as ensemble:
        ensemble.score(texts[:group], schema=columns[:group])  # worker start-up
        t0 = time.perf_counter()
        for start in range(0, len(texts), 256):
            ensemble.score(texts[start:start + 256], schema=columns[start:start + 256])
        seconds = time.perf_counter() - t0
    return {"completions": len(texts), "seconds": round(seconds, 2), "items_per_s": round(len(texts) / seconds, 1)}


# -- bounds ----------------------------------------------------------------------------------------------------------


def bounds() -> dict:
    import re

    import jsonschema
    import jsonschema_rs
    import regress

    def timed(fn) -> float:
        t0 = time.perf_counter()
        fn()
        return round(time.perf_counter() - t0, 4)

    out: dict[str, dict] = {"^(a+)+$ on 'a'*n + '!'": {}, "anyOf of two recursive branches, errors at depth n": {}}
    regex = out["^(a+)+$ on 'a'*n + '!'"]
    rs_pattern = jsonschema_rs.validator_for({"pattern": "^(a+)+$"}, offline=True)
    for n in (18, 20, 22, 24):
        s = "a" * n + "!"
        regex[f"python re, n={n}"] = timed(lambda s=s: re.search("^(a+)+$", s))
        regex[f"regress, n={n}"] = timed(lambda s=s: regress.Regex("^(a+)+$").find(s))
    regex["jsonschema-rs, n=100000"] = timed(lambda: rs_pattern.is_valid("a" * 100_000 + "!"))
    tree = out["anyOf of two recursive branches, errors at depth n"]
    schema = {"anyOf": [{"type": "array", "items": {"$ref": "#"}}, {"type": "array", "items": {"$ref": "#"}}]}
    rs_tree = jsonschema_rs.validator_for(schema, offline=True)
    py_tree = jsonschema.Draft202012Validator(schema)
    for n in (8, 10, 12):
        value: object = "x"
        for _ in range(n):
            value = [value]
        tree[f"jsonschema-rs is_valid, n={n}"] = timed(lambda value=value: rs_tree.is_valid(value))
        tree[f"jsonschema-rs errors, n={n}"] = timed(lambda value=value: list(rs_tree.iter_errors(value)))
        tree[f"jsonschema is_valid, n={n}"] = timed(lambda value=value: py_tree.is_valid(value))
        tree[f"jsonschema errors, n={n}"] = timed(lambda value=value: list(py_tree.iter_errors(value)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--schemas", type=int, default=200)
    parser.add_argument("--group", type=int, default=8, help="completions per schema (a GRPO group)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    load_before = os.getloadavg()[0]
    report = {
        "machine": {"cores": os.cpu_count(), "python": platform.python_version(), "system": platform.platform(),
                    "versions": {p: version(p) for p in ("jsonschema-rs", "jsonschema", "referencing", "regress")}},
        "suite": {name: {draft: agreement(name, SUITE / "tests" / draft, draft) for draft in DIALECTS}
                  | {"ecma-262 regex (optional)": agreement(name, SUITE / "tests" / "draft2020-12" / "optional",
                                                            "draft2020-12")}
                  for name in VALIDATORS},
        "regex engines on the ECMA-262 pattern cases": regex_engines_on_ecma_cases(),
        "speed": speed(args.schemas, args.group, args.rounds, args.seed),
        "reward end to end": reward_throughput(args.schemas, args.group, args.seed),
        "bounds (seconds)": bounds(),
    }
    report["machine"]["load_average_before_after"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(json.dumps(report["machine"]))
    for name, drafts in report["suite"].items():
        for draft, result in drafts.items():
            print(f"suite {name:14} {draft:26} {result['agree']}/{result['cases']}")
            for miss in result["misses"]:
                print(f"    miss: {miss}")
    for engine, result in report["regex engines on the ECMA-262 pattern cases"].items():
        print(f"ecma pattern cases {engine:12} {result['agree']}/{result['cases']}")
    sp = report["speed"]
    print(f"speed: {sp['schemas']} schemas x {sp['group']} values, best of {sp['rounds']}, "
          f"same verdicts {sp['same_verdicts']}/{sp['values']}")
    rs, py = sp["per_validator"]["jsonschema-rs"], sp["per_validator"]["jsonschema"]
    for metric in rs:
        print(f"  {metric:30} jsonschema-rs {rs[metric]:10.2f}  jsonschema {py[metric]:10.2f}  "
              f"ratio {py[metric] / rs[metric]:7.1f}x")
    print(f"reward end to end: {report['reward end to end']}")
    for title, rows in report["bounds (seconds)"].items():
        print(title)
        for what, seconds in rows.items():
            print(f"  {what:40} {seconds:8.4f} s")


if __name__ == "__main__":
    main()
