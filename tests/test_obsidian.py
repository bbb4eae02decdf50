"""Obsidian-style vaults: wikilinks, embeds, tags, callouts and front-matter aliases."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.text import normalize

VAULT = {
    "Projects/Heat pump.md": (
        "---\naliases: [HVAC retrofit, Wärmepumpe]\ntags: [house]\n---\n"
        "# Heat pump\n\nSee [[Suppliers#Quotes|the supplier quotes]] and ![[Suppliers]].\n\n"
        "## Sizing\n\n> [!warning] Undersized units\n> An undersized unit runs constantly.\n\n"
        "Sized at 7 kW for the house. #energy #house\n"
    ),
    "Suppliers.md": (
        "# Suppliers\n\n![[Projects/Heat pump]]\n\n## Quotes\n\nThermoCo quoted 9,400 EUR.\n"
    ),
}


def test_wikilinks_and_callouts_read_as_words() -> None:
    assert normalize("See [[Suppliers#Quotes|the quotes]] now") == "See the quotes now"
    assert normalize("See [[Projects/Heat pump#Sizing]].") == "See Heat pump Sizing."
    assert normalize("![[Suppliers]]") == "Suppliers"
    assert normalize("> [!warning]- Careful") == "> warning: Careful"


def test_obsidian_vault_indexes_and_finds_by_alias(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    vault = make_vault(VAULT)
    base = kb(vault)
    report = base.index()  # the two notes embed each other: nothing is followed, no loop
    assert report.files == 2 and not report.skipped
    hits = base.search("Wärmepumpe", 3)
    assert hits and hits[0].chunk.path == "Projects/Heat pump.md"
    assert "Also called: HVAC retrofit, Wärmepumpe" in hits[0].chunk.index_text
    tagged = base.search("energy", 3)
    assert tagged and tagged[0].chunk.anchor == "sizing"
    quotes = base.search("supplier quotes ThermoCo", 3)
    assert quotes[0].chunk.path == "Suppliers.md" and quotes[0].chunk.anchor == "quotes"


def test_tags_are_not_headings(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    vault = make_vault({"note.md": "# Note\n\n#idea\n#todo\n\n## Real heading\n\nText.\n"})
    base = kb(vault)
    base.index()
    anchors = [c.anchor for c in base.store.chunks()]
    assert anchors == ["note", "real-heading"]
