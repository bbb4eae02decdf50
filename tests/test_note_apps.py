"""Notes from apps other than Obsidian: Logseq graphs and Zettelkasten folders (Zettlr, The
Archive), as those apps write them, asked about and shown."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from browser import sync_playwright_or_skip
from uvicorn_thread import UvicornThread
from widget_stack import loopback_context

from kb_qa.answer import extractive
from kb_qa.answer.answering import prepare
from kb_qa.index.manifest import EMBED_TEXT_VERSION, embed_key
from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.serve.app import create_app

sync_playwright_or_skip()

# A Logseq graph (:file/name-format :triple-lowbar): the page "Project Alpha/Runbook" is
# the file "Project Alpha___Runbook.md"; a page whose name a file cannot hold has title::.
LOGSEQ = {
    "logseq/config.edn": "{:meta/version 1 :file/name-format :triple-lowbar}\n",
    "pages/Project Alpha.md": (
        "alias:: alpha\n\n- ## Risks\n\t- Currency rounding differs from Stripe's\n"
        "\t- See [[Project Alpha/Runbook]] for the cutover steps\n"
        "\t- Ask [[Billing Q&A: who owns what?]] first\n"
    ),
    "pages/Project Alpha___Runbook.md": (
        "- ## Rollback\n\t- Set `billing.stripe_primary` back to false within 30 minutes\n"
    ),
    "pages/Runbook.md": "- The generic on-call runbook lives in the wiki\n",
    "pages/billing-qa.md": "title:: Billing Q&A: who owns what?\n\n- Maria owns webhooks\n",
}
# A Zettelkasten: notes named by a timestamp ID and a title, linked by the ID alone.
ZETTEL = {
    "202403011200 Write-skew anomalies.md": (
        "# Write-skew anomalies\n\nSnapshot isolation lets two transactions each write a "
        "different row, breaking a constraint over both.\n\n## Fixes\n\n"
        "Use SERIALIZABLE, or materialise the conflict as a row both must update.\n"
    ),
    "202403011215 Postgres SSI.md": (
        "# Postgres SSI\n\nPostgres detects write skew with Serializable Snapshot Isolation: "
        "SIREAD locks track rw-antidependencies and one transaction of a dangerous structure "
        "is aborted with SQLSTATE 40001.\n\nBack to [[202403011200]].\n"
    ),
    "202403021030 Reading list.md": (
        "# Reading list\n\n## Databases\n\n- DDIA chapter 7\n"
        "- How Postgres detects write skew: [[202403011215]]\n"
    ),
}


def test_a_logseq_namespace_page_is_titled_as_logseq_names_it(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    """Citations and the page list said "Project Alpha___Runbook", a name Logseq never
    shows."""
    base = kb(make_vault(LOGSEQ))
    base.index()
    [rollback] = base.store.chunks("pages/Project Alpha___Runbook.md")
    assert rollback.heading_path == ("Project Alpha/Runbook", "Rollback")
    titles = {p["path"]: p["title"] for p in base.pages()}
    assert titles["pages/Project Alpha___Runbook.md"] == "Project Alpha/Runbook"


def test_a_passage_pointing_to_a_note_by_its_zettel_id_defers_to_that_note(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    """``[[202403011215]]`` named no note, so the line that only points there ("How
    Postgres detects write skew: [[202403011215]]") was quoted as the answer, ahead of the
    note it points to."""
    base = kb(make_vault(ZETTEL), embed_model="minilm")
    base.index()
    question = "How does Postgres detect write skew?"
    prepared = prepare(base, base.settings, question)
    result = extractive.quote(question, prepared.ranked, prepared.covered)
    first = dict(prepared.ranked)[next(iter(result.quoted))]
    assert first.chunk.path == "202403011215 Postgres SSI.md"


def test_logseq_and_zettel_links_open_the_note_they_name_in_view(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase], browser: Any
) -> None:
    """``[[Project Alpha/Runbook]]``, a page's ``title::`` and ``[[202403011200]]`` were
    shown as plain text in /view (or, for the namespace, linked to another "Runbook")."""
    base = kb(make_vault({**LOGSEQ, **ZETTEL}), rate_limit=0)
    base.index()
    with UvicornThread(create_app(base)) as server:
        context = loopback_context(browser)
        try:
            page = context.new_page()

            def href(note: str, text: str) -> str:
                page.goto(server.url + "/view/" + quote(note))
                return unquote(page.locator("a", has_text=text).first.get_attribute("href") or "")

            assert href("pages/Project Alpha.md", "Runbook") == (
                "/view/pages/Project Alpha___Runbook.md"
            )
            assert href("pages/Project Alpha.md", "Billing Q&A") == "/view/pages/billing-qa.md"
            assert href("202403011215 Postgres SSI.md", "202403011200") == (
                "/view/202403011200 Write-skew anomalies.md"
            )
            page.locator("a", has_text="202403011200").click()
            assert page.locator("h1").inner_text() == "Write-skew anomalies"
        finally:
            context.close()


LOGSEQ_BLOCKS = {
    "pages/Project Alpha.md": (
        "- ## Goals\n\t- Ship the billing migration to Stripe by **June 14**\n"
        "\t  id:: 6601e0b7-2c1e-4f0a-9d2b-7a3e2c1b0d11\n"
        "\t- [[Tom Okafor]] reviews database changes\n\t  collapsed:: true\n"
        "\t\t- He is out on leave until April 2\n"
    ),
    "journals/2024_03_01.md": (
        "- Called the plumber about the boiler valve\n"
        "- ((6601e0b7-2c1e-4f0a-9d2b-7a3e2c1b0d11)) is now at risk\n"
    ),
}


def test_logseq_block_properties_are_hidden_and_block_references_read_as_their_block(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase], browser: Any
) -> None:
    """/view and the quoted answer showed "id:: 6601e0b7-…" and "collapsed:: true", which
    Logseq hides, and a journal's "((6601e0b7-…)) is now at risk" as the bare id."""
    base = kb(make_vault(LOGSEQ_BLOCKS), rate_limit=0)
    base.index()
    question = "When is the billing migration to Stripe due?"
    prepared = prepare(base, base.settings, question)
    quoted = "".join(extractive.quote(question, prepared.ranked, prepared.covered).pieces)
    assert "June 14" in quoted and "id::" not in quoted and "collapsed::" not in quoted
    with UvicornThread(create_app(base)) as server:
        context = loopback_context(browser)
        try:
            page = context.new_page()
            page.goto(server.url + "/view/" + quote("pages/Project Alpha.md"))
            shown = page.locator("body").inner_text()
            assert "June 14" in shown and "id::" not in shown and "collapsed::" not in shown
            page.goto(server.url + "/view/journals/2024_03_01.md")
            ref = page.locator("a", has_text="Ship the billing migration to Stripe by June 14")
            assert "6601e0b7" not in page.locator("body").inner_text()
            ref.click()
            page.wait_for_url("**/view/pages/Project%20Alpha.md#goals")
        finally:
            context.close()


def test_a_text_holding_logseq_properties_is_embedded_anew_once(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    """Since Logseq's id:: and collapsed:: lines are hidden, the embedder no longer sees
    them (text.normalize), but a text holding one kept the cache key an older kb-qa stored
    its vector under (the text alone): an upgraded index reused the vector of the text with
    the uuid in it, unlike a fresh one. Only such texts are keyed anew; the rest keep theirs."""
    base = kb(make_vault(LOGSEQ_BLOCKS))
    base.index()
    chunks = [
        *base.store.chunks("pages/Project Alpha.md"),
        *base.store.chunks("journals/2024_03_01.md"),
    ]
    keys = base.store.embed_keys()
    for chunk in chunks:
        # The key kb-qa gave every unmarked text before it hid those lines.
        before = hashlib.sha1(f"{EMBED_TEXT_VERSION}\0{chunk.index_text}".encode()).hexdigest()
        hidden = "id::" in chunk.index_text or "collapsed::" in chunk.index_text
        assert (keys[chunk.id] != before) == hidden, chunk.index_text
        assert keys[chunk.id] == embed_key(chunk)
    assert any("id::" in c.index_text for c in chunks)  # the vault exercises both kinds
    assert any("::" not in c.index_text for c in chunks)
