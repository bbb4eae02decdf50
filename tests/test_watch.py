"""The watcher keeps a real index current through the edits editors really make."""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from api_helpers import serve_process
from conftest import cli_env
from watching import PAGES, settle, watch_process

from kb_qa.index.store import LOCK_GRACE
from kb_qa.ingest.watch import Watcher, relevant
from kb_qa.kb.knowledge_base import KnowledgeBase


def save_like_an_editor(path: Path, text: str) -> None:
    """Write a temp file and rename it onto the real one (vim, VS Code, JetBrains...)."""
    tmp = path.with_name(path.name + ".tmp~")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def found(kb: KnowledgeBase, query: str) -> set[str]:
    return {h.chunk.path for h in kb.search(query, 10)}


def texts(kb: KnowledgeBase) -> str:
    return "\n".join(c.text for c in kb.store.chunks())


def test_startup_reconciles_with_disk(watched: tuple[Path, KnowledgeBase, Watcher]) -> None:
    _vault, kb, watcher = watched
    assert {p["path"] for p in kb.pages()} == set(PAGES)
    assert watcher.freshness().last_change_indexed is not None


def test_save_via_rename_is_indexed(watched: tuple[Path, KnowledgeBase, Watcher]) -> None:
    vault, kb, watcher = watched
    since = time.time()
    save_like_an_editor(
        vault / "alpha.md", "# Alpha\n\n## Boilers\n\nThe boiler pressure is 7 bar.\n"
    )
    settle(watcher, since)
    assert "7 bar" in texts(kb) and "3 bar" not in texts(kb)
    assert watcher.last_report is not None and watcher.last_report.embedded == 1


def test_new_deleted_and_moved_folders(watched: tuple[Path, KnowledgeBase, Watcher]) -> None:
    vault, kb, watcher = watched
    since = time.time()
    (vault / "gamma.md").write_text("# Gamma\n\nSextants measure angles.\n", encoding="utf-8")
    settle(watcher, since)
    assert "gamma.md" in found(kb, "sextants")
    since = time.time()
    shutil.move(vault / "notes", vault / "archive")
    settle(watcher, since)
    paths = {p["path"] for p in kb.pages()}
    assert "archive/beta.md" in paths and "notes/beta.md" not in paths
    assert watcher.last_report is not None and watcher.last_report.embedded == 0  # moved, not new
    since = time.time()
    (vault / "gamma.md").unlink()
    settle(watcher, since)
    assert "gamma.md" not in {p["path"] for p in kb.pages()}


def test_file_replaced_by_folder(watched: tuple[Path, KnowledgeBase, Watcher]) -> None:
    vault, kb, watcher = watched
    since = time.time()
    (vault / "alpha.md").unlink()
    (vault / "alpha.md").mkdir()
    (vault / "alpha.md" / "inner.md").write_text("# Inner\n\nQuartz clocks.\n", encoding="utf-8")
    settle(watcher, since)
    paths = {p["path"] for p in kb.pages()}
    assert "alpha.md" not in paths and "alpha.md/inner.md" in paths


def test_swap_and_backup_files_ignored() -> None:
    assert not relevant("/v/.alpha.md.swp", False)
    assert not relevant("/v/alpha.md~", False)
    assert not relevant("/v/.#alpha.md", False)
    assert not relevant("/v/4913", False)
    assert relevant("/v/alpha.md", False)
    assert relevant("/v/mkdocs.yml", False)
    assert relevant("/v/hooks/shortcodes.py", False)  # a hook: pages render differently
    # a Docusaurus site's pages and config (an edited .mdx was never re-indexed)
    assert relevant("/v/docs/intro.mdx", False) and relevant("/v/docusaurus.config.ts", False)
    assert not relevant("/v/.kb-qa/manifest.sqlite3", False)
    assert relevant("/v/notes", True)
    # Nothing under the folders the vault scan skips starts an index run.
    assert not relevant("/v/node_modules/pkg/README.md", False)
    assert not relevant("/v/node_modules", True)
    assert not relevant("/v/.git/index.md", False)
    assert relevant("/v/docs/node_modules.md", False)


def test_burst_of_files_coalesces(watched: tuple[Path, KnowledgeBase, Watcher]) -> None:
    vault, kb, watcher = watched
    runs_before = watcher.freshness().last_change_indexed
    since = time.time()
    for n in range(300):
        (vault / "burst" / f"{n:03}.md").parent.mkdir(exist_ok=True)
        (vault / "burst" / f"{n:03}.md").write_text(f"# Note {n}\n\nItem {n} of the burst.\n")
    settle(watcher, since)
    assert len([p for p in kb.pages() if p["path"].startswith("burst/")]) == 300
    assert watcher.freshness().last_change_indexed != runs_before
    assert watcher.freshness().queue == 0


def test_vault_disappears_and_returns(watched: tuple[Path, KnowledgeBase, Watcher]) -> None:
    vault, kb, watcher = watched
    parked = vault.with_name("parked")
    vault.rename(parked)
    time.sleep(1.0)
    # The index keeps serving what it had.
    assert "alpha.md" in found(kb, "boiler pressure")
    parked.rename(vault)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and watcher.freshness().error:
        time.sleep(0.1)
    since = time.time()
    save_like_an_editor(vault / "alpha.md", "# Alpha\n\nThe boiler is now electric.\n")
    settle(watcher, since)
    assert "electric" in texts(kb)
    assert watcher.freshness().error == ""


@pytest.mark.parametrize("how", ["restored", "swapped"])
def test_a_vault_folder_replaced_at_once_is_watched_again(
    watched: tuple[Path, KnowledgeBase, Watcher], how: str
) -> None:
    """Restored from a backup (deleted and copied back) or swapped in with ``mv``, between
    two of the watcher's checks: the observer watched the old folder (or nothing) for good,
    and health said all was well."""
    vault, kb, watcher = watched
    copy = vault.with_name("copy")
    shutil.copytree(vault, copy)
    if how == "restored":
        shutil.rmtree(vault)
        shutil.copytree(copy, vault)
    else:
        vault.rename(vault.with_name("old"))
        copy.rename(vault)
    time.sleep(watcher.retry_delay * 3)  # a check or two, as a user's next save comes later
    since = time.time()
    save_like_an_editor(vault / "alpha.md", "# Alpha\n\nThe boiler is now a heat pump.\n")
    settle(watcher, since)
    assert "heat pump" in texts(kb)
    assert watcher.freshness().error == ""


def test_another_writer_is_waited_for_not_reported_as_a_failure(
    watched: tuple[Path, KnowledgeBase, Watcher],
    kb: Callable[..., KnowledgeBase],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A second server or a `kb-qa index` run holding the write lock made a healthy server
    say "degraded" (and its readiness 503) with an ERROR line per edit; then it said it
    was waiting at every retry (120 lines in 6 minutes of another server's bulk update)."""
    vault, base, watcher = watched
    other = kb(vault)  # another process's handle on the same index
    since = time.time()
    with other.store.writer_lock(), caplog.at_level(logging.INFO, "kb_qa.ingest.watch"):
        save_like_an_editor(vault / "alpha.md", "# Alpha\n\nThe boiler runs on wood.\n")
        deadline = time.monotonic() + 20
        while (watcher.freshness().last_change_seen or 0.0) < since:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        time.sleep((LOCK_GRACE + watcher.retry_delay) * 3)  # it tried, found the lock taken
        assert watcher.freshness().error == ""
        fresh = watcher.freshness()
        assert fresh.queue > 0 or fresh.indexing  # the edit waits (or is being tried again)
        assert caplog.text.count("another kb-qa process is updating the index") == 1
    assert watcher.wait_idle()
    assert "wood" in texts(base)


def test_bad_files_never_stop_the_watcher(
    watched: tuple[Path, KnowledgeBase, Watcher], caplog: pytest.LogCaptureFixture
) -> None:
    vault, kb, watcher = watched
    since = time.time()
    (vault / "binary.md").write_bytes(b"\x00\x01\x02" * 100)
    (vault / "latin1.md").write_bytes("# Caf\xe9\n\nCr\xe8me br\xfbl\xe9e.\n".encode("latin-1"))
    (vault / "front.md").write_text("---\ntags: [x\n---\n# Front\n\nBody.\n", encoding="utf-8")
    os.symlink(vault / "loop", vault / "loop")  # a symlink pointing at itself
    with caplog.at_level("WARNING", logger="kb_qa"):
        settle(watcher, since)
    report = watcher.last_report
    assert report is not None
    assert any(p == "binary.md" for p, _ in report.skipped)
    # What `kb-qa index` would print about a file it indexed anyway, the watcher says too.
    said = "\n".join(r.getMessage() for r in caplog.records)
    assert {p for p, _ in report.warnings} >= {"latin1.md", "front.md"}
    for path, message in report.warnings:
        assert f"{path}: {message}" in said
    since = time.time()
    save_like_an_editor(vault / "alpha.md", "# Alpha\n\nStill watching.\n")
    settle(watcher, since)
    assert "Still watching" in texts(kb)


def test_mkdocs_yml_change_reindexes_urls_and_anchors(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    vault = make_vault(
        {
            "mkdocs.yml": "site_name: S\n",
            "docs/setup.md": "# Setup\n\n## Café & Crème\n\nWarm milk first.\n",
        }
    )
    base = kb(vault)
    watcher = Watcher(base, debounce=0.1, retry_delay=0.2).start()
    try:
        assert watcher.wait_idle()
        before = {c.anchor: c.url for c in base.store.chunks()}
        assert before == {"setup": "setup/", "cafe-creme": "setup/"}
        since = time.time()
        save_like_an_editor(
            vault / "mkdocs.yml",
            "site_name: S\nuse_directory_urls: false\nmarkdown_extensions:\n  - toc:\n"
            "      slugify: !!python/object/apply:pymdownx.slugs.slugify {kwds: {case: lower}}\n",
        )
        settle(watcher, since)
        after = {c.anchor: c.url for c in base.store.chunks()}
        assert after == {"setup": "setup.html", "café--crème": "setup.html"}
        report = watcher.last_report
        assert report is not None and report.rebuilt and report.embedded == 0
    finally:
        watcher.stop()


_LIMITED = """
import sys, time
from pathlib import Path
from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.ingest.watch import Watcher

vault, index, grow = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
kb = KnowledgeBase(vault, embed_model="hash", index_dir=index)
watcher = Watcher(kb, debounce=0.05, retry_delay=0.2).start()
assert watcher.wait_idle()
for n in range(grow):  # folders made while it watches
    (vault / "more" / f"d{n}").mkdir(parents=True)
time.sleep(1.0)
assert watcher.wait_idle()
print("pages", len(kb.pages()))
print("error", watcher.freshness().unwatched)
watcher.stop()
"""


@pytest.mark.parametrize(
    ("folders", "grow", "limit"),
    [
        (40, 0, "max_inotify_watches"),
        (2, 40, "max_inotify_watches"),
        (2, 0, "max_inotify_instances"),  # editors and sync tools use instances up too
    ],
    ids=["at-start", "later", "instances"],
)
def test_the_limit_of_watched_folders_is_said_not_a_traceback_or_silence(
    make_vault: Callable[..., Path], tmp_path: Path, folders: int, grow: int, limit: str
) -> None:
    """Past the system's limit of inotify watches (here 20, set in a user namespace of its
    own), starting to watch crashed with a traceback, and folders made later went unwatched
    with only watchdog's own log line while health said all was well."""
    vault = make_vault({f"f{n}/note.md": f"# Note {n}\n\nText {n}.\n" for n in range(folders)})
    value = 0 if limit == "max_inotify_instances" else 20
    limited = f'echo {value} > /proc/sys/user/{limit} && exec "{sys.executable}" -c "$0" "$@"'
    run = subprocess.run(
        ["unshare", "-Ur", "sh", "-c", limited, _LIMITED, str(vault), str(tmp_path / "idx"),
         str(grow)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    if run.returncode and "unshare" in run.stderr and "Traceback" not in run.stderr:
        pytest.skip(f"no user namespace to lower the limit in: {run.stderr.strip()}")
    assert run.returncode == 0, run.stderr
    assert f"pages {folders}" in run.stdout  # the index is built all the same
    kind = "instances" if limit == "max_inotify_instances" else "watches"
    assert f"fs.inotify.max_user_{kind}" in run.stdout
    assert "Traceback" not in run.stderr


def test_a_lasting_warning_is_logged_once_not_on_every_save(
    make_vault: Callable[..., Path],
    kb: Callable[..., KnowledgeBase],
    caplog: pytest.LogCaptureFixture,
) -> None:
    vault = make_vault(
        {
            "mkdocs.yml": "site_name: W\nmarkdown_extensions:\n  - no_such_extension_xyz\n",
            "docs/index.md": "# Home\n\nText.\n",
        }
    )
    watcher = Watcher(kb(vault), debounce=0.05, retry_delay=0.2)
    with caplog.at_level("WARNING", logger="kb_qa.ingest.watch"):
        watcher.start()
        assert watcher.wait_idle()
        for n in range(3):
            since = time.time()
            save_like_an_editor(vault / "docs" / "index.md", f"# Home\n\nText {n}.\n")
            settle(watcher, since)
    watcher.stop()
    said = [r for r in caplog.records if "no_such_extension_xyz" in r.getMessage()]
    assert len(said) == 1, [r.getMessage() for r in said]


def test_what_the_first_run_skipped_is_not_said_again_at_the_first_save(
    make_vault: Callable[..., Path],
    kb: Callable[..., KnowledgeBase],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """`kb-qa serve` says what its first run skipped, then started the watcher with nothing
    said: the first save logged every skipped file again (a synced vault's conflict copies)."""
    vault = make_vault(
        {
            "Tea.md": "# Tea\n\nGreen, 80 degrees.\n",
            "Tea.sync-conflict-20251203-101010-ABCDEFG.md": "# Tea\n\nBlack.\n",
        }
    )
    opened = kb(vault)
    first = opened.index()
    assert [path for path, _ in first.skipped] == ["Tea.sync-conflict-20251203-101010-ABCDEFG.md"]
    watcher = Watcher(opened, debounce=0.05, retry_delay=0.2)
    with caplog.at_level("WARNING", logger="kb_qa.ingest.watch"):
        watcher.observe().start(initial=False, said=first)
        since = time.time()
        save_like_an_editor(vault / "Tea.md", "# Tea\n\nGreen, 75 degrees.\n")
        settle(watcher, since)
    watcher.stop()
    assert "sync-conflict" not in caplog.text, caplog.text


def test_kb_qa_watch_follows_a_re_pointed_vault_symlink(tmp_path: Path) -> None:
    """git-sync publishes each revision by re-pointing a symlink. The watcher followed the
    folder it started on, which git-sync then deletes: it logged "does not exist" every 2 s
    forever and never indexed the new revision. Now `kb-qa watch` says what happened and
    opens the index again on the folder the link leads to (exiting instead would put its
    pod in Kubernetes' crash-loop back-off at every revision)."""
    root = tmp_path / "git"
    (root / "rev1").mkdir(parents=True)
    (root / "rev1" / "a.md").write_text("# A\n\nFirst revision.\n", encoding="utf-8")
    (root / "docs").symlink_to("rev1")
    index = tmp_path / "idx"
    env = {**os.environ, "KBQA_EMBED_MODEL": "hash", "PYTHONUNBUFFERED": "1"}
    log = tmp_path / "watch.log"
    args = [str(root / "docs"), "--index-dir", str(index)]
    with watch_process(args, env, log) as watching:
        shutil.copytree(root / "rev1", root / "rev2")
        (root / "rev2" / "b.md").write_text("# B\n\nThe quokka revision.\n", encoding="utf-8")
        (root / "next").symlink_to("rev2")
        os.replace(root / "next", root / "docs")  # what git-sync does, atomically
        shutil.rmtree(root / "rev1")
        search = [sys.executable, "-m", "kb_qa.cli", "search", "quokka", "--vault",
                  str(root / "docs"), "--index-dir", str(index), "--json"]  # fmt: skip
        found = ""
        while "b.md" not in found:
            watching.check()
            time.sleep(0.5)
            found = subprocess.run(search, env=env, capture_output=True, text=True).stdout
    said = log.read_text()
    assert "re-pointed symlink" in said and str(root / "rev2") in said
    assert "Traceback" not in said


def test_serve_watch_on_a_re_pointed_symlink_says_so_and_stays_ready(tmp_path: Path) -> None:
    """`serve --watch` cannot follow the link (its app holds the index): health says so,
    and the server, which still serves the revision it started on, stays ready."""
    root = tmp_path / "git"
    (root / "rev1").mkdir(parents=True)
    (root / "rev1" / "a.md").write_text("# A\n\nFirst revision.\n", encoding="utf-8")
    (root / "docs").symlink_to("rev1")
    env = cli_env(KBQA_INDEX_DIR=str(tmp_path / "idx"))
    with contextlib.closing(serve_process(root / "docs", env, "--watch")) as served:
        url, _proc = next(served)
        shutil.copytree(root / "rev1", root / "rev2")
        (root / "next").symlink_to("rev2")
        os.replace(root / "next", root / "docs")
        deadline = time.monotonic() + 30
        while "re-pointed" not in str(httpx.get(url + "/api/health").json()["problem"]):
            assert time.monotonic() < deadline
            time.sleep(0.2)
        health = httpx.get(url + "/api/health").json()
        ready = httpx.get(url + "/api/ready")
    assert health["status"] == "degraded" and health["problem"].startswith("edits are not")
    assert ready.status_code == 200 and ready.json()["ready"] is True
