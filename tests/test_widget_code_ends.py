"""Highlighting in Chromium of code passages that end in a call's parentheses: the mark takes
the ``()`` and ``())`` the page shows (a QA pass's screenshots had the marks end at ``serve``
of ``lumen.serve()`` and at ``zones`` of ``print(client.zones())``).

A static page holds the code blocks as Material renders them (Pygments' spans) and the built
widget. Each case opens the link a citation of the passage opens, its words made by the
widget's own ``fingerprint`` (widget/src/passage.js, imported in the page).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from browser import sync_playwright_or_skip
from widget_stack import MARKS, ROOT, loopback_context, open_page, served_folder

sync_playwright_or_skip()


def code(*lines: list[tuple[str, str]]) -> str:
    """A code block as Material renders it: Pygments' token spans, (class, text) each."""
    spans = ("".join(f'<span class="{c}">{t}</span>' for c, t in line) for line in lines)
    return (
        '<div class="highlight"><pre><span></span><code>'
        + "\n".join(spans)
        + "\n</code></pre></div>"
    )


SERVE = code(
    [("kn", "import"), ("w", " "), ("nn", "lumen")],
    [("n", "lumen"), ("o", "."), ("n", "serve"), ("p", "()")],
)
ZONES = code(
    [("nb", "print"), ("p", "("), ("n", "client"), ("o", "."), ("n", "zones"), ("p", "())")]
)
PAGE = f"""<!doctype html><html><head><meta charset=utf-8><title>Code</title></head><body>
<article class="md-content__inner md-typeset">
<h1 id="code">Code</h1>
<h2 id="serving">Serving</h2>
<p>Start the server from Python:</p>
{SERVE}
<p>It listens on port 8080.</p>
<h2 id="zones">Zones</h2>
{ZONES}
<p>Each zone is printed once.</p>
</article>
<script src="kb-qa/kb-qa.js" defer data-endpoint="http://127.0.0.1:9"></script>
</body></html>"""

# (anchor, the quoted Markdown, what the page marks)
CASES = [
    ("serving", "```python\nimport lumen\nlumen.serve()\n```", "import lumen\nlumen.serve()"),
    ("zones", "```python\nprint(client.zones())\n```", "print(client.zones())"),
]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("code-ends")
    (folder / "kb-qa").mkdir()
    shutil.copyfile(ROOT / "widget" / "kb-qa.js", folder / "kb-qa" / "kb-qa.js")
    shutil.copytree(ROOT / "widget" / "src", folder / "src")  # for fingerprint()
    (folder / "page.html").write_text(PAGE, encoding="utf-8")
    with served_folder(Path(folder)) as origin:
        yield origin


@pytest.mark.parametrize(("anchor", "quoted", "marked"), CASES, ids=[c[0] for c in CASES])
def test_a_call_is_marked_to_its_closing_parenthesis(
    browser: Any, site: str, anchor: str, quoted: str, marked: str
) -> None:
    context = loopback_context(browser)
    try:
        page = context.new_page()
        page.goto(f"{site}/page.html")
        link = page.evaluate(
            "async (q) => (await import('./src/passage.js')).fingerprint(q)", quoted
        )
        open_page(page, f"{site}/page.html?kbqa-hl={quote(link)}#{anchor}")
        page.wait_for_function(f"{MARKS}.length > 0")
        # The marks' characters in page order (the spaces between Pygments' spans are not
        # marked, to keep no mark of whitespace alone).
        shown = page.evaluate(f"{MARKS}.map(m => m.textContent).join('')")
        assert "".join(shown.split()) == "".join(marked.split()), (link, shown)
    finally:
        context.close()
