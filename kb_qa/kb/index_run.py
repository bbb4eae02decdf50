"""The index run of ``KnowledgeBase``: read what changed, render, chunk, embed, store.

One run reads the files that changed since the last (and the pages whose includes, nav
title or rendering changed), chunks them, embeds the new chunks (cached by content hash),
writes Chroma first and then the manifest, in groups, so a killed run leaves a usable index.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from kb_qa import __version__
from kb_qa.errors import EmbeddingError, IndexStateError
from kb_qa.index import embeddings
from kb_qa.index.manifest import FileRow, embed_key
from kb_qa.index.store import Store
from kb_qa.ingest import chunking, render, render_config, render_files, vault
from kb_qa.ingest.deadline import ParseTimeout, deadline
from kb_qa.ingest.render import RenderedPage
from kb_qa.ingest.rendered_chunks import chunk_rendered
from kb_qa.ingest.site import Site, site_of
from kb_qa.kb import published, staleness
from kb_qa.kb.phases import Phases
from kb_qa.settings import Settings
from kb_qa.types import Chunk, Document, IndexReport, Outline

log = logging.getLogger(__name__)

WRITE_GROUP = 400  # chunks written to Chroma + manifest per transaction

Progress = Callable[[int, int], None]
# (step, done, total) of the steps other than embedding: "chunking" files, "writing" chunks
Steps = Callable[[str, int, int], None]
STEP_EVERY = 200  # files chunked between two reports of the chunking step


class IndexRun:
    """``KnowledgeBase.index`` and its steps (the store, settings and embedder of the KB)."""

    built_with = built_for = ""  # the embedding model and fingerprint of this process's last run
    settings: Settings  # set by KnowledgeBase.__init__, as is the store
    store: Store

    def index(
        self,
        progress: Progress | None = None,
        rendered: Mapping[str, RenderedPage] | None = None,
        complete: bool = False,
        steps: Steps | None = None,
    ) -> IndexReport:
        """Bring the index up to date with the vault; only new or changed text is embedded.
        ``progress`` hears of embedding, ``steps`` of chunking and writing (a big vault
        spends minutes in each).

        The changed pages of an MkDocs site are rendered with the site's hooks and plugins
        first (``render.py``). ``rendered`` maps vault paths to pages a real MkDocs build
        rendered (the plugin's ``index_on_build``): they are used as they are, and a page in
        it is re-chunked when its ids or URL differ from what the index holds; when
        ``complete``, it holds every page the build publishes, and a file it lacks is left out
        (``kb.published``: a draft, a language the site does not build).
        """
        started = time.perf_counter()
        report = IndexReport()
        vault.require_folder(self.settings.vault)  # first: healing the index made it anew
        if self.store.heal_folder():
            report.repaired = "the index folder was deleted: created it again, indexing everything"
        with self.store.writer_lock():
            s = self.settings
            site = site_of(s)
            prefix = f"{site.config_name}: "
            report.warnings += [(site.config_name, w.removeprefix(prefix)) for w in site.warnings]
            files, skipped = vault.scan(site, self.settings)
            report.skipped += skipped
            moved = self.store.settle_workspace(explicit=bool(self.settings.workspace))
            if self._check_fingerprint(site, report):  # kept as built: nothing is read
                self.store.say_warnings_again({f.path for f in files}, (), report)
                report.files, report.chunks = len(self.store.files()), self.store.chunk_count()
                return report
            if moved and not report.rebuilt:
                report.rebuilt = f"{moved}: re-chunking every file once (embeddings are reused)"
                log.debug("%s", report.rebuilt)
            interrupted = self.store.meta("writing") == "1"  # Chroma, manifest apart: only so
            untouched = not interrupted and self.store.chroma_untouched()
            problem = "" if interrupted or untouched else self.store.vector_problem()
            if problem:
                report.repaired = (
                    f"{problem}: bringing it back in line with the index (missing vectors "
                    "from the embedding cache where it has them)"
                )
                log.warning("%s", report.repaired)
            missing = self.store.reconcile() if interrupted or problem else set()
            known = {p: r for p, r in self.store.files().items() if p not in missing}
            current = {f.path for f in files}
            removed = [
                p for p in known if p not in current and not vault.kept_by_unlisted(p, skipped)
            ]

            inputs = staleness.PageInputs.load(self.store, site)
            docs, touched, refused = self._read_changed(
                site, files, known, report, rendered or {}, inputs
            )
            removed += refused
            self.store.say_warnings_again(current, {d.path for d in docs}, report)
            phase = Phases(report.phases, started)
            phase.done("reading")
            if rendered is not None:
                pages, listed = dict(rendered), (set(rendered) if complete else None)
            else:
                pages, listed = published.render_changed(site, docs, self.settings, report)
            kept = published.published(docs, pages, listed, known, self.store, report)
            docs, removed = kept.docs, removed + kept.dropped
            if pages:
                phase.done("rendering")
            outlines: dict[str, Outline] = {}
            chunks_by_doc = self._chunk(site, docs, report, pages, outlines, steps)
            all_new = [c for cs in chunks_by_doc.values() for c in cs]
            phase.done("chunking")
            self._ensure_model(docs, report)
            link_style = "site" if site.is_mkdocs else "file"
            if removed and all_new:  # deleted pages leave search before the embedding
                self.store.set_meta(writing="1")
                self.store.mark_writing()
                report.deleted = self._write([], {}, removed, {})
                self.store.set_meta(writing="0")
                self.store.publish(site.link_base, link_style)
            report.embedded, report.reused = self._embed(all_new, progress)
            phase.done("embedding")

            self.store.set_meta(writing="1")
            if docs or removed:
                self.store.mark_writing()
            rendering = render_config.config_file(site, self.settings) is not None
            if inputs.update(docs, removed, rendering):
                self.store.set_meta(**inputs.meta())
            self.store.remember_warnings(current, report.warnings)
            held = self.store.chunk_count()  # a run that replaces chunks leaves vectors unused
            report.deleted += self._write(docs, chunks_by_doc, removed, outlines, steps)
            if docs or removed:
                self.store.prune_vectors(held)
            self.store.set_meta(writing="0", rebuilding="")
            phase.done("writing")
            if touched:
                self.store.touch(touched)
            report.changed_files, report.removed_files = len(docs), len(removed)
            report.files, report.chunks = len(self.store.files()), self.store.chunk_count()
            self.store.set_meta(
                last_indexed=str(time.time()), site_url=site.link_base, link_style=link_style
            )
            languages = site.languages.as_json() if site.languages else ""
            self.store.set_meta(languages=languages, kb_qa_version=__version__)  # for health
            wrote = bool(docs or removed or report.rebuilt or report.repaired)
            if wrote and not (docs or removed):  # a repair: replicas reload on a new generation
                self._bump_generation()
            self.store.publish(site.link_base, link_style, untouched=untouched and not wrote)
            self.store.set_meta(chroma_stamp=self.store.chroma_stamp())
        report.seconds = time.perf_counter() - started
        self.built_with = self.store.meta("embed_model")
        self.built_for = self.store.meta("fingerprint")
        return report

    def _check_fingerprint(self, site: Site, report: IndexReport) -> str:
        """Rebuild when chunking or addressing rules changed; re-embed only if the model did.
        Not when this machine lacks what the index was built with: then why it is kept."""
        parts = staleness.fingerprint_parts(site, self.settings)
        fingerprint = staleness.fingerprint(parts)
        why, re_embed, kept = staleness.rebuild_or_keep(self.store, site, self.settings, parts)
        self.store.set_meta(kept_as_built=kept)
        if kept:  # a warning: `index --strict` fails a CI job that could not re-index as built
            report.warnings.append((site.config_name, kept))
            return kept
        stored_model, wanted = self.store.meta("embed_model"), self.settings.embed_model
        if (re_embed and self.built_with not in ("", stored_model)) or (  # each at every edit
            why and self.built_for not in ("", self.store.meta("fingerprint"))
        ):
            raise IndexStateError(
                f"another kb-qa process rebuilt this index, and this one would rebuild it back "
                f"({why}): give both the same embed_model, chunk_chars and kb-qa version, or each "
                "its own index_dir. This one serves the index as it is until it is restarted"
            )
        if re_embed:
            fresh = None
            if wanted not in ("auto", stored_model):
                # The new model runs before anything is deleted: one that cannot (a typo, an
                # extra not installed) leaves the index, and the model it was built with, as
                # they were, so unsetting the setting is all it takes to go back.
                fresh = embeddings.load_embedder(wanted, self.settings.embed_api_base)
                fresh.embed_passages(["kb-qa"])
            report.rebuilt = f"{why}: rebuilding the index and re-embedding everything"
            self.store.reset(keep_vectors=False)
            self.store.set_meta(embed_model="", fingerprint=fingerprint)
            self._embedder = fresh
        elif why:
            report.rebuilt = f"{why}: re-chunking every file (cached embeddings are reused)"
            self.store.reset(keep_vectors=True)
        self.store.set_meta(fingerprint=fingerprint, fingerprint_parts=json.dumps(parts))
        if report.rebuilt:  # said before the work, to a log (`--strict` must not abort)
            log.info("rebuilding: %s", report.rebuilt)
        return ""

    def pending_rebuild(self, site: Site | None = None) -> str:
        """Why the next index run will rebuild this index ("" when it will not)."""
        s = self.settings
        site = site or site_of(s)
        return staleness.rebuild_or_keep(self.store, site, s)[0]

    def _read_changed(
        self,
        site: Site,
        files: Sequence[vault.FileInfo],
        known: dict[str, FileRow],
        report: IndexReport,
        rendered: Mapping[str, RenderedPage],
        inputs: staleness.PageInputs,
    ) -> tuple[list[Document], list[FileRow], list[str]]:
        """The changed files read, the unchanged ones to touch, and the indexed ones whose
        content is now refused (their chunks go: what they said is not there any more)."""
        docs: list[Document] = []
        touched: list[FileRow] = []
        refused: list[str] = []
        stale_anchors = staleness.stale_anchor_paths(self.store, rendered) | inputs.stale(files)
        boundary = vault.Boundary.of(self.settings)
        for info in files:
            row = known.get(info.path)
            unchanged = row and row.size == info.size and row.mtime_ns == info.mtime_ns
            if unchanged and info.path not in stale_anchors:
                continue
            try:
                result = vault.read_document(site, info, boundary)
            except Exception as exc:  # one file must not stop the run (nor every run after)
                log.warning("reading %s failed", info.path, exc_info=True)
                report.skipped.append((info.path, f"could not be read: {exc}"))
                continue
            report.warnings += [(info.path, w) for w in result.warnings]
            if result.document is None:
                # Keep what was indexed before: a file that cannot be read now loses nothing;
                # one whose content is refused (binary now) keeps nothing it said.
                report.skipped.append((info.path, result.skipped))
                if result.refused and row:
                    refused.append(info.path)
                continue
            doc = result.document
            # Its content failed, or ran out of this parse_timeout (a raised one tries again)
            timeout = staleness.timeout_key(doc.file_hash, self.settings.parse_timeout)
            failed = self.store.failure(doc.path, doc.file_hash, timeout)
            if failed:
                # Parsing it again would fail again (and can take long): report, move on.
                again = (
                    ""
                    if failed == render_files.UNPUBLISHED
                    else " (unchanged since; not parsed again)"
                )
                report.skipped.append((doc.path, failed + again))
                continue
            if row and row.hash == doc.file_hash and info.path not in stale_anchors:
                touched.append(
                    FileRow(doc.path, doc.size, doc.mtime_ns, row.hash, row.title, row.url)
                )
                continue
            docs.append(doc)
        return docs, touched, refused

    def _chunk(
        self,
        site: Site,
        docs: list[Document],
        report: IndexReport,
        pages: Mapping[str, RenderedPage],
        outlines: dict[str, Outline],
        steps: Steps | None = None,
    ) -> dict[str, list[Chunk]]:
        md = site.markdown()
        result: dict[str, list[Chunk]] = {}
        failed: dict[str, tuple[str, str]] = {}
        size = self.settings.chunk_chars
        limit = self.settings.parse_timeout
        total = len(docs)
        for n, doc in enumerate(list(docs)):
            if steps and n % STEP_EVERY == 0:
                steps("chunking", n, total)
            outlines[doc.path] = outline = self.store.outline(doc.path)
            page = pages.get(doc.path)
            notes: list[str] = []
            limits: dict[str, Any] = {"parse_timeout": limit, "warnings": notes}
            try:
                # The whole file (its blocks, its rendering, matching ids to headings), with
                # room for the fallback to the headings alone (chunking.chunk_document).
                with deadline(3 * limit, "chunking the file, given three times that,"):
                    if page is not None:
                        chunks = chunk_rendered(doc, page, md, size, outline, **limits)
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
                # Under this limit: raised as the reason advises, the file is parsed again
                failed[doc.path] = (staleness.timeout_key(doc.file_hash, limit), reason)
                docs.remove(doc)
            except Exception as exc:  # a parser bug must not stop the run
                log.debug("failed to parse %s", doc.path, exc_info=True)
                reason = render.unparsed(report.warnings, doc.path, exc)
                report.skipped.append((doc.path, reason))
                failed[doc.path] = (doc.file_hash, reason)
                docs.remove(doc)
        if steps and total:
            steps("chunking", total, total)
        self.store.set_failures(failed, cleared=result)
        return result

    def _ensure_model(self, docs: Sequence[Document], report: IndexReport) -> None:
        if self.store.meta("embed_model"):
            return
        # With ``auto``, the vault's text chooses it
        texts = [d.source for d in docs]
        name, report.model = embeddings.auto_choice_for(self.settings.embed_model, texts)
        self.store.set_meta(embed_model=name, embed_build=embeddings.MODEL_BUILDS.get(name, ""))
        if getattr(self._embedder, "name", None) != name:  # the probe's model is kept
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
        texts = {embed_key(c): c.index_text for c in chunks}  # a key is its text's
        n = self.store.embed_uncached(texts, self._passages, self.settings.embed_batch, progress)
        return n, len(chunks) - n

    def _passages(self, texts: list[str]) -> np.ndarray:
        try:
            return self.embedder.embed_passages(texts)
        except EmbeddingError:
            raise
        except Exception as exc:
            raise EmbeddingError(f"Embedding failed: {exc}") from exc

    def _write(
        self,
        docs: Sequence[Document],
        chunks_by_doc: dict[str, list[Chunk]],
        removed: Sequence[str],
        outlines: Mapping[str, Outline],
        steps: Steps | None = None,
    ) -> int:
        deleted = 0
        written, total = 0, sum(len(chunks_by_doc[d.path]) for d in docs)
        group_rows: list[FileRow] = []
        group_chunks: list[Chunk] = []
        pending_removed = list(removed)

        def flush() -> None:
            nonlocal deleted, group_rows, group_chunks, pending_removed, written
            if steps and total:
                steps("writing", written, total)
            written += len(group_chunks)
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
        if steps and total:
            steps("writing", total, total)
        return deleted

    def _bump_generation(self) -> None:
        self._own_generation = f"{time.time_ns()}"
        self.store.set_meta(generation=self._own_generation)
