"""The drop-in script on a static site MkDocs did not build, in Chromium.

The pages are what another generator makes of the same Markdown (python-markdown here, as a
site owner's own script would use it): headings carry GitHub's and Hugo's ids (a second
"Options" is ``options-1``, where MkDocs, and so the index, says ``options_1``) or no ids at
all, there is no ``<main>`` or ``<article>``, the site is served under ``/docs/`` with a
strict Content-Security-Policy, and the API is a real kb-qa app with no model configured.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import markdown
import pytest
from browser import sync_playwright_or_skip
from markdown.extensions.toc import TocExtension
from uvicorn_thread import UvicornThread
from widget_stack import (
    ROOT,
    ask,
    loopback_context,
    open_page,
    serve_folder,
    shot,
)

from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.serve.app import create_app

sync_playwright_or_skip()
from playwright.sync_api import expect  # noqa: E402 - after the skip

CLI = """# CLI reference

## lumen server

Starts the API server and applies pending database migrations when asked to.

### Options

| Option | Default | Description |
|---|---|---|
| `--listen ADDR` | `127.0.0.1:7420` | Address the HTTP API binds to |
| `--migrate` | off | Apply pending migrations before starting |

## lumen worker

Starts a built-in worker that claims jobs from one or more queues.

### Options

| Option | Default | Description |
|---|---|---|
| `--queue NAME` | `default` | Queue the worker claims jobs from; repeat for several |
| `--concurrency N` | `4` | Concurrent job slots the worker runs at once |
"""
PAGES = {"index": "# Lumen\n\nLumen runs background jobs. See the CLI reference.\n", "cli": CLI}
QUESTION = "How many concurrent job slots does lumen worker run at once?"
POLICY = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:"
PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Lumen</title>
<link rel="icon" href="data:,"><link rel="stylesheet" href="/docs/site.css">
<script src="/docs/kb-qa/kb-qa.js" defer data-endpoint="{api}" data-root="/docs/"></script>
</head><body><div class="top">Lumen docs</div><div class="page">{body}</div></body></html>"""


def github_slug(value: str, separator: str) -> str:
    """GitHub's (and Hugo's) heading ids: lower case, punctuation dropped, spaces to '-'."""
    return re.sub(r"[^\w\- ]", "", value.strip().lower()).replace(" ", separator)


def render(markdown_text: str, ids: str) -> str:
    """The page body another generator makes: ids ``github`` (repeats ``-1``, ``-2``) or none."""
    extensions: list[Any] = ["tables"]
    if ids == "github":
        extensions.append(TocExtension(slugify=github_slug, separator="-"))
    body = markdown.markdown(markdown_text, extensions=extensions)
    return re.sub(r'id="([^"]*)_(\d+)"', r'id="\1-\2"', body)  # python-markdown says _1


@dataclass
class Site:
    origin: str
    api: str
    folder: Path

    def write(self, name: str, markdown_text: str, ids: str = "github") -> None:
        page = self.folder / "docs" / ("" if name == "index" else name) / "index.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        body = render(markdown_text, ids)
        page.write_text(PAGE.format(api=self.api, body=body), encoding="utf-8")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    tmp = tmp_path_factory.mktemp("dropin")
    vault = tmp / "vault"
    (vault / "docs").mkdir(parents=True)
    # What site-generators.md tells the owner of such a site to put beside the sources.
    (vault / "mkdocs.yml").write_text("site_name: Lumen\n", encoding="utf-8")
    for name, text in PAGES.items():
        (vault / "docs" / f"{name}.md").write_text(text, encoding="utf-8")
    folder = tmp / "site"
    (folder / "docs" / "kb-qa").mkdir(parents=True)
    for name in ("kb-qa.js", "kb-qa.css"):
        shutil.copy(ROOT / "widget" / name, folder / "docs" / "kb-qa" / name)
    (folder / "docs" / "site.css").write_text(
        "body{margin:0;font:16px/1.5 sans-serif}.top{position:sticky;top:0;background:#333;"
        "color:#fff;padding:10px}.page{padding:0 24px 1200px;max-width:760px}",
        encoding="utf-8",
    )
    headers: dict[str, str] = {}  # the policy, once the API's port is known
    origin, files = serve_folder(folder, headers)
    kb = KnowledgeBase(vault, cors_origins=(origin,), embed_model="hash", index_dir=tmp / "idx")
    try:
        kb.index()
        with UvicornThread(create_app(kb)) as api:
            headers["Content-Security-Policy"] = f"{POLICY}; connect-src 'self' {api.url}"
            built = Site(origin, api.url, folder)
            for name, text in PAGES.items():
                built.write(name, text)
            yield built
    finally:
        kb.close()
        files.shutdown()
        files.server_close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = loopback_context(browser)
    page = context.new_page()
    page.problems = []
    page.add_init_script(
        "document.addEventListener('securitypolicyviolation', (e) => console.error("
        "'CSP blocked ' + e.violatedDirective + ' ' + e.sourceFile + ':' + e.lineNumber))"
    )
    page.on("console", lambda m: m.type == "error" and page.problems.append(m.text))
    page.on("pageerror", lambda e: page.problems.append(str(e)))
    yield page
    context.close()


def test_the_index_cites_mkdocs_ids_the_site_does_not_have(site: Site) -> None:
    """The premise of the tests below: the citation names MkDocs' id for the second
    "Options", which this site's page does not carry."""
    reply = httpx.post(site.api + "/api/ask", json={"question": QUESTION, "stream": False})
    first = reply.json()["citations"][0]
    assert (first["link"], first["heading_path"]) == (
        "cli/#options_1",
        ["CLI reference", "lumen worker", "Options"],
    )
    assert 'id="options_1"' not in (site.folder / "docs" / "cli" / "index.html").read_text()


def test_the_widget_runs_under_a_strict_content_security_policy(site: Site, page: Any) -> None:
    """`style-src 'self'` (what `default-src 'self'` gives) refused the style attribute the
    widget hid itself with until its stylesheet loaded: an error in the console of every page."""
    open_page(page, site.origin + "/docs/")
    assert (
        "style-src 'self'" in httpx.get(site.origin + "/docs/").headers["content-security-policy"]
    )
    page.keyboard.press("Control+k")
    ask(page, QUESTION)
    expect(page.locator(".kbq-answer").last).to_contain_text("Concurrent job slots")
    shot(page, "dropin-csp")
    assert page.problems == []


def _open_first_source(site: Site, page: Any, question: str, anchor: str) -> None:
    """Ask ``question`` on the home page and open the answer's first source, on the CLI
    page at ``#anchor``, until its highlight is in view."""
    open_page(page, site.origin + "/docs/")
    page.keyboard.press("Control+k")
    ask(page, question)
    page.locator(".kbq-sources a").first.click()
    page.wait_for_url(re.compile(rf"/docs/cli/\?kbqa-hl=.*#{anchor}$"))
    # (Playwright's wait_for_function evaluates strings, which this policy refuses.)
    expect(page.locator("mark.kb-qa-highlight").first).to_be_in_viewport()


@pytest.mark.parametrize("ids", ["github", "none"])
def test_a_citation_finds_its_section_by_heading_when_the_site_has_other_ids(
    site: Site, page: Any, ids: str
) -> None:
    """The page was rebuilt from a newer text of the section than the index holds, and its
    generator gave headings other ids (or none): the highlight found neither the id nor the
    passage, and the reader was left at the top of the page. It now falls back to the section
    (the heading whose words the id spells, the second "Options" for ``options_1``), as it does
    on a MkDocs site."""
    site.write(
        "cli", CLI[: CLI.rindex("| Option")] + "Run `lumen worker --help` to list them.\n", ids
    )
    try:
        _open_first_source(site, page, QUESTION, "options_1")
        shot(page, f"dropin-section-by-heading-{ids}")
        marked = page.evaluate(
            "[...document.querySelectorAll('mark.kb-qa-highlight')].map(m => "
            "[m.closest('h3') && [...document.querySelectorAll('h3')].indexOf(m.closest('h3')),"
            " m.textContent])"
        )
        assert marked == [[1, "Options"]]
        assert page.problems == []
    finally:
        site.write("cli", CLI)


def test_a_citation_whose_id_moved_to_another_section_finds_its_passage_on_the_page(
    site: Site, page: Any
) -> None:
    """The first "Options" was renamed after indexing, so its id ``options`` now names the
    second one: the widget looked for the passage there only and marked that section's
    heading, the reader sent to the wrong place with nothing to say so. The passage is
    looked for in the whole page before the heading is marked."""
    question = "Which address does the lumen server HTTP API bind to by default?"
    reply = httpx.post(site.api + "/api/ask", json={"question": question, "stream": False})
    assert reply.json()["citations"][0]["link"] == "cli/#options"
    site.write("cli", CLI.replace("### Options", "### Server flags", 1))
    try:
        _open_first_source(site, page, question, "options")
        shot(page, "dropin-id-moved")
        marked = page.evaluate(
            "[...document.querySelectorAll('mark.kb-qa-highlight')].map(m => "
            "[[...document.querySelectorAll('table')].indexOf(m.closest('table')), "
            "m.textContent])"
        )
        assert marked and all(table == 0 for table, _ in marked), marked  # the first table
        assert "127.0.0.1:7420" in "".join(text for _, text in marked)
        assert page.problems == []
    finally:
        site.write("cli", CLI)


def test_the_panel_follows_the_sites_own_dark_switch(site: Site, page: Any) -> None:
    """A site with its own light/dark switch (Docusaurus' data-theme, Bootstrap's
    data-bs-theme, a "dark" class as Tailwind and VitePress set) got a light panel on its
    dark pages: the widget followed only Material's attribute and the system setting."""
    open_page(page, site.origin + "/docs/")
    scheme = "document.getElementById('kb-qa').getAttribute('data-scheme')"
    assert page.evaluate(scheme) is None  # no switch: the system setting decides
    for change, expected in (
        ("document.documentElement.setAttribute('data-theme', 'dark')", "dark"),
        ("document.documentElement.setAttribute('data-theme', 'light')", "light"),
        ("document.documentElement.removeAttribute('data-theme')", None),
        ("document.documentElement.setAttribute('data-bs-theme', 'dark')", "dark"),
        ("document.documentElement.removeAttribute('data-bs-theme')", None),
        ("document.documentElement.classList.add('dark')", "dark"),
    ):
        page.evaluate(change)
        host = page.locator("#kb-qa")
        if expected:
            expect(host).to_have_attribute("data-scheme", expected)
        else:
            expect(host).not_to_have_attribute("data-scheme", re.compile("."))
    page.keyboard.press("Control+k")
    shot(page, "dropin-dark-class")
    # Dark by the widget's own fallbacks: this site sets none of Material's colours.
    background = page.evaluate(
        "getComputedStyle(document.getElementById('kb-qa').shadowRoot"
        ".querySelector('.kbq-panel')).backgroundColor"
    )
    red, green, blue = (int(v) for v in re.findall(r"\d+", background)[:3])
    assert red + green + blue < 3 * 80, background
    assert page.problems == []
