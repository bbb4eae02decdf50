"""The watcher and the index given what a notes vault really goes through while kb-qa runs:
a file name in another encoding, edits during the first run, a stop mid-run, symlink loops,
a note overwritten with bytes, a folder that cannot be listed."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from uvicorn_thread import UvicornThread
from watching import PAGES, settle

from kb_qa.ingest import changes, vault
from kb_qa.ingest.watch import Watcher
from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.serve.app import create_app

KB = Callable[..., KnowledgeBase]


def texts(kb: KnowledgeBase) -> str:
    return "\n".join(c.text for c in kb.store.chunks())


def test_a_file_name_in_another_encoding_is_skipped_and_every_other_edit_indexed(
    watched: tuple[Path, KnowledgeBase, Watcher],
) -> None:
    """One such name (a zip extracted with Latin-1 names) failed every run after it with
    Python's codec error: no edit anywhere was indexed again until it was renamed."""
    folder, kb, watcher = watched
    since = time.time()
    with open(os.fsencode(folder) + b"/caf\xe9.md", "wb") as handle:
        handle.write(b"# Cafe\n\nEspresso.\n")
    (folder / "alpha.md").write_text("# Alpha\n\nStill indexed.\n", encoding="utf-8")
    settle(watcher, since)
    assert "Still indexed" in texts(kb)
    assert watcher.freshness().error == ""
    report = watcher.last_report
    assert report is not None
    assert ("caf\ufffd.md", "file " + vault.BAD_NAME) in report.skipped


def test_a_save_during_the_first_run_is_indexed_when_watching_starts(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    """The observer started after the first run: a note saved meanwhile stayed out of the
    index (and an edit stayed stale) until that file changed again."""
    folder = make_vault(dict(PAGES))
    base = kb(folder)
    watcher = Watcher(base, debounce=0.1, retry_delay=0.2).observe()
    since = time.time()

    def save_meanwhile(done: int, total: int) -> None:
        if not (folder / "during.md").exists():
            (folder / "during.md").write_text("# During\n\nWritten mid-run.\n", encoding="utf-8")

    base.index(progress=save_meanwhile)
    assert "during.md" not in {p["path"] for p in base.pages()}
    watcher.start(initial=False)
    try:
        settle(watcher, since)
        assert "during.md" in {p["path"] for p in base.pages()}
    finally:
        watcher.stop()


def test_stopping_mid_run_ends_soon_and_leaves_an_index_that_catches_up(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    """Stopping waited for the whole run (30 s, then a crash closing the index under it)."""
    folder = make_vault({f"n{i:04d}.md": f"# Note {i}\n\nText {i}.\n" for i in range(1500)})
    base = kb(folder, embed_batch=1)
    watcher = Watcher(base, debounce=0.05).start()
    deadline = time.monotonic() + 30
    while not watcher.freshness().indexing:
        assert time.monotonic() < deadline
        time.sleep(0.005)
    started = time.monotonic()
    assert watcher.stop() is True
    assert time.monotonic() - started < 10
    # The run ended early: it wrote nothing and reported nothing (a whole run takes seconds).
    assert watcher.last_report is None and base.pages() == []
    base.index()
    assert len(base.pages()) == 1500


def test_a_symlink_loop_does_not_stop_the_file_watcher(
    watched: tuple[Path, KnowledgeBase, Watcher], caplog: pytest.LogCaptureFixture
) -> None:
    """Resolving the loop's path raised in watchdog's thread: it died, and the vault was
    then said to be "replaced"."""
    folder, kb, watcher = watched
    with caplog.at_level(logging.INFO, logger="kb_qa.ingest.watch"):
        os.symlink("loop-b.md", folder / "loop-a.md")
        os.symlink("loop-a.md", folder / "loop-b.md")
        time.sleep(1.0)  # the vault check runs every retry_delay (0.2 s) while idle
        since = time.time()
        (folder / "alpha.md").write_text("# Alpha\n\nAfter the loop.\n", encoding="utf-8")
        settle(watcher, since)
    assert "After the loop" in texts(kb)
    said = " ".join(r.getMessage() for r in caplog.records)
    assert "replaced" not in said and "watcher stopped" not in said


def test_a_note_overwritten_with_bytes_is_not_quoted_any_more(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    """Its old text was still searched and cited, while /view showed the random bytes."""
    folder = make_vault(dict(PAGES))
    base = kb(folder, ignore=["ignored.md"])
    base.index()
    (folder / "alpha.md").write_bytes(b"\x00\x9f\x01 binary " * 200)
    report = base.index()
    assert any(p == "alpha.md" and "binary" in why for p, why in report.skipped)
    assert "alpha.md" not in {h.chunk.path for h in base.search("boiler pressure", 10)}
    (folder / "ignored.md").write_bytes(b"\x00 also binary")
    with UvicornThread(create_app(base)) as server:
        page = httpx.get(server.url + "/view/alpha.md", timeout=10)
        # Why, as the docs promise (it said "not an indexed page of this vault"); a path
        # the index leaves out for another reason is only not indexed.
        ignored = httpx.get(server.url + "/view/ignored.md", timeout=10)
        missing = httpx.get(server.url + "/view/nowhere.md", timeout=10)
    assert page.status_code == 404 and "\x00" not in page.text
    assert "binary file with a Markdown extension" in page.json()["error"]
    assert ignored.status_code == missing.status_code == 404
    assert "binary" not in ignored.text and "binary" not in missing.text
    assert base.index().deleted == 0  # nothing churns on the next run


def test_a_skipped_file_is_logged_once_not_on_every_save(
    watched: tuple[Path, KnowledgeBase, Watcher], caplog: pytest.LogCaptureFixture
) -> None:
    folder, _kb, watcher = watched
    (folder / "blob.md").write_bytes(b"\x00" * 100)
    with caplog.at_level(logging.WARNING, logger="kb_qa.ingest.watch"):
        for n in range(3):
            since = time.time()
            (folder / "alpha.md").write_text(f"# Alpha\n\nSave {n}.\n", encoding="utf-8")
            settle(watcher, since)
    said = [r for r in caplog.records if "blob.md" in r.getMessage()]
    assert len(said) == 1, [r.getMessage() for r in said]


def test_a_file_name_cannot_forge_a_line_of_the_log() -> None:
    forged = "x\n2026-12-05 15:20:00,000 ERROR kb_qa.ingest.watch: vault wiped.md"
    assert "\n" not in changes.shown(forged) and "\\x0a2026" in changes.shown(forged)


def test_the_notes_of_a_folder_that_cannot_be_listed_are_kept() -> None:
    """They were deleted from the index without a word (a file that cannot be read keeps
    what was indexed of it)."""
    skipped = [("meetings", f"{vault.UNLISTED}: Permission denied")]
    assert vault.kept_by_unlisted("meetings/2025-03-12.md", skipped)
    assert not vault.kept_by_unlisted("meetings-old.md", skipped)
    assert not vault.kept_by_unlisted("notes/a.md", [("notes/a.md", "binary file")])


@pytest.mark.parametrize("name", ["notes", "aa"])  # walked last, and before another folder
def test_an_unlistable_folder_is_reported_and_its_notes_kept(
    make_vault: Callable[..., Path], kb: KB, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """Its notes were deleted from the index without a word. The system's refusal to list
    it (chmod 000 for anyone but root) is what os.walk meets, raised here for root too."""
    folder = make_vault(
        {**PAGES, f"{name}/gamma.md": "# Gamma\n\nGamma text.\n", "zz/z.md": "# Z\n"}
    )
    if name == "notes":
        (folder / "zz" / "z.md").unlink()
        (folder / "zz").rmdir()
    base = kb(folder)
    base.index()
    listing = os.scandir

    def refusing(path: object = ".") -> object:
        if Path(os.fsdecode(path)) == folder / name:
            raise PermissionError(13, "Permission denied", os.fsdecode(path))
        return listing(path)

    monkeypatch.setattr(os, "scandir", refusing)
    report = base.index()
    monkeypatch.undo()
    assert any(p == name and vault.UNLISTED in why for p, why in report.skipped)
    assert f"{name}/gamma.md" in {p["path"] for p in base.pages()}
    assert report.deleted == 0


def test_health_says_the_vault_is_missing_not_to_run_index(
    make_vault: Callable[..., Path],
) -> None:
    folder = make_vault(dict(PAGES))
    with KnowledgeBase(folder, embed_model="hash") as base:
        base.index()
        with UvicornThread(create_app(base)) as server:
            folder.rename(folder.with_name("away"))
            assert "vault folder" in base.problem() and "missing" in base.problem()
            # Anonymous clients read why, not where the server keeps its notes.
            problem = httpx.get(server.url + "/api/health", timeout=10).json()["problem"]
        assert "vault folder is missing" in problem and str(folder) not in problem


def test_a_vault_moved_away_is_answered_from_memory_and_never_made_again(
    make_vault: Callable[..., Path],
) -> None:
    """With the index inside the vault (the default), moving the vault away took the index
    with it: searches and questions got a 500 (its manifest could not be opened), and
    logging the question made ``<vault>/.kb-qa`` again, an empty vault its watcher then
    indexed in place of the real one."""
    folder = make_vault(dict(PAGES))
    with KnowledgeBase(folder, embed_model="hash") as base:
        base.index()
        with UvicornThread(create_app(base)) as server:
            assert httpx.get(server.url + "/api/search", params={"q": "boiler"}).status_code == 200
            away = folder.rename(folder.with_name("away"))
            for _ in range(3):  # on new worker threads too
                found = httpx.get(server.url + "/api/search", params={"q": "boiler pressure"})
                assert found.status_code == 200 and found.json()["hits"][0]["path"] == "alpha.md"
                asked = httpx.post(
                    server.url + "/api/ask",
                    json={"question": "boiler pressure", "stream": False},
                    timeout=30,
                )
                assert asked.status_code == 200 and "alpha" in asked.json()["answer"].lower()
            # Asked at once: on worker threads that never opened the manifest (the first
            # question after the move on such a thread failed: it lists the indexed pages).
            with ThreadPoolExecutor(6) as pool:
                replies = list(
                    pool.map(lambda n: _ask(server.url, f"boiler pressure {n}"), range(6))
                )
            assert all("alpha" in reply for reply in replies), replies
            assert not folder.exists()
        assert (away / ".kb-qa" / "manifest.sqlite3").is_file()


def _ask(url: str, question: str) -> str:
    asked = httpx.post(url + "/api/ask", json={"question": question, "stream": False}, timeout=60)
    return asked.text.lower() if asked.status_code == 200 else f"HTTP {asked.status_code}"


def test_a_search_answers_from_the_view_it_has_while_a_new_one_is_built(
    make_vault: Callable[..., Path], kb: KB, tmp_path: Path
) -> None:
    """The new view was built under the lock every reader takes, by the first request after
    an index run: on a 20,000-note vault every search then waited 12-17 s."""
    folder = make_vault(dict(PAGES))
    served = kb(folder)
    served.index()
    assert {h.chunk.path for h in served.search("boiler pressure", 3)} >= {"alpha.md"}
    (folder / "alpha.md").write_text("# Alpha\n\n## Kettles\n\nThe kettle whistles.\n")
    writer = kb(folder)  # another process's index run: a new generation on disk
    writer.index()
    with served._building:  # a build of the new view in progress elsewhere
        old = served.search("boiler pressure", 3)
    assert old and old[0].chunk.path == "alpha.md"  # answered at once, from the old view
    assert served.search("kettle whistles", 3)[0].chunk.heading == "Kettles"  # then the new


def test_choosing_a_templates_folder_in_obsidian_takes_its_notes_out(
    watched: tuple[Path, KnowledgeBase, Watcher],
) -> None:
    """Obsidian writes ``.obsidian/templates.json`` when a templates folder is picked: the
    watcher ignored it (a hidden file), and the template stayed searchable until some
    other note was edited."""
    folder, kb, watcher = watched
    since = time.time()
    (folder / ".obsidian").mkdir()  # as in any vault Obsidian has opened
    (folder / "Templates").mkdir()
    (folder / "Templates" / "Daily.md").write_text("# {{date}}\n\n## Log\n\nKumquat ritual.\n")
    settle(watcher, since)
    assert "Kumquat ritual" in texts(kb)
    since = time.time()
    (folder / ".obsidian" / "templates.json").write_text('{"folder": "Templates"}')
    settle(watcher, since)
    assert "Kumquat ritual" not in texts(kb)


def test_a_long_run_says_how_far_it_has_got(
    make_vault: Callable[..., Path],
    kb: KB,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A 4.8 MB note took minutes to embed under --watch, and neither the log nor
    /api/health said anything meanwhile."""
    monkeypatch.setattr(changes, "PROGRESS_SECONDS", 0.0)  # a line per batch, not per 30 s
    folder = make_vault({f"n{i:04d}.md": f"# Note {i}\n\nText {i}.\n" for i in range(600)})
    base = kb(folder, embed_batch=50)
    caplog.set_level(logging.INFO, logger="kb_qa.ingest.watch")
    watcher = Watcher(base, debounce=0.05).start()
    try:
        seen: set[tuple[int, int]] = set()
        deadline = time.monotonic() + 60
        while not watcher.last_report:
            fresh = watcher.freshness().as_dict()
            if fresh["to_embed"]:
                seen.add((fresh["embedded"], fresh["to_embed"]))
            assert time.monotonic() < deadline, "the first run never ended"
            time.sleep(0.001)
        assert watcher.wait_idle()
        assert watcher.freshness().as_dict()["to_embed"] == 0  # no run embedding now
    finally:
        watcher.stop()
    assert seen and all(0 <= done <= total == 600 for done, total in seen), seen
    said = [r.getMessage() for r in caplog.records if "sections embedded" in r.getMessage()]
    assert (
        said and said[0].startswith("indexing: ") and said[0].endswith(" of 600 sections embedded")
    )
