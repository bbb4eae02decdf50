"""The chat widget end to end: asking, streaming, citations that open and highlight passages,
Material's instant navigation and palettes, the drop-in tag, keyboard and phone use.

The stack (built sample site, live API, scripted LLM, Chromium) is in ``widget_stack.py``.
"""

from __future__ import annotations

import http.server
import re
import threading
from typing import Any

import httpx
from browser import sync_playwright_or_skip
from llm_server import Reply
from widget_stack import (
    HEADING_IN_VIEW,
    MARK_IN_VIEW,
    MARKS,
    MARKS_TEXT,
    PANEL_COVERS_MARKS,
    PROBE,
    Stack,
    ask,
    asked_for_a_command,
    in_shadow,
    open_page,
    search_settled,
    settle,
    shot,
)

sync_api = sync_playwright_or_skip()


def test_ask_stream_cite_and_highlight_on_another_page(new_page: Any, stack: Stack) -> None:
    stack.llm.template = (
        "Retries back off exponentially {{Retries and backoff > Default retry policy}}. "
        "Tokens rotate with a grace period {{Authentication and tokens > Rotating tokens}}."
    )
    page = new_page()
    open_page(page, stack.site + "/")
    # Loads once, even when the script is included a second time.
    page.add_script_tag(url=stack.site + "/kb-qa/kb-qa.js")
    page.wait_for_timeout(100)
    assert page.locator("#kb-qa").count() == 1
    shot(page, "01-closed")

    page.keyboard.press("Control+k")
    sync_api.expect(page.locator(".kbq-panel")).to_be_visible()
    assert in_shadow(page, "return root.activeElement && root.activeElement.id") == "kbq-input"
    assert page.locator(".kbq-chip").all_text_contents() == [
        "How do retries back off?",
        "How do I rotate an API token?",
    ]
    shot(page, "02-open-empty")

    page.wait_for_load_state("networkidle")  # a reader types after the page has loaded
    page.evaluate(PROBE)
    page.keyboard.type("How do retries back off, and how do tokens rotate?")
    page.keyboard.press("Enter")
    page.wait_for_function("window.__probe.status > 0")
    page.locator(".kbq-actions").wait_for()
    probe = page.evaluate("window.__probe")
    timing = page.evaluate("window.KbQa.timing")
    enter_to_status = probe["status"] - probe["enter"]
    print(
        f"\nEnter -> status line {enter_to_status:.1f} ms ({probe['statusText']!r}), "
        f"Enter -> first text {probe['text'] - probe['enter']:.1f} ms; "
        f"status event received {timing['status'] - timing['submitted']:.0f} ms, "
        f"first text {timing['delta'] - timing['submitted']:.0f} ms, "
        f"done {timing['done'] - timing['submitted']:.0f} ms after submit"
    )
    # Timings are printed, never asserted (bench figures, not tests): the status line shows
    # before any answer text.
    assert 0 < probe["status"] <= probe["text"]
    assert len(probe["lengths"]) >= 3, probe["lengths"]  # text arrived in pieces
    answer = page.locator(".kbq-answer").inner_text()
    assert "Retries back off exponentially" in answer and "{{" not in answer
    chips = page.locator("a.kbq-cite")
    assert chips.all_text_contents() == ["1", "2"]
    assert page.locator(".kbq-source-t").all_text_contents() == [
        "Retries and backoff › Default retry policy",
        "Authentication and tokens › Rotating tokens",
    ]
    shot(page, "03-answer")

    chips.first.hover()
    tip = page.locator(".kbq-tip")
    sync_api.expect(tip).to_be_visible()
    assert "Retries and backoff › Default retry policy" in tip.inner_text()
    # The sentence is aligned to the rows it was drawn from (kb_qa/answer/alignment.py).
    assert "retry.strategy exponential How the delay grows" in tip.inner_text()
    shot(page, "04-tooltip")

    page.evaluate("window.__sameDocument = true")
    chips.first.click()
    page.wait_for_url(re.compile(r"/guides/retries/\?kbqa-hl=[^#]+#default-retry-policy$"))
    page.wait_for_function(f"{MARKS}.length > 0")
    assert page.evaluate("window.__sameDocument") is True  # Material swapped the page in place
    marked = page.evaluate(MARKS_TEXT)
    assert "How the delay grows between attempts" in marked
    assert "Growth factor for" in marked
    # Only those rows: not the table's other rows, the sentence before it or the rest.
    assert "Upper bound for any single delay" not in marked
    assert "Out of the box" not in marked and "declared dead" not in marked
    assert "Default retry policy" not in marked and "How the backoff" not in marked
    page.wait_for_function(MARK_IN_VIEW)
    settle(page)
    assert page.evaluate(MARK_IN_VIEW)
    assert page.evaluate(HEADING_IN_VIEW, "default-retry-policy")  # where the rows belong
    assert page.locator("#kb-qa").count() == 1
    # The panel docks beside the page instead of covering the passage, and stays open for the
    # next citation; closing it gives the page its width back.
    sync_api.expect(page.locator(".kbq-panel")).to_be_visible()
    assert not page.evaluate(PANEL_COVERS_MARKS)
    shot(page, "05-highlight-other-page-docked")
    page.locator("a.kbq-cite").nth(1).click()
    page.wait_for_url(re.compile(r"/operations/authentication/\?kbqa-hl=[^#]+#token-rotation$"))
    page.wait_for_function(f"{MARKS}.some(m => m.textContent.includes('grace period'))")
    page.wait_for_function(MARK_IN_VIEW)
    assert not page.evaluate(PANEL_COVERS_MARKS)
    # The section's heading shows too, below Material's sticky header.
    settle(page)
    assert page.evaluate(HEADING_IN_VIEW, "token-rotation")
    # Docked, the panel sits beside the page rather than over it: not modal while it does.
    assert page.locator(".kbq-panel").get_attribute("aria-modal") == "false"
    # With focus on the page, the shortcut goes back to the question and Esc closes the panel.
    box = page.locator(".md-content__inner h1").bounding_box()
    page.mouse.click(box["x"] + 5, box["y"] + 5)
    assert page.evaluate("document.activeElement === document.body")
    page.keyboard.press("Control+k")
    assert in_shadow(page, "return root.activeElement && root.activeElement.id") == "kbq-input"
    sync_api.expect(page.locator(".kbq-panel")).to_be_visible()
    # Esc in the site's search (focus on a result) is the search's: the panel stays.
    page.locator(".md-search__input").click()
    page.keyboard.type("token")
    search_settled(page)
    page.keyboard.press("ArrowDown")
    assert page.evaluate("document.activeElement.tagName") == "A"
    page.keyboard.press("Escape")
    page.wait_for_function("!document.querySelector('input[data-md-toggle=search]').checked")
    sync_api.expect(page.locator(".kbq-panel")).to_be_visible()
    page.mouse.click(box["x"] + 5, box["y"] + 5)
    page.keyboard.press("Escape")
    sync_api.expect(page.locator(".kbq-panel")).to_be_hidden()
    assert page.evaluate("document.documentElement.hasAttribute('data-kb-qa-docked')") is False
    page.keyboard.press("Control+k")
    sync_api.expect(page.locator(".kbq-answer")).to_contain_text("Retries back off")
    shot(page, "05b-reopened")
    page.go_back()
    page.wait_for_url(re.compile(r"/guides/retries/"))

    page.wait_for_function(f"{MARKS}.length > 0")
    page.wait_for_function(f"{MARKS}.every(m => m.classList.contains('kb-qa-highlight--faded'))")

    # The link is shareable: a fresh browser (no session storage) highlights the same passage.
    other = new_page()
    open_page(other, page.url)
    other.wait_for_function(MARK_IN_VIEW)
    assert other.evaluate(MARKS_TEXT) == marked
    assert other.locator(".kbq-panel").is_hidden()

    # The conversation survives a full page load in the same tab.
    page.goto(stack.site + "/faq/")
    page.wait_for_function("window.KbQa && window.KbQa.mounted")
    sync_api.expect(page.locator(".kbq-answer")).to_contain_text("Retries back off exponentially")


def test_same_page_citation_scrolls_smoothly(new_page: Any, stack: Stack) -> None:
    stack.llm.template = (
        "Dead jobs move to the _dead queue {{Retries and backoff > The dead-letter queue}}."
    )
    page = new_page()
    open_page(page, stack.site + "/guides/retries/")
    page.locator(".kbq-launcher").click()
    ask(page, "Where do jobs go when they keep failing?")
    page.evaluate("window.__sameDocument = true")
    before = page.evaluate("scrollY")
    # Smooth scrolling has not moved the page yet when the click handler returns.
    right_after = in_shadow(page, "root.querySelector('a.kbq-cite').click(); return scrollY;")
    assert right_after == before
    page.wait_for_function(MARK_IN_VIEW)
    assert page.evaluate("scrollY") > before
    assert page.evaluate("window.__sameDocument") is True
    assert re.search(r"/guides/retries/\?kbqa-hl=[^#]+#the-dead-letter-queue$", page.url)
    assert page.evaluate(MARKS_TEXT).startswith("When a job exhausts its attempts")
    settle(page)
    assert page.evaluate(MARK_IN_VIEW)
    shot(page, "06-highlight-same-page")


def test_chinese_passage_is_highlighted(new_page: Any, stack: Stack) -> None:
    stack.llm.template = "旧令牌在宽限期内仍然有效 {{常见问题 > 如何轮换令牌？}}。"
    page = new_page()
    open_page(page, stack.site + "/")
    page.keyboard.press("Control+k")
    ask(page, "如何轮换令牌？")
    page.locator("a.kbq-cite").first.click()
    page.wait_for_url(re.compile(r"/zh/quickstart/\?kbqa-hl="))
    page.wait_for_function(MARK_IN_VIEW)
    settle(page)
    marked = page.evaluate(MARKS_TEXT)
    assert "lumen token rotate" in marked and "宽限期" in marked
    shot(page, "07-highlight-chinese")


def test_follows_material_dark_mode_and_the_system_scheme(new_page: Any, stack: Stack) -> None:
    page = new_page(color_scheme="light")
    open_page(page, stack.site + "/")
    page.keyboard.press("Control+k")
    panel = page.locator(".kbq-panel")
    background = "el => getComputedStyle(el).backgroundColor"
    light = panel.evaluate(background)
    shot(page, "08-light")
    page.locator("label[for='__palette_1']").click()
    page.wait_for_function("document.body.dataset.mdColorScheme === 'slate'")
    dark = panel.evaluate(background)
    assert dark != light
    assert luminance(dark) < 0.2 < luminance(light)
    assert page.locator("#kb-qa").get_attribute("data-scheme") == "dark"
    shot(page, "09-dark")

    # The site's primary colour is the widget's: switch Material to teal.
    page.evaluate("document.body.setAttribute('data-md-color-primary', 'teal')")
    header = page.locator(".md-header").evaluate(background)
    assert page.locator(".kbq-head").evaluate(background) == header
    assert page.locator(".kbq-send").evaluate(background) == header

    # A highlighted passage stays readable on the dark page (Material keeps the palette).
    link = page.evaluate(
        """() => KbQa._test.citationHref({url: 'guides/retries/#default-retry-policy',
             text: 'With these defaults a job that always fails is attempted **five times**'},
             {root: location.origin + '/'})"""
    )
    open_page(page, link)
    page.wait_for_function(MARK_IN_VIEW)
    settle(page)
    assert page.evaluate("document.body.dataset.mdColorScheme") == "slate"
    shot(page, "09b-dark-highlight")

    # A page without Material follows prefers-color-scheme.
    for scheme, is_dark in (("dark", True), ("light", False)):
        plain = new_page(color_scheme=scheme)
        open_page(plain, stack.site + "/plain.html")
        plain.locator(".kbq-launcher").click()
        color = plain.locator(".kbq-panel").evaluate(background)
        assert (luminance(color) < 0.2) is is_dark, (scheme, color)
        shot(plain, f"10-plain-{scheme}")


def luminance(css_color: str) -> float:
    r, g, b = (int(v) / 255 for v in re.findall(r"\d+", css_color)[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def test_model_and_document_html_execute_nothing(new_page: Any, stack: Stack) -> None:
    stack.llm.template = (
        'Escaped: <script>window.__pwned=1</script> <img src=x onerror="window.__pwned=1"> '
        '<a href="javascript:window.__pwned=1">a</a> [click](javascript:window.__pwned=1) '
        '<iframe srcdoc="<script>parent.__pwned=1</script>"></iframe> done '
        "{{Security > Known issues > Documentation test fixture}}."
    )
    page = new_page()
    open_page(page, stack.site + "/")
    page.keyboard.press("Control+k")
    ask(page, "Is there a documentation test fixture with raw HTML?")
    chip = page.locator("a.kbq-cite").first
    chip.hover()
    sync_api.expect(page.locator(".kbq-tip")).to_contain_text("raw HTML in its Markdown source")
    page.mouse.move(0, 0)  # off the preview, which the pointer may otherwise rest on
    sync_api.expect(page.locator(".kbq-tip")).to_be_hidden()
    page.locator(".kbq-actions button").first.click()  # copy answer
    page.wait_for_timeout(300)
    assert page.evaluate("window.__pwned") is None
    assert page.evaluate("window.__xss") is None
    answer = page.locator(".kbq-answer").inner_text()
    assert "<script>window.__pwned=1</script>" in answer
    assert '<img src=x onerror="window.__pwned=1">' in answer
    dangerous = in_shadow(
        page,
        """return [...root.querySelectorAll('*')].filter(el =>
             /^(SCRIPT|IMG|IFRAME|OBJECT|EMBED)$/.test(el.tagName) ||
             [...el.attributes].some(a => a.name.startsWith('on')) ||
             /^\\s*javascript:/i.test(el.getAttribute('href') || '')
           ).map(el => el.outerHTML);""",
    )
    assert dangerous == []
    shot(page, "11-xss-escaped")


def test_keystrokes_stay_in_the_widget(new_page: Any, stack: Stack) -> None:
    page = new_page()
    open_page(page, stack.site + "/guides/retries/")
    search_open = "document.querySelector('[data-md-toggle=search]').checked"
    # Control: outside the widget "/" opens Material's search.
    page.keyboard.press("/")
    page.wait_for_function(search_open)
    page.keyboard.press("Escape")
    page.wait_for_function(f"!{search_open}")

    page.keyboard.press("Control+k")
    url = page.url
    page.keyboard.type("s/fpn")
    page.wait_for_timeout(300)
    assert page.locator(".kbq-input").input_value() == "s/fpn"
    assert not page.evaluate(search_open)
    assert page.url == url  # "p" and "n" did not go to the previous or next page

    # Focus stays inside the dialog while it is open.
    for _ in range(12):
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.id") == "kb-qa"
    for _ in range(4):
        page.keyboard.press("Shift+Tab")
        assert page.evaluate("document.activeElement.id") == "kb-qa"
    panel = page.locator(".kbq-panel")
    assert panel.get_attribute("role") == "dialog" and panel.get_attribute("aria-modal") == "true"
    assert page.locator(".kbq-input").get_attribute("aria-label") == "Your question"

    page.keyboard.press("Escape")
    sync_api.expect(panel).to_be_hidden()
    assert in_shadow(page, "return root.activeElement && root.activeElement.className") == (
        "kbq-launcher"
    )
    assert page.locator(".kbq-launcher").get_attribute("aria-expanded") == "false"


def test_phone_viewport(new_page: Any, stack: Stack) -> None:
    stack.llm.template = (
        "Workers lease jobs and send heartbeats {{Retries and backoff > What counts as a failure}}."
        " Long unbroken text: lumen-worker-with-a-very-long-unbroken-name-that-must-wrap-nicely."
    )
    page = new_page(viewport={"width": 360, "height": 740}, is_mobile=True, has_touch=True)
    open_page(page, stack.site + "/guides/workers/")
    launcher = page.locator(".kbq-launcher")
    box = launcher.bounding_box()
    assert box["x"] + box["width"] <= 360 and box["y"] + box["height"] <= 740
    launcher.tap()
    panel = page.locator(".kbq-panel")
    sync_api.expect(panel).to_be_visible()
    box = panel.bounding_box()
    assert box == {"x": 0, "y": 0, "width": 360, "height": 740}
    # The page behind the full-screen panel stays put: a swipe over its head or question
    # box scrolled it (500 px), and closing the panel left the reader elsewhere.
    for selector in (".kbq-head", ".kbq-input"):
        target = page.locator(selector).bounding_box()
        page.mouse.move(target["x"] + 20, target["y"] + 10)
        page.mouse.wheel(0, 500)
    settle(page)
    assert page.evaluate("window.scrollY") == 0
    ask(page, "When does an attempt count as failed?")
    for selector in (".kbq-panel", ".kbq-log"):
        assert page.locator(selector).evaluate("el => el.scrollWidth <= el.clientWidth"), selector
    input_box = page.locator(".kbq-input").bounding_box()
    assert input_box["y"] + input_box["height"] <= 740
    shot(page, "12-phone-answer")
    page.locator("a.kbq-cite").first.tap()
    page.wait_for_url(re.compile(r"/guides/retries/\?kbqa-hl=[^#]+#what-counts-as-a-failure$"))
    sync_api.expect(panel).to_be_hidden()  # the page is too narrow to show both
    page.wait_for_function(MARK_IN_VIEW)
    settle(page)
    shot(page, "13-phone-highlight")


def test_stop_and_readable_errors(new_page: Any, stack: Stack) -> None:
    page = new_page()
    open_page(page, stack.site + "/")
    page.keyboard.press("Control+k")

    stack.llm.script(Reply(text="Retries back off exponentially. " * 40, chunk_delay=0.05))
    page.locator(".kbq-input").fill("How do retries work?")
    page.locator(".kbq-input").press("Enter")
    page.wait_for_function(
        "document.getElementById('kb-qa').shadowRoot.querySelector('.kbq-answer').textContent"
        ".length > 10"
    )
    send = page.locator(".kbq-send")
    assert send.get_attribute("aria-label") == "Stop answering"
    send.click()
    sync_api.expect(page.locator(".kbq-note")).to_have_text("Stopped.")
    # Stop is the reader's way out of an answer that stalls: the question is back in the box,
    # as after an error, and said so.
    back = "Your question is back in the box: press Enter to ask it again."
    sync_api.expect(page.locator(".kbq-sr")).to_have_text(f"Stopped. {back}")
    assert page.locator(".kbq-input").input_value() == "How do retries work?"
    assert send.get_attribute("aria-label") == "Send question"
    stopped = page.locator(".kbq-answer").last.inner_text()
    assert 10 < len(stopped) < len("Retries back off exponentially. " * 40)

    # The LLM fails twice (the server retries once) before writing anything: the reader
    # gets the sources' own words, and is told the model did not answer.
    stack.llm.script(Reply(status=500, text="boom"), Reply(status=500, text="boom"))
    ask(page, "How many times is a failing job attempted by default?")
    answer = page.locator(".kbq-answer").last
    sync_api.expect(answer).to_contain_text("The language model did not answer")
    sync_api.expect(answer).to_contain_text("five times")
    assert page.locator(".kbq-bot").last.locator("a.kbq-cite").count() >= 1

    # A reply broken off mid-way: the error says what happened, and the citation of the
    # part shown still opens its section.
    stack.llm.script(
        Reply(text="Retries back off [1]. And then more words", chunk_size=8, close_after=4)
    )
    ask(page, "How do retries back off?")
    error = page.locator(".kbq-error").last
    sync_api.expect(error).to_contain_text("broke off")
    # Said once by the widget's announcer; the paragraph in the log is not a live region.
    assert error.get_attribute("role") is None
    sync_api.expect(page.locator(".kbq-sr")).to_have_text(f"{error.inner_text()} {back}")
    chip = page.locator(".kbq-bot").last.locator("a.kbq-cite")
    sync_api.expect(chip).to_have_count(1)
    assert "#" in (chip.get_attribute("href") or "")
    # The question is back in the box: Enter asks it again.
    assert page.locator(".kbq-input").input_value() == "How do retries back off?"
    page.locator(".kbq-input").fill("")

    # HTTP errors from the API show the API's own message. A question pasted past the
    # limit (a traceback and the question after it) was cut at 2,000 characters without a
    # word, losing the question: it is sent whole, refused in words, and back in the box.
    pasted = "Traceback (most recent call last):\n" + "  x\n" * 800 + "Why does it fail?"
    page.locator(".kbq-input").fill(pasted)
    assert page.locator(".kbq-input").input_value() == pasted
    page.locator(".kbq-input").press("Enter")
    sync_api.expect(page.locator(".kbq-error").last).to_contain_text("limit is 2,000")
    assert page.locator(".kbq-input").input_value() == pasted.strip()
    # ... and in view: the log showed the 800-line question from its top, the error below.
    in_view = page.evaluate(
        """() => {
          const root = document.getElementById('kb-qa').shadowRoot;
          const log = root.querySelector('.kbq-log').getBoundingClientRect();
          const errors = root.querySelectorAll('.kbq-error');
          const error = errors[errors.length - 1].getBoundingClientRect();
          return error.top >= log.top && error.bottom <= log.bottom;
        }"""
    )
    assert in_view, "the error is out of the conversation's view"
    shot(page, "14-errors")


class _WebPage(http.server.BaseHTTPRequestHandler):
    """What stands at a wrong endpoint: a proxy's or a static host's page, for any POST."""

    def _headers(self, status: int) -> None:
        self.send_response(status)
        self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("Access-Control-Allow-Headers", "content-type")
        self.send_header("Content-Type", "text/html")
        self.end_headers()

    def do_OPTIONS(self) -> None:
        self._headers(204)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._headers(200)
        self.wfile.write(b"<!doctype html><title>Welcome</title><p>It works!</p>")

    def log_message(self, *args: object) -> None:
        pass


def test_an_endpoint_that_answers_with_a_web_page_is_named(new_page: Any, stack: Stack) -> None:
    """A 200 web page where the API should be was reported as "Could not reach the answer
    service ... check your connection", which sent readers after their network."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _WebPage)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        page = new_page()
        open_page(page, stack.site + "/")
        page.evaluate(f"window.KbQa.options.endpoint = 'http://127.0.0.1:{server.server_port}'")
        page.keyboard.press("Control+k")
        ask(page, "How do retries work?")
        error = page.locator(".kbq-error").last
        sync_api.expect(error).to_contain_text("sent a web page, not an answer")
        assert "connection" not in error.inner_text()
    finally:
        server.shutdown()
        server.server_close()


def test_copy_buttons_and_feedback(new_page: Any, stack: Stack) -> None:
    page = asked_for_a_command(new_page, stack)
    clipboard = "() => navigator.clipboard.readText()"

    page.locator(".kbq-copy-code").click()
    assert page.evaluate(clipboard) == "lumen jobs retry 01HV7R0ZK3Q9M2W8E6T4Y1U5I7"
    page.locator(".kbq-actions button[aria-label='Copy answer']").click()
    copied = page.evaluate(clipboard)
    assert copied.startswith("Replay a dead job with the CLI [1]:")
    assert re.search(
        r"Sources:\n\[1\] Retries and backoff › The dead-letter queue › Replaying dead jobs — "
        r"http://127\.0\.0\.1:\d+/guides/retries/\?kbqa-hl=\S+#replaying-dead-jobs$",
        copied,
    ), copied

    # Thumbs down, a reason, Enter: one POST to /api/feedback, which the API takes (the
    # widget does not wait for its answer).
    page.locator(".kbq-rate[aria-label='Not helpful']").click()
    reason = page.locator(".kbq-reason input")
    sync_api.expect(reason).to_be_focused()
    reason.fill("It should mention --all")
    with page.expect_request(
        lambda r: r.url == stack.api + "/api/feedback" and r.method == "POST"
    ) as sent:
        reason.press("Enter")
    response = sent.value.response()
    assert response is not None and response.status == 201, response and response.text()
    body = sent.value.post_data_json
    assert body["rating"] == "down"
    assert body["reason"] == "It should mention --all"
    assert body["question"] == "How do I replay a dead job?"
    assert body["answer"].startswith("Replay a dead job with the CLI [1]:")
    assert [c["anchor"] for c in body["citations"]] == ["replaying-dead-jobs"]
    # The done event's signed id: the server takes the rating as one of an answer it gave.
    assert body["answer_id"] and "question_id" not in body
    sync_api.expect(page.locator(".kbq-actions")).to_contain_text("Thanks for the feedback.")
    shot(page, "15-feedback")

    # A follow-up question carries the conversation, without the old citation numbers.
    stack.llm.template = "Add --all {{The dead-letter queue > Replaying dead jobs}}."
    ask(page, "And for every dead job?")
    messages = stack.llm.requests[-1]["messages"]
    earlier = [(m["role"], m["content"]) for m in messages[1:-1]]
    assert [role for role, _ in earlier] == ["user", "assistant"]
    assert earlier[0][1] == "How do I replay a dead job?"
    assert earlier[1][1].startswith("Replay a dead job with the CLI")
    assert "lumen jobs retry 01HV7R0ZK3Q9M2W8E6T4Y1U5I7" in earlier[1][1]
    assert "[1]" not in earlier[1][1]


def test_drop_in_script_on_a_plain_page(new_page: Any, stack: Stack) -> None:
    """One <script> tag on a page without MkDocs: citations navigate the plain way."""
    stack.llm.template = "Tokens rotate with a grace period {{Rotating tokens}}."
    page = new_page()
    open_page(page, stack.site + "/plain.html")
    assert page.locator("link[data-kb-qa]").count() == 1  # the highlight styles came along
    page.keyboard.press("Control+k")
    ask(page, "How do I rotate a token?")
    page.evaluate("window.__sameDocument = true")
    page.locator("a.kbq-cite").first.click()
    page.wait_for_url(re.compile(r"/operations/authentication/\?kbqa-hl=[^#]+#token-rotation$"))
    page.wait_for_function(MARK_IN_VIEW)
    assert page.evaluate("window.__sameDocument") is None  # a full page load
    assert "grace period" in page.evaluate(MARKS_TEXT)
    # The Material page has the widget too, with the same conversation (same API endpoint).
    page.evaluate("window.KbQa.open()")
    sync_api.expect(page.locator(".kbq-answer")).to_contain_text("Tokens rotate")


def test_kb_qa_serve_pages_run_the_bundle_under_their_csp(new_page: Any, stack: Stack) -> None:
    """`kb-qa serve`'s own pages (script-src 'self') mount the widget, answer and highlight."""
    stack.llm.template = "Dead jobs move to the _dead queue {{The dead-letter queue}}."
    page = new_page()
    blocked: list[str] = []
    page.on("console", lambda m: blocked.append(m.text) if "Content Security" in m.text else None)
    view = stack.api + "/view/docs/guides/retries.md"
    assert "script-src 'self'" in httpx.get(view).headers["content-security-policy"]
    open_page(page, view)
    page.keyboard.press("Control+k")
    ask(page, "Where do failed jobs end up?")
    assert page.locator("a.kbq-cite").all_text_contents() == ["1"]
    page.evaluate(
        """() => KbQa.highlight('the-dead-letter-queue',
             {passage: 'When a job exhausts its attempts'}, false)"""
    )
    page.wait_for_function(MARK_IN_VIEW)
    assert page.evaluate(MARKS_TEXT).startswith("When a job exhausts its attempts")
    assert blocked == []
    shot(page, "16-kb-qa-serve-view")
