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
import logging
import sqlite3
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from kb_qa.errors import IndexBusyError, IndexStateError, VaultError, folder_is_file
from kb_qa.index.chroma import Collection, disk_full, disk_full_error
from kb_qa.index.claim import WorkspaceClaim
from kb_qa.index.manifest import (
    SCHEMA,
    FileRow,
    Manifest,
    PerThread,
    chunk_to_json,
    embed_key,
    headings_to_json,
    in_file_order,
    settled_mtime,
)
from kb_qa.index.workspace import MANIFEST, chunk_record, collection_name, workspace_name
from kb_qa.ingest.site import site_name
from kb_qa.ingest.vault import SKIP_DIRS
from kb_qa.settings import Settings
from kb_qa.types import Chunk, Outline

log = logging.getLogger(__name__)
T = TypeVar("T")
VECTOR_SAMPLE = 20  # chunk ids checked in Chroma on every index run


LOCK_GRACE = 1.0  # seconds a writer waits for the write lock before saying it is busy


def check_vault(settings: Settings) -> None:
    """Refuse a vault that is not a folder before <vault>/.kb-qa could conjure it up."""
    if settings.index_dir is None and not settings.vault.is_dir():
        raise VaultError(
            f"Vault folder {settings.vault} does not exist or is not a folder. Check the path."
        )


def _check_own_folder(folder: Path, vault: Path) -> None:
    """Refuse an index folder that holds the vault or its pages, before anything is made in
    it: every page inside the index folder is skipped, so the index would be empty, and its
    database would be published with the site."""
    folder = folder.resolve()
    if vault.resolve().is_relative_to(folder):
        raise VaultError(
            f"The index folder {folder} holds the vault {vault}: kb-qa never reads pages inside "
            "its index folder. Give the index a folder of its own (the default is "
            f"{vault / '.kb-qa'})."
        )
    if (folder / MANIFEST).is_file() or not folder.is_relative_to(vault.resolve()):
        return  # a folder of the user's own elsewhere may hold anything
    page = next((p for p in folder.rglob("*.md") if _a_page(p, vault)), None)
    if page is not None:
        raise VaultError(
            f"The index folder {folder} holds pages ({page.relative_to(folder)}): it looks like "
            "a docs folder. Give the index a folder of its own (the default is "
            f"{vault / '.kb-qa'})."
        )


def _a_page(path: Path, vault: Path) -> bool:
    """Whether the scan would read ``path`` as a page (not in a hidden or tool folder)."""
    parts = path.relative_to(vault.resolve()).parts[:-1]
    return path.is_file() and not any(p.startswith(".") or p in SKIP_DIRS for p in parts)


class Store(Manifest, WorkspaceClaim):
    """Manifest + Chroma collection of one vault."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.folder = settings.index_path
        check_vault(settings)
        _check_own_folder(self.folder, settings.vault)
        self._connections = PerThread(self.folder / MANIFEST)
        self._known_meta = {}
        self._known_files = None
        self._create_manifest()
        self.workspace = workspace_name(
            settings.workspace, site_name(settings.vault), settings.vault
        )
        self.name = collection_name(self.workspace)
        # Opened on first use: a full disk then is Collection.unusable's disk_full_error.
        self.vectors = Collection(settings, self.name, self.folder)
        self._writer_id = ""

    @property
    def writer_id(self) -> str:
        """This index folder's id in the workspace record (made on first use)."""
        if not self._writer_id:
            self._writer_id = self.meta("writer") or uuid.uuid4().hex
            self.set_meta(writer=self._writer_id)
        return self._writer_id

    @property
    def collection(self) -> Any:
        """The Chroma collection object (prefer :meth:`chroma`, which heals)."""
        return self.vectors.chroma(lambda col: col)  # opened on first use

    def _create_manifest(self) -> None:
        try:
            made = not self.folder.exists()
            self.folder.mkdir(parents=True, exist_ok=True)
            ignore = self.folder / ".gitignore"
            ours = self.folder.resolve() == (self.settings.vault / ".kb-qa").resolve()
            if made or (ours and not ignore.exists()):
                # The index (readers' questions and ratings included) lives in the vault by
                # default: `git add -A` in a docs repository must not stage it. Only in a
                # folder kb-qa made, or the vault's .kb-qa (a kb-qa before 2026-12-05 wrote
                # none): one the user chose may hold their own files.
                ignore.write_text("# kb-qa's index: not for version control\n*\n")
            self.db.executescript(SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            if disk_full(exc, self.folder):
                raise disk_full_error(self.folder) from exc
            if self.folder.is_file():  # "[Errno 17] File exists", said to check permissions
                raise folder_is_file(self.folder) from exc
            raise IndexStateError(
                f"Cannot open the index in {self.folder}: {exc}. Check permissions, or set "
                "KBQA_INDEX_DIR to a writable folder."
            ) from exc

    def intact(self) -> bool:
        """Whether the manifest file is still where it was opened (cheap: one stat)."""
        return (self.folder / MANIFEST).is_file()

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
        if self._writer_id:
            self.set_meta(writer=self._writer_id)  # still the same vault's writer
        self.vectors.new_client()
        self.reset(keep_vectors=False)
        return True

    @property
    def db(self) -> sqlite3.Connection:
        """This thread's connection to the manifest (one per thread: see ``PerThread``)."""
        return self._connections.get()

    # -- manifest ---------------------------------------------------------------------------

    # -- writing ----------------------------------------------------------------------------

    def write(
        self,
        files: Sequence[FileRow],
        chunks: Sequence[Chunk],
        vectors: dict[str, np.ndarray],
        removed: Sequence[str] = (),
        outlines: Sequence[Outline] = (),
    ) -> int:
        """Replace the chunks of ``files`` and drop ``removed`` paths; returns chunks deleted.

        Chroma's record of each chunk carries its text and address (what a replica
        serves), so a chunk is written again when any of that changed, not only its vector.
        """
        paths = [f.path for f in files] + list(removed)
        old = self._records(paths)
        new_ids = {c.id for c in chunks}
        stale = sorted(set(old) - new_ids)
        titles = {f.path: f.title for f in files}
        rows = [(c, embed_key(c), chunk_to_json(c), n) for c, n in in_file_order(chunks)]
        changed = [(c, n) for c, key, data, n in rows if old.get(c.id) != (key, data, n)]
        for i in range(0, len(changed), 1000):
            part = changed[i : i + 1000]
            records = [chunk_record(c, titles.get(c.path, ""), n) for c, n in part]
            self.chroma(
                lambda col, part=part, records=records: col.upsert(  # type: ignore[misc]  # default args
                    ids=[c.id for c, _ in part],
                    embeddings=np.stack([vectors[embed_key(c)] for c, _ in part]),
                    documents=[text for text, _ in records],
                    metadatas=[meta for _, meta in records],
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
                [(o.path, o.key, headings_to_json(o.headings)) for o in outlines if o.key],
            )
            self.db.executemany(
                "INSERT INTO files(path, size, mtime_ns, hash, title, url) VALUES (?,?,?,?,?,?)",
                [
                    (f.path, f.size, settled_mtime(f.mtime_ns), f.hash, f.title, f.url)
                    for f in files
                ],
            )
            self.db.executemany(
                "INSERT OR REPLACE INTO chunks(id, path, ord, embed_key, data) VALUES (?,?,?,?,?)",
                [(c.id, c.path, n, key, data) for c, key, data, n in rows],
            )
        return len(stale)

    def touch(self, rows: Sequence[FileRow]) -> None:
        """Record a new mtime for files whose content did not change."""
        with self._writing():
            self.db.executemany(
                "UPDATE files SET mtime_ns=?, size=? WHERE path=?",
                [(settled_mtime(r.mtime_ns), r.size, r.path) for r in rows],
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
            self.chroma(lambda col, part=orphans[i : i + 1000]: col.delete(ids=part))  # type: ignore[misc]  # default args
        if orphans:
            log.info("removed %d vectors left by an interrupted run", len(orphans))
        missing = sorted({known[i] for i in set(known) - present})
        with self._writing():  # one transaction: a kill here leaves them either known or new
            for path in missing:
                self.db.execute("DELETE FROM chunks WHERE path=?", (path,))
                self.db.execute("DELETE FROM files WHERE path=?", (path,))
        return set(missing)

    def chroma_stamp(self) -> str:
        """The embedded Chroma files' names, sizes and times, hashed ("" on a server or when
        they cannot be read): equal to the stamp an index run left, nothing touched them."""
        if self.settings.chroma_url:
            return ""
        folder = self.folder / "chroma"
        try:
            parts = sorted(
                f"{p.relative_to(folder)}:{st.st_size}:{st.st_mtime_ns}"
                for p in folder.rglob("*")
                if p.is_file()
                for st in (p.stat(),)
            )
        except OSError:
            return ""
        return hashlib.sha256("\n".join(parts).encode()).hexdigest() if parts else ""

    def chroma_untouched(self) -> bool:
        """Whether the embedded Chroma is as the last index run left it (so a run with
        nothing to write need not open it: chromadb's import alone takes ~0.4 s)."""
        stamp = self.chroma_stamp()
        return bool(stamp) and stamp == self.meta("chroma_stamp")

    def vectors_gone(self) -> bool:
        """Whether Chroma lost this index's vectors: the embedded database's folder deleted,
        or a server restarted on an empty path (a watcher's cue to put them back)."""
        return self.vectors.vanished() or self.vectors.emptied(self.chunk_count)

    def vector_problem(self) -> str:
        """Why Chroma does not hold the manifest's vectors ("" when it does); a quick check.

        Compares counts and looks up a random sample of chunk ids, so a deleted Chroma
        folder or a Chroma server restarted on an empty path is noticed on the next run.
        """
        rows = self.db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        count = self.chroma(lambda col: col.count())
        if count < rows:
            return f"Chroma holds {count:,} vectors for {rows:,} indexed chunks"
        # More vectors than chunks: another writer's sections (two at once), or a lost run's;
        # not a run writing now (Chroma first, then the manifest: for a moment it holds more).
        if count > rows and self.meta("writing") != "1":
            return f"Chroma holds {count - rows:,} vectors of no indexed chunk"
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
        return self.vectors.chroma(call)

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """One manifest transaction; a full disk is said in one line, not a traceback."""
        try:
            with self.db:
                yield
        except (sqlite3.OperationalError, OSError) as exc:
            if disk_full(exc, self.folder):
                raise disk_full_error(self.folder) from exc
            raise

    def reset(self, keep_vectors: bool) -> None:
        """Empty the index (and the embedding cache unless ``keep_vectors``)."""
        self.vectors.drop()
        self.mark_writing()  # a rebuild: replicas say so instead of "never indexed"
        self.set_meta(rebuilding="1")  # until a run finishes writing (cli.require_index)
        with self._writing():
            for table in ("chunks", "files", "outlines", "failures"):
                self.db.execute(f"DELETE FROM {table}")  # noqa: S608 - names of our own
            if not keep_vectors:
                self.db.execute("DELETE FROM vectors")

    # -- reading ----------------------------------------------------------------------------

    def nearest(
        self, vector: np.ndarray, n: int, paths: Sequence[str] | None = None
    ) -> list[tuple[str, float]]:
        """(chunk id, cosine distance) of the ``n`` nearest vectors, optionally within paths."""
        return self.vectors.nearest(vector, n, paths)

    @contextlib.contextmanager
    def writer_lock(self) -> Iterator[None]:
        """Only one process writes an index at a time."""
        try:
            handle = open(self.folder / "write.lock", "w")
        except OSError as exc:  # a read-only folder or file system, a lock file not ours
            raise IndexStateError(
                f"Cannot write the index in {self.folder}: {exc.strerror}. Make the folder "
                "writable (its databases need it, to be searched too) or point index_dir "
                "(KBQA_INDEX_DIR) at a writable one."
            ) from exc
        with handle:
            # A second's grace: `being_written` holds the lock for an instant to test it.
            deadline = time.monotonic() + LOCK_GRACE
            while True:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError as exc:
                    if time.monotonic() >= deadline:
                        raise IndexBusyError(
                            f"Another kb-qa process is updating the index in {self.folder}. "
                            "Wait for it to finish (or stop it) and try again."
                        ) from exc
                    time.sleep(0.05)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def being_written(self) -> bool:
        """Whether another process holds the write lock now (``kb-qa index`` running)."""
        try:
            with open(self.folder / "write.lock") as handle:  # read-only: flock needs no more
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    return True
                fcntl.flock(handle, fcntl.LOCK_UN)
        except OSError:  # no lock file: nobody has written here yet
            return False
        return False

    def close(self) -> None:
        """Close the manifest connections."""
        self._connections.close()

    def reopen(self) -> None:
        """Reconnect to Chroma to see what other processes wrote (embedded mode)."""
        self.vectors.reconnect()
