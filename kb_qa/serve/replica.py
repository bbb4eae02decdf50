"""A read-only replica: search and answers from a workspace on a Chroma server alone.

replica = Replica(Settings.from_env(chroma_url="http://chroma:8000", workspace="docs"))
replica.start()              # loads the workspace, then polls its generation
hits = replica.search("how do I enable instant loading?")

It needs no vault and no manifest: the chunks (text, heading path, anchor, offsets, lines,
URL, page title) come from Chroma's records, the keyword index is built in memory, and
vector queries go to the server. A poller reads the workspace record every
``replica_poll`` seconds and, when the writer published a new generation, loads the new
chunks beside the old ones and swaps them in: a search in flight keeps the snapshot it
started with. A replica never creates, writes or deletes anything in Chroma.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Any

from kb_qa.errors import ConfigError, IndexStateError, KbQaError
from kb_qa.index import embeddings
from kb_qa.index.chroma import Collection
from kb_qa.index.chroma_http import CHROMA_CONNECT_SECONDS
from kb_qa.index.workspace import WorkspaceRecord, collection_name, slug
from kb_qa.ingest import links
from kb_qa.kb.knowledge_base import KnowledgeBase, Loaded, load_view
from kb_qa.settings import Settings
from kb_qa.types import Chunk, IndexReport

log = logging.getLogger(__name__)


class Replica(KnowledgeBase):
    """A KnowledgeBase served from Chroma alone; same search, no writes."""

    replica = True  # the API serves no vault pages from a replica

    def __init__(self, settings: Settings) -> None:  # no KnowledgeBase.__init__: no Store
        if not settings.chroma_url or not slug(settings.workspace):
            raise ConfigError(
                "A read-only replica needs a Chroma server and a workspace name: "
                "`kb-qa serve --chroma-url URL --workspace NAME` (KBQA_CHROMA_URL, "
                "KBQA_WORKSPACE)."
            )
        self.settings = settings
        self.workspace = slug(settings.workspace)
        self.record = WorkspaceRecord()
        self.error = ""  # why the last look at the workspace failed ("" when it worked)
        self._asking_since = 0.0  # when the record was asked for, while the server has not answered
        self.loaded_seconds = 0.0  # how long the last load took
        self._collection: Collection | None = None
        self._titles: dict[str, str] = {}
        self._embedder: embeddings.Embedder | None = None
        self._loaded = Loaded()
        self._own_generation = ""
        self._translations: dict[tuple[str, str], set[str]] = {}
        self._lock = threading.Lock()  # one load at a time
        self._stop = threading.Event()
        self._poller: threading.Thread | None = None
        self._warned_build = ""  # the writer's model build last warned of (said once)

    @property
    def store(self) -> Collection:  # type: ignore[override]
        """The workspace's collection (connected on first use; the server may start later)."""
        if self._collection is None:
            self._collection = Collection(
                self.settings,
                collection_name(self.workspace),
                self.settings.index_path,
                create=False,
            )
        return self._collection

    # -- loading ----------------------------------------------------------------------------

    def start(self) -> Replica:
        """Load the workspace now if Chroma answers, then keep polling for new generations."""
        self._check()
        self._poller = threading.Thread(target=self._poll, name="kb-qa-replica", daemon=True)
        self._poller.start()
        return self

    def reload(self) -> bool:
        """Load the workspace if its generation changed; True when a new one was loaded."""
        with self._lock:
            record = self._record()
            if record.writing:
                return self._wait_for_writer()
            if not record.generation:
                if self._loaded.keyword is not None:
                    return False  # emptied for a rebuild: serve what was loaded meanwhile
                raise IndexStateError(
                    f"Workspace {self.workspace!r} on {self.settings.chroma_url} has no "
                    "generation yet: its writer has not finished a first `kb-qa index`, is "
                    "rebuilding it, or is older than this replica. This replica loads it "
                    "when the writer publishes it."
                )
            if record.generation == self._loaded.generation and self._loaded.keyword:
                return False
            started = time.perf_counter()
            chunks, titles, vectors = self.store.chunks()
            if self._record() != record:  # the writer began a run while the records were read
                return self._wait_for_writer()
            view = load_view(
                record.generation, chunks, self._loaded, self.settings, vectors=vectors
            )
            model_changed = record.embed_model != self.record.embed_model
            # One assignment each: a search holds the view it took, never a half-built one.
            self._loaded, self._titles, self.record = view, titles, record
            if model_changed:  # after the record: a search meanwhile loads the new model
                self._embedder = None
            self.loaded_seconds = time.perf_counter() - started
            if record.embed_build != self._warned_build:  # once, not at each generation
                self._warned_build = _warn_of_another_build(record)
        log.info(
            "loaded workspace %s generation %s: %d pages, %d chunks in %.2f s",
            self.workspace,
            record.generation,
            len(titles),
            len(chunks),
            self.loaded_seconds,
        )
        return True

    def _record(self) -> WorkspaceRecord:
        """The workspace record as Chroma holds it now (timed for ``problem``)."""
        self._asking_since = time.monotonic()
        try:
            return self.store.record()
        finally:
            self._asking_since = 0.0

    def _wait_for_writer(self) -> bool:
        """The writer is changing the records: keep serving what was loaded (False), or say
        so when nothing is."""
        if self._loaded.keyword is not None:
            return False
        raise IndexStateError(
            f"Workspace {self.workspace!r} on {self.settings.chroma_url} is being written by "
            "its writer; this replica loads it when that run ends (a run that stopped "
            "half-way is finished by the writer's next `kb-qa index`)."
        )

    def _check(self) -> None:
        try:
            self.reload()
        except KbQaError as exc:
            if str(exc) != self.error:
                log.warning("%s (serving what is loaded until this works again)", exc)
            self.error = str(exc)
            return
        except Exception as exc:  # the poller must survive anything
            log.exception("loading workspace %s failed", self.workspace)
            self.error = f"loading the workspace failed: {exc}"
            return
        if self.error:
            log.info("workspace %s is reachable again", self.workspace)
        self.error = ""

    def _poll(self) -> None:
        while not self._stop.wait(self.settings.replica_poll):
            self._check()

    def _view(self) -> Loaded:
        view = self._loaded
        if view.keyword is None:
            self.reload()  # the first search before the poller got there
            view = self._loaded
        return view

    # -- what KnowledgeBase answers from its manifest -----------------------------------------

    @property
    def embedder(self) -> embeddings.Embedder:
        """The embedding model the workspace was built with (its record says which)."""
        if self._embedder is None:
            name = self.record.embed_model or embeddings.choose_model(
                self.settings.embed_model, 0.0
            )
            self._embedder = embeddings.load_embedder(name, self.settings.embed_api_base)
        return self._embedder

    def site_languages(self) -> str:
        """The translated site's languages, as the writer's record says."""
        return self.record.languages

    def index(self, *args: Any, **kwargs: Any) -> IndexReport:
        """Refused: a replica never writes."""
        raise IndexStateError(
            f"This is a read-only replica of workspace {self.workspace!r}; it never writes. "
            "Index in the writer (`kb-qa index VAULT` or `kb-qa watch VAULT` with the same "
            "--chroma-url and --workspace)."
        )

    def pages(self) -> list[dict[str, str]]:
        """Pages of the loaded generation: path, title and URL."""
        urls = {c.path: c.url for c in self._loaded.chunks}
        return [
            {"path": path, "title": self._titles.get(path, ""), "url": urls[path]}
            for path in sorted(urls)
        ]

    def problem(self) -> str:
        """Why this replica cannot serve fully right now ("" when it can)."""
        asking = self._asking_since
        if asking and time.monotonic() - asking > CHROMA_CONNECT_SECONDS:
            # A hung server fails the poll only after the read timeout (30 s); the writer
            # says so after 5 s, and so does a replica.
            return (
                f"The Chroma server at {self.settings.chroma_url} did not answer within "
                f"{CHROMA_CONNECT_SECONDS:.0f} s (serving what is loaded). Check that it is "
                "running and not overloaded."
            )
        if self._loaded.keyword is None:
            return self.error or f"workspace {self.workspace!r} is not loaded yet"
        return self.error

    def stats(self) -> dict[str, Any]:
        """Status for health checks: the loaded generation and its size."""
        generation = self._loaded.generation
        return {
            "vault": None,
            "files": len({c.path for c in self._loaded.chunks}),
            "chunks": len(self._loaded.chunks),
            "embed_model": self.record.embed_model,
            "last_indexed": int(generation) / 1e9 if generation.isdigit() else None,
            "chroma": self.settings.chroma_url,
            "workspace": self.workspace,
            "generation": generation,
            "loaded": self._loaded.keyword is not None,
            "load_seconds": round(self.loaded_seconds, 3),
        }

    def url(self, chunk: Chunk) -> str:
        """Citation links as the writer would make them (its site_url and link style)."""
        return links.link(
            chunk,
            self.settings.link_style or self.record.link_style or "file",
            vault=Path(self.record.vault or "."),
            site_url=self.record.site_url,
        )

    def close(self) -> None:
        """Stop polling."""
        self._stop.set()
        if self._poller is not None and self._poller.is_alive():
            self._poller.join(timeout=self.settings.replica_poll + 5)


def _warn_of_another_build(record: WorkspaceRecord) -> str:
    """A writer on another kb-qa version may have embedded the records with another build
    of the model than this replica embeds questions with: ranking then suffers unseen (on a
    CPU without VNNI the 8-bit and 7-bit MiniLM builds differ by R@5 0.579 against 0.628).
    Returns the writer's build when it warned of it, else ""."""
    own = embeddings.MODEL_BUILDS.get(record.embed_model, "")
    if not record.embed_build or record.embed_build == own:
        return ""
    log.warning(
        "the writer embedded this workspace with build %s of %s, this replica embeds "
        "questions with build %s: run the same kb-qa version on both (or re-index with "
        "this one), or search ranks worse",
        record.embed_build,
        record.embed_model,
        own or "original",
    )
    return record.embed_build
