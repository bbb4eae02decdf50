"""The chat widget in real headless Chromium against a model that streams a megabyte of
whitespace-only code spans (the reply froze the tab: 100 KB 17 s, 1 MB never came back).
The widget lays out a bounded part incrementally and says the reply was truncated. The API
runs without its own reply cap, so the widget alone is what is tested. How long the page's main
thread stays busy meanwhile is a figure, printed by ``bench/widget_stream.py``, not asserted.
A model's character references are shown as the characters they name, as text.
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


def asked(page: Any) -> Any:
    """The answer to "Do otters sleep?", asked in the widget (not waited for)."""
    page.keyboard.press("Control+k")
    page.locator(".kbq-input").fill("Do otters sleep?")
    page.locator(".kbq-input").press("Enter")
    return page.locator(".kbq-bot").first


def test_a_megabyte_of_whitespace_code_spans_does_not_freeze_the_page(
    page_and_llm: tuple[Any, LLMServer],
) -> None:
    page, llm = page_and_llm
    llm.script(Reply(text="` ` " * 250_000, chunk_size=16_384))  # 1 MB
    answer = asked(page)
    # Hard limits: a frozen page fails here instead of hanging the run.
    sync_api.expect(answer).to_have_attribute("aria-busy", "false", timeout=90_000)
    sync_api.expect(page.locator(".kbq-truncated")).to_contain_text("Reply truncated")
    laid = page.evaluate(
        "() => document.getElementById('kb-qa').shadowRoot.querySelectorAll('.kbq-answer code')"
        ".length",
    )
    assert 0 < laid <= 3_000, laid


def test_a_long_ordinary_answer_still_renders_whole(page_and_llm: tuple[Any, LLMServer]) -> None:
    page, llm = page_and_llm
    paragraphs = "".join(f"Paragraph {i} about *otters* and `code`.\n\n" for i in range(300))
    llm.script(Reply(text=paragraphs, chunk_size=40))
    answer = asked(page)
    sync_api.expect(answer).to_have_attribute("aria-busy", "false", timeout=60_000)
    texts = page.evaluate(
        "() => [...document.getElementById('kb-qa').shadowRoot"
        ".querySelectorAll('.kbq-answer p')].map(p => p.textContent)"
    )
    # ... then the note an answer citing nothing gets, over the sections to check it against.
    assert texts[:300] == [f"Paragraph {i} about otters and code." for i in range(300)]
    assert texts[300].startswith("(This answer cites none of your sources")
    assert page.locator(".kbq-truncated").count() == 0


def test_a_bidi_override_in_a_reply_does_not_reverse_the_answer(
    page_and_llm: tuple[Any, LLMServer],
) -> None:
    """ "the signed file \\u202eexe.txt and run it [1]" showed as "txt.exe", the rest of the
    paragraph backwards and its citation chips out of order."""
    page, llm = page_and_llm
    llm.script(Reply(text="Download the signed file \u202eexe.txt and run it [1].", chunk_size=8))
    answer = asked(page)
    sync_api.expect(answer).to_have_attribute("aria-busy", "false", timeout=60_000)
    shown = page.evaluate(
        "() => document.getElementById('kb-qa').shadowRoot.querySelector('.kbq-answer').textContent"
    )
    assert "Download the signed file exe.txt and run it" in shown
    assert "\u202e" not in shown


def answer_of(page: Any, reply: str) -> Any:
    """The finished answer to "Do otters sleep?" when the model replies ``reply``."""
    page, llm = page
    llm.script(Reply(text=reply, chunk_size=8))
    answer = asked(page)
    sync_api.expect(answer).to_have_attribute("aria-busy", "false", timeout=60_000)
    return answer


def test_a_reply_links_live_only_into_the_site(page_and_llm: tuple[Any, LLMServer]) -> None:
    """A page with injected instructions could have the model link readers anywhere:
    "[ evil ](https://evil.example/login)", "//evil.example/x" and an autolink each became a
    live link opening a new tab. Out of the site, a link is now its text and its address."""
    page = page_and_llm[0]
    origin = page.evaluate("location.origin")
    answer = answer_of(
        page_and_llm,
        "Sign in at [ evil ](https://evil.example/login), [proto](//evil.example/x) or "
        f"<https://evil.example/autolink>; see [the page](otters.md) and [home]({origin}/) [1].",
    )
    hrefs = answer.locator(".kbq-answer a:not(.kbq-cite)").evaluate_all(
        "links => links.map(a => [a.href, a.target])"
    )
    assert hrefs == [[f"{origin}/otters/", ""], [f"{origin}/", ""]]
    shown = answer.locator(".kbq-answer").text_content()
    assert "evil  (https://evil.example/login), proto (http://evil.example/x) or " in shown
    assert "or https://evil.example/autolink; see the page and home" in shown


def test_copy_answer_copies_no_bidi_override(page_and_llm: tuple[Any, LLMServer]) -> None:
    """The panel drops bidi controls from a reply, but "Copy answer" copied them: "Reversed
    \\u202etxt.exe\\u202c here" pasted reversed into an editor or a terminal."""
    page = page_and_llm[0]
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    answer = answer_of(
        page_and_llm, "Reversed \u202etxt.exe\u202c here [1]. Isolated \u2067x\u2069."
    )
    answer.get_by_role("button", name="Copy answer").click()
    sync_api.expect(answer.get_by_role("button", name="Copied")).to_have_count(1)
    copied = page.evaluate("() => navigator.clipboard.readText()")
    assert copied.startswith("Reversed txt.exe here [1]. Isolated x."), copied
    assert not any(c in copied for c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def test_an_answers_character_references_show_as_their_characters(
    page_and_llm: tuple[Any, LLMServer],
) -> None:
    """The chat had shown "&plusmn;0.5&nbsp;&deg;C &amp;" as written (the server decodes
    them in no-key answers; a model copies them from a page's Markdown). They are now the
    characters they name, as text nodes: in code they stay as written, and "&lt;img&gt;" is
    the text "<img>", never an element."""
    page, llm = page_and_llm
    llm.script(
        Reply(
            text="Otters keep within &plusmn;0.5&nbsp;&deg;C &amp; sleep &rarr; float [1]. "
            "Run `a &amp;&amp; b`; &lt;img src=x onerror=alert(1)&gt; &#x202e;stays.",
            chunk_size=8,
        )
    )
    answer = asked(page)
    sync_api.expect(answer).to_have_attribute("aria-busy", "false", timeout=60_000)
    paragraph = answer.locator(".kbq-answer p").first
    shown = paragraph.text_content() or ""
    assert "Otters keep within ±0.5\u00a0°C & sleep → float" in shown, shown
    assert "Run a &amp;&amp; b; <img src=x onerror=alert(1)> stays." in shown, shown
    assert paragraph.locator("code").text_content() == "a &amp;&amp; b"
    assert paragraph.locator("img").count() == 0
    assert "\u202e" not in shown
