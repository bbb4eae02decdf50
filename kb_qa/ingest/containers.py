"""Headings inside admonitions, collapsible blocks and content tabs, found where MkDocs
finds them.

Python-Markdown reads the indented body of ``!!! note``, ``??? tip`` and ``=== "Tab"`` as
Markdown of its own, so ``    ### Before Upgrading`` inside a warning is an ``<h3 id>`` on
the page (Mealie's upgrade guide; Pi-hole's API page has one per tab); CommonMark, which
kb-qa chunks with, reads that indented line as code. Unseen, such a heading's section was
read from the page's HTML with no place in the file: its citation pointed at the wrong
lines and the whole page was quoted re-rendered ("API (Application Programming
Interface)"). Here each body is read dedented, line for line, so a heading keeps its line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from markdown_it import MarkdownIt

from kb_qa.ingest.fences import FENCE, closes, parsed_as_mkdocs
from kb_qa.ingest.indents import columns, unindented
from kb_qa.types import Heading

__all__ = ["nested_headings", "rendered_only"]

# An admonition's, a collapsible block's (pymdownx.details) or a tab's (pymdownx.tabbed)
# first line, as their Python-Markdown extensions take it
_OPENER = re.compile(
    r'(?:!!!|\?\?\?\+?|===!?\+?)[ \t]*(?:[\w-]+(?:[ \t]+[\w-]+)*)?[ \t]*(?:"[^"\n]*")?[ \t]*'
)
_ANY_OPENER = re.compile(r"^[ \t]*(?:!!!|\?\?\?|===)", re.M)  # most pages: none, no second parse


def nested_headings(
    parser: MarkdownIt, body: str, line_offset: int = 0
) -> list[tuple[int, int, str]]:
    """(line of ``body`` + ``line_offset``, level, raw heading text) of each heading
    ``parser`` finds inside a container's body once the body is dedented, as
    Python-Markdown reads it."""
    if not _ANY_OPENER.search(body):
        return []
    lines = body.split("\n")
    view: list[str] = []
    inside: list[bool] = []
    stack: list[int] = []  # the content indent of each open container, outermost first
    fence = ""  # a code fence the line is in: an opener there is an example, not a block
    for line in lines:
        if line.strip():
            while stack and columns(line) < stack[-1] and not fence:
                stack.pop()
        strip = stack[-1] if stack else 0
        text = unindented(line, strip)
        inside.append(bool(stack))
        view.append(text)
        if fence:
            fence = "" if closes(text, fence) else fence
        elif opened := FENCE.match(text.lstrip(" \t")):
            fence = opened.group(1)
        elif columns(text) < 4 and _OPENER.fullmatch(text.strip(" \t\r")):
            stack.append(strip + columns(text) + 4)
    tokens = parsed_as_mkdocs(parser, "\n".join(view))
    found = []
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.map is not None and inside[tok.map[0]]:
            raw = tokens[i + 1].content.strip()
            found.append((tok.map[0] + line_offset, int(tok.tag[1]), raw))
    return found


def rendered_only(
    raw: Sequence[tuple[int, int, str]],
    resolved: Sequence[Heading],
    rendered: Sequence[Heading],
    nested: set[int],
) -> tuple[list[tuple[int, int, str]], list[Heading], set[int]]:
    """The source headings (``raw``, each with its ``resolved`` rendered heading) and the
    ``nested`` lines, but those nested ones the page has no id of: without the site's
    admonition or tab extension MkDocs shows the lines as code, and a section there cited
    an id no page has."""
    ids = {h.anchor for h in rendered if h.anchor}
    kept = [
        (line, h)
        for line, h in zip(raw, resolved, strict=True)
        if line[0] not in nested or h.anchor in ids
    ]
    lines = [line for line, _ in kept]
    return lines, [h for _, h in kept], nested & {line for line, _, _ in lines}
