"""A cited passage in content tabs, on a Material site ``mkdocs build`` made, in Chromium.

A passage that spans two tabs of a set (uv's Storage › Cache directory quotes the
"macOS and Linux" tab and the "Windows" one) showed only the last: the widget selected the tab
of each mark in turn, so the tab holding the passage's end won and its start stayed hidden;
with Material's ``content.tabs.link`` every tab set with the same labels flipped with it. The
tab where the passage begins is selected; a passage in one tab selects that tab, and one in a
collapsed ``???`` block opens it. Each case opens the link a citation would,
``?kbqa-hl=<fingerprint>#anchor``.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import yaml
from browser import sync_playwright_or_skip
from widget_stack import (
    MARKS,
    loopback_context,
    mkdocs_build,
    open_page,
    served_folder,
    shot,
)

sync_playwright_or_skip()

WIDGET = Path(__file__).resolve().parents[1] / "widget"

FIRST = "The cache lives in `$XDG_CACHE_HOME/uv` on macOS and Linux, or in `~/.cache/uv`."
SECOND = "The cache lives in `%LOCALAPPDATA%\\uv\\cache` on Windows, for every user account."
HIDDEN = "Clearing the cache removes every wheel uv built and every archive it downloaded."
TABS = f'=== "macOS and Linux"\n\n    {FIRST}\n\n=== "Windows"\n\n    {SECOND}\n'

PAGE = f"""# Storage

## Cache directory

uv keeps a cache of the packages it downloads. Its default location is:

{TABS}
## Clearing

??? note "What is removed"

    {HIDDEN}

## Configuration files

The same labels again, linked to the tabs above by Material:

=== "macOS and Linux"

    Configuration is read from `~/.config/uv/uv.toml`.

=== "Windows"

    Configuration is read from `%APPDATA%\\uv\\uv.toml`.
"""

# (anchor, the quoted Markdown, the tab label that must be selected: None for the ??? block)
CASES = [
    ("cache-directory", TABS, "macOS and Linux"),
    ("cache-directory", f"Its default location is:\n\n{TABS}", "macOS and Linux"),
    ("cache-directory", SECOND, "Windows"),
    ("clearing", HIDDEN, None),
]

# The selected label of each tab set on the page, in page order.
SELECTED = """() => [...document.querySelectorAll('.tabbed-set')].map((set) => {
  const shown = [...set.querySelectorAll(':scope > input')].findIndex((i) => i.checked);
  return set.querySelectorAll(':scope > .tabbed-labels > label')[shown].textContent.trim();
})"""

# The passage's first mark, and its first mark in a tab: [text, shown with a size on screen].
SHOWN = f"""() => {{
  const marks = {MARKS};
  return [marks[0], marks.find((m) => m.closest('.tabbed-block'))].map((m) => {{
    if (!m) return null;
    const r = m.getBoundingClientRect();
    return [m.textContent, r.width > 0 && r.height > 0];
  }});
}}"""


@pytest.fixture(scope="module")
def site(
    tmp_path_factory: pytest.TempPathFactory, cli_env: Callable[..., dict[str, str]]
) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("tabs-site")
    vault, site_dir = tmp / "vault", tmp / "site"
    (vault / "docs").mkdir(parents=True)
    (vault / "docs" / "index.md").write_text(PAGE, encoding="utf-8")
    config = {
        "site_name": "Storage",
        "theme": {"name": "material", "features": ["content.tabs.link"]},
        "markdown_extensions": [
            "admonition",
            "pymdownx.details",
            "pymdownx.superfences",
            {"pymdownx.tabbed": {"alternate_style": True}},
        ],
        "plugins": [{"kb-qa": {"endpoint": "http://127.0.0.1:9"}}],
    }
    (vault / "mkdocs.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    result = mkdocs_build(vault, site_dir, cli_env(), "--quiet")
    assert result.returncode == 0, result.stderr
    with served_folder(site_dir) as origin:
        yield origin


@pytest.mark.parametrize(
    ("anchor", "quoted", "label"),
    CASES,
    ids=["spans-both-tabs", "prose-then-both-tabs", "second-tab", "collapsed-block"],
)
def test_the_passage_opens_where_it_begins(
    browser: Any,
    site: str,
    anchor: str,
    quoted: str,
    label: str | None,
    request: pytest.FixtureRequest,
) -> None:
    context = loopback_context(browser)  # a fresh one: Material keeps linked tabs in storage
    try:
        page = context.new_page()
        open_page(page, site + "/")
        assert page.evaluate(SELECTED) == ["macOS and Linux", "macOS and Linux"]
        link = page.evaluate("(md) => KbQa._test.fingerprint(md)", quoted)
        open_page(page, f"{site}/?kbqa-hl={quote(link)}#{anchor}")
        page.wait_for_function(f"{MARKS}.length > 0")
        shot(page, "tabs-" + request.node.callspec.id)
        first, first_in_tab = page.evaluate(SHOWN)
        assert first[1], f"the passage's start {first[0]!r} is hidden"
        if label is None:
            assert page.evaluate(f"{MARKS}.every((m) => m.closest('details').open)")
            return
        # The tab the passage begins in is selected, and the linked set follows that tab only.
        assert page.evaluate(SELECTED) == [label, label]
        assert first_in_tab[1], f"the passage's first words in a tab {first_in_tab[0]!r} are hidden"
    finally:
        context.close()


# Docusaurus' tabs: a list of role=tab items and, in order, role=tabpanel panels, all but the
# selected one hidden; its own script shows the panel of a clicked tab.
DOCUSAURUS = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Install</title>
</head><body><main><article><h2 id="install">Install</h2><p>Install Prettier locally:</p>
<div class="tabs-container"><ul role="tablist"><li role="tab" aria-selected="true">npm</li>
<li role="tab">Yarn</li></ul><div class="margin-top--md">
<div role="tabpanel"><pre><code>npm install --save-dev --save-exact prettier</code></pre></div>
<div role="tabpanel" hidden><pre><code>yarn add --dev --exact prettier</code></pre></div>
</div></div></article></main>
<script>document.querySelectorAll("[role=tab]").forEach((tab, i) => tab.addEventListener("click",
() => document.querySelectorAll("[role=tabpanel]").forEach((p, j) => { p.hidden = i !== j; })));
</script><script src="/kb-qa/kb-qa.js" defer data-endpoint="http://127.0.0.1:9"></script>
</body></html>"""


def test_a_passage_in_a_hidden_docusaurus_tab_selects_that_tab(
    browser: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # The widget marked the hidden Yarn panel's text: the page showed no highlight at all.
    folder = tmp_path_factory.mktemp("docusaurus-tabs")
    (folder / "kb-qa").mkdir()
    for name in ("kb-qa.js", "kb-qa.css"):
        shutil.copy(WIDGET / name, folder / "kb-qa" / name)
    (folder / "index.html").write_text(DOCUSAURUS, encoding="utf-8")
    with served_folder(folder) as origin:
        context = loopback_context(browser)
        try:
            page = context.new_page()
            open_page(page, origin + "/")
            link = page.evaluate(
                "(md) => KbQa._test.fingerprint(md)", "yarn add --dev --exact prettier"
            )
            open_page(page, f"{origin}/?kbqa-hl={quote(link)}#install")
            page.wait_for_function(f"{MARKS}.length > 0")
            shot(page, "tabs-docusaurus")
            shown = page.evaluate(f"{MARKS}.map((m) => m.getBoundingClientRect().height > 0)")
            assert shown and all(shown), "the passage is marked in a hidden panel"
            assert page.evaluate("document.querySelectorAll('[role=tabpanel]')[0].hidden")
        finally:
            context.close()
