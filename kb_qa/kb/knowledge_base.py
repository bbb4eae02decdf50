"""KnowledgeBase: the one object that joins the stages (vault -> chunks -> index -> search).

kb = KnowledgeBase("path/to/vault")
report = kb.index()
hits = kb.search("how do I enable instant loading?", k=10)
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import hashlib
import json
import logging
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from kb_qa.errors import EmbeddingError, IndexStateError
from kb_qa.index import embeddings, retrieval
from kb_qa.index.keyword import KeywordIndex
from kb_qa.index.store import EMBED_TEXT_VERSION, FileRow, Store, embed_key
from kb_qa.ingest import anchors, chunking, linkgraph, links, render, vault
from kb_qa.ingest.deadline import ParseTimeout, deadline
from kb_qa.ingest.render import RenderedPage
from kb_qa.ingest.site import Site, load_site
from kb_qa.settings import Settings
from kb_qa.text import cjk_share, keyword_tokens, question_title
from kb_qa.types import Chunk, Document, Hit, IndexReport, Outline

log = logging.getLogger(__name__)

CHUNKER_VERSION = "2"
WRITE_GROUP = 400  # chunks written to Chroma + manifest per transaction

Progress = Callable[[int, int], None]


@dataclass
class _Loaded:
    """In-memory view of the manifest used by search; rebuilt when the index changes."""

    generation: str = ""
    chunks: list[Chunk] = field(default_factory=list)
    by_id: dict[str, int] = field(default_factory=dict)
    keyword: KeywordIndex | None = None
    history: set[str] = field(default_factory=set)  # changelog-like pages (retrieval.history_pages)
    # Keyword tokens only history pages hold -> the ids of their chunks that hold them
    history_only: dict[str, set[str]] = field(default_factory=dict)
    vectors: np.ndarray | None = None  # every chunk's embedding, in order (None: not at hand)
    linked: np.ndarray = field(default_factory=lambda: np.zeros(0))  # links to each chunk's section
    link_text: KeywordIndex | None = None  # the lines around those links, one text per chunk
    written_links: dict[str, list[linkgraph.Link]] = field(default_factory=dict)  # by hash
    refused: frozenset[str] = frozenset()  # indexed paths the vault boundary no longer allows


def load_view(
    generation: str,
    chunks: list[Chunk],
    previous: _Loaded,
    settings: Settings,
    refused: frozenset[str] = frozenset(),
    vectors: dict[str, np.ndarray] | None = None,
) -> _Loaded:
    """The in-memory view search runs on (a replica builds the same from Chroma's records);
    keyword tokens and links of chunks unchanged since ``previous`` are reused. ``vectors``
    (by chunk id) lets search score keyword matches the vector index did not return."""
    inbound = linkgraph.inbound(chunks, previous.written_links)
    keyword = KeywordIndex(chunks, previous.keyword.tokens if previous.keyword else None)
    history = retrieval.history_pages(chunks, settings.history_pages)
    elsewhere: set[str] = set()
    for c in chunks:
        if c.path not in history:
            elsewhere.update(keyword.tokens[c.hash])
    history_only: dict[str, set[str]] = {}
    for c in chunks:
        if c.path in history:
            for t in set(keyword.tokens[c.hash]) - elsewhere:
                history_only.setdefault(t, set()).add(c.id)
    return _Loaded(
        generation=generation,
        chunks=chunks,
        by_id={c.id: i for i, c in enumerate(chunks)},
        keyword=keyword,
        history=history,
        history_only=history_only,
        vectors=_matrix(chunks, vectors or {}),
        linked=inbound.counts,
        link_text=KeywordIndex.of_texts(
            inbound.context, previous.link_text.tokens if previous.link_text else None
        ),
        written_links=inbound.written,
        refused=refused,
    )


def _nearest(
    chunks: Sequence[Chunk], similarity: np.ndarray, n: int, allowed: np.ndarray | None
) -> list[tuple[str, float]]:
    """(chunk id, cosine distance) of the ``n`` nearest chunks, from every chunk's cosine
    to the question (the view's vectors times its vector).

    Exact where Chroma's HNSW is approximate, and it needs neither Chroma's files nor a
    round trip to a server: a search never waits on, or fails with, an index being
    written (the view is swapped whole when a write commits). 5,000 chunks take ~1 ms.
    """
    scores = similarity
    if allowed is not None:
        scores = np.where(allowed, scores, -np.inf)
        n = min(n, int(allowed.sum()))
    n = min(n, len(scores))
    if n <= 0:
        return []
    top = np.argpartition(-scores, n - 1)[:n]
    top = top[np.argsort(-scores[top], kind="stable")]
    return [(chunks[i].id, 1.0 - float(scores[i])) for i in top]


def _matrix(chunks: list[Chunk], vectors: dict[str, np.ndarray]) -> np.ndarray | None:
    """The chunks' vectors as one matrix, row i for chunk i (None unless all are known)."""
    if not chunks or any(c.id not in vectors for c in chunks):
        return None
    return np.stack([vectors[c.id] for c in chunks], dtype=np.float32)


# The view an answer in progress searches (KnowledgeBase.pinned), per thread/task.
_PINNED: contextvars.ContextVar[tuple[int, _Loaded] | None] = contextvars.ContextVar(
    "kb_qa_pinned_view", default=None
)


@dataclass
class _Includes:
    """The files each page pulls in, as the manifest remembers them with their time and
    size: ``--8<--`` includes, and ``render.PYTHON_FILES`` (the vault's Python code) for a
    page with sections generated from code. A page whose files changed renders again."""

    root: Path
    stored: dict[str, dict[str, list[int]]]

    @classmethod
    def load(cls, store: Store, root: Path) -> _Includes:
        return cls(root, json.loads(store.meta("includes") or "{}"))

    @functools.cached_property
    def code(self) -> tuple[int, int]:
        """The vault's Python files, stamped once per run (before any page is rendered)."""
        return render.python_stamp(self.root)

    def _stamp(self, dep: str) -> list[int]:
        return list(self.code if dep == render.PYTHON_FILES else render.stamp(self.root / dep))

    def stale(self) -> set[str]:
        """Pages one of whose files changed since they were indexed."""
        return {
            page
            for page, deps in self.stored.items()
            if any(self._stamp(dep) != stamp for dep, stamp in deps.items())
        }

    def update(
        self, site: Site, docs: Sequence[Document], removed: Sequence[str], rendering: bool
    ) -> bool:
        """Record the files of each re-read page (and forget removed ones); whether anything
        changed, so that a run that read nothing writes nothing."""
        before = self.dumps()
        for path in [*removed, *(d.path for d in docs)]:
            self.stored.pop(path, None)
        for doc in docs:
            deps = render.includes(doc.source, site)
            if rendering and render.generates_from_code(doc.source):
                deps.append(render.PYTHON_FILES)
            if deps:
                self.stored[doc.path] = {d: self._stamp(d) for d in deps}
        return self.dumps() != before

    def dumps(self) -> str:
        return json.dumps(self.stored, sort_keys=True)


class KnowledgeBase:
    """A vault, its index, and search over it."""

    def __init__(
        self,
        vault_path: str | Path | None = None,
        settings: Settings | None = None,
        **overrides: Any,
    ) -> None:
        if settings is None:
            settings = Settings.from_env(vault_path, **overrides)
        elif vault_path is not None or overrides:
            settings = settings.replace(vault=vault_path, **overrides)
        self.settings = settings
        self.store = Store(settings)
        self._embedder: embeddings.Embedder | None = None
        self._loaded = _Loaded()
        self._own_generation = ""
        self._lock = threading.Lock()

    # -- indexing ---------------------------------------------------------------------------

    def index(
        self,
        progress: Progress | None = None,
        rendered: Mapping[str, RenderedPage] | None = None,
    ) -> IndexReport:
        """Bring the index up to date with the vault; only new or changed text is embedded.

        The changed pages of an MkDocs site are rendered with the site's hooks and plugins
        first (``render.py``). ``rendered`` maps vault paths to pages a real MkDocs build
        rendered (the plugin's ``index_on_build``): they are used as they are, and a page in
        it is re-chunked when its ids or URL differ from what the index holds.
        """
        started = time.perf_counter()
        report = IndexReport()
        if self.store.heal_folder():
            report.repaired = "the index folder was deleted: created it again, indexing everything"
        with self.store.writer_lock():
            site = load_site(
                self.settings.vault, self.settings.generator, render=self.settings.render
            )
            prefix = f"{site.config_name}: "
            report.warnings += [(site.config_name, w.removeprefix(prefix)) for w in site.warnings]
            files, skipped = vault.scan(site, self.settings)
            report.skipped += skipped
            moved = self.store.settle_workspace(explicit=bool(self.settings.workspace))
            self._check_fingerprint(site, report)
            if moved and not report.rebuilt:
                report.rebuilt = f"{moved}: re-chunking every file once (embeddings are reused)"
                log.warning("%s", report.rebuilt)
            # Only a run interrupted while writing leaves Chroma and the manifest apart.
            interrupted = self.store.meta("writing") == "1"
            untouched = not interrupted and self.store.chroma_untouched()
            problem = "" if interrupted or untouched else self.store.vector_problem()
            if problem:
                report.repaired = (
                    f"{problem}: adding the missing vectors again (from the embedding cache "
                    "where it has them)"
                )
                log.warning("%s", report.repaired)
            missing = self.store.reconcile() if interrupted or problem else set()
            known = {p: r for p, r in self.store.files().items() if p not in missing}
            current = {f.path for f in files}
            removed = [p for p in known if p not in current]

            includes = _Includes.load(self.store, site.root)
            docs, touched = self._read_changed(site, files, known, report, rendered or {}, includes)
            phase = _Phases(report.phases, started)
            phase.done("reading")
            pages = dict(rendered) if rendered is not None else self._render(site, docs, report)
            docs = [replace(d, url=pages[d.path].url) if d.path in pages else d for d in docs]
            if pages:
                phase.done("rendering")
            outlines: dict[str, Outline] = {}
            chunks_by_doc = self._chunk(site, docs, report, pages, outlines)
            all_new = [c for cs in chunks_by_doc.values() for c in cs]
            phase.done("chunking")
            self._ensure_model(docs)
            report.embedded, report.reused = self._embed(all_new, progress)
            phase.done("embedding")

            self.store.set_meta(writing="1")
            rendering = render.config_file(site, self.settings) is not None
            if includes.update(site, docs, removed, rendering):
                self.store.set_meta(includes=includes.dumps())
            report.deleted = self._write(docs, chunks_by_doc, removed, outlines)
            self.store.set_meta(writing="0")
            phase.done("writing")
            if touched:
                self.store.touch(touched)
            report.changed_files = len(docs)
            report.files = len(self.store.files())
            report.chunks = self.store.db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
            link_style = "site" if site.is_mkdocs else "file"
            self.store.set_meta(
                last_indexed=str(time.time()), site_url=site.site_url, link_style=link_style
            )
            wrote = bool(docs or removed or report.rebuilt or report.repaired)
            self.store.publish(site.site_url, link_style, untouched=untouched and not wrote)
            self.store.set_meta(chroma_stamp=self.store.chroma_stamp())
        report.seconds = time.perf_counter() - started
        return report

    def _render(
        self, site: Site, docs: Sequence[Document], report: IndexReport
    ) -> dict[str, RenderedPage]:
        """The changed pages of an MkDocs site as it renders them ({} for other vaults)."""
        config_file = render.config_file(site, self.settings)
        if config_file is None or not docs:
            return {}
        wanted = {d.path for d in docs}
        run = render.render_pages(
            site.root,
            config_file,
            wanted.__contains__,
            skip_plugins=self.settings.skip_plugins,
            inside=vault.Boundary.of(self.settings).refuse,
            extensions=site.extensions,
            parse_timeout=self.settings.parse_timeout,
            site_url=site.site_url,
        )
        report.warnings += run.warnings
        return run.pages

    def _check_fingerprint(self, site: Site, report: IndexReport) -> None:
        """Rebuild when chunking or addressing rules changed; re-embed only if the model did."""
        fingerprint = _fingerprint(site, self.settings)
        stored_model = self.store.meta("embed_model")
        wanted = self.settings.embed_model
        build = embeddings.MODEL_BUILDS.get(stored_model, "")
        if stored_model and wanted != "auto" and wanted != stored_model:
            changed = f"embedding model changed from {stored_model} to {wanted}"
        elif stored_model and self.store.meta("embed_build") != build:
            changed = f"the {stored_model} model was updated (build {build or 'original'})"
        else:
            changed = ""
        if changed:
            report.rebuilt = f"{changed}: rebuilding the index and re-embedding everything"
            self.store.reset(keep_vectors=False)
            self.store.set_meta(embed_model="", fingerprint=fingerprint)
            self._embedder = None
        elif self.store.meta("fingerprint") not in ("", fingerprint):
            report.rebuilt = (
                "chunking settings or the site config's heading/URL rules changed: re-chunking "
                "every file (cached embeddings are reused)"
            )
            self.store.reset(keep_vectors=True)
        self.store.set_meta(fingerprint=fingerprint)
        if report.rebuilt:
            log.warning("%s", report.rebuilt)

    def _read_changed(
        self,
        site: Site,
        files: Sequence[vault.FileInfo],
        known: dict[str, FileRow],
        report: IndexReport,
        rendered: Mapping[str, RenderedPage],
        includes: _Includes,
    ) -> tuple[list[Document], list[FileRow]]:
        docs: list[Document] = []
        touched: list[FileRow] = []
        stale_anchors = self._stale_anchor_paths(rendered) | includes.stale()
        boundary = vault.Boundary.of(self.settings)
        for info in files:
            row = known.get(info.path)
            unchanged = row and row.size == info.size and row.mtime_ns == info.mtime_ns
            if unchanged and info.path not in stale_anchors:
                continue
            result = vault.read_document(site, info, boundary)
            report.warnings += [(info.path, w) for w in result.warnings]
            if result.document is None:
                # Keep what was indexed before: a file that cannot be read now loses nothing.
                report.skipped.append((info.path, result.skipped))
                continue
            doc = result.document
            failed = self.store.failure(doc.path, doc.file_hash)
            if failed:
                # Parsing it again would fail again (and can take long): report, move on.
                report.skipped.append((doc.path, f"{failed} (unchanged since; not parsed again)"))
                continue
            if row and row.hash == doc.file_hash and info.path not in stale_anchors:
                touched.append(
                    FileRow(doc.path, doc.size, doc.mtime_ns, row.hash, row.title, row.url)
                )
                continue
            docs.append(doc)
        return docs, touched

    def _stale_anchor_paths(self, rendered: Mapping[str, RenderedPage]) -> set[str]:
        """Paths whose indexed anchors or URL differ from the ones a real build rendered."""
        if not rendered:
            return set()
        indexed: dict[str, set[str]] = {}
        urls: dict[str, str] = {}
        for c in self.store.chunks():
            indexed.setdefault(c.path, set()).add(c.anchor)
            urls[c.path] = c.url
        return {
            path
            for path, page in rendered.items()
            if urls.get(path) != page.url
            or {h.anchor for h in anchors.html_headings(page.html)} - indexed.get(path, set())
        }

    def _chunk(
        self,
        site: Site,
        docs: list[Document],
        report: IndexReport,
        pages: Mapping[str, RenderedPage],
        outlines: dict[str, Outline],
    ) -> dict[str, list[Chunk]]:
        md = site.markdown()
        result: dict[str, list[Chunk]] = {}
        failed: dict[str, tuple[str, str]] = {}
        size = self.settings.chunk_chars
        limit = self.settings.parse_timeout
        for doc in list(docs):
            outlines[doc.path] = outline = self.store.outline(doc.path)
            page = pages.get(doc.path)
            notes: list[str] = []
            limits: dict[str, Any] = {"parse_timeout": limit, "warnings": notes}
            try:
                # The whole file (its blocks, its rendering, matching ids to headings), with
                # room for the fallback to the headings alone (chunking.chunk_document).
                with deadline(3 * limit, "chunking the file"):
                    if page is not None:
                        chunks = render.chunk_rendered(doc, page, md, size, outline, **limits)
                    else:
                        chunks = chunking.chunk_document(doc, md, size, None, outline, **limits)
                result[doc.path] = chunks
                report.warnings += [(doc.path, note) for note in notes]
            except ParseTimeout as exc:
                log.warning("%s: %s", doc.path, exc)
                reason = (
                    f"could not be parsed in time: {exc}. Its shape makes the Markdown parser "
                    "slow (thousands of unclosed '[' or '<', say): fix or split the file, or "
                    "raise parse_timeout"
                )
                report.skipped.append((doc.path, reason))
                failed[doc.path] = (doc.file_hash, reason)
                docs.remove(doc)
            except Exception as exc:  # a parser bug must not stop the run
                log.debug("failed to parse %s", doc.path, exc_info=True)
                reason = f"could not be parsed as Markdown ({type(exc).__name__}: {exc})"
                report.skipped.append((doc.path, reason))
                failed[doc.path] = (doc.file_hash, reason)
                docs.remove(doc)
        self.store.set_failures(failed, cleared=result)
        return result

    def _ensure_model(self, docs: Sequence[Document]) -> None:
        if self.store.meta("embed_model"):
            return
        sample = "".join(d.source for d in docs)
        name = embeddings.choose_model(self.settings.embed_model, cjk_share(sample))
        self.store.set_meta(embed_model=name, embed_build=embeddings.MODEL_BUILDS.get(name, ""))
        self._embedder = None

    @property
    def embedder(self) -> embeddings.Embedder:
        """The embedding model this index was built with."""
        if self._embedder is None:
            name = self.store.meta("embed_model") or embeddings.choose_model(
                self.settings.embed_model, 0.0
            )
            self._embedder = embeddings.load_embedder(name, self.settings.embed_api_base)
        return self._embedder

    def _embed(self, chunks: Sequence[Chunk], progress: Progress | None) -> tuple[int, int]:
        """Embed chunks whose text is not cached yet, shortest first; returns (embedded, reused)."""
        texts: dict[str, str] = {}
        for c in chunks:
            texts.setdefault(embed_key(c), c.index_text)
        cached = self.store.cached_vectors(texts)
        todo = sorted((k for k in texts if k not in cached), key=lambda k: len(texts[k]))
        batch = max(1, self.settings.embed_batch)
        done = 0
        if progress:
            progress(0, len(todo))
        for i in range(0, len(todo), batch):
            keys = todo[i : i + batch]
            try:
                vectors = self.embedder.embed_passages([texts[k] for k in keys])
            except EmbeddingError:
                raise
            except Exception as exc:
                raise EmbeddingError(f"Embedding failed: {exc}") from exc
            self.store.cache_vectors(dict(zip(keys, vectors)))
            done += len(keys)
            if progress:
                progress(done, len(todo))
        return len(todo), len(chunks) - len(todo)

    def _write(
        self,
        docs: Sequence[Document],
        chunks_by_doc: dict[str, list[Chunk]],
        removed: Sequence[str],
        outlines: Mapping[str, Outline],
    ) -> int:
        deleted = 0
        group_rows: list[FileRow] = []
        group_chunks: list[Chunk] = []
        pending_removed = list(removed)

        def flush() -> None:
            nonlocal deleted, group_rows, group_chunks, pending_removed
            vectors = self.store.cached_vectors(embed_key(c) for c in group_chunks)
            group_outlines = [outlines[r.path] for r in group_rows if r.path in outlines]
            deleted += self.store.write(
                group_rows, group_chunks, vectors, pending_removed, group_outlines
            )
            group_rows, group_chunks, pending_removed = [], [], []
            self._bump_generation()

        for doc in docs:
            chunks = chunks_by_doc[doc.path]
            title = chunks[0].heading_path[0] if chunks else doc.title
            group_rows.append(
                FileRow(doc.path, doc.size, doc.mtime_ns, doc.file_hash, title, doc.url)
            )
            group_chunks.extend(chunks)
            if len(group_chunks) >= WRITE_GROUP:
                flush()
        if group_rows or pending_removed:
            flush()
        return deleted

    def _bump_generation(self) -> None:
        self._own_generation = f"{time.time_ns()}"
        self.store.set_meta(generation=self._own_generation)

    # -- searching --------------------------------------------------------------------------

    def _view(self) -> _Loaded:
        generation = self.store.meta("generation")
        with self._lock:
            if self._loaded.keyword is None or generation != self._loaded.generation:
                if self._loaded.keyword is not None and generation != self._own_generation:
                    # Another process wrote the index; an embedded Chroma client caches
                    # its segments, so only a fresh client sees the new vectors.
                    self.store.reopen()
                refused = self._refused(self.store.files())
                chunks = [c for c in self.store.chunks() if c.path not in refused]
                self._loaded = load_view(
                    generation,
                    chunks,
                    self._loaded,
                    self.settings,
                    refused,
                    self.stored_vectors(chunks),
                )
            return self._loaded

    def stored_vectors(self, chunks: Sequence[Chunk]) -> dict[str, np.ndarray]:
        """The manifest's cached embedding of each chunk that has one, by chunk id."""
        cached = self.store.cached_vectors(embed_key(c) for c in chunks)
        return {c.id: cached[embed_key(c)] for c in chunks if embed_key(c) in cached}

    @contextlib.contextmanager
    def pinned(self) -> Iterator[None]:
        """Searches inside see the one index generation loaded when it began: an answer's
        several queries (follow-ups, rewrites) and its citations come from one snapshot,
        even when the index reloads meanwhile (a replica swapping in a new generation)."""
        token = _PINNED.set((id(self), self._view()))
        try:
            yield
        finally:
            _PINNED.reset(token)

    def _search_view(self) -> _Loaded:
        pinned = _PINNED.get()
        return pinned[1] if pinned is not None and pinned[0] == id(self) else self._view()

    def _query_vector(self, question: str) -> np.ndarray:
        """The question's embedding, averaged with its title's when it is longer than one.

        Real questions open with an issue-style title and go on with symptoms, logs and
        config; the title alone says what is asked. On real questions R@1 0.310 -> 0.402
        and MRR 0.421 -> 0.478 (bench/quality.py); a one-line question is unchanged.
        """
        full = self.embedder.embed_query(question)
        title = question_title(question)
        if title == question.strip():
            return full
        both = full + self.embedder.embed_query(title)
        return both / max(float(np.linalg.norm(both)), 1e-9)

    def _refused(self, paths: Iterable[str]) -> frozenset[str]:
        """Indexed paths the vault boundary no longer allows (checked once per reload).

        An index written by an older version may hold a file reached through a symlink
        that leads out of the vault: it is never returned, whatever the manifest says. A
        file that is missing is kept until the next index run (a vault on a network drive
        that blinks keeps serving).
        """
        boundary = vault.Boundary.of(self.settings)
        return frozenset(
            p for p in paths if boundary.refuse(self.settings.vault / p) not in ("", vault.MISSING)
        )

    def search(
        self,
        question: str,
        k: int | None = None,
        *,
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
        sections: bool = True,
        candidates: int | None = None,
        reader: bool = True,
        fusion: str | None = None,
    ) -> list[Hit]:
        """Hybrid search; ``sections`` keeps only the best piece of each heading section.

        ``reader`` ranks for what a person sees first (search results, no-key answers): the
        question's title weighs in, sections the docs link to gain (``link_weight``,
        ``link_text_weight``) and changelog-like pages are scaled by ``history_weight``.
        An answering model's prompt adds the plain ranking (``reader=False``), which keeps
        more gold sections within the token budget.
        """
        k = k if k is not None else self.settings.top_k
        view = self._search_view()
        if not view.chunks or not question.strip():
            return []
        n = max(candidates or self.settings.candidates, k * 2)
        allowed_mask: np.ndarray | None = None
        allowed_paths: list[str] | None = None
        if include or exclude:
            paths = sorted({c.path for c in view.chunks})
            keep = {
                p
                for p in paths
                if (not include or retrieval.path_matches(p, include))
                and not retrieval.path_matches(p, exclude)
            }
            allowed_paths = sorted(keep)
            allowed_mask = np.array([c.path in keep for c in view.chunks])
        vector = self._query_vector(question) if reader else self.embedder.embed_query(question)
        # Every chunk's cosine, once: the nearest list and the keyword candidates' own.
        similarity = None if view.vectors is None else view.vectors @ np.asarray(vector, np.float32)
        if similarity is not None:
            nearest = _nearest(view.chunks, similarity, n, allowed_mask)
        else:
            nearest = self.store.nearest(vector, n, allowed_paths)
        keyword = view.keyword.top_scored(question, n, allowed_mask) if view.keyword else []
        method = fusion or self.settings.fusion
        cosines = None
        if similarity is not None and keyword and method == "zscore":  # rrf ranks only
            returned = {view.by_id.get(i) for i, _ in nearest}
            rest = [i for i, _ in keyword if i not in returned]
            if rest:
                cosines = dict(zip(rest, similarity[rest].tolist()))
        hits = retrieval.fuse(
            view.chunks,
            [(i, 1.0 - d) for i, d in nearest],
            keyword,
            by_id=view.by_id,
            rrf_k=self.settings.rrf_k,
            vector_weight=self.settings.vector_weight,
            keyword_weight=self.settings.keyword_weight,
            method=method,
            links=self._links(view, question) if reader else None,
            cosines=cosines,
        )
        hits = retrieval.page_boost(hits, self.settings.page_weight, self.settings.rrf_k)
        if reader:
            hits = retrieval.demote(
                hits, view.history, self.settings.history_weight, self._history_only(view, question)
            )
        if sections:
            hits = retrieval.by_section(hits)
        return hits[:k]

    def _history_only(self, view: _Loaded, question: str) -> set[str]:
        """Ids of changelog chunks holding a word of the question that no other page has:
        the history pages are the only source of it (a fix's ticket or an old flag), so
        they are not demoted."""
        spared: set[str] = set()
        for t in keyword_tokens(question):
            spared |= view.history_only.get(t, set())
        return spared

    def _links(self, view: _Loaded, question: str) -> retrieval.Links | None:
        weight, text_weight = self.settings.link_weight, self.settings.link_text_weight
        if not (weight or text_weight) or view.link_text is None:
            return None
        text = view.link_text.scores(question) if text_weight else np.zeros(len(view.chunks))
        return retrieval.Links(view.linked, text, weight, text_weight)

    # -- status -----------------------------------------------------------------------------

    def pages(self) -> list[dict[str, str]]:
        """Indexed pages (only those the vault boundary allows): path, title and URL."""
        refused = self._view().refused
        return [
            {"path": r.path, "title": r.title, "url": r.url}
            for r in sorted(self.store.files().values(), key=lambda r: r.path)
            if r.path not in refused
        ]

    def problem(self) -> str:
        """What keeps search from working fully right now ("" when nothing does)."""
        if not self.store.intact():
            return (
                f"the index folder {self.store.folder} was deleted; run `kb-qa index` "
                "(`kb-qa serve --watch` makes it again by itself)"
            )
        try:
            return self.store.vector_problem()
        except IndexStateError as exc:
            return str(exc)

    def stats(self) -> dict[str, Any]:
        """Index status for health checks."""
        last = self.store.meta("last_indexed")
        return {
            "vault": str(self.settings.vault),
            "files": len(self.store.files()),
            "chunks": self.store.db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0],
            "embed_model": self.store.meta("embed_model"),
            "last_indexed": float(last) if last else None,
            "chroma": self.settings.chroma_url or str(self.settings.index_path / "chroma"),
            "workspace": self.store.workspace,
            "generation": self.store.meta("generation"),
            "loaded": self._loaded.keyword is not None,
        }

    def url(self, chunk: Chunk) -> str:
        """Where a citation of ``chunk`` points, by the ``link_style`` setting."""
        return links.link(
            chunk,
            self.settings.link_style or self.store.meta("link_style") or "file",
            vault=self.settings.vault,
            site_url=self.store.meta("site_url"),
        )

    def close(self) -> None:
        """Release the manifest connection."""
        self.store.close()

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Phases:
    """Records how long each stage of an index run took, into ``IndexReport.phases``."""

    def __init__(self, into: dict[str, float], started: float) -> None:
        self.into, self.last = into, started

    def done(self, name: str) -> None:
        now = time.perf_counter()
        self.into[name] = round(now - self.last, 3)
        self.last = now


def _fingerprint(site: Site, settings: Settings) -> str:
    """Everything besides file contents that changes chunks, anchors or URLs."""
    data = {
        "chunker": CHUNKER_VERSION,
        "embed_text": EMBED_TEXT_VERSION,
        "chunk_chars": settings.chunk_chars,
        "docs_dir": str(site.docs_dir),
        "use_directory_urls": site.use_directory_urls,
        "is_mkdocs": site.is_mkdocs,
        "exclude": site.exclude_patterns,
        "extensions": site.extensions,
        # Function objects in extension configs print with their address: drop it.
        "configs": re.sub(r" at 0x[0-9a-f]+", "", repr(sorted(site.extension_configs.items()))),
    }
    if site.generator == "zensical":  # only then, so that existing indexes stay current
        data["generator"] = site.generator
    rendering = render.inputs_key(site, settings)
    if rendering:  # a hook edited, a plugin installed: every page renders differently
        data["render"] = rendering
    return hashlib.sha1(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()
