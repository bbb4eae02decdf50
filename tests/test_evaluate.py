"""kb-qa eval accepts gold pages the way people write them: vault path, docs path or URL."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from kb_qa.answer.evaluate import load_questions
from kb_qa.kb.knowledge_base import KnowledgeBase


def test_gold_pages_in_any_common_form(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase], tmp_path: Path
) -> None:
    vault = make_vault(
        {
            "mkdocs.yml": "site_name: S\nsite_url: https://docs.example.org/s/\n",
            "docs/guide/setup.md": "# Setup\n\n## Install it\n\nRun the installer.\n",
        }
    )
    base = kb(vault)
    base.index()
    forms = [
        {"path": "docs/guide/setup.md", "anchor": "install-it"},
        {"path": "guide/setup.md", "anchor": "#install-it"},
        {"path": "guide/setup/", "heading": "Install it"},
        {"path": "https://docs.example.org/s/guide/setup/#install-it", "anchor": "install-it"},
    ]
    questions_file = tmp_path / "q.jsonl"
    questions_file.write_text(
        "\n".join(json.dumps({"question": "how to install", "gold": [g]}) for g in forms)
    )
    questions = load_questions(questions_file, base.store.chunks())
    assert [q.gold for q in questions] == [(("docs/guide/setup.md", "install-it"),)] * 4
