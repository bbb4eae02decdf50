"""A long table in an answer: its header and the run of rows that answer, and the range
of the section's Markdown those rows are (what the page highlights)."""

from __future__ import annotations

import math

from kb_qa.answer.blocks import Block
from kb_qa.text import cjk_chars, keyword_tokens

__all__ = ["MAX_TABLE_ROWS", "TABLE_ROW_SHARE", "matching_rows", "rows_span"]

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
    rows_with: dict[str, int] = {}
    for found in words:
        for t in found & weight.keys():
            rows_with[t] = rows_with.get(t, 0) + 1
    scores = [
        math.fsum(weight[t] * math.log(1 + len(body) / rows_with[t]) for t in found & weight.keys())
        for found in words
    ]
    best = max(scores)
    if best <= 0:
        return table, None
    top = scores.index(best)
    # One run of rows, as the page highlights one range: the best row and those near it
    # that match too, with the rows between them, at most MAX_TABLE_ROWS.
    lo = hi = top
    for i in sorted(range(len(body)), key=lambda i: (abs(i - top), i)):
        if scores[i] >= TABLE_ROW_SHARE * best and max(hi, i) - min(lo, i) < MAX_TABLE_ROWS:
            lo, hi = min(lo, i), max(hi, i)
    keep = list(range(lo, hi + 1))
    return "\n".join(header + body[lo : hi + 1]), keep


def rows_span(table: Block, kept: list[int] | None) -> tuple[int, int]:
    """What a table cut to the body rows ``kept`` quotes: those rows (the header is only
    context), or the whole table when nothing was cut."""
    rows = table.rows
    if kept is None or len(rows) <= kept[-1] + 2:
        return table.span
    return rows[kept[0] + 2][0], rows[kept[-1] + 2][1]
