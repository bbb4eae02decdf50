"""A Docusaurus site: its .mdx pages indexed, citations at the URLs and ids Docusaurus
serves, its admonitions, tabs and imports never quoted as text (a QA tester's
typescript-eslint and prettier docs: every .mdx skipped, every citation a 404, ``:::``
lines in answers).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from api_helpers import answered, asked
from conftest import write_files
from uvicorn_thread import UvicornThread

from kb_qa.answer.blocks import passages
from kb_qa.ingest import mdx
from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.serve.app import create_app

CONFIG = """// @ts-check
const config = {
  title: 'Widgets',
  baseUrl: '/',
  presets: [['classic', {docs: {sidebarPath: './sidebars.js'}, blog: {showReadingTime: true}}]],
};
export default config;
"""

INSTALLATION = """---
description: How to install Widgets.
---

# Installation

```mdx-code-block
import Tabs from '@theme/Tabs';
import TabItem from '@theme/TabItem';
```

Widgets is a set of npm packages.

:::tip[Fast track]

Read the quick tour to learn Widgets in five minutes.

:::

## Requirements {#requirements}

- Node.js version 18.0 or above (check it by running `node -v`).

## Install the package {/* #install-it */}

<Tabs groupId="package-manager">
<TabItem value="npm" label="npm">

```bash
npm install --save-dev widgetsmith
```

</TabItem>
<TabItem value="yarn" label="Yarn">

```bash
yarn add --dev widgetsmith
```

</TabItem>
</Tabs>

## Options

:::warning Heads up

The frobnicator flag rewrites every widget in place, so commit your work before using it.

:::

## Options

A second options section.
"""

FILES = {
    "docusaurus.config.js": CONFIG,
    "docs/installation.mdx": INSTALLATION,
    "docs/01-intro.md": "# Intro\n\nWidgets draw gadgets on a canvas.\n",
    "docs/guides/index.mdx": "---\ntitle: Guides\n---\n\nThe guides explain sprockets.\n",
    "docs/guides/02-deploy.mdx": (
        "---\nid: shipping\n---\n\n# Deploying\n\nDeploy sprockets with the launcher.\n"
    ),
    "docs/guides/moved.md": "---\nslug: /elsewhere/moved\n---\n\n# Moved\n\nCogwheels live here.\n",
    "docs/_partial.mdx": "Nothing a page shows on its own: partials are imported.\n",
}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    root = write_files(tmp_path_factory.mktemp("docusaurus") / "site", FILES)
    kb = KnowledgeBase(root, index_dir=root.parent / "index", embed_model="hash")
    report = kb.index()
    assert not report.skipped, report.skipped
    yield kb
    kb.close()


ask = asked


def links(kb: KnowledgeBase) -> dict[str, set[str]]:
    """Each indexed file's page URLs (its citation links without their #anchor)."""
    found: dict[str, set[str]] = {}
    for chunk in kb.searchable_chunks():
        found.setdefault(chunk.path, set()).add(chunk.link.split("#")[0])
    return found


def test_mdx_pages_are_indexed_at_the_urls_docusaurus_serves(site: KnowledgeBase) -> None:
    found = links(site)
    assert "docs/_partial.mdx" not in found  # a partial is no page
    assert found["docs/01-intro.md"] == {"docs/intro"}  # no number prefix, no ".md", no "/"
    assert found["docs/guides/index.mdx"] == {"docs/guides/"}  # the folder's page
    assert found["docs/guides/02-deploy.mdx"] == {"docs/guides/shipping"}  # front matter id
    assert found["docs/guides/moved.md"] == {"docs/elsewhere/moved"}  # an absolute slug
    assert found["docs/installation.mdx"] == {"docs/installation"}


def test_explicit_heading_ids_and_github_slugs(site: KnowledgeBase) -> None:
    sections = {
        chunk.anchor: chunk.heading
        for chunk in site.searchable_chunks()
        if chunk.path == "docs/installation.mdx"
    }
    assert sections["requirements"] == "Requirements"  # not "Requirements {#requirements}"
    assert sections["install-it"] == "Install the package"  # newer Docusaurus' {/* #id */}
    assert sections["options"] == sections["options-1"] == "Options"  # github-slugger's -1


def test_answers_quote_no_mdx_markup(site: KnowledgeBase) -> None:
    done, citations = ask(site, "What does the frobnicator flag do?")
    assert "rewrites every widget in place" in done.text
    assert "**Heads up:**" in done.text  # the admonition's title as its lead-in
    done, more = ask(site, "How do I install widgetsmith with yarn?")
    assert "yarn add --dev widgetsmith" in done.text
    for marker in (":::", "<TabItem", "</Tabs>", "import Tabs"):
        assert marker not in done.text
    for cited in citations.citations + more.citations:
        source = (Path(site.settings.vault) / cited.path).read_text()
        assert source[cited.start : cited.end] == cited.text  # the file's own bytes


def test_the_http_api_cites_docusaurus_routes(site: KnowledgeBase) -> None:
    with UvicornThread(create_app(site)) as server:
        given = answered(server.url, "Which Node.js version is required?")
    assert "version 18.0 or above" in given["text"]
    assert ":::" not in given["text"] and "import" not in given["text"]
    first = given["citations"][0]
    assert first["link"].startswith("docs/installation#requirements"), first


def test_route_base_path_read_from_the_config(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    # typescript-eslint's config: two docs plugins, its own at "/" and the rules' at /rules/.
    config = (
        "const docs = {path: '../eslint-plugin/docs/rules', routeBasePath: 'rules'};\n"
        "const base = {id: 'base-docs', path: '../../docs', routeBasePath: '/'};\n"
    )
    vault = make_vault({"docusaurus.config.mts": config, "docs/Quickstart.mdx": QUICKSTART})
    opened = kb(vault)
    opened.index()
    assert "getting-started/#step-1-installation" in {c.link for c in opened.searchable_chunks()}


def test_a_changed_route_base_path_readdresses_the_index(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    # The fingerprint lacked it: an index built before kept citing the old routes.
    config = "export default {presets: [['classic', {docs: {routeBasePath: 'docs'}}]]};\n"
    vault = make_vault(
        {"docusaurus.config.js": config, "docs/intro.md": "# Intro\n\n## Setup\n\nRun it.\n"}
    )
    opened = kb(vault)
    opened.index()
    assert {c.link for c in opened.searchable_chunks()} >= {"docs/intro#setup"}
    (vault / "docusaurus.config.js").write_text(
        config.replace("'docs'", "'guide'"), encoding="utf-8"
    )
    report = opened.index()
    assert report.rebuilt, report
    assert {c.link for c in opened.searchable_chunks()} >= {"guide/intro#setup"}


QUICKSTART = """---
id: quickstart
title: Getting Started
slug: /getting-started/
---

import Tabs from '@theme/Tabs';

## Quickstart

### Step 1: Installation

```bash
npm install --save-dev eslint typescript typescript-eslint
```
"""


def test_mdx_outside_a_docusaurus_site_is_reported(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    vault = make_vault({"install.md": "# Install\n\nRun it.\n", "setup.mdx": "# Setup\n"})
    report = kb(vault).index()
    assert [path for path, _ in report.skipped] == ["setup.mdx"]
    assert "Docusaurus" in report.skipped[0][1]


def test_an_mkdocstrings_directive_is_no_admonition() -> None:
    # "::: mypkg.client.Client" on an MkDocs page read as a Docusaurus admonition titled
    # ".client.Client", and every line after it as inside it.
    page = "## API\n\n::: mypkg.client.Client\n    options:\n      show_source: false\n\nMore.\n"
    assert mdx.as_mkdocs(page) == page
    assert [b.box for b in passages(page) if b.text == "More."] == [0]


def test_given_the_docs_folder_kb_qa_reads_no_config_outside_it(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    # The site's config sits above the docs folder kb-qa was given: its routeBasePath was
    # read from outside the vault.
    config = "export default {presets: [['classic', {docs: {routeBasePath: 'guide'}}]]};\n"
    site = make_vault(
        {"docusaurus.config.js": config, "docs/intro.md": "# Intro\n\n## Setup\n\nRun.\n"}
    )
    opened = kb(site / "docs")
    report = opened.index()
    assert {c.link for c in opened.searchable_chunks()} >= {"docs/intro#setup"}  # the default
    said = " ".join(text for _, text in report.warnings)
    assert "outside the vault" in said and str(site) in said
