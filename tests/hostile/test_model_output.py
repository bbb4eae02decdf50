"""Hostile model output on the server: a reply is streamed up to ``max_reply_chars`` and no
further, and the citation pass stays linear on a megabyte of back-to-back ``[1]`` markers
(it held the event loop 14 s). Real uvicorn, the OpenAI-compatible test LLM over HTTP.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from api_helpers import parse_sse
from conftest import write_files
from llm_server import LLMServer, Reply
from uvicorn_thread import UvicornThread

from kb_qa.answer.citations import CitationRenumberer
from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.serve.app import create_app

NOTE = "# Otters\n\n## Sleeping\n\nOtters hold hands while they sleep.\n"


@pytest.fixture
def kb(tmp_path: Path, llm: LLMServer) -> Iterator[KnowledgeBase]:
    vault = write_files(tmp_path / "vault", {"otters.md": NOTE})
    kb = KnowledgeBase(
        vault,
        index_dir=tmp_path / "idx",
        embed_model="hash",
        model="openai/test",
        api_base=llm.url,
        rate_limit=0,
    )
    kb.index()
    yield kb
    kb.close()


def ask_json(url: str) -> httpx.Response:
    body = {"question": "Do otters sleep?", "stream": False}
    return httpx.post(url + "/api/ask", json=body, timeout=120)


def test_a_reply_is_cut_at_max_reply_chars(kb: KnowledgeBase, llm: LLMServer) -> None:
    llm.script(Reply(text="` ` " * 50_000, chunk_size=2_000))  # 200,000 characters
    with UvicornThread(create_app(kb)) as server:
        response = ask_json(server.url)
    assert response.status_code == 200, response.text
    answer = response.json()["answer"]
    assert answer.startswith("` ` ` `")
    assert 20_000 <= len(answer) < 20_200, len(answer)
    assert answer.rstrip().endswith("max_reply_chars.)*")
    assert "20,000 characters" in answer


def test_a_setting_raises_the_cap(kb: KnowledgeBase, llm: LLMServer) -> None:
    llm.script(Reply(text="word " * 6_000, chunk_size=2_000))  # 30,000 characters
    with UvicornThread(create_app(kb, kb.settings.replace(max_reply_chars=50_000))) as server:
        answer = ask_json(server.url).json()["answer"]
    # Whole, then the note an answer citing no source ends with (wording "uncited").
    reply, note = answer.split("\n\n*(This answer cites none of your sources", 1)
    assert reply.strip() == ("word " * 6_000).strip()
    assert note


def test_renumbering_a_megabyte_of_markers_is_linear() -> None:
    renumberer = CitationRenumberer(3)
    reply = "[1]" * 350_000  # ~1 MB, streamed in small deltas as a model sends it
    started = time.perf_counter()
    out = []
    for i in range(0, len(reply), 64):
        out.append(renumberer.feed(reply[i : i + 64]))
        assert time.perf_counter() - started < 10, f"quadratic: {i:,} characters in 10 s"
    out.append(renumberer.finish())
    text = "".join(out)
    assert set(text) <= set("[1]") and text.startswith("[1]")
    assert renumberer.order == {1: 1}


def test_the_event_loop_stays_free_during_a_marker_flood(kb: KnowledgeBase, llm: LLMServer) -> None:
    # Words first: a reply of markers alone is no answer (an llm_error), not what is timed.
    llm.script(Reply(text="Retried five times " + "[1]" * 350_000, chunk_size=16_384))
    settings = kb.settings.replace(max_reply_chars=0)  # no cap: the citation pass alone
    with UvicornThread(create_app(kb, settings)) as server:
        done: list[httpx.Response] = []
        asking = threading.Thread(target=lambda: done.append(ask_json(server.url)))
        asking.start()
        time.sleep(0.5)
        slowest = 0.0
        while asking.is_alive():
            started = time.perf_counter()
            assert httpx.get(server.url + "/api/health", timeout=60).status_code == 200
            slowest = max(slowest, time.perf_counter() - started)
            time.sleep(0.1)
        asking.join()
    assert done and done[0].status_code == 200
    assert slowest < 2.0, f"health waited {slowest:.1f} s behind the citation pass"


def sse(*pieces: str) -> str:
    """A completion stream whose deltas are ``pieces``, each JSON-escaped as a model's
    server writes it (an emoji as two ``\\uXXXX`` escapes, which may land in two deltas)."""
    deltas = "".join(
        "data: " + json.dumps({"choices": [{"delta": {"content": p}}]}) + "\n\n" for p in pieces
    )
    return deltas + 'data: {"choices":[{"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'


@pytest.mark.parametrize(
    ("pieces", "shown"),
    [
        (("Otters nap ", "\ud83d", "\ude00 a lot [1]."), "Otters nap \U0001f600 a lot [1]."),
        (("Otters nap \ud800 a lot [1].",), "Otters nap \ufffd a lot [1]."),
        (("Otters nap a lot [1]. \udbff",), "Otters nap a lot [1]. \ufffd"),
    ],
    ids=["emoji split over two deltas", "a lone surrogate", "half a pair at the end"],
)
def test_a_surrogate_in_the_reply_is_joined_or_replaced(
    kb: KnowledgeBase, llm: LLMServer, pieces: tuple[str, ...], shown: str
) -> None:
    """A lone "\\ud83d" in a delta ended the stream with no answer (UnicodeEncodeError while
    sending), and the same reply without streaming was a 500."""
    for stream in (False, True):
        llm.script(Reply(raw=sse(*pieces), raw_type="text/event-stream"))
        with UvicornThread(create_app(kb)) as server:
            body = {"question": "Do otters sleep?", "stream": stream}
            response = httpx.post(server.url + "/api/ask", json=body, timeout=120)
        assert response.status_code == 200, response.text
        if stream:
            events = parse_sse(response.text.splitlines())
            assert [e for e, _ in events][-1] == "done", events
            answer = "".join(data["text"] for e, data in events if e == "delta")
        else:
            answer = response.json()["answer"]
        assert answer.startswith(shown), (stream, answer)
