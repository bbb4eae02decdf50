"""How the browser tests start Chromium: Debian's (Playwright cannot download browsers
here), or the one ``KBQA_CHROMIUM`` names (e.g. one ``playwright install chromium`` put in
its cache, or a distribution's ``chromium-browser``).
"""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType

import pytest

CHROMIUM = Path(os.environ.get("KBQA_CHROMIUM") or "/usr/bin/chromium")
# Root needs --no-sandbox; the rest keep Chromium's background connections, which fail
# noisily on this closed network, from starting at all.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def sync_playwright_or_skip() -> ModuleType:
    """``playwright.sync_api``; skips the calling test module when Debian's Chromium or the
    playwright package is missing."""
    if not CHROMIUM.exists():
        pytest.skip(
            f"no Chromium at {CHROMIUM}: install Debian's (apt-get install chromium) or set "
            "KBQA_CHROMIUM to another Chromium's executable; every browser test is skipped",
            allow_module_level=True,
        )
    return pytest.importorskip("playwright.sync_api", reason="the playwright package is missing")
