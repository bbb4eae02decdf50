"""What an answer shows exactly as the docs write it: code (fenced blocks and inline spans)
and math (``$...$``, ``$$...$$``, ``\\(...\\)``, a ``\\[...\\]`` or ``\\begin{...}`` block, as
pymdownx.arithmatex and Obsidian read them), found without a parser (every delimiter's
scan bounded), so that what cleans prose (links as their words, no HTML tags, escaped
citation markers) can run around them.
"""

from __future__ import annotations

import itertools
import re

FENCE_LINE = re.compile(r"^[ >]{0,8}(`{3,}|~{3,})")
_TICKS = re.compile(r"`+")


def code_segments(text: str) -> list[tuple[bool, str]]:
    """``text`` cut into (is_code, part) runs: fenced blocks and inline code spans are code.

    Linear in the text: fences line by line, code spans by their backtick runs (a span
    closes at the next run of the same length, as CommonMark says; an unclosed run is text).
    """
    parts: list[tuple[bool, str]] = []
    prose: list[str] = []
    fence = ""
    for line in text.splitlines(keepends=True):
        opening = FENCE_LINE.match(line)
        if fence:
            parts.append((True, line))
            if closes_fence(line, fence):
                fence = ""
            continue
        if opening:
            parts += code_spans("".join(prose))
            prose = []
            fence = opening.group(1)
            parts.append((True, line))
            continue
        prose.append(line)
    parts += code_spans("".join(prose))
    return [p for p in parts if p[1]]


def closes_fence(line: str, fence: str) -> bool:
    """Whether ``line`` closes a block opened by ``fence``: a run of the same character at
    least as long, and nothing else on the line (CommonMark)."""
    closing = FENCE_LINE.match(line)
    return (
        closing is not None
        and closing.group(1)[0] == fence[0]
        and len(closing.group(1)) >= len(fence)
        and not line.strip().lstrip(fence[0])
    )


def code_spans(text: str) -> list[tuple[bool, str]]:
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


# Math as arithmatex (and pandoc, Obsidian) delimits it. An inline ``$`` opens before a
# non-space and closes after one, not before a digit: "costs $5 and $10" is prose. A
# formula never runs over a blank line (it is a paragraph's), and is bounded in length so
# that a stray delimiter costs a bounded scan.
_NOT_BLANK = r"(?:(?!\n[ \t>]*\n)[\s\S])"
_MATH = re.compile(
    rf"\$\${_NOT_BLANK}{{1,2000}}?\$\$"
    rf"|(?<![\\$])\$(?=[^\s$])(?:\\\S|[^$\\\n]|\n(?![ \t>]*\n)){{1,1000}}?(?<=[^\s\\])\$(?![\d$])"
    rf"|\\\({_NOT_BLANK}{{1,500}}?\\\)"
    rf"|^[ \t>]*\\\[{_NOT_BLANK}{{0,2000}}?\\\][ \t]*$"
    rf"|^[ \t>]*\\begin\{{([A-Za-z]{{1,30}}\*?)\}}[\s\S]{{0,2000}}?\\end\{{\1\}}",
    re.M,
)


def verbatim_segments(text: str) -> list[tuple[bool, str]]:
    """``text`` cut into (is_verbatim, part) runs: code (``code_segments``) and, in the
    prose between, math."""
    parts: list[tuple[bool, str]] = []
    for is_code, part in code_segments(text):
        if is_code:
            parts.append((True, part))
            continue
        at = 0
        for m in _MATH.finditer(part):
            parts += [(False, part[at : m.start()]), (True, m.group())]
            at = m.end()
        parts.append((False, part[at:]))
    return [p for p in parts if p[1]]


def is_formula(text: str) -> bool:
    """Whether ``text`` is one formula and nothing else (a display block: ``$$...$$``)."""
    return _MATH.fullmatch(text.strip()) is not None
