"""A server's searches while another process's index run is not done: they keep the view
loaded before it, and health says what it serves.

Another process is another KnowledgeBase on the same index folder (its own manifest
connections and its own write lock, as `kb-qa index` has); real embedded Chroma in tmp_path.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from uvicorn_thread import UvicornThread

from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.serve.app import create_app

KB = Callable[..., KnowledgeBase]
SECTIONS = 50  # per page; ten pages: two write groups of a run (WRITE_GROUP 400)


class Stop(Exception):
    """A run stopped half-way (Ctrl-C in `kb-qa index`)."""


def site(make_vault: Callable[..., Path]) -> Path:
    pages = {
        f"p{p}.md": f"# Page {p}\n\n"
        + "".join(
            f"## Topic {p}-{s}\n\nWord{p}x{s} is explained here.\n\n" for s in range(SECTIONS)
        )
        for p in range(10)
    }
    pages["p0.md"] += "## Wombats\n\nThe wombat folder is copied nightly.\n"
    return make_vault(pages)


def test_a_server_answers_from_what_it_had_while_another_process_rebuilds(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    """A rebuild by `kb-qa index` publishes a generation per 400 sections: the server
    loaded each, answered from a third of the site and said `ok` with its counts."""
    vault = site(make_vault)
    server = kb(vault, index_dir=vault / ".kb-qa")
    server.index()
    before = server.stats()["chunks"]
    assert server.search("wombat folder", 1)[0].chunk.path == "p0.md"
    seen: list[tuple[str, int, int, str]] = []

    def meanwhile(step: str, done: int, total: int) -> None:
        if step == "writing" and 0 < done < total:  # a group written, the next to come
            top = server.search("wombat folder", 1)[0].chunk.path
            seen.append(
                (top, len(server.searchable_chunks()), server.stats()["chunks"], server.problem())
            )

    with KnowledgeBase(
        vault, index_dir=vault / ".kb-qa", embed_model="hash", chunk_chars=700
    ) as other:
        other.index(steps=meanwhile)
    assert seen and all(s == ("p0.md", before, before, "") for s in seen), seen
    assert len(server.searchable_chunks()) == before  # the run done: its index is served
    assert server.stats()["generation"] == server.store.meta("generation")


def test_a_run_stopped_half_way_leaves_the_server_on_what_it_had_and_says_so(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    """Ctrl-C in a `kb-qa index` that rebuilt the index left a running server on the part
    written, with health `ok`, for good (without --watch nothing repairs it)."""
    vault = site(make_vault)
    server = kb(vault, index_dir=vault / ".kb-qa")
    server.index()
    before = len(server.searchable_chunks())

    def stop(step: str, done: int, total: int) -> None:
        if step == "writing" and done > 0:
            raise Stop

    with KnowledgeBase(
        vault, index_dir=vault / ".kb-qa", embed_model="hash", chunk_chars=700
    ) as other:
        with pytest.raises(Stop):
            other.index(steps=stop)
        assert other.store.chunk_count() < before  # half-written
        assert server.search("wombat folder", 1)[0].chunk.path == "p0.md"
        assert len(server.searchable_chunks()) == before
        assert server.stats()["chunks"] == before
        said = server.problem()
        assert "stopped before it was done" in said and "as it was before that run" in said
        other.index()  # finished
    assert server.problem() == ""
    assert server.search("wombat folder", 1)[0].chunk.path == "p0.md"
    assert server.stats()["chunks"] == len(server.searchable_chunks())


def test_a_server_follows_a_finished_run_before_a_later_one_stops_half_way(
    make_vault: Callable[..., Path], kb: KB, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two `kb-qa index` runs with no reader between them, the second stopped half-way: the
    server fell back on the index from before the first (a page the first added was gone),
    health saying "as it was before that run". A server now loads a finished run's index as
    it ends (FOLLOW_SECONDS), so the next reader does not wait for it either."""
    monkeypatch.setattr("kb_qa.serve.app.FOLLOW_SECONDS", 0.1)
    vault = site(make_vault)
    server = kb(vault, index_dir=vault / ".kb-qa")
    server.index()

    def stop(step: str, done: int, total: int) -> None:
        if step == "writing" and done > 0:
            raise Stop

    with UvicornThread(create_app(server, server.settings.replace(rate_limit=0))) as api:
        assert httpx.get(api.url + "/api/search", params={"q": "wombat"}).status_code == 200
        (vault / "otters.md").write_text("# Otters\n\nThe otterkeeper daemon rotates logs.\n")
        with KnowledgeBase(vault, index_dir=vault / ".kb-qa", embed_model="hash") as other:
            other.index()  # finished: the server is to serve this one from now on
            finished = other.store.meta("generation")
        deadline = time.monotonic() + 10
        while server.view_generation() != finished and time.monotonic() < deadline:
            time.sleep(0.05)
        with (
            KnowledgeBase(
                vault, index_dir=vault / ".kb-qa", embed_model="hash", chunk_chars=700
            ) as rebuild,
            pytest.raises(Stop),
        ):
            rebuild.index(steps=stop)
        found = httpx.get(api.url + "/api/search", params={"q": "otterkeeper daemon"})
        assert found.json()["hits"][0]["path"] == "otters.md"
        assert "stopped before it was done" in httpx.get(api.url + "/api/health").json()["problem"]
