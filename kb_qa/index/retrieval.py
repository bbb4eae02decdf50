"""Hybrid retrieval: vector and keyword rankings fused by reciprocal rank fusion.

Retrieval is one plain, fast step and it is generous: answering hands the model many
excerpts and lets it judge, so the candidate lists here are long.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import re
from collections.abc import Sequence, Set
from dataclasses import dataclass

import numpy as np

from kb_qa.errors import ConfigError
from kb_qa.text import nfc
from kb_qa.types import Chunk, Hit


def path_matches(path: str, patterns: Sequence[str]) -> bool:
    """Whether a vault path equals, lies under, or glob-matches any of ``patterns`` (a name
    macOS wrote decomposed matches a pattern typed composed)."""
    path = nfc(path)
    for pattern in patterns:
        pattern = nfc(pattern.strip().lstrip("./") if pattern.startswith("./") else pattern.strip())
        if not pattern:
            continue
        if path == pattern or path.startswith(pattern.rstrip("/") + "/"):
            return True
        if fnmatch.fnmatchcase(path, pattern):
            return True
    return False


_HISTORY_NAME = re.compile(
    r"change[-_ ]?log|changes|release[-_ ]?notes|releases|history|news|what'?s[-_ ]new",
    re.IGNORECASE,
)
_VERSION = re.compile(r"\bv?\d+\.\d+(?:\.\d+)?\b")


def history_pages(chunks: Sequence[Chunk], patterns: Sequence[str] = ()) -> set[str]:
    """Pages that record history (changelogs, release notes, upgrade logs), not how-to.

    Found by rule, not by list: the page's file name or title says so, or most of its
    headings name a version; ``patterns`` (the ``history_pages`` setting) add paths/globs.
    """
    headings: dict[str, list[str]] = {}
    titles: dict[str, str] = {}
    for c in chunks:
        headings.setdefault(c.path, []).append(c.heading)
        titles.setdefault(c.path, c.indexed_path[0] if c.heading_path else "")
    found = set()
    for path, heads in headings.items():
        stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        named = _HISTORY_NAME.fullmatch(stem) or _HISTORY_NAME.fullmatch(titles[path].strip())
        versioned = len(heads) >= 4 and sum(bool(_VERSION.search(h)) for h in heads) >= 0.5 * len(
            heads
        )
        if named or versioned or (patterns and path_matches(path, patterns)):
            found.add(path)
    return found


def demote(
    hits: Sequence[Hit], paths: set[str], factor: float, spare: Set[str] = frozenset()
) -> list[Hit]:
    """Scale the score of hits on ``paths`` by ``factor`` and re-rank (1.0: no change);
    chunks whose ids are in ``spare`` keep their score."""
    if factor == 1.0 or not paths:
        return list(hits)
    scaled = [
        dataclasses.replace(h, score=h.score * factor)
        if h.chunk.path in paths and h.chunk.id not in spare
        else h
        for h in hits
    ]
    return sorted(scaled, key=lambda h: -h.score)


def page_boost(hits: Sequence[Hit], weight: float, rrf_k: int = 60) -> list[Hit]:
    """Add a page-level ranking to each hit: pages whose sections match often rank high.

    A page's score is the sum of its three best hits; pages are ranked by it, and each hit
    gains ``weight / (rrf_k + its page's rank)``, as one more list in the fusion. Under
    zscore fusion only hits better than the average candidate (``fused`` > 0) count: a page
    of two unrelated sections must not outrank the one section that matches. When the
    vector and keyword searches both put one section first, its page ranks first too: a
    short page (a note, a plugin's one section on its sandbox) is no longer pushed below a
    long page's near misses. Real dev questions R@5 0.595 either way (R@1 0.291 -> 0.278,
    one question), synthetic R@1 0.544 -> 0.562, R@5 0.819 either way. Only a page's
    matching hits gain (a note's title section that holds no word of the question stays
    where it is): dev R@20 0.797 -> 0.810, nothing else changes.
    """
    if not weight or not hits:
        return list(hits)
    best: dict[str, list[float]] = {}
    for h in hits:
        if h.fused is not None and h.fused <= 0:
            continue
        scores = best.setdefault(h.chunk.path, [])
        if len(scores) < 3:
            scores.append(h.score)
    order = sorted(best, key=lambda p: -sum(best[p]))
    rank = {p: n for n, p in enumerate(order, 1)}
    for h in hits:
        if h.vector_rank == 1 and h.keyword_rank == 1 and h.chunk.path in rank:
            rank[h.chunk.path] = 1
    boosted = [
        dataclasses.replace(h, score=h.score + weight / (rrf_k + rank[h.chunk.path]))
        if h.chunk.path in rank and (h.fused is None or h.fused > 0)
        else h
        for h in hits
    ]
    return sorted(boosted, key=lambda h: -h.score)


# At most this many chunks holding the question's words make them the lone matches (below);
# real and synthetic questions match far more, and no figure of theirs changes with it.
LONE_MATCHES = 3


def fuse(
    chunks: Sequence[Chunk],
    vector: Sequence[tuple[str, float]],
    keyword: Sequence[tuple[int, float]],
    *,
    by_id: dict[str, int],
    rrf_k: int = 60,
    vector_weight: float = 1.0,
    keyword_weight: float = 1.0,
    method: str = "zscore",
    links: Links | None = None,
    cosines: dict[int, float] | None = None,
    complete: set[int] | None = None,
    codes: set[int] | None = None,
) -> list[Hit]:
    """Fuse a vector ranking ((chunk id, cosine similarity), best first) and a keyword
    ranking ((chunk index, BM25 score), best first) into one list of hits.

    ``zscore`` (the default) standardises each list's scores (mean 0, deviation 1 over its
    candidates; a chunk missing from a list gets that list's lowest score) and ranks by
    their weighted sum, so one strong signal counts for more than two middling ranks;
    ``cosines`` gives the similarity of keyword candidates the vector list did not return
    (they are standardised with it instead of getting the lowest score), and ``links``
    adds what the docs' own links say about each candidate.
    ``rrf`` is reciprocal rank fusion. Either way a hit's ``score`` is
    ``1 / (rrf_k + rank)`` (``rrf``: the sum over lists), the scale the page boost and
    history demotion work on.
    """
    vrank: dict[int, int] = {}
    sim: dict[int, float] = {}
    for rank, (chunk_id, similarity) in enumerate(vector, 1):
        i = by_id.get(chunk_id)
        if i is None:  # a vector the manifest does not know (interrupted write): ignore
            continue
        vrank.setdefault(i, rank)
        sim.setdefault(i, similarity)
    krank: dict[int, int] = {}
    bm25: dict[int, float] = {}
    for rank, (i, score) in enumerate(keyword, 1):
        krank.setdefault(i, rank)
        bm25.setdefault(i, score)
    candidates = sorted(vrank.keys() | krank.keys())
    fused: dict[int, float] = {}  # zscore only
    if method == "rrf":
        scores = {
            i: (vector_weight / (rrf_k + vrank[i]) if i in vrank else 0.0)
            + (keyword_weight / (rrf_k + krank[i]) if i in krank else 0.0)
            for i in candidates
        }
    elif method == "zscore":
        total = (vector_weight + keyword_weight) or 1.0
        known = {**cosines, **sim} if cosines else sim
        combined = vector_weight / total * _standard(known, candidates) + (
            keyword_weight / total
        ) * _standard(bm25, candidates)
        # ``fused`` is how well a candidate matches the question; the links' evidence
        # reorders candidates but does not make a section count as matching for its page.
        fused_z = combined
        if links is not None:
            combined = combined + links.evidence(candidates)
        # The question's words occur in these chunks only (a made-up name, an error code, a
        # flag), alike or in at most LONE_MATCHES of them: they lead, and only they count as
        # matching for their pages (page_boost). Standardised, a lone match would count for
        # less than the best vector candidates of a list that is noise for such a word (uv:
        # 3 of 40 such words reached the top 10; a notes vault's "ThinkCentre", in two
        # notes, came 8th). Of many chunks holding some of its words, the few holding all of
        # them lead too ("rest minutes fridge"; the batter note came 8th).
        # So do, and alone count as matching, the few chunks holding a code the question
        # names ("What does LUM-2003 mean?": "lum" is in every error code's chunk, "2003"
        # in one table's, which came 9th behind the pages its other words boosted).
        only = bool(bm25) and (_flat(bm25) or len(bm25) <= LONE_MATCHES)
        whole = (complete or set()) & bm25.keys()
        leading = bm25.keys() if only else whole if len(whole) <= LONE_MATCHES else set()
        coded = (codes or set()) & bm25.keys()
        leading = coded or leading
        if keyword_weight and leading:
            lone = np.array([i in leading for i in candidates])
            lift = lone * (combined.max() - combined[lone].min() + 1e-6)
            combined = combined + lift
            others = np.minimum(fused_z, 0.0) if only or bool(coded) else fused_z
            fused_z = np.where(lone, fused_z + lift, others)
        fused = {i: float(z) for i, z in zip(candidates, fused_z)}
        order = [candidates[j] for j in np.argsort(-combined, kind="stable")]
        scores = {i: 1.0 / (rrf_k + rank) for rank, i in enumerate(order, 1)}
    else:
        raise ConfigError(f"Unknown fusion {method!r}: use 'zscore' or 'rrf'.")
    order = sorted(scores, key=lambda i: (-scores[i], i))
    return [
        Hit(chunks[i], scores[i], vrank.get(i), krank.get(i), sim.get(i), fused.get(i))
        for i in order
    ]


@dataclass(frozen=True)
class Links:
    """What the docs' links to each chunk's section add to its fused score.

    ``linked``: how many other sections link to it (``kb_qa.ingest.linkgraph``); ``text``: the
    question's BM25 score against the lines around those links, for every chunk. A
    candidate gains ``weight * log(1 + linked)`` plus ``text_weight`` times its
    standardised text score (floored at -1: most sections have no links at all).
    """

    linked: np.ndarray
    text: np.ndarray
    weight: float
    text_weight: float

    def evidence(self, candidates: Sequence[int]) -> np.ndarray:
        rows = np.asarray(candidates, dtype=np.int64)
        if not len(rows):
            return np.zeros(0)
        added = self.weight * np.log1p(self.linked[rows])
        column = self.text[rows]
        spread = column.std()
        if self.text_weight and spread > 1e-9:
            added = added + self.text_weight * np.clip((column - column.mean()) / spread, -1, None)
        return added


def _flat(values: dict[int, float]) -> bool:
    """Whether the scores do not spread (one match, or matches alike)."""
    known = np.fromiter(values.values(), float, len(values))
    return float(known.std()) <= 1e-9


def _standard(values: dict[int, float], candidates: Sequence[int]) -> np.ndarray:
    """``values`` of ``candidates`` as z-scores; a candidate without one gets the minimum.

    When the values do not spread (one keyword match, say), having one is all they say:
    1 for candidates with a value, 0 for the rest.
    """
    if not values:
        return np.zeros(len(candidates))
    known = np.fromiter(values.values(), float, len(values))
    mean, spread = known.mean(), known.std()
    if spread <= 1e-9:
        return np.array([1.0 if i in values else 0.0 for i in candidates])
    column = np.array([values.get(i, known.min()) for i in candidates], float)
    return (column - mean) / spread


def distinct(hits: Sequence[Hit]) -> list[Hit]:
    """One of the passages that say the same under the same headings in two files (a note
    and a symlink to it, a sync tool's copy): an answer cited "Sam [1]" and "Sam [2]" for
    one passage, and the copy took a place another section could have had."""
    said: set[tuple[tuple[str, ...], str]] = set()
    result = []
    for hit in hits:
        same = (tuple(hit.chunk.heading_path), hit.chunk.text)
        if same not in said:
            said.add(same)
            result.append(hit)
    return result


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
    return [dataclasses.replace(first[i], score=scores[i]) for i in order]
