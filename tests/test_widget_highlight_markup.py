"""Highlighting in Chromium on markup the sample site lacks and the real corpora have
(``bench/highlights.py`` found each case on them): the page marks exactly the quoted passage.

One static page holds each construct as MkDocs, Material and mkdocstrings render it: an API
heading inside mkdocstrings' wrapper, a content tab set (its labels rendered together above
the blocks), a code block whose annotation Material turned into a marker and a tooltip, and
a footnote. Each case opens the link a citation would, ``?kbqa-hl=<words>#anchor``, with the
drop-in widget.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from browser import sync_playwright_or_skip
from passage_words import reader_words, words
from widget_stack import (
    MARKS,
    MARKS_TEXT,
    ROOT,
    loopback_context,
    open_page,
    served_folder,
)

sync_playwright_or_skip()

PAGE = """<!doctype html><html><head><meta charset=utf-8><title>Markup</title></head><body>
<article class="md-content__inner md-typeset">
<h1 id="markup">Markup</h1>

<h2 id="errors">Errors</h2>
<div class="doc doc-object doc-class">
<h3 id="pkg.PluginError" class="doc doc-heading"><code>pkg.PluginError</code></h3>
<div class="doc doc-contents first"><p>A subclass of BuildError raised by plugins.</p></div>
</div>
<p>Uncaught exceptions stop the build with a traceback, which readers find overwhelming.</p>
<h3 id="logging">Logging</h3>
<p>Write logs to a logger under the plugins namespace.</p>

<h2 id="boosting">Boosting</h2>
<p>Add these lines at the top of a page:</p>
<div class="tabbed-set tabbed-alternate" data-tabs="1:2">
<input checked="checked" id="up" name="__tabbed_1" type="radio">
<input id="down" name="__tabbed_1" type="radio">
<div class="tabbed-labels"><label for="up">Rank up</label><label for="down">Rank down</label></div>
<div class="tabbed-content">
<div class="tabbed-block"><pre><code>search:
  boost: 2
</code></pre></div>
<div class="tabbed-block"><pre><code>search:
  boost: 0.5
</code></pre></div>
</div></div>

<h2 id="annotated">Annotated</h2>
<pre><code>search:
  boost: 2 <span class="c1"><aside class="md-annotation" tabindex="0"><div class="md-tooltip">
<div class="md-tooltip__inner md-typeset">When boosting pages be gentle, start low.</div>
</div><a href="#a1" class="md-annotation__index" tabindex="-1">1</a></aside></span>
---
# Page title
</code></pre>

<h2 id="tabs">Tabs</h2>
<p>The tab bar stays pinned.<sup id="fnref:1"><a class="footnote-ref" href="#fn:1">1</a></sup></p>
<h2 id="other">Other</h2>
<p>Something else entirely.</p>
<div class="footnote"><hr><ol><li id="fn:1"><p>Prior to version 6.2 every top-level page was
grouped under the first tab. <a class="footnote-backref" href="#fnref:1">&#8617;</a></p></li>
</ol></div>
</article>
<script src="kb-qa/kb-qa.js" defer data-endpoint="http://127.0.0.1:9"></script>
</body></html>"""

# (anchor, the quoted Markdown, the words its citation link carries: widget fingerprint())
CASES = [
    (
        "pkg.PluginError",
        "Uncaught exceptions stop the build with a traceback, which readers find overwhelming.",
        "uncaught exceptions stop the build with a traceback which readers find overwhelming",
    ),
    (
        "boosting",
        'Add these lines at the top of a page:\n\n=== "Rank up"\n\n    ```yaml\n    search:\n'
        "      boost: 2\n    ```",
        "add these lines at the top of a page rank up search boost 2",
    ),
    (
        "annotated",
        "```yaml\nsearch:\n  boost: 2 # (1)!\n---\n# Page title\n```",
        "search boost 2 1 page title",
    ),
    (
        "tabs",
        "[^1]:\n    Prior to version 6.2 every top-level page was\n    grouped under the first"
        " tab.",
        "prior to version 6 2 every top level page was grouped under the first tab",
    ),
]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("markup")
    (folder / "kb-qa").mkdir()
    shutil.copyfile(ROOT / "widget" / "kb-qa.js", folder / "kb-qa" / "kb-qa.js")
    (folder / "page.html").write_text(PAGE, encoding="utf-8")
    with served_folder(Path(folder)) as origin:
        yield origin


@pytest.mark.parametrize(("anchor", "quoted", "link"), CASES, ids=[c[0] for c in CASES])
def test_the_page_marks_the_quoted_passage(
    browser: Any, site: str, anchor: str, quoted: str, link: str
) -> None:
    context = loopback_context(browser)
    try:
        page = context.new_page()
        open_page(page, f"{site}/page.html?kbqa-hl={quote(link)}#{quote(anchor)}")
        page.wait_for_function(f"{MARKS}.length > 0")
        marked = page.evaluate(MARKS_TEXT)
        assert words(marked) == reader_words(quoted), marked
    finally:
        context.close()
