"""Sweep retrieval settings over indexes bench/quality.py built (run it first, same options).

    python bench/tune.py [--set real|synthetic|both] rrf_k=30,60 keyword_weight=1,1.5

Prints R@1/5/20, MRR@20 and page@5 per combination and set: real questions decide, the
synthetic set must not fall apart.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpora import WORK, eval_sets
from quality import _value

from kb_qa import KnowledgeBase, evaluate


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--set", default="real", choices=("real", "synthetic", "both"))
    parser.add_argument("grid", nargs="*", help="KEY=V1,V2,...")
    args = parser.parse_args()
    grid = {k: [_value(v) for v in vs.split(",")] for k, vs in (a.split("=") for a in args.grid)}
    loaded = []
    for kind, name, vault, questions_file in eval_sets(args.set):
        kb = KnowledgeBase(vault, index_dir=WORK / "index" / f"{kind}-{name}-default-d")
        if not kb.store.files():
            raise SystemExit(f"no index for {kind}/{name}: run bench/quality.py --set {kind}")
        questions = evaluate.load_questions(questions_file, kb.store.chunks())
        loaded.append((kind, kb, kb.settings, questions))
    keys = list(grid)
    for combo in itertools.product(*(grid[k] for k in keys)) if keys else [()]:
        changes = dict(zip(keys, combo))
        by_kind: dict[str, tuple[list, list]] = {}
        for kind, kb, base, questions in loaded:
            kb.settings = base.replace(**changes)
            ranks, pages = by_kind.setdefault(kind, ([], []))
            for q in questions:
                hits = kb.search(q.question, 50)
                ranks.append(evaluate.rank_of(hits, q.gold))
                pages.append(evaluate.page_rank_of(hits, q.gold))
        cells = []
        for kind, (ranks, pages) in by_kind.items():
            m = evaluate.metrics(ranks, pages)
            cells.append(
                f"{kind}: R@1 {m['R@1']:.3f} R@5 {m['R@5']:.3f} R@20 {m['R@20']:.3f} "
                f"MRR {m['MRR@20']:.3f} page@5 {m['page@5']:.3f}"
            )
        print(f"{changes}  " + "  |  ".join(cells), flush=True)


if __name__ == "__main__":
    main()
