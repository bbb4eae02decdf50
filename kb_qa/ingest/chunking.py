"""Markdown -> heading-anchored chunks with exact source offsets.

One section per heading. A section longer than ``chunk_chars`` is split on block
boundaries (paragraphs, list items, whole code blocks with their Material annotations,
table rows); every piece keeps the heading path, and a piece of a split table repeats the
table's header row. Pieces tile the section: nothing between two headings is lost.
"""

from __future__ import annotations

import bisect
import dataclasses
import hashlib
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import markdown
from markdown_it import MarkdownIt
from markdown_it.token import Token

from kb_qa.ingest import anchors, generators, mdx, notebooks
from kb_qa.ingest.code_annotations import annotation_lists
from kb_qa.ingest.containers import nested_headings, rendered_only
from kb_qa.ingest.fences import parsed_as_mkdocs
from kb_qa.ingest.page_titles import own_title, page_title
from kb_qa.text import as_shown
from kb_qa.types import ALSO_CALLED, Chunk, Document, Heading, Outline

# Deeply nested outlines are common in notes: the default nesting limit (20) swallowed every
# later heading. Only blocks are used: inline parsing is off (160 KB of '[' took it 11 s).
_PARSER = (
    MarkdownIt("commonmark", {"maxNesting": 100})
    .enable(["table", "strikethrough"])
    .disable("inline")
)


@dataclass(frozen=True)
class _Unit:
    """A run of source lines that must not be cut (a block, a list item, a table row)."""

    first: int  # 0-based line in the whole file, inclusive
    last: int  # exclusive
    kind: str = "block"
    # lines of a table's header (for its rows), or of a list item's first line (its sub-items)
    header: tuple[int, int] | None = None


@dataclass
class _Section:
    heading_line: int
    heading: Heading
    path: tuple[str, ...]
    units: list[_Unit]
    end_line: int = 0


def chunk_document(
    doc: Document,
    md: markdown.Markdown,
    chunk_chars: int,
    rendered: Sequence[Heading] | None = None,
    outline: Outline | None = None,
    *,
    parse_timeout: float = 0,
    warnings: list[str] | None = None,
    title: str = "",
) -> list[Chunk]:
    """Split one document into chunks; anchors match the site's rendered ids.

    ``rendered`` are the page's headings as a real MkDocs build produced them (the plugin
    passes ``page.toc``); without them the page is rendered here with ``md``, unless
    ``outline`` (the file's previous outline) shows the headings did not change. The
    outline is updated in place for the caller to store.

    A page that takes longer than ``parse_timeout`` CPU seconds to render (see
    ``kb_qa.ingest.deadline``) gets its ids from its headings rendered alone, with a note in
    ``warnings``; ``ParseTimeout`` when even that takes too long.

    ``title`` is the page's title as a real build gave it; without it, it is found as the
    site's generator finds it (``page_titles``).

    A Jupyter notebook is chunked only from its page as the site rendered it
    (``rendered_chunks``): without one (its render failed) ``notebooks.NotRendered``, as its
    JSON quoted as Markdown is no page a reader sees.
    """
    if rendered is None and notebooks.is_notebook(doc.path):
        raise notebooks.NotRendered
    body = doc.source[doc.body_start :]
    line_offset = doc.source.count("\n", 0, doc.body_start)
    tokens = parsed_as_mkdocs(_PARSER, body, site=bool(doc.generator))  # as MkDocs reads it
    lines = _line_starts(doc.source)
    n_lines = len(lines) - 1

    raw_headings = _headings(tokens, body, line_offset)
    # A heading in an admonition or tab is one of the page's (MkDocs renders its id): a
    # section of its own, cut at its line. Only where Python-Markdown renders the page.
    nested: set[int] = set()
    if doc.generator and doc.generator not in generators.HEADINGS:
        found = nested_headings(_PARSER, body, line_offset)
        nested, raw_headings = {line for line, _, _ in found}, sorted(raw_headings + found)
    key = hashlib.sha1(
        "\n".join(f"{level} {raw}" for _, level, raw in raw_headings).encode()
    ).hexdigest()
    if rendered is None and doc.generator in generators.HEADINGS:  # Docusaurus': GitHub's
        rendered = generators.HEADINGS[doc.generator]([(lvl, raw) for _, lvl, raw in raw_headings])
    if rendered is None and outline is not None and outline.key == key:
        rendered = outline.headings
    if rendered is None:
        rendered = anchors.page_headings(md, body, raw_headings, parse_timeout, warnings)
    if outline is not None:
        outline.key, outline.headings = key, list(rendered)
    resolved = anchors.assign([(lvl, raw) for _, lvl, raw in raw_headings], rendered, md)
    if nested:
        raw_headings, resolved, nested = rendered_only(raw_headings, resolved, rendered, nested)

    if doc.note:  # a note's headings as Obsidian shows them: "Call with Sam", not "[[…|Sam]]"
        resolved = [dataclasses.replace(h, text=as_shown(h.text)) for h in resolved]
    # MkDocs titles a page by its H1 only when the H1 opens the page (Zensical by any).
    opens = bool(tokens) and tokens[0].type == "heading_open" and tokens[0].tag == "h1"
    title, h1 = _title(doc, resolved, title, opens)
    sections = _sections(raw_headings, resolved, (line_offset, n_lines), (title, h1))
    _assign_units(sections, tokens, line_offset, nested)

    chunks: list[Chunk] = []
    seen: dict[str, int] = {}
    for section in sections:
        if section.heading.level == 0 and mdx.no_text(_span_text(doc.source, lines, section)):
            continue  # nothing but blank lines (or an MDX page's imports) before the first heading
        # Two sections can share an anchor (a heading the renderer gave no id, say): keep
        # chunk ids unique by numbering repeats.
        repeat = seen.get(section.heading.anchor, 0)
        seen[section.heading.anchor] = repeat + 1
        chunks.extend(_pieces(doc, section, lines, chunk_chars, repeat))
    # Front matter's aliases are other names of the page, its tags what it is filed under
    # (Obsidian searches both): make them findable.
    named = [f"{ALSO_CALLED}{', '.join(doc.aliases)}"] if doc.aliases else []
    named += [f"Tags: {', '.join(doc.tags)}"] if doc.tags else []
    if named and chunks:
        first = chunks[0]
        context = "\n".join(named + ([first.context] if first.context else []))
        chunks[0] = with_hash(dataclasses.replace(first, context=context))
    # Where the site shows another title (hatch's nav says "Advanced" of "# Advanced
    # environment configuration"), retrieval still reads the page's own: the words it is
    # asked about (a nav's short label lost real questions their section).
    own = own_title(doc, next((h.text for h in resolved if h.level == 1), ""))
    if own != title:
        chunks = [with_hash(dataclasses.replace(c, own_title=own)) for c in chunks]
    return chunks


def _line_starts(source: str) -> list[int]:
    starts = [0]
    for i, ch in enumerate(source):
        if ch == "\n":
            starts.append(i + 1)
    if starts[-1] != len(source):
        starts.append(len(source))
    return starts


def _headings(tokens: Sequence[Token], body: str, line_offset: int) -> list[tuple[int, int, str]]:
    """(file line, level, raw heading text) for every heading markdown-it sees."""
    found = []
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.map is not None:
            inline = tokens[i + 1]
            found.append((tok.map[0] + line_offset, int(tok.tag[1]), inline.content.strip()))
    return found


def _title(
    doc: Document, resolved: Sequence[Heading], built: str, opens: bool
) -> tuple[str, Heading | None]:
    """The page's title (``built``: the one a real build gave it, "" for none) and the H1
    that heading paths leave out, as the title already opens them (None for none).
    ``opens``: an H1 opens the page."""
    first_h1 = next((h for h in resolved if h.level == 1), None)
    titles_page = first_h1 is not None and (doc.generator != "mkdocs" or opens)
    title = built or page_title(doc, first_h1.text if first_h1 and titles_page else "")
    if first_h1 and not titles_page and first_h1.text != title:
        first_h1 = None  # an H1 after other text is a heading of the page, not its title
    return title, first_h1


def _sections(
    raw: Sequence[tuple[int, int, str]],
    resolved: Sequence[Heading],
    lines: tuple[int, int],
    titled: tuple[str, Heading | None],
) -> list[_Section]:
    """The page's sections; ``lines``: the body's first line and the file's line count;
    ``titled``: the page's title and the H1 its heading paths leave out (``_title``)."""
    line_offset, n_lines = lines
    title, first_h1 = titled
    sections = [_Section(line_offset, Heading(0, title, ""), (title,), [])]
    stack: list[Heading] = []
    for (line, level, _), heading in zip(raw, resolved):
        while stack and stack[-1].level >= level:
            stack.pop()
        stack.append(heading)
        # The page's first H1 is its title (or stands beside the nav's or front matter's,
        # read by retrieval as Chunk.own_title): the title already opens the path.
        names = [h.text for h in stack if h is not first_h1]
        sections.append(_Section(line, heading, (title, *names), []))
    for current, following in itertools.pairwise(sections):
        current.end_line = following.heading_line
    sections[-1].end_line = n_lines
    return sections


def _assign_units(
    sections: list[_Section], tokens: Sequence[Token], line_offset: int, cuts: set[int]
) -> None:
    """Attach each top-level block (split into items/rows where useful) to its section; a
    block holding a heading of ``cuts`` (in an admonition, read as code) is cut at its line."""
    starts = [s.heading_line for s in sections]
    # A code block's annotation list (tooltips inside the code on the page) is never cut
    # from it: a piece starting with it would quote a list the page does not show.
    notes = annotation_lists(tokens)
    joined = frozenset(notes.values())
    for i, tok in enumerate(tokens):
        if tok.level != 0 or tok.nesting == -1 or tok.map is None or tok.type == "heading_open":
            continue
        if i in joined:
            continue  # in its code block's unit
        first, last = tok.map[0] + line_offset, tok.map[1] + line_offset
        section = sections[max(0, bisect.bisect_right(starts, first) - 1)]
        if i in notes:
            last = (tokens[notes[i]].map or tok.map)[1] + line_offset
            section.units.append(_Unit(first, last))
            continue
        for unit in _split_block(tokens, i, first, last, line_offset, joined):
            for line in sorted(cut for cut in cuts if unit.first < cut < unit.last):
                section.units.append(dataclasses.replace(unit, last=line))
                section = sections[bisect.bisect_right(starts, line) - 1]
                unit = dataclasses.replace(unit, first=line)
            section.units.append(unit)


def _split_block(
    tokens: Sequence[Token],
    i: int,
    first: int,
    last: int,
    line_offset: int,
    whole: frozenset[int] = frozenset(),
) -> list[_Unit]:
    """A block as cuttable units: list items for lists, header + rows for tables. The lists
    opened at ``whole`` (code annotations) are not cut from what they follow."""
    tok = tokens[i]
    if tok.type in _LISTS:
        return _list_units(tokens, i, line_offset, whole=whole) or [_Unit(first, last)]
    if tok.type == "table_open":
        head = _children(tokens, i, "thead_open", 1)
        rows = _children(tokens, i, "tr_open", 2)
        if not head:
            return [_Unit(first, last)]
        h0, h1 = head[0][0] + line_offset, head[0][1] + line_offset
        h1 = max(h1, h0 + 2)  # header row + delimiter row
        units = [_Unit(first, h1, "table-head")]
        body_rows = [(a + line_offset, b + line_offset) for a, b in rows if a + line_offset >= h1]
        units += [_Unit(a, b, "row", (h0, h1)) for a, b in body_rows]
        return units
    return [_Unit(first, last)]


_LISTS = ("bullet_list_open", "ordered_list_open")


def _list_units(
    tokens: Sequence[Token],
    i: int,
    line_offset: int,
    parent: tuple[int, int] | None = None,
    whole: frozenset[int] = frozenset(),
) -> list[_Unit]:
    """The items of the list opened at ``i``; an item holding a list may be cut before each
    of its sub-items too (an outline: a day's journal, a Logseq page, where one item can
    outgrow a chunk), a sub-item carrying its parent's first line as context; not before
    those of a list opened at ``whole``."""
    units: list[_Unit] = []
    level = tokens[i].level
    for j in range(i + 1, len(tokens)):
        item = tokens[j]
        if item.level <= level:
            break  # the list closed
        if item.type != "list_item_open" or item.level != level + 1 or item.map is None:
            continue
        first, last = item.map[0] + line_offset, item.map[1] + line_offset
        units.append(_Unit(first, last, "item" if parent is None else "subitem", parent))
        for k in range(j + 1, len(tokens)):
            inner = tokens[k]
            if inner.level <= item.level:
                break  # the item closed
            if inner.type in _LISTS and inner.level == item.level + 1 and k not in whole:
                units += _list_units(tokens, k, line_offset, (first, first + 1), whole)
    return units


def _children(tokens: Sequence[Token], i: int, kind: str, level: int) -> list[tuple[int, int]]:
    """Line ranges of the direct children of type ``kind`` of the block opened at ``i``."""
    found = []
    depth = 0
    for tok in tokens[i:]:
        depth += tok.nesting
        if tok.type == kind and tok.level == level and tok.map is not None:
            found.append((tok.map[0], tok.map[1]))
        if depth == 0:
            break
    return found


def _pieces(
    doc: Document, section: _Section, lines: list[int], chunk_chars: int, repeat: int = 0
) -> list[Chunk]:
    """Group a section's units into pieces of at most ``chunk_chars`` (units are never cut)."""
    groups: list[list[_Unit]] = []
    current: list[_Unit] = []
    start_line = section.heading_line
    for unit in section.units:
        # The first piece starts at the heading line, so the heading counts toward its size.
        group_start = start_line if not groups else (current[0].first if current else unit.first)
        size = lines[min(unit.last, len(lines) - 1)] - lines[group_start]
        if current and size > chunk_chars:
            groups.append(current)
            current = []
        current.append(unit)
    if current:
        groups.append(current)
    if not groups:
        groups = [[]]

    chunks = []
    for n, group in enumerate(groups):
        first = section.heading_line if n == 0 else group[0].first
        last = groups[n + 1][0].first if n + 1 < len(groups) else section.end_line
        start, end = _trim(doc.source, lines[first], lines[min(last, len(lines) - 1)])
        context = ""
        header = group[0].header if group and group[0].kind in ("row", "subitem") else None
        if n > 0 and header:  # rows under their table's header, sub-items under their item
            context = doc.source[lines[header[0]] : lines[header[1]]].rstrip("\n")
        chunks.append(_make_chunk(doc, section, (n, repeat), (start, end), lines, context))
    return chunks


def _span_text(source: str, lines: list[int], section: _Section) -> str:
    last = len(lines) - 1
    return source[lines[min(section.heading_line, last)] : lines[min(section.end_line, last)]]


def _trim(source: str, start: int, end: int) -> tuple[int, int]:
    """Drop blank lines at the edges of a piece so its text starts and ends with content."""
    while end > start and source[end - 1] in " \t\r\n":
        end -= 1
    while start < end and source[start] in "\r\n":
        start += 1
    return start, end


def _make_chunk(
    doc: Document,
    section: _Section,
    numbers: tuple[int, int],
    span: tuple[int, int],
    lines: list[int],
    context: str,
) -> Chunk:
    start, end = span
    piece, repeat = numbers
    text = doc.source[start:end]
    heading = section.heading
    line_start = bisect.bisect_right(lines, start)
    line_end = line_start + text.count("\n")
    key = f"{doc.path}\0{heading.anchor}\0{piece}" + (f"\0{repeat}" if repeat else "")
    chunk = Chunk(
        id=hashlib.sha1(key.encode()).hexdigest()[:24],
        path=doc.path,
        url=doc.url,
        anchor=heading.anchor,
        heading=heading.text,
        heading_path=section.path,
        level=heading.level,
        text=text,
        start=start,
        end=end,
        line_start=line_start,
        line_end=line_end,
        hash="",
        piece=piece,
        context=context,
    )
    return with_hash(chunk)


def with_hash(chunk: Chunk) -> Chunk:
    """The chunk with its content hash (indexed text and address) filled in."""
    digest = hashlib.sha1(f"{chunk.index_text}\0{chunk.link}".encode()).hexdigest()
    return dataclasses.replace(chunk, hash=digest)
