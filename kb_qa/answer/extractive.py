"""Extractive answers, when no LLM is configured: the answering passage of the best sections.

Of retrieval's best five sections, the answer opens with the one whose passage holds the
question's rarer words (its heading counts: a heading that restates the question, an FAQ
entry, a rare term such as an error code) and that is closest to the question as a whole,
quoted verbatim and whole: a paragraph together with the list, code block or table it
introduces, a table with its header, an admonition's or a tab's text (its title or label
kept as a lead-in). A second section follows only when it scores as well. Each passage is
introduced by its heading path and its citation, so no marker ever lands inside code and
no answer ends on a dangling ":".

When retrieval's evidence says the docs do not cover the question (``covered``), the answer
says so first and names the nearest sections instead.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from markdown_it import MarkdownIt

from kb_qa.answer.citations import strip_citations
from kb_qa.ingest.linkgraph import pages_linked
from kb_qa.text import WIKILINK, keyword_tokens
from kb_qa.types import Hit

__all__ = ["LABEL", "NOTHING", "NOT_COVERED", "Extract", "extract", "passages", "quote"]

LABEL = "No language model is configured; this is what your sources say:"
NOT_COVERED = "These docs don't seem to cover that. The nearest sections are:"
NOTHING = "No passage in your sources matches this question."
CANDIDATES = 5  # best-ranked sections read; the best-scoring one leads
# A section's score: its best passage's question words (rarity-weighted; the heading's
# words count as the passage's; the best passage of all candidates scores 1.0) plus this
# times the section's cosine similarity to the question. On the dev split of
# bench/questions/answers.jsonl (bench/passages.py) the first passage held the answer for
# 0.600 of the questions when retrieval's first section led, 0.618 when the best by words
# led, 0.636 / 0.691 / 0.673 / 0.655 with weights 0.5 / 1.0 / 1.5 / 2.0.
SIMILARITY_WEIGHT = 1.0
# Question words in the heading count this much more again: a heading that restates the
# question ("Per job" for a follow-up about one job, an FAQ entry) says what the section is
# for. Dev: 0.709 at 0.5 and 0.7, 0.691 at 0.1 / 0.2 / 0.3 / 1.0 (with weight 1.5 for the
# similarity: 0.655).
HEADING_WEIGHT = 0.5
# A second section is shown only when its score is at least this share of the first's. On
# the same dev questions the bars 0.90 / 0.95 / 0.99 showed a second passage for 33 / 24 /
# 7% of them, off topic for 22 / 16 / 3.6% (one that also had to add a question word the
# first lacks did no better): all but a near tie is listed under "See also" instead.
SECOND_SHARE = 0.99
MAX_PASSAGE_CHARS = 1600
MAX_CODE_CHARS = 2500  # a longer code block is left out (never cut)
MAX_TABLE_ROWS = 5  # a longer table shows its header and its best-matching rows
TABLE_ROW_SHARE = 0.5  # ... those scoring at least this share of the best row

# Only blocks are read: inline parsing is off (160 KB of '[' took it 11 s).
_PARSER = (
    MarkdownIt("commonmark", {"maxNesting": 100})
    .enable(["table", "strikethrough"])
    .disable("inline")
)
_CONTAINER = re.compile(r'^(\s*)(?:!!!|\?\?\?\+?|===\+?)\s*([\w-]*)\s*(?:"([^"]*)")?\s*$')
_ATTRS = re.compile(r"\s*\{\s*[#.:][^}]*\}")
_HTML_TAG = re.compile(r"</?[A-Za-z][^>]*>")
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_LINK = re.compile(r"(?<!!)\[([^\]]+)\]\([^)]*\)")
_CALLOUT = re.compile(r"^(\s*>\s*)\[!([A-Za-z-]+)\][+-]?\s*", re.M)
_FENCE_LINE = re.compile(r"^[ >]{0,8}(`{3,}|~{3,})")
_TICKS = re.compile(r"`+")
_PROSE = ("paragraph_open", "blockquote_open")
_BODY = ("bullet_list_open", "ordered_list_open", "fence", "code_block", "table_open")


@dataclass(frozen=True)
class Block:
    """One top-level block of a section: its kind and its Markdown as it will be shown."""

    kind: str  # "prose", "list", "code", "table"
    text: str
    tokens: frozenset[str]
    # Where the block is in the section's Markdown: character offsets of its first and
    # last source lines (what a citation of it highlights); a table's rows each have one.
    span: tuple[int, int] = (0, 0)
    rows: tuple[tuple[int, int], ...] = ()


def _flatten(markdown: str) -> tuple[str, list[int]]:
    """Admonitions and tabs become a bold lead-in and their dedented content; with it, the
    line of ``markdown`` each output line comes from."""
    out: list[str] = []
    origin: list[int] = []
    stack: list[int] = []  # content indent of each open container
    for number, line in enumerate(markdown.split("\n")):
        indent = len(line) - len(line.lstrip(" "))
        while stack and line.strip() and indent < stack[-1]:
            stack.pop()
        strip = stack[-1] if stack else 0
        line = line[strip:] if line[:strip].strip() == "" else line.lstrip(" ")
        m = _CONTAINER.match(line)
        if m:
            title = m.group(3) if m.group(3) is not None else m.group(2).replace("-", " ").title()
            if title:
                out += [f"**{title.strip()}:**", ""]
                origin += [number, number]
            stack.append(strip + len(m.group(1)) + 4)
            continue
        out.append(line)
        origin.append(number)
    return "\n".join(out), origin


def _reading_text(text: str) -> str:
    """Prose as plain reading text: links as their words, no HTML, no attribute lists.

    Code (inline spans and fenced blocks) is never touched: a quoted command keeps its
    ``<placeholders>``, entities, backslashes and brackets byte for byte.
    """
    return "".join(
        part if is_code else _plain_prose(part) for is_code, part in code_segments(text)
    ).strip()


def _plain_prose(text: str) -> str:
    text = WIKILINK.sub(lambda m: m.group(3) or m.group(2) or m.group(1), text)
    text = _CALLOUT.sub(r"\1**\2:** ", text)
    text = _IMAGE.sub("", text)
    text = _LINK.sub(r"\1", text)
    text = _ATTRS.sub("", text)
    text = _HTML_TAG.sub("", text)
    return strip_citations(text)


def code_segments(text: str) -> list[tuple[bool, str]]:
    """``text`` cut into (is_code, part) runs: fenced blocks and inline code spans are code.

    Linear in the text: fences line by line, code spans by their backtick runs (a span
    closes at the next run of the same length, as CommonMark says; an unclosed run is text).
    """
    parts: list[tuple[bool, str]] = []
    prose: list[str] = []
    fence = ""
    for line in text.splitlines(keepends=True):
        opening = _FENCE_LINE.match(line)
        if fence:
            parts.append((True, line))
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                if not line.strip().lstrip(fence[0]):
                    fence = ""
            continue
        if opening:
            parts += _spans("".join(prose))
            prose = []
            fence = opening.group(1)
            parts.append((True, line))
            continue
        prose.append(line)
    parts += _spans("".join(prose))
    return [p for p in parts if p[1]]


def _spans(text: str) -> list[tuple[bool, str]]:
    """Inline code spans of ``text`` (no fences in it) and the prose between them."""
    runs = [(m.start(), m.end()) for m in _TICKS.finditer(text)]
    by_length: dict[int, list[int]] = {}
    for k, (a, b) in enumerate(runs):
        by_length.setdefault(b - a, []).append(k)
    nxt: dict[int, int] = {}  # run index -> index of the next run of the same length
    for ks in by_length.values():
        nxt.update(itertools.pairwise(ks))
    parts: list[tuple[bool, str]] = []
    pos = 0
    k = 0
    while k < len(runs):
        if k not in nxt:
            k += 1
            continue
        start, end = runs[k][0], runs[nxt[k]][1]
        parts += [(False, text[pos:start]), (True, text[start:end])]
        pos = end
        k = nxt[k] + 1
    parts.append((False, text[pos:]))
    return parts


def passages(markdown: str) -> list[Block]:
    """The blocks of a section's Markdown, in order, as they would be shown."""
    source, origin = _flatten(markdown)
    lines = source.split("\n")
    starts = [0]
    for line in markdown.split("\n"):
        starts.append(starts[-1] + len(line) + 1)

    def span(first: int, last: int) -> tuple[int, int]:
        """Offsets in ``markdown`` of flattened lines first..last-1, blank ends trimmed."""
        while last > first + 1 and not lines[last - 1].strip():
            last -= 1
        a, b = origin[first], origin[last - 1]
        return starts[a], starts[b + 1] - 1

    blocks: list[Block] = []
    for token in _PARSER.parse(source):
        if token.level != 0 or token.map is None or token.nesting == -1:
            continue
        raw = "\n".join(lines[token.map[0] : token.map[1]]).strip("\n")
        where = span(*token.map)
        rows: tuple[tuple[int, int], ...] = ()
        if token.type in _PROSE:
            kind, text = "prose", _reading_text(raw)
        elif token.type in ("bullet_list_open", "ordered_list_open"):
            kind, text = "list", _reading_text(raw)
        elif token.type in ("fence", "code_block"):
            if len(raw) > MAX_CODE_CHARS:
                continue
            if token.type == "code_block":  # indented code: show it fenced
                raw = "```\n" + "\n".join(ln[4:] for ln in raw.split("\n")) + "\n```"
            kind, text = "code", raw
        elif token.type == "table_open":
            kind, text = (
                "table",
                "".join(
                    part if is_code else _ATTRS.sub("", part)
                    for is_code, part in code_segments(raw)
                ),
            )
            first = token.map[0]
            rows = tuple(span(i, i + 1) for i in range(first, first + len(raw.split("\n"))))
        else:  # headings are shown as the heading path; raw HTML never is
            continue
        if text.strip():
            tokens = frozenset(keyword_tokens(text, camel_parts=True))
            blocks.append(Block(kind, text, tokens, where, rows))
    return blocks


@dataclass(frozen=True)
class _Choice:
    number: int
    hit: Hit
    text: str
    score: float
    span: tuple[int, int]  # what is quoted, as offsets in the section's Markdown


@dataclass(frozen=True)
class Extract:
    """An extractive answer: the pieces to stream, and per citation number the range of
    its section's Markdown (``Chunk.text`` offsets) that the answer quotes."""

    pieces: list[str]
    quoted: dict[int, tuple[int, int]]


def _best_passage(
    blocks: Sequence[Block], heading: frozenset[str], weight: dict[str, float]
) -> tuple[str, float, tuple[int, int]]:
    """The best block of a section with what belongs to it, its score (the weights of the
    question words it and the heading hold) and its span."""
    if not blocks:
        return "", 0.0, (0, 0)

    def score(i: int) -> float:
        return sum(weight.get(t, 0.0) for t in blocks[i].tokens | heading)

    best = max(range(len(blocks)), key=lambda i: (score(i), -i))
    if score(best) == sum(weight.get(t, 0.0) for t in heading):
        best = 0  # no block says more than the heading: the section's opening does
    chosen = [best]
    first, last = blocks[best], best
    # A list, code block or table keeps the sentence that introduces it ...
    if first.kind != "prose" and best > 0 and blocks[best - 1].kind == "prose":
        chosen.insert(0, best - 1)
    # ... and a sentence that introduces something keeps what it introduces.
    while (
        last + 1 < len(blocks)
        and _introduces(blocks[last].text)
        and sum(len(blocks[i].text) for i in chosen) < MAX_PASSAGE_CHARS
    ):
        last += 1
        chosen.append(last)
    shown: list[str] = []
    spans: list[tuple[int, int]] = []
    for i in chosen:
        if blocks[i].kind == "table":
            text, kept = _rows(blocks[i].text, weight)
            shown.append(text)
            rows = blocks[i].rows
            # A table cut to its best rows quotes those rows (the header is only context).
            cut = kept is not None and len(rows) > kept[-1] + 2
            spans.append((rows[kept[0] + 2][0], rows[kept[-1] + 2][1]) if cut else blocks[i].span)
        else:
            shown.append(blocks[i].text)
            spans.append(blocks[i].span)
    text = "\n\n".join(shown)
    if text.rstrip().endswith(":"):  # nothing followed it: end like a sentence
        text = text.rstrip()[:-1] + "."
    table = blocks[chosen[-1]]
    if table.kind == "table" and spans[-1] != table.span:
        quoted = spans[-1]  # the rows that answer, not the sentence introducing the table
    else:
        quoted = (min(a for a, _ in spans), max(b for _, b in spans))
    restated = HEADING_WEIGHT * sum(weight.get(t, 0.0) for t in heading)
    return text, max(score(i) for i in chosen) + restated, quoted


def _rows(table: str, weight: dict[str, float]) -> tuple[str, list[int] | None]:
    """A long table cut to its header and the rows that match the question (all rows when
    none does): the row that answers should not drown among twenty others. With it, the
    indexes of the body rows kept (None: the whole table)."""
    lines = table.split("\n")
    header, body = lines[:2], lines[2:]
    if len(body) <= MAX_TABLE_ROWS:
        return table, None
    # A word every row holds (the product's prefix of its error codes) picks no row out.
    words = [set(keyword_tokens(row, camel_parts=True)) for row in body]
    rows_with: dict[str, int] = {}
    for found in words:
        for t in found & weight.keys():
            rows_with[t] = rows_with.get(t, 0) + 1
    scores = [
        sum(weight[t] * math.log(1 + len(body) / rows_with[t]) for t in found & weight.keys())
        for found in words
    ]
    best = max(scores)
    if best <= 0:
        return table, None
    keep = sorted(range(len(body)), key=lambda i: -scores[i])[:MAX_TABLE_ROWS]
    keep = [i for i in sorted(keep) if scores[i] >= TABLE_ROW_SHARE * best]
    return "\n".join(header + [body[i] for i in keep]), keep


def _introduces(text: str) -> bool:
    """Whether a block ends by announcing what follows ("Run this:", "**Tab:**")."""
    return text.rstrip().rstrip("*").endswith(":")


def _where(hit: Hit) -> str:
    return " › ".join(hit.chunk.heading_path) or hit.chunk.path


def extract(question: str, ranked: Sequence[tuple[int, Hit]], covered: bool = True) -> list[str]:
    """The answer, as pieces to stream (``quote`` says what each citation quotes)."""
    return quote(question, ranked, covered).pieces


def quote(question: str, ranked: Sequence[tuple[int, Hit]], covered: bool = True) -> Extract:
    """The answer, and the range of each quoted section that it quotes.

    ``ranked`` holds (global excerpt number, hit) pairs, best first. The best section's
    passage comes first, a second one when it matches about as well; each is introduced by
    its heading path and its number in brackets, like an LLM's citation.
    """
    sections: list[tuple[int, Hit]] = []
    for number, hit in ranked:
        key = (hit.chunk.path, hit.chunk.anchor)
        if all((h.chunk.path, h.chunk.anchor) != key for _, h in sections):
            sections.append((number, hit))
        if len(sections) == CANDIDATES:
            break
    if not sections:
        return Extract([f"{LABEL}\n\n", NOTHING], {})
    if not covered:
        nearest = "".join(f"- **{_where(h)}** [{n}]\n" for n, h in sections[:3])
        return Extract([f"{NOT_COVERED}\n\n", nearest], {})
    read = [(n, h, passages(h.chunk.text)) for n, h in sections]
    wanted = set(keyword_tokens(question))
    df: dict[str, int] = {}
    for _, _h, blocks in read:
        for t in wanted & (set().union(*(b.tokens for b in blocks)) if blocks else set()):
            df[t] = df.get(t, 0) + 1
    # Rarer question words say more about a passage than words every section shares.
    weight = {t: math.log(1 + len(read) / df.get(t, 1)) for t in wanted}
    scored = []
    for n, h, blocks in read:
        heading = frozenset(keyword_tokens(" ".join(h.chunk.heading_path))) & frozenset(wanted)
        text, words, span = _best_passage(blocks, heading, weight)
        if text:
            scored.append((n, h, text, words, span))
    if not scored:
        nearest = "".join(f"- **{_where(h)}** [{n}]\n" for n, h in sections[:3])
        return Extract([f"{LABEL}\n\n", nearest], {})
    # Which section leads: what its passage says of the question's words and how close
    # the whole section is to it (retrieval's order is the tie-break).
    most = max(words for *_, words, _ in scored) or 1.0
    choices = [
        _Choice(n, h, text, words / most + SIMILARITY_WEIGHT * (h.similarity or 0.0), span)
        for n, h, text, words, span in scored
    ]
    first = max(choices, key=lambda c: c.score)
    chunks = [c.hit.chunk for c in choices]
    # A passage that sends the reader elsewhere ("Install Lumen on Linux, macOS or Docker")
    # is not the answer when retrieval found the page it links to: that page's best does.
    linked = pages_linked(first.hit.chunk, first.hit.chunk.text[slice(*first.span)], chunks)
    if linked:
        first = max((c for c in choices if c.hit.chunk.path in linked), key=lambda c: c.score)
    shown = [first]
    runner = max((c for c in choices if c is not first), key=lambda c: c.score, default=None)
    if runner is not None and runner.score > 0 and runner.score >= SECOND_SHARE * first.score:
        shown.append(runner)
    pieces = [f"{LABEL}\n\n"]
    for c in shown:
        pieces.append(f"**{_where(c.hit)}** [{c.number}]\n\n{c.text}\n\n")
    # The other strong sections, one click away: retrieval's top 5 are all worth a look.
    others = [c for c in choices if c not in shown][: CANDIDATES - len(shown)]
    if others:
        listed = "; ".join(f"{_where(c.hit)} [{c.number}]" for c in others)
        pieces.append(f"See also: {listed}.\n")
    return Extract(pieces, {c.number: c.span for c in shown})
