"""Thumbs up/down from readers, kept in a local SQLite file beside the index.

Site owners read it with ``kb-qa feedback``: which questions got a bad answer, why, and
which sections were cited. The API takes a rating only for an answer it gave
(``kb_qa.owners.answer_ids``), and keeps one rating per answer: a reader who changes their
mind replaces their first one.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kb_qa.errors import ConfigError
from kb_qa.owners import private_files

MAX_ANSWER_CHARS = 20_000  # the longest answer the API streams (max_reply_chars' default)
MAX_REASON_CHARS = 1_000
MAX_CITATIONS = 50
# What one rating may store: the question (max_question_chars), the reason, the start of
# the answer rated and the citations that fit, so a rating holds at most ~8,000 characters
STORED_ANSWER_CHARS = 2_000
STORED_CITATION_CHARS = 3_000
MAX_FIELD_CHARS = 300  # of each citation field (url, link, path, anchor)
MAX_HEADINGS, MAX_HEADING_CHARS = 6, 150  # of a citation's heading_path


class TooLarge(ValueError):
    """A feedback field over its limit (the API answers 413)."""


CITATION_KEYS = ("number", "url", "link", "path", "anchor", "heading_path")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS feedback (
    id INTEGER PRIMARY KEY, at REAL NOT NULL, rating TEXT NOT NULL, question TEXT NOT NULL,
    answer TEXT NOT NULL, reason TEXT NOT NULL, citations TEXT NOT NULL,
    question_id TEXT NOT NULL DEFAULT '', answer_ref TEXT NOT NULL DEFAULT ''
);
"""
# One rating per answer; ratings stored before answers had ids have none ('').
_ONE_PER_ANSWER = (
    "CREATE UNIQUE INDEX IF NOT EXISTS feedback_answer ON feedback(answer_ref) "
    "WHERE answer_ref != ''"
)


@dataclass(frozen=True)
class Feedback:
    """One reader's verdict on one answer."""

    rating: str  # "up" or "down"
    question: str
    answer: str
    reason: str = ""
    citations: tuple[dict[str, Any], ...] = ()
    at: float = 0.0
    # The question log's id of the question rated ("" when the log is off or has no match)
    question_id: str = ""
    # The ref of the answer's id (kb_qa.owners.answer_ids): an answer keeps one rating
    answer_ref: str = ""


def parse(body: Any, max_question_chars: int) -> Feedback:
    """Validate a feedback body; raises ValueError with a message for the client."""
    if not isinstance(body, dict):
        raise ValueError('The body must be a JSON object like {"rating": "up", ...}.')
    rating = body.get("rating")
    if rating not in ("up", "down"):
        raise ValueError("rating must be 'up' or 'down'.")
    question, answer, reason = (body.get(k, "") for k in ("question", "answer", "reason"))
    if not all(isinstance(v, str) for v in (question, answer, reason)):
        raise ValueError("question, answer and reason must be strings.")
    if not question.strip():
        raise ValueError("question is required.")
    for name, value, limit in (
        ("question", question, max_question_chars),
        ("answer", answer, MAX_ANSWER_CHARS),
        ("reason", reason, MAX_REASON_CHARS),
    ):
        if len(value) > limit:
            raise TooLarge(f"{name} is {len(value):,} characters long; the limit is {limit:,}.")
    citations = body.get("citations") or []
    if not isinstance(citations, list) or len(citations) > MAX_CITATIONS:
        raise ValueError(f"citations must be a list of at most {MAX_CITATIONS} items.")
    kept = _fitting(_citation(c) for c in citations if isinstance(c, dict))
    if len(answer) > STORED_ANSWER_CHARS:  # the start says which answer it was
        answer = answer[: STORED_ANSWER_CHARS - 1] + "…"
    # Which logged question it rates comes from the answer's id, checked by the API.
    return Feedback(rating, question, answer, reason.strip(), kept, time.time())


def answer_digest(answer: str | None, citations: Sequence[Any] | None) -> str:
    """What an answer id says was answered (``answer_ids``): a digest of the start of the
    text a rating stores (its first ``STORED_ANSWER_CHARS`` UTF-16 units, as the widget cuts
    it), then one of its citations' stored fields, 11 characters each; "" for one not
    given (None)."""

    def digest(value: object) -> str:
        canonical = json.dumps(value, ensure_ascii=True, sort_keys=True).encode()
        return base64.urlsafe_b64encode(hashlib.sha256(canonical).digest()[:8]).decode()[:11]

    text = ""
    if answer is not None:
        start = answer.encode("utf-16-le", "surrogatepass")[: 2 * STORED_ANSWER_CHARS]
        if len(start) >= 2 and 0xD8 <= start[-1] <= 0xDB:  # half a pair: the widget drops it
            start = start[:-2]
        text = digest(start.decode("utf-16-le", "surrogatepass"))
    cited = ""
    if citations is not None:
        cited = digest([_citation(c) for c in citations if isinstance(c, dict)])
    return text + cited


def sent_digest(body: dict[str, Any]) -> tuple[str, str]:
    """:func:`answer_digest`'s two parts of what a rating's body says was answered, each ""
    when it leaves that out."""
    answer, citations = body.get("answer"), body.get("citations")
    text = answer_digest(answer, None) if isinstance(answer, str) and answer else ""
    cited = answer_digest(None, citations) if isinstance(citations, list) and citations else ""
    return text, cited


def _citation(given: dict[str, Any]) -> dict[str, Any]:
    """The known keys of one reported citation, each of the type it should have."""
    kept: dict[str, Any] = {}
    for key in CITATION_KEYS:
        value = given.get(key)
        if key == "number" and isinstance(value, int) and not isinstance(value, bool):
            kept[key] = value
        elif key == "heading_path" and isinstance(value, list):
            kept[key] = [v[:MAX_HEADING_CHARS] for v in value if isinstance(v, str)][:MAX_HEADINGS]
        elif key not in ("number", "heading_path") and isinstance(value, str):
            kept[key] = value[:MAX_FIELD_CHARS]
    return kept


def _fitting(citations: Any) -> tuple[dict[str, Any], ...]:
    """The first citations whose JSON fits in :data:`STORED_CITATION_CHARS`."""
    kept: list[dict[str, Any]] = []
    size = 2
    for citation in citations:
        size += len(json.dumps(citation, ensure_ascii=False)) + 2
        if size > STORED_CITATION_CHARS:
            break
        kept.append(citation)
    return tuple(kept)


class FeedbackStore:
    """Feedback log in ``<index folder>/feedback.sqlite3``: each write also deletes ratings
    older than ``days`` and all but the newest ``keep`` (0: no such limit)."""

    def __init__(self, folder: Path, days: int = 0, keep: int = 0) -> None:
        # Made on the first write: a read-only replica that gets no feedback writes nothing.
        self.path = folder / "feedback.sqlite3"
        self.days = days
        self.keep = keep

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(private_files.made_private(self.path), timeout=10)
        conn.executescript(_SCHEMA)
        columns = {row[1] for row in conn.execute("PRAGMA table_info(feedback)")}
        for column in ("question_id", "answer_ref"):  # a database from before them
            if column not in columns:
                conn.execute(f"ALTER TABLE feedback ADD COLUMN {column} TEXT NOT NULL DEFAULT ''")
        conn.execute(_ONE_PER_ANSWER)
        return conn

    def add(self, item: Feedback) -> bool:
        """Store one item (committed at once), in place of the rating its answer had;
        True when it replaced one."""
        with contextlib.closing(self._connect()) as conn, conn:
            replaced = bool(item.answer_ref) and (
                conn.execute(
                    "DELETE FROM feedback WHERE answer_ref = ?", (item.answer_ref,)
                ).rowcount
                > 0
            )
            conn.execute(
                "INSERT INTO feedback(at, rating, question, answer, reason, citations, "
                "question_id, answer_ref) VALUES (?,?,?,?,?,?,?,?)",
                (
                    item.at,
                    item.rating,
                    item.question,
                    item.answer,
                    item.reason,
                    json.dumps(list(item.citations), ensure_ascii=False),
                    item.question_id,
                    item.answer_ref,
                ),
            )
            self._prune(conn, item.at or time.time())
        return replaced

    def prune(self) -> int:
        """Apply the retention now; returns how many ratings went."""
        if not self.path.exists() or not (self.days or self.keep):
            return 0
        with contextlib.closing(self._connect()) as conn, conn:
            return self._prune(conn, time.time())

    def _prune(self, conn: sqlite3.Connection, now: float) -> int:
        gone = 0
        if self.days:
            gone += conn.execute(
                "DELETE FROM feedback WHERE at < ?", (now - self.days * 86_400,)
            ).rowcount
        if self.keep:
            gone += conn.execute(
                "DELETE FROM feedback WHERE id NOT IN "
                "(SELECT id FROM feedback ORDER BY at DESC, id DESC LIMIT ?)",
                (self.keep,),
            ).rowcount
        return gone

    def all(self, rating: str = "", since: float | None = None) -> list[Feedback]:
        """Every item, newest first; only ``rating`` ones, or ones since a time, when given."""
        if rating and rating not in ("up", "down"):
            raise ConfigError("--rating must be 'up' or 'down'.")
        if not self.path.exists():
            return []
        query = "SELECT rating, question, answer, reason, citations, at, question_id, answer_ref"
        query += " FROM feedback"
        query += " WHERE at >= ?"
        args: tuple[str | float, ...] = (since if since is not None else float("-inf"),)
        if rating:
            query += " AND rating = ?"
            args += (rating,)
        with contextlib.closing(self._connect()) as conn:
            rows = conn.execute(query + " ORDER BY at DESC, id DESC", args).fetchall()
        return [
            Feedback(r[0], r[1], r[2], r[3], tuple(json.loads(r[4])), r[5], r[6], r[7])
            for r in rows
        ]
