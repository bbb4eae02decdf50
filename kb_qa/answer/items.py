"""A long bullet list in an answer: the item that answers, with its sub-items (and the items
it is nested in while they stay short), and the range of the section's Markdown it is
(what the page highlights).

An outliner's page is one list (Logseq writes every line as a bullet, nests instead of
using headings): quoted whole, "What port does Jellyfin listen on?" showed a 2.6 KB page,
properties, hardware and all, with "Listens on port 8096" somewhere in it, and the page
highlighted all 43 bullets. Numbered lists are steps, read in order: they are quoted whole.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from markdown_it import MarkdownIt

from kb_qa.answer.blocks import Block, reading_text
from kb_qa.answer.rows import rarity_score, run_around
from kb_qa.ingest.indents import columns, unindented
from kb_qa.text import cjk_chars, keyword_tokens

__all__ = ["ITEM_CHARS", "LIST_CHARS", "is_long_list", "matching_item"]

# A bullet list longer than this is cut to the item that answers (an admonition this long
# is no longer quoted whole either: units.BOX_CHARS).
LIST_CHARS = 600
# The item grows to the item it is nested in while that is no longer than this, so that a
# bullet is read with its parent's words ("Jellyfin" over "Listens on port 8096"; the
# section's tail is quoted up to as much: units.TAIL_CHARS).
ITEM_CHARS = 400
_BULLET = re.compile(r"[-*+][ \t]")
_PARSER = MarkdownIt("commonmark", {"maxNesting": 100})


@dataclass(frozen=True)
class _Item:
    first: int  # its first line, among the list's lines
    end: int  # the line after its last (its sub-items included)
    parent: int  # the item it is nested in (-1: a top-level item)


def is_long_list(block: Block) -> bool:
    """Whether ``block`` is a bullet list an answer cuts to the item that answers."""
    return block.kind == "list" and len(block.text) > LIST_CHARS and bool(_BULLET.match(block.text))


def matching_item(
    listed: Block, markdown: str, weight: dict[str, float]
) -> tuple[str, tuple[int, int]] | None:
    """The item of a long bullet list (``is_long_list``) that holds the most of the
    question's words (rarer among the items counting more), the shallowest of a tie, grown to
    its parents while they stay within ``ITEM_CHARS``: its text as shown and its range of
    the section's ``markdown``. None when nothing is cut: the list is short or numbered,
    no item holds a question word, or the item is the whole list."""
    if not is_long_list(listed):
        return None
    start, stop = listed.span
    lines = markdown[start:stop].split("\n")
    items = _items(lines)
    if len(items) < 2:
        return None
    first_child = {item.parent: i for i, item in reversed(list(enumerate(items)))}
    own = [
        _words(
            "\n".join(
                lines[item.first : items[first_child[i]].first if i in first_child else item.end]
            )
        )
        & weight.keys()
        for i, item in enumerate(items)
    ]
    # An item is read with the items it is nested in, as a section with its heading path:
    # "restic to B2 > runs at 02:30" answers "When does the restic backup run?" under
    # "Backups", where the log's "restic to B2 configured" holds one of its words.
    held = [set(found) for found in own]
    depth = [0] * len(items)
    for i, item in enumerate(items):  # an item's parent comes before it
        if item.parent >= 0:
            held[i] |= held[item.parent]
            depth[i] = depth[item.parent] + 1

    score = rarity_score(own, weight)  # rarer among the items, counting more
    scores = [score(found) for found in held]

    def size(i: int) -> int:  # item i with its sub-items
        return sum(len(line) + 1 for line in lines[items[i].first : items[i].end])

    # Of the items holding the most, the one whose own words complete it: the shallowest
    best = max(range(len(items)), key=lambda i: (scores[i], -depth[i], -i))
    if scores[best] <= 0:
        return None
    # ... with the items beside it that answer too, as a table's rows (``rows.run_around``):
    # those whose own words score TABLE_ROW_SHARE of its own. Uvicorn's "Which IPs are
    # trusted for proxy headers by default?": the `--proxy-headers` item says they are
    # restricted, the `--forwarded-allow-ips` item after it which they are.
    beside = [i for i, item in enumerate(items) if item.parent == items[best].parent]
    at = beside.index(best)
    mine = [score(own[i]) for i in beside]
    lo, hi = run_around(mine, at) if mine[at] > 0 else (at, at)
    first, last = beside[lo], beside[hi]
    while items[first].parent >= 0 and size(items[first].parent) <= ITEM_CHARS:
        first = last = items[first].parent
    begin, end = items[first].first, items[last].end
    while end > begin + 1 and not lines[end - 1].strip():
        end -= 1
    if begin == 0 and end >= len(lines):
        return None
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    width = columns(lines[begin])
    shown = "\n".join(unindented(line.removesuffix("\r"), width) for line in lines[begin:end])
    span = (
        start + offsets[begin],
        start + offsets[end - 1] + len(lines[end - 1].removesuffix("\r")),
    )
    return reading_text(shown), span


def _items(lines: list[str]) -> list[_Item]:
    """The list's items at every depth, in order, each with where it is nested."""
    width = min((columns(line) for line in lines if line.strip()), default=0)
    source = "\n".join(unindented(line, width) for line in lines)
    items: list[_Item] = []
    open_items: list[int] = []
    for token in _PARSER.parse(source):
        if token.type == "list_item_open" and token.map:
            parent = open_items[-1] if open_items else -1
            items.append(_Item(token.map[0], min(token.map[1], len(lines)), parent))
            open_items.append(len(items) - 1)
        elif token.type == "list_item_close" and open_items:
            open_items.pop()
    return items


def _words(text: str) -> frozenset[str]:
    return frozenset(keyword_tokens(text, camel_parts=True)) | cjk_chars(text)
