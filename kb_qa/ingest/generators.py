"""Site generators whose config kb-qa reads without running it, and those it cannot read.

MkDocs, ProperDocs and Zensical sites are ``site.py``'s. Each module in ``READERS`` tells a
site of another generator by its config file and gives what ``site.Site`` holds of it
(``site_fields``): where its pages are, and ``routes``, the URL the generator publishes
each page at; ``HEADINGS`` gives the ids it writes on a page's headings. A folder of
another generator no reader knows is read as notes, with a warning (``unread_warning``):
a Sphinx site's citations opened ``source/retries.md``, a page its build never writes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from kb_qa.ingest import docusaurus, docusaurus_config, hugo, hugo_headings, mdbook, vitepress
from kb_qa.types import Heading


class Routes(Protocol):
    """Where a generator publishes each page."""

    def url(self, doc_path: str, text: str) -> str | None:
        """The page's URL relative to the site's root, percent-encoded; None for a page its
        build leaves out (a draft)."""


SiteFields = Callable[[Path], "dict[str, Any] | None"]
READERS: tuple[SiteFields, ...] = (
    docusaurus.site_fields,
    hugo.site_fields,
    mdbook.site_fields,
    vitepress.site_fields,
)
# A generator's heading ids, by ``Site.generator``: each source heading (level, Markdown
# text) as the page shows it, with its id
HEADINGS: dict[str, Callable[[Sequence[tuple[int, str]]], list[Heading]]] = {
    "docusaurus": docusaurus.headings,
    "mdbook": mdbook.headings,
    "mdbook" + mdbook.NO_SMART_PUNCTUATION: partial(mdbook.headings, smart=False),
    "vitepress": vitepress.headings,
    # Hugo's, by its autoHeadingIDType (hugo.GENERATORS) and typographer
    **{
        name + off: partial(hugo_headings.headings, id_type=kind, typographer=not off)
        for kind, name in hugo.GENERATORS.items()
        for off in ("", hugo.NO_TYPOGRAPHER)
    },
}
# Config files whose edit may move every page (a watch run starts on one); versions.json:
# `docusaurus docs:version 2.0` moves every page of docs/ from /docs/ to /docs/next/
CONFIG_FILES: tuple[str, ...] = (
    *docusaurus.CONFIG_FILES,
    docusaurus_config.VERSIONS_FILE,
    *hugo.CONFIG_FILES,
    *mdbook.CONFIG_FILES,
    *vitepress.CONFIG_FILES,
)


def site_fields(root: Path, version: str = "") -> dict[str, Any] | None:
    """What ``site.Site`` holds of the site at ``root`` (or whose docs folder it is) when one
    of ``READERS`` knows its generator; None otherwise. ``version`` (the ``site_version``
    setting) is the version read of a Docusaurus site that keeps several side by side (its
    released 1.0 in versioned_docs/); the other generators' sites keep one."""
    for read in READERS:
        versioned = read is docusaurus.site_fields
        fields = docusaurus.site_fields(root, version) if versioned else read(root)
        if fields is not None:
            return fields
    return None


# Generators kb-qa does not read, told by a file or folder only they keep at a site's root
# (or above a docs folder given alone): (name, marker, words one of which a marker file
# shared with other tools holds: a conf.py is Sphinx's when it names Sphinx, MyST or a theme)
_SPHINX = ("sphinx", "myst_parser", "html_theme")
UNREAD: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("Sphinx", "conf.py", _SPHINX),
    ("Sphinx", "source/conf.py", _SPHINX),
    ("Jekyll", "_config.yml", ()),
    ("Starlight", "astro.config.mjs", ("starlight",)),
    ("Starlight", "astro.config.ts", ("starlight",)),
)
# Folders a site keeps its pages in, given alone: the marker is looked for above them too
# (Starlight's pages are in src/content/docs, three folders below its config)
_PAGES_FOLDERS = ("docs", "src", "content", "source")


def unread_generator(root: Path) -> tuple[str, Path] | None:
    """The generator (its name and the file that tells it) of the site at ``root`` that kb-qa
    reads as a folder of notes, or None. A marker file that must say whose it is is read
    64 KB deep at most."""
    folders = [root]
    while folders[-1].name in _PAGES_FOLDERS and len(folders) < 4:
        folders.append(folders[-1].parent)
    for folder in folders:
        for name, marker, says in UNREAD:
            path = folder / marker
            if not path.exists() or path.is_symlink():
                continue
            if says and not _says(path, says):
                continue
            return name, path
    return None


def _says(path: Path, words: tuple[str, ...]) -> bool:
    try:
        with path.open("rb") as file:
            head = file.read(65536).lower()
    except OSError:
        return False
    return any(word.encode() in head for word in words)


def unread_warning(root: Path) -> str | None:
    """What ``kb-qa index`` says of a site kb-qa reads as notes although a generator builds
    it: its citations open the Markdown files (on ``kb-qa serve``'s /view), not its pages."""
    found = unread_generator(root)
    if found is None:
        return None
    name, marker = found
    return (
        f"{root} looks like a {name} site ({marker.name}): kb-qa does not know the URLs or "
        f"heading ids {name} publishes, so it reads the folder as notes and citations link to "
        "the Markdown files (kb-qa serve shows them at /view), not to the site's pages; kb-qa "
        "cites a site's pages for MkDocs, ProperDocs, Zensical, Docusaurus, Hugo, mdBook and "
        "VitePress"
    )
