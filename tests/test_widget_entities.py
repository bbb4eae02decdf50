"""Character references in a model's answer, in real headless Chromium: the chat had shown
"&plusmn;0.5&nbsp;&deg;C &amp;" as written (the server decodes them in no-key answers; a
model copies them from a page's Markdown). They are now the characters they name, as text
nodes: in code they stay as written, and "&lt;img&gt;" is the text "<img>", never an element.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser import sync_playwright_or_skip
from llm_server import LLMServer, Reply
from widget_stack import loopback_context, one_note_site_with_model

sync_api = sync_playwright_or_skip()


@pytest.fixture
def page_and_llm(tmp_path: Path, browser: Any) -> Iterator[tuple[Any, LLMServer]]:
    with LLMServer() as llm, one_note_site_with_model(tmp_path, llm.url) as url:
        context = loopback_context(browser)
        try:
            page = context.new_page()
            page.goto(url)
            page.wait_for_function("window.KbQa && window.KbQa.mounted")
            yield page, llm
        finally:
            context.close()


def test_an_answers_character_references_show_as_their_characters(
    page_and_llm: tuple[Any, LLMServer],
) -> None:
    page, llm = page_and_llm
    llm.script(
        Reply(
            text="Otters keep within &plusmn;0.5&nbsp;&deg;C &amp; sleep &rarr; float [1]. "
            "Run `a &amp;&amp; b`; &lt;img src=x onerror=alert(1)&gt; &#x202e;stays.",
            chunk_size=8,
        )
    )
    page.keyboard.press("Control+k")
    page.locator(".kbq-input").fill("Do otters sleep?")
    page.locator(".kbq-input").press("Enter")
    answer = page.locator(".kbq-bot").first
    sync_api.expect(answer).to_have_attribute("aria-busy", "false", timeout=60_000)
    paragraph = answer.locator(".kbq-answer p").first
    shown = paragraph.text_content() or ""
    assert "Otters keep within ±0.5\u00a0°C & sleep → float" in shown, shown
    assert "Run a &amp;&amp; b; <img src=x onerror=alert(1)> stays." in shown, shown
    assert paragraph.locator("code").text_content() == "a &amp;&amp; b"
    assert paragraph.locator("img").count() == 0
    assert "\u202e" not in shown
