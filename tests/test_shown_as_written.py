"""What Pi-hole's and Mealie's MkDocs Material docs show, and what kb-qa showed instead: a
footnotes marker taken for a pymdownx block (the page read from its HTML), abbreviation
definitions and an include line quoted in a no-key answer, a table row's raw ``<br/>``, and
a nav title's HTML in every citation label. Sites are built and indexed for real (real
``mkdocs build``, a real KnowledgeBase with the hash embedder)."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from kb_qa.answer.blocks import reading_text
from kb_qa.answer.extractive import quote
from kb_qa.ingest.render import transformed
from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.types import Chunk, Hit
from tests.test_render import mkdocs_build

KB = Callable[..., KnowledgeBase]


def _section(text: str) -> Chunk:
    return Chunk(
        "c", "docs/api.md", "api/", "errors", "Errors", ("API", "Errors"), 2, text,
        0, len(text), 1, 1 + text.count("\n"), "h",
    )  # fmt: skip


def _answer(question: str, text: str) -> tuple[str, str]:
    """What the answer to ``question`` highlights of ``text``, and what it shows."""
    result = quote(question, [(1, Hit(_section(text), 1.0))])
    a, b = result.quoted[1]
    return text[a:b], "".join(result.pieces)


# 1 -----------------------------------------------------------------------------------------

TUTORIAL = (
    "# Tutorial\n\n## Character classes\n\n"
    "|Class|Matches|\n|-|-|\n|`[[:digit:]]`|digits[^*]|\n\n"
    "///Footnotes Go Here///\n\n"
    "[^*]: FTL matches case-insensitive by default\n"
)


def test_the_footnotes_marker_is_no_block_and_the_page_is_read_as_written(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    """Pi-hole's regex tutorial puts the footnotes extension's place marker
    ``///Footnotes Go Here///`` before its footnotes: taken for a pymdownx block, the whole
    page was read from its HTML (its tables re-padded). A block opens with ``///``, a name
    and maybe a title, and nothing after."""
    assert not transformed(TUTORIAL, TUTORIAL)
    for block in ("/// tab | Name\nx\n///\n", "/// details\nx\n///\n", "///admonition|T\n"):
        assert transformed(block, block), block
    vault = make_vault(
        {
            "mkdocs.yml": "site_name: Regex\nmarkdown_extensions:\n  - tables\n  - footnotes\n",
            "docs/tutorial.md": TUTORIAL,
        }
    )
    instance = kb(vault)
    instance.index()
    [section] = [c for c in instance.store.chunks() if c.anchor == "character-classes"]
    assert "|`[[:digit:]]`|digits[^*]|" in section.text  # the source's bytes, not the HTML's


# 2 -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "after",
    [
        "*[API]: Application Programming Interface\n",  # no blank line between
        "\n*[API]: Application Programming Interface\n{!abbreviations.md!}\n",
        "{!abbreviations.md!}\n",
        "\n{!abbreviations.md!}\n",
    ],
)
def test_abbreviations_and_an_include_line_are_never_quoted(after: str) -> None:
    """Pi-hole ends its API pages with markdown-include's ``{!abbreviations.md!}`` (that
    file holds only ``*[API]: …`` definitions, which the page shows as tooltips): the
    answer quoted that line, and a definition written under its paragraph."""
    paragraph = "We recommend code that handles all API exceptions gracefully."
    highlighted, shown = _answer("How should code handle API exceptions?", f"{paragraph}\n{after}")
    assert highlighted == paragraph
    assert "*[API]" not in shown and "{!" not in shown
    assert paragraph in shown


def test_a_definition_after_a_list_or_table_ends_it() -> None:
    row = "| 500 | API exceptions are handled gracefully |"
    table = f"| Code | Meaning |\n|---|---|\n{row}\n*[API]: Application Programming Interface\n"
    highlighted, shown = _answer("How are API exceptions handled?", table)
    assert highlighted.endswith(row) and "*[API]" not in shown
    listed = "- API exceptions are handled gracefully.\n*[API]: Application Programming\n"
    highlighted, shown = _answer("How are API exceptions handled?", listed)
    assert highlighted == listed.split("\n")[0] and "*[API]" not in shown


def test_a_definition_in_a_code_block_is_code() -> None:
    """Material's tooltip docs show the syntax in a fence: it is quoted byte for byte."""
    text = "Define the API abbreviation like this:\n\n```md\n*[API]: Application Programming\n```\n"
    _, shown = _answer("How do I define the API abbreviation?", text)
    assert "```md\n*[API]: Application Programming\n```" in shown


# 3 -----------------------------------------------------------------------------------------


def test_a_rows_line_break_reads_as_the_page_shows_it() -> None:
    """Mealie's settings tables hold ``OIDC_CLIENT_SECRET <br/> :octicons-tag-24: v2.0.0``:
    the page shows the name and under it the version that added it, with a tag icon. The
    row dropped the icon but kept the raw ``<br/>``: inline HTML in a row now reads as a
    paragraph's does (tags out, a break as a space), and an escaped ``>`` is text."""
    table = (
        "| Variables | Default | Description |\n| --- | :-: | --- |\n"
        "| OIDC_CLIENT_SECRET <br/> :octicons-tag-24: v2.0.0 | None | The client secret |\n"
        "| OIDC_PROVIDER_NAME | OAuth | Shown as <b>Login with <OIDC_PROVIDER_NAME\\></b> |\n"
        "| `<br/>` | None | Code keeps it |\n"
    )
    highlighted, shown = _answer("What is the OIDC_CLIENT_SECRET?", table)
    assert highlighted == table.strip("\n")
    rows = [line for line in shown.split("\n") if line.startswith("| ")]
    first_row = r"\| OIDC_CLIENT_SECRET\s+v2\.0\.0 \| None \| The client secret \|"
    assert re.fullmatch(first_row, rows[2])
    assert rows[3] == "| OIDC_PROVIDER_NAME | OAuth | Shown as Login with <OIDC_PROVIDER_NAME\\> |"
    assert rows[4] == "| `<br/>` | None | Code keeps it |"
    assert reading_text("Put the secret<br>in the variable.") == "Put the secret in the variable."


# 4 -----------------------------------------------------------------------------------------

PIHOLE_NAV = """\
site_name: Pi-hole
theme:
  name: mkdocs
  custom_dir: overrides
nav:
  - 'The &nbsp<samp>pihole</samp>&nbsp Command': pihole-command.md
  - 'Gravity &amp; lists': gravity.md
"""


@pytest.mark.parametrize("render", [True, False])
def test_a_nav_titles_html_shows_as_its_text(
    make_vault: Callable[..., Path], kb: KB, tmp_path: Path, render: bool
) -> None:
    """Pi-hole's nav titles its command page ``'The &nbsp<samp>pihole</samp>&nbsp Command'``:
    every citation label read "The  <samp>pihole</samp>  Command › …". The site shows its
    text (its ``<title>``: ``page.title | striptags``), and so does every heading path."""
    vault = make_vault(
        {
            "mkdocs.yml": PIHOLE_NAV,
            "overrides/main.html": (
                '{% extends "base.html" %}'
                "{% block htmltitle %}<title>{{ page.title | striptags }}</title>{% endblock %}"
            ),
            "docs/pihole-command.md": "# The pihole Command\n\n## Logging\n\nTurn logging off.\n",
            "docs/gravity.md": "# Gravity\n\n## Updating\n\nRun pihole -g.\n",
        }
    )
    site = mkdocs_build(vault, tmp_path / "site")
    shown = {}
    for page in ("pihole-command", "gravity"):
        built = (site / page / "index.html").read_text(encoding="utf-8")
        title = re.search(r"<title>(.*?)</title>", built, re.S)
        assert title is not None
        shown[page] = " ".join(html.unescape(title[1]).split())
    assert shown == {"pihole-command": "The pihole Command", "gravity": "Gravity & lists"}
    instance = kb(vault, render=render)
    instance.index()
    labels = {}
    for c in instance.store.chunks():
        labels.setdefault(c.path, set()).add(c.heading_path[0])
    assert labels == {
        "docs/pihole-command.md": {"The pihole Command"},
        "docs/gravity.md": {"Gravity & lists"},
    }
