"""An OpenAI-compatible chat-completions server for tests, over real HTTP on 127.0.0.1.

It streams ``chat.completion.chunk`` events the way providers do, so the code under test runs its
real HTTP path (litellm -> openai SDK -> httpx) instead of a mock::

    with LLMServer() as server:
        server.script("Paris is the capital [1].", Reply(status=500))
        ...  # call litellm with api_base=server.url
        server.requests[0]["messages"]  # what the model was sent

A stream is, in order: a role-only delta, content deltas of ``chunk_size`` characters (so a
citation such as ``[12]`` can arrive split), a final chunk carrying ``finish_reason``, an optional
usage-only chunk with ``choices == []``, then ``data: [DONE]``. The body uses chunked transfer
encoding like a real provider, so closing the connection mid-answer is a protocol error for the
client, not a short but well-formed answer.
"""

from __future__ import annotations

import json
import re
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

# The excerpt tag written by kb_qa.answer.prompt; the echo mode reports the numbers it finds.
EXCERPT_NUMBER = re.compile(r'<excerpt number="(\d+)"')
# An excerpt's number and section path, and a template's ``{{Page > Heading}}`` (ScriptedLLM).
SECTION = re.compile(r'<excerpt number="(\d+)" section="([^"]*)"')
CITE = re.compile(r"\{\{(.+?)\}\}")


@dataclass(frozen=True)
class Reply:
    """One scripted answer; the defaults are a plain, well-behaved streamed reply."""

    text: str = "OK."
    chunk_size: int = 4  # characters per content delta
    status: int = 200  # anything else returns a JSON error body with ``text`` as its message
    delay: float = 0.0  # seconds before the first byte (the status line)
    chunk_delay: float = 0.0  # seconds between content deltas
    stall_after: int | None = None  # content deltas sent before the stream stalls
    stall: float = 30.0  # how long it stalls (cut short when the server stops)
    malformed_after: int | None = None  # content deltas sent before a line that is not JSON
    close_after: int | None = None  # content deltas sent before the connection is dropped
    usage: bool = True  # send the usage-only chunk (``choices == []``) before [DONE]
    finish_reason: str = "stop"
    echo: bool = False  # answer with the excerpt numbers found in the last user message
    keep_alive: float = 0.0  # seconds of ": keep-alive" comments (5 a second) before any text
    raw: str | None = None  # a 200 reply of this body, not a stream (a proxy's page, say)
    raw_type: str = "text/html"


ECHO = Reply(echo=True)


def echo_text(messages: list[dict[str, Any]]) -> str:
    """The echo answer for these messages: ``Excerpts seen: [1] [2].`` or ``No excerpts seen.``"""
    user = [m for m in messages if m.get("role") == "user"]
    content = user[-1].get("content", "") if user else ""
    if not isinstance(content, str):  # content parts: join their text
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    numbers = EXCERPT_NUMBER.findall(content)
    if not numbers:
        return "No excerpts seen."
    return "Excerpts seen: " + " ".join(f"[{n}]" for n in numbers) + "."


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), max(1, size))]


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: LLMServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that times out or drops a keep-alive connection is expected in these tests.
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive and chunked bodies, as providers speak
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass  # test output stays quiet

    def setup(self) -> None:
        super().setup()
        # Each event is its own small write; without this, Nagle's algorithm meeting the
        # client's delayed ACK adds ~40 ms per reused connection, which no provider does.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.owner._track(self.connection, add=True)

    def finish(self) -> None:
        self.server.owner._track(self.connection, add=False)
        try:
            super().finish()
        except OSError:
            pass  # the client or the test already dropped the connection

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._json(400, {"error": {"message": "body is not JSON", "type": "invalid_request"}})
            return
        reply = self.server.owner._take(body)
        try:
            self._answer(body, reply)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (e.g. its timeout fired)

    def _answer(self, body: dict[str, Any], reply: Reply) -> None:
        stopping = self.server.owner._stopping
        if reply.delay and stopping.wait(reply.delay):
            return
        if reply.status != 200:
            error = {"message": reply.text, "type": "server_error", "code": None}
            self._json(reply.status, {"error": error})
            return
        if reply.raw is not None:
            data = reply.raw.encode()
            self.send_response(200)
            self.send_header("Content-Type", reply.raw_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        text = echo_text(body.get("messages", [])) if reply.echo else reply.text
        model = str(body.get("model", "test"))
        prompt_tokens = sum(_tokens(str(m.get("content", ""))) for m in body.get("messages", []))
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": _tokens(text),
            "total_tokens": prompt_tokens + _tokens(text),
        }
        if not body.get("stream"):
            message = {"role": "assistant", "content": text}
            choice = {"index": 0, "message": message, "finish_reason": reply.finish_reason}
            envelope = _envelope(model, "chat.completion")
            self._json(200, {**envelope, "choices": [choice], "usage": usage})
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for event in self._events(model, text, reply, usage):
            if event is None:  # drop the connection without ending the chunked body
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True
                return
            self._chunk(event)
        self._chunk(b"")

    def _events(
        self, model: str, text: str, reply: Reply, usage: dict[str, int]
    ) -> Iterator[bytes | None]:
        stopping = self.server.owner._stopping
        head = _envelope(model, "chat.completion.chunk")

        def event(delta: dict[str, Any], finish: str | None = None) -> bytes:
            choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
            return _sse({**head, "choices": [choice]})

        yield event({"role": "assistant", "content": ""})
        for _ in range(round(reply.keep_alive * 5)):  # a provider busy thinking, or queueing
            if stopping.wait(0.2):
                return
            yield b": keep-alive\n\n"
        for sent, piece in enumerate(_pieces(text, reply.chunk_size)):
            if sent == reply.close_after:
                yield None
                return
            if sent == reply.malformed_after:
                yield b'data: {"id": "chatcmpl-broken", "choices": [\n\n'
            if sent == reply.stall_after and stopping.wait(reply.stall):
                return
            if reply.chunk_delay and stopping.wait(reply.chunk_delay):
                return
            yield event({"content": piece})
        yield event({}, reply.finish_reason)
        if reply.usage:
            yield _sse({**head, "choices": [], "usage": usage})
        yield b"data: [DONE]\n\n"

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()


def _envelope(model: str, kind: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": kind,
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": "fp_test",
    }


def _sse(payload: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(payload, ensure_ascii=False).encode() + b"\n\n"


class LLMServer:
    """A chat-completions server in a background thread; use it as a context manager."""

    def __init__(self, default: Reply | str = ECHO) -> None:
        self.default = _as_reply(default)
        self.requests: list[dict[str, Any]] = []  # every request body, in arrival order
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None
        self.url = ""

    def script(self, *replies: Reply | str) -> None:
        """Queue replies for the next requests; once the queue is empty ``default`` answers."""
        with self._lock:
            self._queue.extend(_as_reply(r) for r in replies)

    def reset(self) -> None:
        """Forget recorded requests and unused scripted replies."""
        with self._lock:
            self.requests.clear()
            self._queue.clear()

    def start(self) -> LLMServer:
        """Bind a free port on 127.0.0.1 and serve in a daemon thread."""
        httpd = _Server(("127.0.0.1", 0), _Handler)
        httpd.owner = self
        self._httpd = httpd
        # A short poll interval keeps shutdown() quick; the default would add 0.5 s per test.
        self._thread = threading.Thread(
            target=httpd.serve_forever, args=(0.02,), name="llm-server", daemon=True
        )
        self._thread.start()
        self.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
        return self

    def stop(self) -> None:
        """Wake stalled replies, drop open connections and wait for the handler threads."""
        if self._httpd is None:
            return
        self._stopping.set()
        self._httpd.shutdown()
        with self._lock:
            # Idle keep-alive connections would otherwise block server_close's thread join.
            for conn in list(self._connections):
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        self._httpd.server_close()
        self._httpd = None

    def __enter__(self) -> LLMServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _take(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
            return self._queue.popleft() if self._queue else self.default

    def _track(self, conn: socket.socket, *, add: bool) -> None:
        with self._lock:
            if add:
                self._connections.add(conn)
            else:
                self._connections.discard(conn)


def _as_reply(reply: Reply | str) -> Reply:
    return Reply(text=reply) if isinstance(reply, str) else reply


class ScriptedLLM(LLMServer):
    """The test LLM server; ``template`` cites sections as ``{{Page > Heading}}``.

    Each ``{{...}}`` becomes the ``[n]`` the prompt gave that section, so the answer cites
    exactly the passages a test wants, whatever order retrieval put them in.
    """

    template = ""
    missing: list[str]

    def _take(self, body: dict[str, Any]) -> Reply:
        reply = super()._take(body)
        if not self.template:
            return reply
        user = [m for m in body.get("messages", []) if m.get("role") == "user"]
        sections = SECTION.findall(str(user[-1].get("content", ""))) if user else []

        def cite(match: re.Match[str]) -> str:
            wanted = match.group(1)
            for number, section in sections:
                if section == wanted or section.endswith(" > " + wanted):
                    return f"[{number}]"
            self.missing.append(wanted)
            return ""

        return replace(reply, text=CITE.sub(cite, self.template))
