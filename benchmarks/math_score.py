"""`grpo-host score --rewards math` as a command, against TRL's `accuracy_reward` on the same pairs, per CPU-second.

The rows are ``math_throughput.py``'s generated set (:func:`math_throughput.make_pairs`, seed 0, 8 completions per
gold, the gold in an ``answer`` column, the group's prompt in ``prompt``), written once to a JSONL file.  Each
round runs, in alternating order so a shared machine's load hits both alike:

* ``grpo-host score FILE --rewards math --out OUT [EXTRA...]`` in a subprocess: start-up, reading the rows, the
  workers, the monitors, writing ``--out`` and the rollout record, all counted;
* TRL's ``accuracy_reward`` over the same (gold, completion) pairs, in a subprocess that imports it and calls it
  in batches of 256 as GRPOTrainer does (its import counted too).

CPU seconds are each subprocess's and its children's (``RUSAGE_CHILDREN`` before and after), which other jobs on
the machine do not change; the ratio is TRL's CPU over ours.  Timings are for documentation, never a test.

    python benchmarks/math_score.py [--rows 10000] [--rounds 3] [-- EXTRA grpo-host score options]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from math_throughput import make_pairs  # noqa: E402  (benchmarks/ is not a package)

TRL = """
import json, sys
from trl.rewards import accuracy_reward
pairs = [json.loads(line) for line in open(sys.argv[1])]
for start in range(0, len(pairs), 256):
    batch = pairs[start:start + 256]
    accuracy_reward([[{"role": "assistant", "content": p["completion"]}] for p in batch],
                    solution=[p["answer"] for p in batch])
"""


def timed(argv: list[str]) -> float:
    """CPU seconds (user and system) of ``argv`` and everything it started."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("extra", nargs="*", help="more grpo-host score options (after --)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "gen.jsonl"
        data.write_text("".join(json.dumps({"prompt": f"problem {i // 8}", "completion": completion, "answer": gold})
                                + "\n" for i, (gold, completion) in enumerate(make_pairs(args.rows, 0))))
        ours, theirs = [], []
        for n in range(args.rounds):
            out = Path(folder) / f"out{n}.jsonl"
            command = [sys.executable, "-m", "grpo_host", "score", str(data), "--rewards", "math", "--out", str(out),
                       *args.extra]
            runs = [(ours, command), (theirs, [sys.executable, "-c", TRL, str(data)])]
            for seconds, argv in runs if n % 2 == 0 else runs[::-1]:
                seconds.append(timed(argv))
    load = os.getloadavg()
    print(json.dumps({"rows": args.rows, "extra": args.extra, "grpo_host_cpu_s": ours, "trl_cpu_s": theirs,
                      "ratio_of_medians": statistics.median(theirs) / statistics.median(ours),
                      "load_average_at_end": [round(x, 1) for x in load]}, indent=2))


if __name__ == "__main__":
    main()
