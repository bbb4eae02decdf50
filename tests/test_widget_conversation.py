"""A conversation in the widget, in real headless Chromium, when an answer does not end well:
a model that breaks off.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from browser import sync_playwright_or_skip
from llm_server import LLMServer, Reply
from widget_stack import (
    ask,
    loopback_context,
    one_note_site_with_model,
    open_page,
)

sync_api = sync_playwright_or_skip()


def test_a_follow_up_after_an_answer_that_broke_off_is_about_its_question(
    tmp_path: Path, browser: Any
) -> None:
    """ "How do I change it?" after an answer that broke off was answered about the turn
    before it: the broken answer's question was left out of the history."""
    first, second = "How do I pause a queue?", "How many times is a failing job attempted?"
    with LLMServer() as llm, one_note_site_with_model(tmp_path, llm.url) as url:
        llm.script(
            Reply(text="Pause it with the CLI [1]."),
            Reply(
                text="A failing job is attempted five times [1] and then",
                chunk_size=8,
                close_after=3,
            ),
            Reply(text="Change it in the settings [1]."),
        )
        context = loopback_context(browser)
        try:
            page = context.new_page()
            open_page(page, url)
            page.keyboard.press("Control+k")
            ask(page, first)
            ask(page, second)
            sync_api.expect(page.locator(".kbq-error")).to_contain_text("broke off")
            page.locator(".kbq-input").fill("")
            with page.expect_request(re.compile(r"/api/ask$")) as sent:
                ask(page, "how do I change it?")
            history = json.loads(sent.value.post_data or "{}")["history"]
        finally:
            context.close()
        assert [turn["content"] for turn in history if turn["role"] == "user"] == [first, second]
        assert history[-1]["role"] == "assistant"
        assert history[-1]["content"].startswith("A failing job")
        # The model is asked with the question on screen as the turn before the follow-up.
        turns = llm.requests[-1]["messages"][1:-1]
        assert [t["content"] for t in turns if t["role"] == "user"] == [first, second]
