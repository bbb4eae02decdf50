"""A conversation in the widget, in real headless Chromium, when an answer does not end well:
a model that breaks off, an API lost mid-answer, and Back after citations of the same page.
"""

from __future__ import annotations

import http.server
import json
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser import sync_playwright_or_skip
from llm_server import LLMServer, Reply
from widget_stack import (
    MARKS_TEXT,
    ROOT,
    CrossOriginAnswers,
    Stack,
    ask,
    in_shadow,
    loopback_context,
    one_note_site_with_model,
    open_page,
    serve_folder,
    settle,
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


class _LostMidAnswer(CrossOriginAnswers):
    """An API that starts an answer (a status, some text citing [1]) and is gone before its
    end, as when `mkdocs serve` is stopped while an answer streams."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self._cors()
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        events = [
            ("status", {"stage": "reading", "message": "Reading 1 excerpt"}),
            ("delta", {"text": "Retries happen five times [1]. And"}),
        ]
        for name, data in events:
            body = f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
            self.wfile.write(f"{len(body):x}\r\n".encode() + body + b"\r\n")
            self.wfile.flush()
        time.sleep(0.5)  # the text is shown, then the server is gone
        self.close_connection = True  # no last chunk: the stream is cut, not ended

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def page_on_lost_api(tmp_path: Path, browser: Any) -> Iterator[Any]:
    """A static page with the widget whose API, on another origin, is lost mid-answer."""
    api = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _LostMidAnswer)
    threading.Thread(target=api.serve_forever, daemon=True).start()
    site = tmp_path / "site"
    (site / "kb-qa").mkdir(parents=True)
    for name in ("kb-qa.js", "kb-qa.css"):
        (site / "kb-qa" / name).write_bytes((ROOT / "widget" / name).read_bytes())
    endpoint = f"http://127.0.0.1:{api.server_port}"
    (site / "index.html").write_text(
        "<!doctype html><html><head><meta charset=utf-8><title>T</title></head><body>"
        f'<h1>Retries</h1><script src="kb-qa/kb-qa.js" defer data-endpoint="{endpoint}">'
        "</script></body></html>",
        encoding="utf-8",
    )
    origin, files = serve_folder(site)
    context = loopback_context(browser)
    try:
        page = context.new_page()
        open_page(page, origin + "/index.html")
        yield page
    finally:
        context.close()
        files.shutdown()
        files.server_close()
        api.shutdown()
        api.server_close()


def test_an_api_lost_mid_answer_is_a_cut_off_not_an_unreachable_service(
    page_on_lost_api: Any,
) -> None:
    """Stopping `mkdocs serve` while an answer streamed was reported as "Could not reach the
    answer service ... it must allow this site's origin ... in cors_origins", and the part
    shown kept a [1] with no source listed under it."""
    page = page_on_lost_api
    page.keyboard.press("Control+k")
    ask(page, "How often are jobs retried?")
    error = page.locator(".kbq-error")
    sync_api.expect(error).to_have_text(
        "The answer was cut off: the connection closed early. Try again."
    )
    answer = page.locator(".kbq-answer")
    sync_api.expect(answer).to_have_text("Retries happen five times. And")
    assert answer.locator("sup").count() == 0


def test_back_after_citations_of_the_same_page_highlights_what_the_url_names(
    new_page: Any, stack: Stack
) -> None:
    """On Material, Back after [2] then [1] (two sections of the page shown) left [1]'s
    passage highlighted while the URL named [2]'s."""
    stack.llm.template = (
        "Dead jobs move to the _dead queue {{Retries and backoff > The dead-letter queue}}. "
        "Failures are retried {{Retries and backoff > Default retry policy}}."
    )
    page = new_page()
    open_page(page, stack.site + "/guides/retries/")
    page.locator(".kbq-launcher").click()
    ask(page, "Where do jobs go when they keep failing?")
    page.evaluate("window.__sameDocument = true")
    in_shadow(page, "root.querySelectorAll('a.kbq-cite')[1].click()")
    page.wait_for_url(re.compile(r"\?kbqa-hl=[^#]+#default-retry-policy$"))
    page.wait_for_function(f"{MARKS_TEXT}.length > 0")
    policy = page.evaluate(MARKS_TEXT)
    # Scrolled there, Material writes the offset into the entry (after 100 ms): Back to it then
    # goes through Material's navigation too.
    settle(page)
    page.wait_for_timeout(300)
    in_shadow(page, "root.querySelectorAll('a.kbq-cite')[0].click()")
    page.wait_for_url(re.compile(r"#the-dead-letter-queue$"))
    page.wait_for_function(f"{MARKS_TEXT}.startsWith('When a job exhausts')")
    settle(page)
    page.wait_for_timeout(300)

    page.go_back()
    page.wait_for_url(re.compile(r"#default-retry-policy$"))
    page.wait_for_function(f"{MARKS_TEXT} === {json.dumps(policy)}")
    # Back to the page as it was opened: nothing named, nothing highlighted.
    page.go_back()
    page.wait_for_url(stack.site + "/guides/retries/")
    page.wait_for_function(f"{MARKS_TEXT} === ''")
    page.wait_for_timeout(300)
    assert page.evaluate(MARKS_TEXT) == ""
    assert page.evaluate("window.__sameDocument") is True


def test_a_new_conversation_is_announced_and_clears_the_passage_shown(
    new_page: Any, stack: Stack
) -> None:
    """ "New conversation" emptied the log and moved focus to the question box without a word
    for a screen reader, and left the old answer's passage highlighted and ?kbqa-hl in the URL."""
    stack.llm.template = "Failures are retried {{Retries and backoff > Default retry policy}}."
    page = new_page()
    open_page(page, stack.site + "/guides/retries/")
    page.locator(".kbq-launcher").click()
    ask(page, "How are failures retried?")
    in_shadow(page, "root.querySelector('a.kbq-cite').click()")
    page.wait_for_url(re.compile(r"\?kbqa-hl=[^#]+#default-retry-policy$"))
    page.wait_for_function(f"{MARKS_TEXT}.length > 0")
    settle(page)
    page.get_by_role("button", name="New conversation").click()
    sync_api.expect(page.locator(".kbq-sr")).to_have_text("New conversation")
    page.wait_for_function(f"{MARKS_TEXT} === ''")
    assert page.url == stack.site + "/guides/retries/#default-retry-policy"
    assert page.locator(".kbq-bot").count() == 0
    assert in_shadow(page, "return root.activeElement.className") == "kbq-input"


def test_a_screen_reader_hears_where_each_question_starts(new_page: Any, stack: Stack) -> None:
    """Questions and answers in the log were told apart only by how they look (WCAG 1.3.1):
    a screen reader read one turn's answer straight into the next question. Each question
    now starts with "Your question", seen by no one."""
    stack.llm.template = "Failures are retried {{Retries and backoff > Default retry policy}}."
    page = new_page()
    open_page(page, stack.site + "/")
    page.keyboard.press("Control+k")
    ask(page, "How are failures retried?")
    ask(page, "And then?")
    snapshot = page.locator(".kbq-log").aria_snapshot()
    assert snapshot.count("Your question:") == 2, snapshot
    label = page.locator(".kbq-user").first.locator("span").first
    assert label.text_content() == "Your question: "
    box = label.bounding_box()
    assert box is not None and box["width"] <= 1 and box["height"] <= 1
    # The bubble shows the question alone.
    assert page.locator(".kbq-user .kbq-bubble").first.inner_text() == "How are failures retried?"
