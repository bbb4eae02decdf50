"""Heading ids exactly as MkDocs renders them.

Slug rules differ per site (toc ``slugify``, ``separator``, ``attr_list`` ids, numbering of
duplicates, extensions that reshape heading text), so rather than re-implementing them we
render the page with Python-Markdown configured like the site and read the ids back, then
line them up with the headings markdown-it found in the source.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Sequence

import markdown

from kb_qa.types import Heading

_HEADING_RE = re.compile(r"<h([1-6])(\s[^>]*)?>(.*?)</h\1>", re.DOTALL | re.IGNORECASE)
_ID_RE = re.compile(r'\sid="([^"]*)"')
_TAG_RE = re.compile(r"<[^>]+>")
LOOKAHEAD = 6


def rendered_headings(md: markdown.Markdown, body: str) -> list[Heading]:
    """Render ``body`` and return its headings in page order with their ids."""
    md.reset()
    out = md.convert(body)
    headings = []
    for match in _HEADING_RE.finditer(out):
        attrs = match.group(2) or ""
        id_match = _ID_RE.search(attrs)
        text = html.unescape(_TAG_RE.sub("", match.group(3))).strip()
        anchor = html.unescape(id_match.group(1)) if id_match else ""
        headings.append(Heading(level=int(match.group(1)), text=text, anchor=anchor))
    return headings


def match_text(text: str) -> str:
    """A loose key for comparing heading text across Markdown renderers."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return "".join(ch for ch in text if ch.isalnum())


def assign(
    parsed: Sequence[tuple[int, str]], rendered: Sequence[Heading], md: markdown.Markdown
) -> list[Heading]:
    """Give each source heading (level, raw text) the rendered heading it corresponds to.

    Headings are matched in order by text, then by position at the same level; one that
    the renderer did not produce (rare) gets an id computed the same way MkDocs would.
    """
    result: list[Heading] = []
    used = {h.anchor for h in rendered}
    j = 0
    for level, raw in parsed:
        key = match_text(raw)
        window = range(j, min(j + LOOKAHEAD, len(rendered)))
        found = next((k for k in window if match_text(rendered[k].text) == key), None)
        if found is None:
            found = next(
                (
                    k
                    for k in window
                    if rendered[k].level == level
                    and key
                    and (key in match_text(rendered[k].text) or match_text(rendered[k].text) in key)
                ),
                None,
            )
        if found is None and j < len(rendered) and rendered[j].level == level:
            found = j
        if found is not None:
            result.append(rendered[found])
            j = found + 1
            continue
        anchor = _unique(_single_heading_id(md, level, raw), used)
        used.add(anchor)
        result.append(Heading(level=level, text=_plain(raw), anchor=anchor))
    return result


def _single_heading_id(md: markdown.Markdown, level: int, raw: str) -> str:
    headings = rendered_headings(md, "#" * level + " " + raw)
    return headings[0].anchor if headings else ""


def _unique(anchor: str, used: set[str]) -> str:
    if anchor not in used:
        return anchor
    n = 1
    while f"{anchor}_{n}" in used:
        n += 1
    return f"{anchor}_{n}"


def _plain(raw: str) -> str:
    return re.sub(r"\s*\{[^}]*\}\s*$", "", raw).strip()
