"""A page's title, first in every heading path and citation label, is the one its site
shows: the nav's title, then front matter, then the H1 that titles it, then its file name,
each as MkDocs or Zensical decide it (``kb_qa/ingest/page_titles.py``).

The rules are checked against real ``mkdocs build`` and ``zensical build`` runs: every
page's ``<title>`` must be the title kb-qa gives the page.
"""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import parity  # tests/ is on sys.path under pytest
import pytest

from kb_qa.answer.blocks import table_header
from kb_qa.ingest import chunking, vault
from kb_qa.ingest.render import RenderedPage
from kb_qa.ingest.site import load_site
from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.settings import Settings

KB = Callable[..., KnowledgeBase]

# Pages whose titles come from every rule (the nav's is added by each test's config).
PAGES = {
    "index.md": "<h1>HTTPX</h1>\n\n## Dependencies\n\nhttpcore, certifi.\n",  # raw HTML: no H1
    "ssl.md": "# SSL\n\n## Enabling and disabling verification\n\nverify=False.\n",
    "resource-limits.md": "Limits on the pool.\n\n## Pool limits\n\nmax_connections.\n",
    "later-h1.md": "Intro text.\n\n# Later\n\n## Part\n\nx\n",  # an H1 after text
    "comment-first.md": "<!-- a note -->\n\n# After Comment\n\nx\n",
    "setext.md": "Setext Title\n============\n\nx\n",
    "meta.md": "---\ntitle: From Meta\n---\n\n# Heading One\n\nx\n",
    "entity.md": "# Q&A `code` *em*\n\nx\n",
    "Mixed_Case-name.md": "x\n",
    "éclair.md": "x\n",
    "guides/index.md": "x\n",
    "sub/README.md": "x\n",
    "background.md": "# Background Task\n\nx\n",
}


def write_site(root: Path, config: tuple[str, str], pages: dict[str, str] = PAGES) -> Path:
    """``root`` with ``docs/`` holding ``pages`` and the config file (name, text)."""
    for rel, text in pages.items():
        path = root / "docs" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / config[0]).write_text(config[1], encoding="utf-8")
    return root


def paths(root: Path) -> dict[str, list[tuple[str, ...]]]:
    """Each page's heading paths, as an index run reads and chunks the page."""
    site = load_site(root)
    settings = Settings(vault=root)
    files, skipped = vault.scan(site, settings)
    assert not skipped
    found = {}
    for info in files:
        doc = vault.read_document(site, info, vault.Boundary.of(settings)).document
        assert doc is not None
        chunks = chunking.chunk_document(doc, site.markdown(), 1500)
        found[info.doc_path] = [c.heading_path for c in chunks]
    return found


def titles(root: Path) -> dict[str, tuple[str, ...]]:
    """Each page's title: the first entries of its heading paths."""
    return {p: tuple(dict.fromkeys(h[0] for h in hs)) for p, hs in paths(root).items()}


def built_titles(site_dir: Path, suffix: str) -> dict[str, str]:
    """The ``<title>`` of every built page, by the page's folder (``ssl/``), ``suffix``
    (`` - Site``) taken off."""
    found = {}
    for page in site_dir.rglob("index.html"):
        text = page.read_text(encoding="utf-8")
        match = re.search(r"<title>(.*?)</title>", text, re.S)
        assert match, page
        folder = page.parent.relative_to(site_dir).as_posix()
        found[folder] = html.unescape(match.group(1).strip()).removesuffix(suffix)
    return found


def folder_of(doc_path: str) -> str:
    """Where a page is built with directory URLs ("ssl.md" -> "ssl", "index.md" -> ".")."""
    stem, _ = os.path.splitext(doc_path)
    parent, name = os.path.split(stem)
    return (parent or ".") if name in ("index", "README") else stem


MKDOCS_NAV = """\
site_name: Exp
theme:
  name: mkdocs
  custom_dir: overrides
nav:
  - ssl.md
  - Background Tasks: background.md
  - Section:
      - resource-limits.md
      - Retitled Later: ssl.md
  - Guides:
      - Guides Home: guides/index.md
  - External: https://example.com/
"""
# page.title itself, also on the home page (the mkdocs theme leaves it out there)
OVERRIDE = (
    '{% extends "base.html" %}{% block htmltitle %}<title>{{ page.title }}</title>{% endblock %}'
)


def test_titles_are_the_ones_a_real_mkdocs_build_gives(tmp_path: Path) -> None:
    """Nav titles (a later entry of the same page does not retitle it; a link titles
    nothing), front matter, an H1 only when it opens the page (not raw HTML, not after text
    or a comment), setext, and the file name as MkDocs makes it ("Home", "Index")."""
    root = write_site(tmp_path / "site", ("mkdocs.yml", MKDOCS_NAV))
    (root / "overrides").mkdir()
    (root / "overrides" / "main.html").write_text(OVERRIDE, encoding="utf-8")
    command = [sys.executable, "-m", "mkdocs", "build", "-q", "-d", str(tmp_path / "out")]
    proc = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    built = built_titles(tmp_path / "out", "")
    ours = titles(root)
    assert {folder_of(p): t for p, (t,) in ours.items()} == built
    assert built["ssl"] == "SSL" and built["background"] == "Background Tasks"
    assert built["."] == "Home" and built["guides"] == "Guides Home" and built["sub"] == "Index"
    assert built["later-h1"] == "Later h1" and built["comment-first"] == "Comment first"
    assert built["resource-limits"] == "Resource limits"


def test_a_home_page_the_nav_puts_in_a_section_is_index(tmp_path: Path) -> None:
    """MkDocs titles its home page "Home" only at the top of the nav."""
    config = MKDOCS_NAV.split("nav:")[0] + "nav:\n  - Section:\n      - index.md\n      - ssl.md\n"
    pages = {"index.md": "x\n", "ssl.md": PAGES["ssl.md"]}
    root = write_site(tmp_path / "site", ("mkdocs.yml", config), pages)
    (root / "overrides").mkdir()
    (root / "overrides" / "main.html").write_text(OVERRIDE, encoding="utf-8")
    command = [sys.executable, "-m", "mkdocs", "build", "-q", "-d", str(tmp_path / "out")]
    proc = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert built_titles(tmp_path / "out", "") == {".": "Index", "ssl": "SSL"}
    assert titles(root) == {"index.md": ("Index",), "ssl.md": ("SSL",)}


ZENSICAL_TOML = """\
[project]
site_name = "Exp"
nav = [
  "ssl.md",
  {"Background Tasks" = "background.md"},
  {"Section" = ["resource-limits.md", {"Retitled Later" = "ssl.md"}]},
  {"Introduction" = "index.md"},
  {"External" = "https://example.com/"},
]
"""


@pytest.mark.skipif(not parity.zensical_installed(), reason="zensical is not installed")
def test_titles_are_the_ones_a_real_zensical_build_gives(tmp_path: Path) -> None:
    """Zensical's rules: nav (zensical.toml's [project] nav), front matter, its first H1
    anywhere, else "Index" for any index.md, "README" for a README.md, an all lower case
    name capitalised only when its first letter is ASCII."""
    root = write_site(tmp_path / "site", ("zensical.toml", ZENSICAL_TOML))
    command = [parity.zensical_command(), "build"]
    proc = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    built = built_titles(root / "site", " - Exp")
    ours = titles(root)
    assert {folder_of(p): t for p, (t,) in ours.items()} == built
    assert built["."] == "Introduction" and built["later-h1"] == "Later"
    assert built["sub"] == "README" and built["guides"] == "Index" and built["éclair"] == "éclair"


def test_nav_titles_head_every_heading_path(
    make_vault: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The httpx case: index.md opens with a raw <h1>; the nav calls it "Introduction"
    and its other pages "SSL" and "Resource Limits". The nav's title comes before the front
    matter's; a page's opening H1 stands beside the title (it is not repeated in the path),
    an H1 after other text is a heading of the page (unless it repeats the title)."""
    config = """\
site_name: HTTPX
nav:
  - Introduction: index.md
  - Advanced:
      - Resource Limits: advanced/resource-limits.md
      - SSL: advanced/ssl.md
      - Meta: meta.md
      - Later Page: later-h1.md
      - Welcome: badges.md
  - !ENV [KBQA_TEST_NAV_TITLE, Environment]: env.md
"""
    pages = {
        "index.md": PAGES["index.md"],
        "advanced/resource-limits.md": "# Resource limits\n\n## Pool limits\n\nx\n",
        "advanced/ssl.md": "# SSL\n\n## Enabling and disabling verification\n\nx\n",
        "meta.md": PAGES["meta.md"],
        "later-h1.md": PAGES["later-h1.md"],
        "env.md": "x\n",
        "badges.md": '<p align="center">badges</p>\n\n# Welcome\n\n## Features\n\nx\n',
    }
    root = write_site(make_vault({}), ("mkdocs.yml", config), pages)
    monkeypatch.setenv("KBQA_TEST_NAV_TITLE", "secret-from-the-environment")
    assert paths(root) == {
        "index.md": [("Introduction",), ("Introduction", "Dependencies")],
        "advanced/resource-limits.md": [("Resource Limits",), ("Resource Limits", "Pool limits")],
        "advanced/ssl.md": [("SSL",), ("SSL", "Enabling and disabling verification")],
        "meta.md": [("Meta",)],
        "later-h1.md": [("Later Page",), ("Later Page", "Later"), ("Later Page", "Later", "Part")],
        # starlette's index.md: an H1 after its badges, named as the nav names the page
        "badges.md": [("Welcome",), ("Welcome",), ("Welcome", "Features")],
        # a nav title is read without the environment (every reader sees it)
        "env.md": [("Environment",)],
    }


@pytest.mark.parametrize("render", [False, True])
def test_a_nav_edit_re_chunks_the_pages_it_retitles(
    make_vault: Callable[..., Path], kb: KB, render: bool
) -> None:
    """Only mkdocs.yml changed. Read from its files (render off, or a Zensical site), the
    next run re-chunks the pages whose nav title changed, and no other; rendered, every
    page is re-chunked (the config renders every page), each titled as MkDocs titled it."""
    pages = {
        "ssl.md": PAGES["ssl.md"],
        "limits.md": "# Limits\n\n## Pool\n\nmax_connections.\n",
        "other.md": "# Other\n\n## Part\n\nx\n",
    }
    nav = "site_name: S\nnav:\n  - {ssl}ssl.md\n  - Resource Limits: limits.md\n  - other.md\n"
    root = write_site(make_vault({}), ("mkdocs.yml", nav.format(ssl="")), pages)
    index = kb(root, render=render)
    assert index.index().changed_files == 3

    def titles_of(path: str) -> set[str]:
        return {c.heading_path[0] for c in index.store.chunks() if c.path == path}

    assert (titles_of("docs/ssl.md"), titles_of("docs/limits.md")) == ({"SSL"}, {"Resource Limits"})
    (root / "mkdocs.yml").write_text(nav.format(ssl="TLS and SSL: "), encoding="utf-8")
    second = index.index()
    assert (second.changed_files, bool(second.rebuilt)) == ((3, True) if render else (1, False))
    assert titles_of("docs/ssl.md") == {"TLS and SSL"}
    assert titles_of("docs/limits.md") == {"Resource Limits"}
    assert index.index().changed_files == 0  # nothing left to do
    # The titles taken out of the nav: the pages' H1s title them again.
    (root / "mkdocs.yml").write_text("site_name: S\n", encoding="utf-8")
    assert index.index().changed_files == (3 if render else 2)
    assert (titles_of("docs/ssl.md"), titles_of("docs/limits.md")) == ({"SSL"}, {"Limits"})
    assert index.index().changed_files == 0


def test_a_notes_vault_keeps_its_titles(make_vault: Callable[..., Path]) -> None:
    """No site: a note's first H1 anywhere, else its file name as written."""
    root = make_vault({"h1.md": PAGES["later-h1.md"], "my-notes.md": "x\n", "a/index.md": "x\n"})
    assert titles(root) == {
        "h1.md": ("Later",),
        "my-notes.md": ("my-notes",),
        "a/index.md": ("index",),
    }


def test_a_page_a_build_retitles_is_re_chunked(make_vault: Callable[..., Path], kb: KB) -> None:
    """Pages a real build rendered (the plugin's index_on_build) keep the build's title, the
    one a nav made by a plugin (literate-nav, awesome-pages) gives them too; a page the
    build retitles is re-chunked although its file did not change."""
    root = write_site(make_vault({}), ("mkdocs.yml", "site_name: S\n"), {"ssl.md": PAGES["ssl.md"]})
    content = (
        '<h1 id="ssl">SSL</h1>\n<h2 id="enabling-and-disabling-verification">Enabling and '
        "disabling verification</h2>\n<p>verify=False.</p>\n"
    )

    def built(title: str) -> dict[str, RenderedPage]:
        return {"docs/ssl.md": RenderedPage("docs/ssl.md", "ssl/", title, content)}

    index = kb(root, render=False)
    assert index.index(rendered=built("SSL")).changed_files == 1
    assert index.index(rendered=built("SSL")).changed_files == 0
    assert index.index(rendered=built("TLS &amp; SSL")).changed_files == 1
    assert {c.heading_path for c in index.store.chunks()} == {
        ("TLS & SSL",),
        ("TLS & SSL", "Enabling and disabling verification"),
    }
    assert index.index(rendered=built("TLS &amp; SSL")).changed_files == 0


def test_a_page_s_own_title_is_what_retrieval_reads_beside_its_nav_title(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    """hatch's nav calls a page "Advanced" whose H1 reads "Advanced environment
    configuration": the label is the nav's, but retrieval reads the page's own title (its
    front matter's, else its first H1) in its place, as before nav titles were read: with
    the nav's short labels in the indexed text, real questions lost their sections."""
    config = "site_name: S\nnav:\n  - Advanced: advanced.md\n  - Meta: meta.md\n  - SSL: ssl.md\n"
    pages = {
        "advanced.md": "# Advanced environment configuration\n\n## Context formatting\n\n"
        "Fields are expanded.\n\n## Matrix\n\n| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n",
        "meta.md": PAGES["meta.md"] + "\n## Part\n\ny\n",
        "ssl.md": PAGES["ssl.md"],  # the H1 reads as the nav's title: nothing to add
        "other.md": "# Plugins\n\n## Hooks\n\nBuild hooks run.\n",
    }
    root = write_site(make_vault({}), ("mkdocs.yml", config), pages)
    index = kb(root, render=False, chunk_chars=40)
    index.index()
    chunks = {(c.path, c.heading_path, c.piece): c for c in index.store.chunks()}
    hit = index.search("environment configuration formatting", 1)[0].chunk
    assert (hit.path, hit.heading_path) == ("docs/advanced.md", ("Advanced", "Context formatting"))
    own = {"docs/advanced.md": "Advanced environment configuration", "docs/meta.md": "From Meta"}
    for (path, heading_path, _), chunk in chunks.items():
        assert chunk.own_title == own.get(path, "")
        if path in own:
            assert heading_path[0] != own[path]  # the label is the site's
            assert chunk.index_text.startswith(" > ".join((own[path], *heading_path[1:])))
    # A split table's piece keeps its header, where answers read it.
    rows = [c for (p, h, n), c in chunks.items() if p == "docs/advanced.md" and n > 0]
    assert rows and all(table_header(c.context) == "| a | b |\n|---|---|" for c in rows)
