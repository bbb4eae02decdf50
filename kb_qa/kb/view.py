"""The search view: every chunk's text and vector in memory, with the keyword index.

A search never waits on a write: the view is loaded from the manifest (or, on a replica,
from Chroma's records) once per index generation and swapped in whole.
"""

from __future__ import annotations

import contextvars
import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kb_qa.index import retrieval
from kb_qa.index.keyword import KeywordIndex
from kb_qa.ingest import linkgraph, vault
from kb_qa.settings import Settings
from kb_qa.types import Chunk


@dataclass
class Loaded:
    """In-memory view of the manifest used by search; rebuilt when the index changes."""

    generation: str = ""
    chunks: list[Chunk] = field(default_factory=list)
    by_id: dict[str, int] = field(default_factory=dict)
    keyword: KeywordIndex | None = None
    history: set[str] = field(default_factory=set)  # changelog-like pages (retrieval.history_pages)
    # Keyword tokens only history pages hold -> the ids of their chunks that hold them
    history_only: dict[str, set[str]] = field(default_factory=dict)
    vectors: np.ndarray | None = None  # every chunk's embedding, in order (None: not at hand)
    linked: np.ndarray = field(default_factory=lambda: np.zeros(0))  # links to each chunk's section
    link_text: KeywordIndex | None = None  # the lines around those links, one text per chunk
    written_links: dict[str, list[linkgraph.Link]] = field(default_factory=dict)  # by hash
    refused: frozenset[str] = frozenset()  # indexed paths the vault boundary no longer allows
    saved: bool = False  # read back from the index folder (kb_qa.kb.saved_view), not built


def load_view(
    generation: str,
    chunks: list[Chunk],
    previous: Loaded,
    settings: Settings,
    refused: frozenset[str] = frozenset(),
    vectors: dict[str, np.ndarray] | None = None,
) -> Loaded:
    """The in-memory view search runs on (a replica builds the same from Chroma's records);
    keyword tokens and links of chunks unchanged since ``previous`` are reused. ``vectors``
    (by chunk id) lets search score keyword matches the vector index did not return."""
    inbound = linkgraph.inbound(chunks, previous.written_links)
    keyword = KeywordIndex(chunks, previous.keyword.tokens if previous.keyword else None)
    history = retrieval.history_pages(chunks, settings.history_pages)
    elsewhere: set[str] = set()
    for c in chunks:
        if c.path not in history:
            elsewhere.update(keyword.tokens[c.hash])
    history_only: dict[str, set[str]] = {}
    for c in chunks:
        if c.path in history:
            for t in set(keyword.tokens[c.hash]) - elsewhere:
                history_only.setdefault(t, set()).add(c.id)
    return Loaded(
        generation=generation,
        chunks=chunks,
        by_id={c.id: i for i, c in enumerate(chunks)},
        keyword=keyword,
        history=history,
        history_only=history_only,
        vectors=_matrix(chunks, vectors or {}),
        linked=inbound.counts,
        link_text=KeywordIndex.of_texts(
            inbound.context, previous.link_text.tokens if previous.link_text else None
        ),
        written_links=inbound.written,
        refused=refused,
    )


def refused_paths(boundary: vault.Boundary, root: Path, paths: Iterable[str]) -> frozenset[str]:
    """The indexed ``paths`` the vault boundary refuses now (a missing file is kept), as
    ``boundary.refuse`` says of each, with each folder resolved and judged once: a file
    that is no symlink is where its resolved folder is, and its own name is the same on
    both sides of the hidden-name rule (resolving 30,000 paths one by one, a lookup per
    folder of each, took longer than the rest of a search)."""
    folders: dict[Path, str | None] = {}  # the verdict on a plain file there; None: ask each
    refused = set()
    for rel in paths:
        path = root / rel
        if path.parent not in folders:
            try:
                real = path.parent.resolve(strict=True)
                folders[path.parent] = boundary.refuse_real(real / "_", path.parent / "_")
            except (OSError, RuntimeError):  # missing, unreadable, a loop: asked one by one
                folders[path.parent] = None
        verdict = folders[path.parent]
        try:
            link = stat.S_ISLNK(os.lstat(path).st_mode)
        except OSError:
            link = True  # missing or unreadable: the exact check says which
        why = boundary.refuse(path) if verdict is None or link else verdict
        if why not in ("", vault.MISSING, vault.BROKEN_LINK):
            refused.add(rel)
    return frozenset(refused)


def nearest_chunks(
    chunks: Sequence[Chunk], similarity: np.ndarray, n: int, allowed: np.ndarray | None
) -> list[tuple[str, float]]:
    """(chunk id, cosine distance) of the ``n`` nearest chunks, from every chunk's cosine
    to the question (the view's vectors times its vector).

    Exact where Chroma's HNSW is approximate, and it needs neither Chroma's files nor a
    round trip to a server: a search never waits on, or fails with, an index being
    written (the view is swapped whole when a write commits). 5,000 chunks take ~1 ms.
    """
    scores = similarity
    if allowed is not None:
        scores = np.where(allowed, scores, -np.inf)
        n = min(n, int(allowed.sum()))
    n = min(n, len(scores))
    if n <= 0:
        return []
    top = np.argpartition(-scores, n - 1)[:n]
    top = top[np.argsort(-scores[top], kind="stable")]
    return [(chunks[i].id, 1.0 - float(scores[i])) for i in top]


def _matrix(chunks: list[Chunk], vectors: dict[str, np.ndarray]) -> np.ndarray | None:
    """The chunks' vectors as one matrix, row i for chunk i (None unless all are known)."""
    if not chunks or any(c.id not in vectors for c in chunks):
        return None
    return np.stack([vectors[c.id] for c in chunks], dtype=np.float32)


# The view an answer in progress searches (KnowledgeBase.pinned), per thread/task.
PINNED: contextvars.ContextVar[tuple[int, Loaded] | None] = contextvars.ContextVar(
    "kb_qa_pinned_view", default=None
)
