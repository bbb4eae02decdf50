"""Search latency on the question sets themselves (long issue-style questions included).

    python bench/latency.py [--set real|synthetic|both]

Uses the indexes bench/quality.py builds; prints p50/p95 of `kb.search(question, 50)`,
warm, per set (targets: p50 < 30 ms, p95 < 60 ms).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpora import WORK, eval_sets

from kb_qa import KnowledgeBase, evaluate


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--set", default="both", choices=("real", "synthetic", "both"))
    args = parser.parse_args()
    times: dict[str, list[float]] = {}
    for kind, name, vault, questions_file in eval_sets(args.set):
        kb = KnowledgeBase(vault, index_dir=WORK / "index" / f"{kind}-{name}-default-d")
        kb.search("warm up", 5)
        for q in evaluate.load_questions(questions_file, kb.store.chunks()):
            started = time.perf_counter()
            kb.search(q.question, 50)
            times.setdefault(kind, []).append((time.perf_counter() - started) * 1000)
        kb.close()
    for kind, values in times.items():
        values.sort()
        p95 = values[int(len(values) * 0.95)]
        print(
            f"{kind}: search k=50 p50 {statistics.median(values):.1f} ms, p95 {p95:.1f} ms (n={len(values)})"
        )


if __name__ == "__main__":
    main()
