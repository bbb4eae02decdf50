"""Words a reader may type otherwise than the docs print them, found all the same by the
keyword search: German umlauts written without them (Arabic's marks and hamza forms are
tests/test_arabic.py's)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.text import keyword_tokens


def test_an_umlaut_typed_as_two_letters_is_the_same_word() -> None:
    assert keyword_tokens("flüchtige Notizen") == keyword_tokens("fluechtige Notizen")
    assert keyword_tokens("Wörter, Größe, Ärger") == keyword_tokens("Woerter, Groesse, Aerger")
    # a word spelt with "ue" is read as it was, and English as before
    assert keyword_tokens("Quelle") == ["quell"] and keyword_tokens("queues") == ["queue"]


def test_a_question_typed_without_umlauts_finds_the_section_written_with_them(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    vault = make_vault(
        {
            "notizen.md": "# Notizen\n\n## Flüchtige Notizen\n\nFlüchtige Notizen hältst du "
            "beim Lesen fest: ein paar Stichworte, die du später ausarbeitest.\n\n"
            "## Dauerhafte Notizen\n\nDauerhafte Notizen schreibst du in eigenen Worten.\n",
            "woche.md": "# Woche 3\n\nIn dieser Woche erstellst du erste Notizen.\n",
        }
    )
    base = kb(vault)  # the hash embedder: the keyword search decides
    base.index()
    hits = base.search("Was sind fluechtige Notizen?", 1)
    assert hits[0].chunk.heading_path[-1] == "Flüchtige Notizen"
