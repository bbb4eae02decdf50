"""Search latency on the question sets themselves (long issue-style questions included).

    python bench/latency.py [--set real|synthetic|both]

Uses the indexes bench/quality.py builds; prints p50/p95 of `kb.search(question, 50)`,
warm, per set (targets: p50 < 30 ms, p95 < 60 ms). Then, for each corpus of 1,500 chunks
or more, how long the search view takes to load again after one chunk was edited (what
every save costs a watched index before the edit is searchable; best of five), next to a
first load with nothing to reuse.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from corpora import WORK, eval_sets

from kb_qa import KnowledgeBase
from kb_qa.answer import evaluate
from kb_qa.ingest.chunking import with_hash
from kb_qa.kb.knowledge_base import Loaded, load_view
from kb_qa.types import Chunk


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--set", default="both", choices=("real", "synthetic", "both"))
    args = parser.parse_args()
    times: dict[str, list[float]] = {}
    reloads: list[str] = []
    for kind, name, vault, questions_file in eval_sets(args.set):
        kb = KnowledgeBase(vault, index_dir=WORK / "index" / f"{kind}-{name}-default-d")
        kb.search("warm up", 5)
        for q in evaluate.load_questions(questions_file, kb.store.chunks()):
            started = time.perf_counter()
            kb.search(q.question, 50)
            times.setdefault(kind, []).append((time.perf_counter() - started) * 1000)
        if len(kb._view().chunks) >= 1500:
            reloads.append(f"{name}: {reload_ms(kb)}")
        kb.close()
    for kind, values in times.items():
        values.sort()
        p95 = values[int(len(values) * 0.95)]
        print(
            f"{kind}: search k=50 p50 {statistics.median(values):.1f} ms, p95 {p95:.1f} ms (n={len(values)})"
        )
    for line in reloads:
        print("view reload after one edit, " + line)


def reload_ms(kb: KnowledgeBase) -> str:
    """Time a reload as ``KnowledgeBase._view`` does one (the manifest's chunks and vectors
    read, then ``load_view``), fresh and after one chunk was edited."""
    started = time.perf_counter()
    chunks, vectors = _read(kb)
    first = load_view("first", chunks, Loaded(), kb.settings, vectors=vectors)
    fresh = (time.perf_counter() - started) * 1000
    middle = len(chunks) // 2
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        chunks, vectors = _read(kb)
        # Same id, new text and hash: what the watcher's re-index of one edit leaves.
        chunks[middle] = with_hash(replace(chunks[middle], text=chunks[middle].text + "\nEdit."))
        load_view("edited", chunks, first, kb.settings, vectors=vectors)
        best = min(best, (time.perf_counter() - started) * 1000)
    return f"{len(chunks)} chunks: {best:.0f} ms (first load {fresh:.0f} ms)"


def _read(kb: KnowledgeBase) -> tuple[list[Chunk], dict[str, np.ndarray]]:
    chunks = kb.store.chunks()
    return chunks, kb.stored_vectors(chunks)


if __name__ == "__main__":
    main()
