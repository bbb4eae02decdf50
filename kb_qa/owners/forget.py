"""Deleting what readers wrote: every logged question and rating that contains a text.

For a reader who asks to be forgotten (an e-mail address or a name typed into a question),
``kb-qa insights --forget TEXT`` deletes, from ``<index folder>/feedback.sqlite3``, each
logged question holding TEXT (case aside, and its accents however encoded: NFC or NFD),
each rating whose question, reason or rated
answer holds it, and the stored embeddings of those questions. SQLite overwrites what it
deletes (``secure_delete``), and the write-ahead log is emptied when no other connection
reads it, so the text does not linger in the files either.
"""

from __future__ import annotations

import contextlib
import sqlite3
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kb_qa.errors import ConfigError
from kb_qa.owners.questionlog import DB_NAME


@dataclass(frozen=True)
class Forgotten:
    """What ``forget`` deleted."""

    questions: int
    ratings: int
    # Whether the write-ahead log could be emptied (not while a server reads the file).
    log_emptied: bool
    embeddings: int = 0
    examples: tuple[str, ...] = ()  # a dry run's: the first questions it would delete
    # A dry run's: the first ratings it would delete, each (rating, question, reason)
    rated: tuple[tuple[str, str, str], ...] = ()


def folded(text: str) -> str:
    """``text`` with case and Unicode form aside: an "ä" typed as "a" and a combining
    diaeresis (NFD, as macOS and some keyboards give it) matches the one character (NFC)."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFD", text).casefold())


def _holds(needle: str) -> Callable[..., bool]:
    def holds(*values: str | None) -> bool:
        return any(needle in folded(v) for v in values if isinstance(v, str))

    return holds


def forget(folder: Path, text: str, dry_run: bool = False) -> Forgotten:
    """Delete every question, rating and embedding in ``folder``'s log that holds ``text``
    (``dry_run``: count them, and name the first questions and ratings, deleting nothing)."""
    needle = folded(text.strip())
    if len(needle) < 3:
        raise ConfigError(
            "--forget needs the text to delete, three characters or more (an e-mail address, "
            "a name): a shorter one would match most questions."
        )
    path = folder / DB_NAME
    if not path.is_file():
        return Forgotten(0, 0, True)
    with contextlib.closing(sqlite3.connect(path, timeout=10)) as conn:
        conn.execute("PRAGMA secure_delete=ON")
        conn.create_function("kbqa_holds", -1, _holds(needle), deterministic=True)
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        where = {  # table -> which rows hold the text
            "questions": "kbqa_holds(question)",
            "question_vectors": "kbqa_holds(question)",
            "feedback": "kbqa_holds(question, reason, answer)",
        }
        counts = dict.fromkeys(where, 0)
        if dry_run:
            for table in where.keys() & tables:
                row = conn.execute(f"SELECT COUNT(*) FROM {table} WHERE {where[table]}")  # noqa: S608
                counts[table] = row.fetchone()[0]
            examples: tuple[str, ...] = ()
            if "questions" in tables:
                rows = conn.execute(
                    "SELECT question FROM questions WHERE kbqa_holds(question) ORDER BY at LIMIT 10"
                )
                examples = tuple(r[0] for r in rows)
            rated: tuple[tuple[str, str, str], ...] = ()
            if "feedback" in tables:
                rows = conn.execute(
                    "SELECT rating, question, reason FROM feedback "
                    "WHERE kbqa_holds(question, reason, answer) ORDER BY at LIMIT 10"
                )
                rated = tuple((r[0], r[1], r[2]) for r in rows)
            return Forgotten(
                counts["questions"],
                counts["feedback"],
                True,
                counts["question_vectors"],
                examples,
                rated,
            )
        with conn:
            for table in where.keys() & tables:
                deleted = conn.execute(f"DELETE FROM {table} WHERE {where[table]}")  # noqa: S608
                counts[table] = deleted.rowcount
        busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    return Forgotten(
        counts["questions"],
        counts["feedback"],
        not busy or busy[0] == 0,
        counts["question_vectors"],
    )
