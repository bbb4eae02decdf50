"""How the browser tests start Debian's Chromium (Playwright cannot download browsers here)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

CHROMIUM = Path("/usr/bin/chromium")
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
            "Debian's chromium is not installed (apt-get install chromium); Playwright cannot "
            "download browsers here",
            allow_module_level=True,
        )
    return pytest.importorskip("playwright.sync_api", reason="the playwright package is missing")
