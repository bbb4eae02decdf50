"""The widget checked by axe-core in Chromium, in Material's light and dark palettes.

axe (widget/node_modules/axe-core, installed by ``npm ci`` in widget/) runs on the launcher,
the open panel, an answer with citations and the feedback form; every serious or critical
finding fails the test. The contrast test failed on kb-qa 0.1.0, whose ``.kbq button``
rule out-weighed the launcher's and send buttons' own colours.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from browser import sync_playwright_or_skip
from llm_server import Reply
from widget_stack import (
    AXE,
    AXE_LOG,
    MARK_IN_VIEW,
    MARKS,
    Stack,
    answered,
    ask,
    asked_for_a_command,
    axe_findings,
    open_page,
    settle,
    shot,
)

sync_api = sync_playwright_or_skip()

AA_TEXT = 4.5  # WCAG 2 AA, normal text
AA_GRAPHICS = 3.0  # WCAG 2 AA, icons and other non-text contrast


def relative_luminance(css_color: str) -> float:
    def channel(v: float) -> float:
        c = v / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(float(v)) for v in re.findall(r"[\d.]+", css_color)[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    high, low = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def colours(locator: Any) -> tuple[str, str]:
    return locator.evaluate(
        "el => [getComputedStyle(el).color, getComputedStyle(el).backgroundColor]"
    )


def test_buttons_on_the_primary_colour_are_readable(new_page: Any, stack: Stack) -> None:
    stack.llm.template = "Retries back off {{Retries and backoff > Default retry policy}}."
    page = new_page(color_scheme="light")
    open_page(page, stack.site + "/")
    label = colours(page.locator(".kbq-launcher"))
    assert contrast(*label) >= AA_TEXT, label
    page.locator(".kbq-launcher").click()
    send = colours(page.locator(".kbq-send"))
    assert contrast(*send) >= AA_GRAPHICS, send
    ask(page, "How do retries back off?")
    page.locator(".kbq-rate[aria-label='Not helpful']").click()
    feedback_send = colours(page.locator(".kbq-reason button"))
    assert contrast(*feedback_send) >= AA_TEXT, feedback_send


@pytest.mark.skipif(not AXE.exists(), reason="axe-core is missing: run `npm ci` in widget/")
def test_axe_finds_nothing_serious_in_light_and_dark(new_page: Any, stack: Stack) -> None:
    stack.llm.template = (
        "Retries back off exponentially {{Retries and backoff > Default retry policy}}. "
        "Tokens rotate with a grace period {{Authentication and tokens > Rotating tokens}}.\n\n"
        "```bash\nlumen jobs retry 01HV7R0ZK3Q9M2W8E6T4Y1U5I7\n```\n"
    )
    AXE_LOG.clear()
    page = new_page(color_scheme="light")
    open_page(page, stack.site + "/")
    findings = axe_findings(page, "light, launcher")
    page.keyboard.press("Control+k")
    sync_api.expect(page.locator(".kbq-panel")).to_be_visible()
    findings += axe_findings(page, "light, open panel")
    ask(page, "How do retries back off, and how do tokens rotate?")
    page.locator("a.kbq-cite").first.hover()
    sync_api.expect(page.locator(".kbq-tip")).to_be_visible()
    findings += axe_findings(page, "light, answer with citations and tooltip")
    page.locator(".kbq-rate[aria-label='Not helpful']").click()
    findings += axe_findings(page, "light, feedback form")
    shot(page, "30-light-feedback")

    page.locator("label[for='__palette_1']").click()
    page.wait_for_function("document.body.dataset.mdColorScheme === 'slate'")
    page.mouse.move(0, 0)
    findings += axe_findings(page, "dark, answer and feedback form")
    shot(page, "31-dark-feedback")
    page.locator("a.kbq-cite").first.hover()
    findings += axe_findings(page, "dark, tooltip")
    page.locator(".kbq-panel button[aria-label='Close']").click()
    findings += axe_findings(page, "dark, launcher")
    page.keyboard.press("Control+k")
    page.locator(".kbq-panel button[aria-label='New conversation']").click()
    findings += axe_findings(page, "dark, open panel")
    shot(page, "32-dark-empty")

    print("\naxe-core findings (all impacts):")
    for where, found in AXE_LOG:
        print(f"  {where}: {found or 'none'}")
    assert findings == []


def test_phone_screenshots(new_page: Any, stack: Stack) -> None:
    """The panel on a phone, in Material's light and dark palettes, for a person to look at."""
    stack.llm.template = (
        "Workers lease jobs and send heartbeats {{Retries and backoff > What counts as a failure}}."
    )
    page = new_page(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    open_page(page, stack.site + "/")
    page.locator(".kbq-launcher").tap()
    ask(page, "When does an attempt count as failed?")
    shot(page, "33-phone-light")
    page.evaluate("document.body.setAttribute('data-md-color-scheme', 'slate')")
    page.wait_for_function("document.getElementById('kb-qa').dataset.scheme === 'dark'")
    shot(page, "34-phone-dark")


# Records, in the page, every change inside a live region of the widget (a region a screen
# reader reads out: aria-live other than "off", or role log, status or alert without it) as
# the region's text just after the change, and every role=alert element inserted.
LIVE_PROBE = """() => {
  const root = document.getElementById("kb-qa").shadowRoot;
  const live = (n) => {
    for (let e = n.nodeType === 1 ? n : n.parentElement; e; e = e.parentElement) {
      const a = e.getAttribute("aria-live");
      if (a) return a === "off" ? null : e;
      if (/^(log|status|alert)$/.test(e.getAttribute("role") || "")) return e;
    }
    return null;
  };
  const probe = (window.__live = { said: [], alerts: 0 });
  new MutationObserver((records) => {
    const regions = new Set();
    for (const r of records) {
      const region = live(r.target);
      if (region) regions.add(region);
      r.addedNodes.forEach((n) => {
        if (n.nodeType !== 1) return;
        if (n.matches("[role=alert]")) probe.alerts++;
        probe.alerts += n.querySelectorAll("[role=alert]").length;
      });
    }
    regions.forEach((region) => {
      const text = region.textContent.trim();
      if (text) probe.said.push(text);
    });
  }).observe(root, { subtree: true, childList: true, characterData: true });
}"""


def said(page: Any) -> list[str]:
    page.wait_for_timeout(300)  # the announcer speaks a moment after it was emptied
    return page.evaluate("window.__live.said")


def test_a_streaming_answer_is_announced_once(new_page: Any, stack: Stack) -> None:
    """Every frame of a streaming answer was inserted again into the log (a polite live
    region), with the status line and the sources list: a 260-character answer made 45
    announcements. Now the status is said once, then the finished answer once."""
    stack.llm.template = (
        "Failed jobs are retried with **exponential backoff** "
        "{{Retries and backoff > Default retry policy}}. Tokens rotate with a grace period "
        "{{Authentication and tokens > Rotating tokens}}."
    )
    stack.llm.script(Reply(chunk_size=4, chunk_delay=0.03))
    page = new_page()
    open_page(page, stack.site + "/")
    page.keyboard.press("Control+k")
    page.evaluate(LIVE_PROBE)
    ask(page, "How are failed jobs retried?")
    spoken = said(page)
    # A status line or two ("Searching your sources…", "Reading 189 excerpts…"), each once,
    # then the answer as text, once.
    assert 2 <= len(spoken) <= 3, spoken
    assert all(text.endswith("…") for text in spoken[:-1]), spoken
    assert spoken[-1] == (
        "Failed jobs are retried with exponential backoff. Tokens rotate with a grace period."
        " 2 sources."
    ), spoken
    log = page.locator(".kbq-log")
    assert log.get_attribute("role") == "log" and log.get_attribute("aria-live") == "off"
    assert page.locator(".kbq-log [role=status], .kbq-log [role=alert]").count() == 0


def test_an_error_is_announced_once_not_again_on_reopening(new_page: Any, stack: Stack) -> None:
    """The error was a role=alert paragraph in the log, rebuilt (and so announced again) each
    time the panel opened and on every page load."""
    page = new_page()
    open_page(page, stack.site + "/")
    page.route(stack.api + "/api/ask", lambda route: route.abort())
    page.keyboard.press("Control+k")
    page.evaluate(LIVE_PROBE)
    ask(page, "How do retries back off?")
    sync_api.expect(page.locator(".kbq-error")).to_contain_text("Could not reach")
    errors = [text for text in said(page) if "Could not reach" in text]
    assert len(errors) == 1, said(page)

    page.evaluate("window.__live.said = []")
    page.keyboard.press("Escape")
    page.keyboard.press("Control+k")
    sync_api.expect(page.locator(".kbq-error")).to_be_visible()
    assert said(page) == [] and page.evaluate("window.__live.alerts") == 0

    # A page load with the panel open (a citation followed, a reload) says nothing either.
    page.add_init_script(
        "document.addEventListener('DOMContentLoaded', () => {"
        " window.__inserted = 0; new MutationObserver((rs) => rs.forEach((r) =>"
        " r.addedNodes.forEach((n) => { if (n.nodeType === 1 && n.shadowRoot)"
        " new MutationObserver((qs) => qs.forEach((q) => q.addedNodes.forEach((m) => {"
        " if (m.nodeType === 1 && (m.matches('[role=alert]') ||"
        " m.querySelector('[role=alert]'))) window.__inserted++; })))"
        ".observe(n.shadowRoot, { subtree: true, childList: true }); })))"
        ".observe(document.body, { childList: true }); })"
    )
    page.reload()
    page.wait_for_function("window.KbQa && window.KbQa.mounted")
    sync_api.expect(page.locator(".kbq-error")).to_be_visible()
    assert page.evaluate("window.__inserted") == 0
    assert page.locator("[role=alert]").count() == 0
    assert page.locator(".kbq-sr").inner_text() == ""


ACTIVE_HOLDS_A_MARK = (
    "(() => { const a = document.activeElement;"
    " return !!a && a !== document.body && !!a.querySelector('mark.kb-qa-highlight'); })()"
)


def followed_citation(new_page: Any, stack: Stack, width: int) -> Any:
    """A page ``width`` px wide whose reader asked which failures are not retried and
    followed the answer's first citation with the keyboard."""
    template = "Status 78 is never retried {{Retries and backoff > What counts as a failure}}."
    question = "Which failures are not retried?"
    viewport = {"width": width, "height": 800}
    page = answered(new_page, stack, template, question, "/guides/retries/", viewport=viewport)
    page.locator("a.kbq-cite").first.focus()
    page.keyboard.press("Enter")
    return page


def test_a_citation_followed_on_a_narrow_window_takes_focus_to_the_passage(
    new_page: Any, stack: Stack
) -> None:
    """Too narrow to dock, the panel closes over the passage: focus fell to <body> and the next
    Tab started again at the top of the page."""
    page = followed_citation(new_page, stack, 800)
    page.wait_for_function(MARK_IN_VIEW)
    sync_api.expect(page.locator(".kbq-panel")).to_be_hidden()
    assert page.evaluate(ACTIVE_HOLDS_A_MARK), page.evaluate("document.activeElement.outerHTML")
    assert page.evaluate("document.activeElement.getAttribute('tabindex')") == "-1"
    settle(page)
    assert page.evaluate(MARK_IN_VIEW)  # focusing it did not scroll the passage away


def test_tab_leaves_a_docked_panel_for_the_page_beside_it(new_page: Any, stack: Stack) -> None:
    """Docked beside the page the panel is not modal (aria-modal=false), but it kept Tab in."""
    page = followed_citation(new_page, stack, 1100)
    page.wait_for_function("document.documentElement.hasAttribute('data-kb-qa-docked')")
    assert page.locator(".kbq-panel").get_attribute("aria-modal") == "false"
    for key in ("Tab", "Shift+Tab"):
        page.locator("a.kbq-cite").first.focus()
        for _ in range(40):
            page.keyboard.press(key)
            if page.evaluate("document.activeElement.id") != "kb-qa":
                break
        assert page.evaluate("document.activeElement.id") != "kb-qa", key
    # Still a dialog that keeps focus while it floats over the page.
    page.keyboard.press("Escape")
    page.keyboard.press("Control+k")
    assert page.locator(".kbq-panel").get_attribute("aria-modal") == "true"


# A CSS colour (any syntax, alpha included) painted over the ones before it: "rgb(r, g, b)".
PAINT = """(colours) => {
  const canvas = document.createElement("canvas");
  canvas.width = canvas.height = 1;
  const g = canvas.getContext("2d");
  for (const colour of ["#fff", ...colours]) {
    g.fillStyle = colour;
    g.fillRect(0, 0, 1, 1);
  }
  const [r, gg, b] = g.getImageData(0, 0, 1, 1).data;
  return `rgb(${r}, ${gg}, ${b})`;
}"""


def painted_contrast(page: Any, under: list[str], colour: str) -> float:
    """Contrast of ``colour`` painted over the colours ``under`` with what is under it."""
    return contrast(page.evaluate(PAINT, [*under, colour]), page.evaluate(PAINT, under))


def style(locator: Any, prop: str) -> str:
    return locator.evaluate(f"el => getComputedStyle(el).{prop}")


def test_focus_rings_chips_and_inputs_stand_out(new_page: Any, stack: Stack) -> None:
    """The focus ring was the site's accent (Material's amber: 1.9:1 on the panel), chips in
    the slate palette 4.2:1, and the feedback reason box's border 1.2:1."""
    template = "Retries back off {{Retries and backoff > Default retry policy}}."
    page = answered(new_page, stack, template, "How do retries back off?", color_scheme="light")
    panel_bg = style(page.locator(".kbq-panel"), "backgroundColor")
    head_bg = style(page.locator(".kbq-head"), "backgroundColor")
    for selector, under in (
        (".kbq-actions button[aria-label='Copy answer']", [panel_bg]),
        (".kbq-source", [panel_bg]),
        (".kbq-head button[aria-label='Close']", [head_bg]),
    ):
        target = page.locator(selector).first
        target.focus()
        assert target.evaluate("el => el.matches(':focus-visible')"), selector
        ring = painted_contrast(page, under, style(target, "outlineColor"))
        assert ring >= AA_GRAPHICS, (selector, ring)

    page.locator(".kbq-rate[aria-label='Not helpful']").click()
    border = style(page.locator(".kbq-reason input"), "borderTopColor")
    assert painted_contrast(page, [panel_bg], border) >= AA_GRAPHICS, border

    page.locator("label[for='__palette_1']").click()
    page.wait_for_function("document.body.dataset.mdColorScheme === 'slate'")
    page.mouse.move(0, 0)
    page.locator(".kbq-input").focus()  # not a chip: a focused chip takes the primary colour
    panel_bg = style(page.locator(".kbq-panel"), "backgroundColor")
    for selector in (".kbq-cite", ".kbq-source-n"):
        chip = page.locator(selector).first
        text = painted_contrast(
            page, [panel_bg, style(chip, "backgroundColor")], style(chip, "color")
        )
        assert text >= AA_TEXT, (selector, text)


def test_copying_is_announced(new_page: Any, stack: Stack) -> None:
    """Only the button's label changed to "Copied": most screen readers said nothing."""
    page = asked_for_a_command(new_page, stack)
    announcer = page.locator(".kbq-sr")
    assert announcer.get_attribute("role") == "status"
    page.locator(".kbq-copy-code").click()
    sync_api.expect(announcer).to_have_text("Code copied")
    page.locator(".kbq-actions button[aria-label='Copy answer']").click()
    sync_api.expect(announcer).to_have_text("Answer copied")


def test_the_pointer_may_move_onto_a_tooltip(new_page: Any, stack: Stack) -> None:
    """The passage preview let pointer events through and hid 150 ms after the pointer left
    the chip, so it could not be kept open to read or magnify (WCAG 1.4.13, hoverable)."""
    template = "Retries back off {{Retries and backoff > Default retry policy}}."
    page = answered(new_page, stack, template, "How do retries back off?")
    page.locator("a.kbq-cite").first.hover()
    tip = page.locator(".kbq-tip")
    sync_api.expect(tip).to_be_visible()
    box = tip.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2, steps=4)
    page.wait_for_timeout(500)
    sync_api.expect(tip).to_be_visible()
    page.mouse.move(2, 2)
    sync_api.expect(tip).to_be_hidden()


def test_a_chip_under_another_chips_tooltip_can_be_reached(new_page: Any, stack: Stack) -> None:
    """A chip's tooltip, placed below it near the top of the chat, lay over the next line's
    chip and stayed open while the pointer crossed it: the click landed on the tooltip."""
    template = (
        "Five attempts {{Retries and backoff > Default retry policy}}.\n\n"
        "Capped {{How the backoff delay is computed}}."
    )
    page = answered(new_page, stack, template, "How do retries back off?")
    first, second = page.locator("a.kbq-cite").first, page.locator("a.kbq-cite").nth(1)
    first.hover()
    tip = page.locator(".kbq-tip")
    sync_api.expect(tip).to_be_visible()
    box, target = tip.bounding_box(), second.bounding_box()
    assert box is not None and target is not None
    x, y = target["x"] + target["width"] / 2, target["y"] + target["height"] / 2
    covered = box["x"] <= x <= box["x"] + box["width"] and box["y"] <= y <= box["y"] + box["height"]
    assert covered, (box, target)  # the case this test is about: the second chip under the tip
    page.mouse.move(x, y, steps=4)
    sync_api.expect(tip).to_contain_text("How the backoff delay is computed")
    page.wait_for_timeout(500)  # and it stays while the pointer rests on its chip
    sync_api.expect(tip).to_be_visible()
    box = tip.bounding_box()
    assert box is not None and not box["y"] <= y <= box["y"] + box["height"]
    page.mouse.click(x, y)
    page.wait_for_function(f"{MARKS}.length > 0")


@pytest.mark.parametrize(("width", "height"), [(320, 256), (1280, 300)])
def test_a_short_window_leaves_the_conversation_room(
    new_page: Any, stack: Stack, width: int, height: int
) -> None:
    """At 400% zoom (320×256 CSS px) the header, question box and footer left the log about
    one and a half lines (76 px)."""
    page = new_page(viewport={"width": width, "height": height})
    open_page(page, stack.site + "/guides/retries/")
    page.keyboard.press("Control+k")
    sync_api.expect(page.locator(".kbq-panel")).to_be_visible()
    log = page.locator(".kbq-log").bounding_box()
    assert log is not None and log["height"] >= 0.45 * height, log
    assert page.locator(".kbq-foot").is_hidden()


# Each highlighted piece of the passage (a mark wraps one text node: in a paragraph, a link or
# inline code) as [where, contrast of its text with what is painted under it].
MARK_CONTRASTS = """() => {
  const g = document.createElement("canvas").getContext("2d", { willReadFrequently: true });
  const paint = (colours) => {
    for (const colour of ["#fff", ...colours]) { g.fillStyle = colour; g.fillRect(0, 0, 1, 1); }
    return [...g.getImageData(0, 0, 1, 1).data].slice(0, 3);
  };
  const lum = (rgb) => rgb.reduce((sum, v, i) => {
    v /= 255;
    const linear = v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    return sum + [0.2126, 0.7152, 0.0722][i] * linear;
  }, 0);
  return [...document.querySelectorAll("mark.kb-qa-highlight")].map((m) => {
    const under = [];
    for (let e = m; e; e = e.parentElement) under.unshift(getComputedStyle(e).backgroundColor);
    const [a, b] = [lum(paint(under)), lum(paint([...under, getComputedStyle(m).color]))];
    const where = m.closest("code") ? "code" : m.closest("a") ? "link" : "text";
    return [where, (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)];
  });
}"""


def settled_mark_contrasts(page: Any) -> list[tuple[str, float]]:
    """MARK_CONTRASTS once Material's colour transitions have ended (two readings alike)."""
    last: Any = None
    for _ in range(40):
        now = page.evaluate(MARK_CONTRASTS)
        if now == last:
            return [(where, ratio) for where, ratio in now]
        last = now
        page.wait_for_timeout(150)
    raise AssertionError(f"the highlight's colours never settled: {last}")


def test_the_highlighted_passage_is_readable_in_both_palettes(new_page: Any, stack: Stack) -> None:
    """In Material's slate palette the highlight's tint left the passage's text at 4.2:1, its
    inline code at 3.5:1 and its links at 2.0:1; a reader who asks for more contrast keeps the
    tint for good. Checked with more contrast asked for: the tint before and after it would
    have faded."""
    template = (
        "Producers enqueue jobs over the HTTP API, with the lumen enqueue command, or with one "
        "of the client libraries {{What Lumen does}}."
    )
    page = answered(new_page, stack, template, "How do producers enqueue jobs?", contrast="more")
    page.locator("a.kbq-cite").first.click()
    page.wait_for_function(f"{MARKS}.length > 0")
    light = settled_mark_contrasts(page)
    page.locator("label[for='__palette_1']").click()
    page.wait_for_function("document.body.dataset.mdColorScheme === 'slate'")
    dark = settled_mark_contrasts(page)
    assert {where for where, _ in dark} == {"text", "link", "code"}, dark
    page.wait_for_function(f"{MARKS}.every(m => m.classList.contains('kb-qa-highlight--faded'))")
    faded = settled_mark_contrasts(page)
    low = [(where, round(ratio, 2)) for where, ratio in light + dark + faded if ratio < AA_TEXT]
    assert low == [], low


def test_the_question_box_shows_focus_in_both_palettes(new_page: Any, stack: Stack) -> None:
    """The question box showed focus only by its border taking the primary colour: in the
    slate palette indigo on the panel is 2.4:1, fainter than the grey border it has unfocused
    (4.9:1). It now gets the 2 px ring of the panel's other controls."""
    page = new_page(color_scheme="light")
    open_page(page, stack.site + "/")
    page.keyboard.press("Control+k")
    for scheme, host in (("default", "light"), ("slate", "dark")):
        page.evaluate(f"document.body.setAttribute('data-md-color-scheme', '{scheme}')")
        page.wait_for_function(f"document.getElementById('kb-qa').dataset.scheme === '{host}'")
        page.locator(".kbq-input").focus()
        form = page.locator(".kbq-form")
        ring = form.evaluate(
            "f => { const s = getComputedStyle(f);"
            " return [s.outlineStyle, parseFloat(s.outlineWidth), s.outlineColor]; }"
        )
        panel_bg = style(page.locator(".kbq-panel"), "backgroundColor")
        assert ring[:2] == ["solid", 2], (scheme, ring)
        assert painted_contrast(page, [panel_bg], ring[2]) >= AA_GRAPHICS, (scheme, ring)
