"""The index on disk: a SQLite manifest (files, chunks, embedding cache) beside Chroma.

The manifest is the source of truth for what is indexed. Writes go to Chroma first and
are committed to the manifest afterwards, one transaction per group of files, so a run
killed at any moment leaves an index that opens and serves what it had: vectors Chroma
holds for uncommitted work are ignored by search and cleaned up by the next run.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from kb_qa.errors import ConfigError, IndexStateError, VaultError
from kb_qa.settings import Settings
from kb_qa.types import Chunk, Heading, Outline

log = logging.getLogger(__name__)

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
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self.db.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise IndexStateError(
                f"Cannot open the index in {self.folder}: {exc}. Check permissions, or set "
                "KBQA_INDEX_DIR to a writable folder."
            ) from exc
        self.name = collection_name(settings.vault)
        self._client = _chroma_client(settings)
        self.collection = self._open_collection()

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
        with self.db:
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
        with self.db:
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
                self.collection.upsert(
                    ids=[c.id for c in part],
                    embeddings=np.stack([vectors[embed_key(c)] for c in part]),
                    metadatas=[{"path": c.path} for c in part],
                )
        if stale:
            self.collection.delete(ids=stale)
        with self.db:
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
        with self.db:
            self.db.executemany(
                "UPDATE files SET mtime_ns=?, size=? WHERE path=?",
                [(r.mtime_ns, r.size, r.path) for r in rows],
            )

    def reconcile(self) -> set[str]:
        """Drop vectors the manifest does not know; return paths whose vectors are missing."""
        known = dict(self.db.execute("SELECT id, path FROM chunks").fetchall())
        present = set(self.collection.get(include=[])["ids"]) if self.collection.count() else set()
        orphans = sorted(present - set(known))
        for i in range(0, len(orphans), 1000):
            self.collection.delete(ids=orphans[i : i + 1000])
        if orphans:
            log.info("removed %d vectors left by an interrupted run", len(orphans))
        return {known[i] for i in set(known) - present}

    def reset(self, keep_vectors: bool) -> None:
        """Empty the index (and the embedding cache unless ``keep_vectors``)."""
        with contextlib.suppress(Exception):
            self._client.delete_collection(self.name)
        self.collection = self._open_collection()
        with self.db:
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
        count = self.collection.count()
        if count == 0 or n <= 0:
            return []
        where: dict[str, Any] | None = None
        if paths is not None:
            if not paths:
                return []
            where = {"path": {"$in": list(paths)}}
        result = self.collection.query(
            query_embeddings=[np.asarray(vector, np.float32)],
            n_results=min(n, count),
            where=where,
            include=["distances"],
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
        self.collection = self._open_collection()

    def _open_collection(self):  # type: ignore[no-untyped-def]
        return self._client.get_or_create_collection(
            self.name, embedding_function=None, metadata={"hnsw:space": "cosine"}
        )


def _chroma_client(settings: Settings):  # type: ignore[no-untyped-def]
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    chroma_settings = ChromaSettings(anonymized_telemetry=False)
    if not settings.chroma_url:
        return chromadb.PersistentClient(
            path=str(settings.index_path / "chroma"), settings=chroma_settings
        )
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
