"""The widget while the docs are still being indexed (a first `mkdocs serve` or `kb-qa
serve` of a big site): the reader is told how far the index is, and the question is asked
again until it is answered. Real uvicorn, real Chroma, headless Chromium; the run is held
at a batch through the public progress callback, as a slow embedding would hold it.

(A browser test module's name sorts after test_mcp*: Playwright's session keeps an event
loop running in the main thread, where the MCP tests call asyncio.run.)"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from index_gate import Gate
from test_first_index import NOTES
from widget_stack import loopback_context, open_page, shot, sync_api

from kb_qa.serve.serving import BackgroundServer


@pytest.fixture
def held(
    tmp_path: Path, make_vault: Callable[..., Path]
) -> Iterator[tuple[BackgroundServer, Gate]]:
    gate = Gate()
    server = BackgroundServer.start(
        make_vault(NOTES),
        progress=gate,
        wait=0,
        embed_model="hash",
        embed_batch=4,
        index_dir=tmp_path / "idx",
    )
    try:
        yield server, gate
    finally:
        gate.opened.set()
        server.stop()


def test_the_widget_waits_for_the_index_and_then_answers(
    held: tuple[BackgroundServer, Gate], browser: Any
) -> None:
    """A reader who asks while the docs are indexed is told how far it is, and gets the
    answer when the index is built, without asking again."""
    server, gate = held
    assert gate.holding.wait(60)
    context = loopback_context(browser)
    try:
        page = context.new_page()
        bot = _asked(page, server.url + "/")
        sync_api.expect(bot.locator(".kbq-status")).to_have_text(
            re.compile(r"The docs are still being indexed: 4 of \d+ sections\. Your question")
        )
        shot(page, "indexing")
        gate.opened.set()
        sync_api.expect(bot).to_have_attribute("aria-busy", "false", timeout=30_000)
        assert "five times" in bot.inner_text()
        assert bot.locator(".kbq-error").count() == 0
    finally:
        context.close()


def test_an_answer_given_while_an_edit_is_indexed_says_so(
    held: tuple[BackgroundServer, Gate], browser: Any
) -> None:
    """Under `mkdocs serve`, a question asked while a pasted page was being indexed got the
    old text without a word: the server's "updating" status passed in a blink. The finished
    answer keeps the note under it."""
    server, gate = held
    gate.opened.set()
    assert server.first.done.wait(60)
    vault = server.kb.settings.vault
    for i in range(10):
        (vault / f"pasted{i:02}.md").write_text(f"# Pasted {i}\n\nThe {i}th pasted fact.\n")
    again = Gate()
    refresh = threading.Thread(target=server.refresh, args=(again,))
    refresh.start()
    context = loopback_context(browser)
    try:
        assert again.holding.wait(60)
        page = context.new_page()
        bot = _asked(page, server.url + "/")
        sync_api.expect(bot).to_have_attribute("aria-busy", "false", timeout=30_000)
        assert "five times" in bot.inner_text()
        sync_api.expect(bot.locator(".kbq-updating")).to_have_text(
            "The index is updating; answering from what is indexed so far…"
        )
    finally:
        again.opened.set()
        refresh.join(60)
        context.close()


def _asked(page: Any, url: str) -> Any:
    """The answer (still streaming) to how often a failing job is attempted, asked in the
    widget of the page at ``url``."""
    open_page(page, url)
    page.locator(".kbq-launcher").click()
    page.locator(".kbq-input").fill("How many times is a failing job attempted?")
    page.locator(".kbq-input").press("Enter")
    return page.locator(".kbq-bot").last
