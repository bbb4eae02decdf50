"""How an index knows it is stale beyond its files' contents.

The fingerprint covers everything besides file contents that changes chunks, anchors or
URLs (a new one rebuilds the index); ``PageInputs`` records the files each page pulls in
and what the site's nav says of its title, so a page is re-read when one of them changes.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kb_qa.errors import VaultError
from kb_qa.index import embeddings
from kb_qa.index.manifest import EMBED_TEXT_VERSION, UNSETTLED, FileRow
from kb_qa.index.store import Store
from kb_qa.ingest import anchors, page_includes, render_config, safe_config, vault
from kb_qa.ingest.config_files import CONFIG_FILES
from kb_qa.ingest.page_includes import PYTHON_FILES
from kb_qa.ingest.render import RenderedPage
from kb_qa.ingest.rendered_chunks import shown_title
from kb_qa.ingest.site import Site
from kb_qa.settings import Settings
from kb_qa.types import Document

if TYPE_CHECKING:
    from kb_qa.ingest.vault import FileInfo

# 3: page URLs are percent-encoded (Site.url_for), so existing indexes re-chunk once.
# 4: a notes vault's %% comments are not indexed (vault.source_text).
# 5: an outline's long list item may be cut before its sub-items (chunking._list_units).
# 6: a note's headings are shown as Obsidian shows them (wikilinks as labels, no ==marks==).
# 7: text holding ==marks== is embedded without them (manifest.embed_key).
# 8: a note's title from a Logseq namespace file name reads "a/b", not "a___b" (note_names);
#    each language of a translated site renders at its URL (render_files.other_languages).
# 9: a page the site's build leaves out (a Material blog draft, a language not built) is
#    not indexed (kb.published).
# 10: a lone CR ends a line (vault.source_text): such a note, remembered as failing, is read.
# 11: a file holding no UTF-8 at all is read as Windows-1252, not with U+FFFD (decoding.decode).
# 12: ... or in the legacy code page of its script: Cyrillic, Greek, CJK (legacy_text).
# 13: a file opening with UTF-32's byte order mark is read as UTF-32, not UTF-16.
# 14: a translated site indexed from its files cites each language's URL (i18n_layout).
# 15: a code block's annotation list (Material) stays in the code's piece (code_annotations).
# 16: a site page's title is the one its site shows: its nav's, then front matter, then an
#     opening H1, then its file name as MkDocs or Zensical make it (page_titles).
# 17: a page's own titles (its opening H1, its front matter's) that differ from that title
#     open every chunk's context, a line each: their words stay indexed.
# 18: instead, retrieval reads such a page's own title in place of the site's (own_title).
# 19: a code fence never closed is text, as MkDocs reads it, not code to the page's end.
# 20: a page read from its HTML keeps the titles of its admonitions, collapsible blocks,
#     definitions and tabs as "**Title:**" lead-ins, and its footnotes as "[^1]".
# 21: on a site, a paragraph of two lines over "---" or "===" is no heading (as MkDocs).
# 22: a page a Markdown extension fails on is indexed from its source (ids from its
#     headings alone), not skipped: pages remembered as failing are read again.
# 23: ... a title that asks ("What are return codes?") gets no colon after it.
# 24: ... nor a tab label that asks.
# 25: a Logseq journal is titled as Logseq shows it ("Mar 12th, 2025", note_names) and its
#     :LOGBOOK: drawers are no text of the page.
# 26: a page that is a symlink is rendered under its own name (it was remembered as one the
#     build leaves out: read again), a page read from its HTML keeps a highlighted code
#     block's language and title, and Hugo, mdBook, VitePress and Docusaurus headings get
#     the ids their real builds write (an underscore inside a word, dashes, escapes).
# 27: a heading inside an admonition, collapsible block or content tab is a section read
#     from the source, at its lines (the page was read from its HTML); a page read from
#     its HTML keeps an abbreviation as its word, without its title.
# 28: a rendered heading's text is its title on one line, without mkdocstrings' labels
#     ("Settings", not "Settings\n\n\n  \n      dataclass"; anchors.html_headings).
CHUNKER_VERSION = "28"


@dataclass
class PageInputs:
    """What each page was chunked from besides its own file. The files it pulls in, as the
    manifest remembers them with their time and size: ``--8<--`` includes, and
    ``PYTHON_FILES`` (the vault's Python code) for a page with sections generated from
    code; a page whose files changed renders again. And what the site's ``nav:`` said of
    its title (``NavTitles.key``): a page the nav retitles is chunked again."""

    stored: dict[str, dict[str, list[int]]]
    site: Site
    nav: dict[str, str]  # vault path -> NavTitles.key when it was chunked ("" left out)

    @classmethod
    def load(cls, store: Store, site: Site) -> PageInputs:
        stored = json.loads(store.meta("includes") or "{}")
        return cls(stored, site, json.loads(store.meta("nav_titles") or "{}"))

    @functools.cached_property
    def code(self) -> tuple[int, int]:
        """The vault's Python files, stamped once per run (before any page is rendered)."""
        return page_includes.python_stamp(self.site.root)

    def _stamp(self, dep: str) -> list[int]:
        return list(self.code if dep == PYTHON_FILES else page_includes.stamp(self.site.root / dep))

    def stale(self, files: Sequence[FileInfo]) -> set[str]:
        """Pages one of whose files changed since they were indexed, or whose nav title."""
        retitled = {f.path for f in files if self.nav.get(f.path, "") != self._key(f.doc_path)}
        return retitled | {
            page
            for page, deps in self.stored.items()
            if any(self._stamp(dep) != stamp for dep, stamp in deps.items())
        }

    def _key(self, doc_path: str) -> str:
        return self.site.nav.key(doc_path)

    def update(self, docs: Sequence[Document], removed: Sequence[str], rendering: bool) -> bool:
        """Record the files and nav title of each re-read page (and forget removed ones);
        whether anything changed, so that a run that read nothing writes nothing."""
        before = self.meta()
        for path in [*removed, *(d.path for d in docs)]:
            self.stored.pop(path, None)
            self.nav.pop(path, None)
        for doc in docs:
            deps = page_includes.includes(doc.source, self.site)
            if rendering and page_includes.generates_from_code(doc.source):
                deps.append(PYTHON_FILES)
            if deps:
                self.stored[doc.path] = {d: self._stamp(d) for d in deps}
            if key := self._key(doc.doc_path):
                self.nav[doc.path] = key
        return self.meta() != before

    def meta(self) -> dict[str, str]:
        """The store's meta values that hold them."""
        return {
            "includes": json.dumps(self.stored, sort_keys=True),
            "nav_titles": json.dumps(self.nav, sort_keys=True),
        }


def fingerprint(parts: Mapping[str, str]) -> str:
    """``fingerprint_parts`` (everything besides file contents that changes chunks, anchors
    or URLs) as one hash."""
    return hashlib.sha1(json.dumps(dict(parts), sort_keys=True).encode()).hexdigest()


def fingerprint_parts(site: Site, settings: Settings) -> dict[str, str]:
    """What ``fingerprint`` hashes, each part as text (the index keeps them, to say which
    changed)."""
    data: dict[str, object] = {
        "chunker": CHUNKER_VERSION,
        "embed_text": EMBED_TEXT_VERSION,
        "chunk_chars": settings.chunk_chars,
        # Relative to the vault: a vault moved or copied with its index keeps its chunks.
        "docs_dir": _relative(site.docs_dir, site.root),
        "use_directory_urls": site.use_directory_urls,
        "is_mkdocs": site.is_mkdocs,
        "exclude": site.exclude_patterns,
        "extensions": site.extensions,
        # Function objects in extension configs print with their address: drop it; and the
        # vault's own path (snippets' base_path): a copied site re-chunked every file.
        "configs": re.sub(
            r" at 0x[0-9a-f]+", "", repr(sorted(site.extension_configs.items()))
        ).replace(repr(str(site.root))[1:-1], "<vault>"),
    }
    # A config of another name (``config_file``): a server started without the setting the
    # build had re-read that site as notes, and said only "the vault is now read as notes"
    if site.config_name and site.config_name not in CONFIG_FILES:
        data["config"] = site.config_name
    if site.generator not in ("", "mkdocs"):  # only then: existing indexes stay current
        data["generator"] = site.generator
    if site.routes is not None:  # another generator's, as routeBasePath: every page's URL
        data["routes"] = repr(site.routes)
    if site.blog is not None:  # where its posts are published
        data["blog"] = repr(site.blog)
    rendering = render_config.inputs_key(site, settings)
    if rendering:  # a hook edited, a plugin installed: every page renders differently
        data["render"] = rendering
    return {k: v if isinstance(v, str) else json.dumps(v, default=str) for k, v in data.items()}


def rebuild_reason(store: Store, settings: Settings, parts: Mapping[str, str]) -> tuple[str, bool]:
    """Why the next index run rebuilds the index ("" when it will not), and whether it
    re-embeds everything (a model changed) or only re-chunks (``parts`` changed: an older
    kb-qa built it, or a setting or the site config changed since)."""
    built_for = store.meta("collection")
    if built_for and built_for != store.name:  # --index-dir of another vault, say
        was = built_for.removeprefix("kbqa-")
        why = f"it holds workspace {was!r}, not this vault's {store.workspace!r}"
        return why + " (is it another vault's index folder?)", False
    stored_model = store.meta("embed_model")
    wanted = settings.embed_model
    build = embeddings.MODEL_BUILDS.get(stored_model, "")
    if stored_model and wanted != "auto" and wanted != stored_model:
        return f"embedding model changed from {stored_model} to {wanted}", True
    if stored_model and store.meta("embed_build") != build:
        return f"the {stored_model} model was updated (build {build or 'original'})", True
    if store.meta("fingerprint") in ("", fingerprint(parts)):
        return "", False
    before = built_parts(store)
    why = (before and what_changed(before, parts)) or (
        "kb-qa was updated, or the chunking settings or the site config's heading/URL rules changed"
    )
    return why, False


# How an index kept as it was built is said: health is degraded, the server still ready
KEPT_AS_BUILT = "this machine cannot render the site as the index was built"


def rebuild_or_keep(
    store: Store, site: Site, settings: Settings, parts: Mapping[str, str] | None = None
) -> tuple[str, bool, str]:
    """``rebuild_reason``, with why the index is kept as it was built instead (``kept_as_built``:
    then there is no reason to rebuild); ``parts`` are ``fingerprint_parts`` of the site."""
    parts = fingerprint_parts(site, settings) if parts is None else parts
    why, re_embed = rebuild_reason(store, settings, parts)
    kept = kept_as_built(store, site, parts) if why and not re_embed else ""
    return ("", False, kept) if kept else (why, re_embed, "")


def kept_as_built(store: Store, site: Site, parts: Mapping[str, str]) -> str:
    """Why the index is kept as it was built, not rebuilt ("" when it is not): this machine
    lacks what the build had, Markdown extensions the site config still lists or plugins
    it lists that were installed then. A docs CI indexed the site on build, with its
    requirements installed; a server with kb-qa alone re-indexed it at start ("the site
    config's Markdown extensions changed"): 568 sections became 460, an API page's 61 one,
    and health said ok. An extension or plugin taken out of the config is a change to index."""
    before = built_parts(store)
    if not before or store.meta("collection") not in ("", store.name):
        return ""
    lacking = [f"Markdown extension {n!r}" for n in _extensions_lost(site, before, parts)]
    lacking += [f"plugin {n!r}" for n in _plugins_lost(before, parts)]
    if not lacking:
        return ""
    return (
        f"{KEPT_AS_BUILT}: {', '.join(lacking)} "
        f"of {site.config_name} {'is' if len(lacking) == 1 else 'are'} not installed here. "
        "The index is served as it was built (edits are not indexed meanwhile): install the "
        "docs build's requirements (what `mkdocs build` runs with) beside kb-qa, then run "
        "kb-qa index or restart the server"
    )


def _extensions_lost(site: Site, before: Mapping[str, str], now: Mapping[str, str]) -> list[str]:
    """Extensions the index was built with that the config lists and that do not load here.
    Not when ``render`` was switched (off, only allowlisted extensions are imported), nor
    when a rendered site's config changed (an extension's options mistyped fails to load)."""
    if ("render" in before) != ("render" in now) or site.generator != "mkdocs":
        return []
    if "render" in now and _config_key(before) != _config_key(now):
        return []
    built, usable = (set(json.loads(p.get("extensions") or "[]")) for p in (before, now))
    if not built - usable:
        return []
    try:
        config = safe_config.load_site_yaml(site.root / site.config_name)
        entries = config.get("markdown_extensions") or []
    except Exception:  # noqa: BLE001 - then the change is indexed, as before
        return []
    listed = {next(iter(e)) if isinstance(e, dict) else e for e in entries if e}
    return sorted(n for n in built - usable if n in listed)


def _plugins_lost(before: Mapping[str, str], now: Mapping[str, str]) -> list[str]:
    """Plugins not installed here that were when the index was built, the config and hooks
    unchanged (``render_config.inputs_key``: their hash, then the plugins missing)."""
    if "render" not in before or "render" not in now or _config_key(before) != _config_key(now):
        return []
    had, lacks = (set(p["render"].rpartition("|")[2].split(",")) for p in (before, now))
    return sorted(lacks - had - {""})


def _config_key(parts: Mapping[str, str]) -> str:
    return parts["render"].rpartition("|")[0]


def built_parts(store: Store) -> dict[str, str]:
    """The ``fingerprint_parts`` the index was last built with ({} before the first run)."""
    parts: dict[str, str] = json.loads(store.meta("fingerprint_parts") or "{}")
    return parts


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:  # a docs_dir outside the vault ("../docs")
        return str(path)


_PARTS = {
    "chunker": "this kb-qa version chunks or addresses pages differently",
    "embed_text": "this kb-qa version embeds a section's text differently",
    "chunk_chars": "chunk_chars changed",
    "docs_dir": "the docs folder is now {new} (it was {old})",
    "use_directory_urls": "the site config's use_directory_urls changed",
    "is_mkdocs": "the vault is now read {how}",
    "exclude": "the files left out changed (exclude_docs, SUMMARY.md, Obsidian's templates)",
    "extensions": "the site config's Markdown extensions changed",
    "configs": "the site config's Markdown extension settings changed",
    "config": "the site config is now {new} (it was {old}: the config_file setting names it)",
    "generator": "the site generator changed",
    "blog": "the site config's blog settings changed",
    "routes": "where the site's config publishes pages changed (routeBasePath, base, cleanUrls)",
    "render": "the site config or its hooks changed",
}
# Parts read from the site config: when one of them says what changed, "render" (the
# config's bytes) adds nothing.
_FROM_CONFIG = {"use_directory_urls", "exclude", "extensions", "configs", "docs_dir", "blog"}


def what_changed(old: Mapping[str, str], new: Mapping[str, str]) -> str:
    """Which parts of the fingerprint differ, in words."""
    changed = {k for k in old.keys() | new.keys() if old.get(k) != new.get(k)}
    if changed & _FROM_CONFIG:
        changed.discard("render")
    how = "as a site" if new.get("is_mkdocs") == "true" else "as plain notes"
    return "; ".join(
        _PARTS[key].format(
            old=old.get(key, "the default"), new=new.get(key, "the default"), how=how
        )
        for key in sorted(changed, key=list(_PARTS).index)
    )


def stale_anchor_paths(store: Store, rendered: Mapping[str, RenderedPage]) -> set[str]:
    """Paths whose indexed anchors, URL or title differ from the ones a real build rendered."""
    if not rendered:
        return set()
    indexed: dict[str, set[str]] = {}
    urls: dict[str, str] = {}
    titles: dict[str, str] = {}
    for c in store.chunks():
        indexed.setdefault(c.path, set()).add(c.anchor)
        urls[c.path] = c.url
        titles[c.path] = c.heading_path[0] if c.heading_path else ""
    return {
        path
        for path, page in rendered.items()
        if urls.get(path) != page.url
        or {h.anchor for h in anchors.html_headings(page.html)} - indexed.get(path, set())
        # retitled by the build (a nav a plugin makes: literate-nav, awesome-pages)
        or (page.title and titles.get(path, shown_title(page)) != shown_title(page))
    }


def files_changed(store: Store, site: Site, settings: Settings) -> int:
    """How many indexed files were edited or are gone since the index was built: what
    `search`, `ask` and `eval` read from it is older than that. A file of the same size
    with another time is read and compared by content (``touch`` and a checkout that
    rewrites a file unchanged are no edit, as the next index run finds). New files are not
    counted (a blog's drafts are never indexed); a file indexed within seconds of its last
    write (its time ``UNSETTLED``) is compared by size alone."""
    boundary = vault.Boundary.of(settings)

    def same(f: vault.FileInfo, row: FileRow) -> bool:
        if f.size != row.size:
            return False
        if row.mtime_ns in (f.mtime_ns, UNSETTLED):
            return True
        try:
            data = boundary.read_bytes(site.root / f.path)
        except VaultError:
            return False
        return hashlib.sha1(data).hexdigest() == row.hash

    on_disk = {f.path: f for f in vault.scan(site, settings)[0]}
    return sum(
        1
        for path, row in store.files().items()
        if (f := on_disk.get(path)) is None or not same(f, row)
    )


def timeout_key(file_hash: str, parse_timeout: float) -> str:
    """The key a file that ran out of ``parse_timeout`` is remembered by: that content, under
    that limit."""
    return f"{file_hash}:{parse_timeout:g}"
