"""A long table in an answer: its header and the run of rows that answer, and the range
of the section's Markdown those rows are (what the page highlights)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence

from kb_qa.answer.blocks import Block
from kb_qa.text import cjk_chars, keyword_tokens

__all__ = [
    "MAX_TABLE_ROWS",
    "TABLE_ROW_SHARE",
    "matching_rows",
    "rarity_score",
    "rows_span",
    "run_around",
]

MAX_TABLE_ROWS = 5  # a longer table shows its header and one run of rows around the best
TABLE_ROW_SHARE = 0.5  # ... reaching out to rows scoring at least this share of the best


def matching_rows(table: str, weight: dict[str, float]) -> tuple[str, list[int] | None]:
    """A long table cut to its header and the rows that match the question (the whole table
    when none does): the row that answers should not drown among twenty others. The rows
    kept are one run of at most MAX_TABLE_ROWS around the best-matching row (the first of a
    tie), reaching the matching rows nearest it and holding the rows between them, so that
    what is shown is what the page highlights. With it, the indexes of the body rows kept
    (None: the whole table)."""
    lines = table.split("\n")
    header, body = lines[:2], lines[2:]
    if len(body) <= MAX_TABLE_ROWS:
        return table, None
    # A word every row holds (the product's prefix of its error codes) picks no row out.
    words = [set(keyword_tokens(row, camel_parts=True)) | cjk_chars(row) for row in body]
    score = rarity_score(words, weight)
    scores = [score(found) for found in words]
    best = max(scores)
    if best <= 0:
        return table, None
    lo, hi = run_around(scores, scores.index(best))
    keep = list(range(lo, hi + 1))
    return "\n".join(header + body[lo : hi + 1]), keep


def rarity_score(
    parts: Sequence[Iterable[str]], weight: dict[str, float]
) -> Callable[[Iterable[str]], float]:
    """How much of the question a set of words holds, among ``parts`` (a table's rows, a
    list's items): each question word's ``weight``, times how rare it is among the parts."""
    with_word: dict[str, int] = {}
    for found in parts:
        for t in set(found) & weight.keys():
            with_word[t] = with_word.get(t, 0) + 1

    def score(found: Iterable[str]) -> float:
        held = set(found) & weight.keys()
        return math.fsum(weight[t] * math.log(1 + len(parts) / with_word[t]) for t in held)

    return score


def run_around(scores: Sequence[float], at: int) -> tuple[int, int]:
    """One run of at most MAX_TABLE_ROWS around ``at``: the parts nearest it that score
    TABLE_ROW_SHARE of its score, with the parts between them (what the page highlights
    is one range). The first and the last index of the run."""
    lo = hi = at
    for i in sorted(range(len(scores)), key=lambda i: (abs(i - at), i)):
        if scores[i] >= TABLE_ROW_SHARE * scores[at] and max(hi, i) - min(lo, i) < MAX_TABLE_ROWS:
            lo, hi = min(lo, i), max(hi, i)
    return lo, hi


def rows_span(table: Block, kept: list[int] | None) -> tuple[int, int]:
    """What a table cut to the body rows ``kept`` quotes: those rows (the header is only
    context), or the whole table when nothing was cut."""
    rows = table.rows
    if kept is None or len(rows) <= kept[-1] + 2:
        return table.span
    return rows[kept[0] + 2][0], rows[kept[-1] + 2][1]
