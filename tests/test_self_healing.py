"""The index checks itself: lost Chroma data is put back, a vanished collection or index
folder is made again, and an unreachable Chroma is a 503 with a reason, never a 500.

Real parts only: embedded Chroma in tmp_path, a real ``chroma run`` server that is stopped
and restarted on an empty folder, real uvicorn + HTTP.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from api_helpers import rated
from chroma_server import chroma_server
from uvicorn_thread import UvicornThread
from watching import settle

from kb_qa.errors import IndexStateError
from kb_qa.ingest.watch import Watcher
from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.serve.app import create_app
from kb_qa.serve.serving import free_port

KB = Callable[..., KnowledgeBase]
PAGES = {
    "a.md": "# Alpha\n\n## Install\n\nRun the installer for the quokka tool.\n",
    "b.md": "# Beta\n\n## Backup\n\nCopy the wombat folder nightly.\n",
}


def vector_ranked(index: KnowledgeBase, query: str) -> bool:
    hits = index.search(query, 5)
    return bool(hits) and hits[0].vector_rank is not None


def test_deleted_chroma_folder_is_refilled_from_the_cache(
    make_vault: Callable[..., Path], run_cli: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    vault = make_vault(PAGES)
    assert run_cli("index", str(vault)).returncode == 0
    shutil.rmtree(vault / ".kb-qa" / "chroma")
    result = run_cli("index", str(vault))
    assert result.returncode == 0, result.stderr
    assert "Repaired: Chroma holds 0 vectors for 4 indexed chunks" in result.stdout
    assert "0 chunks embedded, 4 reused" in result.stdout  # no model work: the cache has them
    hits = json.loads(run_cli("search", "wombat folder", "--vault", str(vault), "--json").stdout)
    assert hits[0]["path"] == "b.md" and hits[0]["vector_rank"] is not None
    again = run_cli("index", str(vault))
    assert "Repaired" not in again.stdout and "0 files changed" in again.stdout


def test_partly_lost_vectors_are_noticed(make_vault: Callable[..., Path], kb: KB) -> None:
    index = kb(make_vault(PAGES))
    index.index()
    ids = [c.id for c in index.store.chunks() if c.path == "b.md"]
    index.store.collection.delete(ids=ids)
    report = index.index()
    assert report.repaired and report.embedded == 0
    assert index.store.collection.count() == 4
    assert vector_ranked(index, "wombat folder")


def test_vectors_of_no_indexed_chunk_are_removed(make_vault: Callable[..., Path], kb: KB) -> None:
    """Two writers on one workspace at once left one's section among the other's, and the
    next run found nothing to do: only too few vectors counted as a problem."""
    index = kb(make_vault(PAGES))
    index.index()
    some = index.store.collection.get(limit=1, include=["embeddings", "metadatas"])
    index.store.collection.add(
        ids=["other-vault.md#zebra-0"],
        embeddings=[list(some["embeddings"][0])],
        metadatas=[some["metadatas"][0]],
    )
    # While a run writes (Chroma first, then the manifest) that is its own work in flight:
    # health said "degraded, run kb-qa index" in the middle of every run.
    with index.store.writer_lock():  # as a run holds it
        index.store.set_meta(writing="1")
        assert index.problem() == ""
        index.store.set_meta(writing="0")
    assert "1 vectors of no indexed chunk" in index.problem()
    report = index.index()
    assert "1 vectors of no indexed chunk" in report.repaired
    assert index.store.collection.count() == 4
    assert not index.store.collection.get(ids=["other-vault.md#zebra-0"])["ids"]
    assert not index.index().repaired


def test_a_run_deleting_vectors_now_is_not_a_fault(make_vault: Callable[..., Path], kb: KB) -> None:
    """A watcher's run applies Chroma's deletes before the manifest's: for that moment health
    said "degraded: Chroma holds 7,004 vectors for 8,437 indexed chunks: run kb-qa index",
    and /api/ready answered 503 during every bulk update (a readiness probe flapped)."""
    index = kb(make_vault(PAGES))
    index.index()
    ids = [c.id for c in index.store.chunks() if c.path == "b.md"]
    index.store.collection.delete(ids=ids)  # as a run deleting b.md has done so far
    with index.store.writer_lock():  # that run, still writing
        assert index.problem() == ""
    assert "vectors for" in index.problem()  # none writing: lost vectors, said


def test_chroma_server_restarted_empty_then_down(
    make_vault: Callable[..., Path], kb: KB, tmp_path: Path
) -> None:
    port = free_port()
    vault = make_vault(PAGES)
    with chroma_server(tmp_path / "chroma-1", port) as url:
        serving = kb(vault, chroma_url=url, rate_limit=0)
        serving.index()
        app = create_app(serving, serving.settings)
        with UvicornThread(app) as api:
            assert httpx.get(api.url + "/api/health").json()["status"] == "ok"
    # The server comes back on an empty folder: the collection is gone.
    with chroma_server(tmp_path / "chroma-2", port):
        with UvicornThread(create_app(serving, serving.settings)) as api:
            r = httpx.get(api.url + "/api/search", params={"q": "wombat"})
            assert r.status_code == 200  # keyword results still come; no 500
            health = httpx.get(api.url + "/api/health").json()
            assert health["status"] == "degraded" and "0 vectors" in health["problem"]
            assert health["problem"].endswith("run `kb-qa index` to repair it")
            # A re-index by another process heals it; the running server sees it at once.
            writer = kb(vault, chroma_url=serving.settings.chroma_url)
            assert writer.index().repaired
            assert httpx.get(api.url + "/api/health").json()["status"] == "ok"
            hits = httpx.get(api.url + "/api/search", params={"q": "wombat folder"}).json()
            assert hits["hits"][0]["vector_rank"] is not None
    # Chroma is down: search and answers go on from the in-memory view (the manifest holds
    # every vector), and health says what is wrong.
    with UvicornThread(create_app(serving, serving.settings)) as api:
        r = httpx.get(api.url + "/api/search", params={"q": "wombat folder"})
        assert r.status_code == 200 and r.json()["hits"][0]["vector_rank"] is not None
        health = httpx.get(api.url + "/api/health")
        assert health.status_code == 200 and health.json()["status"] == "degraded"
        assert "Chroma server" in health.json()["problem"]
        r = httpx.post(
            api.url + "/api/ask", json={"question": "wombat backup", "stream": False}, timeout=30
        )
        assert r.status_code == 200 and r.json()["citations"]
    assert serving.search("wombat", 3)
    # Writing needs Chroma: an index run says what to check.
    with pytest.raises(IndexStateError, match="Chroma server"):
        serving.index()
    # ... and so does the watcher, in health, without the server's address.
    watcher = Watcher(serving, debounce=0.1, retry_delay=0.5).start()
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not watcher.freshness().error:
            time.sleep(0.1)
        assert url.split("://")[1] in watcher.freshness().error  # the log keeps it
        with UvicornThread(create_app(serving, serving.settings, watcher)) as api:
            health = httpx.get(api.url + "/api/health", timeout=30)
            assert "Chroma server" in health.json()["freshness"]["error"]
            assert url.split("://")[1] not in health.text
    finally:
        watcher.stop()


@contextmanager
def _watched_api(vault: Path, kb: KB) -> Iterator[tuple[KnowledgeBase, Watcher, UvicornThread]]:
    """A watched index of ``vault`` in its default folder, served, its first run done."""
    index = kb(vault, index_dir=vault / ".kb-qa", rate_limit=0)
    watcher = Watcher(index, debounce=0.1, retry_delay=0.2).start()
    try:
        assert watcher.wait_idle()
        with UvicornThread(create_app(index, index.settings, watcher)) as api:
            yield index, watcher, api
    finally:
        watcher.stop()


def test_watcher_recreates_a_deleted_index_folder(
    make_vault: Callable[..., Path], kb: KB, tmp_path: Path
) -> None:
    vault = make_vault(PAGES)
    with _watched_api(vault, kb) as (index, watcher, api):
        shutil.rmtree(vault / ".kb-qa")
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not (vault / ".kb-qa" / "manifest.sqlite3").exists():
            time.sleep(0.1)
        time.sleep(0.3)
        assert watcher.wait_idle(timeout=20)
        assert watcher.freshness().error == ""
        assert {p["path"] for p in index.pages()} == set(PAGES)
        assert vector_ranked(index, "wombat folder")
        since = time.time()
        (vault / "c.md").write_text("# Gamma\n\nThe platypus lays eggs.\n")
        settle(watcher, since)
        assert index.search("platypus eggs", 1)[0].chunk.path == "c.md"
        assert rated(api.url, "platypus eggs").status_code == 201
        assert httpx.get(api.url + "/api/health").json()["status"] == "ok"


def test_a_watched_server_rebuilding_a_deleted_index_says_what_it_serves(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    """An API client polling health while `serve --watch` made a deleted index folder
    again saw "empty", 0 chunks and /api/ready 503 for seconds, while every answer came,
    cited, from the sections the server held."""
    pages = {
        f"p{i}.md": f"# Page {i}\n\n## Part {i}\n\nThe wombat {i} eats grass.\n" for i in range(120)
    }
    vault = make_vault(pages)
    with _watched_api(vault, kb) as (_index, _watcher, api):
        shutil.rmtree(vault / ".kb-qa")
        seen = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            health = httpx.get(api.url + "/api/health", timeout=30).json()
            seen.append((health["status"], health["chunks"], health["freshness"]["indexing"]))
            if (
                health["status"] == "ok"
                and not health["freshness"]["indexing"]
                and any(rebuilding for *_, rebuilding in seen)
            ):
                break
            time.sleep(0.05)
        assert any(rebuilding for *_, rebuilding in seen), seen  # the run was watched
        assert all(status != "empty" and chunks >= 240 for status, chunks, _ in seen), seen


def test_a_vault_renamed_with_an_edit_pending_is_not_made_anew(
    make_vault: Callable[..., Path], kb: KB, tmp_path: Path
) -> None:
    """Renamed away right after an edit, the vault was made again by the index run that
    healed its index folder: an empty folder holding only `.kb-qa`, an empty index served
    for good, and Chroma failing ("readonly database") once the vault was put back."""
    vault = make_vault(PAGES)
    index = kb(vault, index_dir=vault / ".kb-qa", rate_limit=0)  # where it is by default
    watcher = Watcher(index, debounce=0.3, retry_delay=0.2).start()
    try:
        assert watcher.wait_idle()
        with UvicornThread(create_app(index, index.settings, watcher)) as api:
            assert httpx.get(api.url + "/api/health").json()["status"] == "ok"
            (vault / "c.md").write_text("# Gamma\n\nThe platypus lays eggs.\n")
            away = vault.rename(tmp_path / "renamed")
            time.sleep(2.5)  # the pending edit's run, and the watcher's check of the vault
            assert not vault.exists()
            health = httpx.get(api.url + "/api/health").json()
            assert health["status"] == "degraded" and "vault folder is missing" in health["problem"]
            assert health["files"] >= len(PAGES)  # what it had, still served
            assert str(tmp_path) not in json.dumps(health)
            away.rename(vault)

            def found() -> str:  # any search finds something: the edit's page, once indexed
                hits = index.search("platypus eggs", 1)
                return hits[0].chunk.path if hits else ""

            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and found() != "c.md":
                time.sleep(0.2)
            assert watcher.wait_idle(timeout=20)
            assert found() == "c.md"
            assert httpx.get(api.url + "/api/health").json()["status"] == "ok"
    finally:
        watcher.stop()


def test_a_vault_deleted_under_a_server_that_never_searched_is_still_searched(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    """The view loaded by the first index run's thread, and the vault with its index folder
    deleted before any reader came: health said "the index serves what it had" while every
    search was a 503 ("cannot be opened"), as each hit's address read a stored value
    (link_style) that no thread had read before."""
    vault = make_vault(PAGES)
    index = kb(vault, index_dir=vault / ".kb-qa", rate_limit=0)
    warmed = threading.Thread(target=lambda: (index.index(), index.search("warm up", 1)))
    warmed.start()
    warmed.join()
    shutil.rmtree(vault)
    with UvicornThread(create_app(index, index.settings)) as api:
        found = httpx.get(api.url + "/api/search", params={"q": "wombat backup"})
        assert found.status_code == 200, found.text
        assert found.json()["hits"][0]["path"] == "b.md"
        health = httpx.get(api.url + "/api/health").json()
        assert "serves what it had" in health["problem"]


def test_a_read_only_index_database_says_to_make_it_writable_not_to_rebuild_it(
    make_vault: Callable[..., Path], run_cli: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    """A manifest the process cannot write (an immutable file, a read-only mount, another
    owner): `kb-qa index` advised a rebuild, which cannot help, and `kb-qa serve --watch`
    logged a traceback before the same words."""
    vault = make_vault({"a.md": "# A\n\n## Install\n\nquokka tool\n"})
    assert run_cli("index", str(vault)).returncode == 0
    (vault / "a.md").write_text("# A\n\n## Install\n\nnumbat tool\n", encoding="utf-8")
    manifest = vault / ".kb-qa" / "manifest.sqlite3"
    chattr = shutil.which("chattr")
    if not chattr or subprocess.run([chattr, "+i", str(manifest)], check=False).returncode:
        pytest.skip("chattr +i is not available here (it makes a file read-only even to root)")
    try:
        for command in (["index", str(vault)], ["serve", str(vault), "--watch", "--port", "0"]):
            result = run_cli(*command)
            assert result.returncode == 1, result.stderr
            assert "the index's database cannot be written" in result.stderr
            assert "KBQA_INDEX_DIR" in result.stderr and "rebuilds" not in result.stderr
            assert "Traceback" not in result.stderr
    finally:
        subprocess.run([chattr, "-i", str(manifest)], check=True)
