"""What a reader using the keyboard, a screen reader, forced colours, zoom or an RTL page in a
language the widget does not speak meets after asking: found by an accessibility audit
against WCAG 2.2 AA (each test names what it found)."""

from __future__ import annotations

from typing import Any

from browser import sync_playwright_or_skip
from widget_stack import (
    MARK_IN_VIEW,
    MARKS,
    Stack,
    answered,
    ask,
    in_shadow,
    open_page,
    settle,
    shot,
)

sync_api = sync_playwright_or_skip()

ACTIVE_HOLDS_A_MARK = (
    "(() => { const a = document.activeElement;"
    " return !!a && a !== document.body && !!a.querySelector('mark.kb-qa-highlight'); })()"
)
ROTATION = (
    "Rotation keeps the old secret for a grace period "
    "{{Authentication and tokens > Rotating tokens}}."
)


def test_a_citation_opening_another_page_takes_focus_there_and_says_so(
    new_page: Any, stack: Stack
) -> None:
    """On a wide window the page changed and focus fell to <body>, with the panel still a
    modal dialog over the page: Tab went to buttons hidden under it, Esc did nothing, and a
    screen reader was told nothing of the passage."""
    page = _followed(new_page, stack, "/guides/workers/")
    page.wait_for_function(ACTIVE_HOLDS_A_MARK)
    panel = page.locator(".kbq-panel")
    sync_api.expect(panel).to_be_visible()
    settle(page)
    assert page.evaluate(MARK_IN_VIEW)
    page.keyboard.press("Escape")  # focus is on the page: Esc closes the panel there
    sync_api.expect(panel).to_be_hidden()
    assert page.evaluate(ACTIVE_HOLDS_A_MARK)  # and the reader's place keeps focus


def test_a_citation_of_this_page_keeps_focus_for_the_next_one(new_page: Any, stack: Stack) -> None:
    """A citation of the page the reader is on: the passage is announced and focus stays on
    the citation, in a panel that no longer traps it."""
    page = _followed(new_page, stack, "/operations/authentication/")
    assert in_shadow(page, "return root.activeElement.className") == "kbq-cite"


def _followed(new_page: Any, stack: Stack, at: str) -> Any:
    """A page ``at`` whose reader asked how to rotate a token and followed the answer's
    citation (Rotating tokens) with the keyboard: the passage is highlighted, said, and the
    panel docked beside it, not modal."""
    page = answered(
        new_page, stack, ROTATION, "How do I rotate a token?", at,
        viewport={"width": 1280, "height": 800},
    )  # fmt: skip
    page.locator("a.kbq-cite").first.focus()
    page.keyboard.press("Enter")
    page.wait_for_url("**/operations/authentication/**")
    page.wait_for_function(f"{MARKS}.length > 0")
    sync_api.expect(page.locator(".kbq-sr")).to_have_text(
        "Passage highlighted under Rotating tokens."
    )
    assert page.locator(".kbq-panel").get_attribute("aria-modal") == "false"
    return page


def test_the_highlight_is_not_colour_alone_and_forced_colours_keep_it(
    new_page: Any, stack: Stack
) -> None:
    """The passage was a 1.3:1 tint that faded to nothing after 4 s; in forced colours it was
    black on dark olive (the system's Mark at 38%), and the question box showed no focus."""
    page = answered(
        new_page, stack, ROTATION, "How do I rotate a token?", "/operations/authentication/",
        forced_colors="active",
    )  # fmt: skip
    page.locator("a.kbq-cite").first.click()
    page.wait_for_function(f"{MARKS}.length > 0")
    mark = page.locator("mark.kb-qa-highlight").first
    assert mark.evaluate("m => getComputedStyle(m).textDecorationLine") == "underline"
    forced = mark.evaluate("m => [getComputedStyle(m).backgroundColor, getComputedStyle(m).color]")
    system = page.evaluate(
        """() => { const s = document.createElement('span'); s.style.background = 'Mark';
        s.style.color = 'MarkText'; s.style.forcedColorAdjust = 'none'; document.body.append(s);
        const c = getComputedStyle(s); const out = [c.backgroundColor, c.color]; s.remove();
        return out; }"""
    )
    assert forced == system  # whole, not a translucent tint
    page.wait_for_function(f"{MARKS}.every(m => m.classList.contains('kb-qa-highlight--faded'))")
    assert mark.evaluate("m => getComputedStyle(m).textDecorationLine") == "underline"
    page.locator(".kbq-input").focus()
    outline = in_shadow(
        page, "const f = root.querySelector('.kbq-form'); return getComputedStyle(f).outlineStyle;"
    )
    assert outline == "solid"


def test_a_page_in_a_language_the_widget_lacks_marks_its_english(
    new_page: Any, stack: Stack
) -> None:
    """On an Arabic page the widget's English was read with an Arabic voice and laid out right
    to left ("opens, Esc closes." began with its full stop); the question keeps the page's.
    The widget speaks Arabic now: a Persian page is one it lacks."""
    page = new_page()
    page.add_init_script(ARABIC_PAGE.replace("'ar'", "'fa'"))
    open_page(page, stack.site + "/")
    page.keyboard.press("Control+k")
    frame = in_shadow(
        page,
        "const f = root.querySelector('.kbq');"
        " return [f.lang, f.dir, getComputedStyle(f).direction];",
    )
    assert frame == ["en", "ltr", "ltr"]
    page.locator(".kbq-input").fill("ما هي سياسة إعادة المحاولة؟")
    page.locator(".kbq-input").press("Enter")
    assert page.locator(".kbq-user .kbq-bubble").first.get_attribute("lang") == "fa"
    # A page in a language the widget speaks says nothing more.
    english = new_page()
    open_page(english, stack.site + "/")
    assert in_shadow(english, "return root.querySelector('.kbq').getAttribute('lang')") is None


ARABIC_PAGE = (
    "document.addEventListener('readystatechange', () => {"
    " document.documentElement.lang = 'ar'; document.documentElement.dir = 'rtl'; });"
)
# An answer's list, quote and code block, in Arabic on an Arabic page (left to right on the
# English site).
LISTED = {
    "ar": "تُعاد المهمة خمس مرات {{Retries and backoff > Default retry policy}}:\n\n"
    "1. المحاولة الأولى بعد ثانية\n2. ثم تتضاعف المهلة\n   - حتى خمس دقائق\n\n"
    "> لا تُعاد المهمة بعد المحاولة الخامسة\n\n```bash\nlumen jobs retry 01HV7R0ZK3\n```\n",
    "en": "A job is attempted five times {{Retries and backoff > Default retry policy}}:\n\n"
    "1. the first retry after a second\n2. then the delay doubles\n   - up to five minutes\n\n"
    "> No job is retried after the fifth attempt\n\n```bash\nlumen jobs retry 01HV7R0ZK3\n```\n",
}
# Where each list item's marker lies ("2. " or "• " wide, beside the item's start edge) in
# the log's content box, and which side the quote's bar and the copy button are on.
SIDES = """
const log = root.querySelector('.kbq-log');
const s = getComputedStyle(log);
const left = log.getBoundingClientRect().left + log.clientLeft;
const inner = [
  left + parseFloat(s.paddingLeft),
  left + log.clientWidth - parseFloat(s.paddingRight),
];
const answer = [...root.querySelectorAll('.kbq-answer')].pop();
const measure = document.createElement('canvas').getContext('2d');
const items = [...answer.querySelectorAll('li')].map((li) => {
  const box = li.getBoundingClientRect();
  const css = getComputedStyle(li);
  measure.font = css.font;
  const list = li.parentElement;
  const n = [...list.children].indexOf(li) + (list.start || 1);
  const width = measure.measureText(list.nodeName === 'OL' ? n + '. ' : '\u2022 ').width;
  const rtl = css.direction === 'rtl';
  const marker = rtl ? [box.right, box.right + width] : [box.left - width, box.left];
  const inside = marker[0] >= inner[0] - 0.5 && marker[1] <= inner[1] + 0.5;
  return [rtl, inside, Math.round(rtl ? inner[1] - box.right : box.left - inner[0])];
});
const quote = getComputedStyle(answer.querySelector('blockquote'));
const pre = answer.querySelector('.kbq-code pre').getBoundingClientRect();
const copy = answer.querySelector('.kbq-copy-code').getBoundingClientRect();
const bar = [quote.borderLeftWidth, quote.borderRightWidth];
return { items, bar, copyAtRight: pre.right - copy.right < 10 };
"""


def test_an_arabic_answers_list_markers_and_quote_bar_sit_on_its_right(
    new_page: Any, stack: Stack
) -> None:
    """On an Arabic page (Material with ``theme.language: ar``) an Arabic answer's "1." sat
    in the log's right padding, at a phone's screen edge: the list kept room for markers on
    its left, the English widget's side, and each right-to-left item put its marker on its
    right. Its quote's bar was on the left. Code reads left to right; English stays as it was."""
    phone = {"width": 390, "height": 844}
    stack.llm.template = LISTED["ar"]
    page = new_page(viewport=phone)
    page.add_init_script(ARABIC_PAGE)
    open_page(page, stack.site + "/")
    page.keyboard.press("Control+k")
    ask(page, "How do retries back off?")
    sides = in_shadow(page, SIDES)
    shot(page, "rtl-answer-390")
    # 22 px of room for each marker (44 for the sublist's), inside the log, on the side where
    # each item's text starts.
    assert sides["items"] == [[True, True, 22], [True, True, 22], [True, True, 44]], sides
    assert sides["bar"] == ["0px", "3px"] and sides["copyAtRight"], sides
    english = answered(new_page, stack, LISTED["en"], "How do retries back off?", viewport=phone)
    sides = in_shadow(english, SIDES)
    assert sides["items"] == [[False, True, 22], [False, True, 22], [False, True, 44]], sides
    assert sides["bar"] == ["3px", "0px"] and sides["copyAtRight"], sides


def test_a_focused_chip_keeps_its_preview_when_focus_scrolls_it_into_view(
    new_page: Any, stack: Stack
) -> None:
    """Focusing a chip below the log's fold scrolled the log, and the scroll hid the preview
    the focus had just shown: a keyboard user never saw it."""
    template = "\n\n".join(
        ["Rotation keeps the old secret {{Authentication and tokens > Rotating tokens}}."] * 12
    )
    page = answered(
        new_page,
        stack,
        template,
        "How do I rotate a token?",
        viewport={"width": 1280, "height": 560},
    )
    chips = page.locator("a.kbq-cite")
    in_shadow(page, "root.querySelector('.kbq-log').scrollTop = 0;")
    chips.last.focus()
    page.wait_for_timeout(300)
    sync_api.expect(page.locator(".kbq-tip")).to_be_visible()


def test_a_short_window_keeps_the_footers_words(new_page: Any, stack: Stack) -> None:
    """At 400% zoom the footer (the answers can be wrong, the shortcut) was hidden and said
    nowhere else."""
    page = new_page(viewport={"width": 320, "height": 256})
    open_page(page, stack.site + "/")
    page.keyboard.press("Control+k")
    copy = page.locator(".kbq-empty .kbq-foot-copy")
    sync_api.expect(copy).to_be_visible()
    assert "can be wrong" in copy.inner_text()
    tall = new_page(viewport={"width": 1280, "height": 800})
    open_page(tall, stack.site + "/")
    tall.keyboard.press("Control+k")
    sync_api.expect(tall.locator(".kbq-foot")).to_be_visible()
    sync_api.expect(tall.locator(".kbq-empty .kbq-foot-copy")).to_be_hidden()


def chip_descriptions(page: Any) -> dict[str, str]:
    """Each citation chip's accessible description, by its name ("Source 1: Retries and
    backoff › Default retry policy"), as Chromium's accessibility tree has it."""
    cdp = page.context.new_cdp_session(page)
    try:
        nodes = cdp.send("Accessibility.getFullAXTree")["nodes"]
    finally:
        cdp.detach()
    return {
        node["name"]["value"]: node.get("description", {}).get("value", "")
        for node in nodes
        if node.get("role", {}).get("value") == "link"
        and node.get("name", {}).get("value", "").startswith("Source ")
    }


def test_a_chip_is_described_by_its_own_passage_only(new_page: Any, stack: Stack) -> None:
    """Every chip named the one shared tooltip as its description, and the tooltip kept its
    text when hidden: after one preview had shown, a screen reader read that passage as the
    description of every chip of the conversation."""
    template = (
        "Five attempts {{Retries and backoff > Default retry policy}}.\n\n"
        "Capped {{How the backoff delay is computed}}."
    )
    page = answered(new_page, stack, template, "How do retries back off?")
    first, second = (
        "Source 1: Retries and backoff › Default retry policy",
        "Source 2: Retries and backoff › Default retry policy › How the backoff delay is computed",
    )
    assert chip_descriptions(page) == {first: "", second: ""}
    tip = page.locator(".kbq-tip")
    page.locator("a.kbq-cite").first.hover()
    sync_api.expect(tip).to_contain_text("attempted five times")
    described = chip_descriptions(page)
    assert "attempted five times" in described[first] and described[second] == "", described
    page.mouse.move(2, 2)
    sync_api.expect(tip).to_be_hidden()
    assert chip_descriptions(page) == {first: "", second: ""}
    page.locator("a.kbq-cite").nth(1).focus()
    sync_api.expect(tip).to_contain_text("How the backoff delay is computed")
    described = chip_descriptions(page)
    assert "attempted five times" not in described[second] and described[first] == "", described
    assert "How the backoff delay is computed" in described[second], described
