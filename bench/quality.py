"""Retrieval quality on the development question sets (bench/questions/*.jsonl).

    python bench/quality.py [--embed-model minilm] [--chunk-chars 1500]

Indexes a copy of each corpus (reusing the index when it is current) and prints
R@1/5/10/20, MRR@20 and page-level R@5 per corpus and overall.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpora import CORPORA, QUESTIONS, corpus_copy

from kb_qa import KnowledgeBase, evaluate


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--embed-model", default=None)
    parser.add_argument("--chunk-chars", type=int, default=None)
    parser.add_argument("--corpora", nargs="*", default=list(CORPORA))
    parser.add_argument("--misses", action="store_true")
    args = parser.parse_args()
    total_ranks: list[int | None] = []
    total_pages: list[int | None] = []
    print(
        f"{'corpus':<16} {'n':>3} {'R@1':>6} {'R@5':>6} {'R@10':>6} {'R@20':>6} {'MRR':>6} {'page@5':>7}"
    )
    for name in args.corpora:
        vault = corpus_copy(name)
        index_dir = vault / f".kb-qa-{args.embed_model or 'default'}-{args.chunk_chars or 'd'}"
        kb = KnowledgeBase(
            vault, embed_model=args.embed_model, chunk_chars=args.chunk_chars, index_dir=index_dir
        )
        t = time.perf_counter()
        report = kb.index()
        if report.embedded:
            print(
                f"  (indexed {name}: {report.chunks} chunks, {report.embedded} embedded, "
                f"{time.perf_counter() - t:.1f} s)",
                file=sys.stderr,
            )
        questions = evaluate.load_questions(QUESTIONS / f"{name}.jsonl", kb.store.chunks())
        ranks, pages = [], []
        for q in questions:
            hits = kb.search(q.question, 20)
            ranks.append(evaluate.rank_of(hits, q.gold))
            pages.append(evaluate.page_rank_of(hits, q.gold))
            if args.misses and (ranks[-1] is None or ranks[-1] > 5):
                print(
                    f"   miss r={ranks[-1]} {q.question[:90]!r} gold={q.gold[0][1]} "
                    f"got={[h.chunk.anchor for h in hits[:3]]}"
                )
        kb.close()
        total_ranks += ranks
        total_pages += pages
        _row(name, evaluate.metrics(ranks, pages))
    _row("all", evaluate.metrics(total_ranks, total_pages))


def _row(name: str, m: dict[str, float]) -> None:
    print(
        f"{name:<16} {int(m['n']):>3} {m['R@1']:>6.3f} {m['R@5']:>6.3f} {m['R@10']:>6.3f} "
        f"{m['R@20']:>6.3f} {m['MRR@20']:>6.3f} {m['page@5']:>7.3f}",
        flush=True,
    )
    if name == "all":
        print(json.dumps({k: round(v, 4) for k, v in m.items()}))


if __name__ == "__main__":
    main()
