"""Hostile and malformed requests against a real uvicorn server: a 4xx with a message, never
a 500, and no way around the rate limit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_helpers import indexed_sample
from uvicorn_thread import UvicornThread

from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.serve.app import create_app
from kb_qa.serve.serving import uvicorn_options


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    kb = indexed_sample(tmp_path_factory.mktemp("hostile"))
    yield kb
    kb.close()


@pytest.fixture(scope="module")
def api(kb: KnowledgeBase) -> Iterator[str]:
    with UvicornThread(create_app(kb, kb.settings.replace(rate_limit=0))) as server:
        yield server.url


def post(url: str, body: bytes) -> httpx.Response:
    return httpx.post(url, content=body, headers={"Content-Type": "application/json"}, timeout=20)


@pytest.mark.parametrize("route", ["/api/ask", "/api/feedback"])
@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b"[" * 10_000 + b"]" * 10_000, "nested more than"),
        (b'{"question": {"a": ' * 40 + b"1" + b"}" * 80, "nested more than"),
        (b'{"question": "\\ud800 retry", "rating": "up", "answer": "x"}', "lone surrogate"),
        (b'{"question": "ok", "rating": "up", "answer": "x", "reason": "\\udfff"}', "surrogate"),
    ],
    ids=["deep-array", "deep-object", "surrogate-question", "surrogate-reason"],
)
def test_unstorable_json_is_a_400(api: str, route: str, body: bytes, words: str) -> None:
    response = post(api + route, body)
    assert response.status_code == 400, response.text
    assert words in response.json()["error"]


@pytest.mark.parametrize("k", [" 5 ", "٣", "1_0", "+5", "5.0", "0x5", ""])
def test_k_must_be_plain_digits(api: str, k: str) -> None:
    response = httpx.get(api + "/api/search", params={"q": "retry", "k": k})
    assert response.status_code == 422
    assert "digits 0-9" in response.json()["error"]


def test_plain_k_still_works(api: str) -> None:
    response = httpx.get(api + "/api/search", params={"q": "retry", "k": "3"})
    assert response.status_code == 200 and len(response.json()["hits"]) == 3


@pytest.mark.parametrize("question", ["\u0000\u0000", "\u200b\ufeff", " \u2060\t"])
def test_a_question_of_invisible_characters_is_no_question(api: str, question: str) -> None:
    response = httpx.post(api + "/api/ask", json={"question": question, "stream": False})
    assert response.status_code == 422
    assert "non-empty" in response.json()["error"]
    found = httpx.get(api + "/api/search", params={"q": question})
    assert found.status_code == 422


def test_an_empty_path_filter_is_refused_not_matched_against_nothing(api: str) -> None:
    asked = httpx.post(
        api + "/api/ask", json={"question": "retries", "include": [""], "stream": False}
    )
    assert asked.status_code == 422 and "empty path" in asked.json()["error"]
    found = httpx.get(api + "/api/search", params={"q": "retries", "include": ""})
    assert found.status_code == 422 and "empty path" in found.json()["error"]


def _limited_app(kb: KnowledgeBase, **settings: Any) -> UvicornThread:
    merged = kb.settings.replace(rate_limit=60, rate_burst=3, **settings)
    return UvicornThread(create_app(kb, merged), **uvicorn_options(merged))


def test_pages_are_rate_limited_too(kb: KnowledgeBase) -> None:
    with _limited_app(kb) as server:
        codes = [httpx.get(server.url + "/").status_code for _ in range(5)]
        assert codes[:3] == [200, 200, 200] and codes[3] == 429
        assert httpx.get(server.url + "/api/health").status_code == 200  # never limited
        assert httpx.get(server.url + "/kb-qa/kb-qa.js").status_code == 200  # static


def _rotating_forwarded_for(url: str) -> list[int]:
    """Status codes of six searches, each claiming another client address."""
    return [
        httpx.get(
            url + "/api/search",
            params={"q": "retry"},
            headers={"X-Forwarded-For": f"203.0.113.{n}"},
        ).status_code
        for n in range(6)
    ]


def test_rotating_x_forwarded_for_does_not_escape_the_limit(kb: KnowledgeBase) -> None:
    with _limited_app(kb) as server:
        assert 429 in _rotating_forwarded_for(server.url)


def test_a_configured_proxy_is_believed(kb: KnowledgeBase) -> None:
    with _limited_app(kb, forwarded_allow_ips="127.0.0.1") as server:
        # Each forwarded client has its own bucket.
        assert _rotating_forwarded_for(server.url) == [200] * 6


def _rotating_ipv6(url: str, network: str = "2001:db8:1:2") -> list[int]:
    """Status codes of six searches, each from another address of one IPv6 network (/64)."""
    return [
        httpx.get(
            url + "/api/search",
            params={"q": "retry"},
            headers={"X-Forwarded-For": f"{network}::{n + 1:x}"},
        ).status_code
        for n in range(6)
    ]


def test_the_addresses_of_one_ipv6_network_share_one_limit(kb: KnowledgeBase) -> None:
    # An IPv6 client holds a whole /64 (2^64 addresses): one bucket per address let it
    # pick a fresh one for every request and never be limited.
    with _limited_app(kb, forwarded_allow_ips="127.0.0.1") as server:
        assert 429 in _rotating_ipv6(server.url)
        # Another network, another reader: its own bucket.
        assert _rotating_ipv6(server.url, "2001:db8:9:9")[:3] == [200] * 3
        # The same address written as an IPv4-mapped IPv6 one is the same client.
        codes = [
            httpx.get(
                server.url + "/api/search",
                params={"q": "retry"},
                headers={"X-Forwarded-For": address},
            ).status_code
            for address in ["198.51.100.7", "::ffff:198.51.100.7"] * 2
        ]
        assert 429 in codes


@pytest.fixture
def kb_factory(tmp_path: Path) -> Iterator[Callable[..., KnowledgeBase]]:
    opened: list[KnowledgeBase] = []

    def make(vault: Path) -> KnowledgeBase:
        opened.append(KnowledgeBase(vault, embed_model="hash", index_dir=tmp_path / "idx"))
        return opened[-1]

    yield make
    for instance in opened:
        instance.close()


def test_a_note_whose_name_holds_a_newline_opens(
    make_vault: Callable[..., Path], kb_factory: Callable[..., KnowledgeBase]
) -> None:
    vault = make_vault({"new\nline.md": "# Odd name\n\nStill a note.\n", "a.md": "# A\n"})
    index = kb_factory(vault)
    index.index()
    with UvicornThread(create_app(index, index.settings.replace(rate_limit=0))) as server:
        response = httpx.get(server.url + "/view/new%0Aline.md")
        assert response.status_code == 200 and "Still a note." in response.text
        assert httpx.get(server.url + "/view/new%0Aother.md").status_code == 404


def test_a_page_path_holding_a_nul_byte_is_not_indexed(api: str) -> None:
    """It was a 500 (``ValueError: embedded null byte`` opening the file)."""
    for path in ("/view/x%00.md", "/view/docs/index.md%00.md"):
        response = httpx.get(api + path)
        assert response.status_code == 404, response.text
        assert "is not an indexed page" in response.json()["error"]


def test_pages_that_changed_since_indexing_get_a_404_saying_why(
    make_vault: Callable[..., Path], kb_factory: Callable[..., KnowledgeBase]
) -> None:
    """Without a watcher, the index still lists them: a folder in a note's place was a 500
    (IsADirectoryError), and a note grown to 60 MB was served whole, past max_file_bytes."""
    vault = make_vault({"a.md": "# A\n\nShort.\n", "b.md": "# B\n\nShort.\n"})
    index = kb_factory(vault)
    index.index()
    (vault / "a.md").unlink()
    (vault / "a.md").mkdir()
    (vault / "b.md").write_text("# B\n\n" + "grown " * 20_000, encoding="utf-8")
    settings = index.settings.replace(rate_limit=0, max_file_bytes=100_000)
    with UvicornThread(create_app(index, settings)) as server:
        folder = httpx.get(server.url + "/view/a.md")
        grown = httpx.get(server.url + "/view/b.md")
        # A reader's browser following a citation gets a page saying so, not raw JSON
        read = httpx.get(server.url + "/view/b.md", headers={"Accept": "text/html,*/*;q=0.8"})
    assert folder.status_code == 404, folder.text
    assert folder.json()["error"] == "'a.md' cannot be shown now: it is a folder now, not a file"
    assert grown.status_code == 404, grown.text[:200]
    assert "larger than the 100,000-byte limit now" in grown.json()["error"]
    assert read.status_code == 404 and read.headers["content-type"].startswith("text/html")
    assert "<h1>This note cannot be shown now</h1>" in read.text
    assert "larger than the 100,000-byte limit now" in read.text
    assert "Content-Security-Policy" in read.headers


def test_a_hidden_note_is_answered_as_a_missing_one(
    make_vault: Callable[..., Path], kb_factory: Callable[..., KnowledgeBase]
) -> None:
    """A hidden binary ``.md`` got "… binary file with a Markdown extension", a missing one
    "… is not an indexed page": anyone could probe for hidden files (``.obsidian/``)."""
    vault = make_vault({"a.md": "# A\n\nShort.\n"})
    (vault / ".obsidian").mkdir()
    (vault / ".obsidian" / "h.md").write_bytes(b"x\0y")
    (vault / ".hidden.md").write_bytes(b"x\0y")
    index = kb_factory(vault)
    index.index()
    with UvicornThread(create_app(index, index.settings.replace(rate_limit=0))) as server:
        answers = {
            path: httpx.get(server.url + "/view/" + path).json()["error"]
            for path in (".hidden.md", ".obsidian/h.md", "missing.md")
        }
    assert answers == {path: f"{path!r} is not an indexed page of this vault." for path in answers}
