"""A page read from its HTML (a snippet include, the macros plugin) quotes a block's title
with what it heads, as a page read from its source does.

A QA pass on a Material site with mkdocs-macros-plugin (every page then is read from its
built HTML) found answers that were a title alone: "What is the retention horizon?" quoted
"Retention horizon", "Why open the firewall?" the admonition's title; tab labels ran together
as "DebianDocker" and footnotes read "points1".
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import markdown

from kb_qa.answer import extractive
from kb_qa.answer.answering import prepare
from kb_qa.ingest.rendered_chunks import html_to_markdown
from kb_qa.kb.knowledge_base import KnowledgeBase

SITE = {
    "mkdocs.yml": (
        "site_name: Orbit\n"
        "markdown_extensions:\n"
        "  - toc\n  - admonition\n  - def_list\n  - footnotes\n  - pymdownx.details\n"
        "  - pymdownx.superfences\n"
        "  - pymdownx.tabbed:\n      alternate_style: true\n"
        "  - pymdownx.snippets:\n      base_path: [includes]\n"
    ),
    # The include makes the build change the page: it is read from its HTML.
    "docs/index.md": (
        "# Setup\n\n"
        '--8<-- "note.md"\n\n'
        "## First start\n\n"
        '!!! warning "Open the firewall"\n'
        "    Orbit nodes gossip on UDP port 7946; blocked, the cluster never forms.\n\n"
        '??? note "Sizing the ingest buffer"\n'
        "    Set the ingest buffer to four times the peak write volume.\n\n"
        "## Glossary\n\n"
        "Retention horizon\n"
        ":   The age after which Orbit deletes raw points, 400 days by default.\n\n"
        "## Installing\n\n"
        '=== "Debian"\n\n'
        "    The package creates the orbit user with UID 781.\n\n"
        '=== "Docker"\n\n'
        "    Mount a volume at /var/lib/orbit, or a restart loses the log.\n\n"
        "## Dashboard\n\n"
        '=== "Screenshot"\n\n    ![The dashboard](dash.png)\n\n'
        '=== "Why a dashboard?"\n\n    Operators watch the ingest lag on it.\n\n'
        "The dashboard refreshes every 15 seconds.\n\n"
        "## Networking\n\n"
        '!!! question "Does Orbit listen on IPv6?"\n'
        "    Yes: every Orbit port listens on IPv6 as well as IPv4.\n\n"
        "## Limits\n\n"
        "A query scans at most 50 million points[^scan].\n\n"
        "[^scan]: The scan limit counts points before any filter.\n"
    ),
    "includes/note.md": "Read this page before the first start.\n",
}


def test_titles_of_blocks_lead_what_they_head(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    base = kb(make_vault(SITE))
    base.index()
    text = "\n".join(c.text for c in base.store.chunks())
    assert "Read this page before the first start." in text  # read from the HTML
    for lead_in in (
        "**Open the firewall:**",
        "**Sizing the ingest buffer:**",
        "**Retention horizon:**",
        "**Debian:**\n\nThe package creates",
        "**Docker:**\n\nMount a volume",
        "points[^scan].",
        "[^scan]: The scan limit counts points before any filter.",
    ):
        assert lead_in in text, text
    assert "**Does Orbit listen on IPv6?**\n\nYes: every" in text  # asks: no colon
    assert "**Why a dashboard?**\n\nOperators watch" in text  # a tab's label too
    assert "DebianDocker" not in text and "↩" not in text
    for question, quoted in (
        ("What is the retention horizon?", "400 days by default"),
        ("Why open the firewall?", "UDP port 7946"),
        ("How big should the ingest buffer be?", "four times the peak"),
        ("Which UID does the Debian package create?", "UID 781"),
        ("Where is the Docker volume mounted?", "/var/lib/orbit"),
    ):
        prepared = prepare(base, base.settings, question, ())
        answer = "".join(extractive.quote_prepared(prepared).pieces)
        assert quoted in answer, (question, answer)


def test_a_highlighted_block_keeps_its_language_and_title(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    """A Material page with a snippet (read from its HTML) quoted ``` yaml title="lumen.yaml"
    linenums="1"``` as a bare fence, its language and title gone, where the same page
    without a snippet keeps both."""
    site = {
        "mkdocs.yml": (
            "site_name: Lumen\nmarkdown_extensions:\n  - pymdownx.superfences\n"
            "  - pymdownx.highlight:\n      anchor_linenums: true\n      line_spans: __span\n"
            "      pygments_lang_class: true\n"
            "  - pymdownx.snippets:\n      base_path: [includes]\n"
        ),
        "docs/index.md": (
            '# Setup\n\n--8<-- "note.md"\n\n## Ports\n\nSet the port in the config:\n\n'
            '``` yaml title="lumen.yaml" linenums="1"\nport: 8080\nhost: 0.0.0.0\n```\n\n'
            '``` python title="start.py"\nimport lumen\nlumen.serve()\n```\n'
        ),
        "includes/note.md": "Read this page first.\n",
    }
    base = kb(make_vault(site))
    base.index()
    text = "\n".join(c.text for c in base.store.chunks())
    assert "Read this page first." in text  # read from the HTML
    assert "**lumen.yaml:**\n\n```yaml\nport: 8080\nhost: 0.0.0.0\n```" in text, text
    assert "**start.py:**\n\n```python\nimport lumen\nlumen.serve()\n```" in text, text


def test_a_block_title_leads_its_code_without_pygments_lang_class() -> None:
    """Without ``pygments_lang_class`` (the tester's own site) the HTML names no language,
    and the title stood as a loose line over the fence: it leads the code still."""
    source = '``` yaml title="lumen.yaml"\nport: 8080\n```\n'
    for config in ({}, {"linenums": True}):
        md = markdown.Markdown(
            extensions=["pymdownx.highlight", "pymdownx.superfences"],
            extension_configs={"pymdownx.highlight": config},
        )
        assert html_to_markdown(md.convert(source)) == "**lumen.yaml:**\n\n```\nport: 8080\n```\n"
