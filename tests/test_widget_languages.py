"""The widget on a site translated with mkdocs-static-i18n: a reader is cited the page in
their own language. A real ``mkdocs build`` with the plugin, real uvicorn and Chroma (hash
embedder), headless Chromium.

(A browser test module's name sorts after test_mcp*: Playwright's session keeps an event
loop running in the main thread, where the MCP tests call asyncio.run.)"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_translated_sites import SUFFIX_SITE
from widget_stack import AXE, ask, axe_findings, loopback_context, open_page, shot, site_with_api

# What a French reader's widget says (widget/src/lang/fr.js), and its answer without a model
# (kb_qa/answer/wording.py).
FRENCH_UI = {
    "launcher": "Interroger la doc",
    "title": "Interroger la doc",
    "placeholder": "Posez une question sur cette documentation…",
    "send": "Envoyer la question",
    "close": "Fermer",
    "copy": "Copier la réponse",
    "sources": "Sources",
    "thumbs": ["Utile", "Pas utile"],
}
FRENCH_LABEL = "Aucun modèle de langage n’est configuré ; voici ce que disent vos sources :"
ENGLISH_UI = {
    "launcher": "Ask the docs",
    "title": "Ask the docs",
    "placeholder": "Ask a question about these docs…",
    "send": "Send question",
    "close": "Close",
    "copy": "Copy answer",
    "sources": "Sources",
    "thumbs": ["Helpful", "Not helpful"],
}


def test_a_french_reader_is_cited_the_french_page(
    tmp_path: Path,
    make_vault: Callable[..., Path],
    browser: Any,
    cli_env: Callable[..., dict[str, str]],
) -> None:
    """A question built around a setting's name, the same in both languages, cited the
    English page to a reader of the French site. The widget now sends its page's
    ``<html lang>``, and the answer quotes and cites the French page; on an English page
    the English one. The widget's own words were English on both (the title, buttons,
    screen-reader names) and so was the sentence an answer without a model opens with: on
    the French page, both are French now, and axe finds nothing serious there."""
    pytest.importorskip("mkdocs_static_i18n")
    vault = make_vault(dict(SUFFIX_SITE))
    settings: dict[str, Any] = {"embed_model": "hash", "index_dir": tmp_path / "idx"}
    with site_with_api(vault, tmp_path / "site", cli_env(), rate_limit=0, **settings) as (
        origin,
        _api,
        _kb,
    ):
        context = loopback_context(browser)
        try:
            cited, shown, findings = {}, {}, []
            for at in ("fr/", ""):
                page = context.new_page()
                open_page(page, f"{origin}/{at}")
                launcher = page.locator(".kbq-launcher-label").inner_text()
                page.keyboard.press("Control+k")
                ask(page, "retry.max_attempts")
                answer = page.locator(".kbq-answer").last.inner_text()
                href = page.locator("a.kbq-cite").first.get_attribute("href") or ""
                cited[at or "en"] = (answer, href)
                shown[at or "en"] = {"launcher": launcher, **_interface(page)}
                if at:
                    shot(page, "french-reader")
                    if AXE.exists():
                        findings += axe_findings(page, "French page, answer")
        finally:
            context.close()
    french, english = cited["fr/"], cited["en"]
    assert "Chaque tâche est tentée cinq fois" in french[0], french
    assert "/fr/guides/retries/" in french[1], french
    assert "Every job is attempted five times" in english[0], english
    assert "/guides/retries/" in english[1] and "/fr/" not in english[1], english
    # The French page's widget speaks French, and so does its answer without a model; the
    # English page's, English.
    assert shown["fr/"] == FRENCH_UI, shown["fr/"]
    assert french[0].replace("\u00a0", " ").startswith(FRENCH_LABEL + "\n"), french[0]
    assert shown["en"] == ENGLISH_UI, shown["en"]
    assert english[0].startswith("No language model is configured; this is what your sources say:")
    assert findings == []


def _interface(page: Any) -> dict[str, Any]:
    """What the open widget's interface says: its title, question box, buttons and the
    screen-reader names of its sources and thumbs."""
    return page.evaluate(
        """() => {
          const root = document.getElementById("kb-qa").shadowRoot;
          const label = (s) => root.querySelector(s).getAttribute("aria-label");
          return {
            title: root.querySelector(".kbq-title").textContent,
            placeholder: root.querySelector(".kbq-input").placeholder,
            send: label(".kbq-send"),
            close: label(".kbq-head .kbq-icon:last-child"),
            copy: label(".kbq-actions .kbq-icon"),
            sources: label(".kbq-sources"),
            thumbs: [...root.querySelectorAll(".kbq-rate")].map((b) => b.ariaLabel),
          };
        }"""
    )
