"""How the browser tests start Debian's Chromium (Playwright cannot download browsers here)."""

from __future__ import annotations

from pathlib import Path

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
