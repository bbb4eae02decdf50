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

from kb_qa.ingest import anchors, notebooks
from kb_qa.ingest.render import RenderedPage
from kb_qa.types import Chunk, Document, Outline, lead_in

# A heading the renderer gave no id (raw ``<h4>`` in the source) is no link target: it is
# kept as bold text, so it opens no section of its own.
_NO_ID_HEADING = re.compile(r"<h([1-6])(?![^>]*\sid=)(\s[^>]*)?>(.*?)</h\1>", re.S | re.I)


# Pygments' line numbers as a table beside the code (``linenums``): the code alone.
_LINENO_TABLE = re.compile(
    r'<table class="highlighttable">.*?<td class="code">(.*?)</td>\s*</tr>\s*</table>', re.S
)


# What Material and pymdownx render of a block's title: an admonition's, a collapsible
# block's (``<summary>``), a definition's term and an old-style tab's label. Each becomes
# the bold lead-in "**Title:**" that a page chunked from its source gets
# (``answer.blocks._flatten``), so an answer quotes a title with what it heads: "What is
# the retention horizon?" quoted "Retention horizon" alone, on a page built with the
# macros plugin (read from its HTML).
_TITLES = re.compile(
    r'<p class="admonition-title"[^>]*>(.*?)</p>|<summary[^>]*>(.*?)</summary>|<dt[^>]*>(.*?)</dt>'
    r'|<label for="__tabbed_[^"]*"[^>]*>(.*?)</label>',
    re.S,
)
_DEFINITION_LIST, _DEFINITION = re.compile(r"</?dl(?:\s[^>]*)?>"), re.compile(r"<dd(?:\s[^>]*)?>")
# pymdownx.tabbed's alternate style (Material's): the labels in a row of their own, then
# a block per tab; each block gets its label as a lead-in (the row read "DebianDocker").
_TAB_LABELS = re.compile(r'<div class="tabbed-labels[^"]*">(.*?)</div>', re.S)
_TAB_LABEL = re.compile(r"<label[^>]*>(.*?)</label>", re.S)
_DIV = re.compile(r'<div(?:\s+class="([^"]*)")?[^>]*>|</div>')
# Footnotes as their Markdown: a reference "[^1]" (not "points1"), and each note "[^1]: ..."
# without its back link, which ``answer.units`` never quotes as a lead-in or grows over.
_FOOTNOTE_REF = re.compile(
    r'<sup id="fnref\d*:([^"]+)"[^>]*>\s*<a class="footnote-ref"[^>]*>.*?</a>\s*</sup>', re.S
)
_FOOTNOTE = re.compile(r'<li id="fn:([^"]+)"[^>]*>\s*(?:<p>)?(.*?)(?:</p>)?\s*</li>', re.S)
_BACKREF = re.compile(r'(?:&#160;|\s)*<a class="footnote-backref"[^>]*>.*?</a>', re.S)
_FOOTNOTES = re.compile(r'<div class="footnote">\s*(?:<hr\s*/?>)?\s*<ol>(.*?)</ol>\s*</div>', re.S)
# An abbreviation (the ``abbr`` extension) is its word on the page, its meaning a tooltip:
# converted as is, Pi-hole's API page read "API (Application Programming Interface)" at
# every "API" it wrote.
_ABBR = re.compile(r"<abbr(?:\s[^>]*)?>(.*?)</abbr>", re.S)


# pymdownx.highlight names a block's language on its wrapper and writes its title above the
# code: read as is, the fence lost its language and the title stood as a bare line (a page
# with a snippet, read from its HTML, quoted "lumen.yaml" and an untyped fence)
_HIGHLIGHTED = re.compile(
    r'<div class="(?:language-([\w+#.-]+) )?highlight">\s*(?:<span class="filename">(.*?)</span>)?'
    r"\s*(<div>)?\s*<pre([^>]*)>(?:<span></span>)?<code>",
    re.S,
)
# ... with line numbers, in the table's header row: moved out before the table goes
_TABLE_TITLE = re.compile(
    r'(<table class="highlighttable">)\s*<tr>\s*<th[^>]*class="filename"[^>]*>\s*'
    r'(<span class="filename">.*?</span>)\s*</th>\s*</tr>',
    re.S,
)


def _highlighted(match: re.Match[str]) -> str:
    lang, title, inner, pre = match.groups()
    named = f' class="language-{lang}"' if lang else ""  # with pygments_lang_class only
    code = f'<div class="highlight">{inner or ""}<pre{pre}><code{named}>'
    return (_lead(title.strip()) if title else "") + code


def _lead_in(match: re.Match[str]) -> str:
    title = next(g for g in match.groups() if g is not None).strip()
    return _lead(title)


def _lead(title: str) -> str:
    """A title as a bold lead-in (``types.lead_in``: a colon unless it asks)."""
    return f"<p><strong>{lead_in(title)}</strong></p>" if title else ""


def _tabs_labelled(content: str) -> str:
    """Each tab block of an alternate-style tab set opened by its label; the labels' row gone.
    (A tab showing only images keeps its label, a word of the page: read from the HTML, what
    follows the set cannot be told from what the tab holds.)"""
    for row in reversed(list(_TAB_LABELS.finditer(content))):
        labels = [m.group(1) for m in _TAB_LABEL.finditer(row.group(1))]
        depth, blocks = 0, []  # where each block of the set's tabbed-content opens
        for tag in _DIV.finditer(content, row.end()):
            if tag.group(0).startswith("</"):
                depth -= 1
                if depth <= 0:
                    break
                continue
            depth += 1
            if depth == 2 and "tabbed-block" in (tag.group(1) or "").split():
                blocks.append(tag.end())
        for end, label in reversed(list(zip(blocks, labels, strict=False))):
            content = content[:end] + _lead(label.strip()) + content[end:]
        content = content[: row.start()] + content[row.end() :]
    return content


def _footnotes(content: str) -> str:
    def notes(block: re.Match[str]) -> str:
        return "".join(
            f"<p>[^{m.group(1)}]: {_BACKREF.sub('', m.group(2)).strip()}</p>"
            for m in _FOOTNOTE.finditer(block.group(1))
        )

    return _FOOTNOTES.sub(notes, _FOOTNOTE_REF.sub(r"[^\1]", content))


def html_to_markdown(content: str) -> str:
    """A page's content HTML as Markdown text: what the reader sees, in Markdown's form."""
    import html_to_markdown as h2m

    content = _ABBR.sub(r"\1", _NO_ID_HEADING.sub(r"<p><strong>\3</strong></p>", content))
    content = _LINENO_TABLE.sub(r"\1", _TABLE_TITLE.sub(r"\2\1", content))
    content = _HIGHLIGHTED.sub(_highlighted, content)
    content = _footnotes(_TITLES.sub(_lead_in, _tabs_labelled(content)))
    # A definition's text as the paragraphs under its term's lead-in.
    content = _DEFINITION_LIST.sub("", _DEFINITION.sub("<div>", content)).replace("</dd>", "</div>")
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
    # A notebook's page is its cells in ~620 KB of inlined CSS and JavaScript: the cells
    page = dataclasses.replace(page, html=notebooks.readable(page.html))
    rendered = anchors.html_headings(page.html)
    ids = {h.anchor for h in rendered}
    # The page's title as the build made it (its nav's, say, where a plugin builds the nav)
    title = shown_title(page)
    limits: dict[str, Any] = {"parse_timeout": parse_timeout, "warnings": warnings, "title": title}
    # A notebook's source is JSON: its text and places in the file are no reader's
    notebook = notebooks.is_notebook(doc.path)
    from_source = (
        [] if notebook else chunk_document(doc, md, chunk_chars, rendered, outline, **limits)
    )
    if not notebook and not page.transformed and ids <= {c.anchor for c in from_source}:
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
