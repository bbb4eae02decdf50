"""Extractive answers, when no LLM is configured: the answering passage of the best sections.

Of retrieval's best five sections, the answer opens with the one whose passage holds the
question's rarer words (its heading counts: a heading that restates the question, an FAQ
entry, a rare term such as an error code), that is closest to the question as a whole and,
when the question asks for an amount, that states one (``amounts.py``). It is quoted
verbatim and whole: a paragraph together with the list, code block or table it introduces,
a table with its header, an admonition's or a tab's text (its title or label kept as a
lead-in), a code block with the list Material for MkDocs shows as its annotations (never
that list alone: the page has it only in tooltips), grown over the paragraph or block
beside it that holds the rest of the question's words. A second section follows only when
it scores as well. Each passage is introduced by its heading path and its citation, so no
marker ever lands inside code and no answer ends on a dangling ":".

When retrieval's evidence says the docs do not cover the question (``covered``), the answer
says so first and names the nearest sections instead. Its fixed sentences are in the
reader's language (``lang``, ``wording``), English by default.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from kb_qa.answer import names
from kb_qa.answer.amounts import asks_amount, states_amount, without_asking_form
from kb_qa.answer.blocks import Block, passages, table_header, weight_of
from kb_qa.answer.coverage import content_chars
from kb_qa.answer.items import matching_item
from kb_qa.answer.prepare import Prepared, points_back
from kb_qa.answer.rows import matching_rows, rows_span
from kb_qa.answer.units import completed, introduces, is_title, quoted_with, widened
from kb_qa.answer.wording import say
from kb_qa.index.keyword import tokens_and_dates
from kb_qa.ingest.linkgraph import pages_linked
from kb_qa.spoken import cjk_topic, foreign, topic_words
from kb_qa.text import decimals, keyword_tokens, normalize, spelled_out
from kb_qa.types import Hit
from kb_qa.verbatim import verbatim_segments

__all__ = ["LABEL", "NOTHING", "NOT_COVERED", "Extract", "extract", "quote", "sections_of", "where"]

# The fixed sentences in English (``wording`` has them in every language it speaks).
LABEL = say("en", "label")
NOT_COVERED = say("en", "not_covered")
NOTHING = say("en", "nothing")
CANDIDATES = 5  # best-ranked sections read; the best-scoring one leads
# A section's score: its best passage's question words (rarity-weighted; the heading's
# words count as the passage's; the best passage of all candidates scores 1.0) plus this
# times the section's cosine similarity to the question. On the dev split of
# bench/questions/answers.jsonl (bench/passages.py) the first passage held the answer for
# 0.600 of the questions when retrieval's first section led, 0.618 when the best by words
# led, 0.636 / 0.691 / 0.673 / 0.655 with weights 0.5 / 1.0 / 1.5 / 2.0.
SIMILARITY_WEIGHT = 1.0
# Added when the question asks for an amount ("how much", "what's the limit", 多少) and the
# passage states one ("450 ml", "256 KiB"; amounts.py). Dev: 0.800 -> 0.836 at 0.2 to 0.5 (the
# middle taken), 0.818 at 0.1 and 1.0, and 0.818 at 0.1-0.5 when numbers in code counted.
AMOUNT_WEIGHT = 0.3
# The share a follow-up's carried terms (the previous question's key terms, searched with it)
# count of a passage's words when the follow-up names what it asks about ("and when is the
# MOT due?" after tyre pressures quoted the tyre pressures at 1.0): they say which topic,
# its own words what of it. One that points back ("how do I change it for one job?") asks
# about them: they count whole. bench/answers.py --followups (20 follow-ups, 19 of which
# point back), first passage from a gold section: 0.250 with every carried term whole,
# 0.300 with all at 0.5 (which lost test_a_follow_up_is_searched_with_the_previous_question's
# "change it for just one job"), 0.250 so.
CARRIED_WEIGHT = 0.5
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
# Which passage of a section is quoted. A block's own question words count this much more
# again (the heading's words count for every block: "You can disable SSL verification..."
# says what the question asks, where the error example before it only adds "certificate"),
# and a "how do I" question leans to the passage that shows how, code or the sentence
# introducing it, by HOW_WEIGHT (about one question word). Found on kb-qa's own QA pass over
# httpx and pdm (6 how-to questions whose right section was quoted at its opening or its
# "Added in 1.5.0." note: 0 -> 6 of 6); on 48 questions labelled on the same two sites'
# docs 22 -> 24, and 20 -> 20 on 48 labelled on hatch and starlette, scored once the
# rule was fixed; bench/passages.py's dev split is unchanged (0.855).
OWN_WEIGHT = 0.5
HOW_WEIGHT = 1.0
_HOW = re.compile(
    r"\bhow (?:do|can|could|should|would|does) (?:i|we|you|one)\b|\bhow to\b"
    r"|怎么|如何|怎样|どうやって|どう|方法|어떻게",
    re.IGNORECASE,
)
# What opens a section without being its text: an admonition's bare title ("**Tip:**"), a
# version note ("Added in 1.5.0."), mkdocstrings' "Bases: `Enum`". A section whose every block
# holds only the heading's words is quoted from its first block after these.
_ASIDE = re.compile(
    r"\*\*[^*\n]{1,40}\*\*:?|(?:Added|New|Changed|Deprecated|Removed)(?: in| since)?"
    r" (?:version )?v?\d+(?:\.\d+)*\.?|Bases: [^\n]{1,300}",
    re.IGNORECASE,
)
# The ends of "what's", "don't", "they're", "I've", "we'll", "I'd", "I'm": the tokenizer
# splits them at the apostrophe, and the "s" of "What's the pip package..." made "the
# server's version" outscore the table holding the package (dev 0.709 -> 0.745).
_CONTRACTION = re.compile(r"(?<=\w)(?:n't|'s|'re|'ve|'ll|'d|'m)\b", re.IGNORECASE)
# "Turn it off" / "switch on", as docs say it: disabled, "enabled: false" ("how do I turn
# that off?" of the dead-letter queue quoted the queue again, not `dead_letter.enabled:
# false`).
_SWITCH = re.compile(r"\b(?:turn|switch|shut)(?:\s+\S+){0,3}?\s+(off|on)\b", re.IGNORECASE)
_SWITCHED = {"off": "disable disabled enabled false", "on": "enable enabled true"}
# Words of a question that join into a compound ("back up" -> "backup"); with a block's own
# words breaking a tie its heading makes, dev 0.782 -> 0.800 (neither alone gains).
_WORD = re.compile(r"[^\W\d_]{2,}")


@dataclass(frozen=True)
class _Choice:
    number: int
    hit: Hit
    text: str
    score: float
    span: tuple[int, int]  # what is quoted, as offsets in the section's Markdown
    words: float  # the weights of the question's words its passage and heading hold


@dataclass(frozen=True)
class Extract:
    """An extractive answer: the pieces to stream, and per citation number the range of
    its section's Markdown (``Chunk.text`` offsets) that the answer quotes."""

    pieces: list[str]
    quoted: dict[int, tuple[int, int]]


def _best_passage(
    blocks: Sequence[Block],
    markdown: str,
    heading: frozenset[str],
    weight: dict[str, float],
    how: bool,
) -> tuple[str, float, tuple[int, int]]:
    """The best block of a section (its ``markdown``) with what belongs to it, its score
    (the weights of the question words it and the heading hold) and its span. ``how``: the
    question asks how to do something (``_HOW``)."""
    if not blocks:
        return "", 0.0, (0, 0)

    # A block is ranked by all it would be quoted with (``units.quoted_with``). bench/passages.py
    # dev: real docs 0.484 -> 0.500, the sample site and vault 0.855 unchanged. The
    # section's own score stays its best block's (scored by the unit quoted, section
    # choice moved: bench/answers.py dev first citation 0.266 -> 0.228).
    unit_of = [quoted_with(blocks, i) for i in range(len(blocks))]
    units = [frozenset().union(*(blocks[j].tokens for j in unit)) for unit in unit_of]
    # A tab's or an admonition's title is the heading of what it holds: its question words
    # count HEADING_WEIGHT more again, as a section heading's do. "How do I print hello from
    # Rust?" quoted Zensical's starter page's Python tab, tied with its Rust tab (each holds
    # two of the words); bench/passages.py dev unchanged at 0.25 to 1.0 (0.855, real docs
    # 0.594), and the held-out set too (0.229).
    titles = [
        frozenset().union(*(blocks[j].tokens for j in unit if is_title(blocks[j])))
        for unit in unit_of
    ]

    def score(i: int) -> float:
        return weight_of(units[i] | heading, weight)

    def own(i: int) -> float:  # a heading's words count for every block
        return weight_of(units[i], weight)

    def shows(i: int) -> bool:  # code, or the sentence that introduces it
        after = i + 1 < len(blocks) and blocks[i + 1].kind == "code"
        return blocks[i].kind == "code" or (after and introduces(blocks[i].text, code=True))

    def rank(i: int) -> tuple[float, float, int]:
        leaning = HOW_WEIGHT if how and shows(i) else 0.0
        titled = HEADING_WEIGHT * weight_of(titles[i], weight)
        return score(i) + OWN_WEIGHT * own(i) + leaning + titled, own(i), -i

    best = max(range(len(blocks)), key=rank)
    if max(map(score, range(len(blocks)))) == weight_of(heading, weight) and not (
        how and shows(best)
    ):
        # No block says more than the heading: the section's opening does (past a bare
        # admonition title or version note)
        best = 0
        while best + 1 < len(blocks) and _ASIDE.fullmatch(blocks[best].text.strip()):
            best += 1
    chosen = unit_of[best]
    if not (how and shows(best)):
        chosen = widened(blocks, chosen, heading, weight)
    chosen = completed(blocks, chosen)
    shown: list[str] = []
    spans: list[tuple[int, int]] = []
    for i in chosen:
        item = matching_item(blocks[i], markdown, weight) if i == chosen[-1] else None
        if blocks[i].kind == "table":
            text, kept = matching_rows(blocks[i].text, weight)
            shown.append(text)
            spans.append(rows_span(blocks[i], kept))
        elif item is not None:  # a long bullet list: the item that answers (``items``)
            shown.append(item[0])
            spans.append(item[1])
        else:  # code with its annotations under it, as the page's tooltips explain it
            shown.append("\n\n".join(filter(None, (blocks[i].text, blocks[i].notes))))
            spans.append(blocks[i].span)
    text = "\n\n".join(shown)
    end = text.rstrip()
    if end.endswith((":", "：")):  # nothing followed it: end like a sentence, in its script
        text = end[:-1] + ("。" if end[-1] == "：" else ".")
    if spans[-1] != blocks[chosen[-1]].span:
        quoted = spans[-1]  # the rows or item that answer, not the sentence introducing them
    else:
        quoted = (min(a for a, _ in spans), max(b for _, b in spans))
    restated = HEADING_WEIGHT * weight_of(heading, weight)
    best_block = max(weight_of(b.tokens | heading, weight) for b in blocks)
    return text, best_block + restated, quoted


def _compounds(question: str) -> set[str]:
    """The question's neighbouring words written as one ("back up" -> "backup", "set up"
    -> "setup", "log in" -> "login"): the docs often spell them so, in code above all."""
    words = _WORD.findall(question)
    return set(keyword_tokens(" ".join(a + b for a, b in itertools.pairwise(words))))


# What a heading's text may hold that the answer's Markdown would read as markup: the
# heading "manylinux-*-image, musllinux-*-image" showed half in italics, "Step [2]" a
# citation chip of source 2, "The __init__ method" a bold "init".
_MARKUP = re.compile(r"([\\`*_\[\]<])")


# A bracket of the docs' prose that reads as a citation marker ("result[1]", "section
# [12]", "[Source 2]"): the answer's citations would renumber or drop it.
# A bracket holding a number ("[1]", "[2, 3]", "[ 4-5 ]"), not a task's box ("- [ ] Return
# the laptop" was quoted "\[ ]": a bullet, not a box, and "\[ ]" in the terminal).
_MARKER_LIKE = re.compile(
    r"\[(?=[ ,\-–]{0,4}\d[\d ,\-–]{0,20}\]|(?:excerpt|source)s?\b)", re.IGNORECASE
)


def literal(text: str) -> str:
    """A quoted passage as Markdown that shows it as written: outside code and math, a
    bracket that would read as a citation marker is escaped ("result\\[1]" shows
    "result[1]"; code and math are never read for markers: "$x_[1]$" stays as written)."""
    return "".join(
        part if kept else _MARKER_LIKE.sub(r"\\[", part) for kept, part in verbatim_segments(text)
    )


def where(hit: Hit) -> str:
    """A section's heading path (its file when it has none), as the answer's Markdown shows
    it: text, with what would read as markup escaped."""
    return _MARKUP.sub(r"\\\1", " › ".join(hit.chunk.heading_path) or hit.chunk.path)


def sections_of(ranked: Sequence[tuple[int, Hit]], limit: int) -> list[tuple[int, Hit]]:
    """The first ``limit`` distinct sections of ``ranked`` ((excerpt number, hit), best first)."""
    sections: list[tuple[int, Hit]] = []
    for number, hit in ranked:
        key = (hit.chunk.path, hit.chunk.anchor)
        if all((h.chunk.path, h.chunk.anchor) != key for _, h in sections):
            sections.append((number, hit))
        if len(sections) == limit:
            break
    return sections


def extract(
    question: str, ranked: Sequence[tuple[int, Hit]], covered: bool = True, lang: str = ""
) -> list[str]:
    """The answer, as pieces to stream (``quote`` says what each citation quotes)."""
    return quote(question, ranked, covered, lang).pieces


def quote_prepared(prepared: Prepared, lang: str = "", failed: bool = False) -> Extract:
    """``quote`` for what ``prepare`` found: the question as asked, and the terms a follow-up
    was searched with."""
    return quote(
        prepared.asked or prepared.queries[0],
        prepared.ranked,
        prepared.covered,
        lang,
        failed,
        prepared.carried,
        prepared.about,
    )


def quote(
    question: str,
    ranked: Sequence[tuple[int, Hit]],
    covered: bool = True,
    lang: str = "",
    failed: bool = False,
    carried: str = "",
    about: bool = False,
) -> Extract:
    """The answer, and the range of each quoted section that it quotes.

    ``ranked`` holds (global excerpt number, hit) pairs, best first. The best section's
    passage comes first, a second one when it matches about as well; each is introduced by
    its heading path and its number in brackets, like an LLM's citation. ``lang``, the
    reader's language tag, is the language of the sentences around the passages; ``failed``:
    a model is configured but did not answer, which the label says. ``carried``: the
    previous question's key terms a follow-up was searched with; a passage's words of them
    count ``CARRIED_WEIGHT`` as much as the question's own (as much when the question points
    back: "how do I change it?"), so "and when is the MOT due?" after a question on tyre
    pressures quotes the MOT, in the car's notes.
    """
    label = say(lang, "label_failed" if failed else "label")
    sections = sections_of(ranked, CANDIDATES)
    if not sections:
        return Extract([f"{label}\n\n", say(lang, "nothing")], {})
    if not covered:  # a model that failed is said first: the reader would think it answered
        nearest = "".join(f"- **{where(h)}** [{n}]\n" for n, h in sections[:3])
        failure = f"{say(lang, 'model_failed')} " if failed else ""
        return Extract([f"{failure}{say(lang, 'not_covered')}\n\n", nearest], {})
    read = [(n, h, passages(h.chunk.text, table_header(h.chunk.context))) for n, h in sections]
    said = without_asking_form(_CONTRACTION.sub("", normalize(question)))
    said = topic_words(said, foreign(question))  # not French "les", "est", "sont"
    said = cjk_topic(said)  # nor Japanese は, を, する: "…を実行する" outweighed 初日
    wanted = set(tokens_and_dates(said)) | _compounds(said) | content_chars(said)
    wanted |= set(spelled_out(said))  # "RAM" asks for the "Memory" row
    wanted |= set(decimals(said))  # as passages are read: "2.0" whole
    for way in _SWITCH.findall(said):
        wanted |= set(keyword_tokens(_SWITCHED[way.lower()]))
    context = set(keyword_tokens(normalize(carried))) - wanted
    wanted |= context
    carried_weight = 1.0 if points_back(question) else CARRIED_WEIGHT
    df: dict[str, int] = {}
    for _, _h, blocks in read:
        for t in wanted & (set().union(*(b.tokens for b in blocks)) if blocks else set()):
            df[t] = df.get(t, 0) + 1
    # Rarer question words say more about a passage than words every section shares.
    weight = {
        t: math.log(1 + len(read) / df.get(t, 1)) * (carried_weight if t in context else 1.0)
        for t in wanted
    }
    scored = []
    how = _HOW.search(question) is not None
    for n, h, blocks in read:
        # A page's other names (front matter's aliases) name its first section as its title
        # does: "who is 田中さん?" of a note aliased so quoted another note.
        named = " ".join((*h.chunk.indexed_path, h.chunk.also_called))
        heading = frozenset(tokens_and_dates(named)) & frozenset(wanted)
        text, words, span = _best_passage(blocks, h.chunk.text, heading, weight, how)
        if text:
            scored.append((n, h, text, words, span))
    if not scored:
        nearest = "".join(f"- **{where(h)}** [{n}]\n" for n, h in sections[:3])
        return Extract([f"{label}\n\n", nearest], {})
    # Which section leads: its passage's question words, its closeness (ties: retrieval's order)
    most = max(words for *_, words, _ in scored) or 1.0
    exact = names.named_exactly(question, [h.chunk.indexed_path for _, h, *_ in scored])
    asks = asks_amount(question)  # passages are read for an amount only when it asks
    choices = [
        _Choice(
            n,
            h,
            text,
            words / most
            + SIMILARITY_WEIGHT * (h.similarity or 0.0)
            + (AMOUNT_WEIGHT if asks and states_amount(text) else 0.0)
            + (names.NAME_WEIGHT if is_named else 0.0),
            span,
            words,
        )
        for (n, h, text, words, span), is_named in zip(scored, exact, strict=True)
    ]
    first = max(choices, key=lambda c: c.score)
    home = [c for c in choices if c.hit.chunk.url == ""]
    if about and home:  # "What is Lumen?": the site's home page says (``prepare``)
        first = max(home, key=lambda c: (c.hit.chunk.level == 0, c.score))
    chunks = [c.hit.chunk for c in choices]
    # A passage that sends the reader elsewhere ("Install Lumen on Linux, macOS or Docker")
    # is not the answer when retrieval found the page it links to: that page's best does,
    # if it holds as much of the question. A passage that answers and also links on ("20
    # new words a day, see [[Reading List]]") keeps the lead: bench/passages.py dev 0.745
    # -> 0.764, locked test 0.741 unchanged.
    linked = pages_linked(first.hit.chunk, first.hit.chunk.text[slice(*first.span)], chunks)
    if linked:
        there = max((c for c in choices if c.hit.chunk.path in linked), key=lambda c: c.words)
        if there.words >= first.words:
            first = there
    shown = [first]
    runner = max((c for c in choices if c is not first), key=lambda c: c.score, default=None)
    if runner is not None and runner.score > 0 and runner.score >= SECOND_SHARE * first.score:
        shown.append(runner)
    pieces = [f"{label}\n\n"]
    for c in shown:
        pieces.append(f"**{where(c.hit)}** [{c.number}]\n\n{literal(c.text)}\n\n")
    # The other strong sections, one click away: retrieval's top 5 are all worth a look.
    others = [c for c in choices if c not in shown][: CANDIDATES - len(shown)]
    if others:
        listed = say(lang, "separator").join(f"{where(c.hit)} [{c.number}]" for c in others)
        pieces.append(say(lang, "see_also", listed=listed) + "\n")
    return Extract(pieces, {c.number: c.span for c in shown})
