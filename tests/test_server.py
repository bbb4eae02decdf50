"""The HTTP API over real uvicorn and real HTTP: SSE, JSON mode, limits, CORS, tokens, concurrency.

Each server runs in a background thread on a free loopback port; the language model is the
OpenAI-compatible test server, reached by litellm over HTTP.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

import httpx
import pytest
from api_helpers import indexed_sample, parse_sse
from llm_server import LLMServer, Reply
from uvicorn_thread import UvicornThread

from kb_qa.answer.extractive import LABEL, extract
from kb_qa.errors import ConfigError
from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.serve.app import Api, create_app

QUESTION = "How many times is a failing job attempted by default?"
ORIGIN = "https://docs.example.com"
TOKEN = "test-token-" + "x" * 8

Serve = Callable[..., AbstractContextManager[UvicornThread]]


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    kb = indexed_sample(tmp_path_factory.mktemp("server"))
    yield kb
    kb.close()


@pytest.fixture(scope="module")
def serve(kb: KnowledgeBase) -> Serve:
    """``with serve(**settings) as server:`` a fresh API server with these settings changed."""

    def start(**overrides: Any) -> AbstractContextManager[UvicornThread]:
        return UvicornThread(create_app(kb, kb.settings.replace(**overrides)))

    return start


@pytest.fixture(scope="module")
def api(serve: Serve, llm_server: LLMServer) -> Iterator[str]:
    """The main server: LLM configured, rate limit off, 1 s LLM timeout."""
    with serve(
        model="openai/test", api_base=llm_server.url, llm_timeout=1.0, rate_limit=0
    ) as server:
        yield server.url


def ask(url: str, body: dict[str, Any], **kwargs: Any) -> tuple[httpx.Response, list]:
    """POST /api/ask and read the whole SSE stream."""
    with httpx.stream("POST", url + "/api/ask", json=body, timeout=20, **kwargs) as response:
        lines = list(response.iter_lines())
    events = parse_sse(lines) if response.status_code == 200 else []
    return response, events


def names(events: list) -> list[str]:
    return [name for name, _ in events]


def text(events: list) -> str:
    return "".join(data["text"] for name, data in events if name == "delta")


# -- answering ----------------------------------------------------------------------------------


def test_ask_streams_server_sent_events(api: str, llm: LLMServer) -> None:
    llm.script(Reply(text="Five attempts [2]. <b>Not HTML</b> [1].", chunk_size=3))
    response, events = ask(api, {"question": QUESTION})
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream; charset=utf-8"
    assert response.headers["cache-control"] == "no-cache"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert names(events)[:2] == ["status", "status"]
    assert names(events)[-2:] == ["citations", "done"]
    assert events[0][1] == {"stage": "searching", "message": "Searching your sources…"}
    reading = events[1][1]
    assert reading["stage"] == "reading" and reading["excerpts"] > 20 and reading["pages"] == 18
    assert reading["message"] == f"Reading {reading['excerpts']} excerpts from 18 pages…"
    done = events[-1][1]
    assert done["text"] == text(events) == "Five attempts [1]. <b>Not HTML</b> [2]."
    assert done["mode"] == "llm" and done["model"] == "openai/test"
    assert set(done["timings"]) == {"retrieval_ms", "first_token_ms", "total_ms"}
    assert done["counts"]["citations"] == 2 and done["counts"]["dropped_citations"] == 0
    citations = events[-2][1]["citations"]
    assert [(c["number"], c["excerpt"]) for c in citations] == [(1, 2), (2, 1)]
    first = citations[0]
    assert set(first) == {
        "number",
        "excerpt",
        "url",
        "path",
        "anchor",
        "heading_path",
        "text",
        "start",
        "end",
        "line_start",
        "line_end",
        "link",
    }
    assert first["url"].startswith("https://lumen.example.com/")
    assert first["url"] == "https://lumen.example.com/" + first["link"]
    assert first["url"].endswith("#" + first["anchor"])


def test_ask_sends_history_and_exclusions_to_the_llm(api: str, llm: LLMServer) -> None:
    body = {
        "question": "And the delay?",
        "history": [
            {"role": "user", "content": "How often are jobs retried?"},
            {"role": "assistant", "content": "Five times [3]."},
        ],
        "exclude": ["docs/zh/"],
    }
    llm.script("Exponential [1].")
    _, events = ask(api, body)
    assert names(events)[-1] == "done"
    messages = llm.requests[0]["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[2]["content"] == "Five times."
    assert (
        "Excluded by the user (not shown, do not use): docs/zh/quickstart.md"
        in (messages[3]["content"])
    )
    assert 'path="docs/zh/quickstart.md"' not in messages[3]["content"]


def test_json_mode(api: str, llm: LLMServer) -> None:
    llm.script("Five [1][999].")
    response = httpx.post(api + "/api/ask", json={"question": QUESTION, "stream": False})
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    data = response.json()
    # `text`, as the streamed done event names it; `answer` is its old name, kept as an alias.
    assert data["text"] == data["answer"] == "Five [1]."
    assert data["counts"]["dropped_citations"] == 1
    assert len(data["citations"]) == 1 and data["citations"][0]["number"] == 1
    assert data["mode"] == "llm"

    llm.script("By Accept header [2].")
    response = httpx.post(
        api + "/api/ask", json={"question": QUESTION}, headers={"Accept": "application/json"}
    )
    assert response.json()["text"] == "By Accept header [1]."


def test_extractive_answers_through_the_api(serve: Serve) -> None:
    with serve(rate_limit=0) as server:
        _, events = ask(server.url, {"question": QUESTION})
        reading = events[1][1]
        assert reading["stage"] == "reading" and reading["excerpts"] > 20
        # no model reads the whole prompt: the answer is quoted from the best five sections
        n = reading["excerpts"]
        assert reading["message"] == f"Reading the 5 best sections of {n} excerpts…"
        done = events[-1][1]
        assert done["mode"] == "extractive"
        assert done["text"].startswith(LABEL)
        assert "five times" in done["text"]
        citations = events[-2][1]["citations"]
        assert citations and all(c["url"].startswith("https://") for c in citations)
        health = httpx.get(server.url + "/api/health").json()
        assert health["mode"] == "extractive" and health["model"] == ""


def test_an_extractive_answer_speaks_the_readers_language(serve: Serve) -> None:
    """The widget sends its page's ``<html lang>``: the status lines and the sentences an
    answer without a model says around its passages are in that language (its primary
    subtag), the passages as the docs have them; a language kb-qa does not speak, English."""
    with serve(rate_limit=0) as server:
        _, french = ask(server.url, {"question": QUESTION, "lang": "fr-CA"})
        _, chinese = ask(server.url, {"question": QUESTION, "lang": "zh-Hans"})
        _, dutch = ask(server.url, {"question": QUESTION, "lang": "nl"})
    assert french[0][1]["message"] == "Recherche dans vos sources…"
    n = french[1][1]["excerpts"]
    assert french[1][1]["message"] == f"Lecture des 5 meilleures sections parmi {n} extraits…"
    done = french[-1][1]
    assert done["text"].startswith(
        "Aucun modèle de langage n’est configuré\u00a0; voici ce que disent vos sources\u00a0:\n\n"
    )
    assert "five times" in done["text"]  # the passage itself, as written
    assert "\nVoir aussi\u00a0: " in done["text"] and "See also" not in done["text"]
    assert "]\u00a0; " in done["text"] and "]; " not in done["text"]  # French typography
    assert "".join(extract(QUESTION, [], lang="fr")).endswith(
        "\n\nAucun passage de vos sources ne répond à cette question."
    )
    assert chinese[0][1]["message"] == "正在搜索来源…"
    assert chinese[-1][1]["text"].startswith("未配置语言模型，以下是来源中的原文：")
    assert "]；" in chinese[-1][1]["text"] and "]; " not in chinese[-1][1]["text"]
    assert dutch[0][1]["message"] == "Searching your sources…"
    assert dutch[-1][1]["text"].startswith(LABEL)


@pytest.mark.parametrize(
    ("replies", "code"),
    [
        ([Reply(status=500, text="boom")] * 2, "llm_error"),
        ([Reply(delay=3)], "llm_timeout"),
        ([Reply(text="", finish_reason="content_filter")], "llm_error"),
        ([Reply(text=" [1] [2]", chunk_size=2)], "llm_error"),
    ],
    ids=["500", "timeout", "filtered", "only-citation-markers"],
)
def test_a_model_that_fails_before_writing_leaves_readers_the_sources_words(
    api: str, llm: LLMServer, replies: list[Reply], code: str
) -> None:
    """A failing or silent model answered every reader with an error (and a model whose key
    was not set, every question): nothing was shown yet, so they get what a site without a
    model gives, saying the model did not answer; the done event names the failure. A reply
    with no words (a content filter's stop, citation markers alone) is such a failure too,
    and its markers are never shown before the quotes."""
    llm.script(*replies)
    response, events = ask(api, {"question": QUESTION})
    assert response.status_code == 200
    assert "error" not in names(events)
    done = events[-1][1]
    assert (done["fallback"], done["mode"]) == (code, "extractive")
    assert done["fallback_message"].startswith("The language model")  # what the failure was
    assert text(events) == done["text"]  # nothing of the model's shown before the quotes
    assert done["text"].startswith(
        "The language model did not answer; this is what your sources say:\n\n"
    )
    assert "five times" in done["text"]
    cited = next(data for name, data in events if name == "citations")["citations"]
    assert cited and cited[0]["path"] == "docs/guides/retries.md"

    llm.script(*replies)
    response = httpx.post(
        api + "/api/ask", json={"question": QUESTION, "stream": False}, timeout=20
    )
    assert response.status_code == 200
    assert response.json()["fallback"] == code and "five times" in response.json()["answer"]

    llm.script("Still here [1].")
    response, events = ask(api, {"question": QUESTION})
    assert events[-1][1]["text"] == "Still here [1]." and events[-1][1]["fallback"] == ""


@pytest.mark.parametrize(
    "replies",
    [
        [Reply(text="abcdefgh", chunk_size=2, malformed_after=2)],
        [Reply(text="abcdefgh", chunk_size=2, close_after=2)],
    ],
    ids=["malformed", "closed"],
)
def test_an_answer_that_broke_off_is_an_error_event_and_the_server_carries_on(
    api: str, llm: LLMServer, replies: list[Reply]
) -> None:
    llm.script(*replies)
    response, events = ask(api, {"question": QUESTION})
    assert response.status_code == 200
    name, data = events[-1]
    assert name == "error"
    assert "answer broke off" in data["message"]
    assert "Traceback" not in data["message"] and "litellm" not in data["message"]
    assert "done" not in names(events)

    llm.script(*replies)
    response = httpx.post(
        api + "/api/ask", json={"question": QUESTION, "stream": False}, timeout=20
    )
    assert response.status_code == 502
    assert "answer broke off" in response.json()["error"]
    assert isinstance(response.json()["text"], str)
    assert response.json()["text"] == response.json()["answer"]

    llm.script("Still here [1].")
    response, events = ask(api, {"question": QUESTION})
    assert events[-1][1]["text"] == "Still here [1]."


def test_a_broken_off_answer_in_one_object_keeps_its_citations(api: str, llm: LLMServer) -> None:
    """The stream sends a partial answer's citations; the one-object reply kept its [1]
    markers but dropped what they point at."""
    llm.script(Reply(text="Retries happen five times [1]. And then", chunk_size=8, close_after=4))
    response = httpx.post(
        api + "/api/ask", json={"question": QUESTION, "stream": False}, timeout=20
    )
    assert response.status_code == 502
    body = response.json()
    assert "answer broke off" in body["error"] and "[1]" in body["text"]
    assert [c["number"] for c in body["citations"]] == [1]


def test_a_model_without_the_llm_extra_is_reported_and_search_goes_on(
    serve: Serve, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What an install without kb-qa[llm] sees: `import litellm` fails (None in sys.modules
    # is how Python marks a module as not importable).
    monkeypatch.setitem(sys.modules, "litellm", None)
    with serve(model="openai/test", api_base="http://127.0.0.1:9", rate_limit=0) as server:
        response, events = ask(server.url, {"question": QUESTION})
        assert response.status_code == 200
        # Readers get the sources' words; the operator is told by health and the log.
        done = events[-1][1]
        assert done["fallback"] == "llm_error" and "five times" in done["text"]
        search = httpx.get(server.url + "/api/search", params={"q": QUESTION})
        assert search.status_code == 200 and search.json()["hits"]
        # A deploy of such an install must not pass its health checks as if it answered.
        health = httpx.get(server.url + "/api/health").json()
        assert health["status"] == "degraded"
        assert "pip install 'kb-qa[llm]'" in health["problem"]
        assert httpx.get(server.url + "/api/ready").status_code == 503


def test_client_disconnect_stops_the_answer(api: str, llm: LLMServer) -> None:
    # Distinct words: litellm aborts a stream that repeats one chunk too often.
    words = " ".join(f"w{i:03}" for i in range(200))
    llm.script(Reply(text=words, chunk_size=5, chunk_delay=0.03))  # ~6 s in full
    started = time.monotonic()
    with httpx.stream("POST", api + "/api/ask", json={"question": QUESTION}, timeout=20) as r:
        lines = r.iter_lines()
        for line in lines:
            if line.startswith("event: delta"):
                assert httpx.get(api + "/api/health").json()["answering"] == 1
                break
        lines.close()  # leaving mid-stream drops the connection, as a closed browser tab does
    # The server noticed the reader left and closed the LLM stream, well before its end.
    deadline = time.monotonic() + 3
    while httpx.get(api + "/api/health").json()["answering"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert httpx.get(api + "/api/health").json()["answering"] == 0
    assert time.monotonic() - started < 4

    llm.script("Next one [1].")
    _, events = ask(api, {"question": QUESTION})
    assert events[-1][1]["text"] == "Next one [1]."


def test_a_provider_quoting_the_question_in_its_error_is_not_logged_so(
    api: str, llm: LLMServer, caplog: pytest.LogCaptureFixture
) -> None:
    """The server log holds no question (privacy page), but a provider that rejected the
    request quoting it ("content rejected: … I am Jane Roe, SSN …") had its words logged,
    the reader's question in them."""
    personal = "my colleague Jane Roe has SSN 078-05-1120"
    question = f"How many attempts does a job get, {personal}?"
    llm.script(*[Reply(status=400, text=f"content rejected: {question}")] * 2)
    with caplog.at_level(logging.INFO):
        _, events = ask(api, {"question": question})
    assert events[-1][1]["fallback"] == "llm_error"  # answered with quotes, as before
    assert "Jane Roe" not in caplog.text and "078-05-1120" not in caplog.text
    assert "the provider's message quotes the request" in caplog.text


def test_a_stream_silent_while_the_model_thinks_carries_comments(
    serve: Serve, llm_server: LLMServer, llm: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model thinking for up to `llm_timeout` left the stream idle that long: a proxy's
    idle limit (nginx's 60 s) could cut it, and a browser could not tell a slow model from a
    hung connection. A comment (": ping") goes out after each PING_SECONDS of silence."""
    monkeypatch.setattr("kb_qa.serve.stopping.PING_SECONDS", 0.4)
    llm.script(Reply(text="Attempts are five [1].", delay=1.5))
    with serve(model="openai/test", api_base=llm_server.url, llm_timeout=10, rate_limit=0) as s:
        with httpx.stream("POST", s.url + "/api/ask", json={"question": QUESTION}) as response:
            lines = list(response.iter_lines())
    pings = [n for n, line in enumerate(lines) if line == ": ping"]
    first_delta = lines.index("event: delta")
    assert len(pings) >= 2 and pings[0] < first_delta, lines[:12]
    assert text(parse_sse(lines)) == "Attempts are five [1]."  # the events as they were


def test_concurrent_questions(api: str, llm: LLMServer) -> None:
    llm.default = Reply(echo=True, chunk_size=40, chunk_delay=0.01)
    results: list[Any] = [None] * 10

    def one(i: int) -> None:
        _, events = ask(api, {"question": f"{QUESTION} ({i})"})
        results[i] = events

    try:
        threads = [threading.Thread(target=one, args=(i,)) for i in range(10)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
    finally:
        llm.default = Reply(echo=True)
    for events in results:
        assert events and names(events)[-1] == "done"
        assert events[-1][1]["text"].startswith("Excerpts seen: [1] [2]")
    assert len(llm.requests) == 10


# -- search, health, sources --------------------------------------------------------------------


def test_search(api: str) -> None:
    response = httpx.get(api + "/api/search", params={"q": "retry backoff jitter", "k": 3})
    assert response.status_code == 200
    data = response.json()
    assert data["query"] == "retry backoff jitter"
    hits = data["hits"]
    assert [h["rank"] for h in hits] == [1, 2, 3]
    assert hits[0]["path"] == "docs/guides/retries.md"
    assert hits[0]["url"].startswith("https://lumen.example.com/guides/retries/")
    only = httpx.get(api + "/api/search", params={"q": "token", "include": "docs/operations/"})
    assert {h["path"].split("/")[1] for h in only.json()["hits"]} == {"operations"}


def test_a_path_filter_that_matches_no_page_is_refused_not_answered(api: str) -> None:
    """``include: ["guides/*"]`` (docs_dir left out) matched nothing: a search returned no
    hits and an answer said the docs do not cover what they plainly do (and ``kb-qa
    insights`` then listed the question as a gap). Both refuse it, saying how paths read."""
    search = httpx.get(api + "/api/search", params={"q": "retry", "include": "guides/*"})
    assert search.status_code == 422
    assert "did you mean docs/guides/*?" in search.json()["error"]
    body = {"question": "How do I retry a job?", "include": ["guides/*"], "stream": False}
    answer = httpx.post(api + "/api/ask", json=body)
    assert answer.status_code == 422 and answer.json() == search.json()
    # Filters that leave pages are answered from them, whatever they match.
    body = {"question": "How do I retry a job?", "include": ["docs/guides/*"], "stream": False}
    assert httpx.post(api + "/api/ask", json=body).status_code == 200
    body["exclude"] = ["docs/"]
    refused = httpx.post(api + "/api/ask", json=body)
    assert refused.status_code == 422
    assert refused.json()["error"].startswith("exclude ['docs/'] leaves out every page")


def test_search_parameters_never_reach_files(api: str) -> None:
    # Paths only filter the index; a traversal pattern matches nothing and reads nothing.
    response = httpx.get(
        api + "/api/search", params={"q": "root", "include": "../../../etc/passwd"}
    )
    assert response.status_code == 422
    assert "include ['../../../etc/passwd'] matches no page" in response.json()["error"]
    response = httpx.get(api + "/api/..%2f..%2fetc%2fpasswd")
    assert response.status_code == 404
    assert response.json() == {"error": "Not Found"}


@pytest.mark.parametrize(
    ("params", "status", "message"),
    [
        ({}, 422, "q is required"),
        ({"q": "x", "k": "many"}, 422, "k must be a whole number"),
        ({"q": "x", "k": "0"}, 422, "k must be between 1 and 100"),
        ({"q": "x", "k": "12345678901"}, 422, "k must be between 1 and 100"),
        ({"q": "x", "k": "9" * 5000}, 422, "k must be between 1 and 100"),
        ({"q": "x", "k": " 5"}, 422, "k must be a whole number"),
        ({"q": "x" * 2001}, 413, "The q parameter is 2,001 characters long"),
    ],
)
def test_search_rejects_bad_parameters(
    api: str, params: dict[str, str], status: int, message: str
) -> None:
    response = httpx.get(api + "/api/search", params=params)
    assert response.status_code == status
    assert message in response.json()["error"]


def test_health_and_sources(api: str, kb: KnowledgeBase) -> None:
    health = httpx.get(api + "/api/health")
    assert health.status_code == 200
    data = health.json()
    assert data["status"] == "ok" and data["files"] == 18 and data["chunks"] > 100
    assert data["embed_model"] == "hash" and data["mode"] == "llm"
    assert data["last_indexed"] > 0
    assert str(kb.settings.vault) not in health.text  # no filesystem layout leaks out
    pages = httpx.get(api + "/api/sources").json()["pages"]
    assert len(pages) == 18
    assert {
        "path": "docs/guides/retries.md",
        "title": "Retries and backoff",
        "url": "guides/retries/",
    } in pages


# -- limits and errors --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"question": "x" * 2001}, 413, "the limit is 2,000 (max_question_chars)"),
        (
            {"question": "q", "history": [{"role": "user", "content": "x"}] * 21},
            413,
            "the limit is 20 (max_history_messages)",
        ),
        (
            {"question": "q", "history": [{"role": "user", "content": "x" * 10_001}] * 2},
            413,
            "max_history_chars",
        ),
        ({"question": "  "}, 422, "question is required"),
        ({"history": []}, 422, "question is required"),
        (["question"], 422, "must be a JSON object"),
        (
            {"question": "q", "history": [{"role": "system", "content": "x"}]},
            422,
            "history[0] must be an object with role 'user' or 'assistant'",
        ),
        ({"question": "q", "history": "earlier"}, 422, "history must be a list"),
        ({"question": "q", "exclude": "docs/"}, 422, "exclude must be a list"),
        ({"question": "q", "stream": "yes"}, 422, "stream must be true or false"),
    ],
    ids=[
        "question",
        "history-count",
        "history-chars",
        "blank",
        "missing",
        "array",
        "role",
        "history-type",
        "exclude-type",
        "stream-type",
    ],
)
def test_ask_limits_and_validation(
    api: str, llm: LLMServer, body: Any, status: int, message: str
) -> None:
    response = httpx.post(api + "/api/ask", json=body)
    assert response.status_code == status
    assert response.headers["content-type"] == "application/json"
    assert message in response.json()["error"]
    assert not llm.requests


def test_body_size_content_type_and_json(api: str) -> None:
    big = json.dumps({"question": "q", "padding": "x" * 70_000})
    headers = {"Content-Type": "application/json"}
    response = httpx.post(api + "/api/ask", content=big, headers=headers)
    assert response.status_code == 413
    assert "larger than 65,536 bytes" in response.json()["error"]

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
        for _ in range(20):
            yield b" " * 5000

    response = httpx.post(api + "/api/ask", content=chunks(), headers=headers)
    assert response.status_code == 413

    response = httpx.post(
        api + "/api/ask", content='{"question": "q"}', headers={"Content-Type": "text/plain"}
    )
    assert response.status_code == 415
    response = httpx.post(api + "/api/ask", content="{not json", headers=headers)
    assert response.status_code == 400 and "not valid JSON" in response.json()["error"]
    response = httpx.get(api + "/api/ask")
    assert response.status_code == 405 and "error" in response.json()


def test_bearer_token(serve: Serve) -> None:
    with serve(api_token=TOKEN, rate_limit=0, cors_origins=ORIGIN) as server:
        for path in ("/api/search?q=token", "/api/health", "/api/sources"):
            response = httpx.get(server.url + path)
            assert response.status_code == 401
            assert response.headers["www-authenticate"] == "Bearer"
            assert "Authorization: Bearer" in response.json()["error"]
        wrong = httpx.get(server.url + "/api/health", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        response = httpx.post(server.url + "/api/ask", json={"question": "q"})
        assert response.status_code == 401
        good = {"Authorization": f"Bearer {TOKEN}"}
        assert httpx.get(server.url + "/api/health", headers=good).status_code == 200
        response = httpx.post(
            server.url + "/api/ask", json={"question": QUESTION, "stream": False}, headers=good
        )
        assert response.status_code == 200
        # A load balancer's readiness probe, which often cannot send a header, is answered:
        # whether the server is ready, nothing of why without the token.
        probe = httpx.get(server.url + "/api/ready")
        assert probe.status_code == 200 and probe.json() == {"ready": True}
        told = httpx.get(server.url + "/api/ready", headers=good).json()
        assert told["ready"] is True and told["status"] == "ok" and "generation" in told
        # A browser's preflight carries no token; it must still be answered.
        preflight = httpx.options(
            server.url + "/api/ask",
            headers={
                "Origin": ORIGIN,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization, content-type",
            },
        )
        assert preflight.status_code == 200


def test_rate_limit(serve: Serve) -> None:
    with serve(rate_limit=6, rate_burst=3) as server:
        statuses = [httpx.get(server.url + "/api/search?q=job").status_code for _ in range(3)]
        assert statuses == [200, 200, 200]
        response = httpx.get(server.url + "/api/search?q=job")
        assert response.status_code == 429
        assert response.headers["retry-after"] == "10"  # one request per 10 s
        assert "try again in 10 s" in response.json()["error"]
        assert httpx.post(server.url + "/api/ask", json={"question": "q"}).status_code == 429
        assert httpx.get(server.url + "/api/health").status_code == 200  # never limited
    # A page on another origin reads when to try again: a browser shows a script only the
    # headers CORS exposes, and Retry-After is not one it exposes by default.
    with serve(rate_limit=6, rate_burst=1, cors_origins=ORIGIN) as server:
        for _ in range(2):
            response = httpx.get(server.url + "/api/search?q=job", headers={"Origin": ORIGIN})
        assert response.status_code == 429
        assert "retry-after" in response.headers["access-control-expose-headers"].lower()


def test_cors_allows_configured_origins_only(serve: Serve) -> None:
    preflight = {
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type",
    }
    # "https://docs.example.com/" as copied from the address bar: the same origin (a browser's
    # Origin never ends in "/"; the slash refused every request, silently).
    with serve(cors_origins=f"{ORIGIN}/, https://other.example.org", rate_limit=0) as server:
        response = httpx.get(server.url + "/api/health", headers={"Origin": ORIGIN})
        assert response.headers["access-control-allow-origin"] == ORIGIN
        response = httpx.get(server.url + "/api/health", headers={"Origin": "https://evil.example"})
        assert response.status_code == 200
        assert "access-control-allow-origin" not in response.headers
        response = httpx.options(server.url + "/api/ask", headers={"Origin": ORIGIN, **preflight})
        assert response.status_code == 200
        assert response.headers["access-control-allow-origin"] == ORIGIN
        assert "POST" in response.headers["access-control-allow-methods"]
        assert "content-type" in response.headers["access-control-allow-headers"].lower()
        response = httpx.options(
            server.url + "/api/ask", headers={"Origin": "https://evil.example", **preflight}
        )
        assert response.status_code == 400
        assert "access-control-allow-origin" not in response.headers
    with serve(rate_limit=0) as server:  # the default: same origin only
        response = httpx.options(server.url + "/api/ask", headers={"Origin": ORIGIN, **preflight})
        assert response.status_code == 400
        response = httpx.get(server.url + "/api/health", headers={"Origin": ORIGIN})
        assert "access-control-allow-origin" not in response.headers


@pytest.mark.parametrize(
    ("model", "base", "named"),
    [
        # Without OPENAI_API_KEY: health said "ok" and every answer "The language model needs
        # an API key, and none is set." (litellm refuses before any request: nothing leaves
        # the machine).
        ("gpt-4o-mini", "", ("OPENAI_API_KEY", "gpt-4o-mini")),
        # "llama3" beside a local server's api_base (what an Ollama or vLLM user writes
        # first): health said "ok", and every answer failed as "The language model rejected
        # the request.", with a hint to lower token_budget.
        ("llama3", "local", ("openai/llama3", "KBQA_MODEL")),
        # A hosted provider's model behind api_base (a company's gateway) still needs its
        # key: health said "ok" since any api_base was taken for a local server.
        ("anthropic/claude-3-5-haiku-latest", "local", ("ANTHROPIC_API_KEY", "claude")),
    ],
)
def test_a_model_that_cannot_answer_is_reported_at_start_and_readers_get_quotes(
    serve: Serve,
    llm_server: LLMServer,
    monkeypatch: pytest.MonkeyPatch,
    model: str,
    base: str,
    named: tuple[str, str],
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with serve(model=model, api_base=base and llm_server.url, rate_limit=0) as server:
        health = httpx.get(server.url + "/api/health").json()
        assert health["status"] == "degraded"
        assert all(word in health["problem"] for word in named), health["problem"]
        response, events = ask(server.url, {"question": QUESTION})
        assert response.status_code == 200 and "error" not in names(events)
        done = events[-1][1]
        assert done["fallback"] == "llm_error" and "five times" in done["text"]


@pytest.mark.parametrize("api_base", ["127.0.0.1:8080/v1", "localhost:11434", "ftp://host/v1"])
def test_an_api_base_that_is_no_http_url_is_refused_with_the_setting_named(
    kb: KnowledgeBase, api_base: str
) -> None:
    """Without its "http://", litellm reported the server as failing ("HTTP 500. Try again
    shortly."), retried, and health said "ok"."""
    with pytest.raises(ConfigError, match=r"api_base \(KBQA_API_BASE\).*http\(s\) URL"):
        kb.settings.replace(model="openai/test", api_base=api_base)


def test_a_path_is_hidden_whole_never_as_the_start_of_a_sibling_s(kb: KnowledgeBase) -> None:
    """Health said "the vault path … now leads to the vault folder-b" of a sibling folder
    "vault-b", and "Vault folder the vault folder does not exist"."""
    vault = str(kb.settings.vault)
    api = Api(kb, kb.settings)
    said = api.public(f"Vault folder {vault} is gone. It now leads to {vault}-b, not {vault}.")
    assert said == f"Vault folder is gone. It now leads to {vault}-b, not the vault folder."
    assert api.public(f"open {kb.settings.index_path}: no") == "open the index folder: no"


def test_a_reader_closing_the_stream_after_done_logs_no_error(
    serve: Serve, caplog: pytest.LogCaptureFixture
) -> None:
    """A client that reads up to the done event and closes the connection (a script, a
    proxy) had the server log an asyncio ERROR, "Task exception was never retrieved ...
    StopAsyncIteration", for most answers: an operator alerting on errors was paged for
    ordinary readers (a soak test, 65 of 79 streamed answers)."""
    import gc
    import http.client
    from urllib.parse import urlsplit

    with serve(rate_limit=0) as server:
        where = urlsplit(server.url)
        for _ in range(10):
            connection = http.client.HTTPConnection(where.hostname, where.port, timeout=30)
            body = json.dumps({"question": QUESTION})
            connection.request("POST", "/api/ask", body, {"Content-Type": "application/json"})
            lines = connection.getresponse().fp
            for line in lines:
                if line.startswith(b"event: done"):
                    lines.readline()
                    break
            connection.close()
        time.sleep(0.5)
        gc.collect()
    unread = [r for r in caplog.records if "never retrieved" in r.getMessage()]
    assert not unread, unread[0].getMessage()
