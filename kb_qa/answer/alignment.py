"""A model's answer, aligned: which passage of a cited section each sentence says.

A sentence that ends in ``[2]`` is matched, word for word, against the blocks of excerpt 2's
section (paragraphs, list, code, table rows: ``blocks.passages``): the block holding most of
its words, rarer words of the section counting more, is the passage it was drawn from. The
citation then carries that block's range, so the page highlights the passage instead of the
whole section, as it does for a no-key answer's quote. The server knows the excerpts, so
this needs nothing of the model but its citations. A sentence that shares too little with
any one block (a summary of the whole section, a paraphrase in other words) leaves its
citation on the section.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import replace

from kb_qa.answer.blocks import (
    Block,
    passages,
    table_header,
    weight_of,
)
from kb_qa.answer.citations import Citation
from kb_qa.answer.rows import matching_rows, rows_span
from kb_qa.text import blanked, keyword_tokens
from kb_qa.types import Hit
from kb_qa.verbatim import code_segments

__all__ = ["aligned", "claims", "narrowed", "prose_of"]

MIN_WORDS = 2  # a sentence must share this many words with a block to be aligned to it
# ... and that block must hold this share of what the sentence shares with the whole section
# (the rest of it may come from the heading or a neighbouring block).
MIN_SHARE = 0.6
MARKERS = re.compile(r"(?:\[\d{1,3}\])+")
_NUMBER = re.compile(r"\[(\d{1,3})\]")
BOUNDARY = re.compile(r"[.!?:;](?:\s|$)|\n")


def claims(reply: str) -> list[tuple[str, list[int]]]:
    """Each citation group of a renumbered reply with the sentence it closes: ("Lumen
    retries a failed job five times", [2]), and before it the sentences of its paragraph
    that cite nothing themselves: a model that cites once at a paragraph's end ("A. B. C.
    [1][2]") drew all three from those excerpts. Markers inside code are code, not
    citations."""
    found: list[tuple[str, list[int]]] = []
    prose = prose_of(reply)
    start = 0
    closed = True  # the text since the last marker starts a sentence (it ended one)
    for m in MARKERS.finditer(prose):
        numbers = [int(n) for n in _NUMBER.findall(m.group())]
        before = reply[start : m.start()]
        # The sentence runs from the last boundary before the marker (a period right before
        # the marker ends the sentence it cites: "... five times.[1]"); a colon or ". "
        # inside code ("set `"max_attempts": 1`") is no boundary.
        head = before.rstrip()
        head = head[:-1] if head.endswith((".", "!", "?")) else head
        spoken = prose[start : start + len(head)]
        ends = [b.end() for b in BOUNDARY.finditer(spoken)]
        cut = max(ends, default=0)
        # The uncited sentences before it on its line (a model's paragraph is one line);
        # right after a marker that closed no sentence ("[1], up to five times. B [2]"),
        # the first piece is the rest of the sentence that marker cites.
        line = spoken.rfind("\n") + 1
        bounds = [line, *(e for e in ends if e > line)]
        for a, b in itertools.pairwise(bounds):
            uncited = head[a:b].strip()
            if (a > 0 or closed) and any(ch.isalnum() for ch in uncited):
                found.append((uncited, numbers))
        sentence = head[cut:].strip()
        if sentence:
            found.append((sentence, numbers))
        closed = before.rstrip().endswith((".", "!", "?"))
        start = m.end()
    return found


def prose_of(reply: str) -> str:
    """``reply`` with its code blanked, its line breaks kept (they still end the sentence
    before a fence): markers and sentence ends inside code are code, and every offset is
    the reply's."""
    return "".join(part if not code else blanked(part) for code, part in code_segments(reply))


def aligned(
    reply: str, order: dict[int, int], excerpts: Sequence[Hit]
) -> dict[int, tuple[int, int]]:
    """Excerpt number -> the range of its section's Markdown (``Chunk.text`` offsets) that
    the reply's sentences citing it were drawn from. ``order`` maps the reply's citation
    numbers to excerpt numbers (``CitationRenumberer.order``); excerpts the reply cites
    only in words of no single block are left out (their citation keeps the section)."""
    said: dict[int, dict[str, None]] = {}  # excerpt -> its sentences, each once, in order
    for sentence, numbers in claims(reply):
        for number in set(numbers) & order.keys():
            said.setdefault(order[number], {})[sentence] = None
    spans: dict[int, tuple[int, int]] = {}
    for excerpt, sentences in said.items():
        if not 1 <= excerpt <= len(excerpts):
            continue
        chunk = excerpts[excerpt - 1].chunk
        blocks = passages(chunk.text, table_header(chunk.context))
        span = _passage_of(blocks, list(sentences), chunk.text)
        if span is not None:
            spans[excerpt] = span
    return spans


def _passage_of(
    blocks: Sequence[Block], sentences: list[str], markdown: str
) -> tuple[int, int] | None:
    """The span of the blocks of ``markdown`` that ``sentences`` were drawn from (from the
    first to the last; in a table its rows, in a list its items), if any."""
    if not blocks:
        return None
    df: dict[str, int] = {}
    for b in blocks:
        for t in b.tokens:
            df[t] = df.get(t, 0) + 1
    chosen: list[tuple[int, dict[str, float]]] = []
    for sentence in sentences:
        words = set(keyword_tokens(sentence, camel_parts=True))
        weight = {t: math.log(1 + len(blocks) / df[t]) for t in words if t in df}
        if not weight:
            continue
        scores = [weight_of(b.tokens, weight) for b in blocks]
        best = max(range(len(blocks)), key=lambda i: (scores[i], -i))
        shared = len(blocks[best].tokens & weight.keys())
        if shared >= MIN_WORDS and scores[best] >= MIN_SHARE * math.fsum(weight.values()):
            chosen.append((best, weight))
    if not chosen:
        return None
    indexes = sorted({i for i, _ in chosen})

    def part(i: int) -> tuple[int, int]:  # of block i, what its sentences were drawn from
        block, mine = blocks[i], [w for j, w in chosen if j == i]
        if block.kind == "table":
            weights: dict[str, float] = {}
            for w in mine:
                weights.update(w)
            return rows_span(block, matching_rows(block.text, weights)[1])
        if block.kind == "list":
            return _items_of(block, mine, markdown)
        return block.span

    # Blocks apart from each other: the run from the first to the last, so that every
    # sentence's passage is highlighted (one block of them would leave another sentence's
    # chip pointing at a passage it was not drawn from), from the first one's row or item
    # to the last one's (a table's header and earlier rows are no sentence's).
    return part(indexes[0])[0], part(indexes[-1])[1]


def _items_of(listed: Block, weights: Sequence[dict[str, float]], markdown: str) -> tuple[int, int]:
    """The run of a list's items that sentences (their words' ``weights``) were drawn from:
    each sentence's item holds ``MIN_WORDS`` of its words, more of them than any other item
    and ``MIN_SHARE`` of what the whole list holds of them. The whole list when a sentence
    points at no item alone (a summary of the list)."""
    items = [set(keyword_tokens(markdown[a:b], camel_parts=True)) for a, b in listed.rows]
    picked: list[int] = []
    for weight in weights:
        scores = [weight_of(tokens, weight) for tokens in items]
        best = max(range(len(items)), key=lambda i: scores[i], default=0)
        rest = max((score for i, score in enumerate(scores) if i != best), default=math.inf)
        held = weight_of(set().union(*items), weight)
        alone = scores[best] > rest and scores[best] >= MIN_SHARE * held
        if not alone or len(items[best] & weight.keys()) < MIN_WORDS:
            return listed.span
        picked.append(best)
    return listed.rows[min(picked)][0], listed.rows[max(picked)][1]


def narrowed(citation: Citation, span: tuple[int, int] | None) -> Citation:
    """``citation`` pointing at the passage ``span`` of its section (offsets in its text)
    instead of the whole section: what the page highlights. ``start``/``end`` and the lines
    stay file offsets when the section's text is the file's bytes there; otherwise they stay
    the section's own (``rendered_chunks``: its lines in the file, or 0 for text the site
    generated)."""
    if span is None:
        return citation
    a, b = max(0, span[0]), min(len(citation.text), span[1])
    if a >= b:
        return citation
    text = citation.text
    if citation.end - citation.start != len(text):
        # Text read from the rendered page (an mkdocstrings ``:::`` section, a page a plugin
        # rewrote): its lines are not the file's. Counted as if they were, "What does
        # timeout default to in connect()?" cited docs/api/client.md:15-23, a file of 3 lines.
        return replace(citation, text=text[a:b])
    line = citation.line_start + text.count("\n", 0, a)
    return replace(
        citation,
        text=text[a:b],
        start=citation.start + a,
        end=citation.start + b,
        line_start=line,
        line_end=line + text.count("\n", a, b),
    )
