"""Keep a generated question only when the base model finds its section again (round trip).

    python training/filter_questions.py [--top 3] [--generated training/data/pairs-generated.jsonl]

The consistency filter of Promptagator and InPars: a question a small language model wrote
for a section (``gen_questions.py``) is kept when the base MiniLM, searching every section
of the same site (the distinct positives ``pairs.jsonl`` holds for it), ranks that section
among its ``--top`` best. A question about something the section only mentions, or an
invented one, finds other sections first. Rows that fail are written with the kind
``generated-inconsistent`` (``train.py``'s mix leaves them out) and the rank they got, so
the file says why each was dropped. Needs the ``train`` extra (torch).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def pools(pairs: Path, sites: set[str]) -> dict[str, list[str]]:
    """Per site, its distinct sections: the positives of ``pairs`` (first seen first)."""
    seen: dict[str, dict[str, None]] = defaultdict(dict)
    with pairs.open(encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            if row["site"] in sites:
                seen[row["site"]][row["positive"]] = None
    return {site: list(texts) for site, texts in seen.items()}


def ranks(targets: list[int], vectors: np.ndarray, asked: np.ndarray) -> list[int]:
    """0-based rank of each question's target section among ``vectors`` by cosine."""
    scores = asked @ vectors.T
    return [int((row > row[t]).sum()) for row, t in zip(scores, targets, strict=True)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=Path, default=HERE / "data" / "pairs.jsonl")
    parser.add_argument("--generated", type=Path, default=HERE / "data" / "pairs-generated.jsonl")
    parser.add_argument("--out", type=Path, default=HERE / "data" / "pairs-consistent.jsonl")
    parser.add_argument("--top", type=int, default=3, help="keep when the section ranks this high")
    parser.add_argument("--max-tokens", type=int, default=128)
    args = parser.parse_args()

    import torch
    from sentence_transformers import SentenceTransformer
    from train import base_model_path

    torch.set_num_threads(2)
    rows = [json.loads(line) for line in args.generated.open(encoding="utf-8")]
    asked = defaultdict(list)
    for row in rows:
        if row["kind"] == "generated":
            asked[row["site"]].append(row)
    model = SentenceTransformer(str(base_model_path()), device="cpu")
    model.max_seq_length = args.max_tokens
    sections = pools(args.pairs, set(asked))
    kept = 0
    for done, (site, mine) in enumerate(sorted(asked.items()), 1):
        texts = sections[site]
        at = {text: i for i, text in enumerate(texts)}
        vectors = model.encode(texts, batch_size=64, normalize_embeddings=True)
        questions = model.encode([r["query"] for r in mine], normalize_embeddings=True)
        found = ranks([at[r["positive"]] for r in mine], vectors, questions)
        for row, rank in zip(mine, found, strict=True):
            row["rank"] = rank
            if rank >= args.top:
                row["kind"] = "generated-inconsistent"
            else:
                kept += 1
        print(f"{done}/{len(asked)} {site}: {len(texts)} sections, kept {kept} so far", flush=True)
    with args.out.open("w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    total = sum(len(m) for m in asked.values())
    print(f"kept {kept} of {total} questions (their section in the base model's top {args.top})")


if __name__ == "__main__":
    main()
