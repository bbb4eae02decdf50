"""Extractive answers, when no LLM is configured: the answering passage of the best sections.

Retrieval decides first: the top-ranked section is the strongest evidence, so the answer
opens with its best passage, verbatim and whole: a paragraph together with the list, code
block or table it introduces, a table with its header, an admonition's or a tab's text
(its title or label kept as a lead-in). A second section follows when one of the next hits
matches the question about as well. Each passage is introduced by its heading path and its
citation, so no marker ever lands inside code and no answer ends on a dangling ":".

When retrieval's evidence says the docs do not cover the question (``covered``), the answer
says so first and names the nearest sections instead.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from markdown_it import MarkdownIt

from kb_qa.citations import strip_citations
from kb_qa.text import WIKILINK, keyword_tokens
from kb_qa.types import Hit

__all__ = ["LABEL", "NOTHING", "NOT_COVERED", "extract", "passages"]

LABEL = "No language model is configured; this is what your sources say:"
NOT_COVERED = "These docs don't seem to cover that. The nearest sections are:"
NOTHING = "No passage in your sources matches this question."
CANDIDATES = 5  # best-ranked sections read
SECOND_SHARE = 0.6  # a second section is shown when its passage scores this share of the first
MAX_PASSAGE_CHARS = 1600
MAX_CODE_CHARS = 2500  # a longer code block is left out (never cut)
MAX_TABLE_ROWS = 5  # a longer table shows its header and its best-matching rows
TABLE_ROW_SHARE = 0.5  # ... those scoring at least this share of the best row

_PARSER = MarkdownIt("commonmark", {"maxNesting": 100}).enable(["table", "strikethrough"])
_CONTAINER = re.compile(r'^(\s*)(?:!!!|\?\?\?\+?|===\+?)\s*([\w-]*)\s*(?:"([^"]*)")?\s*$')
_ATTRS = re.compile(r"\s*\{\s*[#.:][^}]*\}")
_HTML_TAG = re.compile(r"</?[A-Za-z][^>]*>")
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_LINK = re.compile(r"(?<!!)\[([^\]]+)\]\([^)]*\)")
_CALLOUT = re.compile(r"^(\s*>\s*)\[!([A-Za-z-]+)\][+-]?\s*", re.M)
_PROSE = ("paragraph_open", "blockquote_open")
_BODY = ("bullet_list_open", "ordered_list_open", "fence", "code_block", "table_open")


@dataclass(frozen=True)
class Block:
    """One top-level block of a section: its kind and its Markdown as it will be shown."""

    kind: str  # "prose", "list", "code", "table"
    text: str
    tokens: frozenset[str]


def _flatten(markdown: str) -> str:
    """Admonitions and tabs become a bold lead-in and their dedented content."""
    out: list[str] = []
    stack: list[int] = []  # content indent of each open container
    for line in markdown.split("\n"):
        indent = len(line) - len(line.lstrip(" "))
        while stack and line.strip() and indent < stack[-1]:
            stack.pop()
        strip = stack[-1] if stack else 0
        line = line[strip:] if line[:strip].strip() == "" else line.lstrip(" ")
        m = _CONTAINER.match(line)
        if m:
            title = m.group(3) if m.group(3) is not None else m.group(2).replace("-", " ").title()
            if title:
                out.append(f"**{title.strip()}:**")
                out.append("")
            stack.append(strip + len(m.group(1)) + 4)
            continue
        out.append(line)
    return "\n".join(out)


def _reading_text(text: str) -> str:
    """Prose as plain reading text: links as their words, no HTML, no attribute lists."""
    text = WIKILINK.sub(lambda m: m.group(3) or m.group(2) or m.group(1), text)
    text = _CALLOUT.sub(r"\1**\2:** ", text)
    text = _IMAGE.sub("", text)
    text = _LINK.sub(r"\1", text)
    text = _ATTRS.sub("", text)
    text = _HTML_TAG.sub("", text)
    return strip_citations(text).strip()


def passages(markdown: str) -> list[Block]:
    """The blocks of a section's Markdown, in order, as they would be shown."""
    source = _flatten(markdown)
    lines = source.split("\n")
    blocks: list[Block] = []
    for token in _PARSER.parse(source):
        if token.level != 0 or token.map is None or token.nesting == -1:
            continue
        raw = "\n".join(lines[token.map[0] : token.map[1]]).strip("\n")
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
            kind, text = "table", _ATTRS.sub("", raw)
        else:  # headings are shown as the heading path; raw HTML never is
            continue
        if text.strip():
            blocks.append(Block(kind, text, frozenset(keyword_tokens(text, camel_parts=True))))
    return blocks


@dataclass(frozen=True)
class _Choice:
    number: int
    hit: Hit
    text: str
    score: float


def _best_passage(
    blocks: Sequence[Block], heading: frozenset[str], weight: dict[str, float]
) -> tuple[str, float]:
    """The best block of a section with what belongs to it, and its score."""
    if not blocks:
        return "", 0.0

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
    shown = [
        _rows(blocks[i].text, weight) if blocks[i].kind == "table" else blocks[i].text
        for i in chosen
    ]
    text = "\n\n".join(shown)
    if text.rstrip().endswith(":"):  # nothing followed it: end like a sentence
        text = text.rstrip()[:-1] + "."
    return text, max(score(i) for i in chosen)


def _rows(table: str, weight: dict[str, float]) -> str:
    """A long table cut to its header and the rows that match the question (all rows when
    none does): the row that answers should not drown among twenty others."""
    lines = table.split("\n")
    header, body = lines[:2], lines[2:]
    if len(body) <= MAX_TABLE_ROWS:
        return table
    scores = [
        sum(weight.get(t, 0.0) for t in set(keyword_tokens(row, camel_parts=True))) for row in body
    ]
    best = max(scores)
    if best <= 0:
        return table
    keep = sorted(range(len(body)), key=lambda i: -scores[i])[:MAX_TABLE_ROWS]
    keep = [i for i in sorted(keep) if scores[i] >= TABLE_ROW_SHARE * best]
    return "\n".join(header + [body[i] for i in keep])


def _introduces(text: str) -> bool:
    """Whether a block ends by announcing what follows ("Run this:", "**Tab:**")."""
    return text.rstrip().rstrip("*").endswith(":")


def _where(hit: Hit) -> str:
    return " › ".join(hit.chunk.heading_path) or hit.chunk.path


def extract(question: str, ranked: Sequence[tuple[int, Hit]], covered: bool = True) -> list[str]:
    """The answer, as pieces to stream.

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
        return [f"{LABEL}\n\n", NOTHING]
    if not covered:
        nearest = "".join(f"- **{_where(h)}** [{n}]\n" for n, h in sections[:3])
        return [f"{NOT_COVERED}\n\n", nearest]
    read = [(n, h, passages(h.chunk.text)) for n, h in sections]
    wanted = set(keyword_tokens(question))
    df: dict[str, int] = {}
    for _, _h, blocks in read:
        for t in wanted & (set().union(*(b.tokens for b in blocks)) if blocks else set()):
            df[t] = df.get(t, 0) + 1
    # Rarer question words say more about a passage than words every section shares.
    weight = {t: math.log(1 + len(read) / df.get(t, 1)) for t in wanted}
    choices = []
    for n, h, blocks in read:
        heading = frozenset(keyword_tokens(" ".join(h.chunk.heading_path))) & frozenset(wanted)
        text, score = _best_passage(blocks, heading, weight)
        if text:
            choices.append(_Choice(n, h, text, score))
    if not choices:
        nearest = "".join(f"- **{_where(h)}** [{n}]\n" for n, h in sections[:3])
        return [f"{LABEL}\n\n", nearest]
    first, rest = choices[0], choices[1:]
    shown = [first]
    runner = max(rest, key=lambda c: c.score, default=None)
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
    return pieces
