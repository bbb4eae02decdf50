"""``chunk_rendered`` turns one rendered page into chunks.

A page whose rendering adds nothing to its source is chunked from the source (offsets and
lines into the file); any other page from its HTML, converted to Markdown, with each
heading's id as rendered and each section's lines in the file where the section has a
heading there (generated text keeps its URL only).
"""

from __future__ import annotations

import dataclasses
import html
import re
from typing import Any

import markdown

from kb_qa.ingest import anchors
from kb_qa.ingest.render import RenderedPage
from kb_qa.types import Chunk, Document, Outline

# A heading the renderer gave no id (raw ``<h4>`` in the source) is no link target: it is
# kept as bold text, so it opens no section of its own.
_NO_ID_HEADING = re.compile(r"<h([1-6])(?![^>]*\sid=)(\s[^>]*)?>(.*?)</h\1>", re.S | re.I)


# Pygments' line numbers as a table beside the code (``linenums``): the code alone.
_LINENO_TABLE = re.compile(
    r'<table class="highlighttable">.*?<td class="code">(.*?)</td>\s*</tr>\s*</table>', re.S
)


def html_to_markdown(content: str) -> str:
    """A page's content HTML as Markdown text: what the reader sees, in Markdown's form."""
    import html_to_markdown as h2m

    content = _NO_ID_HEADING.sub(r"<p><strong>\3</strong></p>", content)
    content = _LINENO_TABLE.sub(r"\1", content)
    options = h2m.ConversionOptions(
        exclude_selectors=[".headerlink", ".linenos", ".linenodiv", "script", "style"],
        skip_images=True,
        extract_metadata=False,
        autolinks=False,
    )
    return h2m.convert(content, options).content or ""


def shown_title(page: RenderedPage) -> str:
    """The page's title as its build shows it (MkDocs hands it over HTML-escaped)."""
    return html.unescape(page.title)


def chunk_rendered(
    doc: Document,
    page: RenderedPage,
    md: markdown.Markdown,
    chunk_chars: int,
    outline: Outline | None = None,
    *,
    parse_timeout: float = 0,
    warnings: list[str] | None = None,
) -> list[Chunk]:
    """Chunks of one rendered page (see the module's docstring), at the page's own URL;
    ``parse_timeout`` and ``warnings`` as for ``chunk_document``."""
    from kb_qa.ingest.chunking import chunk_document, with_hash

    doc = dataclasses.replace(doc, url=page.url)
    rendered = anchors.html_headings(page.html)
    ids = {h.anchor for h in rendered}
    # The page's title as the build made it (its nav's, say, where a plugin builds the nav)
    title = shown_title(page)
    limits: dict[str, Any] = {"parse_timeout": parse_timeout, "warnings": warnings, "title": title}
    from_source = chunk_document(doc, md, chunk_chars, rendered, outline, **limits)
    if not page.transformed and ids <= {c.anchor for c in from_source}:
        return from_source
    # The HTML, with each section's place in the file where its heading is in the file.
    text = html_to_markdown(page.html)
    shown = dataclasses.replace(doc, source=text, body_start=0)
    chunks = chunk_document(shown, md, chunk_chars, rendered, **limits)
    origin: dict[str, tuple[int, int, int, int]] = {}
    for c in from_source:
        if c.anchor not in ids and c.anchor:
            continue
        first = origin.get(c.anchor, (c.start, c.end, c.line_start, c.line_end))
        origin[c.anchor] = (first[0], c.end, first[2], c.line_end)
    result: list[Chunk] = []
    section: Chunk | None = None  # the last chunk that opened one of the page's sections
    for c in chunks:
        if c.anchor in ids or c.anchor == "":
            section = c
        else:
            # A heading of the converted text that is not one of the page's (a line that
            # reads like Markdown heading syntax) belongs to the section around it.
            if section is None:  # before the first heading: the page's opening text
                opening = c.heading_path[:1]
                section = dataclasses.replace(
                    c, anchor="", heading=opening[0], heading_path=opening, level=0
                )
            c = dataclasses.replace(
                c, heading=section.heading, heading_path=section.heading_path, level=section.level
            )
        start, end, line_start, line_end = origin.get(section.anchor, (0, 0, 0, 0))
        c = dataclasses.replace(
            c, anchor=section.anchor, start=start, end=end, line_start=line_start, line_end=line_end
        )
        result.append(with_hash(c))
    return _unique_ids(result)


def _unique_ids(chunks: list[Chunk]) -> list[Chunk]:
    """Chunk ids stay unique after a stray heading was folded into its section."""
    seen: set[str] = set()
    result = []
    for c in chunks:
        cid, n = c.id, 1
        while cid in seen:
            cid, n = f"{c.id}~{n}", n + 1
        seen.add(cid)
        result.append(c if cid == c.id else dataclasses.replace(c, id=cid))
    return result
