"""The pages of ``kb-qa serve`` for a vault that is not a site: GET /, /view/<path> and the
widget's files (/kb-qa/kb-qa.js, kb-qa.css).
"""

from __future__ import annotations

import hashlib
import html
import re
import threading
from collections.abc import Callable
from functools import partial
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from kb_qa.errors import VaultError
from kb_qa.ingest import decoding, linkgraph, vault
from kb_qa.ingest.site import MARKDOWN_SUFFIXES
from kb_qa.serve import pages
from kb_qa.serve.protocol import compressed, reject, unless_disconnected
from kb_qa.text import LOGSEQ_ID, as_shown, name_key, nfc

if TYPE_CHECKING:
    from collections import OrderedDict

    import anyio

    from kb_qa.kb.knowledge_base import KnowledgeBase
    from kb_qa.settings import Settings

VIEWS_KEPT = 32  # rendered notes kept (the most recently viewed)
_BULLET = re.compile(r"^[ \t]*(?:[-*+][ \t]+)?(?:#{1,6}[ \t]+)?")  # "\t- ## " opening a block


class PageRoutes:
    """The pages of ``kb_qa.serve.app.Api``; off with an API token and on a replica."""

    # Set by Api.__init__
    kb: KnowledgeBase
    settings: Settings
    page_limiter: anyio.CapacityLimiter | None
    views: OrderedDict[tuple[str, str, str], str]  # rendered notes
    views_lock: threading.Lock
    links: tuple[str, linkgraph.Resolver | None]
    block_refs: tuple[str, dict[str, tuple[str, str]]]
    replica: bool

    if TYPE_CHECKING:  # Api's

        async def _thread(self, func: Any, *args: Any) -> Any: ...

    async def home(self, request: Request) -> Response:
        """GET /: the vault's pages, with the chat widget."""
        self._pages_allowed()
        pages_ = await self._thread(self.kb.pages)
        text = pages.index_page(self.settings.vault.name, pages_)
        csp = {"Content-Security-Policy": pages.CSP}
        return compressed(request, text.encode(), "text/html; charset=utf-8", csp)

    async def view(self, request: Request) -> Response:
        """GET /view/<path or page URL>: one indexed note, rendered with its anchors."""
        self._pages_allowed()
        wanted = request.path_params["path"]
        gone = threading.Event()
        # Pages get threads of their own, so a huge note cannot starve the API; a render
        # whose reader has left is dropped while it waits and stopped between its stages.
        rendered = await unless_disconnected(
            request, gone, partial(self._render, wanted, gone.is_set), self.page_limiter
        )
        if gone.is_set():
            return Response(status_code=499)  # nobody reads it
        # A citation in an answer the widget kept (sessionStorage) may name a note moved,
        # renamed or changed since: a reader clicking it saw raw JSON. A browser gets a page.
        browser = "text/html" in request.headers.get("accept", "")
        csp = {"Content-Security-Policy": pages.CSP}
        if rendered is None:
            if browser:
                page = moved_page(
                    self.settings.vault.name, wanted, await self._thread(self.kb.pages)
                )
                return HTMLResponse(page, status_code=404, headers=csp)
            raise reject(404, f"{wanted!r} is not an indexed page of this vault.")
        if isinstance(rendered, VaultError):  # indexed, and cited, but not readable now
            if browser:
                why = f"<p><bdi>{html.escape(wanted)}</bdi> cannot be shown now: "
                page = _not_shown(wanted, "This note cannot be shown now", why, str(rendered))
                return HTMLResponse(page, status_code=404, headers=csp)
            raise reject(404, f"{wanted!r} cannot be shown now: {rendered}")
        return HTMLResponse(rendered, headers=csp)

    def _unindexed(self, wanted: str) -> VaultError | None:
        """Why a note of the vault is not indexed, when it is because it is binary now (the
        watcher took it out of the answers): None for any other path, as for one not there."""
        if not wanted.lower().endswith(MARKDOWN_SUFFIXES) or vault.is_hidden(wanted):
            return None  # a hidden note is answered as a missing one: nothing to probe
        if vault.ignored_by(self.settings).match_file(wanted):
            return None
        try:
            boundary = vault.Boundary.of(self.settings)
            data = boundary.read_bytes(self.settings.vault / wanted, decoding.HEAD_BYTES)
        except VaultError:
            return None
        if decoding.is_binary(data):
            return VaultError(f"it is not indexed: {decoding.binary_reason(data)}.")
        return None

    def _pages_allowed(self) -> None:
        # A browser cannot send the bearer token with a page load, so a private
        # deployment does not show notes as pages at all.
        if self.settings.api_token:
            raise reject(404, "Pages are off when api_token is set; use the API.")
        if self.replica:
            raise reject(404, "A read-only replica has no vault to show pages from; use the API.")

    def _render(
        self, wanted: str, gone: Callable[[], bool] = lambda: False
    ) -> str | VaultError | None:
        # Only paths the index knows are served; the file is then read from inside the vault.
        if gone():
            return None
        indexed = self.kb.pages()
        exact = {p["path"]: p["path"] for p in indexed}
        exact.update({p["url"]: p["path"] for p in indexed if p["url"]})
        known = {nfc(k): v for k, v in exact.items()}  # a macOS name, typed composed
        # The exact name first: "Crème.md" and a decomposed "Crème.md" may both be notes.
        path = exact.get(wanted) or exact.get(wanted.rstrip("/") + "/")
        wanted = nfc(wanted)
        path = path or known.get(wanted) or known.get(wanted.rstrip("/") + "/")
        if path is None:
            return self._unindexed(wanted)
        limit = self.settings.max_file_bytes
        boundary = vault.Boundary.of(self.settings)
        try:
            data = boundary.read_bytes(self.settings.vault / path, limit + 1)
        except VaultError as exc:
            return exc
        if len(data) > limit:  # it grew since it was indexed: no 60 MB page
            return VaultError(
                f"it is larger than the {limit:,}-byte limit now (KBQA_MAX_FILE_BYTES); "
                "it leaves the index at the next update."
            )
        if decoding.is_binary(data):  # as indexing refuses it: no page of random bytes
            return VaultError("it is a binary file now, not Markdown.")
        # As it was indexed (no BOM; a notes vault's comments blanked): the anchors match.
        notes_vault = self.kb.store.meta("link_style") != "site"
        source = vault.source_text(decoding.decode(data)[0], notes_vault)
        # The same note in the same index is the same page: a note that renders slowly (a
        # 50,000-row table hits parse_timeout) is not rendered again for every reader.
        key = (path, self.kb.store.meta("generation"), hashlib.sha1(data).hexdigest())
        with self.views_lock:
            if key in self.views:
                self.views.move_to_end(key)
                return self.views[key]
        if gone():
            return None
        chunks = self.kb.store.chunks(path)
        page = pages.view_page(
            path,
            source,
            chunks,
            self._links(),
            gone,
            self.settings.parse_timeout,
            self._block_refs(),
        )
        if page is not None:
            with self.views_lock:
                self.views[key] = page
                while len(self.views) > VIEWS_KEPT:
                    self.views.popitem(last=False)
        return page

    def _links(self) -> linkgraph.Resolver:
        """Where a wikilink leads, once per index generation from the chunks in memory
        (reading and decoding every chunk made each new page of a 20,000-note vault take
        2 s): the resolver the ranking's links use, so a link is followed to the note and
        section it was counted for. A ``[[note#heading]]`` opens the anchor the index gave
        that heading (``_3`` for a heading MkDocs' slugify empties), not a slug made here."""
        generation, every = self.kb.view_chunks()
        made, resolver = self.links
        if made == generation and resolver is not None:
            return resolver
        resolver = linkgraph.Resolver(every)
        self.links = (generation, resolver)
        return resolver

    def _block_refs(self) -> dict[str, tuple[str, str]]:
        """Logseq block id -> (the link to the section holding the block, the block's first
        line as shown), once per index generation: what a ``((id))`` reference shows."""
        generation, every = self.kb.view_chunks()
        made, refs = self.block_refs
        if made == generation:
            return refs
        refs = {}
        for c in every:
            for m in LOGSEQ_ID.finditer(c.text) if "id::" in c.text else ():
                block = _BULLET.sub("", m.group(1))
                href = "/view/" + quote(c.path) + (f"#{c.anchor}" if c.anchor else "")
                refs[m.group(2).lower()] = (href, as_shown(block).replace("**", ""))
        self.block_refs = (generation, refs)
        return refs

    async def asset(self, request: Request) -> Response:
        """GET /kb-qa/kb-qa.js and kb-qa.css: the widget. Asked for by this version
        (``?v=``, as the tags kb-qa writes do), it may be cached for good; else revalidated."""
        from kb_qa_widget import ASSETS, FILES, version

        name = request.path_params["name"]
        if name not in FILES:
            raise reject(404, "No such file.")
        media = "text/javascript" if name.endswith(".js") else "text/css"
        pinned = request.query_params.get("v") == version()
        cache = "public, max-age=31536000, immutable" if pinned else "no-cache"
        headers = {"Cache-Control": cache, "ETag": f'"{version()}"'}
        return Response((ASSETS / name).read_bytes(), media_type=media, headers=headers)


def moved_page(vault_name: str, wanted: str, indexed: list[dict[str, str]]) -> str:
    """The page a browser gets for a ``/view/`` path the index does not hold: the note is
    no longer in the vault, with a link to the one indexed note of the same file name (a
    note moved to another folder: Recipes/Sourdough.md -> Cooking/Sourdough.md), else to
    the vault's pages. Every name is escaped: the path is whatever the URL said."""
    name = name_key(PurePosixPath(wanted).name)
    same = [p for p in indexed if name_key(PurePosixPath(p["path"]).name) == name]
    if len(same) == 1:
        note = same[0]
        href = html.escape("/view/" + quote(note["path"]), quote=True)
        title = html.escape(note["title"] or note["path"])
        where = (
            f'<p>A note of the same name is in the vault: <a href="{href}" dir="auto">{title}'
            f"</a> <small><bdi>{html.escape(note['path'])}</bdi></small>.</p>"
        )
    else:
        where = f'<p><a href="/">See all pages of {html.escape(vault_name)}</a>.</p>'
    said = f"<p><bdi>{html.escape(wanted)}</bdi> is not in {html.escape(vault_name)} now: "
    why = "it was moved, renamed or deleted since the answer that cites it."
    return _not_shown(wanted, "This note is no longer in the vault", said, why, where)


def _not_shown(wanted: str, heading: str, said: str, why: str, more: str = "") -> str:
    """A 404 page for a reader: ``said`` (HTML, its names escaped) ends with ``why``, text
    escaped here (a note's error may quote its name); ``more`` is HTML."""
    body = f'<nav><a href="/">All pages</a></nav><h1>{heading}</h1>{said}{html.escape(why)}</p>'
    return pages.notice_page(f"Not shown: {wanted}", body + more)
