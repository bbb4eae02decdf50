"""What a no-key answer quotes around the block it chose: the sentence that introduces a
list, code block or table, what a sentence announces, and the neighbouring blocks that hold
the rest of the question's words (``extractive`` chooses the block; a unit is what one
choice quotes, the same for ranking and for quoting).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kb_qa.answer.blocks import Block, weight_of
from kb_qa.answer.items import is_long_list
from kb_qa.types import TITLE_ENDS

MAX_PASSAGE_CHARS = 1600
# A passage grows over the unit just before or after it when that unit holds a question
# word the passage and its heading lack, while the whole stays within this many
# characters (``widened``). Real docs split an answer over neighbouring paragraphs
# ("Does httpx work with a socks5 proxy? What do I need to install?": the install command,
# then the proxy example). bench/passages.py dev: real docs 0.500 -> 0.594 (800 characters:
# 0.578; 1600: 0.594; units two blocks away too: 0.594; only words of rarity weight >= 1.0:
# 0.547), the sample site and vault 0.855 unchanged; locked test, scored after: real docs
# 0.500 -> 0.531, 0.778 unchanged. The first passage's mean length on the dev questions:
# sample site and vault 249 -> 278 characters, real docs 336 -> 391. A "how do I" question
# answered by the passage that shows how is not grown (its code needs nothing around it).
WIDEN_CHARS = 1200
# A passage runs on to its section's end when no more than this many characters follow it:
# a section's last lines are often the answer's condition or caveat, in words the question
# does not use ("Does whitespace matter there?": "Note that the space before the semicolon
# is required."; "If unspecified, the environment is assumed to be compatible with all
# platforms."). bench/passages.py dev: real docs 0.609 -> 0.656 (100: 0.625, 150-300:
# 0.641, 400 and 600: 0.656), the sample site and vault 0.855 unchanged; the first
# passage's mean length 406 -> 446 characters on real docs, 278 -> 313 on the sample site
# and vault (443 and 295 since it stops before admonitions and tabs: bench/highlights.py's
# mkdocs-material 0.967 -> 0.867 went back to 0.967). Every short section quoted whole
# instead: 0.641 at 400-600 characters, 0.656 at 800 (483 characters on average). On the
# held-out set (Typer and Django REST framework, never tuned on) 0.312 -> 0.354, scored
# once this rule was chosen.
TAIL_CHARS = 400
# An admonition or a content tab this short is quoted whole once a passage is in it: it is
# one note ("!!! warning" on Uvicorn's "Running with Gunicorn": "The `uvicorn.workers`
# module is deprecated..." was quoted without "You should use the `uvicorn-worker` package
# instead." and its install command, the answer's other half). Found by a QA pass over
# Uvicorn's docs; bench/passages.py dev and the held-out set unchanged at 300-1000.
BOX_CHARS = 600
# A tab's or admonition's title (blocks._flatten): "**Note:**", "**What are return codes?**"
TITLE = re.compile(r"\*\*[^*\n]{0,79}[" + re.escape("".join(TITLE_ENDS)) + r"]\*\*")
FOOTNOTE = re.compile(r"\[\^[^\]\n]{1,100}\]:")  # a footnote's definition, "[^1]: ..."
# A lead-in that only announces an example ("For example:", "E.g.:"): what it exemplifies
# is the statement before it, quoted with it. Starlette's "more specific routes are listed
# before general cases" was left out of its "For example:" and the code under it.
_EXAMPLE = re.compile(r"(?:for example|for instance|e\.g\.|example)\s*:", re.IGNORECASE)


def quoted_with(blocks: Sequence[Block], best: int) -> list[int]:
    """The blocks quoted when block ``best`` is chosen: a list, code block or table with
    the sentence that introduces it, a sentence with what it introduces and with the
    display formula that ends it."""

    def lead_in(i: int) -> bool:  # a footnote's text shows at the page's end, not here
        return blocks[i].kind == "prose" and not FOOTNOTE.match(blocks[i].text)

    chosen, last = [best], best
    if blocks[best].kind != "prose" and best > 0 and lead_in(best - 1):
        chosen.insert(0, best - 1)
    first = chosen[0]
    # ... an example admonition's title too ("**Example:**": copier's "Combine `default` and
    # `when: false`." was left out of the `!!! example` under it)
    if first > 0 and lead_in(first - 1) and _EXAMPLE.fullmatch(blocks[first].text.strip(" *")):
        chosen.insert(0, first - 1)
    size = sum(len(blocks[i].text) for i in chosen)  # kept as it grows: run for every block
    while (
        last + 1 < len(blocks)
        and (
            blocks[last + 1].kind == "math"  # a formula ends the sentence before it
            or introduces(blocks[last].text, code=blocks[last + 1].kind == "code")
        )
        and not FOOTNOTE.match(blocks[last + 1].text)
        and size < MAX_PASSAGE_CHARS
    ):
        last += 1
        chosen.append(last)
        size += len(blocks[last].text)
    return chosen


def widened(
    blocks: Sequence[Block], chosen: list[int], heading: frozenset[str], weight: dict[str, float]
) -> list[int]:
    """The run of blocks ``chosen`` grown over the unit just before or after it
    (``quoted_with``) while that unit holds a question word that neither the run nor the
    heading has, the unit adding more first, up to ``WIDEN_CHARS`` (``_joins`` says which
    blocks it may run over). A passage holding a table or a long list is not grown: its
    rows or items are cut (``_cut``)."""
    while not any(_cut(blocks[i]) for i in chosen):
        held = frozenset().union(*(blocks[i].tokens for i in chosen)) | heading
        grown: list[tuple[float, list[int]]] = []
        for j in (chosen[0] - 1, chosen[-1] + 1):
            if not 0 <= j < len(blocks):
                continue
            unit = quoted_with(blocks, j)
            run = list(range(min(chosen[0], unit[0]), max(chosen[-1], unit[-1]) + 1))
            new = weight_of(frozenset().union(*(blocks[i].tokens for i in unit)) - held, weight)
            if new > 0 and _fits(blocks, run, WIDEN_CHARS):
                grown.append((new, run))
        if not grown:
            return chosen
        chosen = max(grown)[1]
    return chosen


def whole_box(blocks: Sequence[Block], chosen: list[int]) -> list[int]:
    """``chosen`` grown over the whole admonition or tab it is in, title included, when that
    is no longer than ``BOX_CHARS`` and a passage may run over it (``_joins``)."""
    box = blocks[chosen[0]].box
    if not box or any(blocks[i].box != box for i in chosen):
        return chosen
    inside = [i for i, b in enumerate(blocks) if b.box == box]
    run = list(range(min(inside[0], chosen[0]), max(inside[-1], chosen[-1]) + 1))
    return run if _fits(blocks, run, BOX_CHARS) else chosen


def run_to_end(blocks: Sequence[Block], chosen: list[int]) -> list[int]:
    """``chosen`` run on to the section's end when no more than ``TAIL_CHARS`` of its text
    follow, outside admonitions and tabs, and the passage may run over them (``_joins``)."""
    rest = range(chosen[-1] + 1, len(blocks))
    if (
        rest
        and _joins(blocks[chosen[-1]], last=False)
        and _fits(blocks, rest, TAIL_CHARS)
        # nor into an admonition or content tabs: a reader sees one tab, a highlight cannot
        # run through hidden ones (Material's screenshots "With expansion" / "Without")
        and not any(blocks[i].box or is_title(blocks[i]) for i in rest)
    ):
        return [*chosen, *rest]
    return chosen


# A paragraph that gives the remedy of what the one before it describes, by pointing back
# at it: copier's "How do I recover from a broken update?" quoted the ways an update
# breaks, not "To overcome this, use the `copier recopy` command" two paragraphs on, and
# its credentials question the problem without "To avoid that, the simplest fix is to
# clone using SSH". An FAQ that labels it ("**Solution:**", "Workaround:") gives it so too:
# Pi-hole's "weird random domains in my query log" quoted the example queries and stopped
# before "This happens when using Chrome-based browsers" (its dev third 12 -> 13 of 22)
_REMEDY = re.compile(
    r"to (?:overcome|avoid|fix|solve|resolve|prevent|work ?around|get around|circumvent) "
    r"(?:this|that|these|those|it)\b|(?:if|when|should) (?:this|that) (?:happens|occurs|fails)\b"
    r"|\**(?:solution|fix|workaround|resolution|remedy)\**:",
    re.IGNORECASE,
)


def completed(blocks: Sequence[Block], chosen: list[int]) -> list[int]:
    """The passage ``chosen`` grown over what completes it: the short admonition or tab it
    is in (``whole_box``), the remedy the docs give next (``with_remedy``) and a short rest
    of its section (``run_to_end``)."""
    return run_to_end(blocks, with_remedy(blocks, whole_box(blocks, chosen)))


def with_remedy(blocks: Sequence[Block], chosen: list[int]) -> list[int]:
    """``chosen`` grown over the remedy the docs give next (``_REMEDY``: the next block, or
    the one after a paragraph between), with what that remedy introduces, up to
    ``WIDEN_CHARS`` and where a passage may run (``_joins``)."""
    for j in (chosen[-1] + 1, chosen[-1] + 2):
        if j >= len(blocks) or blocks[j].kind != "prose" or not _REMEDY.match(blocks[j].text):
            continue
        run = list(range(chosen[0], quoted_with(blocks, j)[-1] + 1))
        if all(blocks[i].kind == "prose" for i in range(chosen[-1] + 1, j)) and _fits(
            blocks, run, WIDEN_CHARS
        ):
            return run
    return chosen


def _fits(blocks: Sequence[Block], run: Sequence[int], limit: int) -> bool:
    """Whether the blocks ``run`` (indexes in order) hold at most ``limit`` characters and a
    passage may run over each of them (``_joins``)."""
    return sum(len(blocks[i].text) for i in run) <= limit and all(
        _joins(blocks[i], last=i == run[-1]) for i in run
    )


def _joins(block: Block, last: bool) -> bool:
    """Whether a passage may be grown over ``block``: not over a table or a long list (its
    rows or items are cut: ``items``), a footnote's text (the page shows it at its end),
    nor past a code block's annotations (the page shows them only as tooltips: a highlight
    cannot run through them)."""
    return not _cut(block) and not FOOTNOTE.match(block.text) and (last or not block.notes)


def _cut(block: Block) -> bool:
    """Whether an answer may quote only part of ``block``: a table (a long one's rows,
    ``rows``), a long bullet list (its items, ``items``). No passage grows over one."""
    return block.kind == "table" or is_long_list(block)


def is_title(block: Block) -> bool:
    """Whether ``block`` is a tab's or an admonition's title, as ``blocks`` writes it."""
    return block.kind == "prose" and TITLE.fullmatch(block.text.strip()) is not None


def introduces(text: str, code: bool = False) -> bool:
    """Whether a block ends by announcing what follows ("Run this:", "运行：", "**Tab:**";
    before ``code``, also "...": "You can disable SSL verification completely...")."""
    end = text.rstrip().rstrip("*")
    titled = TITLE.fullmatch(text.strip()) is not None  # "**What are return codes?**"
    return titled or end.endswith((":", "：")) or (code and end.endswith(("...", "…")))
