"""A page's headings are read from its rendered HTML in time that grows with its length.

Rendering on, each heading's HTML is read for its id and its text (``anchors.html_headings``)
outside the parse time limit. Its mkdocstrings-label pattern read on from every ``<span`` to
the end of the heading, so a page whose heading held 8,000 unclosed ``<span a class="``
took 14 s to index (2 s without that pattern); the permalink and tag patterns did the same
with ``<a a class="`` and any unclosed tag.
"""

from __future__ import annotations

import re

import pytest

from kb_qa.ingest.anchors import _HEADERLINK_RE, _LABELS_RE, _TAG_RE, html_headings


@pytest.mark.parametrize(
    "inner",
    [
        '<span a class="' * 8_000,
        '<span class="doc-labels">' * 8_000,
        '<span id="q" class="doc-labels"' * 4_000,
        '<span "' * 15_000,
        '<a a class="' * 10_000,
        '<a class="headerlink">' * 8_000,
        "<b " * 30_000,
    ],
    ids=lambda inner: repr(inner[:16]),
)
def test_a_heading_of_unclosed_tags_is_read_in_linear_time(inner: str) -> None:
    [heading] = html_headings(f'<h2 id="x">Title {inner}</h2>\n')
    assert heading.anchor == "x" and heading.text.startswith("Title")


@pytest.mark.parametrize(
    ("pattern", "opener", "closed"),
    [
        (_LABELS_RE, '<span a class="', '<span class="doc-labels">x</span>'),
        (_HEADERLINK_RE, '<a a class="', '<a class="headerlink">#</a>'),
        (_TAG_RE, "<b ", "<i>"),
    ],
)
def test_a_match_attempt_stops_at_the_next_tag(
    pattern: re.Pattern[str], opener: str, closed: str
) -> None:
    """What keeps the reading linear (as tests/hostile/test_slow_markup.py pins its own
    patterns' reach): an attempt from an unclosed opener never reads on into the next tag,
    so a run of openers is read once, not once from each."""
    assert pattern.match(opener + closed) is None
    assert pattern.search(opener + closed).start() == len(opener)  # the closed one still is


def test_labels_and_permalink_are_still_left_out_of_a_heading() -> None:
    # mkdocstrings-python's heading with its labels (show_labels) and the toc permalink,
    # with an id before the class, as another theme may write it
    out = (
        '<h2 id="kb.Settings" class="doc doc-heading"><code>Settings</code>\n'
        '  <span id="l" class="doc doc-labels">\n'
        '    <small class="doc doc-label doc-label-dataclass"><code>dataclass</code></small>\n'
        "  </span>\n"
        '<a href="#kb.Settings" class="headerlink" title="Permanent link">&para;</a></h2>\n'
        '<h3 id="a-b">a &lt; b <span class="other">kept</span></h3>'
    )
    assert [(h.anchor, h.text) for h in html_headings(out)] == [
        ("kb.Settings", "Settings"),
        ("a-b", "a < b kept"),
    ]
