"""The widget on a phone, by touch alone, and for a reader whose browser shows larger text:
found by using the sample site as a phone's reader would (Pixel 7 and iPhone emulation)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from browser import CHROMIUM, CHROMIUM_ARGS, sync_playwright_or_skip
from widget_stack import MARKS, Stack, answered, ask, in_shadow, open_page

sync_api = sync_playwright_or_skip()

TEMPLATE = "\n\n".join(
    [f"Retries back off exponentially, doubling the wait before attempt {n} each time a job "
     "fails, up to the cap {{Retries and backoff > Default retry policy}}."
     for n in range(16)]
)  # fmt: skip


def phone(new_page: Any, **options: Any) -> Any:
    return new_page(
        viewport=options.pop("viewport", {"width": 412, "height": 839}),
        has_touch=True,
        is_mobile=True,
        device_scale_factor=2,
        **options,
    )


def asked_on_a_phone(new_page: Any, stack: Stack, **options: Any) -> Any:
    stack.llm.template = TEMPLATE
    page = phone(new_page, **options)
    open_page(page, stack.site + "/guides/workers/")
    page.locator(".kbq-launcher").tap()
    ask(page, "How do retries back off?")
    return page


def test_back_from_a_citation_the_conversation_is_where_it_was_and_no_keyboard(
    new_page: Any, stack: Stack
) -> None:
    """Each return from a citation scrolled the conversation to its last question and put
    focus in the question box: the on-screen keyboard came up over half the answer."""
    page = asked_on_a_phone(new_page, stack)
    chip = page.locator(".kbq-answer a.kbq-cite").last
    chip.scroll_into_view_if_needed()  # the reader scrolled down to it
    top = in_shadow(page, "return root.querySelector('.kbq-log').scrollTop;")
    assert top > 100
    chip.tap()
    page.wait_for_url(re.compile(r"/guides/retries/"))
    page.wait_for_function(f"{MARKS}.length > 0")
    page.locator(".kbq-launcher").tap()
    assert in_shadow(page, "return root.querySelector('.kbq-log').scrollTop;") == top
    assert in_shadow(page, "return root.activeElement && root.activeElement.className") == (
        "kbq-log"
    )
    # A thumb's rating brings no keyboard either; its reason box is there to tap.
    page.locator(".kbq-rate[aria-label='Helpful']").last.tap()
    assert in_shadow(page, "return root.activeElement && root.activeElement.tagName") != "INPUT"


def test_a_phone_on_its_side_gives_the_chat_the_whole_screen(new_page: Any, stack: Stack) -> None:
    """Landscape (839×412) showed a 440 px card; with the keyboard up the conversation was one
    line tall. Buttons were 32-36 px for a thumb."""
    page = asked_on_a_phone(new_page, stack, viewport={"width": 839, "height": 412})
    box = page.locator(".kbq-panel").bounding_box()
    assert box is not None and box["width"] == 839 and box["height"] == 412
    # The send button too (it was 36 px on a touch screen).
    for button in page.locator(".kbq-icon, .kbq-send").all():
        if button.is_visible():
            size = button.bounding_box()
            assert size is not None and min(size["width"], size["height"]) >= 44, size


def test_larger_text_in_the_browser_makes_the_chats_text_larger(
    browser: Any, stack: Stack, tmp_path: Path
) -> None:
    """A reader who set the browser's text to 32 px got 15 px answers: every size was in px
    and the widget's host resets what it inherits."""
    profile = tmp_path / "profile"
    (profile / "Default").mkdir(parents=True)
    prefs = {"webkit": {"webprefs": {"default_font_size": 32, "minimum_font_size": 0}}}
    (profile / "Default" / "Preferences").write_text(json.dumps(prefs), encoding="utf-8")
    context = browser.browser_type.launch_persistent_context(
        str(profile), executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
    )
    try:
        page = context.new_page()
        open_page(page, stack.site + "/")
        page.keyboard.press("Control+k")
        size = page.locator(".kbq-input").evaluate("e => parseFloat(getComputedStyle(e).fontSize)")
    finally:
        context.close()
    assert size >= 28, size  # 15 px at the default 16 px, doubled


def test_androids_back_closes_the_full_screen_chat_not_the_page(
    new_page: Any, stack: Stack
) -> None:
    """With the chat filling a phone's screen, Android's back button left the page behind it
    (the reader lost the page to close the chat). A close request (Esc on the page here: the
    path Chromium's back button takes) now closes the chat and leaves the page where it was."""
    page = asked_on_a_phone(new_page, stack)
    url = page.url
    sync_api.expect(page.locator(".kbq-panel")).to_be_visible()
    # Focus on the page: not the widget's own Esc.
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.keyboard.press("Escape")
    sync_api.expect(page.locator(".kbq-panel")).to_be_hidden()
    assert page.url == url
    sync_api.expect(page.locator(".kbq-launcher")).to_be_visible()
    # Reopened, the next close request closes it again (one watcher per opening).
    page.locator(".kbq-launcher").tap()
    sync_api.expect(page.locator(".kbq-panel")).to_be_visible()
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.keyboard.press("Escape")
    sync_api.expect(page.locator(".kbq-panel")).to_be_hidden()


DOCKED = "document.documentElement.hasAttribute('data-kb-qa-docked')"


def test_a_docked_chat_floats_again_when_the_window_narrows(new_page: Any, stack: Stack) -> None:
    """Docked beside the page on a tablet held sideways (1024×768), then turned upright: the
    page beside the panel was 358 px (under the 600 px the widget refuses to dock at), at
    535 px wide 125 px, at 390 px none (the panel 410 px wider than the screen). Now the
    panel leaves the page's side for the floating or full-screen panel, with the conversation
    and the highlighted passage kept."""
    template = "Retries back off exponentially {{Retries and backoff > Default retry policy}}."
    question = "What is the default retry backoff?"
    viewport = {"width": 1024, "height": 768}
    page = answered(new_page, stack, template, question, "/guides/workers/", viewport=viewport)
    page.locator("a.kbq-cite").first.click()
    page.wait_for_url(re.compile(r"/guides/retries/"))
    page.wait_for_function(f"{MARKS}.length > 0")
    page.wait_for_function(DOCKED)
    for width, height in ((768, 1024), (535, 900), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_function(f"!{DOCKED}")
        beside = page.evaluate("document.body.getBoundingClientRect().width")
        assert beside >= width - 20, (width, beside)  # the page's whole width (a scrollbar)
        sync_api.expect(page.locator(".kbq-panel")).to_be_visible()
        box = page.locator(".kbq-panel").bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, box
        sync_api.expect(page.locator(".kbq-answer")).to_contain_text("Retries back off")
        assert page.evaluate(f"{MARKS}.length") > 0
    # Wide again, the next citation docks it again.
    page.set_viewport_size(viewport)
    page.locator("a.kbq-cite").first.click()
    page.wait_for_function(DOCKED)
    assert page.evaluate("document.body.getBoundingClientRect().width") >= 600


def test_a_phone_on_its_side_keeps_the_page_behind_the_chat_still(
    new_page: Any, stack: Stack
) -> None:
    """On a phone held sideways (851×393) the chat fills the screen, but the page behind it
    was locked only up to 600 px wide: a swipe on the chat's question box scrolled the page
    from 177 to 787 px."""
    page = asked_on_a_phone(new_page, stack, viewport={"width": 851, "height": 393})
    page.evaluate("window.scrollTo(0, 177)")
    page.wait_for_function("window.scrollY === 177")
    box = page.locator(".kbq-form").bounding_box()
    assert box is not None
    cdp = page.context.new_cdp_session(page)
    x, y = box["x"] + 40, box["y"] + 8

    def touch(kind: str, *points: dict[str, float]) -> None:
        cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": list(points)})

    for _ in range(2):  # a thumb's swipe up from the question box, twice
        touch("touchStart", {"x": x, "y": y})
        for step in range(1, 11):
            touch("touchMove", {"x": x, "y": y - 15 * step})
        touch("touchEnd")
        page.wait_for_timeout(500)  # a fling's momentum
        assert page.evaluate("window.scrollY") == 177
