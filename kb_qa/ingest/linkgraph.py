"""The links the docs make to their own sections: how often each section is pointed to,
and the words around those links.

A section the docs link to from elsewhere is one their authors consider the place for
that topic (a setting's reference entry, "Customization", "Troubleshooting"): maintainers
answering an issue point to the same sections. The line around a link also says, in
other words, what the target is about ("see [polling](…) if files are not picked up").
Both are read from the chunks' Markdown, with no rendering: ``[text](page.md#anchor)``,
URL links of rendered pages (``../page/#anchor``), reference definitions and Obsidian
``[[page#heading]]`` links. Only links to a section count: a link to a whole page says
nothing about its first section (counting them lifted every page's introduction).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import unquote

import numpy as np

from kb_qa.ingest import note_names
from kb_qa.ingest.anchors import match_text
from kb_qa.text import BLOCK_ID, WIKILINK, name_key
from kb_qa.types import Chunk

# Every repetition is bounded and a target holds no brackets or parentheses, so that text
# such as "[x](" repeated a million times is rejected in linear time.
_INLINE = re.compile(
    r"\[((?:[^\[\]]|\[[^\[\]]{0,300}\]){0,300})\]"  # [text], one level of nested [] allowed
    r"\(\s{0,10}<?([^()\[\]\s<>]{1,500})>?(?:\s{1,10}[\"'][^()]{0,300})?\)"  # (target "title")
)
_DEFINITION = re.compile(r"^ {0,3}\[([^\]\n]{1,300})\]:[ \t]{0,10}<?([^\s>]{1,500})", re.MULTILINE)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE = re.compile(r"`[^`\n]+`")
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)

Section = tuple[str, str]  # (path, anchor)


@dataclass(frozen=True)
class Link:
    """A link as written: a Markdown target (``wiki`` False) or an Obsidian link's page and
    heading, with the line that holds it."""

    wiki: bool
    target: str  # Markdown: the href; wikilink: the page ("" for the note itself)
    heading: str  # wikilink only
    line: str


@dataclass(frozen=True)
class Inbound:
    """Per chunk: how many other sections link to its section, and their link lines."""

    counts: np.ndarray  # float, one per chunk
    context: list[str]  # the lines holding those links, joined ("" when none)
    written: dict[str, list[Link]]  # every chunk's links, by chunk hash (reused on reload)


def inbound(chunks: Sequence[Chunk], written: Mapping[str, list[Link]] | None = None) -> Inbound:
    """Resolve every link in ``chunks`` to the section it points to and gather them.

    Reading links out of the text is most of the work; ``written`` (a previous
    ``Inbound.written``) supplies those of chunks unchanged since, so a reload after one
    edit reads one chunk again. Resolving them is redone: a target may have moved.
    """
    old = written or {}
    found = {c.hash: old[c.hash] if c.hash in old else _written(c.text) for c in chunks}
    sources: dict[Section, set[Section]] = {}
    lines: dict[Section, list[str]] = {}
    for origin, target, link in resolved(chunks, found):
        if origin not in sources.setdefault(target, set()):
            sources[target].add(origin)
            lines.setdefault(target, []).append(link.line)
    keys = [(c.path, c.anchor) for c in chunks]
    return Inbound(
        counts=np.array([len(sources.get(k, ())) for k in keys], dtype=np.float32),
        context=[" ".join(lines.get(k, ())) for k in keys],
        written=found,
    )


def resolved(
    chunks: Sequence[Chunk], written: Mapping[str, list[Link]] | None = None
) -> Iterator[tuple[Section, Section, Link]]:
    """Every link from one section to another: (origin, target, the link as written).

    ``written`` maps chunk hashes to their links (read from the text when missing).
    """
    resolve = Resolver(chunks)
    found = written or {}
    for chunk in chunks:
        origin = (chunk.path, chunk.anchor)
        links = found[chunk.hash] if chunk.hash in found else _written(chunk.text)
        for link in links:
            target = (
                resolve.wikilink(chunk, link.target, link.heading)
                if link.wiki
                else resolve.target(chunk, link.target)
            )
            if target is not None and target != origin:
                yield origin, target, link


def pages_linked(chunk: Chunk, markdown: str, among: Sequence[Chunk]) -> set[str]:
    """The pages of ``among`` (other than ``chunk``'s) that ``markdown``, a passage of
    ``chunk``, links to."""
    resolver = Resolver(among)
    pages: set[str] = set()
    for link in _written(markdown):
        if link.wiki:
            path = resolver.note(chunk.path, link.target)
        else:
            found = resolver.address(chunk, link.target)
            path = found[0] if found is not None else None
        if path is not None and path != chunk.path:
            pages.add(path)
    return pages


def _prose(text: str) -> str:
    """``text`` without fenced code blocks (line by line: an unclosed fence runs to the end)."""
    kept: list[str] = []
    fence = ""
    for line in text.split("\n"):
        opening = _FENCE.match(line)
        if fence:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                if not line.strip().lstrip(fence[0]):
                    fence = ""
            continue
        if opening:
            fence = opening.group(1)
            continue
        kept.append(line)
    return "\n".join(kept)


def _written(markdown: str) -> list[Link]:
    """The links in ``markdown``'s prose (code, fenced or inline, is left out)."""
    text = _CODE.sub(" ", _prose(markdown))
    found = [
        Link(False, m.group(2), "", _line(text, m.start(), m.end()))
        for m in [*_INLINE.finditer(text), *_DEFINITION.finditer(text)]
    ]
    found += [
        Link(True, m.group(1) or "", m.group(2) or "", _line(text, m.start(), m.end()))
        for m in WIKILINK.finditer(text)
    ]
    return found


def _line(text: str, start: int, end: int) -> str:
    first = text.rfind("\n", 0, start) + 1
    last = text.find("\n", end)
    return text[first : last if last >= 0 else len(text)].strip()


class Resolver:
    """Link targets -> indexed sections, by file path, page URL or note name: what the
    ranking counts and what ``/view`` pages link to, so both follow a link to one place."""

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        self.sections: set[Section] = set()
        self.paths: set[str] = set()
        self.by_url: dict[str, str] = {}
        self.by_stem: dict[str, list[str]] = {}
        self.by_heading: dict[tuple[str, str], str] = {}
        # Per page, each section's heading path as keys, for ``[[note#parent#heading]]``
        self.trails: dict[str, list[tuple[tuple[str, ...], str]]] = {}
        titles: dict[str, str] = {}
        for c in chunks:
            self.sections.add((c.path, c.anchor))
            if c.path not in self.paths:
                self.paths.add(c.path)
                self.by_url.setdefault(unquote(c.url).strip("/"), c.path)
                self.by_stem.setdefault(name_key(note_names.stem(c.path)), []).append(c.path)
                titles[c.path] = c.indexed_path[0] if c.heading_path else ""
            if c.level > 0:
                self.by_heading.setdefault((c.path, match_text(c.heading)), c.anchor)
                trail = tuple(match_text(h) for h in c.heading_path)
                self.trails.setdefault(c.path, []).append((trail, c.anchor))
            for m in BLOCK_ID.finditer(c.text) if "^" in c.text else ():
                # [[note#^id]]: the section holding that block
                self.by_heading.setdefault((c.path, "^" + m.group(1).lower()), c.anchor)
        # Logseq's namespaced pages and titles, Zettelkasten IDs (``note_names``)
        self.by_name = note_names.by_other_name(titles.items())

    def target(self, chunk: Chunk, href: str) -> Section | None:
        found = self.address(chunk, href)
        return self._section(*found) if found is not None else None

    def address(self, chunk: Chunk, href: str) -> tuple[str, str] | None:
        """The indexed page ``href`` (written in ``chunk``) points to, and its fragment."""
        if _SCHEME.match(href) or href.startswith("//"):
            return None
        page, _, anchor = unquote(href).partition("#")
        path = self.page(chunk, page) if page else chunk.path
        return (path, anchor) if path is not None else None

    def page(self, chunk: Chunk, page: str) -> str | None:
        page = page.split("?", 1)[0]
        if page.endswith(".md"):
            if page.startswith("/"):
                return None  # a path from the site's docs root: rare, and ambiguous here
            return self.beside(chunk.path, page)
        # A URL, relative to the page's own URL (what rendered pages link with); page URLs
        # are percent-encoded as MkDocs writes them, the table's keys and ``page`` are not.
        url = unquote(chunk.url)
        base = url if url.endswith("/") or not url else posixpath.dirname(url)
        url = page.lstrip("/") if page.startswith("/") else posixpath.join(base, page)
        url = posixpath.normpath(url).strip("/")
        url = "" if url == "." else url.removesuffix("index.html").removesuffix(".html").strip("/")
        return self.by_url.get(url) or self.by_url.get(url + ".html")

    def beside(self, here: str, page: str) -> str | None:
        """The indexed file a relative path ``page``, written in the file at ``here``, names."""
        path = posixpath.normpath(posixpath.join(posixpath.dirname(here), page))
        return path if path in self.paths else None

    def _section(self, path: str, anchor: str) -> Section | None:
        if not anchor:  # a link to a whole page says nothing about its first section
            return None
        return (path, anchor) if (path, anchor) in self.sections else None

    def note(self, here: str, page: str) -> str | None:
        """The note an Obsidian link's ``page``, written in the note at ``here``, names
        (``here`` when empty), as Obsidian resolves it: by file name, or by the end of its
        path (``[[folder/Name]]``), in any case and Unicode form; of several notes with that
        name, the one in the linking note's folder, else the one nearest the vault's top
        (then the first by path)."""
        name = page.strip()
        if not name:
            return here
        name = name_key(name).removesuffix(".md")
        if "/" in name and name in self.by_name:  # Logseq's "Project Alpha/Runbook"
            return self.by_name[name]
        paths = self.by_stem.get(name.rsplit("/", 1)[-1], [])
        if "/" in name:
            # the path as the stem was taken: without its extension (.md, .markdown)
            paths = [
                p for p in paths if ("/" + name_key(posixpath.splitext(p)[0])).endswith("/" + name)
            ]
        if not paths:
            return self.by_name.get(name)
        folder = posixpath.dirname(here)
        return min(paths, key=lambda p: (posixpath.dirname(p) != folder, p.count("/"), p))

    def heading(self, path: str, heading: str) -> str | None:
        """The anchor of ``heading`` (or of the section holding block ``^id``) in ``path``."""
        key = heading.strip()
        if key.startswith("^"):
            return self.by_heading.get((path, key.lower()))
        parts = [match_text(p) for p in key.split("#") if p.strip()]
        if len(parts) > 1:  # Obsidian's [[note#parent#heading]]: the heading under its parents
            for trail, anchor in self.trails.get(path, ()):
                if trail[-1] == parts[-1] and _in_order(parts[:-1], trail[:-1]):
                    return anchor
        return self.by_heading.get((path, parts[-1] if parts else ""))

    def wikilink(self, chunk: Chunk, page: str, heading: str) -> Section | None:
        path = self.note(chunk.path, page)
        if path is None or not heading.strip():
            return None
        anchor = self.heading(path, heading)
        return (path, anchor) if anchor is not None else None


def _in_order(wanted: Sequence[str], trail: Sequence[str]) -> bool:
    """Whether ``wanted`` occur in ``trail`` in that order (others may come between)."""
    rest = iter(trail)
    return all(any(w == t for t in rest) for w in wanted)
