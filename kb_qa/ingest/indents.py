"""Indentation as Markdown counts it: a tab reaches the next multiple of four columns.

Python-Markdown (MkDocs) expands tabs before it reads a page and CommonMark counts them to
the next tab stop, so a tab-indented admonition body or code block is what four spaces
would be; counted as one character, ``"\\tsudo systemctl …"`` de-indented by four lost
"sud" and an admonition's tab-indented text closed it.
"""

from __future__ import annotations

import re

TAB_STOP = 4
# An ATX heading indented as a box's content: a section cut inside an admonition or a tab
_BOXED_HEADING = re.compile(r"(?: {4,}|\t)[ \t]*#{1,6}[ \t]")


def columns(line: str) -> int:
    """How many columns of indentation ``line`` opens with."""
    column = 0
    for char in line:
        if char == " ":
            column += 1
        elif char == "\t":
            column += TAB_STOP - column % TAB_STOP
        else:
            break
    return column


def unindented(line: str, width: int) -> str:
    """``line`` without ``width`` columns of its indentation (all of it when it has less); a
    tab reaching past them leaves the columns beyond as spaces."""
    column = 0
    for at, char in enumerate(line):
        if column >= width or char not in " \t":
            return line[at:]
        column += 1 if char == " " else TAB_STOP - column % TAB_STOP
        if column > width:
            return " " * (column - width) + line[at + 1 :]
    return ""


def box_indent(section: str) -> int:
    """The indent of a section's lines when it opens with a heading inside an admonition or
    content tab (``ingest/containers`` cuts a section there; its box's opener is in the
    section before), else 0. Read from its text as it stands, such a section was one
    indented code block: Pi-hole's "Is PATCH idempotent?" was quoted as code."""
    return columns(section) if _BOXED_HEADING.match(section) else 0
