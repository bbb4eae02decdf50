"""kb-qa's own documentation site (docs/): a strict MkDocs build with the kb-qa plugin, a
configuration reference that lists every setting, an HTTP API page that names every route,
and the site's chat asked a question in Chromium, its citation opening a highlighted passage.

Every build is a real ``mkdocs build`` of a copy of docs/ (so no index or site folder is
written into the checkout); the chat's answers are kb-qa's own extractive answers.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from browser import CHROMIUM
from widget_stack import (
    MARK_IN_VIEW,
    MARKS,
    MARKS_TEXT,
    ask,
    chromium,
    loopback_context,
    mkdocs_build,
    site_with_api,
    sync_api,
)

from kb_qa import KnowledgeBase, Settings
from kb_qa.serve.app import create_app

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = DOCS / "pages"
# A table row of the reference: | `name` | `KBQA_NAME` | default | what it does |
SETTING_ROW = re.compile(r"^\| `([a-z_]+)` \| `(KBQA_[A-Z_]+)` \| [^|]+ \| .+ \|$", re.M)
# A row of the HTTP API page's route table: its first cell, e.g. `GET /api/search?q=&k=`
# The widget's script tag as the plugin injects it (the pages also quote the drop-in tag)
WIDGET_TAG = re.compile(r'<script src="[^"]*kb-qa/kb-qa\.js\?v=\w+"')
# A path parameter as Starlette writes it, {path:anypath}, and as the page does, <path>
PATH_PARAM = re.compile(r"{(\w+)(?::\w+)?}")
ROUTE_CELL = re.compile(r"^\| ((?:`[A-Z]+ [^`]+`(?:, )?)+) \|", re.M)


def copy_docs(dest: Path) -> Path:
    """docs/ copied to ``dest`` without its index folder or a built site."""
    shutil.copytree(DOCS, dest, ignore=shutil.ignore_patterns(".kb-qa", "site"))
    return dest


def build(docs: Path, site_dir: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return mkdocs_build(docs, site_dir, env, "--strict")


@pytest.fixture(scope="module")
def built_docs(
    tmp_path_factory: pytest.TempPathFactory, cli_env: Callable[..., dict[str, str]]
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """docs/ built once with ``mkdocs build --strict``: (the run, the site folder)."""
    tmp = tmp_path_factory.mktemp("docs-strict")
    site = tmp / "site"
    return build(copy_docs(tmp / "docs"), site, cli_env()), site


def test_strict_build_passes_with_the_chat_on_every_page(
    built_docs: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    result, site = built_docs
    assert result.returncode == 0, result.stderr
    nav = yaml.safe_load((DOCS / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]
    sources = sorted(p.relative_to(PAGES).as_posix() for p in PAGES.rglob("*.md"))
    assert sorted(next(iter(item.values())) for item in nav) == sources  # every page in nav
    built = sorted(site.rglob("index.html"))
    assert len(built) == len(sources)
    for page in built:
        html = page.read_text(encoding="utf-8")
        assert len(WIDGET_TAG.findall(html)) == 1, page
    # The README's screenshot is a page asset too, and a PNG.
    assert (PAGES / "assets" / "widget-answer.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_readme_is_short_and_its_links_reach_the_docs_pages(
    built_docs: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    result, site = built_docs
    assert result.returncode == 0, result.stderr
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    # The two commands, exactly.
    assert (
        "python3 -m venv .venv && .venv/bin/pip install -e . && "
        ".venv/bin/mkdocs serve -f sample_site/mkdocs.yml\n"
    ) in readme
    assert "\nbash scripts/test.sh\n" in readme
    links = re.findall(r"\]\((docs/[^)#\s]+)(?:#([\w-]+))?\)", readme)
    assert len(links) >= 10
    for target, anchor in links:
        assert (ROOT / target).is_file(), target
        if target.endswith(".md"):
            name = Path(target).relative_to("docs/pages").with_suffix("")
            page = site / ("" if name.name == "index" else name) / "index.html"
            html = page.read_text(encoding="utf-8")
            assert not anchor or f'id="{anchor}"' in html, f"{target}#{anchor}"


@pytest.mark.parametrize(
    ("link", "message"),
    [
        ("[gone](no-such-page.md)", "no-such-page.md"),
        ("[gone](configuration.md#no-such-setting)", "no-such-setting"),
        ("[gone](#no-such-heading)", "no-such-heading"),
    ],
)
def test_strict_build_fails_on_a_broken_link_or_anchor(
    tmp_path: Path, cli_env: Callable[..., dict[str, str]], link: str, message: str
) -> None:
    docs = copy_docs(tmp_path / "docs")
    index = docs / "pages" / "index.md"
    index.write_text(index.read_text(encoding="utf-8") + f"\nSee {link}.\n", encoding="utf-8")
    result = build(docs, tmp_path / "site", cli_env())
    assert result.returncode != 0
    warnings = [line for line in result.stderr.splitlines() if line.startswith("WARNING")]
    assert [line for line in warnings if message in line], result.stderr
    assert "strict mode" in result.stdout + result.stderr


def test_configuration_reference_lists_every_setting() -> None:
    page = (PAGES / "configuration.md").read_text(encoding="utf-8")
    rows = SETTING_ROW.findall(page)
    documented = [name for name, _ in rows]
    fields = [f.name for f in dataclasses.fields(Settings)]
    assert sorted(set(fields) - set(documented)) == [], "settings missing from the reference"
    assert sorted(set(documented) - set(fields)) == [], "the reference names unknown settings"
    assert len(documented) == len(set(documented)), "a setting is listed twice"
    for name, env in rows:
        assert env == "KBQA_" + name.upper()


def test_http_api_page_names_every_route(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "a.md").write_text("# A\n\nText.\n", encoding="utf-8")
    with KnowledgeBase(vault, embed_model="hash", index_dir=tmp_path / "idx") as kb:
        app = create_app(kb)
    page = (PAGES / "http-api.md").read_text(encoding="utf-8")
    table = page.split("## Routes", 1)[1].split("\n## ", 1)[0]
    named = {
        re.sub(r"\?.*", "", cell)
        for cells in ROUTE_CELL.findall(table)
        for cell in re.findall(r"`([^`]+)`", cells)
    }
    routes = {
        method + " " + PATH_PARAM.sub(r"<\1>", route.path)
        for route in app.routes
        for method in route.methods
        if method != "HEAD"
    }
    assert len(routes) >= 13
    assert sorted(routes - named) == [], "routes missing from the HTTP API page"
    assert sorted(named - routes) == [], "the HTTP API page names routes the app lacks"
    for field in ('"stream": false', "question", "history", "include", "exclude", "covered"):
        assert field in page


skip_browser = pytest.mark.skipif(
    sync_api is None or not CHROMIUM.exists(),
    reason="needs the playwright package and Debian's chromium (apt-get install chromium)",
)


@pytest.fixture(scope="module")
def docs_site(
    tmp_path_factory: pytest.TempPathFactory, cli_env: Callable[..., dict[str, str]]
) -> Iterator[str]:
    """docs/ built (strict) with the plugin pointing at a live kb-qa API over the same pages,
    served on loopback: its origin."""
    tmp = tmp_path_factory.mktemp("docs-site")
    docs = copy_docs(tmp / "docs")
    with site_with_api(
        docs,
        tmp / "site",
        cli_env(),
        "--strict",
        embed_model="hash",
        index_dir=tmp / "index",
        rate_limit=0,
    ) as (origin, _, _):
        yield origin


@pytest.fixture(scope="module")
def docs_browser(request: pytest.FixtureRequest) -> Iterator[Any]:
    """Chromium for this module, closed when the module ends: this module runs before most
    others, and the asyncio tests after it cannot run while Playwright's loop is open (see
    ``widget_stack.chromium``). When the session's browser is open already (the widget tests
    ran first), that one."""
    if asyncio._get_running_loop() is not None:
        yield request.getfixturevalue("browser")
        return
    with chromium() as instance:
        yield instance


@skip_browser
def test_docs_chat_answers_and_its_citation_opens_highlighted(
    docs_browser: Any, docs_site: str
) -> None:
    context = loopback_context(docs_browser)
    try:
        page = context.new_page()
        page.goto(docs_site + "/configuration/")
        page.wait_for_function("window.KbQa && window.KbQa.mounted")
        page.keyboard.press("Control+k")
        sync_api.expect(page.locator(".kbq-panel")).to_be_visible()
        ask(page, "How do I run several API replicas behind a load balancer?")
        answer = page.locator(".kbq-answer").last
        sync_api.expect(answer).not_to_be_empty()
        chips = page.locator("a.kbq-cite")
        assert chips.count() >= 1
        titles = page.locator(".kbq-source-t").all_text_contents()
        assert any("Running several API replicas" in t for t in titles), titles
        href = chips.first.get_attribute("href") or ""
        assert href.startswith(docs_site + "/") and "kbqa-hl=" in href, href
        cited_path = href[len(docs_site) :].split("?", 1)[0]
        chips.first.click()
        page.wait_for_url(re.compile(re.escape(cited_path) + r"\?kbqa-hl=[^#]+#[\w-]+$"))
        page.wait_for_function(f"{MARKS}.length > 0")
        page.wait_for_function(MARK_IN_VIEW)
        marked = page.evaluate(MARKS_TEXT)
        assert len(marked) > 40, marked
        # The first highlighted passage is in the cited section: after its heading, before
        # the next heading.
        inside = page.evaluate(
            """(anchor) => {
              const heading = document.getElementById(anchor);
              const mark = document.querySelector("mark.kb-qa-highlight");
              let next = heading.nextElementSibling;
              while (next && !/^H[1-6]$/.test(next.tagName)) next = next.nextElementSibling;
              const at = (node) => node.compareDocumentPosition(mark);
              const after = at(heading) & Node.DOCUMENT_POSITION_FOLLOWING;
              const before = !next || at(next) & Node.DOCUMENT_POSITION_PRECEDING;
              return Boolean(after && before);
            }""",
            page.url.rsplit("#", 1)[1],
        )
        assert inside, (page.url, marked)
    finally:
        context.close()
