"""Calibrate the `covered` threshold of an embedding model (kb_qa/answer/coverage.py).

    python bench/coverage.py [--embed-model docs-minilm] [--set dev|synthetic|both]

For each threshold T (and the words floor T - 0.06), prints the share of on-topic questions
(the real dev split and/or the synthetic set) called not covered (goal <= 0.05) and the
share of the 40 off-topic questions (bench/questions/offtopic.jsonl), asked of every
corpus, called not covered (goal >= 0.90). Uses the indexes bench/quality.py builds with
the same --embed-model. The real test split is never read here.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpora import QUESTIONS, built_index, eval_sets

from kb_qa.answer import coverage, evaluate

OFFTOPIC = [json.loads(line)["question"] for line in (QUESTIONS / "offtopic.jsonl").open()]
THRESHOLDS = [round(0.20 + 0.02 * i, 2) for i in range(16)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--embed-model", default=None)
    parser.add_argument("--set", default="both", choices=("dev", "synthetic", "both"))
    args = parser.parse_args()
    wanted = ["dev", "synthetic"] if args.set == "both" else [args.set]
    on: list[tuple[str, list]] = []
    off: list[tuple[str, list]] = []
    name = ""
    for which in wanted:
        for kind, corpus, vault, questions_file in eval_sets(which):
            kb = built_index(kind, corpus, vault, args.embed_model)
            name = kb.embedder.name
            questions = evaluate.load_questions(questions_file, kb.store.chunks())
            on += [(q.question, kb.search(q.question, 10)) for q in questions]
            off += [(q, kb.search(q, 10)) for q in OFFTOPIC]
            kb.close()
    print(f"model {name}: {len(on)} on-topic, {len(off)} off-topic questions")
    print(f"{'threshold':>9} {'on: not covered':>15} {'off: not covered':>16}")
    for t in THRESHOLDS:
        coverage.THRESHOLDS[name] = t
        coverage.WORDS_FLOOR[name] = round(t - 0.06, 2)
        missed = sum(not coverage.covered(q, hits, name) for q, hits in on) / len(on)
        flagged = sum(not coverage.covered(q, hits, name) for q, hits in off) / len(off)
        print(f"{t:>9.2f} {missed:>15.3f} {flagged:>16.3f}")


if __name__ == "__main__":
    main()
