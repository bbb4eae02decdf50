"""kb-qa's heading anchors equal the ids of a real ``mkdocs build`` and of a real
``zensical build`` (logic in tests/parity.py).

sample_site must match 100% (as it is, and as a Zensical project with its own zensical.toml);
each public corpus present beside the repo (``../shared/corpora`` or ``KBQA_CORPORA``) at least
99%. All five sites build in about 30 s here with MkDocs, about 60 s with Zensical.

The corpora reach 100% with each generator in a process of its own (``bench/anchor_parity.py``
runs them so). In this one process a few headings with icons differ: Material's and
Zensical's emoji indexes both add their icons to pymdownx's shared ``twemoji_db`` dict, and
the one loaded second renders with the first one's icon files (pydantic 572/575 under
Zensical after MkDocs). A site is only ever rendered by one of them, so kb-qa does not undo it.
"""

from __future__ import annotations

from pathlib import Path

import parity  # tests/ is on sys.path under pytest
import pytest

SITES = parity.sites()


@pytest.mark.parametrize("generator", parity.GENERATORS)
@pytest.mark.parametrize("name", ["sample_site", *parity.CORPORA])
def test_anchor_parity(name: str, generator: str) -> None:
    if name not in SITES:
        pytest.skip(f"corpus {name} not found under {parity.corpora_dir()}")
    if generator == "zensical" and not parity.zensical_installed():
        pytest.skip("zensical is not installed (pip install -e '.[test]')")
    result = parity.check_site(name, SITES[name], generator=generator)
    _assert_parity(name, result, 100.0 if name == "sample_site" else 99.0)


def _assert_parity(name: str, result: parity.SiteResult, required: float) -> None:
    misses = "\n".join(
        f"{m.page}: ours={m.ours!r} rendered={m.rendered or None!r} h{m.level} {m.heading!r}"
        for m in result.misses
    )
    assert result.pages > 0 and result.headings > 0, f"{name}: nothing was compared"
    assert not result.unbuilt, f"{name}: no HTML at the url_for path of {result.unbuilt}"
    assert result.percent >= required, (
        f"{name}: {result.matched}/{result.headings} anchors match ({result.percent:.2f}%)\n"
        f"{misses}"
    )


@pytest.mark.skipif(not parity.zensical_installed(), reason="zensical is not installed")
def test_anchor_parity_zensical_toml(tmp_path: Path) -> None:
    """sample_site as a Zensical project: zensical.toml's dotted extension tables, a custom
    slugify given as {object, kwds}, use_directory_urls = false and exclude_docs are read as
    Zensical reads them (every page is found at the URL kb-qa gives it)."""
    root = parity.zensical_sample_site(tmp_path)
    result = parity.check_site("sample_site_toml", root, generator="zensical")
    _assert_parity("sample_site_toml", result, 100.0)
    assert result.pages == 17  # changelog.md is excluded


def test_zensical_toml_settings(tmp_path: Path) -> None:
    from kb_qa.ingest.site import load_site

    root = parity.zensical_sample_site(tmp_path)
    site = load_site(root)
    assert (site.generator, site.config_name) == ("zensical", "zensical.toml")
    assert site.site_url == "https://lumen.example.com/docs/"
    assert site.url_for("guides/retries.md") == "guides/retries.html"
    assert site.url_for("index.md") == "index.html"
    assert site.excluded.match_file("changelog.md")
    # Zensical's superfences stands in for MkDocs' fenced_code; the slugify is a function.
    assert "pymdownx.superfences" in site.extensions and "fenced_code" not in site.extensions
    assert callable(site.extension_configs["toc"]["slugify"])
    assert site.warnings == []
    headings = parity.kbqa_headings(site)["zh/quickstart.md"]
    assert all("-" not in h.anchor for h in headings)  # separator "_"
    assert any(any(ord(ch) > 127 for ch in h.anchor) for h in headings)  # Unicode kept


def test_zensical_defaults_without_markdown_extensions(tmp_path: Path) -> None:
    """Zensical renders a site that sets no markdown_extensions with its own defaults
    (attr_list among them): a mkdocs.yml built by Zensical needs generator "zensical"."""
    from kb_qa.ingest.site import load_site

    (tmp_path / "docs").mkdir()
    (tmp_path / "mkdocs.yml").write_text("site_name: Plain\n", encoding="utf-8")
    mkdocs_site = load_site(tmp_path)
    zensical_site = load_site(tmp_path, "zensical")
    assert "attr_list" not in mkdocs_site.extensions
    assert {"attr_list", "pymdownx.tabbed", "pymdownx.emoji"} <= set(zensical_site.extensions)


def test_a_mkdocs_yml_site_zensical_built_is_said_to_need_its_rules(tmp_path: Path) -> None:
    """A site owner who moved to Zensical kept mkdocs.yml: `## Custom id {#my-custom}` is
    `#my-custom` on Zensical's page and `#custom-id-my-custom` in kb-qa's citations, and
    nothing said to set KBQA_GENERATOR. The built home page names its generator."""
    import subprocess

    from kb_qa.ingest.site import load_site

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# W\n\n## Custom id {#my-custom}\n")
    (tmp_path / "mkdocs.yml").write_text("site_name: Plain\n", encoding="utf-8")
    assert not load_site(tmp_path).warnings  # never built
    subprocess.run(
        [parity.zensical_command(), "build"], cwd=tmp_path, check=True, capture_output=True
    )
    said = load_site(tmp_path).warnings
    assert len(said) == 1 and "KBQA_GENERATOR=zensical" in said[0], said
    assert not load_site(tmp_path, "zensical").warnings  # told: nothing to say
    assert not load_site(tmp_path, "mkdocs").warnings  # chosen on purpose
    (tmp_path / "site" / "index.html").write_text('<meta name="generator" content="mkdocs-1.6">')
    assert not load_site(tmp_path).warnings


TRICKY_CONFIG = """\
site_name: Tricky
theme:
  name: material
markdown_extensions:
  - toc:
      permalink: true
  - admonition
  - attr_list
  - md_in_html
  - pymdownx.highlight
  - pymdownx.superfences
  - pymdownx.emoji:
      emoji_index: !!python/name:material.extensions.emoji.twemoji
      emoji_generator: !!python/name:material.extensions.emoji.to_svg
  - pymdownx.tabbed:
      alternate_style: true
"""

TRICKY_PAGE = """\
# Tricky page

## Setup

``` yaml hl_lines="2"
a: 1
b: 2
```

## Setup

Seven raw HTML headings (no ids) before the next Markdown heading:

<h4>One</h4>
<h4>Two</h4>
<h4>Three</h4>
<h4>Four</h4>
<h4>Five</h4>
<h4>Six</h4>
<h4>Seven</h4>

## Overlapping [`TypedDict`][typing.TypedDict] fields {#overlap}

!!! note

    ### Inside a note

=== "Tab A"

    ### Inside a tab

## Emoji :smile: heading

## 安装步骤

## 配置

<div class="grid" markdown>

## In a grid

</div>

## C++ & Python: 100% fun!

### Setup
"""


@pytest.mark.parametrize("directory_urls", [True, False])
def test_anchor_parity_tricky_page(tmp_path: Path, directory_urls: bool) -> None:
    """Cases that once broke parity: a fence with ``hl_lines`` (only valid with Pygments),
    a run of raw HTML headings, an undefined reference link in a heading; with both URL
    styles so that the source -> HTML mapping of ``Site.url_for`` is exercised too."""
    site = tmp_path / "tricky"
    (site / "docs" / "guide").mkdir(parents=True)
    config = TRICKY_CONFIG + f"use_directory_urls: {str(directory_urls).lower()}\n"
    (site / "mkdocs.yml").write_text(config, encoding="utf-8")
    (site / "docs" / "index.md").write_text(TRICKY_PAGE, encoding="utf-8")
    (site / "docs" / "guide" / "setup.md").write_text(TRICKY_PAGE, encoding="utf-8")
    result = parity.check_site("tricky", site)
    # The headings inside a note and a tab are not Markdown headings to markdown-it, but
    # the rendered page has them: kb-qa chunks such a page from its HTML.
    assert (result.pages, result.headings, result.matched, result.misses) == (2, 24, 24, [])
    assert result.extra == []


def test_page_headings_reads_main_content_only() -> None:
    page = """<html><body>
    <div class="modal"><h4 id="keyboardModalLabel">Keyboard</h4></div>
    <div class="md-content"><article class="md-content__inner">
      <h1>Title without id</h1>
      <h2 id="intro">Intro<a class="headerlink" href="#intro">&para;</a></h2>
      <div><h3 id="deep"><a class="toclink" href="#deep">Deep <code>x</code></a></h3></div>
    </article></div>
    <footer><h2 id="footer">Footer</h2></footer>
    </body></html>"""
    headings = parity.page_headings(page)
    assert [(h.level, h.text, h.anchor) for h in headings] == [
        (2, "Intro", "intro"),
        (3, "Deep x", "deep"),
    ]


def test_compare_page_reports_wrong_and_missing_ids() -> None:
    from kb_qa.types import Heading

    ours = [Heading(1, "A", "a"), Heading(2, "B", "b_1"), Heading(2, "C", "c")]
    rendered = [Heading(1, "A", "a"), Heading(3, "Nested", "nested"), Heading(2, "B", "b")]
    result = parity.compare_page("p.md", ours, rendered)
    assert result.matched == 1
    assert [(m.ours, m.rendered) for m in result.misses] == [("b_1", "b"), ("c", "")]
    assert [h.anchor for h in result.extra] == ["nested"]


def test_unknown_generator_is_a_clear_error(tmp_path: Path) -> None:
    from kb_qa.errors import ConfigError
    from kb_qa.ingest.site import load_site

    with pytest.raises(ConfigError, match="use mkdocs, zensical or leave it empty"):
        load_site(tmp_path, "hugo")


@pytest.mark.skipif(not parity.zensical_installed(), reason="zensical is not installed")
def test_zensical_builds_the_pages_kb_qa_indexes(tmp_path: Path) -> None:
    """Dotfiles, templates/ and exclude_docs are left out by a real zensical build and by
    kb-qa alike; every other page is built at the URL kb-qa gives it."""
    import subprocess

    from kb_qa.ingest.site import load_site
    from kb_qa.ingest.vault import scan
    from kb_qa.settings import Settings

    pages = ["index.md", "a/b.md", "a/README.md", "templates/t.md", ".hid/h.md", ".dot.md"]
    pages += ["drafts/skip.md"]
    for page in pages:
        (tmp_path / "docs" / page).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "docs" / page).write_text(f"# {page}\n", encoding="utf-8")
    (tmp_path / "zensical.toml").write_text(
        '[project]\nsite_name = "X"\nexclude_docs = """\ndrafts/\n"""\n', encoding="utf-8"
    )
    subprocess.run(
        [parity.zensical_command(), "build"], cwd=tmp_path, check=True, capture_output=True
    )
    site = load_site(tmp_path)
    files, _ = scan(site, Settings(vault=tmp_path, index_dir=tmp_path / "idx"))
    indexed = sorted(f.doc_path for f in files)
    assert indexed == ["a/README.md", "a/b.md", "index.md"]
    built = sorted(
        p.relative_to(tmp_path / "site").as_posix()
        for p in (tmp_path / "site").rglob("*.html")
        if p.name != "404.html"
    )
    assert built == sorted(
        parity.html_path(site, Path("."), d).as_posix().removeprefix("./") for d in indexed
    )


@pytest.mark.parametrize("name", ["sample_site", *parity.CORPORA])
def test_index_matches_a_build_with_the_sites_hooks(name: str) -> None:
    """``kb-qa index`` against a real ``mkdocs build`` that runs the site's own hooks and
    installed plugins (mkdocs-material's docs: its shortcode and translation hooks, the blog
    plugin's dated URLs): at least 99% of the rendered heading ids of content pages have a
    chunk, no chunk anchor is missing from its built page, and every chunk URL was built."""
    if name not in SITES:
        pytest.skip(f"corpus {name} not found under {parity.corpora_dir()}")
    result = parity.check_rendered(name, SITES[name])
    assert result.pages > 0 and result.ids > 0, f"{name}: nothing was compared"
    assert result.missing_anchor == [], f"{name}: chunk anchors the built pages lack"
    assert sorted(set(result.missing_url)) == [], f"{name}: chunk URLs the build lacks"
    assert result.percent >= (100.0 if name == "sample_site" else 99.0), (
        f"{name}: {result.covered}/{result.ids} rendered ids have a chunk; "
        f"without one: {result.uncovered[:20]}"
    )


@pytest.mark.skipif(not parity.zensical_installed(), reason="zensical is not installed")
@pytest.mark.parametrize(
    "plugins",
    [
        "[project.plugins.offline]\n",
        'plugins = ["search", "material/offline"]\n',
        "[project.plugins.offline]\nenabled = false\n",
    ],
)
def test_zensical_offline_plugin_urls(tmp_path: Path, plugins: str) -> None:
    """Zensical's offline plugin builds ``page.html`` (use_directory_urls off); kb-qa linked
    citations to ``page/``, which that build does not have."""
    import subprocess

    from kb_qa.ingest.site import load_site

    for page in ("index.md", "guide/setup.md"):
        (tmp_path / "docs" / page).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "docs" / page).write_text("# Page\n\n## Section\n", encoding="utf-8")
    if plugins.startswith("plugins"):
        config = f'[project]\nsite_name = "X"\n{plugins}'
    else:
        config = f'[project]\nsite_name = "X"\n\n{plugins}'
    (tmp_path / "zensical.toml").write_text(config, encoding="utf-8")
    subprocess.run(
        [parity.zensical_command(), "build"], cwd=tmp_path, check=True, capture_output=True
    )
    site = load_site(tmp_path)
    for doc_path in ("index.md", "guide/setup.md"):
        url = site.url_for(doc_path)
        built = parity.built_page(tmp_path / "site", url)
        assert built.is_file(), f"{doc_path}: {url} was not built"
        assert url.endswith(".html") == ("enabled = false" not in plugins), url


BLOG_POSTS = {
    "hello.md": "---\ndate: 2024-03-01\n---\n\n# Hello post\n\n## Details\n",
    "u.md": "---\ndate:\n  created: 2024-05-02\n---\n\n# Ünïcode: C++ & more!\n\n## Why\n",
    "s.md": "---\ndate: 2024-06-03\nslug: custom-slug\n---\n\n# Whatever\n\n## More\n",
    "t.md": "---\ndate: 2024-07-04\ntitle: Meta title\n---\n\n# H1 differs\n\n## Body\n",
    "c.md": "---\ndate: 2024-09-06 10:00:00\ncategories:\n  - Big News\n---\n\n# Cat post\n",
    "d.md": "---\ndate: 2024-08-05\ndraft: true\n---\n\n# Draft post\n\nUnpublished.\n",
}


@pytest.mark.skipif(not parity.zensical_installed(), reason="zensical is not installed")
@pytest.mark.parametrize(
    "blog",
    [
        "[project.plugins.blog]\n",
        '[project.plugins.blog]\nblog_dir = "news"\npost_url_format = "{categories}/{slug}"\n'
        'post_url_date_format = "yyyy/MM"\n',
        "use_directory_urls = false\n"
        'plugins = [{ blog = { post_url_format = "{date}/{file}" } }]\n',
    ],
)
def test_zensical_blog_posts_are_cited_where_the_build_publishes_them(
    tmp_path: Path, blog: str
) -> None:
    """Zensical's blog publishes ``blog/posts/hello.md`` at ``blog/2024/03/01/hello-post/``
    and leaves drafts out; kb-qa linked ``blog/posts/hello/`` (a 404) and quoted drafts."""
    import re
    import subprocess
    from urllib.parse import unquote

    blog_dir = "news" if "news" in blog else "blog"
    (tmp_path / "docs" / blog_dir / "posts").mkdir(parents=True)
    (tmp_path / "docs" / "index.md").write_text("# Home\n", encoding="utf-8")
    (tmp_path / "docs" / blog_dir / "index.md").write_text("# Blog\n", encoding="utf-8")
    for name, text in BLOG_POSTS.items():
        (tmp_path / "docs" / blog_dir / "posts" / name).write_text(text, encoding="utf-8")
    sep = "" if blog.startswith("use_") else "\n"
    config = f'[project]\nsite_name = "B"\n{sep}{blog}'
    (tmp_path / "zensical.toml").write_text(config, encoding="utf-8")
    subprocess.run(
        [parity.zensical_command(), "build"], cwd=tmp_path, check=True, capture_output=True
    )
    chunks = parity.kbqa_chunks(tmp_path)
    assert {c.path.rsplit("/", 1)[-1] for c in chunks} == {"index.md", *BLOG_POSTS} - {"d.md"}
    assert not [c for c in chunks if "Unpublished" in c.text]  # the draft is not built
    for chunk in chunks:
        page = parity.built_page(tmp_path / "site", chunk.url)
        assert page.is_file(), f"{chunk.path}: {chunk.url} was not built"
        # Any id of the page: the blog's index lists its posts outside the main article.
        ids = re.findall(r'\sid="([^"]*)"', page.read_text(encoding="utf-8"))
        assert unquote(chunk.anchor) in ids, f"{chunk.link}: no such id"
    urls = {c.path.rsplit("/", 1)[-1]: c.url for c in chunks}
    if "{categories}" in blog:
        assert urls["c.md"] == "news/big-news/cat-post/"
        assert urls["hello.md"] == "news/hello-post/"  # no categories: no folder
    elif "{file}" in blog:
        assert urls["hello.md"] == "blog/2024/03/01/hello.html"
    else:
        assert urls["hello.md"] == "blog/2024/03/01/hello-post/"
        assert urls["s.md"] == "blog/2024/06/03/custom-slug/"
        assert urls["t.md"] == "blog/2024/07/04/meta-title/"
