"""The widget on a bad connection: an answer service that stops sending, a browser offline,
a double-click on Send, a Stop and a page left mid-answer. Real Chromium; the answer
service is a real kb-qa API (the widget stack) or, for connections held silent, a small
HTTP server that goes quiet where a proxy or a lost network would.

(A browser test module's name sorts after test_mcp*: Playwright's session keeps an event
loop running in the main thread, where the MCP tests call asyncio.run.)"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser import sync_playwright_or_skip
from llm_server import Reply
from widget_stack import (
    ROOT,
    CrossOriginAnswers,
    Stack,
    loopback_context,
    open_page,
    serve_folder,
)

sync_api = sync_playwright_or_skip()

QUESTION = "How often are jobs retried?"
BACK = "Your question is back in the box: press Enter to ask it again."


class _GoesQuiet(CrossOriginAnswers):
    """An answer service that goes quiet and holds the connection open: under /silent/ it
    sends no byte at all (a request forwarded to a server that never answers), under
    /stalls/ it starts an answer and then sends nothing more (nor the server's pings)."""

    released = threading.Event()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.startswith("/stalls/"):
            self.send_response(200)
            self._cors()
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for name, data in [
                ("status", {"stage": "reading", "message": "Reading 1 excerpt"}),
                ("delta", {"text": "Retries happen five times. And"}),
            ]:
                body = f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
                self.wfile.write(f"{len(body):x}\r\n".encode() + body + b"\r\n")
                self.wfile.flush()
        self.released.wait(120)
        self.close_connection = True

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def quiet_site(tmp_path: Path) -> Iterator[str]:
    """A static site carrying the built widget whose page silent.html asks a service that
    never answers, and stalls.html one that stops mid-answer: yields the site's origin."""
    handler = type("_Quiet", (_GoesQuiet,), {"released": threading.Event()})
    api = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    api.daemon_threads = True
    threading.Thread(target=api.serve_forever, daemon=True).start()
    site = tmp_path / "site"
    (site / "kb-qa").mkdir(parents=True)
    for name in ("kb-qa.js", "kb-qa.css"):
        (site / "kb-qa" / name).write_bytes((ROOT / "widget" / name).read_bytes())
    for how in ("silent", "stalls"):
        endpoint = f"http://127.0.0.1:{api.server_port}/{how}"
        (site / f"{how}.html").write_text(
            "<!doctype html><html><head><meta charset=utf-8><title>T</title></head><body>"
            f'<h1>Retries</h1><script src="kb-qa/kb-qa.js" defer data-endpoint="{endpoint}">'
            "</script></body></html>",
            encoding="utf-8",
        )
    origin, files = serve_folder(site)
    try:
        yield origin
    finally:
        handler.released.set()
        files.shutdown()
        files.server_close()
        api.shutdown()
        api.server_close()


def _asked(page: Any, url: str) -> Any:
    """The answer (still coming) to QUESTION asked in the widget of the page at ``url``."""
    open_page(page, url)
    page.keyboard.press("Control+k")
    page.locator(".kbq-input").fill(QUESTION)
    page.locator(".kbq-input").press("Enter")
    return page.locator(".kbq-bot").last


@pytest.mark.parametrize("how", ["silent", "stalls"])
def test_an_answer_service_gone_quiet_is_given_up_with_the_question_back(
    quiet_site: str, browser: Any, how: str
) -> None:
    """A request forwarded and never answered, or a stream that stopped mid-answer, left a
    silent spinner and "Stop answering" for good. After 45 s without a byte (the server
    sends a comment every 15 s while a model thinks) the reader is told the service stopped
    responding, with the part shown kept and the question back in the box."""
    context = loopback_context(browser)
    try:
        page = context.new_page()
        page.clock.install()
        bot = _asked(page, f"{quiet_site}/{how}.html")
        send = page.locator(".kbq-send")
        sync_api.expect(send).to_have_attribute("aria-label", "Stop answering")
        if how == "stalls":
            sync_api.expect(bot.locator(".kbq-answer")).to_have_text(
                "Retries happen five times. And"
            )
        page.clock.fast_forward("00:40")  # not yet: a model may think for a while
        page.wait_for_timeout(300)
        assert send.get_attribute("aria-label") == "Stop answering"
        assert bot.locator(".kbq-error").count() == 0
        page.clock.fast_forward("00:10")
        error = "The answer service stopped responding. Try again."
        sync_api.expect(bot.locator(".kbq-error")).to_have_text(error)
        sync_api.expect(send).to_have_attribute("aria-label", "Send question")
        assert bot.get_attribute("aria-busy") == "false"
        assert page.locator(".kbq-input").input_value() == QUESTION
        sync_api.expect(page.locator(".kbq-sr")).to_have_text(f"{error} {BACK}")
        if how == "stalls":
            assert bot.locator(".kbq-answer").inner_text() == "Retries happen five times. And"
        assert bot.locator(".kbq-note").count() == 0  # not "Stopped."
    finally:
        context.close()


def test_a_page_left_mid_answer_says_it_was_interrupted(quiet_site: str, browser: Any) -> None:
    """A reload while an answer streamed showed "The answer was cut off: the connection
    closed early" afterwards, not what the page change did."""
    context = loopback_context(browser)
    try:
        page = context.new_page()
        bot = _asked(page, f"{quiet_site}/stalls.html")
        sync_api.expect(bot.locator(".kbq-answer")).to_have_text("Retries happen five times. And")
        page.reload()
        page.wait_for_function("window.KbQa && window.KbQa.mounted")
        sync_api.expect(page.locator(".kbq-bot .kbq-error")).to_have_text(
            "The answer was interrupted when the page changed. Ask again to get a full answer."
        )
    finally:
        context.close()


def test_offline_readers_are_told_so_not_the_operators_cors_setting(
    new_page: Any, stack: Stack
) -> None:
    """Offline, the reader was told the server must allow the site's origin in cors_origins
    (KBQA_CORS_ORIGINS): a setting of the operator's, and not what was wrong."""
    page = new_page()
    open_page(page, stack.site + "/")
    page.keyboard.press("Control+k")
    page.context.set_offline(True)
    page.locator(".kbq-input").fill(QUESTION)
    page.locator(".kbq-input").press("Enter")
    error = page.locator(".kbq-bot .kbq-error")
    sync_api.expect(error).to_have_text(
        "You appear to be offline. Check your connection and try again."
    )
    assert page.locator(".kbq-input").input_value() == QUESTION
    page.context.set_offline(False)
    # Back online, a service that cannot be reached still gets the operator's hint.
    page.route(stack.api + "/api/ask", lambda route: route.abort())
    page.locator(".kbq-input").press("Enter")
    sync_api.expect(page.locator(".kbq-bot .kbq-error").last).to_contain_text("cors_origins")


def test_a_double_click_on_send_asks_and_does_not_stop(new_page: Any, stack: Stack) -> None:
    """The second click of a double-click on Send came to the button that had just become
    Stop: the question was stopped at once ("Stopped.", the box emptied, no answer)."""
    stack.llm.script(Reply(text="Failing jobs are retried five times.", chunk_delay=0.05))
    page = new_page()
    open_page(page, stack.site + "/")
    page.keyboard.press("Control+k")
    page.locator(".kbq-input").fill(QUESTION)
    page.locator(".kbq-send").dblclick()
    bot = page.locator(".kbq-bot").last
    sync_api.expect(bot).to_have_attribute("aria-busy", "false")
    assert bot.locator(".kbq-note").count() == 0
    sync_api.expect(bot.locator(".kbq-answer")).to_contain_text(
        "Failing jobs are retried five times."
    )
    assert page.locator(".kbq-user").count() == 1
    # Later, one click on Stop stops the next answer; a double-click on it stops it and does
    # not ask the question it puts back again.
    stack.llm.script(Reply(text="Retries back off. " * 40, chunk_delay=0.05))
    page.locator(".kbq-input").fill("How do retries back off?")
    page.locator(".kbq-input").press("Enter")
    sync_api.expect(page.locator(".kbq-bot").last.locator(".kbq-answer")).not_to_be_empty()
    page.wait_for_timeout(600)
    page.locator(".kbq-send").dblclick()
    sync_api.expect(page.locator(".kbq-bot").last.locator(".kbq-note")).to_have_text("Stopped.")
    page.wait_for_timeout(300)
    assert page.locator(".kbq-user").count() == 2
    assert page.locator(".kbq-input").input_value() == "How do retries back off?"
