"""One Chroma collection (embedded or on a server), for the writer's Store and for replicas.

Every call goes through :meth:`Collection.chroma`, which re-opens a collection that
disappeared (a deleted Chroma folder, a server restarted on an empty path) and turns any
failure into an ``IndexStateError`` that says what to check. A read-only collection
(``create=False``, a replica) never creates, writes or deletes anything.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import re
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast
from urllib.parse import urlparse

import numpy as np

from kb_qa.errors import IndexStateError
from kb_qa.index.chroma_http import answers, bound
from kb_qa.index.workspace import WorkspaceRecord, chunk_from_record
from kb_qa.settings import Settings
from kb_qa.types import Chunk

log = logging.getLogger(__name__)
T = TypeVar("T")
READ_BATCH = 2000  # records fetched per request when a replica loads a workspace
EMPTIED_SECONDS = 10.0  # how often a watcher asks a Chroma server whether it lost vectors


# A web page in an error's text (a proxy's refusal, another server's page), and its tags.
_PAGE = re.compile(r"<(?:!doctype|html|head|body|title)\b", re.IGNORECASE)
_TAG = re.compile(r"<[^<>]{0,500}>")
# The name of a segment folder of the embedded database (a UUID).
_SEGMENT = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


class Collection:
    """A Chroma collection by name, with errors in words."""

    def __init__(self, settings: Settings, name: str, folder: Path, *, create: bool = True) -> None:
        self.settings = settings
        self.name = name
        self.folder = folder  # the embedded database lives in folder/chroma
        self.create = create
        self._client: Any = None  # made on first use: reading the view needs no Chroma
        self.collection: Any = None
        self._failure = ""  # the last failure logged
        self._emptied_at = 0.0  # when ``emptied`` last asked the server
        self._reopen_lock = threading.Lock()
        # Made once however many threads ask at once: two embedded clients made together on
        # one folder broke both ("'RustBindingsAPI' object has no attribute 'bindings'"),
        # which a health check during a server's first index run did.
        self._open_lock = threading.RLock()
        if settings.chroma_url:  # a server that is not there is said at start
            self._client = chroma_client(settings, folder)
            if create:
                self.open()

    @property
    def client(self) -> Any:
        """The Chroma client, made (and chromadb imported, ~0.4 s) when first needed."""
        if self._client is None:
            with self._open_lock:
                if self._client is None:
                    self._client = chroma_client(self.settings, self.folder)
        return self._client

    @client.setter
    def client(self, value: Any) -> None:
        self._client = value

    def open(self) -> None:
        """(Re)open the collection; a writer creates it when missing, a replica does not."""
        from chromadb.errors import NotFoundError

        try:
            if self.create:
                self.collection = self.client.get_or_create_collection(
                    self.name, embedding_function=None, metadata={"hnsw:space": "cosine"}
                )
            else:
                self.collection = self.client.get_collection(self.name, embedding_function=None)
        except NotFoundError as exc:
            raise self.not_found() from exc
        except Exception as exc:  # chromadb and httpx raise many types; all mean "unusable"
            raise self.unusable(exc) from exc

    def emptied(self, rows: Callable[[], int]) -> bool:
        """Whether the Chroma server holds fewer vectors than the index's ``rows()`` chunks
        (restarted on an empty path): a watcher's cue to put them back from the cache, asked
        at most every ``EMPTIED_SECONDS``; False while the server cannot say."""
        if not self.settings.chroma_url or time.monotonic() - self._emptied_at < EMPTIED_SECONDS:
            return False
        self._emptied_at = time.monotonic()
        try:
            return bool(self.chroma(lambda col: col.count()) < rows())
        except IndexStateError:
            return False

    def vanished(self) -> bool:
        """Whether the embedded database's files were deleted since it was opened (``rm -rf
        .kb-qa/chroma``): the open handle still reads the deleted file, but every write fails
        with "attempt to write a readonly database". One stat."""
        return (
            not self.settings.chroma_url
            and self.collection is not None
            and not (self.folder / "chroma" / "chroma.sqlite3").exists()
        )

    def _reopen_vanished(self) -> None:
        """A new embedded client on a folder made again, when its files vanished."""
        with self._reopen_lock:
            if not self.vanished():
                return  # another thread did it
            log.warning(
                "the Chroma files in %s were deleted; opening it again (the next index run "
                "puts the vectors back from the embedding cache)",
                self.folder / "chroma",
            )
            self.collection = None
            self.client = chroma_client(self.settings, self.folder)  # forgets the old one
            self.open()

    def chroma(self, call: Callable[[Any], T]) -> T:
        """``call(collection)``, re-opening a collection that disappeared (or whose files
        were deleted)."""
        from chromadb.errors import NotFoundError

        try:
            if self.vanished():
                self._reopen_vanished()
            if self.collection is None:
                with self._open_lock:
                    if self.collection is None:
                        self.open()
            result = call(self.collection)
            self._failure = ""
            return result
        except NotFoundError:
            if self.create:
                log.warning("the Chroma collection %s disappeared; creating it again", self.name)
        except IndexStateError:
            raise
        except Exception as exc:  # chromadb and httpx raise many types; all mean "unusable"
            raise self.unusable(exc) from exc
        self.open()
        try:
            return call(self.collection)
        except Exception as exc:
            raise self.unusable(exc) from exc

    def not_found(self) -> IndexStateError:
        """The error for a workspace this Chroma does not hold: how to make it."""
        where = self.settings.chroma_url or str(self.folder / "chroma")
        workspace = self.name.removeprefix("kbqa-")
        return IndexStateError(
            f"The Chroma server at {where} holds no workspace {workspace!r}. Index it first "
            f"(`kb-qa index VAULT --chroma-url {where} --workspace {workspace}`), or check "
            "the --workspace name."
        )

    def unusable(self, exc: Exception) -> IndexStateError:
        """The error for a Chroma that failed: what to check, never a traceback."""
        if not self.settings.chroma_url and disk_full(exc, self.folder):
            return disk_full_error(self.folder)
        failure = f"{type(exc).__name__}: {exc}"
        # Said once per outage, not on every poll or search while Chroma is away.
        log.log(
            logging.DEBUG if failure == self._failure else logging.ERROR,
            "Chroma failed: %s",
            failure,
        )
        self._failure = failure
        where = self.settings.chroma_url or str(self.folder / "chroma")
        fix = (
            "Check that the Chroma server is running (e.g. `chroma run --path DIR --port 8000`)"
            if self.settings.chroma_url
            else (
                "Check that the index folder is readable and writable and its disk has free "
                "space; if the error stays, move its chroma/ folder aside and run `kb-qa "
                "index`, which puts the vectors back from the embedding cache (nothing is "
                "embedded again)"
            )
        )
        return IndexStateError(f"The vector index at {where} cannot be used right now. {fix}.")

    def nearest(
        self, vector: np.ndarray, n: int, paths: Sequence[str] | None = None
    ) -> list[tuple[str, float]]:
        """(chunk id, cosine distance) of the ``n`` nearest vectors, optionally within paths."""
        if n <= 0:
            return []
        where: dict[str, Any] | None = None
        if paths is not None:
            if not paths:
                return []
            where = {"path": {"$in": list(paths)}}
        # Chroma returns what it has when asked for more (one round trip, no count first).
        result = self.chroma(
            lambda col: col.query(
                query_embeddings=[np.asarray(vector, np.float32)],
                n_results=n,
                where=where,
                include=["distances"],
            )
        )
        return list(zip(result["ids"][0], result["distances"][0]))

    def record(self) -> WorkspaceRecord:
        """The workspace record as Chroma holds it now (empty when there is none yet)."""
        # Fetched afresh: a collection object keeps the metadata it was fetched with.
        return WorkspaceRecord.of(
            self.chroma(
                lambda _: self.client.get_collection(self.name, embedding_function=None).metadata
            )
        )

    def publish(self, record: WorkspaceRecord) -> None:
        """Replace the workspace record (the writer's last step after changing records)."""
        self.chroma(lambda col: col.modify(metadata=record.metadata()))

    def chunks(self) -> tuple[list[Chunk], dict[str, str], dict[str, np.ndarray]]:
        """Every chunk in the collection in path and document order, each page's title, and
        each chunk's vector by id."""
        found: list[tuple[str, int, Chunk]] = []
        titles: dict[str, str] = {}
        vectors: dict[str, np.ndarray] = {}
        offset = 0
        while True:
            page = self.chroma(
                lambda col, offset=offset: col.get(  # type: ignore[misc]  # default args
                    include=["documents", "metadatas", "embeddings"],
                    limit=READ_BATCH,
                    offset=offset,
                )
            )
            rows = zip(page["ids"], page["documents"], page["metadatas"], page["embeddings"])
            for chunk_id, text, meta, vector in rows:
                if "ord" not in meta:  # a record an older kb-qa wrote (the writer rebuilds it)
                    continue
                vectors[chunk_id] = np.asarray(vector, dtype=np.float32)
                chunk = chunk_from_record(chunk_id, text or "", meta)
                found.append((chunk.path, int(meta["ord"]), chunk))
                titles.setdefault(chunk.path, str(meta.get("title", "")))
            if len(page["ids"]) < READ_BATCH:
                break
            offset += READ_BATCH
        found.sort(key=lambda item: (item[0], item[1]))
        return [c for _, _, c in found], titles, vectors

    def drop(self) -> None:
        """Delete the collection and create it empty (writers only)."""
        with contextlib.suppress(Exception):
            self.client.delete_collection(self.name)
        self._remove_unused_segments()
        self.open()

    def delete_other(self, name: str) -> None:
        """Delete another collection of this client if it exists (an index that moved)."""
        with contextlib.suppress(Exception):
            self.client.delete_collection(name)
        self._remove_unused_segments()

    def _remove_unused_segments(self) -> None:
        """Remove the vector folders of the embedded database that no collection uses:
        Chroma leaves a deleted collection's on disk (chroma-core/chroma#5259), so every
        rebuild (a model change, an upgrade that re-chunks) left its vectors behind."""
        if self.settings.chroma_url:
            return
        path = self.folder / "chroma"
        database = path / "chroma.sqlite3"
        if not database.is_file():
            return
        try:
            reader = sqlite3.connect(database.as_uri() + "?mode=ro", uri=True)
            with contextlib.closing(reader) as db:
                used = {str(row[0]) for row in db.execute("SELECT id FROM segments")}
        except sqlite3.Error:
            return  # a layout this version does not know: leave the folder as it is
        for child in path.iterdir():
            if child.is_dir() and _SEGMENT.fullmatch(child.name) and child.name not in used:
                shutil.rmtree(child, ignore_errors=True)

    def new_client(self) -> None:
        """A new embedded client (its folder was made again); the server's stays."""
        if not self.settings.chroma_url:
            self.client = chroma_client(self.settings, self.folder)

    def reconnect(self) -> None:
        """A fresh embedded client: sees what other processes wrote, or a re-made folder."""
        if self.settings.chroma_url:
            return  # a server already serves every writer's data
        if self._client is None:
            return  # not opened yet: the first use opens what is there now
        from chromadb.api.client import SharedSystemClient

        SharedSystemClient.clear_system_cache()
        self._client, self.collection = None, None  # made again on the next use


def chroma_client(settings: Settings, folder: Path):  # type: ignore[no-untyped-def]
    """An embedded client on ``folder/chroma``, or an HTTP client for ``chroma_url``."""
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    chroma_settings = ChromaSettings(anonymized_telemetry=False)
    if not settings.chroma_url:
        path = folder / "chroma"
        if not (path / "chroma.sqlite3").exists():
            _forget_system(str(path))
        return chromadb.PersistentClient(path=str(path), settings=chroma_settings)

    url = urlparse(settings.chroma_url)  # checked as it was set (settings._coerce)
    answers(settings.chroma_url)
    try:
        client = chromadb.HttpClient(
            host=cast(str, url.hostname),  # settings._coerce refuses a URL without one
            port=url.port or (443 if url.scheme == "https" else 80),
            ssl=url.scheme == "https",
            settings=chroma_settings,
        )
    except Exception as exc:
        said = " ".join(str(exc).split())
        if _PAGE.search(said):  # a proxy's refusal (401, 403) or another server's page
            words = " ".join(_TAG.sub(" ", said).split())[:120]
            raise IndexStateError(
                f"The server at {settings.chroma_url} answers with a web page ({words}), not "
                "as Chroma does: a proxy before it that refuses kb-qa, or another server. "
                "Check chroma_url (KBQA_CHROMA_URL or --chroma-url), and that "
                f"{settings.chroma_url}/api/v2/heartbeat answers."
            ) from exc
        said = said[:200].rstrip(".?! ")
        raise IndexStateError(
            f"Cannot reach the Chroma server at {settings.chroma_url} ({said}). Start it (e.g. "
            "`chroma run --path DIR --port 8000`), or check chroma_url (KBQA_CHROMA_URL or "
            "--chroma-url)."
        ) from exc
    bound(client)
    return client


def disk_full(exc: BaseException, folder: Path | None = None) -> bool:
    """Whether an error from SQLite, Chroma or the OS means the disk (of ``folder``) is full."""
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        return True
    text = str(exc).lower()
    if "disk is full" in text or "no space left" in text:
        return True
    # SQLite's word when it cannot make its shared-memory file: opening a database that
    # was fine before the disk filled up.
    if folder is None or "disk i/o error" not in text:
        return False
    try:
        return shutil.disk_usage(folder).free < 1_000_000
    except OSError:
        return False


def disk_full_error(folder: Path) -> IndexStateError:
    """What to do about a full disk under the index folder."""
    return IndexStateError(
        f"The disk holding the index ({folder}) is full. Free some space there (or "
        "set KBQA_INDEX_DIR to a folder on another disk) and run `kb-qa index` again; "
        "the index keeps serving what it had."
    )


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
