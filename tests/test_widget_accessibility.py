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
from widget_stack import AXE, AXE_LOG, Stack, ask, axe_findings, open_page, shot

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
