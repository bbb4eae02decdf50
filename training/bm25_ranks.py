"""How lexically easy the training pairs are: the rank BM25 gives each pair's section.

    python training/bm25_ranks.py [--pairs training/data/pairs.jsonl]

For every link and question pair of ``pairs.py``, its site's sections (the distinct
positives the pairs hold for it) are ranked for the pair's query by BM25 with kb-qa's own
tokenizer and parameters (``kb_qa.index.keyword``), and the share of pairs whose section
comes first, in the top three, at ranks 4-50 and beyond 50 is printed. A model trained to
complement BM25 (CLEAR, Gao et al. 2021: learn what the lexical side misses) would train on
the pairs BM25 ranks low; this says how many there are. Needs no torch.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import bm25s
import numpy as np

from kb_qa.text import keyword_tokens

HERE = Path(__file__).resolve().parent
KINDS = ("link", "question")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=Path, default=HERE / "data" / "pairs.jsonl")
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.pairs.open(encoding="utf-8")]
    sections: dict[str, dict[str, None]] = defaultdict(dict)
    asked: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        sections[row["site"]][row["positive"]] = None
        if row["kind"] in KINDS:
            asked[row["site"]].append(row)
    ranks: dict[str, list[int]] = defaultdict(list)
    for site, pairs in asked.items():
        texts = list(sections[site])
        where = {text: i for i, text in enumerate(texts)}
        bm25 = bm25s.BM25(k1=1.5, b=0.5)  # as kb_qa.index.keyword.KeywordIndex
        bm25.index([keyword_tokens(t) or ["\x00"] for t in texts], show_progress=False)
        for row in pairs:
            query = [t for t in keyword_tokens(row["query"]) if t in bm25.vocab_dict]
            if not query:
                ranks[row["kind"]].append(len(texts))
                continue
            scores = np.asarray(bm25.get_scores(query))
            ranks[row["kind"]].append(int((scores > scores[where[row["positive"]]]).sum()))
    print(f"{'kind':<10} {'pairs':>6} {'first':>6} {'top 3':>6} {'4-50':>6} {'>50':>6}")
    for kind in KINDS:
        r = np.array(ranks[kind])
        print(
            f"{kind:<10} {len(r):>6} {(r == 0).mean():>6.3f} {(r < 3).mean():>6.3f} "
            f"{((r >= 3) & (r < 50)).mean():>6.3f} {(r >= 50).mean():>6.3f}"
        )


if __name__ == "__main__":
    main()
