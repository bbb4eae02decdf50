"""The naive hybrid baseline that kb-qa must beat on real questions (the retrieval issue).

Whole heading sections (a section's pieces joined back together, heading first), bm25s with
its default English tokenizer and stopwords, the same MiniLM embeddings, and plain
reciprocal rank fusion with k=60. Nothing tuned: a reference point measured in the same run
on the same questions as kb-qa (bench/quality.py --baseline).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import bm25s
import numpy as np

from kb_qa.index.embeddings import Embedder
from kb_qa.types import Chunk, Hit

RRF_K = 60


@dataclass(frozen=True)
class Section:
    path: str
    anchor: str
    text: str
    first: Chunk  # its first piece, to report hits as kb-qa does


def sections(chunks: Sequence[Chunk]) -> list[Section]:
    """One entry per (path, anchor): the heading and the whole section text."""
    grouped: dict[tuple[str, str], list[Chunk]] = {}
    for c in chunks:
        grouped.setdefault((c.path, c.anchor), []).append(c)
    return [
        Section(path, anchor, "\n".join([parts[0].heading] + [c.text for c in parts]), parts[0])
        for (path, anchor), parts in grouped.items()
    ]


class Baseline:
    """BM25 + vectors over whole sections, fused by RRF."""

    def __init__(self, chunks: Sequence[Chunk], embedder: Embedder, cache: Path) -> None:
        self.sections = sections(chunks)
        texts = [s.text for s in self.sections]
        self.bm25 = bm25s.BM25()
        self.bm25.index(
            bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False
        )
        self.embedder = embedder
        self.vectors = _cached_embeddings(texts, embedder, cache)

    def search(self, question: str, k: int) -> list[Hit]:
        n = len(self.sections)
        [words] = bm25s.tokenize([question], stopwords="en", return_ids=False, show_progress=False)
        known = [w for w in words if w in self.bm25.vocab_dict]
        kw_scores = self.bm25.get_scores(known) if known else np.zeros(n)
        kw_order = [int(i) for i in np.argsort(-kw_scores, kind="stable") if kw_scores[i] > 0][:200]
        q = self.embedder.embed_query(question)
        vec_order = [int(i) for i in np.argsort(-(self.vectors @ q), kind="stable")[:200]]
        scores: dict[int, float] = {}
        for order in (kw_order, vec_order):
            for rank, i in enumerate(order, 1):
                scores[i] = scores.get(i, 0.0) + 1 / (RRF_K + rank)
        best = sorted(scores, key=lambda i: -scores[i])[:k]
        return [Hit(self.sections[i].first, scores[i]) for i in best]


def _cached_embeddings(texts: list[str], embedder: Embedder, cache: Path) -> np.ndarray:
    key = hashlib.sha1("\0".join(texts).encode()).hexdigest()[:16]
    file = cache / f"baseline-{key}.npy"
    if file.exists():
        return np.load(file)
    # In batches, as kb-qa embeds: one call with every section pads them all to one length.
    vectors = np.concatenate(
        [
            np.asarray(embedder.embed_passages(texts[i : i + 16]), dtype=np.float32)
            for i in range(0, len(texts), 16)
        ]
    )
    cache.mkdir(parents=True, exist_ok=True)
    np.save(file, vectors)
    return vectors
