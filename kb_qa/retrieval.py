"""Hybrid retrieval: vector and keyword rankings fused by reciprocal rank fusion.

Retrieval is one plain, fast step and it is generous: answering hands the model many
excerpts and lets it judge, so the candidate lists here are long.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence

from kb_qa.types import Chunk, Hit


def path_matches(path: str, patterns: Sequence[str]) -> bool:
    """Whether a vault path equals, lies under, or glob-matches any of ``patterns``."""
    for pattern in patterns:
        pattern = pattern.strip().lstrip("./") if pattern.startswith("./") else pattern.strip()
        if not pattern:
            continue
        if path == pattern or path.startswith(pattern.rstrip("/") + "/"):
            return True
        if fnmatch.fnmatchcase(path, pattern):
            return True
    return False


def fuse(
    chunks: Sequence[Chunk],
    vector_ids: Sequence[str],
    keyword_idx: Sequence[int],
    *,
    by_id: dict[str, int],
    rrf_k: int = 60,
    vector_weight: float = 1.0,
    keyword_weight: float = 1.0,
) -> list[Hit]:
    """Reciprocal rank fusion of a vector ranking (chunk ids) and a keyword ranking (indexes)."""
    scores: dict[int, float] = {}
    vrank: dict[int, int] = {}
    krank: dict[int, int] = {}
    for rank, chunk_id in enumerate(vector_ids, 1):
        i = by_id.get(chunk_id)
        if i is None:  # a vector the manifest does not know (interrupted write): ignore
            continue
        vrank[i] = rank
        scores[i] = scores.get(i, 0.0) + vector_weight / (rrf_k + rank)
    for rank, i in enumerate(keyword_idx, 1):
        krank[i] = rank
        scores[i] = scores.get(i, 0.0) + keyword_weight / (rrf_k + rank)
    order = sorted(scores, key=lambda i: (-scores[i], i))
    return [Hit(chunks[i], scores[i], vrank.get(i), krank.get(i)) for i in order]


def by_section(hits: Sequence[Hit]) -> list[Hit]:
    """Keep the best-ranked piece of each heading section."""
    seen: set[tuple[str, str]] = set()
    result = []
    for hit in hits:
        key = (hit.chunk.path, hit.chunk.anchor)
        if key not in seen:
            seen.add(key)
            result.append(hit)
    return result


def fuse_rankings(rankings: Sequence[Sequence[Hit]], rrf_k: int = 60) -> list[Hit]:
    """Reciprocal rank fusion of several hit lists (one per query); one list is kept as is."""
    if len(rankings) == 1:
        return list(rankings[0])
    scores: dict[str, float] = {}
    first: dict[str, Hit] = {}
    for hits in rankings:
        for rank, hit in enumerate(hits, 1):
            scores[hit.chunk.id] = scores.get(hit.chunk.id, 0.0) + 1 / (rrf_k + rank)
            first.setdefault(hit.chunk.id, hit)
    order = sorted(scores, key=lambda i: -scores[i])
    return [
        Hit(first[i].chunk, scores[i], first[i].vector_rank, first[i].keyword_rank) for i in order
    ]
