"""Right-to-left notes in a real browser: the vault's pages and the widget show Hebrew the
way it is read, headings, the list of pages, the reader's question and the sources too."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from browser import sync_playwright_or_skip
from uvicorn_thread import UvicornThread
from widget_stack import loopback_context

from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.serve.app import create_app

sync_api = sync_playwright_or_skip()

NOTES = {
    "עברית.md": "# הערות בעברית\n\n## מה לקנות לשבת?\n\nחלה, יין ופירות.\n",
    "Garden.md": "# Garden\n\n## Garlic\n\nPlant in October.\n",
}
# Whether the element's text ends at its right edge (read right to left) or starts at its left.
RIGHT_ALIGNED = """(el) => {
  const range = document.createRange();
  range.selectNodeContents(el);
  return Math.abs(range.getBoundingClientRect().right - el.getBoundingClientRect().right) < 2;
}"""


def test_hebrew_reads_right_to_left_in_pages_and_the_widget(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase], browser: Any
) -> None:
    """Headings, the page list's titles, the question bubble and the sources were laid out
    left to right ("?" at the wrong end, ".md" split from its name)."""
    base = kb(make_vault(NOTES), rate_limit=0)
    base.index()
    with UvicornThread(create_app(base)) as server:
        context = loopback_context(browser)
        try:
            page = context.new_page()
            page.goto(server.url + "/view/" + quote("עברית.md"))
            heading = page.locator("h2").first
            assert heading.evaluate(RIGHT_ALIGNED), "the Hebrew heading is laid out ltr"
            page.goto(server.url + "/")
            title = page.locator("li a", has_text="הערות בעברית")
            assert title.evaluate("(el) => getComputedStyle(el).direction") == "rtl"
            page.wait_for_function("window.KbQa && window.KbQa.mounted")
            page.keyboard.press("Control+k")
            page.locator(".kbq-input").fill("מה לקנות לשבת?")
            page.locator(".kbq-input").press("Enter")
            answer = page.locator(".kbq-bot").first
            sync_api.expect(answer).to_have_attribute("aria-busy", "false", timeout=30_000)
            for selector in (".kbq-bubble", ".kbq-source-t"):
                shown = page.locator(selector).first
                assert shown.evaluate("(el) => getComputedStyle(el).direction") == "rtl", selector
        finally:
            context.close()


def test_a_very_long_note_name_wraps_in_the_page_list(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase], browser: Any
) -> None:
    """A 200-character file name made the vault's page list 2,000 px wide in a 1,200 px
    window: the name never wrapped."""
    long_name = "Quarterly-planning-notes-" + "x" * 180 + ".md"
    base = kb(make_vault({long_name: "# Plan\n\nShip it.\n", **NOTES}), rate_limit=0)
    base.index()
    with UvicornThread(create_app(base)) as server:
        context = loopback_context(browser)
        try:
            page = context.new_page()
            page.set_viewport_size({"width": 800, "height": 600})
            for path in ("/", "/view/" + quote(long_name)):
                page.goto(server.url + path)
                wide = page.evaluate("document.documentElement.scrollWidth")
                assert wide <= 800, (path, wide)
        finally:
            context.close()
