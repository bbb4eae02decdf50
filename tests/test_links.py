"""Citation links follow the link_style setting."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kb_qa.errors import ConfigError
from kb_qa.kb.knowledge_base import KnowledgeBase

NOTE = "# Garden\n\nIntro.\n\n## Tomatoes\n\nTomatoes need full sun.\n"


def _hit(kb: KnowledgeBase) -> object:
    kb.index()
    hits = kb.search("tomatoes full sun", 1)
    assert hits and hits[0].chunk.anchor == "tomatoes"
    return hits[0].chunk


def test_plain_vault_defaults_to_file_links(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    vault = make_vault({"notes/garden.md": NOTE})
    base = kb(vault)
    chunk = _hit(base)
    assert base.url(chunk) == f"{(vault / 'notes/garden.md').resolve()}:5"


@pytest.mark.parametrize(
    ("style", "expected"),
    [
        ("vscode", "vscode://file{abs}:5"),
        # Obsidian opens the heading after an encoded "#", and wants every "/" encoded.
        ("obsidian", "obsidian://open?vault=vault&file=notes%2Fgarden%23Tomatoes"),
        ("site", "notes/garden.md#tomatoes"),
    ],
)
def test_link_styles(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase], style: str, expected: str
) -> None:
    vault = make_vault({"notes/garden.md": NOTE})
    base = kb(vault, link_style=style)
    chunk = _hit(base)
    assert base.url(chunk) == expected.format(abs=(vault / "notes/garden.md").resolve())


def test_mkdocs_site_defaults_to_site_urls(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    vault = make_vault(
        {
            "mkdocs.yml": "site_name: T\nsite_url: https://docs.example.org/t/\n",
            "docs/garden.md": NOTE,
        }
    )
    base = kb(vault)
    chunk = _hit(base)
    assert base.url(chunk) == "https://docs.example.org/t/garden/#tomatoes"


def test_unknown_link_style_is_a_clear_error(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    """Refused as it is set: a server must not start with a style that fails every answer."""
    vault = make_vault({"garden.md": NOTE})
    with pytest.raises(ConfigError, match=r"link_style .*'emacs': use one of site, file"):
        kb(vault, link_style="emacs")
