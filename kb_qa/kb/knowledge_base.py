"""KnowledgeBase: the one object that joins the stages (vault -> chunks -> index -> search).

kb = KnowledgeBase("path/to/vault")
report = kb.index()
hits = kb.search("how do I enable instant loading?", k=10)
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from kb_qa.errors import IndexStateError
from kb_qa.index import embeddings, retrieval
from kb_qa.index.manifest import embed_key
from kb_qa.index.store import Store
from kb_qa.ingest import i18n_layout, links, vault
from kb_qa.ingest.render import RenderedPage
from kb_qa.kb import saved_view
from kb_qa.kb.arguments import checked_opening, checked_search, vault_relative
from kb_qa.kb.health import IndexHealth
from kb_qa.kb.index_run import IndexRun, Progress, Steps
from kb_qa.kb.view import PINNED, Loaded, load_view, nearest_chunks, refused_paths
from kb_qa.settings import Settings
from kb_qa.spoken import asked_in, foreign, topic_words
from kb_qa.text import keyword_tokens, question_title, unread_share
from kb_qa.types import Chunk, Hit, IndexReport

log = logging.getLogger(__name__)
# Models that read English (Latin script) only, and the share of the vector side kept for a
# question mostly in another script (CJK, Hebrew, Arabic)
LATIN_ONLY = frozenset({"minilm"})
UNREAD_VECTOR_SHARE = 0.0
# A model's ranking scales a page the reader's language has too by this (below its twin).
TRANSLATED_WEIGHT = 0.5


class KnowledgeBase(IndexHealth, IndexRun):
    """A vault, its index, and search over it."""

    def __init__(
        self,
        vault_path: str | Path | None = None,
        settings: Settings | None = None,
        **overrides: Any,
    ) -> None:
        checked_opening(vault_path, settings)
        if settings is None:
            settings = Settings.from_env(vault_path, **overrides)
        elif vault_path is not None or overrides:
            settings = settings.replace(vault=vault_path, **overrides)
        self.settings = settings
        self.store = Store(settings)
        self._embedder: embeddings.Embedder | None = None
        self._loaded = Loaded()
        self._own_generation = ""
        self._translations: dict[tuple[str, str], set[str]] = {}  # KnowledgeBase._translated
        self._lock = threading.Lock()  # guards _loaded, held only to read or swap it
        self._building = threading.Lock()  # held by the one thread building a new view
        self._one_run = threading.Lock()  # index runs of this object, one at a time

    # -- searching --------------------------------------------------------------------------

    def _view(self) -> Loaded:
        """The in-memory view of the index's current generation. A new one is built by one
        thread, outside the lock readers take: meanwhile they answer from the view they had
        (on a 20,000-note vault a rebuild takes seconds, and every search waited for it).
        During this object's index run too: its writer builds the view after it (a reader
        between two writes built a half-written one, 3-14 s of a search at 31,000 sections)."""
        try:
            generation = self.store.meta("generation")
        except IndexStateError:  # the manifest went away with its vault: serve what was loaded
            if self._loaded.keyword is None:
                raise
            return self._loaded
        with self._lock:
            loaded = self._loaded
            if loaded.keyword is not None and (
                generation == loaded.generation or self._building.locked() or self._one_run.locked()
            ):
                return loaded
        if self.held_back():  # another process's index run, not done: health says so
            return loaded
        with self._building:  # one build at a time; a first load waits for it
            generation = self.store.meta("generation")
            loaded = self._loaded
            if loaded.keyword is not None and generation == loaded.generation:
                return loaded  # built by another thread while this one waited
            if loaded.keyword is not None and generation != self._own_generation:
                # Another process wrote the index; an embedded Chroma client caches its
                # segments, so only a fresh client sees the new vectors ...
                self.store.reopen()
                # ... and may have built it with another model: questions must be
                # embedded by that one (another size of vector failed every search).
                model = self.store.meta("embed_model")
                if self._embedder is not None and model and self._embedder.name != model:
                    log.info("the index was rebuilt with %s: loading that model", model)
                    self._embedder = None
            refused = self._refused(self.store.files())
            chunks = [c for c in self.store.chunks() if c.path not in refused]
            folder = self.store.folder
            view = None
            if loaded.keyword is None:  # a new process: the view another one saved, if current
                view = saved_view.load(folder, generation, chunks, refused, self.settings)
            if view is None:
                vectors = self.stored_vectors(chunks)
                view = load_view(generation, chunks, loaded, self.settings, refused, vectors)
                if loaded.keyword is None:  # later rebuilds stay in memory (one per edit)
                    saved_view.save(folder, view, self.settings)
            with self._lock:
                self._loaded = view
            return view

    def index(
        self,
        progress: Progress | None = None,
        rendered: Mapping[str, RenderedPage] | None = None,
        complete: bool = False,
        steps: Steps | None = None,
    ) -> IndexReport:
        """Bring the index up to date (``IndexRun.index``); a process that searches gets its
        new view built here, by the writer, not by the first reader after it."""
        with self._one_run:  # a second thread's call waits (it was "another process")
            report = super().index(progress, rendered, complete, steps)
        if self._loaded.keyword is not None:
            self._view()
        return report

    def follow(self) -> None:
        """Load what another process's finished index run wrote, if it wrote anything (a
        server calls it every second): the next reader does not wait for the new view, and
        a later run stopped half-way leaves the server on this one, not an older one."""
        if self._loaded.keyword is not None:
            self._view()

    def view_generation(self) -> str:
        """The index generation of the view searches read now ("" before the first)."""
        return self._loaded.generation

    def prepare_search(self) -> bool:
        """Build the search view of the index as it is now and save it in the index
        folder, unless one is saved already; True when it was built. `kb-qa index` calls
        it, so that the next `kb-qa search` or `ask` reads the view instead of building it."""
        if saved_view.is_saved(self.store.folder, self.store.meta("generation")):
            return False
        view = self._view()  # saved when this process builds its first
        if not view.saved:
            saved_view.save(self.store.folder, view, self.settings)
        return True

    def stored_vectors(self, chunks: Sequence[Chunk]) -> dict[str, np.ndarray]:
        """The manifest's cached embedding of each chunk that has one, by chunk id (under
        the key it was stored with: an older kb-qa's keys hold until the next index run)."""
        stored = self.store.embed_keys()
        keys = {c.id: stored.get(c.id) or embed_key(c) for c in chunks}
        cached = self.store.cached_vectors(keys.values())
        return {i: cached[k] for i, k in keys.items() if k in cached}

    @contextlib.contextmanager
    def pinned(self) -> Iterator[None]:
        """Searches inside see the one index generation loaded when it began: an answer's
        several queries (follow-ups, rewrites) and its citations come from one snapshot,
        even when the index reloads meanwhile (a replica swapping in a new generation)."""
        token = PINNED.set((id(self), self._view()))
        try:
            yield
        finally:
            PINNED.reset(token)

    def searchable_chunks(self) -> list[Chunk]:
        """Every chunk search reads (a replica's too: it has no manifest)."""
        return list(self._search_view().chunks)

    def view_chunks(self) -> tuple[str, Sequence[Chunk]]:
        """The generation of the view searches read, and its chunks (not copied)."""
        view = self._search_view()
        return view.generation, view.chunks

    def _search_view(self) -> Loaded:
        pinned = PINNED.get()
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
        return refused_paths(vault.Boundary.of(self.settings), self.settings.vault, paths)

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
        lang: str = "",
    ) -> list[Hit]:
        """Hybrid search; ``sections`` keeps only the best piece of each heading section.

        ``lang``, the reader's language (their page's ``<html lang>``): a page a translated
        site has in it too is left to that translation (a model's plain ranking keeps both).

        ``reader`` ranks for what a person sees first (search results, no-key answers): the
        question's title weighs in, sections the docs link to gain (``link_weight``,
        ``link_text_weight``) and changelog-like pages are scaled by ``history_weight``.
        An answering model's prompt adds the plain ranking (``reader=False``), which keeps
        more gold sections within the token budget.
        """
        k = k if k is not None else self.settings.top_k
        question = checked_search(question, k, include, exclude)
        include, exclude = self.vault_paths(include), self.vault_paths(exclude)
        view = self._search_view()
        if not view.chunks or not question.strip():
            return []
        n = max(candidates or self.settings.candidates, k * 2)
        allowed_mask: np.ndarray | None = None
        allowed_paths: list[str] | None = None
        # A reader reads the page in their own language, or in the one they ask in.
        other = self._translated(view, self._language_of(question, lang))
        twins = other if reader else set()
        if include or exclude or twins:
            paths = sorted({c.path for c in view.chunks})
            keep = {
                p
                for p in paths
                if (not include or retrieval.path_matches(p, include))
                and not retrieval.path_matches(p, exclude)
                and p not in twins
            }
            allowed_paths = sorted(keep)
            allowed_mask = np.array([c.path in keep for c in view.chunks])
        vector = self._query_vector(question) if reader else self.embedder.embed_query(question)
        # Every chunk's cosine, once: the nearest list and the keyword candidates' own.
        similarity = None if view.vectors is None else view.vectors @ np.asarray(vector, np.float32)
        if similarity is not None:
            nearest = nearest_chunks(view.chunks, similarity, n, allowed_mask)
        else:
            nearest = self.store.nearest(vector, n, allowed_paths)
        terms = topic_words(question, foreign(question))  # not "les", "est", "sont"
        keyword = view.keyword.top_scored(terms, n, allowed_mask) if view.keyword else []
        method = fusion or self.settings.fusion
        cosines = None
        if similarity is not None and keyword and method == "zscore":  # rrf ranks only
            returned = {view.by_id.get(i) for i, _ in nearest}
            rest = [i for i, _ in keyword if i not in returned]
            if rest:
                cosines = dict(zip(rest, similarity[rest].tolist()))
        vector_weight = self.settings.vector_weight
        if keyword and self.embedder.name in LATIN_ONLY and unread_share(question) >= 0.5:
            # MiniLM embeds a question in Chinese or Hebrew without reading it: every
            # section in that script comes out alike, so its words decide.
            vector_weight *= UNREAD_VECTOR_SHARE
        hits = retrieval.fuse(
            view.chunks,
            [(i, 1.0 - d) for i, d in nearest],
            keyword,
            by_id=view.by_id,
            rrf_k=self.settings.rrf_k,
            vector_weight=vector_weight,
            keyword_weight=self.settings.keyword_weight,
            method=method,
            links=self._links(view, terms) if reader else None,
            cosines=cosines,
            complete=view.keyword.holding_all(terms) if view.keyword else None,
            codes=view.keyword.holding_code(question, view.chunks) if view.keyword else None,
        )
        hits = retrieval.page_boost(hits, self.settings.page_weight, self.settings.rrf_k)
        if reader:
            hits = retrieval.demote(
                hits, view.history, self.settings.history_weight, self._history_only(view, terms)
            )
        hits = retrieval.demote(hits, other - twins, TRANSLATED_WEIGHT)  # a model reads both
        hits = retrieval.distinct(hits)
        if sections:
            hits = retrieval.by_section(hits)
        return hits[:k]

    def vault_paths(self, patterns: Sequence[str]) -> list[str]:
        """Path filters as the index names pages (``arguments.vault_relative``)."""
        return vault_relative(patterns, self.settings.vault)

    def _history_only(self, view: Loaded, question: str) -> set[str]:
        """Ids of changelog chunks holding a word of the question that no other page has:
        the history pages are the only source of it (a fix's ticket or an old flag), so
        they are not demoted."""
        spared: set[str] = set()
        for t in keyword_tokens(question):
            spared |= view.history_only.get(t, set())
        return spared

    def site_languages(self) -> str:
        """The languages of the translated site indexed (``Languages.as_json``; "" when
        it is not one)."""
        return self.store.meta("languages")

    def _language_of(self, question: str, lang: str) -> str:
        """The language a reader on a ``lang`` page reads the answer in: the one they ask
        in when the site has it ("How long are dead messages kept?" on a French page finds
        the English pages, which MiniLM reads), else ``lang``."""
        spoken = asked_in(question) if lang else ""
        languages = i18n_layout.Languages.from_json(self.site_languages() if spoken else "")
        return spoken if languages and i18n_layout.wanted_locale(spoken, languages) else lang

    def _translated(self, view: Loaded, lang: str) -> set[str]:
        """Pages in another language than ``lang`` that the site also has in it (none
        unless the index is of a site translated into ``lang``)."""
        languages = i18n_layout.Languages.from_json(self.site_languages() if lang else "")
        if languages is None or not (wanted := i18n_layout.wanted_locale(lang, languages)):
            return set()
        key, cached = (view.generation, wanted), self._translations
        if key not in cached:  # one scan of the pages per index and language
            pages = {(c.path, c.url) for c in view.chunks}
            cached = self._translations = {key: i18n_layout.translated(pages, languages, wanted)}
        return cached[key]

    def _links(self, view: Loaded, question: str) -> retrieval.Links | None:
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
