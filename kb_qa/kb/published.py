"""The changed pages of an MkDocs site as its build publishes them: rendered with the site's
hooks and plugins (``kb_qa.ingest.render``), and only those the build lists.

A build leaves out more than ``exclude_docs`` says: a Material blog post marked
``draft: true``, the pages of a language mkdocs-static-i18n does not build (``build:
false``), files a plugin drops in ``on_files``. Indexed from their sources, they were quoted
(unpublished text) and cited at a URL the site does not have. Such a file is skipped with
``render_files.UNPUBLISHED`` and remembered as a failure of its content, so an unchanged
draft does not make every later run render the site again (a new config clears failures:
``Store.reset``).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace

from kb_qa.index.store import Store
from kb_qa.ingest import render, render_config, render_files, vault
from kb_qa.ingest.render import RenderedPage
from kb_qa.ingest.site import Site
from kb_qa.settings import Settings
from kb_qa.types import Document, IndexReport


@dataclass
class Published:
    """The changed files a build publishes, and those it left out that were indexed."""

    docs: list[Document] = field(default_factory=list)  # the changed files it publishes
    dropped: list[str] = field(default_factory=list)  # indexed before, left out now


def render_changed(
    site: Site, docs: Sequence[Document], settings: Settings, report: IndexReport
) -> tuple[dict[str, RenderedPage], set[str] | None]:
    """The changed pages of an MkDocs site as it renders them ({} for other vaults), and the
    vault paths of every page the build lists (None when that is not known)."""
    config_file = render_config.config_file(site, settings)
    if config_file is None or not docs:
        return {}, None
    wanted = {d.path for d in docs}
    run = render.render_pages(
        site.root,
        config_file,
        wanted.__contains__,
        skip_plugins=settings.skip_plugins,
        inside=vault.Boundary.of(settings).refuse,
        extensions=site.extensions,
        parse_timeout=settings.parse_timeout,
        site_url=site.site_url,
    )
    report.warnings += run.warnings
    return run.pages, run.listed


def published(
    docs: Sequence[Document],
    pages: Mapping[str, RenderedPage],
    listed: Collection[str] | None,
    known: Collection[str],
    store: Store,
    report: IndexReport,
) -> Published:
    """Split the changed files into those the build publishes and those it leaves out
    (skipped with ``render_files.UNPUBLISHED``; dropped from the index when it held them)."""
    result = Published()
    failed: dict[str, tuple[str, str]] = {}
    for doc in docs:
        if listed is None or doc.path in listed:
            page = pages.get(doc.path)
            result.docs.append(doc if page is None else replace(doc, url=page.url))
            continue
        report.skipped.append((doc.path, render_files.UNPUBLISHED))
        failed[doc.path] = (doc.file_hash, render_files.UNPUBLISHED)
        if doc.path in known:
            result.dropped.append(doc.path)
    if failed:
        store.set_failures(failed, cleared=())
    return result
