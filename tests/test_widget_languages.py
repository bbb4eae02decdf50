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
from widget_stack import ask, loopback_context, open_page, shot, site_with_api


def test_a_french_reader_is_cited_the_french_page(
    tmp_path: Path,
    make_vault: Callable[..., Path],
    browser: Any,
    cli_env: Callable[..., dict[str, str]],
) -> None:
    """A question built around a setting's name, the same in both languages, cited the
    English page to a reader of the French site. The widget now sends its page's
    ``<html lang>``, and the answer quotes and cites the French page; on an English page
    the English one."""
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
            cited = {}
            for at in ("fr/", ""):
                page = context.new_page()
                open_page(page, f"{origin}/{at}")
                page.keyboard.press("Control+k")
                ask(page, "retry.max_attempts")
                answer = page.locator(".kbq-answer").last.inner_text()
                href = page.locator("a.kbq-cite").first.get_attribute("href") or ""
                cited[at or "en"] = (answer, href)
                if at:
                    shot(page, "french-reader")
        finally:
            context.close()
    french, english = cited["fr/"], cited["en"]
    assert "Chaque tâche est tentée cinq fois" in french[0], french
    assert "/fr/guides/retries/" in french[1], french
    assert "Every job is attempted five times" in english[0], english
    assert "/guides/retries/" in english[1] and "/fr/" not in english[1], english
