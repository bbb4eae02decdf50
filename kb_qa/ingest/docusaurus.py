"""A Docusaurus site: where its docs are, the URL it gives each page, its heading ids.

Docusaurus' config is JavaScript (``docusaurus.config.js``/``.ts``/``.mjs``): it is never
run, only searched for options written as literals (``docusaurus_config``). Its docs plugin
routes a page at ``/<routeBasePath>/<slug>``: the slug is front matter's ``slug:``
(``/x`` from the route base, else from the page's folder), else the folder and the doc id
(front matter's ``id:``, else the file name without its number prefix ``01-``), and a
folder's ``index``/``README`` page is the folder's own. Heading ids are GitHub's
(github-slugger), or the ``{#id}`` (``{/* #id */}`` in newer Docusaurus) a heading ends with.

A site with released versions (``versions.json``) serves each under its own path
(``docusaurus_config.Versions``): docs/ at ``/docs/next/``, the last release, read from
``versioned_docs/version-1.0/``, at ``/docs/``. The ``site_version`` setting names the
version a server reads: docs/ by default.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from kb_qa.errors import ConfigError
from kb_qa.ingest.docusaurus_config import ASSUMED, Versions, route_base, without_comments
from kb_qa.ingest.front_matter import fields
from kb_qa.types import Heading

CONFIG_FILES = tuple(f"docusaurus.config.{ext}" for ext in ("js", "ts", "mjs", "mts", "cjs", "cts"))
MDX = ".mdx"
# What Docusaurus' docs plugin leaves out by default (partials "_x.mdx", "_folder/"), and
# MkDocs' "templates" folder (kb-qa's rule for any site) put back: it is a page's folder here.
EXCLUDED = ("_*", "!/templates/")
NOT_HERE = (
    "an MDX page: kb-qa reads .mdx files on a Docusaurus site only (a docusaurus.config.js, "
    ".ts or .mjs beside the docs folder, or above it); give kb-qa that site's folder"
)
DEV_ADDR = "localhost:3000"  # `docusaurus start`'s preview, whose chat kb-qa serve allows
_NUMBER_PREFIX = re.compile(r"^\d+\s*[-_.]+\s*(?=[^-_.\s])")
# "## Requirements {#requirements}" and MDX's comment form "## Requirements {/* #req */}"
_EXPLICIT_ID = re.compile(r"\s*\{(?:#([^{}\s]+)|/\*\s*#([^{}\s]+)\s*\*/)\}\s*$")
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
# Emphasis: "*" anywhere, "_" only at a word's edges: CommonMark never reads an "_" inside a
# word as emphasis ("## Snake_case_name" shows as written, and is #snake_case_name)
_EMPHASIS = re.compile(r"(\*{1,3})(?=\S)(.+?)(?<=\S)\1|(?<!\w)(_{1,3})(?=\S)(.+?)(?<=\S)\3(?!\w)")
_TAG = re.compile(r"</?[A-Za-z][^<>]*>")


@dataclass(frozen=True)
class Routes:
    """Where a Docusaurus site serves its docs: ``base`` is routeBasePath without its
    slashes ("docs" by default, "" for ``routeBasePath: '/'``)."""

    base: str = "docs"

    def url(self, doc_path: str, text: str) -> str | None:
        """The page's URL relative to the site's root (its ``baseUrl``), as Docusaurus
        routes it; None for a draft, which a production build leaves out."""
        meta = fields(text)  # invalid YAML is reported when the page's title is read
        if meta.get("draft") is True:
            return None
        folder, name = posixpath.split(doc_path)
        stem = posixpath.splitext(name)[0]
        folder = "/".join(_NUMBER_PREFIX.sub("", part) for part in folder.split("/") if part)
        slug = str(meta.get("slug") or "").strip()
        if slug.startswith("/"):
            route = slug
        elif slug:
            route = posixpath.normpath(posixpath.join("/", folder, slug))
            route += "/" if slug.endswith("/") and route != "/" else ""
        elif stem.lower() in ("index", "readme", folder.rsplit("/", 1)[-1].lower() or "index"):
            route = f"/{folder}/" if folder else "/"
        else:
            doc_id = str(meta.get("id") or _NUMBER_PREFIX.sub("", stem))
            route = posixpath.join("/", folder, doc_id)
        path = posixpath.join(self.base, route.lstrip("/")) if self.base else route.lstrip("/")
        return quote(path)


def config_of(root: Path) -> Path | None:
    """The Docusaurus config of the site at ``root``, or of the site whose docs folder
    ``root`` is (its config in the folder above); None for another folder."""
    for folder in (root, root.parent) if root.name == "docs" else (root,):
        found = next((folder / n for n in CONFIG_FILES if (folder / n).is_file()), None)
        if found is not None:
            return found
    return None


def site_fields(root: Path, version: str = "") -> dict[str, Any] | None:
    """What ``site.Site`` holds of the Docusaurus site at ``root`` (None when it is none):
    of its ``version`` (the ``site_version`` setting) when it keeps released versions."""
    config = config_of(root)
    if config is None:
        return None
    docs_dir = root if config.parent != root else root / "docs"
    warnings: list[str] = []
    if not docs_dir.is_dir():
        raise ConfigError(
            f"{config} is a Docusaurus config, but {docs_dir} is no folder: kb-qa reads the "
            "docs from docs/ beside the config. Give kb-qa the folder holding both."
        )
    text = ""
    if config.parent != root:  # the docs folder given: its config is outside the vault, unread
        warnings.append(
            f"{config} is outside the vault, and kb-qa reads nothing outside it: give kb-qa "
            f"{config.parent} to read its routeBasePath; meanwhile {ASSUMED}"
        )
    else:
        try:
            text = without_comments(config.read_text(encoding="utf-8", errors="replace"))
        except OSError as exc:
            warnings.append(f"{config.name} cannot be read ({exc.strerror or exc}); {ASSUMED}")
    base = route = route_base(text, config.name, warnings)
    if config.parent == root:  # versions.json beside the config: the version to read
        versions = Versions.of(root, text, config.name, warnings)
        read = versions.to_read(version)
        docs_dir = versions.folder(root, read)
        base = versions.url_base(route, read)
        warnings += versions.unreleased_note(read, route)
    return {
        "docs_dir": docs_dir,
        "is_mkdocs": True,  # a site with a config: citations open its pages
        "generator": "docusaurus",
        "config_name": config.name,
        "dev_addr": DEV_ADDR,
        "exclude_patterns": EXCLUDED,
        "routes": Routes(base),
        "warnings": warnings,
    }


def headings(raw: Sequence[tuple[int, str]]) -> list[Heading]:
    """Each source heading (level, Markdown text) with its text as shown and the id
    Docusaurus gives it: its explicit ``{#id}``, else github-slugger's slug of its text,
    numbered -1, -2 when repeated on the page."""
    seen: dict[str, int] = {}
    found = []
    for level, source in raw:
        explicit = _EXPLICIT_ID.search(source)
        text = plain(source[: explicit.start()] if explicit else source)
        anchor = (explicit.group(1) or explicit.group(2)) if explicit else unique_slug(text, seen)
        found.append(Heading(level=level, text=text, anchor=anchor))
    return found


def plain(source: str) -> str:
    """A heading's Markdown as the text it shows: no images, links as their words, no code
    ticks, emphasis marks or HTML tags."""
    text = _LINK.sub(r"\1", _IMAGE.sub("", source))
    text = _EMPHASIS.sub(_emphasized, _TAG.sub("", text.replace("`", "")))
    return text.strip()


def _emphasized(match: re.Match[str]) -> str:
    return match.group(2) if match.group(1) else match.group(4)


def slug(text: str) -> str:
    """github-slugger's slug: lowercase, every character that is no letter, digit, mark,
    space, "-" or "_" removed, each space a "-"."""
    kept = (ch for ch in text.lower() if ch in " -_" or unicodedata.category(ch)[0] in "LNM")
    return "".join(kept).replace(" ", "-")


def unique_slug(text: str, seen: dict[str, int]) -> str:
    """``slug`` numbered as github-slugger numbers a repeat ("options-1")."""
    base = result = slug(text)
    while result in seen:
        seen[base] += 1
        result = f"{base}-{seen[base]}"
    seen[result] = 0
    return result
