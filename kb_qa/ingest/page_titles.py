"""A page's title as its site shows it: in the nav, in the browser's tab, and so first in
every heading path kb-qa cites ("SSL › Enabling and disabling verification").

MkDocs (1.6, and ProperDocs, its fork) takes, in this order (``Page.title``): the title the
``nav:`` gives the page, the front matter's ``title``, the page's first H1 when it is the
first thing on the page (Markdown ``#`` or setext; a raw ``<h1>`` is HTML, no heading, as
is an H1 after a paragraph or a comment), else a title made from the file name: "Home"
for the home page, "Index" for any other ``index.md`` or ``README.md``, dashes and
underscores as spaces, capitalised when all lower case.

Zensical (0.0.73, its ``Page.title`` and ``to_title``) takes the nav's title, the front
matter's, the first H1 anywhere on the page, else the file name: "Index" for every
``index.md`` (the home page too), "README" for a ``README.md``, and only an ASCII first
letter of an all lower case name capitalised ("éclair" stays "éclair").

A notes vault has no site: a note is titled by its front matter, its first H1, else its
file name as written, as Obsidian shows it (Logseq's "a___b" as its page "a/b").

A title is HTML where the theme shows it (MkDocs hands an H1's over escaped, a nav's as
written): kb-qa shows its text, as the theme's ``<title>`` does (``shown_text``).

Only ``nav:`` is read for titles; a nav the awesome-pages or literate-nav plugins build
from other files is not (a page it titles is titled as if the nav did not).
"""

from __future__ import annotations

import html
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from kb_qa.ingest import note_names
from kb_qa.types import Document

# A tag or a comment of a title written as HTML (bounded: a title of unclosed "<" is cheap)
_MARKUP = re.compile(r"<!--.{0,1000}?-->|</?[A-Za-z][^<>]{0,1000}>", re.S)


def shown_text(title: str) -> str:
    """A title written as HTML as its text: tags left out, entities decoded, blanks (a
    no-break space too) as one space. Pi-hole's nav titles a page ``'The
    &nbsp<samp>pihole</samp>&nbsp Command'``, which every citation label showed with its
    tags as text; the site shows "The pihole Command". A title without markup is as written."""
    if "<" not in title and "&" not in title:
        return title
    return " ".join(html.unescape(_MARKUP.sub("", title)).split())


def shown_html(title: str) -> str:
    """``shown_text`` escaped, as MkDocs hands over an H1's title (``RenderedPage.title``)."""
    return html.escape(shown_text(title), quote=False)


@dataclass(frozen=True)
class NavTitles:
    """What a site's ``nav:`` says about its pages' titles."""

    titles: dict[str, str] = field(default_factory=dict)  # doc path -> the nav's title
    in_section: frozenset[str] = frozenset()  # doc paths the nav lists inside a section

    def key(self, doc_path: str) -> str:
        """What the nav decides of this page's title, as one string ("" for nothing): when it
        changes, the page is chunked again although its file did not change."""
        title = self.titles.get(doc_path)
        if title is not None:
            return f"title:{title}"
        home = doc_path in ("index.md", "README.md") and doc_path in self.in_section
        return "home in a section" if home else ""  # "Index", not "Home" (file_title)


def read_nav(nav: object) -> NavTitles:
    """The titles a ``nav:`` (MkDocs' list, or Zensical's array of the same shape) gives its
    pages, as MkDocs reads it (``structure/nav.py``): ``- Title: page.md`` titles the page,
    ``- page.md`` leaves it its own title, ``- Section: [...]`` nests; the first entry of a
    page decides (a later ``- Other: page.md`` does not retitle it). External links, entries
    that are no page and values of any other type (``!ENV`` read as None) title nothing."""
    titles: dict[str, str | None] = {}
    in_section: set[str] = set()

    def visit(item: object, depth: int) -> None:
        if isinstance(item, list):
            for child in item:
                visit(child, depth)
        elif isinstance(item, dict):
            for key, value in item.items():
                if isinstance(value, str):
                    page(None if key is None else str(key), value, depth)
                elif isinstance(value, list | dict):
                    visit(value, depth + 1)  # a section
        elif isinstance(item, str):
            page(None, item, depth)

    def page(title: str | None, target: str, depth: int) -> None:
        # A link ("https://…", "/abs/") names no file of docs_dir, so it matches no page.
        doc_path = PurePosixPath(target.strip()).as_posix()
        titles.setdefault(doc_path, None if title is None else shown_text(title))
        if depth:
            in_section.add(doc_path)

    try:
        visit(nav, 0)
    except RecursionError:  # a nav nested past all reason titles nothing
        return NavTitles()
    return NavTitles({p: t for p, t in titles.items() if t is not None}, frozenset(in_section))


def file_title(doc_path: str, generator: str, in_section: bool = False) -> str:
    """The title a page gets from its file name, as ``generator`` ("mkdocs", "zensical")
    makes it (see the module's docstring); ``in_section``: the nav lists it in a section
    (MkDocs' home page is titled "Home" only at the top of the nav)."""
    folder, name = posixpath.split(doc_path)
    stem = posixpath.splitext(name)[0]
    if generator == "zensical":
        title = stem.replace("-", " ").replace("_", " ")
        first = title[:1]
        if title == title.lower() and first.isascii() and first.isalpha():
            return first.upper() + title[1:]
        return title
    if stem == "README":
        stem = "index"
    if stem == "index" and not folder and not in_section:
        return "Home"
    title = stem.replace("-", " ").replace("_", " ")
    return title.capitalize() if title.lower() == title else title


def page_title(doc: Document, h1: str) -> str:
    """The title that opens ``doc``'s heading paths: the nav's, else the front matter's,
    else ``h1`` (the H1 that titles the page by its generator's rule, "" for none), else
    the one from the file name (``Document.file_title``; a note's name as written)."""
    if doc.nav_title:
        return doc.nav_title
    if doc.title:
        return doc.title
    if h1:
        return h1
    if doc.note:  # its name as written (``own_title``: neither front matter nor H1 here)
        return own_title(doc, "")
    return doc.file_title or file_title(doc.doc_path, doc.generator)


def own_title(doc: Document, first_h1: str) -> str:
    """What the page calls itself: its front matter's title, else its first H1 wherever it
    stands, else its file name (``index.md`` and ``README.md`` by their folder's, "Home" at
    the top). Retrieval reads it where the site shows another title (``Chunk.own_title``)."""
    if doc.title or first_h1:
        return doc.title or first_h1
    stem = doc.doc_path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    if doc.note:  # Logseq's "Project Alpha___Runbook.md" is its page "Project Alpha/Runbook",
        # and its journals/2025_03_12.md is "Mar 12th, 2025"
        journal = note_names.journal_title(doc.doc_path)
        return journal or note_names.page_name(stem).strip() or "Home"
    if stem in ("index", "README"):
        parent = doc.doc_path.rsplit("/", 2)
        stem = parent[-2] if len(parent) > 1 else "Home"
    title = stem.replace("-", " ").replace("_", " ").strip()
    return (title.capitalize() if title == title.lower() else title) or "Home"
