"""Sweep retrieval settings over already-built dev indexes (run bench/quality.py first).

python bench/tune.py rrf_k=60 page_weight=0,0.5,1 keyword_weight=1,1.5
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpora import CORPORA, QUESTIONS, corpus_copy

from kb_qa import KnowledgeBase, evaluate


def main() -> None:
    grid = {}
    for arg in sys.argv[1:]:
        key, values = arg.split("=")
        grid[key] = [float(v) if "." in v else int(v) for v in values.split(",")]
    kbs = {}
    questions = {}
    for name in CORPORA:
        vault = corpus_copy(name)
        kbs[name] = KnowledgeBase(vault, index_dir=vault / ".kb-qa-default-d")
        questions[name] = evaluate.load_questions(
            QUESTIONS / f"{name}.jsonl", kbs[name].store.chunks()
        )
    keys = list(grid)
    for combo in itertools.product(*(grid[k] for k in keys)):
        changes = dict(zip(keys, combo))
        ranks, pages, per = [], [], []
        for name, kb in kbs.items():
            kb.settings = kb.settings.replace(**changes)
            r, p = [], []
            for q in questions[name]:
                hits = kb.search(q.question, 20)
                r.append(evaluate.rank_of(hits, q.gold))
                p.append(evaluate.page_rank_of(hits, q.gold))
            per.append(f"{name}={evaluate.metrics(r, p)['R@5']:.2f}")
            ranks += r
            pages += p
        m = evaluate.metrics(ranks, pages)
        print(
            f"{changes} R@1 {m['R@1']:.3f} R@5 {m['R@5']:.3f} R@10 {m['R@10']:.3f} "
            f"MRR {m['MRR@20']:.3f} page@5 {m['page@5']:.3f}  {' '.join(per)}",
            flush=True,
        )


if __name__ == "__main__":
    main()
