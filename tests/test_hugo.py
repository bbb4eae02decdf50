"""A Hugo site: citations at the URLs and heading ids Hugo publishes, drafts, headless
bundles and a bundle's resources left out, TOML front matter and shortcodes never quoted (a
QA pass's Hugo site: every citation a 404, ``_index.md`` cited as ``docs/_index/``, drafts
quoted, ``{#verify}`` in a heading's title and id, ``{{< note >}}`` lines in answers).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from api_helpers import answered, asked
from conftest import write_files
from uvicorn_thread import UvicornThread

from kb_qa.ingest import hugo_headings, mdx
from kb_qa.ingest.vault import LEFT_OUT
from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.serve.app import create_app
from kb_qa.types import IndexReport

INSTALL = """+++
title = "Install Gizmo"
slug = "setup"
weight = 10
+++

## Requirements

You need the flux capacitor version 3 or later.

## Verify the install {#verify}

Run `gizmo --version` to check the install.

{{< note >}}
The frobnicator flag rewrites every widget in place, so commit your work first.
{{< /note >}}

{{% alert title="Warning" color="warning" %}}
Never run gizmo as the root user.
{{% /alert %}}

## Package managers

{{< tabs >}}
{{< tab "yarn" >}}

```bash
yarn add gizmo-cli
```

{{< /tab >}}
{{< /tabs >}}

## Options

The first options.

## Options

The second options.

## Ünïcode & Co.

Accented text.
"""

FILES = {
    "hugo.toml": 'baseURL = "https://example.org/"\ntitle = "Gizmo"\n',
    "content/_index.md": '+++\ntitle = "Gizmo"\n+++\n\nGizmo makes widgets spin.\n',
    "content/docs/_index.md": "---\ntitle: Documentation\n---\n\nThe docs cover sprockets.\n",
    "content/docs/getting-started/install.md": INSTALL,
    "content/blog/first-post/index.md": (
        "---\ntitle: First post\ndate: 2024-03-01\n---\n\nThe first post is about cogwheels.\n"
    ),
    "content/blog/first-post/notes.md": "Notes the post's template reads: no page of its own.\n",
    "content/blog/secret.md": "---\ndraft: true\n---\n\nThe launch is in June.\n",
    "content/about.md": '{\n  "title": "About",\n  "url": "/about-us/"\n}\n\nFounded in 2020.\n',
    "content/shared/index.md": "+++\nheadless = true\n+++\n\nSnippets other pages include.\n",
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[KnowledgeBase, IndexReport]]:
    root = write_files(tmp_path_factory.mktemp("hugo") / "site", FILES)
    kb = KnowledgeBase(root, index_dir=root.parent / "index", embed_model="hash")
    yield kb, kb.index()
    kb.close()


@pytest.fixture
def site(built: tuple[KnowledgeBase, IndexReport]) -> KnowledgeBase:
    return built[0]


def test_no_warning_and_no_unpublished_page(built: tuple[KnowledgeBase, IndexReport]) -> None:
    report = built[1]
    assert not report.warnings, report.warnings  # "looks like a Hugo site" is gone
    assert sorted(path for path, _ in report.skipped) == [
        "content/blog/first-post/notes.md",  # a leaf bundle's resource
        "content/blog/secret.md",  # a draft
        "content/shared/index.md",  # a headless bundle
    ]
    # Said as what it is, not as "a draft blog post: `zensical build` leaves it out"
    assert {why for _, why in report.skipped} == {LEFT_OUT}


def links(kb: KnowledgeBase) -> dict[str, set[str]]:
    """Each indexed file's page URLs (its citation links without their #anchor)."""
    found: dict[str, set[str]] = {}
    for chunk in kb.searchable_chunks():
        found.setdefault(chunk.path, set()).add(chunk.link.split("#")[0])
    return found


def test_pages_are_cited_at_the_urls_hugo_publishes(site: KnowledgeBase) -> None:
    assert links(site) == {
        "content/_index.md": {""},  # the home page
        "content/docs/_index.md": {"docs/"},  # the section's page, not docs/_index/
        "content/docs/getting-started/install.md": {"docs/getting-started/setup/"},  # slug
        "content/blog/first-post/index.md": {"blog/first-post/"},  # a leaf bundle
        "content/about.md": {"about-us/"},  # JSON front matter's url
    }


def test_heading_ids_and_titles_are_hugos(site: KnowledgeBase) -> None:
    sections = {
        chunk.anchor: chunk.heading
        for chunk in site.searchable_chunks()
        if chunk.path.endswith("install.md")
    }
    assert sections["verify"] == "Verify the install"  # not "… {#verify}"
    assert sections["requirements"] == "Requirements"
    assert sections["options"] == sections["options-1"] == "Options"
    assert sections["ünïcode--co"] == "Ünïcode & Co."  # goldmark keeps letters, drops "&"
    titles = {chunk.path: chunk.heading_path[0] for chunk in site.searchable_chunks()}
    assert titles["content/docs/getting-started/install.md"] == "Install Gizmo"  # TOML's


def test_answers_quote_no_shortcodes_nor_front_matter(site: KnowledgeBase) -> None:
    done, first = asked(site, "What does the frobnicator flag do?")
    assert "rewrites every widget in place" in done.text
    done_too, second = asked(site, "How do I add gizmo-cli with yarn?")
    assert "yarn add gizmo-cli" in done_too.text
    for text in (done.text, done_too.text):
        for marker in ("{{<", "{{%", ">}}", "%}}", "+++", 'slug = "setup"'):
            assert marker not in text
    vault = Path(site.settings.vault)
    for cited in first.citations + second.citations:
        source = (vault / cited.path).read_text(encoding="utf-8")
        assert source[cited.start : cited.end] == cited.text  # the file's own bytes
    assert not any("launch is in June" in c.text for c in site.searchable_chunks())  # a draft


def test_the_http_api_cites_hugo_urls(site: KnowledgeBase) -> None:
    with UvicornThread(create_app(site)) as server:
        given = answered(server.url, "How do I verify the install of gizmo?")
    assert "gizmo --version" in given["text"]
    assert given["citations"][0]["link"].startswith("docs/getting-started/setup/#verify")


def test_config_settings_move_urls_and_ids(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    config = (
        "baseURL: https://example.org/\ncontentDir: pages\nuglyURLs: true\n"
        "permalinks:\n  page:\n    posts: /:year/:month/:slug/\n"
        "markup:\n  goldmark:\n    parser:\n      autoHeadingIDType: blackfriday\n"
    )
    post = "---\ntitle: Big News!\ndate: 2024-03-09T10:00:00Z\n---\n\n## Ünïcode & Co.\n\nHi.\n"
    vault = make_vault(
        {
            "config/_default/hugo.yaml": config,
            "pages/posts/big-news.md": post,
            "pages/guide/Getting Started.md": "## Set up: first steps\n\nRun it.\n",
        }
    )
    opened = kb(vault)
    opened.index()
    assert {c.link for c in opened.searchable_chunks()} == {
        "2024/03/big-news.html#ünïcode-co",  # :slug from the title, ugly, blackfriday's id
        "guide/getting-started.html#set-up-first-steps",  # lowercased, a space as "-"
    }


def test_an_unread_permalink_token_is_warned_about(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    config = '[permalinks]\nposts = "/:06/:1/:slugs/"\n'
    vault = make_vault({"hugo.toml": config, "content/posts/hello.md": "# Hello\n\nHi.\n"})
    opened = kb(vault)
    report = opened.index()
    said = " ".join(text for _, text in report.warnings)
    assert ":06" in said and "default layout" in said
    assert {c.link.split("#")[0] for c in opened.searchable_chunks()} == {"posts/hello/"}


def test_given_the_content_folder_kb_qa_reads_no_config_outside_it(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    site = make_vault({"hugo.toml": "uglyURLs = true\n", "content/intro.md": "## Setup\n\nRun.\n"})
    opened = kb(site / "content")
    report = opened.index()
    assert {c.link for c in opened.searchable_chunks()} == {"intro/#setup"}  # the default
    said = " ".join(text for _, text in report.warnings)
    assert "outside the vault" in said and str(site) in said


def test_a_config_toml_without_base_url_is_no_hugo_site(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    # Zola's config.toml says base_url: its folder is no Hugo site.
    vault = make_vault({"config.toml": 'base_url = "/"\n', "content/a.md": "# A\n\nText.\n"})
    opened = kb(vault)
    opened.index()
    assert {c.link.split("#")[0] for c in opened.searchable_chunks()} == {"content/a.md"}


@pytest.mark.parametrize(
    ("text", "kind", "anchor"),
    [
        ("Ünïcode & Co.", "github", "ünïcode--co"),
        ("Ünïcode & Co.", "github-ascii", "unicode--co"),
        ("Ünïcode & Co.", "blackfriday", "ünïcode-co"),
        ("snake_case -- and dashes", "github", "snake_case----and-dashes"),
        ("Step 1: Install (v2.0)", "github", "step-1-install-v20"),
    ],
)
def test_goldmark_ids(text: str, kind: str, anchor: str) -> None:
    assert hugo_headings.auto_id(text, kind) == anchor


def test_shortcodes_are_blanked_line_for_line() -> None:
    page = (
        '{{< figure src="a.png"\n  caption="A" >}}\nText {{< icon "x" >}} here.\n'
        "```go\n{{< note >}}\n```\n{{</* note */>}}\r\n"
    )
    out = mdx.as_mkdocs(page)
    assert out.split("\n") == [
        "",
        "",
        "Text  here.",
        "```go",
        "{{< note >}}",
        "```",
        "{{</* note */>}}\r",
        "",
    ]


def test_content_index_md_is_the_home_page_and_a_leaf_bundle(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    # kb-qa cited content/index.md at index/; hugo 0.168 publishes it at / and, the home
    # page being a leaf bundle then, no other page (docs/a.md is its resource)
    vault = make_vault(
        {
            "hugo.toml": 'baseURL = "https://example.org/"\n',
            "content/index.md": "---\ntitle: Home\n---\n\nThe home of sprockets.\n",
            "content/docs/a.md": "---\ntitle: A\n---\n\nA page of sprockets.\n",
        }
    )
    opened = kb(vault)
    report = opened.index()
    assert {c.link for c in opened.searchable_chunks()} == {""}
    assert [path for path, _ in report.skipped] == ["content/docs/a.md"]
