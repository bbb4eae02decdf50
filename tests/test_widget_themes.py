"""The page side of the widget (the highlight, room for the docked panel) on MkDocs' built-in
readthedocs theme, which lays its page out otherwise than Material."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from browser import sync_playwright_or_skip
from widget_stack import loopback_context, mkdocs_build, serve_folder

sync_playwright_or_skip()

DOCK = 400
SITE = {
    "mkdocs.yml": "site_name: RTD\ntheme: readthedocs\nplugins:\n  - kb-qa\n",
    "docs/index.md": "# Home\n\n" + "The retry policy waits longer each time. " * 40 + "\n",
}


def test_the_docked_panel_makes_room_and_the_highlight_keeps_the_text_style(
    tmp_path: Path,
    browser: Any,
    write_files: Callable[..., Path],
    cli_env: Callable[..., dict[str, str]],
) -> None:
    """The theme positions its page absolutely, so the room made for the docked panel moved
    nothing and the passage ran on under the panel; its own mark style made the highlighted
    passage bold italic."""
    vault = write_files(tmp_path / "rtd", SITE)
    result = mkdocs_build(vault, vault / "site", cli_env(), "--quiet")
    assert result.returncode == 0, result.stderr
    origin, files = serve_folder(vault / "site")
    context = loopback_context(browser)
    try:
        page = context.new_page()
        page.goto(origin + "/")
        # The widget clears highlights a page's URL does not name 30 ms after it starts: a
        # mark put in before that went (a flake, 1 run in 4 on a busy machine).
        page.wait_for_selector("#kb-qa", state="attached")
        page.wait_for_timeout(300)
        page.evaluate(
            """(width) => {
              const root = document.documentElement;
              root.style.setProperty("--kb-qa-dock-width", width + "px");
              root.setAttribute("data-kb-qa-docked", "");
              const mark = document.createElement("mark");
              mark.className = "kb-qa-highlight";
              mark.textContent = "waits longer";
              document.querySelector(".rst-content p").appendChild(mark);
            }""",
            DOCK,
        )
        right = page.evaluate(
            "document.querySelector('.rst-content').getBoundingClientRect().right"
        )
        assert right <= 1280 - DOCK + 1
        style = page.evaluate(
            "(() => { const s = getComputedStyle(document.querySelector('mark.kb-qa-highlight'));"
            " return [s.fontStyle, s.fontWeight]; })()"
        )
        body = page.evaluate(
            "getComputedStyle(document.querySelector('.rst-content p')).fontWeight"
        )
        assert style == ["normal", body]
    finally:
        context.close()
        files.shutdown()
