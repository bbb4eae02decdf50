"""Questions grouped into topics by their embeddings: the coverage gaps of the insights report.

Leader clustering by density: the question with the most (weighted) neighbours above a
similarity threshold founds a topic and takes those neighbours; the densest question left
founds the next, and so on. Deterministic, no number of topics to choose, and each topic has
a natural label: its founder, then the members nearest to it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

# Cosine similarity at or above which two questions are about the same thing. MiniLM: 0.55
# joins rephrasings ("install on windows" / "windows installation fails") and keeps apart
# questions that only share a product name; other models get a middle value.
SIMILARITY = {"minilm": 0.55}
DEFAULT_SIMILARITY = 0.5
# At or above this, two questions are the same question in other words (the top-questions
# list merges them). MiniLM: "What is the capital of France?" / "what is the capital city of
# france" 0.87, "install widgetron" / "How do I install Widgetron?" 0.97, while "How do I
# install on Windows?" / "… on Mac?" (0.61) and "How do I bake sourdough bread?" / "What is a
# good sourdough bread recipe?" (0.81) stay apart.
DUPLICATE = {"minilm": 0.85}
DEFAULT_DUPLICATE = 0.85


@dataclass(frozen=True)
class Topic:
    """Indices of the questions in one topic, its founder first, then nearest first."""

    members: tuple[int, ...]
    weight: float  # sum of the members' weights (how often they were asked)


def threshold(embed_model: str) -> float:
    """The similarity threshold for vectors of this embedding model."""
    return SIMILARITY.get(embed_model, DEFAULT_SIMILARITY)


def duplicate_threshold(embed_model: str) -> float:
    """The similarity at which questions embedded by this model are the same question."""
    return DUPLICATE.get(embed_model, DEFAULT_DUPLICATE)


def cluster(vectors: np.ndarray, weights: Sequence[float], similarity: float) -> list[Topic]:
    """Topics of unit ``vectors`` (one row per question), heaviest first."""
    n = len(vectors)
    if n == 0:
        return []
    w = np.asarray(weights, dtype=np.float64)
    sims = vectors @ vectors.T
    near = sims >= similarity
    density = near.astype(np.float64) @ w
    free = np.ones(n, dtype=bool)
    topics = []
    # Densest first; ties go to the question asked more often, then to the earlier one.
    for leader in np.lexsort((np.arange(n), -w, -density)):
        if not free[leader]:
            continue
        members = np.flatnonzero(near[leader] & free)
        members = members[np.argsort(-sims[leader, members], kind="stable")]
        if members[0] != leader:  # equal vectors: the founder still leads
            members = np.concatenate(([leader], members[members != leader]))
        free[members] = False
        topics.append(Topic(tuple(int(i) for i in members), float(w[members].sum())))
    topics.sort(key=lambda t: -t.weight)
    return topics
