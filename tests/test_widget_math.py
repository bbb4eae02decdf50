"""Math in Chromium: an answer's LaTeX shows as its own characters, and a citation of a passage
with math highlights it on a page where MathJax typeset that math (or could not). A notes
vault's answers quote a tab-indented outline nested, as its /view page shows it.

The site is built by the real ``mkdocs build``: Material with ``pymdownx.arithmatex``
(``generic: true``) and MathJax 3 from a local file (widget/node_modules, ``npm ci``), as
Material's documentation sets them up. Arithmatex writes
``<span class="arithmatex">\\(..\\)</span>`` and ``<div class="arithmatex">\\[..\\]</div>``;
MathJax replaces their TeX with ``<mjx-container>``, whose text is not the TeX a citation's
Markdown passage holds. The answer service is a hand-written one on another origin, so the
citation's passage is exactly the paragraphs below.
"""

from __future__ import annotations

import http.server
import json
import re
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from browser import sync_playwright_or_skip
from uvicorn_thread import UvicornThread
from widget_stack import (
    MARKS,
    ROOT,
    CrossOriginAnswers,
    ask,
    loopback_context,
    mkdocs_build,
    open_page,
    serve_folder,
    shot,
)

from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.serve.app import create_app

sync_api = sync_playwright_or_skip()

MATHJAX = ROOT / "widget" / "node_modules" / "mathjax" / "es5"

PASSAGE = (
    "The sample mean is $\\bar{x} = \\frac{1}{n}\\sum_{i=1}^{n} x_i$ and its spread is\n"
    "measured by\n\n"
    "$$\n"
    "s^2 = \\frac{1}{n-1}\\sum_{i=1}^{n} (x_i - \\bar{x})^2\n"
    "$$\n\n"
    "so a sample of one value has no variance."
)
PAGE = (
    "# Statistics\n\n## Mean and variance\n\n"
    + PASSAGE
    + "\n\nThe median is $m$ when half the values lie below it.\n"
)
# Markdown emphasis and escapes a renderer would apply outside math: none may apply inside.
NORM = "$\\|x\\|_p = \\left( \\sum_{i=1}^{n} |x_i|^p \\right)^{1/p}$"
ANSWER = (
    f"The sample mean is $\\bar{{x}} = \\frac{{1}}{{n}}\\sum_{{i=1}}^{{n}} x_i$ [1], the norm "
    f"{NORM}, the set $S = \\{{ x \\}}$ and $a_1*b_1*c_1$; it costs $5 and $10."
)
CONFIG = """window.MathJax = {
  tex: {
    inlineMath: [["\\\\(", "\\\\)"]],
    displayMath: [["\\\\[", "\\\\]"]],
    processEscapes: true,
    processEnvironments: true
  },
  options: {
    ignoreHtmlClass: ".*|",
    processHtmlClass: "arithmatex"
  }
};

document$.subscribe(() => {
  MathJax.startup.output.clearCache()
  MathJax.typesetClear()
  MathJax.texReset()
  MathJax.typesetPromise()
})
"""


class _Answers(CrossOriginAnswers):
    """Answers every question with ANSWER, citing PASSAGE on the statistics page."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        citation = {
            "number": 1,
            "excerpt": 1,
            "url": "stats/#mean-and-variance",
            "link": "stats/#mean-and-variance",
            "path": "stats.md",
            "anchor": "mean-and-variance",
            "heading_path": ["Statistics", "Mean and variance"],
            "text": PASSAGE,
        }
        events = [
            ("delta", {"text": ANSWER}),
            ("citations", {"citations": [citation]}),
            ("done", {"text": ANSWER, "mode": "llm"}),
        ]
        body = b"".join(
            f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events
        )
        self.send_response(200)
        self._cors()
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def math_site(
    tmp_path_factory: pytest.TempPathFactory,
    write_files: Callable[..., Path],
    cli_env: Callable[..., dict[str, str]],
) -> Iterator[str]:
    if not (MATHJAX / "tex-mml-chtml.js").is_file():
        pytest.skip("MathJax is not installed: run `npm ci` in widget/")
    api = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Answers)
    threading.Thread(target=api.serve_forever, daemon=True).start()
    tmp = tmp_path_factory.mktemp("math")
    site = tmp / "site"
    site.mkdir()
    origin, files = serve_folder(site)
    try:
        vault = write_files(
            tmp / "vault",
            {
                "docs/index.md": "# Home\n\nNotes on statistics.\n",
                "docs/stats.md": PAGE,
                "docs/javascripts/mathjax-config.js": CONFIG,
            },
        )
        shutil.copyfile(MATHJAX / "tex-mml-chtml.js", vault / "docs/javascripts/tex-mml-chtml.js")
        shutil.copytree(
            MATHJAX / "output/chtml/fonts/woff-v2",
            vault / "docs/javascripts/output/chtml/fonts/woff-v2",
        )
        config = {
            "site_name": "Statistics",
            "site_url": origin + "/",
            "theme": {"name": "material", "features": ["navigation.instant"]},
            "markdown_extensions": [
                {"toc": {"permalink": True}},
                {"pymdownx.arithmatex": {"generic": True}},
            ],
            "extra_javascript": ["javascripts/mathjax-config.js", "javascripts/tex-mml-chtml.js"],
            "plugins": [
                "search",
                {"kb-qa": {"endpoint": f"http://127.0.0.1:{api.server_port}"}},
            ],
        }
        (vault / "mkdocs.yml").write_text(json.dumps(config), encoding="utf-8")
        result = mkdocs_build(vault, site, cli_env(), "--quiet")
        assert result.returncode == 0, result.stderr
        yield origin
    finally:
        files.shutdown()
        files.server_close()
        api.shutdown()
        api.server_close()


# The article in page order as (marked?, text) pieces, each formula element one "F" piece
# (marked when a highlight mark holds it whole).
PIECES = """() => {
  const out = [];
  const walk = (n) => {
    if (n.nodeType === 1) {
      if (n.matches(".headerlink, [data-kb-qa-host]")) return;
      if (n.matches(".arithmatex")) {
        out.push([!!n.closest("mark.kb-qa-highlight"), "F"]);
        return;
      }
      n.childNodes.forEach(walk);
    } else if (n.nodeType === 3 && n.data.trim()) {
      out.push([!!n.parentElement.closest("mark.kb-qa-highlight"), n.data]);
    }
  };
  walk(document.querySelector(".md-content__inner"));
  return out;
}"""


def _joined(pieces: list[list[Any]], marked: bool) -> str:
    return re.sub(r"\s+", " ", " ".join(text for m, text in pieces if m == marked)).strip()


TYPESET = "document.querySelectorAll('.arithmatex > mjx-container').length === 3"


@pytest.mark.parametrize(
    ("start", "typeset"),
    [("/stats/", True), ("/stats/", False), ("/", True)],
    ids=["typeset", "not-typeset", "typeset-after-instant-navigation"],
)
def test_a_citation_across_math_marks_the_text_and_formulas_it_quotes(
    browser: Any, math_site: str, start: str, typeset: bool
) -> None:
    """ "What is the sample variance?" marked only "The sample mean is ": the text MathJax
    renders is not the passage's TeX. Each formula element now reads as one formula, before
    MathJax typesets it (the citation opened the page: MathJax typesets it anew) or after."""
    context = loopback_context(browser)
    try:
        page = context.new_page()
        if not typeset:
            page.route(re.compile(r"/javascripts/tex-mml-chtml\.js$"), lambda route: route.abort())
        open_page(page, math_site + start)
        if typeset:
            page.wait_for_function(TYPESET if start == "/stats/" else "window.MathJax.startup")
        page.keyboard.press("Control+k")
        ask(page, "What is the sample variance?")
        page.locator("a.kbq-cite").first.click()
        page.wait_for_function(f"{MARKS}.length > 0")
        if typeset:
            page.wait_for_function(TYPESET)
        pieces = page.evaluate(PIECES)
        assert _joined(pieces, True) == (
            "The sample mean is F and its spread is measured by F "
            "so a sample of one value has no variance."
        ), pieces
        assert _joined(pieces, False) == (
            "Statistics Mean and variance The median is F when half the values lie below it."
        ), pieces
        formulas = page.evaluate(
            """() => [...document.querySelectorAll('mark.kb-qa-highlight .arithmatex')].map(
              (f) => {
                const r = f.getBoundingClientRect();
                const math = f.querySelector('mjx-container');
                const box = (math || f).getBoundingClientRect();
                const mark = f.closest('mark').getBoundingClientRect();
                return {
                  tex: f.textContent.trim().slice(0, 2),
                  typeset: !!math,
                  width: box.width,
                  // the mark is around the whole formula, block or inline
                  covers: mark.left <= r.left + 1 && mark.right >= r.right - 1,
                };
              })"""
        )
        assert [f["typeset"] for f in formulas] == [typeset, typeset], formulas
        assert all(f["width"] > 0 and f["covers"] for f in formulas), formulas
        if not typeset:
            assert [f["tex"] for f in formulas] == ["\\(", "\\["], formulas
        shot(page, "math-" + ("typeset" if typeset else "tex"))
    finally:
        context.close()


def test_an_answer_shows_its_math_as_written(browser: Any, math_site: str) -> None:
    """`$\\|x\\|_p ...$` showed as `$|x|p ...` with an <em>: escapes and emphasis applied
    inside math. Math shows its own characters; prices stay prose."""
    context = loopback_context(browser)
    try:
        page = context.new_page()
        page.route(re.compile(r"/javascripts/tex-mml-chtml\.js$"), lambda route: route.abort())
        open_page(page, math_site + "/")
        page.keyboard.press("Control+k")
        ask(page, "What is the sample mean?")
        answer = page.locator(".kbq-answer").last
        shown = re.sub(r"\s+", " ", answer.inner_text())
        for math in (
            "$\\bar{x} = \\frac{1}{n}\\sum_{i=1}^{n} x_i$",
            NORM,
            "$S = \\{ x \\}$",
            "$a_1*b_1*c_1$",
        ):
            assert math in shown, shown
        assert "it costs $5 and $10." in shown, shown
        assert answer.locator("em, strong").count() == 0
        assert answer.locator("a.kbq-cite").count() == 1
    finally:
        context.close()


# A notes vault's /view pages (kb_qa/serve/pages.py) show math as written, in
# <span class="math">$..$</span> and <div class="math">$$..$$</div>, with no renderer.
TRAPEZOID = (
    "The trapezoid rule error is bounded. For a function with a continuous second derivative\n"
    "on $[a, b]$ the error is at most\n\n"
    "$$\n"
    "\\frac{(b-a)^3}{12 n^2} \\max_{a \\le x \\le b} |f''(x)|\n"
    "- O(n^{-4})\n"
    "$$\n\n"
    "which shrinks quadratically with n."
)
PRODUCTS = (
    "Multiply the coefficients: $a_1*b_1*c_1$ and the thin space $a\\,b$ keep their\n"
    "characters in the product of the terms."
)
# A Logseq note: its outline is indented with tabs, Logseq's default.
HOMELAB = (
    "- Operating system\n"
    "\t- Debian 12 bookworm, kept up to date by unattended-upgrades\n"
    "\t- SSH only with keys, password login disabled\n"
    "\t\t- keys live in the password manager\n"
    "- Backups\n"
    "\t- restic to the NAS every night at 02:00\n"
)
NOTES = {
    "Trapezoid.md": "# Trapezoid rule\n\n## Error bound\n\n" + TRAPEZOID + "\n",
    "Products.md": "# Products\n\n## Coefficients\n\n" + PRODUCTS + "\n",
    "Homelab.md": "# Homelab\n\n## Server\n\n" + HOMELAB,
}

# The page's text nodes in order as (marked?, text), the widget's own left out.
VIEW_PIECES = """() => {
  const out = [];
  const walk = (n) => {
    if (n.nodeType === 1) {
      if (!n.matches('[data-kb-qa-host], script, style')) n.childNodes.forEach(walk);
    } else if (n.nodeType === 3 && n.data.trim()) {
      out.push([!!n.parentElement.closest('mark.kb-qa-highlight'), n.data]);
    }
  };
  walk(document.body);
  return out;
}"""


@pytest.fixture(scope="module")
def notes_view(
    tmp_path_factory: pytest.TempPathFactory, write_files: Callable[..., Path]
) -> Iterator[str]:
    """`kb-qa serve`'s app over an Obsidian-style folder of notes (no mkdocs.yml) and no
    model: its answers quote the notes, and its /view pages carry the widget."""
    tmp = tmp_path_factory.mktemp("notes-math")
    vault = write_files(tmp / "notes", NOTES)
    kb = KnowledgeBase(vault, index_dir=tmp / "index", embed_model="hash", rate_limit=0)
    try:
        kb.index()
        with UvicornThread(create_app(kb)) as api:
            yield api.url
    finally:
        kb.close()


@pytest.mark.parametrize(
    ("question", "note", "headings", "passage"),
    [
        (
            "How large is the trapezoid rule error?",
            "Trapezoid.md",
            "Trapezoid rule Error bound",
            TRAPEZOID,
        ),
        ("How do I multiply the coefficients?", "Products.md", "Products Coefficients", PRODUCTS),
    ],
    ids=["display-formula", "inline-formulas"],
)
def test_a_citation_on_a_notes_view_page_marks_its_math_as_written(
    browser: Any, notes_view: str, question: str, note: str, headings: str, passage: str
) -> None:
    """On /view the highlight stopped at a display formula ("... the error is at most" marked,
    not the formula nor the sentence after it), and "Multiply the coefficients: $a_1*b_1*c_1$"
    was marked from "and the thin space" on: the view's math is its TeX, which the widget read
    as words where the passage had one formula. The view's math elements are formulas too."""
    context = loopback_context(browser)
    try:
        page = context.new_page()
        open_page(page, notes_view + "/view/Trapezoid.md")
        page.keyboard.press("Control+k")
        ask(page, question)
        answer = page.locator(".kbq-answer").last
        if note == "Trapezoid.md":
            # The answer quotes the formula as one paragraph of its own characters: its
            # "- O(n^{-4})" line is TeX, not a list item.
            assert answer.locator("ul, li").count() == 0
            formula = passage[passage.index("$$") : passage.rindex("$$") + 2]
            shown = [re.sub(r"\s+", " ", p) for p in answer.locator("p").all_inner_texts()]
            assert re.sub(r"\s+", " ", formula) in shown, shown
        page.locator("a.kbq-cite").first.click()
        page.wait_for_url(re.compile(re.escape(note) + r"\?kbqa-hl=[^#]+#"))
        # Waited for by a locator: the view's CSP refuses the eval wait_for_function polls with
        page.locator("mark.kb-qa-highlight").first.wait_for(state="attached")
        pieces = page.evaluate(VIEW_PIECES)
        assert _joined(pieces, True) == re.sub(r"\s+", " ", passage), pieces
        # Only the nav and the headings are left unmarked.
        assert _joined(pieces, False) == f"All pages · {note} {headings}", pieces
        shot(page, "math-view-" + note[:-3].lower())
    finally:
        context.close()


# Each list item of ``root`` as [how many items it is nested in, its own text].
OUTLINE = """(root) => [...root.querySelectorAll('li')].map((li) => {
  let depth = 0;
  for (let up = li.parentElement.closest('li'); up; up = up.parentElement.closest('li')) depth++;
  const own = [...li.childNodes].filter((n) => !['UL', 'OL'].includes(n.nodeName));
  return [depth, own.map((n) => n.textContent).join(' ').replace(/\\s+/g, ' ').trim()];
})"""


def test_a_tab_indented_outline_is_quoted_nested(browser: Any, notes_view: str) -> None:
    """A Logseq note's outline, indented with tabs: the no-key answer quoting it showed
    "Operating system Debian 12 bookworm, ... SSH only with keys, ..." as one paragraph, and
    "keys live in the password manager" one level too high. The /view page nested it."""
    context = loopback_context(browser)
    try:
        page = context.new_page()
        open_page(page, notes_view + "/view/Homelab.md")
        page.keyboard.press("Control+k")
        ask(page, "Which operating system does the homelab server run?")
        outline = [
            [0, "Operating system"],
            [1, "Debian 12 bookworm, kept up to date by unattended-upgrades"],
            [1, "SSH only with keys, password login disabled"],
            [2, "keys live in the password manager"],
            [0, "Backups"],
            [1, "restic to the NAS every night at 02:00"],
        ]
        assert page.locator(".kbq-answer").last.evaluate(OUTLINE) == outline
        assert page.locator("body").evaluate(OUTLINE) == outline  # the widget's are in its shadow
        shot(page, "tab-indented-outline")
    finally:
        context.close()
