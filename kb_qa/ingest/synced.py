"""What sync tools and note apps leave beside a vault's notes, which are not notes to answer
from: a sync tool's conflicted copies, iCloud's placeholders of notes not downloaded, and
Logseq's backups of the pages a sync tool changed under it."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePath

from kb_qa.ingest.site import MARKDOWN_SUFFIXES
from kb_qa.text import nfc

# Logseq keeps a page's earlier text when a sync tool changes the file under it, in
# logseq/bak/ (a copy named by its time, "2025-12-03T10_10_10.123Z.Desktop.md") and
# logseq/version-files/: indexed, they answered "1.2 bar" beside the page's "1.5 bar".
LOGSEQ = "logseq"
LOGSEQ_BACKUPS = frozenset({"bak", "version-files"})
# A sync tool's copy of a note two devices changed at once, by the names only it writes:
# Dropbox's (and Nextcloud's) "note (Sam's conflicted copy 2024-01-02).md", Syncthing's
# "note.sync-conflict-20240102-123456-ABCDEFG.md". iCloud's "note 2.md" and OneDrive's
# "note-DESKTOP-ABC.md" are names people give notes too: those are read.
_CONFLICT = re.compile(
    r"(?P<note>.+?)(?: \((?:[^()]+['\u2019]s )?conflicted copy (?P<y>\d{4})-(?P<m>\d{2})-"
    r"(?P<d>\d{2})(?: (?P<hms>\d{6}))?(?: \((?P<nth>\d+)\))?\)"
    r"|\.sync-conflict-(?P<day>\d{8})-(?P<time>\d{6})(?:-[0-9A-Z]{7})?)(?P<ext>\.[^.]+)"
)
_ICLOUD = ".icloud"  # iCloud's placeholder of a note not downloaded: ".note.md.icloud"


def in_logseq_backups(parts: Sequence[str]) -> bool:
    """Whether a path (its parts) lies in a Logseq graph's backup folders."""
    return any(parts[i] == LOGSEQ and parts[i + 1] in LOGSEQ_BACKUPS for i in range(len(parts) - 1))


def is_logseq_backups(folder: PurePath) -> bool:
    """Whether ``folder`` is one of a Logseq graph's backup folders (not walked)."""
    return folder.parent.name == LOGSEQ and folder.name in LOGSEQ_BACKUPS


def not_read(names: Sequence[str]) -> dict[str, str]:
    """The files of one folder that a sync tool wrote, each with why it is not read as a
    note (files not listed are read as any other): iCloud's placeholder of a note not
    downloaded, and a conflicted copy of a note beside it. Names are compared composed
    (NFC): a Mac writes "Café.md" decomposed, and a copy made elsewhere has it composed.

    A copy whose note is gone is read in its place, but only the newest copy (by the time
    in its name): deleting a note with two copies made both answer, "aspirin" [1] beside
    "sulfa drugs" [2], both titled "Allergies"."""
    composed = {nfc(name) for name in names}
    reasons: dict[str, str] = {}
    orphans: dict[str, list[tuple[tuple[str, ...], str, str]]] = {}  # (when, copy, note)
    for name in names:
        note = name[1 : -len(_ICLOUD)] if name.startswith(".") and name.endswith(_ICLOUD) else ""
        if note.lower().endswith(MARKDOWN_SUFFIXES):
            # A placeholder iCloud left beside the note it downloaded says nothing: the note
            # is read ("Vaccinations.md" was reported "not downloaded: download it").
            if nfc(note) not in composed:
                reasons[name] = (
                    f"iCloud placeholder of {note}, which is not downloaded: download it "
                    "(Finder's Download Now, or turn off Optimise Mac Storage) to index it"
                )
            continue
        copy = _CONFLICT.fullmatch(name) if name.lower().endswith(MARKDOWN_SUFFIXES) else None
        if copy is None:
            continue
        original = copy["note"] + copy["ext"]
        if nfc(original) in composed:
            reasons[name] = (
                f"a sync tool's conflicted copy of {original}: merge what it changed into "
                "that note and delete it (the newest copy is read once that note is gone)"
            )
        else:
            orphans.setdefault(nfc(original), []).append((_when(copy), name, original))
    for copies in orphans.values():
        copies.sort()
        newest = copies[-1][1]
        for _when_made, name, original in copies[:-1]:
            reasons[name] = (
                f"an older conflicted copy of {original}, which is gone: the newest copy, "
                f"{newest}, is read in its place; merge what this one says into it and "
                "delete this one"
            )
    return reasons


def _when(copy: re.Match[str]) -> tuple[str, ...]:
    """When a conflicted copy was made, by its name, as a sortable key: the date, the time
    (Dropbox may leave it out: midnight), then Dropbox's " (2)" for a second copy that day."""
    if copy["day"]:  # Syncthing's
        return (copy["day"], copy["time"], "")
    return (
        copy["y"] + copy["m"] + copy["d"],
        copy["hms"] or "000000",
        (copy["nth"] or "").zfill(6),
    )
