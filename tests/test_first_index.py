"""A server up before its first index run ends (``mkdocs serve`` on a big site): questions
are told how far the run is, edits saved meanwhile are indexed after it, and stopping it
midway keeps what was embedded. Real uvicorn, real Chroma in a temp dir; the run is held
at a batch through the public progress callback, as a slow embedding would hold it."""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_helpers import SAMPLE_SITE
from index_gate import Gate

from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.serve.serving import BackgroundServer, free_port

NOTES = {
    f"note{i:02}.md": f"# Note {i}\n\n## Topic {i}\n\nThe {i}th fact about gardening is here.\n"
    for i in range(40)
} | {"retries.md": "# Retries\n\nA failing job is attempted five times before it is dead.\n"}


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Callable[..., BackgroundServer]]:
    servers: list[BackgroundServer] = []

    def starting(vault: Path, gate: Gate, **kwargs: object) -> BackgroundServer:
        kwargs.setdefault("wait", 0)
        server = BackgroundServer.start(
            vault,
            progress=gate,
            embed_model="hash",
            embed_batch=4,
            index_dir=tmp_path / "idx",
            **kwargs,
        )
        servers.append(server)
        return server

    yield starting
    for server in servers:
        server.stop()


def ask(url: str, question: str) -> httpx.Response:
    return httpx.post(url + "/api/ask", json={"question": question, "stream": False}, timeout=30)


def ask_streamed(url: str, question: str) -> str:
    """The answer's Server-Sent Events, as text."""
    return httpx.post(url + "/api/ask", json={"question": question}, timeout=30).text


def test_questions_during_the_first_run_are_told_how_far_it_is(
    make_vault: Callable[..., Path], start: Callable[..., BackgroundServer]
) -> None:
    vault = make_vault(NOTES)
    gate = Gate()
    ended: list[BackgroundServer] = []
    server = start(vault, gate, ended=ended.append)
    assert not server.first.done.is_set()  # start() did not wait for the embedding
    assert gate.holding.wait(60)
    health = httpx.get(server.url + "/api/health", timeout=10).json()
    assert health["status"] == "indexing"
    progress = health["first_index"]
    assert progress["done"] is False and 0 < progress["embedded"] < progress["to_embed"]
    answer = ask(server.url, "How many times is a failing job attempted?")
    assert answer.status_code == 503
    assert answer.json()["code"] == "indexing"
    said = answer.json()["error"]
    assert "still being indexed" in said and f"of {progress['to_embed']} sections" in said
    assert answer.headers["retry-after"] == "5"
    search = httpx.get(server.url + "/api/search", params={"q": "five times"}, timeout=10)
    assert search.status_code == 503 and search.json()["code"] == "indexing"
    assert httpx.get(server.url + "/api/ready", timeout=10).status_code == 503
    # A malformed request is still told what is wrong with it, not to wait.
    assert httpx.post(server.url + "/api/ask", json={}, timeout=10).status_code == 422

    # An edit saved meanwhile is indexed after the run, which only then is done.
    (vault / "late.md").write_text("# Late\n\nThe quokka clause resets retries.\n")
    assert server.refresh() is None
    gate.opened.set()
    assert server.first.done.wait(60)
    assert ended == [server] and server.first.error == ""
    assert server.first.report is not None and server.first.report.files == len(NOTES)
    answer = ask(server.url, "How many times is a failing job attempted?")
    assert answer.status_code == 200 and "five times" in answer.json()["text"]
    hits = httpx.get(server.url + "/api/search", params={"q": "quokka clause"}, timeout=10)
    assert any("quokka" in h["text"] for h in hits.json()["hits"])
    assert httpx.get(server.url + "/api/health", timeout=10).json()["status"] == "ok"
    # After the first run, an edit is indexed at once, as before.
    (vault / "later.md").write_text("# Later\n\nThe wombat rule.\n")
    report = server.refresh()
    assert report is not None and report.changed_files == 1


def test_an_edit_being_indexed_is_said_in_answers_and_health(
    make_vault: Callable[..., Path], start: Callable[..., BackgroundServer]
) -> None:
    """A writer pasted a long page under `mkdocs serve`: for the 12 s its sections were
    embedded, answers quoted the text as it was before, health said nothing, and the
    preview's log was silent. Now answers open with the 'updating' note, health's
    first_index says it is refreshing, and the run reports its progress."""
    vault = make_vault(NOTES)
    opened = Gate()
    opened.opened.set()
    server = start(vault, opened, wait=None)
    assert server.first.done.is_set()
    for i in range(10):
        (vault / f"pasted{i:02}.md").write_text(f"# Pasted {i}\n\nThe {i}th pasted fact.\n")
    gate = Gate()
    reports: list[Any] = []
    refresh = threading.Thread(target=lambda: reports.append(server.refresh(gate)))
    refresh.start()
    try:
        assert gate.holding.wait(60)
        health = httpx.get(server.url + "/api/health", timeout=10).json()
        assert health["first_index"]["refreshing"] is True
        streamed = ask_streamed(server.url, "How many times is a failing job attempted?")
        assert "event: status" in streamed and "updating" in streamed
        assert "five times" in streamed
    finally:
        gate.opened.set()
        refresh.join(60)
    assert reports[0] is not None and reports[0].changed_files == 10
    assert gate.calls[-1][0] == gate.calls[-1][1] == 10  # the run's progress, to its end
    health = httpx.get(server.url + "/api/health", timeout=10).json()
    assert health["first_index"]["refreshing"] is False
    streamed = ask_streamed(server.url, "How many times is a failing job attempted?")
    assert "five times" in streamed and "updating" not in streamed


def test_an_index_that_held_pages_answers_from_them_meanwhile(
    make_vault: Callable[..., Path], start: Callable[..., BackgroundServer], tmp_path: Path
) -> None:
    vault = make_vault(NOTES)
    before = KnowledgeBase(vault, embed_model="hash", index_dir=tmp_path / "idx")
    before.index()
    before.close()
    for i in range(10):  # enough changed text to hold the run at a batch
        (vault / f"note{i:02}.md").write_text(f"# Note {i}\n\nRewritten fact {i} on soil.\n")
    gate = Gate()
    server = start(vault, gate)
    assert not server.first.done.is_set()
    assert gate.holding.wait(60)
    assert httpx.get(server.url + "/api/health", timeout=10).json()["status"] == "ok"
    response = httpx.post(
        server.url + "/api/ask",
        json={"question": "How many times is a failing job attempted?"},
        timeout=30,
    )
    assert response.status_code == 200
    assert "event: status" in response.text and "updating" in response.text
    assert "five times" in response.text
    gate.opened.set()
    assert server.first.done.wait(60)


def test_an_index_the_first_run_rebuilds_is_not_answered_from_half_empty(
    make_vault: Callable[..., Path], start: Callable[..., BackgroundServer], tmp_path: Path
) -> None:
    """A rebuild (an upgrade's chunker version, another chunk size or model) empties the
    index before filling it again: questions meanwhile were answered from the few sections
    written so far. Now they are told how far the rebuild is, as for a first index."""
    vault = make_vault(NOTES)
    before = KnowledgeBase(vault, embed_model="minilm", index_dir=tmp_path / "idx")
    before.index()
    before.close()
    gate = Gate()
    server = start(vault, gate)  # with the hash embedder: another model, a rebuild
    assert gate.holding.wait(60)
    answer = ask(server.url, "How many times is a failing job attempted?")
    assert answer.status_code == 503 and answer.json()["code"] == "indexing", answer.text
    gate.opened.set()
    assert server.first.done.wait(60)
    answer = ask(server.url, "How many times is a failing job attempted?")
    assert answer.status_code == 200 and "five times" in answer.json()["text"]


def test_stopping_midway_keeps_what_was_embedded(
    make_vault: Callable[..., Path], start: Callable[..., BackgroundServer], tmp_path: Path
) -> None:
    vault = make_vault(NOTES)
    gate = Gate()
    server = start(vault, gate)
    assert gate.holding.wait(60)
    stopping = threading.Thread(target=server.stop)
    stopping.start()
    gate.opened.set()  # the batch it was on ends, and the run stops before the next
    stopping.join(60)
    assert not stopping.is_alive() and not server.indexer.is_alive()
    assert server.first.error == "The server stopped before the index was built."
    assert server.closed
    embedded = sum(1 for done, _ in gate.calls if done)
    assert embedded == 1  # stopped after the batch it was holding
    again = KnowledgeBase(vault, embed_model="hash", embed_batch=4, index_dir=tmp_path / "idx")
    try:
        report = again.index()
    finally:
        again.close()
    assert report.reused >= 4 and report.chunks == report.embedded + report.reused


def test_a_first_run_that_fails_says_why_to_every_question(
    make_vault: Callable[..., Path], start: Callable[..., BackgroundServer]
) -> None:
    vault = make_vault({"mkdocs.yml": "site_name: x\nnav: [\n", "docs/a.md": "# A\n\nText.\n"})
    server = start(vault, Gate(), wait=None, generator="mkdocs")
    assert server.first.done.is_set()
    answer = ask(server.url, "What is in A?")
    assert answer.status_code == 503 and answer.json()["code"] == "index_failed"
    said = answer.json()["error"]
    assert said.startswith("The index could not be built: ") and "not valid YAML" in said
    assert str(vault) not in said  # the vault's path stays on the server
    health = httpx.get(server.url + "/api/health", timeout=10).json()
    assert health["status"] == "degraded" and "not valid YAML" in health["problem"]


def test_a_first_run_that_indexed_nothing_says_so_to_every_question(
    make_vault: Callable[..., Path], start: Callable[..., BackgroundServer]
) -> None:
    # Every page left out by the build (a monorepo site's were): "No passage in your
    # sources matches this question" read as docs that are silent on it.
    site = "site_name: x\nexclude_docs: |\n  a.md\n"
    vault = make_vault({"mkdocs.yml": site, "docs/a.md": "# A\n\nText.\n"})
    server = start(vault, Gate(), wait=None, generator="mkdocs")
    assert server.first.done.is_set() and not server.first.error
    answer = ask(server.url, "What is in A?")
    assert answer.status_code == 503 and answer.json()["code"] == "index_empty"
    said = answer.json()["error"]
    assert said.startswith("Nothing is indexed") and "kb-qa index" in said
    searched = httpx.get(server.url + "/api/search", params={"q": "A"}, timeout=10)
    assert searched.status_code == 503 and searched.json()["code"] == "index_empty"


def test_a_first_run_waits_for_another_process_updating_the_index(
    make_vault: Callable[..., Path],
    start: Callable[..., BackgroundServer],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """`mkdocs serve` started while a `kb-qa index` of the same site was running: its API
    said "Another kb-qa process is updating the index" to every question until restarted,
    long after that process had finished."""
    vault = make_vault(NOTES)
    other = KnowledgeBase(vault, embed_model="hash", index_dir=tmp_path / "idx")
    gate = Gate()
    gate.opened.set()  # not held: the other process is what it waits for
    try:
        with other.store.writer_lock():
            server = start(vault, gate, wait=0)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and "waiting for it" not in caplog.text:
                time.sleep(0.1)
            assert "another kb-qa process is updating this index; waiting" in caplog.text
            assert not server.first.done.is_set()
    finally:
        other.close()
    assert server.first.done.wait(60)
    assert server.first.error == ""
    answer = ask(server.url, "How many times is a failing job attempted?")
    assert answer.status_code == 200 and "five times" in answer.json()["text"]


def _kbqa_serve(vault: Path, index: Path, env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "kb_qa.cli", "serve", str(vault), "--port", str(port),
         "--index-dir", str(index)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    return process, f"http://127.0.0.1:{port}"


def test_kb_qa_serve_answers_health_while_it_indexes_and_ctrl_c_keeps_the_vectors(
    tmp_path: Path, cli_env: Callable[..., dict[str, str]]
) -> None:
    """`kb-qa serve` kept its port closed until a cold index was built (minutes on a big
    vault: a liveness probe restarts such a container for ever, and the widget said it could
    not reach the service). Now it answers at once; Ctrl-C during that run says so, exits
    130 without aborting in ONNX Runtime, and the next start reuses what was embedded."""
    vault = tmp_path / "vault"
    for copy in range(4):  # ~800 sections: the real model takes seconds to embed them
        shutil.copytree(SAMPLE_SITE / "docs", vault / f"part{copy}", dirs_exist_ok=True)
    env = cli_env(KBQA_EMBED_MODEL="minilm")
    server, url = _kbqa_serve(vault, tmp_path / "index", env)
    try:
        deadline = time.monotonic() + 120
        health: dict[str, Any] = {}
        while time.monotonic() < deadline and server.poll() is None:
            try:
                health = httpx.get(url + "/api/health", timeout=2).json()
            except httpx.TransportError:
                time.sleep(0.1)
                continue
            if health["first_index"]["embedded"] > 0:
                break
            time.sleep(0.1)
        assert health["status"] == "indexing", health
        assert httpx.get(url + "/api/ready", timeout=5).status_code == 503
        asked = httpx.post(url + "/api/ask", json={"question": "How are retries set?"}, timeout=10)
        assert asked.status_code == 503 and asked.json()["code"] == "indexing"
        server.send_signal(signal.SIGINT)
        _, stderr = server.communicate(timeout=60)
    finally:
        if server.poll() is None:
            server.kill()
            server.communicate()
    assert server.returncode == 130, stderr
    assert "kb-qa: stopped before the index was built" in stderr
    assert "Traceback" not in stderr and "terminate called" not in stderr
    again = subprocess.run(
        [sys.executable, "-m", "kb_qa.cli", "index", str(vault), "--index-dir",
         str(tmp_path / "index")],
        env=env, capture_output=True, text=True, timeout=600, check=True,
    )  # fmt: skip
    reused = re.search(r"(\d+) chunks embedded, (\d+) reused", again.stdout + again.stderr)
    assert reused and int(reused.group(2)) > 0, again.stdout + again.stderr


def test_kb_qa_serve_stops_with_the_error_of_a_first_run_that_fails(
    make_vault: Callable[..., Path], tmp_path: Path, cli_env: Callable[..., dict[str, str]]
) -> None:
    vault = make_vault({"mkdocs.yml": "site_name: x\nnav: [\n", "docs/a.md": "# A\n\nText.\n"})
    server, _ = _kbqa_serve(vault, tmp_path / "index", cli_env())
    try:
        _, stderr = server.communicate(timeout=120)
    finally:
        if server.poll() is None:
            server.kill()
            server.communicate()
    assert server.returncode == 1
    assert "kb-qa: " in stderr and "not valid YAML" in stderr, stderr
    assert "Traceback" not in stderr
