"""Indexing into a real Chroma server (``chroma run`` from the venv) instead of the embedded one."""

from __future__ import annotations

import contextlib
import http.server
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from chroma_server import chroma_process, chroma_server
from uvicorn_thread import UvicornThread

from kb_qa.errors import ConfigError, IndexStateError
from kb_qa.ingest.watch import Watcher
from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.serve.app import STATUS_THREADS, create_app
from kb_qa.serve.replica import Replica
from kb_qa.serve.routes_index import STATUS_SECONDS
from kb_qa.serve.serving import free_port
from kb_qa.settings import Settings

KB = Callable[..., KnowledgeBase]


@pytest.fixture(scope="module")
def chroma_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with chroma_server(tmp_path_factory.mktemp("chroma-server"), free_port()) as url:
        yield url


def test_index_and_search_through_the_server(
    chroma_url: str, make_vault: Callable[..., Path], kb: KB
) -> None:
    vault = make_vault(
        {
            "a.md": "# Alpha\n\n## Install\n\nRun the installer for the quokka tool.\n",
            "b.md": "# Beta\n\n## Backup\n\nCopy the wombat folder nightly.\n",
        }
    )
    index = kb(vault, chroma_url=chroma_url)
    report = index.index()
    assert (report.files, report.chunks, report.embedded) == (2, 4, 4)
    assert index.stats()["chroma"] == chroma_url
    assert index.search("wombat folder", 1)[0].chunk.anchor == "backup"
    assert index.search("wombat folder", 1)[0].vector_rank == 1
    assert index.index().embedded == 0
    # The manifest stays local; the vectors live on the server.
    assert not (index.settings.index_path / "chroma").exists()
    # An edit goes through the server too.
    (vault / "b.md").write_text("# Beta\n\n## Backup\n\nCopy the numbat folder nightly.\n")
    assert index.index().embedded == 1
    top = index.search("numbat folder", 1)[0]
    assert top.chunk.path == "b.md" and top.vector_rank == 1


def test_vaults_are_isolated_on_one_server(
    chroma_url: str, make_vault: Callable[..., Path], kb: KB, tmp_path: Path
) -> None:
    one = kb(
        make_vault({"x.md": "# One\n\npangolin armour\n"}, name="one"),
        chroma_url=chroma_url,
        index_dir=tmp_path / "idx-one",
    )
    two = kb(
        make_vault({"y.md": "# Two\n\naardvark burrow\n"}, name="two"),
        chroma_url=chroma_url,
        index_dir=tmp_path / "idx-two",
    )
    one.index()
    two.index()
    assert {h.chunk.path for h in one.search("aardvark burrow pangolin", 10)} == {"x.md"}
    assert {h.chunk.path for h in two.search("aardvark burrow pangolin", 10)} == {"y.md"}
    assert one.store.collection.count() == 1 and two.store.collection.count() == 1


def test_unreachable_server_is_a_clear_error(
    make_vault: Callable[..., Path], tmp_path: Path
) -> None:
    vault = make_vault({"a.md": "# A\n"})
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    with pytest.raises(IndexStateError, match="Cannot reach the Chroma server"):
        KnowledgeBase(vault, embed_model="hash", index_dir=tmp_path / "idx", chroma_url=url)


def test_https_to_a_plain_http_server_says_so(
    chroma_url: str, make_vault: Callable[..., Path], tmp_path: Path
) -> None:
    """It said "Could not connect to a Chroma server. Are you sure it is running", of a
    server that runs, and to unset KBQA_CHROMA_URL, which a replica cannot do."""
    vault = make_vault({"a.md": "# A\n"})
    https = chroma_url.replace("http://", "https://")
    with pytest.raises(IndexStateError, match="speaks plain http, not https") as error:
        KnowledgeBase(vault, embed_model="hash", index_dir=tmp_path / "idx", chroma_url=https)
    assert chroma_url in str(error.value)


class _NotChroma(http.server.BaseHTTPRequestHandler):
    """A web server that is not Chroma: an HTML page for every path (with the status of
    the class's ``status``)."""

    status = 200

    def do_GET(self) -> None:
        page = b"<!DOCTYPE html>\n<html><body><h1>Welcome to nginx!</h1></body></html>\n"
        self.send_response(self.status)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextlib.contextmanager
def _web_server(status: int) -> Iterator[str]:
    """A web server that is not Chroma, answering every path with ``status`` and an HTML
    page; yields its URL."""
    handler = type("_Answering", (_NotChroma,), {"status": status})
    web = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{web.server_address[1]}"
    finally:
        web.shutdown()


@pytest.mark.parametrize(
    ("status", "said"),
    [
        (200, "not a Chroma server"),
        # an error page (a proxy's 502, a server of another kind's 501)
        (501, "answers Chroma's heartbeat with HTTP 501"),
        (403, "answers with a web page"),  # a proxy refusing kb-qa
    ],
)
def test_a_web_server_that_is_not_chroma_is_named_so_and_its_page_not_repeated(
    make_vault: Callable[..., Path], tmp_path: Path, status: int, said: str
) -> None:
    """It was "Cannot reach the Chroma server …: <!DOCTYPE html> …. Start it", with the
    other server's page in the CLI and in the public API's errors."""
    vault = make_vault({"a.md": "# A\n"})
    with _web_server(status) as url:
        with pytest.raises(IndexStateError, match=said) as error:
            KnowledgeBase(vault, embed_model="hash", index_dir=tmp_path / "idx", chroma_url=url)
    assert "<" not in str(error.value) and "Start it" not in str(error.value)
    with pytest.raises(ConfigError, match="has a path"):
        KnowledgeBase(
            vault, embed_model="hash", index_dir=tmp_path / "i2", chroma_url=url + "/chroma"
        )


def test_a_server_that_stops_answering_is_an_error_not_a_hang(
    make_vault: Callable[..., Path], kb: KB, tmp_path: Path
) -> None:
    """A paused Chroma accepts connections and never answers (an overloaded or partitioned
    server looks the same): health says so within seconds, searches keep answering from
    memory, and a new command fails in words instead of hanging."""
    vault = make_vault(
        {"a.md": "# Alpha\n\n## Install\n\nRun the installer for the quokka tool.\n"}
    )
    with chroma_process(tmp_path / "chroma", free_port()) as (url, server):
        index = kb(vault, chroma_url=url)
        index.index()
        with UvicornThread(create_app(index)) as api:
            assert httpx.get(api.url + "/api/health", timeout=30).json()["status"] == "ok"
            server.send_signal(signal.SIGSTOP)
            try:
                started = time.monotonic()
                health = httpx.get(api.url + "/api/health", timeout=60).json()
                assert time.monotonic() - started < STATUS_SECONDS + 5
                assert health["status"] == "degraded"
                assert "did not answer within" in health["problem"]
                for _ in range(STATUS_THREADS + 2):  # more checks than they have threads
                    assert httpx.get(api.url + "/api/ready", timeout=60).status_code == 503
                hits = httpx.get(api.url + "/api/search", params={"q": "quokka"}, timeout=30)
                assert hits.status_code == 200 and hits.json()["hits"][0]["path"] == "a.md"
                with pytest.raises(IndexStateError, match="did not answer within"):
                    KnowledgeBase(
                        vault, embed_model="hash", index_dir=tmp_path / "b", chroma_url=url
                    )
            finally:
                server.send_signal(signal.SIGCONT)


def test_a_replica_says_within_seconds_that_its_server_stopped_answering(
    make_vault: Callable[..., Path], kb: KB, tmp_path: Path
) -> None:
    """The writer says "did not answer within 5 s"; a replica said ok until its poll's
    30 s read timeout, then only that the index "cannot be used right now"."""
    vault = make_vault({"a.md": "# Alpha\n\n## Install\n\nRun the quokka installer.\n"})
    with chroma_process(tmp_path / "chroma", free_port()) as (url, server):
        kb(vault, chroma_url=url, workspace="paused").index()
        settings = Settings(
            chroma_url=url, workspace="paused", embed_model="hash", replica_poll=0.2
        )
        with Replica(settings) as replica:
            replica.start()
            assert replica.problem() == ""
            server.send_signal(signal.SIGSTOP)
            try:
                deadline = time.monotonic() + 60
                while not replica.problem():
                    assert time.monotonic() < deadline
                    time.sleep(0.1)
                assert "did not answer within 5 s (serving what is loaded)" in replica.problem()
                assert [h.chunk.path for h in replica.search("quokka", 1)] == ["a.md"]
            finally:
                server.send_signal(signal.SIGCONT)


def test_a_watcher_puts_back_the_vectors_of_a_server_restarted_empty(
    make_vault: Callable[..., Path], kb: KB, tmp_path: Path
) -> None:
    """A Chroma server restarted on an empty path left `serve --watch` not ready ("Chroma
    holds 0 vectors for 2 indexed chunks: run kb-qa index to repair it") until an edit or
    someone ran `kb-qa index`, though the embedding cache held every vector."""
    vault = make_vault({"a.md": "# Alpha\n\nRun the quokka installer.\n", "b.md": "# Beta\n\nB.\n"})
    port = free_port()
    with chroma_process(tmp_path / "first", port) as (url, _server):
        index = kb(vault, chroma_url=url)
        index.index()
        watcher = Watcher(index, debounce=0.05, retry_delay=0.2).start()
        assert watcher.wait_idle()
    try:
        with chroma_process(tmp_path / "second", port):  # the same address, an empty database
            deadline = time.monotonic() + 60
            while index.store.chroma(lambda col: col.count()) < 2:
                assert time.monotonic() < deadline, index.problem()
                time.sleep(0.2)
            assert watcher.wait_idle()
            assert index.problem() == ""
            assert [h.chunk.path for h in index.search("quokka", 1)] == ["a.md"]
    finally:
        watcher.stop()
