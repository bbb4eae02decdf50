"""Smaller hardening: stored feedback is capped and expires, the default log holds no client
address or query, anonymous clients never read the internal Chroma address or index path,
a full disk under the vector store says to free space, and the CLI and MCP apply the HTTP
API's input rules. Real uvicorn, real Chroma (embedded and server), the real CLI.
"""

from __future__ import annotations

import json
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from api_helpers import answered, rated
from chroma_server import chroma_server
from conftest import cli_env, write_files
from mcp_client import mcp_session
from uvicorn_thread import serve_kb

from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.owners import feedback
from kb_qa.owners.feedback import Feedback, FeedbackStore
from kb_qa.serve.serving import free_port

NOTE = "# Otters\n\n## Sleeping\n\nOtters hold hands while they sleep.\n"


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    root = tmp_path_factory.mktemp("privacy")
    vault = write_files(root / "vault", {"otters.md": NOTE})
    kb = KnowledgeBase(vault, index_dir=root / "idx", embed_model="hash", rate_limit=0)
    kb.index()
    yield kb
    kb.close()


def rating(**fields: Any) -> dict[str, Any]:
    return {"question": "Do otters sleep?", "answer": "Yes [1].", "rating": "up", **fields}


def stored_rows(kb: KnowledgeBase) -> list[tuple[Any, ...]]:
    with sqlite3.connect(kb.settings.index_path / "feedback.sqlite3") as conn:
        return conn.execute(
            "SELECT question, answer, reason, citations FROM feedback ORDER BY id"
        ).fetchall()


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"reason": "r" * 5_000}, "reason is 5,000 characters long; the limit is 1,000"),
        ({"answer": "a" * 20_001}, "answer is 20,001 characters long"),
        ({"question": "q" * 2_001}, "question is 2,001 characters long"),
    ],
    ids=["reason", "answer", "question"],
)
def test_oversized_feedback_is_refused_with_413(
    indexed: KnowledgeBase, fields: dict[str, Any], words: str
) -> None:
    with serve_kb(indexed) as server:
        response = httpx.post(server.url + "/api/feedback", json=rating(**fields))
    assert response.status_code == 413, response.text
    assert words in response.json()["error"]


def test_a_stored_rating_is_small_whatever_the_client_sends(indexed: KnowledgeBase) -> None:
    big_citation = {
        "number": 1,
        "url": "u" * 2_000,
        "link": "l" * 2_000,
        "path": "p" * 2_000,
        "anchor": "a" * 2_000,
        "heading_path": ["h" * 2_000] * 20,
        "text": "t" * 2_000,
    }
    body = rating(answer="a" * 20_000, reason="r" * 1_000, citations=[big_citation] * 3)
    with serve_kb(indexed, max_body_bytes=200_000) as server:
        body["answer_id"] = answered(server.url, body["question"])["answer_id"]
        response = httpx.post(server.url + "/api/feedback", json=body)
    # The API takes only the answer and citations it gave (answer ids carry their digests)
    assert response.status_code == 403, response.text
    # ... and what it stores of a rating stays small whatever the rating holds.
    FeedbackStore(indexed.settings.index_path).add(feedback.parse(body, 2_000))
    question, answer, reason, citations = stored_rows(indexed)[-1]
    assert answer.startswith("aaaa") and answer.endswith("…") and len(answer) == 2_000
    stored = len(question) + len(answer) + len(reason) + len(citations)
    assert stored <= 8_100, stored  # was 73 KB per rating
    assert json.loads(citations), "the first citation fits and is kept"


def test_feedback_keeps_the_newest_and_forgets_old_ratings(tmp_path: Path) -> None:
    vault = write_files(tmp_path / "vault", {"otters.md": NOTE})
    with KnowledgeBase(vault, index_dir=tmp_path / "idx", embed_model="hash") as kb:
        kb.index()
        old = Feedback("down", "An old question?", "An old answer.", at=time.time() - 400 * 86_400)
        FeedbackStore(kb.settings.index_path).add(old)
        with serve_kb(kb, rate_limit=0, feedback_max=3) as server:  # start-up prunes the old one
            assert [q for q, *_ in stored_rows(kb)] == []
            for n in range(5):
                response = rated(server.url, f"Question {n}?")
                assert response.status_code == 201, response.text
        assert [q for q, *_ in stored_rows(kb)] == ["Question 2?", "Question 3?", "Question 4?"]


def _serve_cli(vault: Path, index_dir: Path, **env: str) -> tuple[str, str]:
    """Run ``kb-qa serve``, search once with a query string, stop it; (its log, its URL)."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "kb_qa.cli", "serve", str(vault), "--index-dir", str(index_dir)],
        env=cli_env(KBQA_PORT=str(port), KBQA_QUESTION_LOG="false", **env),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(url + "/api/ready", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, "serve did not start"
            time.sleep(0.2)
        httpx.get(url + "/api/search", params={"q": "secret-otter-question"})
    finally:
        proc.send_signal(signal.SIGINT)
        output, _ = proc.communicate(timeout=30)
    return output, url


def test_the_default_log_holds_no_client_address_or_query(indexed: KnowledgeBase) -> None:
    vault, index_dir = indexed.settings.vault, indexed.settings.index_path
    output, _ = _serve_cli(vault, index_dir)
    assert "serving" in output  # the INFO log is on
    assert "secret-otter-question" not in output
    assert "127.0.0.1:" not in output.replace("Uvicorn running on http://127.0.0.1:", "")
    # Switched on, the access log holds what the docs say (docs/pages/configuration.md).
    output, _ = _serve_cli(vault, index_dir, KBQA_ACCESS_LOG="true")
    assert "secret-otter-question" in output and "127.0.0.1:" in output


def test_errors_and_health_never_show_the_chroma_address(tmp_path: Path) -> None:
    vault = write_files(tmp_path / "vault", {"otters.md": NOTE})
    port = free_port()
    secret = f"127.0.0.1:{port}"
    with chroma_server(tmp_path / "chroma", port) as chroma_url:
        kb = KnowledgeBase(
            vault,
            index_dir=tmp_path / "idx",
            embed_model="hash",
            chroma_url=chroma_url,
            rate_limit=0,
        )
        kb.index()
        server = serve_kb(kb)
        server.__enter__()
    try:  # Chroma has stopped: health names the problem, nothing names the address
        health = httpx.get(server.url + "/api/health").json()
        assert health["status"] == "degraded" and "Chroma server" in health["problem"]
        search = httpx.get(server.url + "/api/search", params={"q": "otters sleep"})
        ask = httpx.post(server.url + "/api/ask", json={"question": "Do otters sleep?"})
        ready = httpx.get(server.url + "/api/ready")
        for text in (json.dumps(health), search.text, ask.text, ready.text):
            assert secret not in text and str(tmp_path / "idx") not in text, text
        # Search runs on the in-memory view, which holds every vector: it goes on.
        assert search.status_code == 200 and search.json()["hits"]
    finally:
        server.__exit__(None, None, None)
        kb.close()


def test_a_deleted_index_folder_is_reported_without_its_path(tmp_path: Path) -> None:
    vault = write_files(tmp_path / "vault", {"otters.md": NOTE})
    with KnowledgeBase(vault, index_dir=tmp_path / "idx", embed_model="hash") as kb:
        kb.index()
        with serve_kb(kb, rate_limit=0) as server:
            shutil.rmtree(tmp_path / "idx")
            health = httpx.get(server.url + "/api/health").json()
    assert "deleted" in health["problem"] and str(tmp_path) not in health["problem"]


@pytest.mark.parametrize("command", ["search", "ask"])
def test_the_cli_applies_the_apis_question_rules(
    indexed: KnowledgeBase, run_cli: Callable[..., Any], command: str
) -> None:
    vault, index_dir = str(indexed.settings.vault), str(indexed.settings.index_path)
    result = run_cli(command, "x" * 3_000, "--vault", vault, "--index-dir", index_dir)
    assert result.returncode == 1
    assert "3,000 characters long; the limit is 2,000 (max_question_chars)" in result.stderr
    assert "Traceback" not in result.stderr
    blank = run_cli(command, "   ", "--vault", vault, "--index-dir", index_dir)
    assert blank.returncode == 1 and "non-empty" in blank.stderr


async def _mcp_calls(vault: Path, index_dir: Path) -> tuple[str, str]:
    async with mcp_session(vault, index_dir) as session:
        search = await session.call_tool("search_docs", {"query": "x" * 3_000})
        ask = await session.call_tool("ask_docs", {"question": "y" * 3_000})
    assert search.is_error and ask.is_error  # failed calls, not results
    return str(search.content[0].text), str(ask.content[0].text)  # type: ignore[union-attr]


def test_mcp_applies_the_apis_question_rules(indexed: KnowledgeBase) -> None:
    search, ask = anyio.run(_mcp_calls, indexed.settings.vault, indexed.settings.index_path)
    assert "3,000 characters long" in search and "max_question_chars" in search
    assert "3,000 characters long" in ask and "max_question_chars" in ask


def test_a_full_disk_under_the_vector_store_says_to_free_space(
    tiny_disk: Path, run_cli: Callable[..., Any], tmp_path: Path
) -> None:
    pages = {
        f"p{i}.md": f"# Page {i}\n\n"
        + "".join(f"## S{j}\n\n" + f"word{i} text {j} " * 30 + "\n\n" for j in range(8))
        for i in range(200)
    }
    vault = write_files(tmp_path / "vault", pages)
    index_dir = str(tiny_disk / "idx")
    # 1.5 MB left: the manifest is written, then the vector store runs out of space
    free = shutil.disk_usage(tiny_disk).free
    (tiny_disk / "filler").write_bytes(b"\0" * (free - 1_500_000))
    failed = run_cli("index", str(vault), "--index-dir", index_dir)
    assert failed.returncode == 1 and "Free some space" in failed.stderr, failed.stderr[-2000:]
    # The run wrote no chunks: search needs no vector store and says what to do.
    result = run_cli("search", "word3 text", "--vault", str(vault), "--index-dir", index_dir)
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    assert result.returncode == 1 and "Run `kb-qa index`" in result.stderr
    again = run_cli("index", str(vault), "--index-dir", index_dir)
    assert again.returncode == 1 and "Free some space" in again.stderr
    assert "delete" not in (failed.stderr + result.stderr + again.stderr).lower()
