"""Time the `math` reward takes to find and read an answer on adversarial completions, by size.

Run:  python benchmarks/math_reading.py [--sizes 10000 100000 1000000] [--json]

Each input is a pattern repeated to the size (unclosed ``\\boxed{``, math
delimiters left open, answer phrases, ``####`` lines, answer tags, braces,
digits, runs of different boxes, "or" between values, think closes,
questions, answer headings, units, repeating decimals, degrees inside
functions, withdrawn boxes) with the gold ``7``,
scored once by the reward itself (``score_one``: finding, reading and
comparing, in this process, with no timer) after a few warm-up calls.  Reading
is linear when the time grows about tenfold from one size to the next; the
reward's 10 s timeout is only a backstop.  Timings depend on the machine and
its load; they are for documentation, never a test.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

PATTERNS = {
    "unclosed \\boxed{": "\\boxed{",
    "unclosed \\fbox{ and {": "\\fbox{{",
    "unclosed \\[": "\\[ x ",
    "unclosed \\(": "\\( x ",
    "$ on one line": "$ 1 ",
    "<answer> never closed": "<answer> ",
    "#### lines": "#### 12\n",
    "'the answer is' phrases": "the answer is 12 and ",
    "different boxes": None,  # \boxed{0} \boxed{1} ...
    "'or' between values": "3 or ",
    "digits": "1234567890",
    "closed braces": "{}",
    "\\boxed{ inside \\boxed{": "\\boxed{\\boxed{",
    "prose, no answer": "Let me think about this again. ",
    "open braces {": "{",
    "</think> closes": "</think>",
    "'Answer: 4?' questions": "Answer: 4? ",
    "'# Answer' headings": "# Answer\n\n",
    "boxes with units": "\\boxed{7 \\text{ km}} ",
    "repeating decimals": "\\boxed{0.333...} ",
    "degrees in \\sin": "\\boxed{\\sin 30^\\circ} ",
    "withdrawn boxes": "\\boxed{1} wait ",
}


def make(pattern: str | None, size: int) -> str:
    if pattern is None:
        text, k = [], 0
        while sum(map(len, text)) < size:
            text.append(f"\\boxed{{{k}}} ")
            k += 1
        return "".join(text)[:size]
    return (pattern * (size // len(pattern) + 1))[:size]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from reward_plugins.math.rewards import math_answer

    reward = math_answer.bind({})
    for warm in ("\\boxed{\\frac{1}{2}}", "\\boxed{x \\in [1, 2)}", "so $x = \\{1\\}$", "it is 7", "\\boxed{"):
        reward.score_one(warm, answer="7")  # imports, the LaTeX parser's start-up
    rows = []
    for name, pattern in PATTERNS.items():
        times = []
        for size in args.sizes:
            text = make(pattern, size)
            start = time.perf_counter()
            value = reward.score_one(text, answer="7")
            times.append(time.perf_counter() - start)
        rows.append({"input": name, "seconds": times, "score": value})
    info = {"machine": f"{platform.machine()}, {os.cpu_count()} cores, Linux {platform.release()}, Python "
                       f"{platform.python_version()}", "load": os.getloadavg(), "sizes": args.sizes}
    if args.json:
        print(json.dumps({"info": info, "rows": rows}, indent=1))
        return
    print(info)
    print("| input | " + " | ".join(f"{s:,} chars" for s in args.sizes) + " | score |")
    print("| --- | " + " | ".join("---:" for _ in args.sizes) + " | ---: |")
    for row in rows:
        cells = " | ".join(f"{t * 1000:,.1f} ms" for t in row["seconds"])
        print(f"| {row['input']} | {cells} | {row['score']} |")


if __name__ == "__main__":
    main()
