"""A multi-line question is embedded twice (the whole question, then its title): is one
batched call faster?

    python bench/query_batch.py

Over the real questions with a title line (bench/questions/real), times the two calls the
search makes against one batch of both, alternated twice, and prints the cosine between
the two ways' averaged vectors. A batch pads the title to the question's length, and the
int8 model quantises activations with one scale per run, so a batch both costs more and
moves the vector.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from kb_qa.index.embeddings import MiniLM
from kb_qa.text import question_title

REAL = Path(__file__).resolve().parent / "questions" / "real"


def main() -> None:
    model = MiniLM()
    questions = [
        q
        for path in sorted(REAL.glob("*.jsonl"))
        for q in (json.loads(line)["question"] for line in path.read_text().splitlines())
        if question_title(q) != q.strip()
    ]
    model.embed_query("warm up")

    def separate(q: str) -> np.ndarray:
        return model.embed_query(q) + model.embed_query(question_title(q))

    def batched(q: str) -> np.ndarray:
        both = model._run([q, question_title(q)])
        return both[0] + both[1]

    ways: dict[str, Callable[[str], np.ndarray]] = {"two calls": separate, "one batch": batched}
    print(f"{len(questions)} real questions with a title line")
    for _ in range(2):
        for name, way in ways.items():
            started = time.perf_counter()
            for q in questions:
                way(q)
            ms = (time.perf_counter() - started) * 1000 / len(questions)
            print(f"{name:<10} {ms:5.1f} ms per question")
    cosines = []
    for q in questions:
        a, b = separate(q), batched(q)
        cosines.append(float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b))))
    print(f"cosine, one batch to two calls: mean {np.mean(cosines):.4f}, min {min(cosines):.4f}")


if __name__ == "__main__":
    # No options: --help says what it measures instead of running it.
    argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    ).parse_args()
    main()
