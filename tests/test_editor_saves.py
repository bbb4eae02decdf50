"""What editors leave beside a note while it is open or being saved, and what the watcher
says (and indexes) meanwhile: Emacs' lock links, macOS' AppleDouble files, saves faster than
the file system's clock."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from watching import PAGES, settle

from kb_qa.ingest.watch import Watcher
from kb_qa.kb.knowledge_base import KnowledgeBase


def test_an_emacs_lock_or_an_appledouble_file_is_not_reported_as_a_skipped_note(
    watched: tuple[Path, KnowledgeBase, Watcher], caplog: pytest.LogCaptureFixture
) -> None:
    """Emacs links ``.#note.md`` to user@host.pid while a note is being edited, macOS writes
    ``._note.md`` beside it on a USB stick or a network share: neither is a note, and each
    was logged as "skipped .#alpha.md: hidden file" whenever a save found it there."""
    folder, kb, watcher = watched
    with caplog.at_level(logging.WARNING, logger="kb_qa.ingest.watch"):
        os.symlink("audit@host.1234:1700000000", folder / ".#alpha.md")
        (folder / "notes" / "._beta.md").write_bytes(b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X")
        since = time.time()
        (folder / "alpha.md").write_text("# Alpha\n\nThe boiler runs at 5 bar.\n", "utf-8")
        settle(watcher, since)
        (folder / ".draft.md").write_text("# Draft\n\nNot ready.\n", "utf-8")
        since = time.time()
        (folder / "alpha.md").write_text("# Alpha\n\nThe boiler runs at 6 bar.\n", "utf-8")
        settle(watcher, since)
    assert "6 bar" in "\n".join(c.text for c in kb.store.chunks())
    said = [r.getMessage() for r in caplog.records]
    assert not [m for m in said if ".#alpha.md" in m or "._beta.md" in m], said
    # A note the user hid is still said once: they may wonder why it is not found.
    assert len([m for m in said if ".draft.md" in m]) == 1, said


def test_a_save_of_the_same_size_in_the_same_tick_of_the_clock_is_indexed(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    """A file system's clock ticks coarsely (FAT on a USB stick every 2 s, ext3 and HFS+
    every second, Linux before 6.13 every few ms): a save in the same tick as the last index
    run's read keeps the mtime, and one that turns "3 bar" into "7 bar" keeps the size too.
    The index, seeing size and mtime unchanged, kept answering "3 bar" for good."""
    folder = make_vault(dict(PAGES))
    base = kb(folder)
    base.index()
    alpha = folder / "alpha.md"
    read = alpha.stat()
    alpha.write_text(PAGES["alpha.md"].replace("3 bar", "7 bar"), "utf-8")
    os.utime(alpha, ns=(read.st_atime_ns, read.st_mtime_ns))  # the same tick of the clock
    assert alpha.stat().st_size == read.st_size
    base.index()
    said = "\n".join(c.text for c in base.store.chunks())
    assert "7 bar" in said and "3 bar" not in said
    assert base.index().changed_files == 0  # once the tick is past, nothing is read again


def test_the_log_says_how_many_notes_went_not_only_how_many_sections(
    watched: tuple[Path, KnowledgeBase, Watcher], caplog: pytest.LogCaptureFixture
) -> None:
    """Deleting a folder of notes was logged as "re-indexed 0 changed file(s): 0 embedded,
    0 reused, 1 deleted": 1 of what, and were notes deleted by kb-qa?"""
    folder, _kb, watcher = watched
    with caplog.at_level(logging.INFO, logger="kb_qa.ingest.watch"):
        since = time.time()
        (folder / "notes" / "beta.md").unlink()
        settle(watcher, since)
        since = time.time()
        (folder / "alpha.md").rename(folder / "boilers.md")
        settle(watcher, since)
    said = [r.getMessage() for r in caplog.records if "re-indexed" in r.getMessage()]
    assert said[0].startswith("re-indexed 0 changed file(s), 1 removed: 0 section(s) "), said
    assert said[1].startswith("re-indexed 1 changed file(s), 1 removed: 0 section(s) embedded")
