"""A page of unclosed link, attribute or tag openers cannot make answers slow.

Reading a section's passages (links shown as their words, ``{#id}`` attributes and HTML tags
removed) runs at answer time on every question that retrieves the page, with no time limit.
Its patterns scanned from each ``[``, ``<`` or blank to the end of the text, so a paragraph
of 80 KB of ``[`` made every such answer take 19 s. Now each pattern stops at the next opener
and a line's end (a link's text may span lines, its address may not) and reaches a bounded
distance, which keeps the reading linear; ``bench/slow_markup.py`` prints the seconds. These
tests pin that reach and that what the patterns do to ordinary Markdown is unchanged.
"""

from __future__ import annotations

import re

import pytest

from kb_qa.answer.blocks import _ATTRS, _IMAGE, _LINK, passages
from kb_qa.answer.extractive import quote
from kb_qa.answer.marks import HTML_TAG as _HTML_TAG
from kb_qa.types import Chunk, Hit


@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        (_LINK, "[" * 2000 + "a](x)"),  # a run of openers: each match attempt stops at the next
        (_LINK, "[" + "a" * 600 + "](x)"),  # link text reaches 500 characters at most
        (_IMAGE, "![" + "a" * 600 + "](x.png)"),
        (_LINK, "[a](" + "b" * 3000 + ")"),  # an address reaches 2,000 characters at most
        (_LINK, "[a](x\ny)"),  # an address ends at the line's end
        (_ATTRS, " " * 100 + "{#id}"),  # the blanks before an attribute list: 32 at most
        (_ATTRS, "{#" + "a" * 600 + "}"),
        (_HTML_TAG, "<a" + " b" * 600 + ">"),  # a tag reaches 1,000 characters at most
        (_HTML_TAG, "<a <b>"),  # ... and stops at the next "<"
    ],
)
def test_a_markup_pattern_reaches_a_bounded_distance(pattern: re.Pattern[str], text: str) -> None:
    match = pattern.search(text)
    assert match is None or len(match.group(0)) <= 1100


@pytest.mark.parametrize(
    ("markdown", "shown"),
    [
        ("See [the retry guide](retries.md#backoff) first.", "See the retry guide first."),
        ("Read [Lisp](https://en.wikipedia.org/wiki/Lisp_(language)).", "Read Lisp."),
        ("A [link that\nwraps](page.md) here.", "A link that\nwraps here."),
        ("Logo ![Lumen](logo.png) here.", "Logo  here."),
        ("Defaults {: .note } apply.", "Defaults apply."),
        ("Press <kbd>Ctrl</kbd> and <b>K</b>.", "Press Ctrl and K."),
        ("A [bracket] and a footnote[^1] stay.", "A [bracket] and a footnote stay."),
    ],
)
def test_links_attributes_and_tags_read_as_before(markdown: str, shown: str) -> None:
    assert passages(markdown)[0].text == shown


@pytest.mark.parametrize("opener", ["[", "[[a", "{#", "<a", " ", "![["])
def test_a_paragraph_of_openers_is_quoted_as_the_docs_wrote_it(opener: str) -> None:
    hostile = "Quagga refunds policy. " + opener * (20_000 // len(opener))
    text = f"## Refunds\n\n{hostile}\n"
    chunk = Chunk(
        "c1", "refunds.md", "refunds/", "refunds", "Refunds", ("Refunds",),
        2, text, 0, len(text), 1, 3, "h",
    )  # fmt: skip
    result = quote("What is the quagga refunds policy?", [(1, Hit(chunk, 0.7))])
    ((start, end),) = result.quoted.values()
    assert text[start:end].startswith("Quagga refunds policy.")
    assert "Quagga refunds policy." in "".join(result.pieces)
