"""The nouns that flow between stages: documents -> chunks -> hits.

Every stage imports these types, never another stage's internals.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from kb_qa.settings import Settings


# How a tab's or admonition's title may end that needs no colon as a lead-in ("What are
# return codes?" read "What are return codes?:")
TITLE_ENDS = ("?", "!", ".", ":", "？", "！", "。", "：")


def lead_in(title: str) -> str:
    """A block's title as the words of its lead-in: with a colon, unless it ends as a
    question or a sentence does (``TITLE_ENDS``)."""
    return title if title.endswith(TITLE_ENDS) else f"{title}:"


ALSO_CALLED = "Also called: "  # the context line of a page's aliases (``Chunk.context``)


@dataclass(frozen=True)
class Heading:
    """A heading as MkDocs renders it: level, plain text and its ``id``."""

    level: int
    text: str
    anchor: str


@dataclass
class Outline:
    """A file's headings as the renderer gave them, keyed by the source headings.

    Rendering a page to learn its ids is the slowest part of chunking; when an edit leaves
    the sequence of source headings unchanged, the ids are too, so they are reused.
    """

    path: str
    key: str = ""  # hash of the (level, raw text) of every source heading, in order
    headings: list[Heading] = field(default_factory=list)


@dataclass(frozen=True)
class Document:
    """One Markdown file read from the vault, front matter already split off."""

    path: str  # vault-relative, POSIX separators, e.g. "docs/setup/index.md"
    doc_path: str  # relative to docs_dir, e.g. "setup/index.md"
    url: str  # page URL relative to the site root, e.g. "setup/"
    title: str
    source: str  # the whole file as decoded (offsets index into this)
    body_start: int  # offset of the first character after front matter
    file_hash: str
    size: int
    mtime_ns: int
    aliases: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()  # front matter's tags, without "#"
    note: bool = False  # from a notes vault (no site config): titled by its file name as written
    # How its site titles it (ingest/page_titles.py): the title its nav gives it, the one its
    # file name gives it, and whose rules pick its title ("mkdocs", "zensical"; "" for a note)
    nav_title: str = ""
    file_title: str = ""
    generator: str = ""


@dataclass(frozen=True)
class Chunk:
    """A piece of one heading section, with its address in the source file."""

    id: str
    path: str
    url: str  # page URL (no anchor)
    anchor: str  # heading id as rendered by MkDocs ("" for text before the first heading)
    heading: str
    heading_path: tuple[str, ...]  # page title > ... > heading
    level: int
    text: str  # original Markdown of this piece, exactly source[start:end]
    start: int  # character offsets into the decoded source file
    end: int
    line_start: int  # 1-based, inclusive
    line_end: int
    hash: str  # hash of the indexed text (heading path + body)
    piece: int = 0  # index of this piece within its section
    # Extra lines repeated in the indexed text: the page's aliases and tags (first piece),
    # a split table's header (always last)
    context: str = ""
    # The page's own title (front matter, first H1, file name) where its site shows another
    # (a nav title, heading_path[0]): what retrieval reads in its place (``indexed_path``)
    own_title: str = ""

    @property
    def link(self) -> str:
        """Page URL with the heading anchor."""
        return f"{self.url}#{self.anchor}" if self.anchor else self.url

    @property
    def also_called(self) -> str:
        """The page's other names (its front matter's aliases, comma-separated), on the
        piece whose ``context`` carries them (the page's first)."""
        for line in self.context.split("\n"):
            if line.startswith(ALSO_CALLED):
                return line.removeprefix(ALSO_CALLED)
        return ""

    @property
    def indexed_path(self) -> tuple[str, ...]:
        """The heading path as retrieval reads it: opening with the page's own title where
        its site shows another (``own_title``)."""
        if self.own_title and self.heading_path:
            return (self.own_title, *self.heading_path[1:])
        return self.heading_path

    @property
    def index_text(self) -> str:
        """What is embedded and keyword-indexed: heading path first, then the text."""
        head = " > ".join(self.indexed_path)
        parts = [head, self.context, self.text] if self.context else [head, self.text]
        return "\n".join(p for p in parts if p)


@dataclass(frozen=True)
class Hit:
    """A chunk found by a search, with its fused score and per-index ranks."""

    chunk: Chunk
    score: float
    vector_rank: int | None = None  # 1-based rank in the vector results
    keyword_rank: int | None = None  # 1-based rank in the keyword results
    similarity: float | None = None  # cosine similarity to the question, when vector-ranked
    # zscore fusion: the weighted sum of the hit's standardised scores; above 0 means better
    # than the average candidate, the hits that count as evidence for their page
    fused: float | None = None


@dataclass
class IndexReport:
    """What one index run did; printed by the CLI as its summary."""

    files: int = 0
    chunks: int = 0
    embedded: int = 0
    reused: int = 0
    deleted: int = 0
    changed_files: int = 0
    removed_files: int = 0  # indexed before, gone now (deleted, renamed, moved, refused)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    warnings: list[tuple[str, str]] = field(default_factory=list)  # (path, message)
    rebuilt: str = ""  # why the index was rebuilt from scratch, if it was
    repaired: str = ""  # what the self-check found missing in Chroma and put back
    model: str = ""  # the embedding model ``auto`` chose for a new index, and why (not MiniLM)
    seconds: float = 0.0
    # Where the time went: "reading", "chunking", "embedding" (model load included), "writing"
    phases: dict[str, float] = field(default_factory=dict)

    @property
    def spent(self) -> str:
        """The phases as people read them: "reading 0.0 s, chunking 0.2 s, …"."""
        return ", ".join(f"{name} {secs:.1f} s" for name, secs in self.phases.items())


class _Store(Protocol):
    def vectors_gone(self) -> bool: ...
    def intact(self) -> bool: ...


class Watched(Protocol):
    """What ``kb_qa.ingest.watch.Watcher`` uses of the ``KnowledgeBase`` it keeps current
    (ingest stands below kb_qa.kb, so it names the methods rather than the class)."""

    @property
    def settings(self) -> Settings: ...
    @property
    def store(self) -> _Store: ...
    def index(self, progress: Callable[[int, int], None] | None = None) -> IndexReport: ...
