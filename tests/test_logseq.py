"""A Logseq graph as a QA tester built it (page properties, tab-indented outlines, block
references, :LOGBOOK: drawers, journals named yyyy_MM_dd), asked about without a model and
shown in /view: what Logseq hides stays hidden, what it shows reads as it shows it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from browser import sync_playwright_or_skip
from uvicorn_thread import UvicornThread
from widget_stack import loopback_context

from kb_qa.answer import extractive
from kb_qa.answer.answering import prepare
from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.serve.app import create_app

sync_playwright_or_skip()

GRAPH = {
    "logseq/config.edn": "{:meta/version 1 :file/name-format :triple-lowbar}\n",
    "pages/Car.md": (
        "alias:: Golf, the car\ntags:: vehicle\n\n"
        "- VW Golf VII 1.5 TSI, 2019, plate AB-123-CD\n"
        "- Maintenance\n\t- Tyres\n\t\t- Summer: Michelin Primacy 4, 205/55 R16\n"
        "\t\t- Pressure\n\t\t\t- Front 2.4 bar, rear 2.6 bar when loaded\n"
        "\t\t\t- Front 2.2 bar, rear 2.2 bar normal load\n"
        "- Insurance\n\t- Policy with MAIF, number 4471-2290\n"
    ),
    "pages/Bike.md": (
        "tags:: bicycle\n\n- Canyon Endurace, 2021\n- Chain: lube every 300 km\n"
        "- Tyre pressure 6 bar front and rear\n"
    ),
}


def _answer(base: KnowledgeBase, question: str) -> tuple[str, str]:
    """The no-key answer to ``question``, and the bytes its first citation quotes."""
    prepared = prepare(base, base.settings, question)
    result = extractive.quote(question, prepared.ranked, prepared.covered)
    number, span = next(iter(result.quoted.items()))
    hit = dict(prepared.ranked)[number]
    return "".join(result.pieces), hit.chunk.text[slice(*span)]


def test_page_properties_are_not_quoted_but_still_found(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    """The car's tyre pressures were quoted under "alias:: Golf, the car" and "tags::
    vehicle", the page's metadata, as if they were part of the answer."""
    base = kb(make_vault(GRAPH))
    base.index()
    text, quoted = _answer(base, "What is the front tyre pressure of the car?")
    assert "Front 2.2 bar" in text and "Front 2.2 bar" in quoted
    assert "::" not in text and "alias" not in text and "::" not in quoted
    # Still what the page is filed under: a question naming a tag finds the page.
    text, quoted = _answer(base, "Which page is tagged vehicle?")
    assert text.split("\n\n")[1].startswith("**Car**"), text
    assert "::" not in text


def test_view_shows_page_properties_one_a_line(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase], browser: Any
) -> None:
    """/view showed "alias:: Golf, the car tags:: vehicle" as one run-on paragraph."""
    base = kb(make_vault(GRAPH), rate_limit=0)
    base.index()
    with UvicornThread(create_app(base)) as server:
        context = loopback_context(browser)
        try:
            page = context.new_page()
            page.goto(server.url + "/view/" + quote("pages/Car.md"))
            shown = page.locator(".properties").inner_text()
            assert shown.splitlines() == ["alias: Golf, the car", "tags: vehicle"]
            assert "::" not in page.locator("body").inner_text()
        finally:
            context.close()


REFERENCED = {
    "pages/Home Server.md": (
        "- Backups\n\t- restic to B2 every night at 02:30\n"
        "\t  id:: 64f1a2b3-0c1d-4e5f-8a9b-123456789abc\n"
    ),
    "journals/2025_03_12.md": (
        "- Called the plumber about the boiler\n"
        "- Reminder of the backup: ((64f1a2b3-0c1d-4e5f-8a9b-123456789abc))\n"
    ),
}


def test_a_block_reference_is_not_quoted_as_its_raw_id(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    """The line "Reminder of the backup: ((64f1a2b3-…))" was quoted with the raw id, which
    Logseq shows as the referenced block's text (the answer's citation opens /view, which
    shows it so); the quoted bytes stay the file's."""
    base = kb(make_vault(REFERENCED))
    base.index()
    text, quoted = _answer(base, "What was the reminder about the backup and the plumber?")
    assert "Reminder of the backup: (…)" in text, text
    assert "64f1a2b3" not in text and "((64f1a2b3" in quoted


DRAWERS = {
    "journals/2025_03_14.md": (
        "- NOW write the quarterly report\n\t:LOGBOOK:\n\tCLOCK: [2025-03-14 Fri 09:02:11]\n"
        "\t:END:\n- Bought a new kettle, Bosch TWK3P420, €45\n"
        "- TODO book the MOT inspection before June\n\tSCHEDULED: <2025-05-15 Thu>\n"
    ),
}


def test_logbook_drawers_are_hidden_and_scheduled_dates_kept(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase], browser: Any
) -> None:
    """The answer to "How much was the new kettle?" quoted the task above it with its ":LOGBOOK:",
    "CLOCK: [2025-03-14 Fri 09:02:11]" and ":END:" lines, which Logseq hides (and /view
    showed them); a task's "SCHEDULED:" date says when, and stays."""
    base = kb(make_vault(DRAWERS), rate_limit=0)
    base.index()
    text, quoted = _answer(base, "How much was the new kettle?")
    assert "€45" in text and "LOGBOOK" not in text and "CLOCK" not in text, text
    assert "write the quarterly report\n- Bought a new kettle" in text
    assert "Bought a new kettle" in quoted  # the file's own bytes, as /view highlights them
    text, _ = _answer(base, "When is the MOT inspection scheduled?")
    assert "SCHEDULED: <2025-05-15 Thu>" in text, text
    # Nor searched: the keyword index finds nothing by the drawer's words.
    assert all(h.keyword_rank is None for h in base.search("LOGBOOK CLOCK", k=5))
    with UvicornThread(create_app(base)) as server:
        context = loopback_context(browser)
        try:
            page = context.new_page()
            page.goto(server.url + "/view/journals/2025_03_14.md")
            shown = page.locator("body").inner_text()
            assert "LOGBOOK" not in shown and "CLOCK" not in shown and ":END:" not in shown
            assert "write the quarterly report\nBought a new kettle" in shown, shown
            assert "SCHEDULED: <2025-05-15 Thu>" in shown
        finally:
            context.close()


JOURNALS = {
    "logseq/config.edn": "{:meta/version 1 :file/name-format :triple-lowbar}\n",
    "journals/2025_03_12.md": (
        "- Plumber came at 9:00\n\t- Quote: €480 for the new boiler valve including labour\n"
    ),
    "journals/2025_01_04.md": "- Installed Debian on the home server\n",
    "pages/Home Server.md": "started:: [[Jan 4th, 2025]]\n\n- Boiler room shelf holds it\n",
}


def test_journals_are_titled_as_logseq_shows_them_and_its_date_links_open_them(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase], browser: Any
) -> None:
    """Answers, citations, the page list and /view titled a journal "2025_03_12", its file
    name; Logseq shows "Mar 12th, 2025", and its links "[[Jan 4th, 2025]]" opened nothing."""
    base = kb(make_vault(JOURNALS), rate_limit=0)
    base.index()
    text, _ = _answer(base, "How much did the plumber quote for the boiler valve?")
    assert text.split("\n\n")[1].startswith("**Mar 12th, 2025** ["), text
    titles = {p["path"]: p["title"] for p in base.pages()}
    assert titles["journals/2025_03_12.md"] == "Mar 12th, 2025"
    assert titles["journals/2025_01_04.md"] == "Jan 4th, 2025"
    with UvicornThread(create_app(base)) as server:
        context = loopback_context(browser)
        try:
            page = context.new_page()
            page.goto(server.url + "/view/" + quote("pages/Home Server.md"))
            page.locator("a", has_text="Jan 4th, 2025").click()
            page.wait_for_url("**/view/journals/2025_01_04.md")
            assert page.title() == "Jan 4th, 2025"
        finally:
            context.close()
