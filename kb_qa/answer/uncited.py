"""A model's sentences that cite nothing, cited where their words come from.

Models cite most sentences, not all: "A job is attempted five times [1]. The cap is applied
before jitter, so a delay can exceed max_backoff. Jitter prevents a burst of failed jobs
from retrying in lockstep." The last two were drawn word for word from an excerpt the reply
never cites, and the reader had nothing to check them against. Once the reply has ended,
each sentence no citation covers (after a line's last citation, or on a line with none;
``alignment.claims`` reads the rest) is matched against the blocks of every excerpt: when
one block holds ``DRAWN_SHARE`` of its words, at least ``DRAWN_WORDS`` of them, and no other
excerpt's block holds more, the sentence is cited there, before its closing punctuation. A
sentence in the model's own words (a summary, a caveat, a greeting) stays as it is.
"""

from __future__ import annotations

import difflib
import itertools
import re
from collections.abc import Iterator, Sequence

from kb_qa.answer.alignment import BOUNDARY, MARKERS, prose_of
from kb_qa.answer.blocks import passages, table_header
from kb_qa.text import keyword_tokens
from kb_qa.types import Hit

__all__ = ["cite_uncited", "cited_after"]

DRAWN_WORDS = 3
DRAWN_SHARE = 0.8
_CLOSE = re.compile(r"[.!?]+[\"')\]*_`]*\s*$")  # a sentence's closing punctuation
_NOT_PROSE = re.compile(r"\s*(?:#|\||>|```|~~~)")  # a heading, a table row, a quote, a fence
_ADDED = re.compile(r" \[\d{1,3}\]")  # what cite_uncited inserts
SHOWN_CHARS = 100  # of a sentence cited after the reply, as cited_after names it


def cite_uncited(
    reply: str, order: dict[int, int], excerpts: Sequence[Hit], emptied: Sequence[int] = ()
) -> tuple[str, dict[int, int]]:
    """``reply`` with a citation after each sentence that cites nothing and was drawn from
    one excerpt, and ``order`` (shown number -> excerpt number) with the numbers it adds.
    ``emptied``: offsets of ``reply`` where a citation of no excerpt was removed (its
    sentence cites nothing, whatever follows it; ``CitationRenumberer.emptied``)."""
    order = dict(order)
    shown_of = {excerpt: shown for shown, excerpt in order.items()}
    held: dict[int, list[frozenset[str]]] = {}  # excerpt -> its blocks' words, read once
    inserts: list[tuple[int, int]] = []
    for start, end in _uncited(reply, emptied):
        excerpt = _drawn_from(reply[start:end], excerpts, held, shown_of)
        if excerpt is None:
            continue
        if excerpt not in shown_of:
            shown_of[excerpt] = max(order, default=0) + 1
            order[shown_of[excerpt]] = excerpt
        closing = _CLOSE.search(reply, start, end)
        inserts.append((closing.start() if closing else end, shown_of[excerpt]))
    for at, shown in reversed(inserts):
        reply = f"{reply[:at]} [{shown}]{reply[at:]}"
    return reply, order


def _uncited(reply: str, emptied: Sequence[int] = ()) -> Iterator[tuple[int, int]]:
    """The spans of ``reply``'s sentences that no citation covers: those after a line's
    last citation marker, those of a line with none, and those whose only citation was
    removed (an offset of ``emptied``; code is not read)."""
    at = 0
    for line in prose_of(reply).split("\n"):
        begin, at = at, at + len(line) + 1
        if _NOT_PROSE.match(line):
            continue
        markers = list(MARKERS.finditer(line))
        start = markers[-1].end() if markers else 0
        # Before the last marker, the sentences whose citation named no excerpt: "B [420]."
        # was not the last marker's to cover ("A [1]. B. C [1].").
        lost = [p - begin for p in emptied if begin <= p < begin + start]
        ends = {m.end() for m in markers} | {m.end() for m in BOUNDARY.finditer(line)}
        cuts = sorted({0, start, len(line)} | {e for e in ends if e >= start or lost})
        for a, b in itertools.pairwise(cuts):
            if (b <= start and not any(a <= p <= b for p in lost)) or MARKERS.search(line, a, b):
                continue
            sentence = line[a:b]
            if sentence.strip() and not sentence.rstrip().endswith((":", ";")):
                lead = len(sentence) - len(sentence.lstrip())
                yield begin + a + lead, begin + a + len(sentence.rstrip())


def _drawn_from(
    sentence: str,
    excerpts: Sequence[Hit],
    held: dict[int, list[frozenset[str]]],
    cited: dict[int, int],
) -> int | None:
    """The excerpt one of whose blocks holds ``DRAWN_SHARE`` of ``sentence``'s words, more
    than any other excerpt's (an excerpt already cited wins a tie, then the better ranked),
    or None."""
    words = frozenset(keyword_tokens(sentence, camel_parts=True))
    if len(words) < DRAWN_WORDS:
        return None
    best: tuple[int, bool, int] | None = None  # (words held, already cited, -excerpt)
    for number, hit in enumerate(excerpts, 1):
        if number not in held:
            blocks = passages(hit.chunk.text, table_header(hit.chunk.context))
            held[number] = [b.tokens for b in blocks]
        most = max((len(words & tokens) for tokens in held[number]), default=0)
        key = (most, number in cited, -number)
        if best is None or key > best:
            best = key
    if best is None or best[0] < max(DRAWN_WORDS, DRAWN_SHARE * len(words)):
        return None
    return -best[2]


def cited_after(streamed: str, cited: str) -> list[str]:
    """The sentences of ``cited`` (``streamed`` as ``cite_uncited`` returned it) that gained a
    citation, each with it and at most ``SHOWN_CHARS`` long: for a terminal that showed the
    reply as it streamed, "Jitter prevents ... in lockstep [3]"."""
    found = []
    for op, _a, _b, start, end in difflib.SequenceMatcher(
        None, streamed, cited, autojunk=False
    ).get_opcodes():
        if op != "insert" or not _ADDED.fullmatch(cited[start:end]):
            continue
        before = cited[:start]
        cut = max(
            [
                0,
                *(m.end() for m in BOUNDARY.finditer(before)),
                *(m.end() for m in MARKERS.finditer(before)),
            ]
        )
        sentence = cited[cut:end].strip()
        if len(sentence) > SHOWN_CHARS:
            sentence = "…" + sentence[-SHOWN_CHARS + 1 :].lstrip()
        found.append(sentence)
    return found
