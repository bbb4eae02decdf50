"""The SQLite manifest: what is indexed (files, chunks, failures, outlines), stored values
and the embedding cache.

The manifest is the source of truth for what is indexed; its rows are written by
``Store.write`` after Chroma has the vectors.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
import unicodedata
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from kb_qa.errors import IndexStateError
from kb_qa.text import HIDDEN_PROPERTY, HIGHLIGHT
from kb_qa.types import Chunk, Heading, IndexReport, Outline
from kb_qa.verbatim import code_segments

SCHEMA_VERSION = "1"
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, hash TEXT, title TEXT, url TEXT
);
CREATE TABLE IF NOT EXISTS chunks (
    id TEXT PRIMARY KEY, path TEXT NOT NULL, ord INTEGER, embed_key TEXT, data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path);
CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vec BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS outlines (
    path TEXT PRIMARY KEY, key TEXT NOT NULL, headings TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS failures (path TEXT PRIMARY KEY, hash TEXT NOT NULL, reason TEXT);
"""


@dataclass(frozen=True)
class FileRow:
    """What the manifest remembers about one indexed file."""

    path: str
    size: int
    mtime_ns: int
    hash: str
    title: str
    url: str


# A file system's clock ticks coarsely (FAT every 2 s, ext3 and HFS+ every second, Linux
# before 6.13 every few ms): a save in the tick the file was read in keeps its mtime.
RACY_NS = 3_000_000_000
UNSETTLED = -1  # an mtime no file has: the next run reads the file and compares its hash


def settled_mtime(mtime_ns: int) -> int:
    """The mtime to remember of a file read just now: ``UNSETTLED`` while a save of the same
    size could still get the same mtime (as git treats a "racily clean" file)."""
    return UNSETTLED if mtime_ns >= time.time_ns() - RACY_NS else mtime_ns


# Bump when kb_qa.text.normalize changes what the embedder sees for the same text.
EMBED_TEXT_VERSION = "2"
# Texts holding an ==highlight== are seen without its marks since normalize's version 3: only
# they are keyed anew (embedded again once); every other text keeps its cached vector.
_MARKED_TEXT_VERSION = "3"
# Texts holding Logseq's id:: or collapsed:: lines are seen without them since version 4
# (text.without_block_ids): only they are keyed anew, as marked texts were.
_PROPERTY_TEXT_VERSION = "4"


def _prose(text: str) -> str:
    return "".join(p for code, p in code_segments(unicodedata.normalize("NFKC", text)) if not code)


def embed_key(chunk: Chunk) -> str:
    """Cache key of a chunk's embedding: identical indexed text is embedded once."""
    text = chunk.index_text
    # As normalize sees it: after NFKC ("＝＝" is "==") and outside code.
    marked = ("==" in text or "＝" in text) and HIGHLIGHT.search(_prose(text)) is not None
    version = _MARKED_TEXT_VERSION if marked else EMBED_TEXT_VERSION
    if "::" in text and HIDDEN_PROPERTY.search(unicodedata.normalize("NFKC", text)):
        version = _PROPERTY_TEXT_VERSION
    return hashlib.sha1(f"{version}\0{text}".encode()).hexdigest()


class PerThread:
    """One connection to the manifest at ``path`` per thread.

    With WAL, a reader (a search on a server thread) sees the last committed state and never
    the middle of the indexer's transaction. A server's worker threads end when idle and new
    ones start with the next readers: the connection of a thread that ended is closed when
    another is opened, or every burst of readers would leave two open files behind for good.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._open: list[tuple[threading.Thread, sqlite3.Connection]] = []
        self._lock = threading.Lock()

    def get(self) -> sqlite3.Connection:
        """This thread's connection, opened on first use."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            try:
                conn = sqlite3.connect(self.path, check_same_thread=False)
            except sqlite3.OperationalError as exc:
                # Its folder went (the vault holding it moved away under a running server):
                # said in words, a 503 to readers, never a 500.
                raise IndexStateError(
                    f"The index in {self.path.parent} cannot be opened ({exc}). If the vault "
                    "folder holding it was moved or deleted, put it back: kb-qa answers again "
                    "once it is there. Or run kb-qa index."
                ) from None
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA busy_timeout=10000")
            self._local.conn = conn
            with self._lock:
                live = [(threading.current_thread(), conn)]
                for thread, other in self._open:
                    if thread.is_alive():
                        live.append((thread, other))
                    else:
                        other.close()
                self._open = live
        return conn

    def close(self) -> None:
        """Close this thread's connection and those of threads that ended; another live
        thread's once it has ended (closed under a query it was running, it crashed the
        process). A thread that asks again gets a new one."""
        me = threading.current_thread()
        with self._lock:
            live = []
            for thread, conn in self._open:
                if thread is me or not thread.is_alive():
                    conn.close()
                else:
                    live.append((thread, conn))
            self._open = live
        self._local = threading.local()


class Manifest:
    """Reading the manifest of ``kb_qa.index.store.Store`` (its ``db`` connection)."""

    # Each meta value and the files as last read: what a server keeps answering with while
    # the index folder cannot be opened (moved away with its vault), as it keeps its loaded
    # view (an answer lists the indexed pages: the first after the move on a thread with no
    # connection yet failed).
    _known_meta: dict[str, str]
    _known_files: dict[str, FileRow] | None

    if TYPE_CHECKING:  # kb_qa.index.store.Store's

        @property
        def db(self) -> sqlite3.Connection: ...
        def _writing(self) -> AbstractContextManager[None]: ...

    def meta(self, key: str) -> str:
        """A stored value ("" when unset)."""
        try:
            if key in self._known_meta:
                row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
                self._known_meta[key] = row[0] if row else ""
            else:  # every value, the first time one is asked for: served if the folder goes
                self._known_meta.update(self.db.execute("SELECT key, value FROM meta"))
                self._known_meta.setdefault(key, "")
        except IndexStateError:
            if self._known_meta:  # a key not known then was unset then
                return self._known_meta.get(key, "")
            raise
        return self._known_meta[key]

    def set_meta(self, **values: str) -> None:
        """Store values, committed at once."""
        with self._writing():
            self.db.executemany(
                "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", list(values.items())
            )

    def files(self) -> dict[str, FileRow]:
        """Every indexed file by path."""
        try:
            rows = self.db.execute("SELECT path, size, mtime_ns, hash, title, url FROM files")
        except IndexStateError:
            if self._known_files is not None:
                return dict(self._known_files)
            raise
        self._known_files = {r[0]: FileRow(*r) for r in rows}
        return dict(self._known_files)

    def chunks(self, path: str | None = None) -> list[Chunk]:
        """Every indexed chunk (or one file's), in path and document order."""
        if path is not None:
            rows = self.db.execute("SELECT data FROM chunks WHERE path=? ORDER BY ord", (path,))
        else:
            rows = self.db.execute("SELECT data FROM chunks ORDER BY path, ord")
        return [chunk_from_json(r[0]) for r in rows]

    def _records(self, paths: Iterable[str]) -> dict[str, tuple[str, str, int]]:
        """id -> (embed key, chunk JSON, order) of the chunks of ``paths``."""
        found: dict[str, tuple[str, str, int]] = {}
        for path in paths:
            rows = self.db.execute(
                "SELECT id, embed_key, data, ord FROM chunks WHERE path=?", (path,)
            )
            found.update({r[0]: (r[1], r[2], r[3]) for r in rows})
        return found

    def embed_keys(self) -> dict[str, str]:
        """chunk id -> the cache key its vector was stored under (as that run computed it:
        an index written by an older kb-qa keeps its own keys until it is indexed again)."""
        rows = self.db.execute("SELECT id, embed_key FROM chunks WHERE embed_key IS NOT NULL")
        return {r[0]: r[1] for r in rows}

    def failure(self, path: str, *keys: str) -> str:
        """Why ``path`` could not be chunked last time, when it was remembered under one of
        ``keys`` (its content's hash, or that hash and the limit it ran out of); else ""."""
        marks = ",".join("?" * len(keys))
        row = self.db.execute(
            f"SELECT reason FROM failures WHERE path=? AND hash IN ({marks})",  # noqa: S608
            (path, *keys),
        ).fetchone()
        return row[0] if row else ""

    def set_failures(self, failed: dict[str, tuple[str, str]], cleared: Iterable[str]) -> None:
        """Remember files that failed (path -> (hash, reason)); forget ``cleared`` ones."""
        with self._writing():
            self.db.executemany("DELETE FROM failures WHERE path=?", [(p,) for p in cleared])
            self.db.executemany(
                "INSERT OR REPLACE INTO failures(path, hash, reason) VALUES (?,?,?)",
                [(p, h, r) for p, (h, r) in failed.items()],
            )

    def say_warnings_again(
        self, paths: Iterable[str], chunked: Collection[str], report: IndexReport
    ) -> None:
        """Add to ``report`` the warnings the files of ``paths`` gave when they were last read
        (``remember_warnings``), but those ``chunked`` or skipped now, which said their own:
        skipped files are said at every run, and so are these. A page whose front matter was
        not valid YAML failed `mkdocs build --strict` once and passed the next build of the
        same tree (the file was not read again). A file whose time changed and text did not
        (a fresh checkout) is read but not chunked again: what it said then is said, once."""
        stored: dict[str, list[str]] = json.loads(self.meta("file_warnings") or "{}")
        now = set(chunked) | {path for path, _ in report.skipped}
        said = set(report.warnings)
        report.warnings += [
            (p, w) for p in paths if p not in now for w in stored.get(p, ()) if (p, w) not in said
        ]

    def remember_warnings(self, files: Collection[str], said: Sequence[tuple[str, str]]) -> None:
        """Keep the warnings ``said`` of each of the vault's ``files``, for the runs that do
        not read them (``say_warnings_again``); written only when they changed."""
        kept: dict[str, list[str]] = {}
        for path, warning in said:
            if path in files and warning not in kept.setdefault(path, []):
                kept[path].append(warning)
        value = json.dumps(kept, ensure_ascii=False, sort_keys=True)
        if value != (self.meta("file_warnings") or "{}"):
            self.set_meta(file_warnings=value)

    def outline(self, path: str) -> Outline:
        """The heading outline remembered for a file (empty when none)."""
        row = self.db.execute("SELECT key, headings FROM outlines WHERE path=?", (path,)).fetchone()
        if row is None:
            return Outline(path)
        return Outline(path, row[0], [Heading(**h) for h in json.loads(row[1])])

    def cached_vectors(self, keys: Iterable[str]) -> dict[str, np.ndarray]:
        """Embeddings already computed for these cache keys."""
        found: dict[str, np.ndarray] = {}
        keys = list(dict.fromkeys(keys))
        for i in range(0, len(keys), 500):
            part = keys[i : i + 500]
            marks = ",".join("?" * len(part))
            for key, blob in self.db.execute(
                f"SELECT key, vec FROM vectors WHERE key IN ({marks})",  # noqa: S608 - only "?" marks
                part,
            ):
                found[key] = np.frombuffer(blob, dtype=np.float32)
        return found

    def chunk_count(self) -> int:
        """How many chunks the index holds."""
        return int(self.db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])

    def prune_vectors(self, held: int = 0) -> int:
        """Forget the oldest cached embeddings no chunk uses beyond as many as the index has
        ever held chunks (``held``: before this run's writes; the most since is kept in the
        meta ``peak_chunks``): every edit and delete leaves one behind, without end. The
        newest are kept, so an edit undone, a re-chunking or a git checkout that takes most
        of the vault away and back finds its vectors (a checkout of a two-page commit had
        kept two: going back re-embedded the vault, unanswered for its length). Returns how
        many were forgotten."""
        used = self.chunk_count()
        known = int(self.meta("peak_chunks") or 0)
        peak = max(used, held, known)
        if peak > known:
            self.set_meta(peak_chunks=str(peak))
        extra = _unused_vectors(self.db) - peak
        if extra <= 0:
            return 0
        with self._writing():  # the oldest first (rowid: the order they were cached in)
            gone = self.db.execute(
                "DELETE FROM vectors WHERE rowid IN (SELECT rowid FROM vectors WHERE key NOT IN "
                "(SELECT embed_key FROM chunks WHERE embed_key IS NOT NULL) ORDER BY rowid "
                "LIMIT ?)",
                (extra,),
            ).rowcount
        return int(gone)

    def embed_uncached(
        self,
        texts: Mapping[str, str],
        embed: Callable[[list[str]], np.ndarray],
        batch: int,
        progress: Callable[[int, int], None] | None = None,
    ) -> int:
        """Embed the texts (cache key -> text) the cache lacks, shortest first, ``batch`` at
        a time, each batch cached when done (a run stopped keeps them); returns how many.
        ``progress`` hears how many are done, of how many."""
        batch = max(1, batch)
        cached = self.cached_vectors(texts)
        todo = sorted((k for k in texts if k not in cached), key=lambda k: len(texts[k]))
        for i in range(0, len(todo), batch):
            if progress:
                progress(i, len(todo))
            keys = todo[i : i + batch]
            self.cache_vectors(dict(zip(keys, embed([texts[k] for k in keys]))))
        if progress:
            progress(len(todo), len(todo))
        return len(todo)

    def cache_vectors(self, vectors: dict[str, np.ndarray]) -> None:
        """Remember embeddings (committed at once, so an interrupted run keeps them)."""
        with self._writing():
            self.db.executemany(
                "INSERT OR REPLACE INTO vectors(key, vec) VALUES (?, ?)",
                [(k, np.asarray(v, np.float32).tobytes()) for k, v in vectors.items()],
            )


def _unused_vectors(db: sqlite3.Connection) -> int:
    return int(
        db.execute(
            "SELECT COUNT(*) FROM vectors WHERE key NOT IN (SELECT embed_key FROM chunks "
            "WHERE embed_key IS NOT NULL)"
        ).fetchone()[0]
    )


def in_file_order(chunks: Sequence[Chunk]) -> Iterator[tuple[Chunk, int]]:
    """Each chunk with its position among its own file's chunks."""
    seen: dict[str, int] = {}
    for c in chunks:
        n = seen.get(c.path, 0)
        seen[c.path] = n + 1
        yield c, n


def headings_to_json(headings: Sequence[Heading]) -> str:
    return json.dumps([asdict(h) for h in headings], ensure_ascii=False)


def chunk_to_json(chunk: Chunk) -> str:
    data = asdict(chunk)
    data["heading_path"] = list(chunk.heading_path)
    return json.dumps(data, ensure_ascii=False)


def chunk_from_json(text: str) -> Chunk:
    """A chunk as ``chunk_to_json`` stored it. A field a newer kb-qa added is left out: an
    index it wrote (a colleague's, or before a downgrade) is read, and said to need
    rebuilding (``staleness.rebuild_reason``), not a TypeError."""
    data = json.loads(text)
    data["heading_path"] = tuple(data["heading_path"])
    return Chunk(**{k: v for k, v in data.items() if k in _CHUNK_FIELDS})


_CHUNK_FIELDS = frozenset(f.name for f in fields(Chunk))
