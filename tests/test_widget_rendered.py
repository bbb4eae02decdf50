"""A citation of text the site's machinery made opens and highlights it in a real browser.

The site (Material, the ``kb-qa`` plugin) has a hook that writes a heading from a comment and
a page that pulls a section in with ``pymdownx.snippets``: neither text is in the page's
Markdown file, so kb-qa indexes those pages from their rendered HTML. The index is served
by a real uvicorn (no model: extractive answers), the built site by a static file server,
and headless Chromium asks, clicks the citation and must see the passage marked.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
import yaml
from browser import sync_playwright_or_skip
from test_render import HOOK  # tests/ is on sys.path under pytest
from uvicorn_thread import UvicornThread
from widget_stack import (
    MARK_IN_VIEW,
    MARKS_TEXT,
    ask,
    loopback_context,
    open_page,
    serve_folder,
    settle,
    shot,
)

from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.serve.app import create_app

sync_api = sync_playwright_or_skip()

PAGES = {
    "docs/index.md": "# Home\n\nWelcome to the marsupial handbook.\n",
    "docs/settings.md": (
        "# Settings\n\nEvery setting of the handbook.\n\n"
        "## <!-- md:setting config.pouch_size -->\n\n"
        "The pouch size is measured in wombat units and defaults to seven.\n"
    ),
    "docs/care.md": '# Care\n\nHow to care for them.\n\n--8<-- "feeding.md"\n',
    "includes/feeding.md": (
        "## Feeding schedule\n\n"
        "Feed the quokka twice a day, at dawn and at dusk, with fresh leaves.\n"
    ),
    "hooks/shortcodes.py": HOOK,  # `<!-- md:setting a.b -->` -> `b` { #a.b }
}


@pytest.fixture(scope="module")
def rendered_site(
    tmp_path_factory: pytest.TempPathFactory, cli_env: Callable[..., dict[str, str]]
) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("rendered-widget")
    vault = tmp / "vault"
    for name, text in PAGES.items():
        (vault / name).parent.mkdir(parents=True, exist_ok=True)
        (vault / name).write_text(text, encoding="utf-8")
    site_dir = tmp / "site"
    site_dir.mkdir()
    origin, files = serve_folder(site_dir)
    config: dict[str, Any] = {
        "site_name": "Marsupials",
        "site_url": origin + "/",
        "theme": {"name": "material"},
        "hooks": ["hooks/shortcodes.py"],
        "markdown_extensions": [
            "attr_list",
            {"toc": {"permalink": True}},
            {"pymdownx.snippets": {"base_path": ["includes"]}},
        ],
        "plugins": ["search", {"kb-qa": {}}],
    }
    (vault / "mkdocs.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    kb = KnowledgeBase(
        vault, embed_model="hash", index_dir=tmp / "index", rate_limit=0, cors_origins=(origin,)
    )
    report = kb.index()
    assert report.warnings == [] and "rendering" in report.phases
    api = UvicornThread(create_app(kb))
    try:
        with api:
            config["plugins"][1]["kb-qa"]["endpoint"] = api.url
            (vault / "mkdocs.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
            subprocess.run(
                [sys.executable, "-m", "mkdocs", "build", "--quiet", "-d", str(site_dir)],
                cwd=vault,
                env=cli_env(),
                check=True,
                timeout=300,
            )
            yield origin
    finally:
        kb.close()
        files.shutdown()
        files.server_close()


@pytest.fixture
def page(browser: Any, rendered_site: str) -> Iterator[Any]:
    """A page in the session's Chromium (``widget_stack.browser``); nothing leaves loopback."""
    context = loopback_context(browser)
    yield context.new_page()
    context.close()


@pytest.mark.parametrize(
    ("question", "url", "words"),
    [
        ("When should I feed the quokka?", "/care/", "twice a day"),
        ("What unit is the pouch size measured in?", "/settings/", "wombat units"),
    ],
)
def test_citation_of_rendered_text_opens_and_highlights_it(
    page: Any, rendered_site: str, question: str, url: str, words: str
) -> None:
    open_page(page, rendered_site + "/")
    page.keyboard.press("Control+k")
    ask(page, question)
    chip = page.locator("a.kbq-cite").first
    href = chip.get_attribute("href") or ""
    assert url in href and ("#feeding-schedule" in href or "#config.pouch_size" in href), href
    chip.click()
    page.wait_for_url(re.compile(re.escape(url) + r"\?kbqa-hl="))
    page.wait_for_function(MARK_IN_VIEW)
    settle(page)
    assert words in page.evaluate(MARKS_TEXT)
    shot(page, "rendered-" + url.strip("/"))


def test_the_built_pages_have_the_ids_the_citations_use(rendered_site: str) -> None:
    care = httpx.get(f"{rendered_site}/care/").text
    settings = httpx.get(f"{rendered_site}/settings/").text
    assert 'id="feeding-schedule"' in care and 'id="config.pouch_size"' in settings
