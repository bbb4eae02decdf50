"""Material for MkDocs' code annotations: a marker "(1)" ("(1)!": the comment goes too) in a
comment of a fenced code block refers to item 1 of the numbered list right after the block,
and the theme moves that item into a tooltip inside the code, hiding the list.

Material does it with the ``content.code.annotate`` feature or a fence's ``{ .annotate }``,
and only for a marker naming an item the list has (its ``findMarkers`` reads comments only,
Pygments' spans; a comment is told here by its opener). A page's Markdown does not say
whether the site has the feature, so a marker and the list after the code are taken to
mean it ("(n)!" means nothing else). The chunker keeps such a list in the piece of its code
block; the extractive answer quotes it with its code, never alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from markdown_it.token import Token

_COMMENT = re.compile(r"#|//|/\*|<!--|--|;|%")
# A marker stands apart, "# (1)!", "/* (2) */": "f(1)" after a ";" is a call, not one.
_MARKER = re.compile(r"(?<![\w)\]])\((\d{1,4})\)")


def annotation_lists(
    tokens: Sequence[Token], same_container: Callable[[Token, Token], bool] | None = None
) -> dict[int, int]:
    """Per fenced code block whose numbered list Material turns into its annotations (its
    index in markdown-it's ``tokens``), the index of that list's opening token: the next
    block, at the same level (and ``same_container``, when flattening lost containers), with
    an item a comment of the code marks."""
    found: dict[int, int] = {}
    for at in range(len(tokens) - 1):
        code, listed = tokens[at], tokens[at + 1]  # a fence has no tokens of its own
        if code.type != "fence" or listed.type != "ordered_list_open" or listed.level != code.level:
            continue
        items, j = 0, at + 2
        while j < len(tokens) and tokens[j].level > listed.level:  # the list's own tokens
            items += tokens[j].type == "list_item_open" and tokens[j].level == listed.level + 1
            j += 1
        if same_container is not None and not same_container(code, listed):
            continue
        if any(1 <= n <= items for n in markers(code.content)):
            found[at] = at + 1
    return found


def markers(code: str) -> set[int]:
    """The numbers of the annotation markers "(n)" in the comments of ``code``."""
    numbers: set[int] = set()
    for line in code.split("\n"):
        opener = _COMMENT.search(line)
        if opener:
            numbers.update(int(m.group(1)) for m in _MARKER.finditer(line, opener.end()))
    return numbers
