"""Docusaurus' MDX markup read as the Markdown kb-qa already reads: its admonitions and tabs
as MkDocs' (``!!! note "Title"``, ``=== "Yarn"``), its imports and component tags as no text.

A Docusaurus page writes an admonition as ``:::tip[Title]`` (or ``:::tip Title``) … ``:::``
and content tabs as ``<Tabs>`` / ``<TabItem value="yarn" label="Yarn">`` … ``</TabItem>``;
quoted as written, an answer showed the ``:::`` lines, ``import Tabs from '@theme/Tabs';``
and the tags, and chose the lines around a note over the note. ``as_mkdocs`` rewrites them
line for line (the n-th line out comes from the n-th line in), so what an answer quotes is
still found in the file's own bytes; a fenced code block's lines are never touched.
"""

from __future__ import annotations

import re

from kb_qa.ingest import hugo

# Docusaurus' and VitePress' admonition types only ("::: details Title" is VitePress'
# collapsed block): "::: mypkg.client.Client" is mkdocstrings' directive on an MkDocs page
# (read as an admonition, every line after it was inside one).
_ADMONITION = re.compile(
    r"^([ \t]*):{3,}[ \t]*"
    r"(note|tip|info|warning|danger|caution|important|success|secondary|details)"
    r"(?![\w.-])[ \t]*(?:\[(.*)\]|(.*?))[ \t]*(?:\{[^{}]*\})?[ \t]*$",
    re.IGNORECASE,
)
_CLOSE = re.compile(r"[ \t]*:{3,}[ \t]*")
_TAB = re.compile(r"([ \t]*)<TabItem\b([^<>]*)>[ \t]*")
_LABEL = re.compile(r"""\b(label|value)=\{?(["'])(.*?)\2""")
_NO_TEXT = re.compile(
    r"[ \t]*(?:</?Tabs\b[^<>]*>|</TabItem>"
    r"|import[ \t]+(?:[\w*{}, \t]+[ \t]+from[ \t]+)?(['\"])[^'\"\n]+\1;?"
    r"|export[ \t]+(?:const|let|var|function|default)\b.*)[ \t]*"
)
_FENCE = re.compile(r"[ \t]*(`{3,}|~{3,})[ \t]*(\S*)")
# mdBook's {{#include file}}, {{#rustdoc_include file:anchor}}, {{#playground file}} and
# {{#title Text}}: the book shows the file's text (or nothing) there. They are not read
# (an answer quoted "{{#include ../listings/main.rs}}" as the code): a code block holding
# nothing else is no text at all. "\{{#include}}" is the book showing the directive itself.
_BOOK = re.compile(
    r"[ \t]*\{\{#(?:include|rustdoc_include|playground|playpen|title)\b[^{}\n]*\}\}[ \t]*"
)
# VitePress' "[[toc]]" (its table of contents goes there, no text of the page's own)
_TOC = re.compile(r"[ \t]*\[\[toc\]\][ \t]*", re.IGNORECASE)
MDX_BLOCK = "mdx-code-block"  # Docusaurus renders such a fence's content as MDX, not code


def as_mkdocs(markdown: str) -> str:
    """``markdown`` with Docusaurus' admonitions, tabs, imports and component tags written
    as MkDocs' markup (or blank lines), line for line; a CRLF line's CR stays where it was.
    Hugo's shortcode tags are no text either (``hugo.without_shortcodes``)."""
    markdown = hugo.without_shortcodes(markdown)
    if ":::" not in markdown and "<Tab" not in markdown and not _maybe_mdx(markdown):
        return markdown  # nothing of it: a plain Markdown page is returned as it is
    out: list[str] = []
    depth = 0  # admonitions and tabs open around the line
    fence = ""  # the fence of the code block the line is in
    mdx_fence = ""  # the fence of an mdx-code-block the line is in
    lines = markdown.split("\n")
    included: set[int] = set()  # the lines of code blocks holding only mdBook's includes
    for number, raw in enumerate(lines):
        line, cr = (raw[:-1], "\r") if raw.endswith("\r") else (raw, "")
        if number in included:
            line = ""
        elif fence:
            fence = "" if _closes(line, fence) else fence
            line = "" if fence and _BOOK.fullmatch(line) else line
        elif mdx_fence and _closes(line, mdx_fence):
            line, mdx_fence = "", ""
        elif opened := _FENCE.fullmatch(line):
            if opened.group(2) == MDX_BLOCK:
                line, mdx_fence = "", opened.group(1)
            elif block := _only_includes(lines, number, opened.group(1)):
                included.update(block)
                line = ""
            else:
                fence = opened.group(1)
        elif m := _ADMONITION.fullmatch(line):
            title = (m.group(3) if m.group(3) is not None else m.group(4)).strip()
            title = ' "{}"'.format(title.replace('"', "'")) if title else ""
            line = f"{m.group(1)}!!! {m.group(2).lower()}{title}"
            out.append("    " * depth + line + cr)
            depth += 1
            continue
        elif _CLOSE.fullmatch(line) or line.strip() == "</TabItem>":
            depth, line = max(0, depth - 1), ""
        elif m := _TAB.fullmatch(line):
            labels = dict((k, v) for k, _, v in _LABEL.findall(m.group(2)))
            label = (labels.get("label") or labels.get("value") or "Tab").replace('"', "'")
            out.append("    " * depth + f'{m.group(1)}=== "{label}"' + cr)
            depth += 1
            continue
        elif _NO_TEXT.fullmatch(line) or _BOOK.fullmatch(line) or _TOC.fullmatch(line):
            line = ""
        out.append(("    " * depth if line.strip() else "") + line + cr)
    return "\n".join(out)


def _maybe_mdx(markdown: str) -> bool:
    """Whether ``markdown`` may hold MDX's imports or code blocks, mdBook's includes or
    VitePress' ``[[toc]]``."""
    return any(
        m in markdown for m in ("import ", "export ", MDX_BLOCK, "{{#", "[[toc]]", "[[TOC]]")
    )


def _only_includes(lines: list[str], opening: int, markup: str) -> range | None:
    """The lines of the code block fenced with ``markup`` from line ``opening`` when it
    holds nothing but mdBook's includes (and blank lines), its fences included; else None."""
    end = next(
        (n for n in range(opening + 1, len(lines)) if _closes(lines[n], markup)), len(lines) - 1
    )
    body = [line.rstrip("\r") for line in lines[opening + 1 : end]]
    if any(_BOOK.fullmatch(line) for line in body) and all(
        _BOOK.fullmatch(line) or not line.strip() for line in body
    ):
        return range(opening, end + 1)
    return None


def _closes(line: str, markup: str) -> bool:
    """Whether ``line`` closes a code block fenced with ``markup``."""
    end = line.strip()
    return len(end) >= len(markup) and set(end) == {markup[0]}


def no_text(markdown: str) -> bool:
    """Whether ``markdown`` holds nothing a reader sees: blank lines, MDX imports and
    exports, component tags (a page's opening ``import Tabs from '@theme/Tabs';``)."""
    return not as_mkdocs(markdown).strip()
