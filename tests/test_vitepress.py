"""A VitePress site: its pages cited at the URLs and heading ids VitePress publishes, its
containers quoted as admonitions (a QA pass's site: every citation opened
``docs/guide/signals.md`` where VitePress, with ``cleanUrls`` and ``base: /lattice/``,
publishes ``/lattice/guide/signals``; ``{#computed}`` stayed in the heading and its anchor,
``::: details`` lines and ``[[toc]]`` were quoted as text).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from api_helpers import answered, asked
from conftest import write_files
from uvicorn_thread import UvicornThread

from kb_qa.answer.blocks import passages
from kb_qa.ingest import mdx, vitepress
from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.serve.app import create_app

CONFIG = """import { defineConfig } from 'vitepress'

// https://vitepress.dev/reference/site-config
export default defineConfig({
  title: "Lattice",
  description: "A reactive grid",
  base: '/lattice/',
  cleanUrls: true,
  themeConfig: {
    sidebar: {
      '/guide/': { base: '/guide/', items: [{ text: 'Signals', link: 'signals' }] }
    }
  }
})
"""

SIGNALS = """# Signals

[[toc]]

A signal holds one value of a cell.

## Computed Signals {#computed}

A computed signal derives its value from other signals and caches it.

::: details How are computed signals invalidated?
Each computed signal keeps a version counter; reading it after a dependency changed
recomputes the value lazily, on the next read.
:::

## Options

::: tip Batching
Wrap several writes in `batch()` so that effects run once.
:::

## Options

The second options section.

## 2. Étapes faciles

Les étapes.
"""

FILES = {
    "package.json": '{"scripts": {"docs:build": "vitepress build docs"}}\n',
    "README.md": "# lattice\n\nThe repository's readme, not a page of the site.\n",
    "docs/.vitepress/config.mts": CONFIG,
    "docs/index.md": "---\nlayout: home\n---\n\n# Lattice\n\nA reactive grid for sheets.\n",
    "docs/guide/index.md": "# Guide\n\nThe guide explains grids.\n",
    "docs/guide/signals.md": SIGNALS,
}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    root = write_files(tmp_path_factory.mktemp("vitepress") / "site", FILES)
    kb = KnowledgeBase(root, index_dir=root.parent / "index", embed_model="hash")
    report = kb.index()
    assert not report.skipped, report.skipped
    assert not report.warnings, report.warnings  # "looks like a VitePress site" is gone
    yield kb
    kb.close()


def links(kb: KnowledgeBase) -> dict[str, set[str]]:
    """Each indexed file's page URLs (its citation links without their #anchor)."""
    found: dict[str, set[str]] = {}
    for chunk in kb.searchable_chunks():
        found.setdefault(chunk.path, set()).add(chunk.link.split("#")[0])
    return found


def test_pages_are_cited_where_vitepress_publishes_them(site: KnowledgeBase) -> None:
    assert links(site) == {
        "docs/index.md": {"lattice/"},
        "docs/guide/index.md": {"lattice/guide/"},
        "docs/guide/signals.md": {"lattice/guide/signals"},  # cleanUrls: no .html
    }  # the repository's README.md is outside srcDir: no page


def test_heading_ids_are_vitepress(site: KnowledgeBase) -> None:
    sections = {
        chunk.anchor: chunk.heading
        for chunk in site.searchable_chunks()
        if chunk.path == "docs/guide/signals.md"
    }
    assert sections["computed"] == "Computed Signals"  # not "computed-signals-computed"
    assert sections["options"] == sections["options-1"] == "Options"
    assert sections["_2-etapes-faciles"] == "2. Étapes faciles"  # @mdit-vue's slugify


def test_containers_are_quoted_as_admonitions(site: KnowledgeBase) -> None:
    done, citations = asked(site, "How are computed signals invalidated?")
    assert "version counter" in done.text
    assert "**How are computed signals invalidated?**" in done.text, done.text  # its title
    assert ":::" not in done.text and "[[toc]]" not in done.text
    done, more = asked(site, "How do I make effects run once with batching?")
    assert "batch()" in done.text and "**Batching:**" in done.text, done.text
    assert ":::" not in done.text
    for cited in citations.citations + more.citations:
        source = (Path(site.settings.vault) / cited.path).read_text()
        assert source[cited.start : cited.end] == cited.text  # the file's own bytes


def test_the_http_api_cites_vitepress_pages(site: KnowledgeBase) -> None:
    with UvicornThread(create_app(site)) as server:
        given = answered(server.url, "What does a computed signal derive its value from?")
    assert "derives its value from other signals" in given["text"]
    assert given["citations"][0]["link"].startswith("lattice/guide/signals#computed")


def test_without_clean_urls_and_base_pages_end_in_html(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    vault = make_vault(
        {
            ".vitepress/config.js": "export default { title: 'X', srcDir: './src' }\n",
            "src/index.md": "# Home\n\nHello.\n",
            "src/guide/getting-started.md": "# Getting started\n\n## Install\n\nRun it.\n",
            "notes.md": "# Outside srcDir\n\nNot a page.\n",
        }
    )
    opened = kb(vault)
    opened.index()
    assert links(opened) == {
        "src/index.md": {""},
        "src/guide/getting-started.md": {"guide/getting-started.html"},
    }


def test_a_base_written_in_code_is_warned_about(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    config = "export default defineConfig({ base: process.env.BASE || '/', title: 'X' })\n"
    vault = make_vault({".vitepress/config.ts": config, "guide.md": "# Guide\n\nText.\n"})
    report = kb(vault).index()
    said = " ".join(text for _, text in report.warnings)
    assert "base is not written literally" in said


def test_kb_qa_index_reads_the_site_without_a_warning(
    tmp_path: Path, run_cli: Callable[..., Any]
) -> None:
    root = write_files(tmp_path / "site", FILES)
    env = {"KBQA_INDEX_DIR": str(tmp_path / "i")}
    result = run_cli("index", str(root), env=env)
    assert result.returncode == 0, result.stderr
    assert "looks like" not in result.stdout + result.stderr
    found = run_cli("search", "computed signal caches", "--vault", str(root), "--json", env=env)
    assert "lattice/guide/signals#computed" in found.stdout, found.stdout


def test_toc_and_details_are_read_as_vitepress_writes_them() -> None:
    page = "[[toc]]\n\n::: details\nHidden text.\n:::\n"
    assert mdx.as_mkdocs(page).split("\n") == ["", "", "!!! details", "    Hidden text.", "", ""]
    assert [b.box for b in passages(page) if "Hidden text." in b.text] == [1]


# mdit-vue/mdit-vue packages/shared/tests/slugify.spec.ts, its TEST_CASES
SLUGIFY_CASES = [
    ("Привет", "привет"),
    ("Лед üäöß", "лед-uaoß"),
    ("hangul 가", "hangul-\u1100\u1161"),  # NFKD: the syllable as its two jamo
    ("ع", "ع"),
    ("ǆℍΩ", "dzhω"),
    ("ｶi⁹", "カi9"),
    ("㌀", "\u30a2\u30cf\u309a\u30fc\u30c8"),  # NFKD: the sound mark stays apart
    ("¼", "_1⁄4"),
    ("ǆℍΩｶi⁹¼", "dzhωカi91⁄4"),
    ("Iлｔèｒｎåｔïｏｎɑｌíƶａｔï߀ԉ", "iлternationɑliƶati߀ԉ"),
    ("ᴎᴑᴅᴇȷʂ", "ᴎᴑᴅᴇȷʂ"),
    ("hambúrguer", "hamburguer"),
    ("hŒllœ", "hœllœ"),
    ("Fußball", "fußball"),
    ("ABCDEFGHIJKLMNOPQRSTUVWXYZé", "abcdefghijklmnopqrstuvwxyze"),
]


@pytest.mark.parametrize(("text", "slug"), SLUGIFY_CASES)
def test_slugify_matches_mdit_vues_own(text: str, slug: str) -> None:
    assert vitepress.slugify(text) == slug


def test_dist_folders_and_src_exclude_are_not_pages(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    # VitePress never builds **/dist/** and the config's srcExclude: kb-qa cited
    # docs/dist/x.md and drafts/idea.md, pages no build writes (404s)
    config = (
        "export default {\n  title: 'X',\n"
        "  srcExclude: ['**/drafts/**', \"notes.md\", './private/*.md'],\n}\n"
    )
    vault = make_vault(
        {
            ".vitepress/config.mts": config,
            "index.md": "# Home\n\nHello.\n",
            "guide/notes.md": "# Notes\n\nA page: srcExclude's notes.md is the root's only.\n",
            "notes.md": "# Root notes\n\nExcluded.\n",
            "dist/x.md": "# Built copy\n\nNot a page.\n",
            "guide/dist/y.md": "# Nested built copy\n\nNot a page.\n",
            "guide/drafts/idea.md": "# Idea\n\nA draft.\n",
            "private/secret.md": "# Secret\n\nExcluded.\n",
        }
    )
    opened = kb(vault)
    report = opened.index()
    assert not report.warnings, report.warnings
    assert links(opened) == {"index.md": {""}, "guide/notes.md": {"guide/notes.html"}}
