"""The index on disk: a SQLite manifest (files, chunks, embedding cache) beside Chroma.

The manifest is the source of truth for what is indexed. Writes go to Chroma first and
are committed to the manifest afterwards, one transaction per group of files, so a run
killed at any moment leaves an index that opens and serves what it had: vectors Chroma
holds for uncommitted work are ignored by search and cleaned up by the next run.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import logging
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from kb_qa.errors import ConfigError, IndexStateError, VaultError
from kb_qa.settings import Settings
from kb_qa.types import Chunk, Heading, Outline

log = logging.getLogger(__name__)
T = TypeVar("T")
VECTOR_SAMPLE = 20  # chunk ids checked in Chroma on every index run

SCHEMA_VERSION = "1"
_SCHEMA = """
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


# Bump when kb_qa.text.normalize changes what the embedder sees for the same text.
EMBED_TEXT_VERSION = "2"


def embed_key(chunk: Chunk) -> str:
    """Cache key of a chunk's embedding: identical indexed text is embedded once."""
    return hashlib.sha1(f"{EMBED_TEXT_VERSION}\0{chunk.index_text}".encode()).hexdigest()


def collection_name(vault: Path) -> str:
    """One Chroma collection per vault (3-63 safe characters)."""
    digest = hashlib.sha1(str(vault.resolve()).encode()).hexdigest()[:10]
    stem = "".join(ch if ch.isalnum() else "-" for ch in vault.resolve().name.lower())[:40]
    return f"kbqa-{stem.strip('-') or 'vault'}-{digest}"


class Store:
    """Manifest + Chroma collection of one vault."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.folder = settings.index_path
        if settings.index_dir is None and not settings.vault.is_dir():
            # Checked before anything is created: <vault>/.kb-qa must not conjure up the vault.
            raise VaultError(
                f"Vault folder {settings.vault} does not exist or is not a folder. Check the path."
            )
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._connections_lock = threading.Lock()
        self._create_manifest()
        self.name = collection_name(settings.vault)
        self._client = _chroma_client(settings)
        self._open_collection()

    def _create_manifest(self) -> None:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self.db.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise IndexStateError(
                f"Cannot open the index in {self.folder}: {exc}. Check permissions, or set "
                "KBQA_INDEX_DIR to a writable folder."
            ) from exc

    def intact(self) -> bool:
        """Whether the manifest file is still where it was opened (cheap: one stat)."""
        return (self.folder / "manifest.sqlite3").is_file()

    def heal_folder(self) -> bool:
        """Make the index folder again if it was deleted under us; True when it was.

        The manifest went with it, so the collection is emptied too: the next run
        indexes everything again (`kb-qa serve --watch` does that on its own).
        """
        if self.intact():
            return False
        log.warning("the index folder %s disappeared; creating it again", self.folder)
        self.close()
        self._create_manifest()
        if not self.settings.chroma_url:
            self._client = _chroma_client(self.settings)
        self.reset(keep_vectors=False)
        return True

    @property
    def db(self) -> sqlite3.Connection:
        """This thread's connection to the manifest.

        One connection per thread: with WAL, a reader (a search on a server thread) sees
        the last committed state and never the middle of the indexer's transaction.
        """
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.folder / "manifest.sqlite3", check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA busy_timeout=10000")
            self._local.conn = conn
            with self._connections_lock:
                self._connections.append(conn)
        return conn

    # -- manifest ---------------------------------------------------------------------------

    def meta(self, key: str) -> str:
        """A stored value ("" when unset)."""
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else ""

    def set_meta(self, **values: str) -> None:
        """Store values, committed at once."""
        with self._writing():
            self.db.executemany(
                "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", list(values.items())
            )

    def files(self) -> dict[str, FileRow]:
        """Every indexed file by path."""
        rows = self.db.execute("SELECT path, size, mtime_ns, hash, title, url FROM files")
        return {r[0]: FileRow(*r) for r in rows}

    def chunks(self, path: str | None = None) -> list[Chunk]:
        """Every indexed chunk (or one file's), in path and document order."""
        if path is not None:
            rows = self.db.execute("SELECT data FROM chunks WHERE path=? ORDER BY ord", (path,))
        else:
            rows = self.db.execute("SELECT data FROM chunks ORDER BY path, ord")
        return [_chunk_from_json(r[0]) for r in rows]

    def _embed_keys(self, paths: Iterable[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        for path in paths:
            rows = self.db.execute("SELECT id, embed_key FROM chunks WHERE path=?", (path,))
            found.update(dict(rows.fetchall()))
        return found

    def failure(self, path: str, file_hash: str) -> str:
        """Why this exact content of ``path`` could not be chunked last time ("" if it could)."""
        row = self.db.execute(
            "SELECT reason FROM failures WHERE path=? AND hash=?", (path, file_hash)
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

    def cache_vectors(self, vectors: dict[str, np.ndarray]) -> None:
        """Remember embeddings (committed at once, so an interrupted run keeps them)."""
        with self._writing():
            self.db.executemany(
                "INSERT OR REPLACE INTO vectors(key, vec) VALUES (?, ?)",
                [(k, np.asarray(v, np.float32).tobytes()) for k, v in vectors.items()],
            )

    # -- writing ----------------------------------------------------------------------------

    def write(
        self,
        files: Sequence[FileRow],
        chunks: Sequence[Chunk],
        vectors: dict[str, np.ndarray],
        removed: Sequence[str] = (),
        outlines: Sequence[Outline] = (),
    ) -> int:
        """Replace the chunks of ``files`` and drop ``removed`` paths; returns chunks deleted."""
        paths = [f.path for f in files] + list(removed)
        old = self._embed_keys(paths)
        new_ids = {c.id for c in chunks}
        stale = sorted(set(old) - new_ids)
        # A chunk whose id and embedded text are unchanged already has the right vector.
        changed = [c for c in chunks if old.get(c.id) != embed_key(c)]
        if changed:
            for i in range(0, len(changed), 1000):
                part = changed[i : i + 1000]
                self.chroma(
                    lambda col, part=part: col.upsert(
                        ids=[c.id for c in part],
                        embeddings=np.stack([vectors[embed_key(c)] for c in part]),
                        metadatas=[{"path": c.path} for c in part],
                    )
                )
        if stale:
            self.chroma(lambda col: col.delete(ids=stale))
        with self._writing():
            for path in paths:
                self.db.execute("DELETE FROM chunks WHERE path=?", (path,))
                self.db.execute("DELETE FROM files WHERE path=?", (path,))
                self.db.execute("DELETE FROM outlines WHERE path=?", (path,))
            self.db.executemany(
                "INSERT INTO outlines(path, key, headings) VALUES (?,?,?)",
                [(o.path, o.key, _headings_to_json(o.headings)) for o in outlines if o.key],
            )
            self.db.executemany(
                "INSERT INTO files(path, size, mtime_ns, hash, title, url) VALUES (?,?,?,?,?,?)",
                [(f.path, f.size, f.mtime_ns, f.hash, f.title, f.url) for f in files],
            )
            self.db.executemany(
                "INSERT OR REPLACE INTO chunks(id, path, ord, embed_key, data) VALUES (?,?,?,?,?)",
                [(c.id, c.path, n, embed_key(c), _chunk_to_json(c)) for n, c in enumerate(chunks)],
            )
        return len(stale)

    def touch(self, rows: Sequence[FileRow]) -> None:
        """Record a new mtime for files whose content did not change."""
        with self._writing():
            self.db.executemany(
                "UPDATE files SET mtime_ns=?, size=? WHERE path=?",
                [(r.mtime_ns, r.size, r.path) for r in rows],
            )

    def reconcile(self) -> set[str]:
        """Drop vectors the manifest does not know; forget files whose vectors are missing.

        Returns the forgotten paths: the caller indexes them again as new files (their
        embeddings usually come back from the cache, with no model work).
        """
        known = dict(self.db.execute("SELECT id, path FROM chunks").fetchall())
        count = self.chroma(lambda col: col.count())
        present = set(self.chroma(lambda col: col.get(include=[]))["ids"]) if count else set()
        orphans = sorted(present - set(known))
        for i in range(0, len(orphans), 1000):
            self.chroma(lambda col, part=orphans[i : i + 1000]: col.delete(ids=part))
        if orphans:
            log.info("removed %d vectors left by an interrupted run", len(orphans))
        missing = sorted({known[i] for i in set(known) - present})
        with self._writing():  # one transaction: a kill here leaves them either known or new
            for path in missing:
                self.db.execute("DELETE FROM chunks WHERE path=?", (path,))
                self.db.execute("DELETE FROM files WHERE path=?", (path,))
        return set(missing)

    def vector_problem(self) -> str:
        """Why Chroma does not hold the manifest's vectors ("" when it does); a quick check.

        Compares counts and looks up a random sample of chunk ids, so a deleted Chroma
        folder or a Chroma server restarted on an empty path is noticed on the next run.
        """
        rows = self.db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        count = self.chroma(lambda col: col.count())
        if count < rows:
            return f"Chroma holds {count:,} vectors for {rows:,} indexed chunks"
        sample = [
            r[0]
            for r in self.db.execute(
                "SELECT id FROM chunks ORDER BY random() LIMIT ?", (VECTOR_SAMPLE,)
            )
        ]
        if not sample:
            return ""
        found = set(self.chroma(lambda col: col.get(ids=sample, include=[]))["ids"])
        lost = len(set(sample) - found)
        return f"{lost} of {len(sample)} sampled chunks have no vector in Chroma" if lost else ""

    def chroma(self, call: Callable[[Any], T]) -> T:
        """``call(collection)``, re-opening a collection that disappeared (a Chroma folder
        deleted, a server restarted empty); an unreachable Chroma is an ``IndexStateError``.
        """
        from chromadb.errors import NotFoundError

        try:
            return call(self.collection)
        except NotFoundError:
            log.warning("the Chroma collection %s disappeared; creating it again", self.name)
        except Exception as exc:  # chromadb and httpx raise many types; all mean "unusable"
            raise self._unusable(exc) from exc
        self._open_collection()
        try:
            return call(self.collection)
        except Exception as exc:
            raise self._unusable(exc) from exc

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """One manifest transaction; a full disk is said in one line, not a traceback."""
        try:
            with self.db:
                yield
        except (sqlite3.OperationalError, OSError) as exc:
            if _disk_full(exc):
                raise self._disk_full() from exc
            raise

    def _disk_full(self) -> IndexStateError:
        return IndexStateError(
            f"The disk holding the index ({self.folder}) is full. Free some space there (or "
            "set KBQA_INDEX_DIR to a folder on another disk) and run `kb-qa index` again; "
            "the index keeps serving what it had."
        )

    def _unusable(self, exc: Exception) -> IndexStateError:
        if _disk_full(exc) and not self.settings.chroma_url:
            return self._disk_full()
        log.error("Chroma failed: %s: %s", type(exc).__name__, exc)
        where = self.settings.chroma_url or str(self.folder / "chroma")
        fix = (
            "Check that the Chroma server is running (e.g. `chroma run --path DIR --port 8000`)"
            if self.settings.chroma_url
            else "Check the index folder, or delete it and run `kb-qa index` to rebuild it"
        )
        return IndexStateError(f"The vector index at {where} cannot be used right now. {fix}.")

    def reset(self, keep_vectors: bool) -> None:
        """Empty the index (and the embedding cache unless ``keep_vectors``)."""
        with contextlib.suppress(Exception):
            self._client.delete_collection(self.name)
        self._open_collection()
        with self._writing():
            self.db.execute("DELETE FROM chunks")
            self.db.execute("DELETE FROM files")
            self.db.execute("DELETE FROM outlines")
            if not keep_vectors:
                self.db.execute("DELETE FROM vectors")

    # -- reading ----------------------------------------------------------------------------

    def nearest(
        self, vector: np.ndarray, n: int, paths: Sequence[str] | None = None
    ) -> list[tuple[str, float]]:
        """(chunk id, cosine distance) of the ``n`` nearest vectors, optionally within paths."""
        count = self.chroma(lambda col: col.count())
        if count == 0 or n <= 0:
            return []
        where: dict[str, Any] | None = None
        if paths is not None:
            if not paths:
                return []
            where = {"path": {"$in": list(paths)}}
        result = self.chroma(
            lambda col: col.query(
                query_embeddings=[np.asarray(vector, np.float32)],
                n_results=min(n, count),
                where=where,
                include=["distances"],
            )
        )
        return list(zip(result["ids"][0], result["distances"][0]))

    @contextlib.contextmanager
    def writer_lock(self) -> Iterator[None]:
        """Only one process writes an index at a time."""
        with open(self.folder / "write.lock", "w") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError as exc:
                raise IndexStateError(
                    f"Another kb-qa process is updating the index in {self.folder}. Wait for it "
                    "to finish (or stop it) and try again."
                ) from exc
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def close(self) -> None:
        """Close the manifest connections."""
        with self._connections_lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
        self._local = threading.local()

    def reopen(self) -> None:
        """Reconnect to Chroma to see what other processes wrote (embedded mode)."""
        if self.settings.chroma_url:
            return  # a server already serves every writer's data
        from chromadb.api.client import SharedSystemClient

        SharedSystemClient.clear_system_cache()
        self._client = _chroma_client(self.settings)
        self._open_collection()

    def _open_collection(self) -> None:
        try:
            self.collection = self._client.get_or_create_collection(
                self.name, embedding_function=None, metadata={"hnsw:space": "cosine"}
            )
        except Exception as exc:  # chromadb and httpx raise many types; all mean "unusable"
            raise self._unusable(exc) from exc


def _chroma_client(settings: Settings):  # type: ignore[no-untyped-def]
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    chroma_settings = ChromaSettings(anonymized_telemetry=False)
    if not settings.chroma_url:
        path = settings.index_path / "chroma"
        if not (path / "chroma.sqlite3").exists():
            _forget_system(str(path))
        return chromadb.PersistentClient(path=str(path), settings=chroma_settings)
    from urllib.parse import urlparse

    url = urlparse(settings.chroma_url)
    if url.scheme not in ("http", "https") or not url.hostname:
        raise ConfigError(
            f"chroma_url {settings.chroma_url!r} is not an http(s) URL such as http://127.0.0.1:8000."
        )
    try:
        return chromadb.HttpClient(
            host=url.hostname,
            port=url.port or (443 if url.scheme == "https" else 80),
            ssl=url.scheme == "https",
            settings=chroma_settings,
        )
    except Exception as exc:
        raise IndexStateError(
            f"Cannot reach the Chroma server at {settings.chroma_url}: {exc}. Start it (e.g. "
            "`chroma run --path DIR --port 8000`) or unset KBQA_CHROMA_URL to use the embedded "
            "index."
        ) from exc


def _disk_full(exc: BaseException) -> bool:
    """Whether an error from SQLite, Chroma or the OS means the disk is full."""
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        return True
    text = str(exc).lower()
    return "disk is full" in text or "no space left" in text


def _forget_system(path: str) -> None:
    """Drop chromadb's process-wide cached database for ``path`` if its files are gone.

    chromadb keeps one open database per folder for the whole process; after the folder is
    deleted (and made again) that handle writes to a vanished file ("attempt to write a
    readonly database"), so the next client must open it afresh.
    """
    from chromadb.api.client import SharedSystemClient

    with SharedSystemClient._refcount_lock:
        system = SharedSystemClient._identifier_to_system.pop(path, None)
        SharedSystemClient._identifier_to_refcount.pop(path, None)
    if system is not None:
        with contextlib.suppress(Exception):
            system.stop()


def _headings_to_json(headings: Sequence[Heading]) -> str:
    return json.dumps([asdict(h) for h in headings], ensure_ascii=False)


def _chunk_to_json(chunk: Chunk) -> str:
    data = asdict(chunk)
    data["heading_path"] = list(chunk.heading_path)
    return json.dumps(data, ensure_ascii=False)


def _chunk_from_json(text: str) -> Chunk:
    data = json.loads(text)
    data["heading_path"] = tuple(data["heading_path"])
    return Chunk(**data)
