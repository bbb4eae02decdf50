"""A section read as the blocks a reader sees: paragraphs, lists, code, tables, admonitions
and tabs, each with its reading text (what the extractive answer matches the question
against) and its verbatim Markdown (what it quotes).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.dollarmath import dollarmath_plugin

from kb_qa.answer import marks
from kb_qa.ingest import mdx
from kb_qa.ingest.code_annotations import annotation_lists
from kb_qa.ingest.fences import FENCE, closes
from kb_qa.ingest.indents import box_indent, columns, unindented
from kb_qa.text import (
    BLOCK_REF,
    as_shown,
    cjk_chars,
    is_properties,
    keyword_tokens,
    without_block_ids,
)
from kb_qa.types import lead_in
from kb_qa.verbatim import is_formula, verbatim_segments

MAX_CODE_CHARS = 2500  # a longer code block is left out (never cut)


# Only blocks are read: inline parsing is off (160 KB of '[' took it 11 s). A display
# formula opening a block ($$ on its line) is one block, as arithmatex reads it: a line of
# it starting "- E[X]^2" was a list of its own. Like arithmatex, none interrupts a paragraph.
_PARSER = (
    MarkdownIt("commonmark", {"maxNesting": 100})
    .enable(["table", "strikethrough"])
    .use(
        dollarmath_plugin,
        allow_labels=False,
        allow_space=False,
        allow_digits=False,
        allow_blank_lines=False,
    )
    .disable("inline")
)
_DEFINITION = re.compile(r":[ \t]{1,3}(?=\S)")
# Classes as Python-Markdown takes them: "!!! info inline end" is an "info" admonition
_CONTAINER = re.compile(
    r'^([ \t]*)(?:!!!|\?\?\?\+?|===\+?)[ \t]*([\w-]*(?:[ \t]+[\w-]+)*)[ \t]*(?:"([^"]*)")?\s*$'
)
# Every pattern run over a passage at answer time stops at the next opener and has a
# bounded reach: a page of unclosed "[", "<a" or blanks must not cost each answer that
# retrieves it seconds (unbounded, 80 KB of "[" took 19 s; tests/hostile/test_slow_markup.py).
_ATTRS = re.compile(r"[ \t]{0,32}\{[ \t]{0,32}(?:[#.:]|[\w-]{1,40}=)[^{}\n]{0,500}\}")
# A Python traceback's own words say where code ran, not what the docs say: its "most recent
# call last" and each frame's "File …, line 837, in" made httpx's 404 example the answer to
# "Can I call raise_for_status() and .json() in one line?". Its words are read without
# them; a frame's path and function name stay (".../pip/...", "raise_for_status").
_TRACEBACK_WORDS = re.compile(
    r"Traceback \(most recent call last\):|(?<![^ \t\n])File (?=\"[^\"\n]{0,500}\", line \d)"
    r"|(?<=\"), line \d+(?:, in (?:<module>)?)?"
)
_EMAIL_AUTOLINK = re.compile(r"<([\w.!#$%&'*+/=?^`{|}~-]{1,200}@[A-Za-z0-9.-]{1,250})>")
# A link's destination may hold balanced parentheses (".../wiki/Lisp_(programming_language)").
_DESTINATION = r"\((?:[^()\n]|\([^()\n]{0,500}\)){0,2000}\)"
# A code block of nothing but snippet includes (``--8<-- "docs/examples/app.py"``): the page
# shows the file it names; a site read from its source (its config would not load) has
# only the line, which a "how do I" answer quoted as the example.
# FastAPI's docs include their examples so too (mdx_include's "{* ../../docs_src/a.py hl[7] *}"
# and "{!> ../../docs_src/b.py!}"), in a paragraph or a code block of their own.
_INCLUDE_LINE = marks.INCLUDE_LINE
_SNIPPETS_ONLY = re.compile(rf"(?:{_INCLUDE_LINE}\n|[ \t]*\n)*(?:{_INCLUDE_LINE})?")
# A reference link's label ("[Static][textual.widgets.Static]", "[docs][1]", "[Foo][]"): no
# definition in the section (autorefs need none), Markdown shows it as typed; the page, words.
_LABEL = r"\[[^\[\]\n]{0,500}\]"
_IMAGE = re.compile(r"!\[[^\[\]]{0,500}\](?:" + _DESTINATION + "|" + _LABEL + ")")
_LINK = re.compile(r"(?<!!)\[([^\[\]]{1,500})\](?:" + _DESTINATION + "|" + _LABEL + ")")
# A code span or fence line while links are read (``_outside_verbatim``): its number in U+E000s
_HELD = "\ue000"
_HOLDING = re.compile(_HELD + r"(\d+)" + _HELD)
# A callout's first line, nested ones ("> > [!info]") too.
_CALLOUT = re.compile(r"^((?:[ \t]*>)+[ \t]*)\[!([A-Za-z-]+)\][+-]?[ \t]*(.*)$", re.M)
_PROSE = ("paragraph_open", "blockquote_open")
# A table's delimiter row, stripped ("|---|:--:|"); each cell's dashes keep its blanks apart.
_DELIMITER_ROW = re.compile(r"\|?(?:[ \t]*:?-+:?[ \t]*\|)*[ \t]*:?-+:?[ \t]*\|?")
_REFERENCE = "(…)"  # what a Logseq block reference reads as in an answer
_BODY = ("bullet_list_open", "ordered_list_open", "fence", "code_block", "table_open")


@dataclass(frozen=True)
class Block:
    """One top-level block of a section: its kind and its Markdown as it will be shown."""

    kind: str  # "prose", "math" (a display formula), "list", "code", "table"
    text: str
    tokens: frozenset[str]
    # Where the block is in the section's Markdown: character offsets of its first and
    # last source lines (what a citation of it highlights); a table's rows each have one,
    # and so do a list's items.
    span: tuple[int, int] = (0, 0)
    rows: tuple[tuple[int, int], ...] = ()
    # A code block's annotation list (ingest/code_annotations.py), as reading text: shown
    # under the code in an answer, its words counted as the block's, but not in ``span``:
    # the page shows it only as tooltips inside the code, nothing of it can be highlighted.
    notes: str = ""
    box: int = 0  # the top-level admonition or tab it is in (numbered from 1), 0 for none


def _flatten(markdown: str) -> tuple[str, list[int], list[int]]:
    """Admonitions and tabs become a bold lead-in and their dedented content; with it, the
    line of ``markdown`` each output line comes from. A CRLF line loses its CR: that is the
    file's line ending, not text to quote. A title ending as a question does ("What are
    return codes?") gets no colon; one over nothing but images (a tab "Output" showing a
    screenshot) is left out: it headed the paragraph after the tab. Docusaurus' ``:::note``
    and ``<TabItem label="Yarn">`` are read as MkDocs' are (``mdx``), its imports as no text."""
    markdown = mdx.as_mkdocs(markdown)
    out: list[str] = []
    origin: list[int] = []
    box: list[int] = []  # per output line: the top-level admonition or tab holding it (0: none)
    boxes = 0
    # Per open container: its content indent, and where its title is in ``out`` while it
    # holds no text yet (-1: none)
    stack: list[tuple[int, int, bool]] = []  # ..., and whether it is an admonition or tab
    fence = ""  # the fence of the code block the line is in: its lines are code, as written
    lazy = False  # in a definition's first paragraph, whose lines need no indent
    if boxed := box_indent(markdown):  # a section cut inside an admonition or tab: dedented
        stack.append((boxed, -1, False))

    def close() -> None:
        if (head := stack.pop()[1]) >= 0:
            del out[head : head + 2], origin[head : head + 2], box[head : head + 2]

    for number, line in enumerate(markdown.replace("\r\n", "\n").split("\n")):
        indent = columns(line)
        while stack and line.strip() and indent < stack[-1][0] and not (fence or lazy):
            close()
        strip = stack[-1][0] if stack else 0
        line = unindented(line, strip) if indent >= strip else line.lstrip(" \t")
        if fence:
            fence = "" if closes(line, fence) else fence
        elif opened := FENCE.match(line):
            fence = opened.group(1)
        elif m := _CONTAINER.match(line):
            kind = (m.group(2).split() or [""])[0]
            title = m.group(3) if m.group(3) is not None else kind.replace("-", " ").title()
            boxes += not any(boxed for *_, boxed in stack)
            stack.append((strip + columns(m.group(1)) + 4, len(out) if title.strip() else -1, True))
            if title := title.strip():
                out += [f"**{lead_in(title)}**", ""]
                origin += [number, number]
                box += [boxes, boxes]
            continue
        elif defined := _DEFINITION.match(line):
            # A definition list's ": text" (def_list; Paperless-ngx writes every setting so):
            # its text and the paragraphs indented under it, which CommonMark reads as code.
            line, lazy = line[defined.end() :], True
            stack.append((strip + 4, -1, False))
        lazy = lazy and bool(line.strip())
        if not fence and marks.unshown(line):
            line = ""  # a paragraph, list or table ends before it, as on the page
        if fence or marks.without_tags(_ATTRS.sub("", _IMAGE.sub("", line))).strip():
            stack[:] = [(at, -1, boxed) for at, _, boxed in stack]  # it holds text: its title stays
        out.append(line)
        origin.append(number)
        box.append(boxes if any(boxed for *_, boxed in stack) else 0)
    while stack:
        close()
    return "\n".join(out), origin, box


def reading_text(text: str) -> str:
    """Prose as plain reading text: links as their words, no HTML, no attribute lists.

    Code (inline spans and fenced blocks) and math (``$r = k[A][B]$``: its brackets are no
    link, its ``<`` no tag) are never touched: a quoted command keeps its
    ``<placeholders>``, entities, backslashes and brackets byte for byte, and a formula its
    every character.
    """
    return _outside_verbatim(text, _plain_prose).strip()


def _outside_verbatim(text: str, prose: Callable[[str], str]) -> str:
    """``prose`` run over ``text`` with its code and math held out: each code span, fence
    line and formula stands as a numbered mark while it runs and is put back byte for byte
    after, so that a link whose words are code ("[`Client`](api.md)", "[`httpx2`][httpx2]")
    is read whole. A text holding the mark itself has each run of prose read on its own."""
    parts = [
        (is_code, marks.code(part) if is_code else part)
        for is_code, part in verbatim_segments(text)
    ]
    if _HELD in text:
        return "".join(part if is_code else prose(part) for is_code, part in parts)
    code = [part.removesuffix("\n") for is_code, part in parts if is_code]
    numbers = itertools.count()
    held = "".join(
        f"{_HELD}{next(numbers)}{_HELD}" + "\n" * part.endswith("\n") if is_code else part
        for is_code, part in parts
    )
    return _HOLDING.sub(lambda m: code[int(m.group(1))], prose(held))


def _plain_prose(text: str) -> str:
    text = _CALLOUT.sub(_callout, as_shown(text))
    text = _IMAGE.sub("", text)
    text = _LINK.sub(r"\1", text)
    text = _ATTRS.sub("", text)
    text = marks.prose(marks.without_tags(_EMAIL_AUTOLINK.sub(r"\1", text)))
    if "((" in text:
        # A Logseq block reference shows the text of the block it points to, which only the
        # page's view (or the index as a whole) knows: "Reminder of the backup:
        # ((64f1a2b3-…))" was quoted with the raw id. The answer marks the place; the
        # citation opens the view, where the reference reads as its block.
        text = BLOCK_REF.sub(_REFERENCE, text)
    return without_block_ids(text)  # a "[12]" of the docs is quoted (extractive.literal)


def _callout(m: re.Match[str]) -> str:
    """An Obsidian callout's first line as a bold lead-in: "**note:** text", or with a
    title, "**note: Title**" over a quoted blank line, so its text is a paragraph of its own
    instead of running on from the title."""
    quote, kind, title = m.group(1), m.group(2), m.group(3).strip()
    if not title:
        return f"{quote}**{kind}:** "
    return f"{quote}**{kind}: {title}**\n{quote.rstrip()}"


def table_header(context: str) -> str:
    """The header row and delimiter row a chunk's ``context`` repeats for a table split
    across pieces ("" when it holds none; a table without outer pipes is not recognised,
    and its continued rows read as prose; a CRLF file's CRs left out)."""
    lines = [line.removesuffix("\r") for line in context.split("\n")]
    for i in range(len(lines) - 1, 0, -1):
        if _DELIMITER_ROW.fullmatch(lines[i].strip()) and lines[i - 1].lstrip().startswith("|"):
            return f"{lines[i - 1]}\n{lines[i]}"
    return ""


def passages(markdown: str, header: str = "") -> list[Block]:
    """The blocks of a section's Markdown, in order, as they would be shown. ``header``:
    the header of a table this piece of a section continues (``table_header``), shown
    above its rows so that they read as a table, not as lines of pipes."""
    source, origin, box = _flatten(markdown)
    lines = source.split("\n")
    starts = [0]
    ends: list[int] = []  # where each line's text ends: before its "\n", or its "\r\n"
    for line in markdown.split("\n"):
        ends.append(starts[-1] + len(line.removesuffix("\r")))
        starts.append(starts[-1] + len(line) + 1)

    def span(first: int, last: int) -> tuple[int, int]:
        """Offsets in ``markdown`` of flattened lines first..last-1, blank ends trimmed."""
        while last > first + 1 and not lines[last - 1].strip():
            last -= 1
        a, b = origin[first], origin[last - 1]
        return starts[a], ends[b]

    def row_spans(first: int, raw: str) -> list[tuple[int, int]]:
        """The span of each line of a table's rows, the first on flattened line ``first``."""
        return [span(i, i + 1) for i in range(first, first + len(raw.split("\n")))]

    blocks: list[Block] = []
    # The words of Logseq page properties hidden from the answer, counted as the next block's
    carried: frozenset[str] = frozenset()
    parsed = _PARSER.parse(source)
    notes = _annotations(parsed, markdown, origin)  # code block -> its annotation list
    annotating = set(notes.values())
    # Where a nested annotation list ends -> where its code block does.
    cuts: dict[int, int] = {}
    for a, b in notes.items():
        code, annotation = parsed[a].map, parsed[b].map
        if parsed[a].level and code and annotation:
            cuts[span(*annotation)[1]] = span(*code)[1]
    for at, token in enumerate(parsed):
        if token.level != 0 or token.map is None or token.nesting == -1:
            continue
        if at in annotating:
            continue  # a code block's annotations: never quoted as a list of their own
        raw = "\n".join(lines[token.map[0] : token.map[1]]).strip("\n")
        where = span(*token.map)
        rows: tuple[tuple[int, int], ...] = ()
        note = ""
        scored = ""  # what its words are read from, when not its text
        if header and token.type == "paragraph_open" and _rows_only(raw):
            kind, text = "table", f"{header}\n{_table_text(raw)}"
            scored = f"{header}\n{raw}"
            # The header is context, not this piece's bytes: it has no span of its own.
            rows = ((where[0], where[0]), (where[0], where[0]), *row_spans(token.map[0], raw))
        elif token.type == "math_block":
            kind, text = "math", raw
        elif token.type in _PROSE:
            if _SNIPPETS_ONLY.fullmatch(raw):
                continue
            if token.type == "paragraph_open" and is_properties(raw):
                # Logseq's page properties ("alias:: Golf, the car", "tags:: vehicle") are
                # the page's metadata, which Logseq shows apart: the tyre pressures were
                # quoted under them. Their words still say what the page's opening is about.
                carried |= frozenset(keyword_tokens(raw)) | cjk_chars(raw)
                continue
            # A display formula is quoted with the sentence it ends ("the error is at most")
            kind, text = "math" if is_formula(raw) else "prose", reading_text(raw)
        elif token.type in ("bullet_list_open", "ordered_list_open"):
            kind, text = "list", reading_text(raw)
            items = itertools.takewhile(lambda t: t.level > 0, parsed[at + 1 :])
            rows = tuple(
                span(*t.map) for t in items if t.type == "list_item_open" and t.level == 1 and t.map
            )
            # Ending in a code block's annotations (tooltips on the page), it is quoted up to
            # that code block: the page has nothing of them to highlight.
            if where[1] in cuts and rows:
                cut = cuts[where[1]]
                where, rows = (where[0], cut), (*rows[:-1], (rows[-1][0], cut))
        elif token.type in ("fence", "code_block"):
            if len(raw) > MAX_CODE_CHARS or _SNIPPETS_ONLY.fullmatch(token.content):
                continue
            if token.type == "code_block":  # indented code: show it fenced
                dedented = "\n".join(unindented(ln, 4) for ln in raw.split("\n"))
                # ... unless it is a fenced block a tab held, in a piece of a section that
                # opens inside the tab: fenced twice, it showed "```toml" as code and left
                # a fence open that swallowed the answer's "See also" citations.
                opened = FENCE.match(dedented)
                closing = dedented.rsplit("\n", 1)[-1]
                fenced = opened and "\n" in dedented and closes(closing, opened[1])
                raw = dedented if fenced else "```\n" + dedented + "\n```"
            elif "\n" not in raw or not closes(raw.rsplit("\n", 1)[1], token.markup):
                # A fence the section never closes (it runs to the page's end) is closed in
                # the answer: open, it took in all that followed, "See also" and citations.
                raw += "\n" + token.markup
            kind, text = "code", raw
            scored = _TRACEBACK_WORDS.sub(" ", raw)
            if at in notes:
                listed = parsed[notes[at]].map or (0, 0)
                note = reading_text("\n".join(lines[listed[0] : listed[1]]))
        elif token.type == "table_open":
            kind, text, scored = "table", _table_text(raw), raw
            rows = tuple(row_spans(token.map[0], raw))
        elif token.type == "html_block" and (shown := marks.html_block(raw)) is not None:
            kind, text = shown  # a <pre>, <table> or <details> block; no other raw HTML
        else:  # headings are shown as the heading path
            continue
        if text.strip():
            # A table's link targets count as its words, as they did before links were
            # shown as their words (hatch's wheel options: a question lost its first
            # citation, bench/answers.py)
            read = f"{scored or text}\n{note}"
            tokens = frozenset(keyword_tokens(read, camel_parts=True)) | cjk_chars(read) | carried
            carried = frozenset()
            blocks.append(Block(kind, text, tokens, where, rows, note, box[token.map[0]]))
    return blocks


def _annotations(parsed: list[Token], markdown: str, origin: list[int]) -> dict[int, int]:
    """``annotation_lists`` of a flattened section: a list is in its code block's container
    when its first line is indented as the fence's in ``markdown`` (flattening dedented
    admonitions and tabs)."""
    source = markdown.split("\n")

    def indent(token: Token) -> int:
        line = source[origin[token.map[0]]] if token.map else ""
        return len(line) - len(line.lstrip(" "))

    return annotation_lists(parsed, lambda code, listed: indent(code) == indent(listed))


def _rows_only(raw: str) -> bool:
    """Whether a paragraph is nothing but table rows (a split table's continuation)."""
    return all(line.lstrip().startswith("|") for line in raw.split("\n"))


def _table_text(raw: str) -> str:
    """A table as shown: outside code, links as their words (a cell's relative link to a
    ".md" file opened nothing from an answer, as a paragraph's link already did not), no
    images, no attribute lists, inline HTML as a paragraph's (``marks.without_tags``)."""

    def shown(part: str) -> str:
        return marks.prose(
            marks.without_tags(_IMAGE.sub("", _LINK.sub(r"\1", _ATTRS.sub("", part))))
        )

    return _outside_verbatim(raw, shown)


def weight_of(tokens: Iterable[str], weight: Mapping[str, float]) -> float:
    """The summed weights of the question's words among ``tokens``. math.fsum, not sum: a
    set's order changes with PYTHONHASHSEED, and a plain sum of the same weights in another
    order can differ by a rounding error and break a tie differently in each process."""
    return math.fsum(weight.get(t, 0.0) for t in tokens)
