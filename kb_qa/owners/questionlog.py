"""The question log: what readers asked through the API and what happened to each question.

One row per question answered (or failed) by ``kb-qa serve`` or the plugin's API, in the
same SQLite file as reader feedback (``<index folder>/feedback.sqlite3``): when, the
question, its turn in the conversation, answer mode, whether retrieval found the sources
cover it, the sections cited, retrieval and first-text times, and the error if any. No
client address, user agent or cookie is ever stored. ``kb-qa insights`` reads it.

Writes go through one writer thread, so an answer never waits on the disk; rows older than
``question_log_days`` are deleted when the log opens and every hour after.
"""

from __future__ import annotations

import contextlib
import json
import logging
import queue
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kb_qa.owners import private_files

log = logging.getLogger(__name__)

# shared with kb_qa.owners.feedback, so feedback can point at a question
DB_NAME = "feedback.sqlite3"
PRUNE_EVERY = 3600.0  # seconds between retention passes of a running server
LINK_WINDOW = 86_400.0  # feedback without an id links to the same question asked this recently
BATCH = 200  # rows written per transaction at most
EMBED_EVERY = 60.0  # seconds between the writer's embedding passes over not-covered questions
EMBED_AT_ONCE = 64  # questions embedded per pass: a bounded burst beside the answers

# Embeds questions for the insights report's topics: (model name, one unit vector per text)
Embed = Callable[[list[str]], tuple[str, np.ndarray]]
MAX_REF_CHARS = 64

_SCHEMA = """
PRAGMA journal_mode=WAL;
CREATE TABLE IF NOT EXISTS questions (
    id INTEGER PRIMARY KEY, ref TEXT NOT NULL UNIQUE, at REAL NOT NULL, question TEXT NOT NULL,
    turn INTEGER NOT NULL, mode TEXT NOT NULL, model TEXT NOT NULL, covered INTEGER,
    citations TEXT NOT NULL, retrieval_ms REAL, first_token_ms REAL, total_ms REAL,
    error TEXT NOT NULL, error_message TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS questions_at ON questions(at);
CREATE INDEX IF NOT EXISTS questions_text ON questions(question, at);
CREATE TABLE IF NOT EXISTS question_vectors (
    model TEXT NOT NULL, question TEXT NOT NULL, vector BLOB NOT NULL,
    PRIMARY KEY (model, question)
);
"""
_COLUMNS = (
    "ref, at, question, turn, mode, model, covered, citations, retrieval_ms, first_token_ms, "
    "total_ms, error, error_message"
)


@dataclass(frozen=True)
class Cited:
    """A section an answer cited."""

    path: str
    anchor: str
    heading_path: tuple[str, ...] = ()


@dataclass(frozen=True)
class Entry:
    """One logged question and what became of it."""

    ref: str  # random id, sent to the client as ``question_id`` so feedback can name it
    at: float  # Unix time the question arrived
    question: str
    turn: int  # 1 for a first question, 2 for the first follow-up, …
    mode: str  # "llm" or "extractive"
    model: str = ""
    covered: bool | None = None  # None when the answer failed before retrieval judged it
    citations: tuple[Cited, ...] = ()
    retrieval_ms: float | None = None
    first_token_ms: float | None = None
    total_ms: float | None = None
    error: str = ""  # an answer error code, or "disconnected" when the reader left first
    error_message: str = ""


def new_ref() -> str:
    """An id nobody can guess, so feedback cannot be pinned on someone else's question."""
    return secrets.token_urlsafe(12)


def connect(folder: Path) -> sqlite3.Connection:
    """The shared database in ``folder`` with the question table in place."""
    path = private_files.made_private(folder / DB_NAME)
    conn = sqlite3.connect(path, timeout=10, check_same_thread=False)
    conn.executescript(_SCHEMA)
    return conn


def _delete_older(conn: sqlite3.Connection, now: float, days: int, keep: int) -> sqlite3.Cursor:
    """Delete the questions logged more than ``days`` before ``now`` (none when 0) and, with
    ``keep``, all but the newest ``keep`` (a flood of questions must not fill the disk before
    they age out), and every stored vector no question or rating names any more (a rating
    that expired may have kept one)."""
    cutoff = now - days * 86400 if days else float("-inf")
    with conn:
        cursor = conn.execute(
            "DELETE FROM questions WHERE at < ? OR (? > 0 AND rowid NOT IN "
            "(SELECT rowid FROM questions ORDER BY at DESC, rowid DESC LIMIT ?))",
            (cutoff, keep, keep),
        )
        has_feedback = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'feedback'"
        ).fetchone()
        conn.execute(
            "DELETE FROM question_vectors WHERE question NOT IN "
            "(SELECT question FROM questions) AND question NOT IN "
            "(SELECT question FROM feedback)"
            if has_feedback
            else "DELETE FROM question_vectors WHERE question NOT IN "
            "(SELECT question FROM questions)"
        )
    return cursor


def prune_logged(folder: Path, days: int, now: float | None = None, *, keep: int = 0) -> int:
    """With question logging off: what was logged before still ages out after ``days``
    (and all but the newest ``keep`` go); nothing is created (no database, no table) where
    nothing was logged."""
    path = folder / DB_NAME
    if not (days or keep) or not path.is_file():
        return 0
    with contextlib.closing(sqlite3.connect(path, timeout=10)) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not {"questions", "question_vectors"} <= tables:
            return 0
        now = time.time() if now is None else now
        return _delete_older(conn, now, days, keep).rowcount


def _row(e: Entry) -> tuple[object, ...]:
    cited = [
        {"path": c.path, "anchor": c.anchor, "heading_path": list(c.heading_path)}
        for c in e.citations
    ]
    covered = None if e.covered is None else int(e.covered)
    return (
        e.ref,
        e.at,
        e.question,
        e.turn,
        e.mode,
        e.model,
        covered,
        json.dumps(cited, ensure_ascii=False),
        e.retrieval_ms,
        e.first_token_ms,
        e.total_ms,
        e.error,
        e.error_message,
    )


def _entry(r: tuple, known: dict[tuple[str, str], Cited]) -> Entry:  # type: ignore[type-arg]
    # The same few hundred sections are cited over and over: one Cited object each.
    cited = []
    for c in json.loads(r[7]):
        key = (c.get("path", ""), c.get("anchor", ""))
        found = known.get(key)
        if found is None:
            found = known[key] = Cited(*key, tuple(c.get("heading_path", ())))
        cited.append(found)
    covered = None if r[6] is None else bool(r[6])
    return Entry(*(*r[:6], covered, tuple(cited), *r[8:]))  # one tuple: mypy counts it


class QuestionLog:
    """The log of one index folder: writes in a background thread, reads on demand."""

    def __init__(
        self, folder: Path, days: int = 90, embed: Embed | None = None, *, keep: int = 0
    ) -> None:
        self.folder = folder
        self.days = days  # 0 keeps rows forever
        self.keep = keep  # all but the newest ``keep`` rows go (0: as many as days allow)
        # With ``embed`` (a server's loaded model), the writer embeds not-covered questions
        # as they come, so a report finds their vectors kept and need not embed them.
        self.embed = embed
        self._unembedded: dict[str, None] = {}  # not-covered questions, oldest first
        self._embedded_at = 0.0
        self._queue: queue.Queue[Entry | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._pruned = 0.0

    # -- writing ----------------------------------------------------------------------------

    def start(self) -> None:
        """Start the writer thread (``record`` does too): it also keeps the retention and
        embeds waiting questions while no question comes in."""
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._write_loop, name="kb-qa-question-log", daemon=True
                )
                self._thread.start()

    def record(self, entry: Entry) -> None:
        """Queue one entry; returns at once (the writer thread stores it)."""
        self.start()
        self._queue.put(entry)

    def flush(self) -> None:
        """Wait until every queued entry is stored (or given up on)."""
        if self._thread is not None:
            self._queue.join()

    def close(self) -> None:
        """Store what is queued and stop the writer thread."""
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None and thread.is_alive():
            self._queue.put(None)
            thread.join(timeout=10)

    def _write_loop(self) -> None:
        conn: sqlite3.Connection | None = None
        while True:
            try:
                batch: list[Entry | None] = [self._queue.get(timeout=EMBED_EVERY)]
            except queue.Empty:  # idle: only the retention and the waiting embeddings
                batch = []
                if not (self.folder / DB_NAME).exists():
                    continue  # a deleted index folder is not made again for nothing
            while batch and batch[-1] is not None and len(batch) < BATCH:  # None: close()
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            entries = [e for e in batch if e is not None]
            try:
                conn = conn or connect(self.folder)
                if not (self.folder / DB_NAME).exists():  # deleted with the index folder
                    conn.close()
                    conn = connect(self.folder)
                with conn:
                    conn.executemany(
                        f"INSERT OR IGNORE INTO questions({_COLUMNS}) VALUES "  # noqa: S608
                        "(?,?,?,?,?,?,?,?,?,?,?,?,?)",
                        [_row(e) for e in entries],
                    )
                if time.time() - self._pruned > PRUNE_EVERY:
                    self._prune(conn)
                self._embed_some(conn, entries)
            except (OSError, sqlite3.Error) as exc:  # a full disk, a read-only folder
                log.error("could not log %d question(s): %s", len(entries), exc)
                if conn is not None:
                    conn.close()
                conn = None
            finally:
                for _ in batch:
                    self._queue.task_done()
            if None in batch:
                if conn is not None:
                    conn.close()
                return

    def _embed_some(self, conn: sqlite3.Connection, entries: Sequence[Entry]) -> None:
        """Embed up to EMBED_AT_ONCE waiting not-covered questions, once per EMBED_EVERY."""
        if self.embed is None:
            return
        for e in entries:
            if e.covered is False and not e.error:
                self._unembedded[e.question] = None
        if not self._unembedded or time.time() - self._embedded_at < EMBED_EVERY:
            return
        self._embedded_at = time.time()
        texts = list(self._unembedded)[:EMBED_AT_ONCE]
        for text in texts:
            del self._unembedded[text]
        try:
            model, vectors = self.embed(texts)
        except Exception as exc:  # noqa: BLE001 - any model failure; the report embeds them
            log.warning("question log: could not embed %d question(s): %s", len(texts), exc)
            return
        with conn:
            conn.executemany(  # of questions still logged: `--forget` may have come meanwhile
                "INSERT OR IGNORE INTO question_vectors(model, question, vector) SELECT ?, ?, ? "
                "WHERE EXISTS (SELECT 1 FROM questions WHERE question = ?)",
                [(model, t, np.asarray(v, "f4").tobytes(), t) for t, v in zip(texts, vectors)],
            )

    def prune(self, now: float | None = None) -> int:
        """Delete rows older than ``days`` (none when days is 0) and all but the newest
        ``keep``; returns how many went."""
        with contextlib.closing(connect(self.folder)) as conn:
            return self._prune(conn, now)

    def _prune(self, conn: sqlite3.Connection, now: float | None = None) -> int:
        now = time.time() if now is None else now
        self._pruned = now
        if not (self.days or self.keep):
            return 0
        cursor = _delete_older(conn, now, self.days, self.keep)
        if cursor.rowcount:
            log.info(
                "question log: deleted %d question(s) older than %d days or beyond the "
                "newest %d (question_log_days, question_log_max)",
                cursor.rowcount,
                self.days,
                self.keep,
            )
        return cursor.rowcount

    # -- reading ----------------------------------------------------------------------------

    def match(self, question: str, ref: str, at: float) -> str:
        """The ref of the logged question a piece of feedback is about, or "".

        An id sent back by the client counts only with the same question text; without one,
        the latest same question asked within a day before the feedback is taken.
        """
        self.flush()
        with self._existing() as conn:
            if conn is None:
                return ""
            if ref:
                row = conn.execute(
                    "SELECT ref FROM questions WHERE ref = ? AND question = ?", (ref, question)
                ).fetchone()
                if row:
                    return str(row[0])
            row = conn.execute(
                "SELECT ref FROM questions WHERE question = ? AND at BETWEEN ? AND ? "
                "ORDER BY at DESC LIMIT 1",
                (question, at - LINK_WINDOW, at),
            ).fetchone()
        return str(row[0]) if row else ""

    def entries(self, since: float | None = None) -> Iterator[Entry]:
        """Logged questions asked at or after ``since`` (all when None), oldest first."""
        with self._existing() as conn:
            if conn is None:
                return
            cursor = conn.execute(
                f"SELECT {_COLUMNS} FROM questions WHERE at >= ? ORDER BY at, id",  # noqa: S608
                (since if since is not None else float("-inf"),),
            )
            known: dict[tuple[str, str], Cited] = {}
            for row in cursor:
                yield _entry(row, known)

    def vectors(self, model: str, questions: Sequence[str]) -> dict[str, np.ndarray]:
        """Embeddings of ``questions`` stored by an earlier report, by question text."""
        found: dict[str, np.ndarray] = {}
        with self._existing() as conn:
            if conn is None:
                return found
            wanted = set(questions)
            rows = conn.execute(
                "SELECT question, vector FROM question_vectors WHERE model = ?", (model,)
            )
            found.update((q, np.frombuffer(v, np.float32)) for q, v in rows if q in wanted)
        return found

    def keep_vectors(self, model: str, vectors: dict[str, np.ndarray]) -> None:
        """Store embeddings for the next report (deleted with the last question they embed);
        nothing when there is no log (question_log off)."""
        with self._existing() as conn:
            if conn is None:
                return
            with conn:
                conn.executemany(
                    "INSERT OR REPLACE INTO question_vectors(model, question, vector) "
                    "VALUES (?,?,?)",
                    [(model, q, np.asarray(v, np.float32).tobytes()) for q, v in vectors.items()],
                )

    @contextlib.contextmanager
    def _existing(self) -> Iterator[sqlite3.Connection | None]:
        """A connection when the log exists, else None: reading never creates one."""
        path = self.folder / DB_NAME
        if not path.exists():
            yield None
            return
        with contextlib.closing(sqlite3.connect(path, timeout=10)) as conn:
            found = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'questions'"
            ).fetchone()
            yield conn if found else None
