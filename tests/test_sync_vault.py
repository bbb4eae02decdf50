"""An Obsidian or Logseq vault carried by Syncthing, Dropbox or iCloud, served with the watcher
on, as a QA pass ran it: what the sync tools and note apps write beside the notes (Logseq's
backups, conflicted copies, Office's lock files, iCloud's placeholders) is not answered from."""

from __future__ import annotations

import time
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from uvicorn_thread import UvicornThread
from watching import settle

from kb_qa.ingest.changes import relevant
from kb_qa.ingest.watch import Watcher
from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.serve.app import create_app

KB = Callable[..., KnowledgeBase]


def _ask(url: str, question: str) -> dict[str, Any]:
    response = httpx.post(
        url + "/api/ask", json={"question": question, "stream": False}, timeout=20
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_logseq_s_backups_of_a_page_are_not_answered_from(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    """Logseq keeps a page's earlier text in logseq/bak/ and logseq/version-files/ when a
    sync tool changes it under it: the answer quoted "1.2 bar" beside the page's "1.5 bar",
    titled "2025-12-03T10_10_10.123Z.Desktop"."""
    old = "- Keep the boiler pressure at 1.2 bar when cold.\n"
    vault = make_vault(
        {
            "logseq/config.edn": "{:meta/version 1}\n",
            "pages/Boiler.md": "- Keep the boiler pressure at 1.5 bar when cold.\n",
            "logseq/bak/pages/Boiler/2025-12-03T10_10_10.123Z.Desktop.md": old,
            "logseq/version-files/base/pages/Boiler.md": old,
            "logseq/version-files/local/pages/Boiler.md": old,
            # A folder of the user's own named bak is notes like any other.
            "projects/bak/Kiln.md": "- Fire the kiln to cone six.\n",
        }
    )
    base = kb(vault, rate_limit=0)
    report = base.index()
    assert sorted(p["path"] for p in base.pages()) == ["pages/Boiler.md", "projects/bak/Kiln.md"]
    assert report.skipped == []  # left out without a word, as .stversions/ is
    with UvicornThread(create_app(base)) as server:
        body = _ask(server.url, "What boiler pressure when cold?")
    assert "1.5 bar" in body["text"] and "1.2 bar" not in body["text"], body["text"]
    assert not [c for c in body["citations"] if c["path"].startswith("logseq/")]
    # The watcher does not start a run for what Logseq writes there at every sync.
    for path in (
        "logseq/bak/pages/Boiler/2025-12-04T08_00_00.000Z.Desktop.md",
        "logseq/version-files/base/pages/Boiler.md",
        "graph/logseq/bak/pages/Boiler.md",
    ):
        assert not relevant(path, False), path
    assert not relevant("logseq/bak", True)
    assert relevant("projects/bak/Kiln.md", False) and relevant("logseq/pages.md", False)


def test_a_conflicted_copy_named_in_the_other_unicode_form_is_still_a_copy(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    """macOS wrote the note "Café.md" decomposed (NFD); Syncthing on Linux named its copy
    composed (NFC): the names were compared exactly, so the copy was indexed as a note."""
    note = unicodedata.normalize("NFD", "Café.md")
    copy = unicodedata.normalize("NFC", "Café.sync-conflict-20251203-101010-ABCDEFG.md")
    dropbox = unicodedata.normalize("NFC", "Café (Sam's conflicted copy 2025-12-03).md")
    vault = make_vault(
        {
            note: "# Café\n\nThe café opens at nine.\n",
            copy: "# Café\n\nThe café opens at ten.\n",
            dropbox: "# Café\n\nThe café opens at eleven.\n",
        }
    )
    base = kb(vault, rate_limit=0)
    report = base.index()
    assert [p["path"] for p in base.pages()] == [note]
    skipped = dict(report.skipped)
    assert sorted(skipped) == sorted([copy, dropbox])
    assert "conflicted copy of Café.md" in unicodedata.normalize("NFC", skipped[copy])


def test_deleting_a_note_reads_only_its_newest_conflicted_copy(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    """Deleting a note with two conflicted copies revived both: "aspirin" [1] and "sulfa
    drugs" [2], both titled "Allergies". The newest copy (by the time in its name) is read
    in the note's place and the others stay reported as skipped; Dropbox's copies too."""
    vault = make_vault(
        {
            "Allergies.md": "# Allergies\n\nAllergic to penicillin.\n",
            "Allergies.sync-conflict-20251203-101010-ABCDEFG.md": (
                "# Allergies\n\nAllergic to sulfa drugs.\n"
            ),
            "Allergies.sync-conflict-20251201-235959-HIJKLMN.md": (
                "# Allergies\n\nAllergic to aspirin.\n"
            ),
            "dropbox/Vet.md": "# Vet\n\nThe vet is Dr Moss.\n",
            # The later copy of the same day by Dropbox's " (1)"; the one with a time later
            # still; the one without a time counts as made at midnight.
            "dropbox/Vet (conflicted copy 2025-12-03).md": "# Vet\n\nThe vet is Dr Hale.\n",
            "dropbox/Vet (Sam's conflicted copy 2025-12-03 (1)).md": "# Vet\n\nDr Ruiz.\n",
            "dropbox/Vet (Sam's conflicted copy 2025-12-03 094500).md": "# Vet\n\nDr Okafor.\n",
            "dropbox/Vet (conflicted copy 2025-11-30 235959).md": "# Vet\n\nThe vet is Dr Bell.\n",
        }
    )
    base = kb(vault, rate_limit=0)
    base.index()
    watcher = Watcher(base, debounce=0.1, retry_delay=0.2).start()
    try:
        assert watcher.wait_idle()
        since = time.time()
        (vault / "Allergies.md").unlink()
        (vault / "dropbox/Vet.md").unlink()
        settle(watcher, since)
        report = watcher.last_report
        assert report is not None
    finally:
        watcher.stop()
    assert sorted(p["path"] for p in base.pages()) == [
        "Allergies.sync-conflict-20251203-101010-ABCDEFG.md",
        "dropbox/Vet (Sam's conflicted copy 2025-12-03 094500).md",
    ]
    skipped = dict(report.skipped)
    assert sorted(skipped) == [
        "Allergies.sync-conflict-20251201-235959-HIJKLMN.md",
        "dropbox/Vet (Sam's conflicted copy 2025-12-03 (1)).md",
        "dropbox/Vet (conflicted copy 2025-11-30 235959).md",
        "dropbox/Vet (conflicted copy 2025-12-03).md",
    ]
    said = skipped["Allergies.sync-conflict-20251201-235959-HIJKLMN.md"]
    assert "Allergies.md" in said and "Allergies.sync-conflict-20251203-101010-ABCDEFG.md" in said
    with UvicornThread(create_app(base)) as server:
        body = _ask(server.url, "What am I allergic to?")
    assert "sulfa drugs" in body["text"] and "aspirin" not in body["text"], body["text"]
    cited = {c["path"] for c in body["citations"]}
    assert {p for p in cited if p.startswith("Allergies")} == {
        "Allergies.sync-conflict-20251203-101010-ABCDEFG.md"
    }


def test_an_office_lock_file_and_a_stale_icloud_placeholder_say_nothing(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    """Office's "~$Wifi.md" (a lock or temp file beside the note) was indexed and ranked
    above Wifi.md; a ".Vaccinations.md.icloud" iCloud left beside the downloaded note was
    reported "not downloaded: download it"."""
    vault = make_vault(
        {
            "Wifi.md": "# Wifi\n\nThe wifi password is on the router's label.\n",
            "~$Wifi.md": "# Wifi\n\nThe wifi password wifi password wifi password.\n",
            "health/Vaccinations.md": "# Vaccinations\n\nTetanus booster in 2031.\n",
            "health/.Vaccinations.md.icloud": b"bplist00\x00\x01",
            "health/.Dentist.md.icloud": b"bplist00\x00\x01",
        }
    )
    base = kb(vault, rate_limit=0)
    report = base.index()
    assert sorted(p["path"] for p in base.pages()) == ["Wifi.md", "health/Vaccinations.md"]
    assert [path for path, _ in report.skipped] == ["health/.Dentist.md.icloud"]
    assert not relevant("~$Wifi.md", False)
    assert base.search("wifi password", 1)[0].chunk.path == "Wifi.md"
