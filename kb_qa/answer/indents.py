"""Indentation as Markdown counts it: a tab reaches the next multiple of four columns.

Python-Markdown (MkDocs) expands tabs before it reads a page and CommonMark counts them to
the next tab stop, so a tab-indented admonition body or code block is what four spaces
would be; counted as one character, ``"\\tsudo systemctl …"`` de-indented by four lost
"sud" and an admonition's tab-indented text closed it.
"""

from __future__ import annotations

TAB_STOP = 4


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
