"""The questions of the insights report as readers asked them: the top questions, their
rewordings merged by meaning, and the coverage gaps grouped into topics.

Both use the index's own embedding model (``Vectors``; vectors already made are kept in
the question log for the next report) and ``kb_qa.owners.topics``.
"""

from __future__ import annotations

import re
import sqlite3
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from kb_qa.errors import KbQaError
from kb_qa.owners import topics
from kb_qa.owners.feedback import Feedback
from kb_qa.owners.questionlog import Entry, QuestionLog

if TYPE_CHECKING:
    from kb_qa.kb.knowledge_base import KnowledgeBase

# Distinct gap questions grouped, most frequent first: embedding them is most of a report's
# time (~8 ms each on 2 idle cores); their vectors are kept for the next report.
MAX_GAP_TEXTS = 1000
MAX_TOPICS = 30
REPRESENTATIVE = 3  # questions shown per topic
NEAREST_SECTIONS = 3  # sections shown per gap topic
# Distinct questions merged by meaning in the top-questions list, most asked first (the rest
# are listed as asked); and rows of that list in the report (the CSV has them all).
# Embedding them is most of a first report's extra time (~7 s for 500 on 2 busy cores).
MAX_QUESTION_TEXTS = 200


CITED_PER_QUESTION = 5
OTHER_WORDINGS = 3  # other wordings shown per top question
# What a group's label should not be when another wording was asked as often: one holding an
# e-mail address, a URL or a phone number ("please contact me at jane@example.com about how
# to install lumen" headed the report over "How do I install Lumen?"), then the shortest.
_PERSONAL = re.compile(r"\S@\S+\.\w|https?://|\d[\d ()+-]{6,}\d")


EMBED_BATCH = 64


_SPACE = re.compile(r"\s+")


def is_ok(e: Entry) -> bool:
    return not e.error


def outcome_of(e: Entry) -> str:
    """answered, not_covered, errors, or left (the reader went before the answer ended)."""
    if e.error:
        return "left" if e.error == "disconnected" else "errors"
    return "answered" if e.covered else "not_covered"


def question_key(text: str) -> str:
    """Questions that differ only in case and spacing are the same question."""
    return _SPACE.sub(" ", text).strip().casefold()


@dataclass
class Asked:
    """Every time one question (the same text but for case and spacing) was asked."""

    wordings: Counter[str] = field(default_factory=Counter)
    asked: int = 0
    last: float = 0.0
    outcomes: Counter[str] = field(default_factory=Counter)
    cited: Counter[tuple[str, str]] = field(default_factory=Counter)  # what readers were shown
    headings: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    up: int = 0
    down: int = 0
    reasons: Counter[str] = field(default_factory=Counter)

    @property
    def label(self) -> str:
        return self.wordings.most_common(1)[0][0]


def asked_questions(entries: Sequence[Entry], ratings: Sequence[Feedback]) -> dict[str, Asked]:
    """The logged questions by their text, with the feedback that rated their answers."""
    asked: dict[str, Asked] = {}
    keys: dict[str, str] = {}  # question id -> key
    texts: dict[str, str] = {}  # question -> key: the same few thousand texts over and over
    for e in entries:
        key = texts.get(e.question)
        if key is None:
            key = texts[e.question] = question_key(e.question)
        item = asked.get(key)
        if item is None:
            item = asked[key] = Asked()
        keys[e.ref] = key
        item.wordings[e.question] += 1
        item.asked += 1
        item.last = max(item.last, e.at)
        item.outcomes[outcome_of(e)] += 1
        for c in e.citations:
            section = (c.path, c.anchor)
            item.cited[section] += 1
            if section not in item.headings:
                item.headings[section] = c.heading_path
    for r in ratings:
        key = keys.get(r.question_id) or question_key(r.question)
        rated = asked.get(key)
        if rated is None:  # about a question the log does not have (off, or pruned)
            continue
        if r.rating == "up":
            rated.up += 1
        else:
            rated.down += 1
        if r.reason:
            rated.reasons[r.reason] += 1
    return asked


class Vectors:
    """Unit vectors of question texts for one report: each embedded (or read) once."""

    def __init__(self, kb: KnowledgeBase, log: QuestionLog) -> None:
        self.kb = kb
        self.log = log
        self.known: dict[str, np.ndarray] = {}

    def __call__(self, texts: list[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self.known]
        if missing:
            self.known.update(embed_texts(self.kb, missing, self.log))
        return np.stack([self.known[t] for t in texts])


def chunks_by_section(kb: KnowledgeBase) -> dict[tuple[str, str], Any]:
    """The index's chunks by (path, anchor), a section's first piece for its key."""
    try:
        # A replica's are its search view's (its store is Chroma, not a manifest); anyone
        # else reads the manifest, not building a search view (90% of `kb-qa insights`).
        chunks = kb.searchable_chunks() if getattr(kb, "replica", False) else kb.store.chunks()
        return {(c.path, c.anchor): c for c in reversed(chunks)}
    except KbQaError:
        return {}


def section_json(
    kb: KnowledgeBase,
    chunks: dict[tuple[str, str], Any],
    key: tuple[str, str],
    heading_path: Sequence[str] = (),
    citations: int | None = None,
) -> dict[str, Any]:
    """One section for the report, linked when the index still has it."""
    chunk = chunks.get(key)
    found: dict[str, Any] = {
        "path": key[0],
        "anchor": key[1],
        "heading_path": list(chunk.heading_path if chunk else heading_path),
        "url": kb.url(chunk) if chunk else "",
    }
    if citations is not None:
        found["citations"] = citations
    return found


def merged_questions(
    kb: KnowledgeBase,
    asked: dict[str, Asked],
    vectors: Vectors,
    chunks: dict[tuple[str, str], Any],
    limit: int | None,
) -> dict[str, Any]:
    """What readers asked, most asked first: questions that say the same thing merged."""
    items = sorted(asked.values(), key=lambda a: (-a.asked, -a.last))
    kept = items[:MAX_QUESTION_TEXTS]
    similarity = topics.duplicate_threshold(kb.embedder.name)
    result: dict[str, Any] = {"distinct": len(items), "merged": len(kept)}
    result["similarity"] = similarity
    groups: list[list[Asked]] = []
    if kept:
        try:
            found = topics.cluster(
                vectors([a.label for a in kept]), [a.asked for a in kept], similarity
            )
            groups = [[kept[i] for i in t.members] for t in found]
        except KbQaError as exc:  # listed as asked, unmerged
            result["problem"] = f"questions asked in other words were not merged: {exc}"
            groups = [[a] for a in kept]
    groups += [[a] for a in items[MAX_QUESTION_TEXTS:]]
    rows = [question_row(kb, chunks, group) for group in groups]
    rows.sort(key=lambda r: (-r["asked"], -r["last_asked"]))
    result["groups"] = len(rows)
    result["top"] = rows if limit is None else rows[:limit]
    return result


def question_row(
    kb: KnowledgeBase, chunks: dict[tuple[str, str], Any], group: list[Asked]
) -> dict[str, Any]:
    wordings: Counter[str] = Counter()
    outcomes: Counter[str] = Counter()
    cited: Counter[tuple[str, str]] = Counter()
    reasons: Counter[str] = Counter()
    headings: dict[tuple[str, str], tuple[str, ...]] = {}
    for a in group:
        wordings.update(a.wordings)
        outcomes.update(a.outcomes)
        cited.update(a.cited)
        reasons.update(a.reasons)
        for key, heading in a.headings.items():
            headings.setdefault(key, heading)
    label = max(group, key=lambda a: (a.asked, not _PERSONAL.search(a.label), -len(a.label))).label
    others = [w for w, _ in wordings.most_common() if w != label]
    return {
        "question": label,
        "asked": sum(a.asked for a in group),
        "last_asked": max(a.last for a in group),
        "wordings": len(wordings),
        "also_asked_as": others[:OTHER_WORDINGS],
        "outcome": outcomes.most_common(1)[0][0],
        "outcomes": {k: outcomes[k] for k in ("answered", "not_covered", "errors", "left")},
        "thumbs_up": sum(a.up for a in group),
        "thumbs_down": sum(a.down for a in group),
        "reasons": [{"reason": r, "count": n} for r, n in reasons.most_common(3)],
        "sections": [
            section_json(kb, chunks, key, headings.get(key, ()), n)
            for key, n in cited.most_common(CITED_PER_QUESTION)
        ],
    }


def gap_topics(
    kb: KnowledgeBase,
    entries: Sequence[Entry],
    ratings: Sequence[Feedback],
    vectors: Vectors,
    logged: dict[str, Asked],
    chunks: dict[tuple[str, str], Any],
) -> dict[str, Any]:
    """Not-covered and thumbs-down questions grouped into topics, largest first."""
    asked: dict[str, dict[str, Any]] = {}

    def add(text: str, field: str) -> None:
        key = question_key(text)
        item = asked.setdefault(key, {"question": text, "key": key, "not_covered": 0, "down": 0})
        item["question"] = text  # the latest wording (entries come oldest first)
        item[field] += 1

    for e in entries:
        if is_ok(e) and e.covered is False:
            add(e.question, "not_covered")
    for r in reversed(ratings):  # oldest first, like the entries
        if r.rating == "down":
            add(r.question, "down")
    items = sorted(asked.values(), key=lambda i: -(i["not_covered"] + i["down"]))
    kept = items[:MAX_GAP_TEXTS]
    result: dict[str, Any] = {"questions": len(items), "clustered": len(kept), "topics": []}
    result["more_topics"] = 0  # the same keys for an empty window, for scripts
    if not kept:
        return result
    try:
        found_vectors = vectors([i["question"] for i in kept])
    except KbQaError as exc:  # the report still says everything else
        result["problem"] = f"questions were not grouped: {exc}"
        return result
    weights = [i["not_covered"] + i["down"] for i in kept]
    found = topics.cluster(found_vectors, weights, topics.threshold(kb.embedder.name))
    for topic in found[:MAX_TOPICS]:
        members = [kept[i] for i in topic.members]
        # What the readers who asked were shown (the log's citations), most often first.
        shown: Counter[tuple[str, str]] = Counter()
        headings: dict[tuple[str, str], tuple[str, ...]] = {}
        for m in members:
            if m["key"] in logged:
                shown.update(logged[m["key"]].cited)
                for key, heading in logged[m["key"]].headings.items():
                    headings.setdefault(key, heading)
        result["topics"].append(
            {
                "size": int(topic.weight),  # its not-covered answers and thumbs down: the order
                "distinct": len(members),
                "not_covered": sum(m["not_covered"] for m in members),
                "thumbs_down": sum(m["down"] for m in members),
                "questions": [m["question"] for m in members[:REPRESENTATIVE]],
                "sections": [
                    section_json(kb, chunks, key, headings.get(key, ()))
                    for key, _ in shown.most_common(NEAREST_SECTIONS)
                ],
            }
        )
    result["more_topics"] = max(len(found) - MAX_TOPICS, 0)
    return result


def embed_texts(kb: KnowledgeBase, texts: list[str], log: QuestionLog) -> dict[str, np.ndarray]:
    """Unit vectors of ``texts`` by text: kept ones reused, the rest embedded shortest
    first in batches (and kept)."""
    model = kb.embedder.name
    try:
        known = log.vectors(model, texts)
    except sqlite3.Error:
        known = {}
    missing = sorted({t for t in texts if t not in known}, key=len)
    made: dict[str, np.ndarray] = {}
    for start in range(0, len(missing), EMBED_BATCH):
        batch = missing[start : start + EMBED_BATCH]
        made.update(zip(batch, np.asarray(kb.embedder.embed_passages(batch), np.float32)))
    if made:
        try:
            log.keep_vectors(model, made)
        except (OSError, sqlite3.Error):  # a read-only index folder: embed again next time
            pass
    return {t: known[t] if t in known else made[t] for t in texts}
