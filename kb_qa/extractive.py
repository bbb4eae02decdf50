"""Extractive answers: the most relevant sentences of the top passages, when no LLM is configured.

The answer cites the same global excerpt numbers an LLM would, so it goes through the same
citation renumbering, events and widget. Sentences are chosen by keyword overlap with the
question (stemmed, stopwords dropped, rarer words weighing more) from the best-ranked passages,
with Markdown syntax stripped so they read as plain sentences.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from kb_qa.citations import strip_citations
from kb_qa.text import keyword_tokens
from kb_qa.types import Hit

__all__ = ["LABEL", "extract", "sentences"]

LABEL = "No language model is configured; these are the most relevant passages from your sources:"
NOTHING = "No passage in your sources matches this question."
PASSAGES = 5  # best-ranked passages read
MAX_SENTENCES = 6
PER_PASSAGE = 3
RELATIVE_FLOOR = 0.5  # a chosen sentence scores at least this share of the best one
# A short code block (a command or two) is kept as inline code; a longer one is dropped.
MAX_CODE_LINES = 3
MAX_CODE_CHARS = 200

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_DROP_LINE = re.compile(
    r"^\s*(#{1,6}\s|[!?]{3}\+?\s|===\s|\|?\s*:?-{3,}|<!--|-->|\[\^?[^\]]+\]:\s)"
)
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?")
_QUOTE = re.compile(r"^\s*>\s?")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\](?:\([^)]*\)|\[[^\]]*\])")
_FOOTNOTE = re.compile(r"\[\^[^\]]+\]")
_ATTRS = re.compile(r"\{\s*[#.:][^}]*\}")
_HTML = re.compile(r"</?[A-Za-z][^>]*>")
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_EMPH = re.compile(r"(?<![\w*])([*_])(?=\S)(.+?)(?<=\S)\1(?![\w*])")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[^a-z\s])|(?<=[。！？])")
_CLOSING = ".!?:;。！？：；"


@dataclass(frozen=True)
class _Sentence:
    text: str
    rank: int  # rank of its passage (0 = best)
    position: int  # order within the passage
    number: int  # the passage's global excerpt number
    tokens: frozenset[str]


def _inline(text: str) -> str:
    """Strip inline Markdown, leaving code spans exactly as written."""
    out = []
    last = 0
    for m in _CODE_SPAN.finditer(text):
        out.append(_plain(text[last : m.start()]))
        out.append(m.group(0))
        last = m.end()
    out.append(_plain(text[last:]))
    return re.sub(r"\s+", " ", "".join(out)).strip()


def _plain(text: str) -> str:
    text = _IMAGE.sub("", text)
    text = _FOOTNOTE.sub("", text)
    text = _LINK.sub(r"\1", text)
    text = _ATTRS.sub("", text)
    text = _HTML.sub("", text)
    text = _STRONG.sub(r"\2", text)
    return _EMPH.sub(r"\2", text)


def _units(markdown: str) -> Iterator[str]:
    """Paragraphs, list items, table rows and short code blocks as plain text."""
    paragraph: list[str] = []
    fence = ""
    code: list[str] = []
    header_pending = False  # the next row of a table is its header: not a sentence
    for line in markdown.splitlines():
        if fence:
            if line.strip().startswith(fence):
                kept = [c.strip() for c in code if c.strip()]
                body = "; ".join(kept)
                short = len(kept) <= MAX_CODE_LINES and len(body) <= MAX_CODE_CHARS
                if body and short and "`" not in body:
                    yield f"`{body}`"
                fence, code = "", []
            else:
                code.append(line)
            continue
        m = _FENCE.match(line)
        if m:
            yield from _flush(paragraph)
            fence = m.group(1)
            continue
        stripped = line.strip()
        if not stripped:
            yield from _flush(paragraph)
            header_pending = True
            continue
        if stripped.startswith("|"):
            yield from _flush(paragraph)
            cells = [c.strip() for c in stripped.strip("|").split("|")]
            if header_pending or re.fullmatch(r"[\s|:-]+", stripped):
                header_pending = False
                continue
            row = " — ".join(_inline(c) for c in cells if c)
            if row:
                yield row
            continue
        header_pending = False
        if _DROP_LINE.match(line):
            yield from _flush(paragraph)
            continue
        if _BULLET.match(line):
            yield from _flush(paragraph)
            paragraph.append(_BULLET.sub("", line))
            continue
        paragraph.append(_QUOTE.sub("", line))
    yield from _flush(paragraph)


def _flush(paragraph: list[str]) -> Iterator[str]:
    if paragraph:
        text = _inline(" ".join(p.strip() for p in paragraph))
        paragraph.clear()
        if text:
            yield text


def sentences(markdown: str) -> list[str]:
    """The plain-text sentences of a Markdown passage, in order."""
    found = []
    for unit in _units(markdown):
        # Numbers in brackets in the source would read as citations once we add ours.
        unit = strip_citations(unit)
        for piece in _SENTENCE_END.split(unit):
            piece = piece.strip()
            if len(piece) > 1:
                found.append(piece)
    return found


def _cite(sentence: str, number: int) -> str:
    """End a sentence with its citation, before its closing punctuation."""
    tail = ""
    while sentence and sentence[-1] in _CLOSING:
        tail = sentence[-1] + tail
        sentence = sentence[:-1]
    cjk = bool(sentence) and ord(sentence[-1]) > 0x2E80
    if not tail:  # a table row or list item: end it like a sentence
        tail = "。" if cjk else "."
    return f"{sentence.rstrip()}{'' if cjk else ' '}[{number}]{tail}"


def _choose(question: str, candidates: list[_Sentence]) -> list[_Sentence]:
    wanted = set(keyword_tokens(question))
    df: dict[str, int] = {}
    for s in candidates:
        for t in s.tokens & wanted:
            df[t] = df.get(t, 0) + 1
    n = len(candidates)

    def score(s: _Sentence) -> float:
        # Rarer question words say more about a sentence than ones every passage shares.
        return sum(math.log(1 + n / df[t]) for t in s.tokens & wanted)

    scored = sorted(
        (s for s in candidates if score(s) > 0),
        key=lambda s: (-score(s), s.rank, s.position),
    )
    if scored:
        # Sentences matching far fewer question words than the best one are noise.
        floor = RELATIVE_FLOOR * score(scored[0])
        scored = [s for s in scored if score(s) >= floor]
    chosen: list[_Sentence] = []
    per: dict[int, int] = {}
    for s in scored:
        if len(chosen) == MAX_SENTENCES:
            break
        if per.get(s.rank, 0) < PER_PASSAGE:
            chosen.append(s)
            per[s.rank] = per.get(s.rank, 0) + 1
    if not chosen:  # nothing overlaps: the opening sentence of the best passages still helps
        firsts = {}
        for s in candidates:
            firsts.setdefault(s.rank, s)
        chosen = list(firsts.values())[:3]
    return sorted(chosen, key=lambda s: (s.rank, s.position))


def extract(question: str, ranked: Sequence[tuple[int, Hit]]) -> list[str]:
    """The answer, as lines to stream: a label, then one bullet per passage.

    ``ranked`` holds (global excerpt number, hit) pairs, best first; each sentence ends with
    its passage's number in brackets, like an LLM's answer.
    """
    candidates: list[_Sentence] = []
    passages: list[Hit] = []
    for number, hit in ranked:
        if any(p.chunk.id == hit.chunk.id for p in passages):
            continue
        rank = len(passages)
        passages.append(hit)
        for position, text in enumerate(sentences(hit.chunk.text)):
            tokens = frozenset(keyword_tokens(text))
            candidates.append(_Sentence(text, rank, position, number, tokens))
        if len(passages) == PASSAGES:
            break
    if not candidates:
        return [f"{LABEL}\n\n", NOTHING]
    chosen = _choose(question, candidates)
    lines = [f"{LABEL}\n\n"]
    by_rank: dict[int, list[_Sentence]] = {}
    for s in chosen:
        by_rank.setdefault(s.rank, []).append(s)
    for rank, group in by_rank.items():
        hit = passages[rank]
        where = " › ".join(hit.chunk.heading_path) or hit.chunk.path
        body = " ".join(_cite(s.text, s.number) for s in group)
        lines.append(f"- **{where}**: {body}\n")
    return lines
