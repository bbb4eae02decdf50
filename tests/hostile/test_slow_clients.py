"""Slow and oversized clients against a real uvicorn, started the way ``kb-qa serve`` starts
it (``kb_qa.serve.serving.uvicorn_options``): header size and count limits, header and body
timeouts (slowloris), a connection cap, a Host check against DNS rebinding, and /view
renders dropped when their reader has gone.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import httpx
import pytest
from conftest import write_files
from uvicorn_thread import serve_kb

from kb_qa.kb.knowledge_base import KnowledgeBase

HARD_LIMIT = 30.0  # seconds any one socket operation may take before the test fails
# Few sections (quick to index) of many inline elements (slow to render: ~1.5 s)
BIG_NOTE = "# Big\n\n" + "".join(
    f"## Part {i}\n\n" + " ".join(f"*w{j}* `c` [l](x.md)" for j in range(40)) + "\n\n"
    for i in range(150)
)


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    root = tmp_path_factory.mktemp("slow")
    vault = write_files(
        root / "vault",
        {
            "small.md": "# Small\n\n## Otters\n\nOtters hold hands while they sleep.\n",
            "big.md": BIG_NOTE,
        },
    )
    kb = KnowledgeBase(vault, index_dir=root / "idx", embed_model="hash", rate_limit=0)
    kb.index()
    yield kb
    kb.close()


@pytest.fixture(scope="module")
def api(kb: KnowledgeBase) -> Iterator[str]:
    with serve_kb(kb) as server:
        yield server.url


def connect(url: str) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=HARD_LIMIT)
    return sock


def exchange(url: str, request: bytes) -> bytes:
    """Send ``request`` (as much as the server takes) and read until the server closes or
    has sent a whole response; ``b""`` when it reset the connection."""
    with connect(url) as sock:
        try:
            sock.sendall(request)
        except (BrokenPipeError, ConnectionResetError):
            pass
        return read_response(sock)


def read_response(sock: socket.socket) -> bytes:
    data = b""
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            length = [
                int(line.split(b":", 1)[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            ]
            if length and len(body) >= length[0]:
                break
    except ConnectionResetError:
        pass
    return data


def get(path: str, *headers: bytes) -> bytes:
    lines = [f"GET {path} HTTP/1.1".encode(), b"Host: 127.0.0.1", *headers]
    return b"\r\n".join(lines) + b"\r\n\r\n"


def test_a_one_megabyte_header_is_refused(api: str) -> None:
    response = exchange(api, get("/api/health", b"X-Big: " + b"a" * 1_000_000))
    assert not response.startswith(b"HTTP/1.1 200"), response[:200]
    if response:  # the 431 arrives unless the kernel reset the connection first
        assert response.startswith(b"HTTP/1.1 431"), response[:200]
        assert b"max_header_bytes" in response
    assert httpx.get(api + "/api/health").status_code == 200  # the server is fine


@pytest.mark.parametrize("size", [20_000, 40_000, 100_000])
def test_a_head_over_the_limit_that_arrives_at_once_is_refused(api: str, size: int) -> None:
    """h11 measures a head only while it is still arriving; one that comes whole in a
    read or two is measured before it is parsed."""
    response = exchange(api, get("/api/health", b"X-Big: " + b"a" * size))
    assert response.startswith(b"HTTP/1.1 431"), response[:200]
    assert b"max_header_bytes" in response
    under = httpx.get(api + "/api/health", headers={"X-Big": "a" * 15_000})
    assert under.status_code == 200


def test_a_large_head_pipelined_behind_a_small_request_is_refused(api: str) -> None:
    small = get("/api/health")
    large = get("/api/health", b"X-Big: " + b"a" * 100_000)
    response = exchange(api, small + large)
    assert response.startswith(b"HTTP/1.1 200"), response[:200]
    assert b"HTTP/1.1 431" in response and b"max_header_bytes" in response


def test_a_head_ended_by_bare_line_feeds_is_measured_as_a_head(api: str) -> None:
    body = b'{"question": "' + b"a" * 50 + b'", "rating": "up", "answer": "' + b"b" * 50_000 + b'"}'
    head = (
        b"POST /api/feedback HTTP/1.1\nHost: 127.0.0.1\nContent-Type: application/json\n"
        b"Content-Length: " + str(len(body)).encode() + b"\n\n"
    )
    response = exchange(api, head + body)
    assert not response.startswith(b"HTTP/1.1 431"), response[:200]


def test_ten_thousand_header_lines_are_refused(api: str) -> None:
    lines = [f"X-H{i}: v".encode() for i in range(10_000)]
    response = exchange(api, get("/api/health", *lines))
    assert not response.startswith(b"HTTP/1.1 200"), response[:200]
    if response:
        assert response.startswith(b"HTTP/1.1 431"), response[:200]


def test_more_than_a_hundred_small_header_lines_are_refused(api: str) -> None:
    headers = {f"x-h{i}": "v" for i in range(150)}  # 1.5 KB: under the size limit
    response = httpx.get(api + "/api/health", headers=headers)
    assert response.status_code == 431
    assert "max_headers" in response.json()["error"]
    assert httpx.get(api + "/api/health", headers=dict(list(headers.items())[:50])).is_success


@pytest.mark.parametrize("host", ["attacker.example", "attacker.example:8321", "127.0.0.1.nip.io"])
def test_a_foreign_host_is_refused(api: str, host: str) -> None:
    for path in ("/api/search?q=otters", "/view/small.md", "/api/health"):
        response = httpx.get(api + path, headers={"Host": host})
        assert response.status_code == 400, (path, response.text)
        assert "allowed_hosts" in response.json()["error"]


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost:9999", "[::1]:8321", "LOCALHOST"])
def test_loopback_hosts_are_served(api: str, host: str) -> None:
    response = httpx.get(api + "/api/search?q=otters", headers={"Host": host})
    assert response.status_code == 200, response.text


def test_allowed_hosts_admits_a_deployment_name(kb: KnowledgeBase) -> None:
    with serve_kb(kb, allowed_hosts=("docs.example.com", "*.internal.example")) as server:
        for host in ("docs.example.com", "docs.example.com:443", "api.internal.example"):
            assert httpx.get(server.url + "/api/health", headers={"Host": host}).is_success
        refused = httpx.get(server.url + "/api/health", headers={"Host": "evil.example.com"})
        assert refused.status_code == 400


def test_a_slow_header_is_disconnected_after_the_timeout(kb: KnowledgeBase) -> None:
    with serve_kb(kb, header_timeout=1.0) as server:
        started = time.monotonic()
        with connect(server.url) as sock:
            sock.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            closed = False
            try:  # a byte every 0.2 s keeps a slowloris client "active"
                while time.monotonic() - started < HARD_LIMIT:
                    sock.sendall(b"a")
                    time.sleep(0.2)
                    sock.settimeout(0.01)
                    try:
                        if sock.recv(1) == b"":
                            closed = True
                            break
                    except TimeoutError:
                        pass
            except (BrokenPipeError, ConnectionResetError):
                closed = True
        waited = time.monotonic() - started
        assert closed and waited < 5, waited
        assert httpx.get(server.url + "/api/health").is_success


def test_a_silent_connection_is_closed(kb: KnowledgeBase) -> None:
    with serve_kb(kb, header_timeout=1.0) as server, connect(server.url) as sock:
        started = time.monotonic()
        assert sock.recv(1) == b""  # closed by the server, not by the hard limit
        assert time.monotonic() - started < 5


def test_a_slow_body_is_disconnected_after_the_timeout(kb: KnowledgeBase) -> None:
    with serve_kb(kb, body_timeout=1.0) as server, connect(server.url) as sock:
        started = time.monotonic()
        sock.sendall(
            b"POST /api/ask HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b'Content-Length: 1000\r\n\r\n{"question": "'
        )
        sock.settimeout(HARD_LIMIT)
        response = read_response(sock)
        assert time.monotonic() - started < 5
        assert not response.startswith(b"HTTP/1.1 2")


def test_connections_beyond_the_cap_are_refused(kb: KnowledgeBase) -> None:
    with serve_kb(kb, max_connections=5, header_timeout=2.0) as server:
        idle = [connect(server.url) for _ in range(5)]
        try:
            time.sleep(0.2)
            response = exchange(server.url, get("/api/health"))
            assert response.startswith(b"HTTP/1.1 503"), response[:200]
        finally:
            for sock in idle:
                sock.close()
        deadline = time.monotonic() + HARD_LIMIT
        while time.monotonic() < deadline:  # served again once they have gone
            if exchange(server.url, get("/api/health")).startswith(b"HTTP/1.1 200"):
                break
            time.sleep(0.1)
        else:
            pytest.fail("the server did not serve again after the idle connections closed")


def _view_seconds(url: str, path: str) -> float:
    started = time.monotonic()
    response = httpx.get(url + path, timeout=HARD_LIMIT * 4)
    assert response.status_code == 200
    return time.monotonic() - started


def test_abandoned_view_renders_do_not_hold_up_other_readers(kb: KnowledgeBase) -> None:
    with serve_kb(kb) as server:
        one = _view_seconds(server.url, "/view/big.md")
        abandoned = []
        for _ in range(10):  # readers who open the big note and leave at once
            sock = connect(server.url)
            sock.sendall(get("/view/big.md"))
            abandoned.append(sock)
        time.sleep(0.2)
        for sock in abandoned:
            sock.close()
        waited = _view_seconds(server.url, "/view/small.md")
        # Without cancelling, the ten renders run two at a time ahead of it: 5 x one.
        assert waited < max(2.5 * one, 1.0), (waited, one)


def test_big_note_renders_with_its_anchors(api: str) -> None:
    assert 'id="part-149"' in httpx.get(api + "/view/big.md", timeout=60).text
