"""A code fence never closed, read as MkDocs reads it: not a fence.

CommonMark (markdown-it, which kb-qa chunks with) runs a fence left open to the end of the
page, so every heading after it is code; Python-Markdown (MkDocs, Zensical, ProperDocs)
renders the opening line as text and every heading after it as a heading. A page saved
half-written (a writer's fence not closed yet) lost its later sections' offsets: their ids
matched nothing kb-qa had read, and the answers quoted the rendered HTML instead of the
page's bytes.

On a site, a paragraph of several lines over a ``---`` or ``===`` line is no heading either:
CommonMark makes it one (a merge's conflict markers do: "<<<<<<< HEAD / text / ======="),
Python-Markdown a paragraph and a rule; the chat cited an anchor the page did not have.
"""

from __future__ import annotations

import re

from markdown_it import MarkdownIt
from markdown_it.token import Token

__all__ = ["FENCE", "closes", "parsed_as_mkdocs"]

# A code fence's opening: three or more backticks or tildes
FENCE = re.compile(r"(`{3,}|~{3,})")

_UNDERLINE = re.compile(r"([=-][=\s-]*?)(\s*)$")


def parsed_as_mkdocs(parser: MarkdownIt, body: str, site: bool = True) -> list[Token]:
    """``parser``'s block tokens of ``body``, an opening fence with no closing one read as
    text (its fence characters blanked to spaces: every offset stays where it was) and, on a
    ``site``, a setext heading of more than one line read as a paragraph (its underline
    blanked)."""
    tokens = parser.parse(body)
    lines = body.split("\n")
    open_at = [t.map[0] for t in tokens if t.type == "fence" and t.map and _unclosed(t, lines)]
    underlines = [
        t.map[1] - 1
        for i, t in enumerate(tokens)
        if site
        and t.type == "heading_open"
        and t.markup in ("=", "-")
        and t.map
        and "\n" in tokens[i + 1].content
    ]
    if not (open_at or underlines):
        return tokens
    for at in open_at:
        line = lines[at]
        fence = line.lstrip(" >")[:3]  # ``` or ~~~ (a longer run keeps its tail as text)
        cut = line.index(fence)
        lines[at] = line[:cut] + " " * len(fence) + line[cut + len(fence) :]
    for at in underlines:  # the run of = or -, after any "> " or indent it stands in
        lines[at] = _UNDERLINE.sub(lambda m: " " * len(m.group(1)) + m.group(2), lines[at])
    return parser.parse("\n".join(lines))


def _unclosed(token: Token, lines: list[str]) -> bool:
    """Whether a fence token ran to the end of the text without its closing line."""
    start, end = token.map or (0, 0)
    if end < len(lines) - (lines[-1] == ""):
        return False  # it ended before the text did: closed
    last = lines[end - 1].strip(" >\r\t") if end - 1 > start else ""
    marker = token.markup[0] if token.markup else "`"
    return not (len(last) >= len(token.markup) and set(last) == {marker})


def closes(line: str, markup: str) -> bool:
    """Whether ``line`` closes a code block fenced with ``markup`` (the same fence, at least
    as long, alone on its line)."""
    end = line.strip()
    return len(end) >= len(markup) and set(end) == {markup[0]}
