"""Run the kb-qa API in a background thread (for ``mkdocs serve`` and tests)."""

from __future__ import annotations

import asyncio
import atexit
import errno
import ipaddress
import json
import logging
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kb_qa.errors import ConfigError
from kb_qa.serve import first_index
from kb_qa.serve.first_index import FirstIndex, serves_meanwhile

if TYPE_CHECKING:
    from types import FrameType

    import uvicorn

    from kb_qa.kb.knowledge_base import KnowledgeBase
    from kb_qa.settings import Settings
    from kb_qa.types import IndexReport

log = logging.getLogger(__name__)


LOOPBACK = ("127.0.0.1", "localhost", "::1")
STOP_SECONDS = 30  # how long a stopping server waits for its index run to reach a safe point


def preview_origins(dev_addr: str) -> tuple[str, ...]:
    """The origins a browser may load a local preview from (``mkdocs serve``, ``zensical
    serve``) at ``dev_addr`` (host:port): localhost and 127.0.0.1 at its port, and its own
    host when that is a loopback or unspecified address (``127.0.0.2``, ``[::1]``,
    ``0.0.0.0``). Never another host: ``dev_addr`` comes from the vault's config, and
    ``attacker.example:8000`` in a pull request under review must not let that site's pages
    read the reviewer's local API. No port, or not a port: no origin."""
    host, _, port = dev_addr.strip().rpartition(":")
    if not (port.isascii() and port.isdigit()) or not 0 < int(port) < 65536:
        return ()
    hosts = ["localhost", "127.0.0.1"]
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        address = None
    if address is not None and (address.is_loopback or address.is_unspecified):
        hosts.append(f"[{address}]" if address.version == 6 else str(address))
    return tuple(f"http://{h}:{int(port)}" for h in dict.fromkeys(hosts))


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def port_in_use(host: str, port: int) -> bool:
    """Whether something already listens on ``host:port`` (checked as uvicorn binds it)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                return True
            raise
    return False


def check_port(host: str, port: int) -> None:
    """Before minutes of indexing: :class:`PortInUse` when ``port`` (0: a free one, never
    taken) is taken on ``host``, ``ConfigError`` when ``host`` is no address of this machine
    or resolves to none."""
    try:
        taken = bool(port) and port_in_use(host, port)
    except OSError as exc:
        raise ConfigError(
            f"Cannot serve on {host}:{port}: {exc.strerror or exc}. Check --host (KBQA_HOST): "
            "an address of this machine, such as 127.0.0.1 or 0.0.0.0."
        ) from exc
    if taken:
        raise PortInUse(host, port)


def progress_logger(log: logging.Logger, prefix: str = "") -> Callable[[int, int], None]:
    """Progress for servers and builds: a plain log line at every further tenth of a long
    embedding run (``embedding: 40 of 202 chunks``), so a first start is never silent."""
    shown = -1

    def progress(done: int, total: int) -> None:
        nonlocal shown
        tenth = done * 10 // total if total >= 100 else -1
        if tenth > shown:
            shown = tenth
            log.info("%sembedding: %d of %d chunks", prefix, done, total)

    return progress


def stop_answers(server: uvicorn.Server) -> None:
    """Tell the app's answers still streaming that the server is stopping
    (kb_qa.serve.stopping): they get shutdown_timeout seconds to end."""
    api = getattr(getattr(server.config.app, "state", None), "api", None)
    if api is not None:
        api.stopping.begin()


def stop_answers_on_exit(server: uvicorn.Server) -> None:
    """uvicorn's handler of SIGINT and SIGTERM, telling the app's answers first."""
    handle_exit = server.handle_exit

    def handle(sig: int, frame: FrameType | None) -> None:
        stop_answers(server)
        handle_exit(sig, frame)

    server.handle_exit = handle  # type: ignore[method-assign]  # read when uvicorn runs


def uvicorn_options(settings: Settings) -> dict[str, Any]:
    """How uvicorn serves kb-qa: forwarded headers believed only from configured proxies,
    and limits for slow and oversized clients (:func:`limited_protocol`).

    uvicorn's default believes X-Forwarded-For from loopback, so anything on the machine (or
    a misconfigured proxy) could pick a new client address per request and never be limited.
    """
    allowed = ",".join(settings.forwarded_allow_ips)
    return {
        "proxy_headers": bool(allowed),
        "forwarded_allow_ips": allowed,
        "http": limited_protocol(settings),
        "h11_max_incomplete_event_size": settings.max_header_bytes,
        "limit_concurrency": settings.max_connections or None,
        # uvicorn waits for every open response by default: a slow model's answers kept a
        # stopping server alive past its grace period, until it was killed.
        # Answers end with a word at shutdown_timeout (kb_qa.serve.stopping); uvicorn's
        # cancelling is the backstop, a second later.
        "timeout_graceful_shutdown": (
            settings.shutdown_timeout + 1 if settings.shutdown_timeout else None
        ),
        "access_log": settings.access_log,
    }


def limited_protocol(settings: Settings) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol with time limits and a clear 431 for oversized headers.

    uvicorn never times out a request that is still arriving: a client that sends its
    headers (or body) a byte at a time, or nothing at all, holds a connection and a file
    descriptor forever (slowloris). Here the request line and headers must arrive within
    ``header_timeout`` seconds of the connection, or of the first byte of the next request
    on a kept-alive one, and the body within ``body_timeout`` of the headers; otherwise the
    connection is closed. h11 (not httptools, which has no size limit) refuses headers over
    ``max_header_bytes``; a connection beyond ``max_connections`` is answered 503 and closed
    at once, before it is read.
    """
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    header_timeout, body_timeout = settings.header_timeout, settings.body_timeout
    max_connections, max_header_bytes = settings.max_connections, settings.max_header_bytes

    class LimitedH11Protocol(H11Protocol):
        _timer: asyncio.TimerHandle | None = None
        _waiting_for: Any = None  # the h11 state the timer is armed for

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if max_connections and len(self.connections) > max_connections:
                log.warning("refused a connection: %d are open already", max_connections)
                transport.write(_raw_response(503, "Too many connections; try again shortly."))
                transport.close()
                return
            self._follow()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._follow()

        def handle_events(self) -> None:
            # Each request's head, when h11 is about to parse it: the one that just
            # arrived and the next one a client pipelined behind it alike.
            if self.conn.their_state is h11.IDLE and self._head_too_large():
                self._refuse_head()
                return
            super().handle_events()

        def _head_too_large(self) -> bool:
            """h11 measures a head only while it is incomplete: one that arrives whole in
            a read or two is parsed whatever its size. Measured here before it is parsed
            (ended by a blank line, CRLF or, as h11 also takes, a bare LF)."""
            head = bytes(self.conn.trailing_data[0][: max_header_bytes + 4])
            ends = [
                i + n for i, n in ((head.find(b"\r\n\r\n"), 4), (head.find(b"\n\n"), 2)) if i >= 0
            ]
            return (min(ends) if ends else len(head)) > max_header_bytes

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def send_400_response(self, msg: str) -> None:
            # Only a head that is not complete yet stays in h11's buffer (body bytes are
            # handed on as they come): over the limit, it is the size that was refused.
            if len(self.conn.trailing_data[0]) <= max_header_bytes:
                super().send_400_response(msg)
                return
            self._refuse_head()

        def _refuse_head(self) -> None:
            self.transport.write(
                _raw_response(
                    431,
                    f"The request line and headers are larger than {max_header_bytes:,} "
                    "bytes (max_header_bytes).",
                )
            )
            self.transport.close()

        def _follow(self) -> None:
            """Arm the timer for what the connection now waits for from the client."""
            state = self.conn.their_state
            if self.transport.is_closing() or state not in (h11.IDLE, h11.SEND_BODY):
                self._disarm()
            elif state is not self._waiting_for:
                self._disarm()
                seconds = header_timeout if state is h11.IDLE else body_timeout
                if seconds > 0:
                    self._waiting_for = state
                    self._timer = self.loop.call_later(seconds, self._expired)

        def _disarm(self) -> None:
            if self._timer is not None:
                self._timer.cancel()
            self._timer, self._waiting_for = None, None

        def _expired(self) -> None:
            what = "headers" if self._waiting_for is h11.IDLE else "body"
            self._timer, self._waiting_for = None, None
            if not self.transport.is_closing():
                log.info("closed a connection whose request %s did not arrive in time", what)
                self.transport.close()

    return LimitedH11Protocol


def _raw_response(status: int, message: str) -> bytes:
    """A whole HTTP/1.1 JSON error response that closes the connection."""
    body = json.dumps({"error": message}).encode()
    head = (
        f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode() + body


class PortInUse(OSError):
    """The port asked for is taken by another process."""

    def __init__(self, host: str, port: int) -> None:
        super().__init__(errno.EADDRINUSE, f"{host}:{port} is already in use")
        self.host, self.port = host, port


@dataclass
class BackgroundServer:
    """A uvicorn server running the kb-qa app on a loopback port in a daemon thread, with the
    index brought up to date in another (``first``)."""

    server: Any
    thread: threading.Thread
    url: str
    kb: KnowledgeBase
    first: FirstIndex  # the index run made at start: its report once ``first.done``
    indexer: threading.Thread  # the thread of that run
    closed: bool = False

    @classmethod
    def start(
        cls,
        vault: Path,
        host: str = "127.0.0.1",
        port: int = 0,
        progress: Callable[[int, int], None] | None = None,
        wait: float | None = None,
        ended: Callable[[BackgroundServer], None] | None = None,
        **settings: Any,
    ) -> BackgroundServer:
        """Serve ``vault`` at once and bring its index up to date in a thread; returns when
        the run has ended or, once the pages are read and rendered, after ``wait`` seconds
        (None: when it ended). Meanwhile the API answers from what the index held before,
        or says how far the run is (``kb_qa.serve.first_index``); ``ended`` is called from
        the run's thread when it is over.

        ``port`` 0 takes a free port; a given port that is taken raises :class:`PortInUse`
        before anything is indexed.
        """
        import uvicorn

        from kb_qa.kb.knowledge_base import KnowledgeBase
        from kb_qa.serve.app import create_app

        check_port(host, port)
        kb = KnowledgeBase(vault, **settings)
        first = FirstIndex(had_pages=serves_meanwhile(kb))  # an index rebuilt waits for it
        port = port or free_port(host)
        config = uvicorn.Config(
            create_app(kb, first=first),
            host=host,
            port=port,
            log_level="warning",
            lifespan="on",
            **uvicorn_options(kb.settings),
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, name="kb-qa-api", daemon=True)
        thread.start()
        deadline = time.monotonic() + 30
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                server.should_exit = True
                kb.close()
                if port_in_use(host, port):  # taken between the check and uvicorn's bind
                    raise PortInUse(host, port)
                raise RuntimeError(f"the kb-qa API did not start on {host}:{port}")
            time.sleep(0.02)
        url = f"http://{host}:{port}"
        indexer = threading.Thread(
            target=first_index.run,
            args=(kb, first, progress, ended and (lambda _: ended(running))),
            name="kb-qa-first-index",
            daemon=True,
        )
        running = cls(server, thread, url, kb, first, indexer)
        indexer.start()
        atexit.register(running.stop)  # a process that exits without stop() must not abort
        try:
            # A site's render runs its hooks in this process: done before returning.
            first.embedding.wait()
            first.done.wait(wait)
        except BaseException:  # Ctrl-C while waiting
            running.stop()
            raise
        return running

    def refresh(self, progress: Callable[[int, int], None] | None = None) -> IndexReport | None:
        """Bring the index up to date now (an author saved an edit), or when the first run
        is still going, once more after it (None). Meanwhile answers open with a note
        that the docs are being updated (``FirstIndex.refreshing``)."""
        with self.first.lock:
            if not self.first.done.is_set():
                self.first.again = True
                return None
        self.first.refreshing = True
        try:
            report = self.kb.index(progress=progress)
        finally:
            self.first.refreshing = False
        with self.first.lock:  # a first run that failed is over once a later one works
            if self.first.error:
                self.first.failure = None
                self.first.finish(report)
        return report

    def stop(self) -> None:
        """Ask uvicorn to exit and wait for it, stop the first index run if it is still
        going (after the batch it embeds: exiting under it aborts in ONNX Runtime), and
        close the index."""
        atexit.unregister(self.stop)
        self.first.cancelled.set()
        stop_answers(self.server)
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.indexer.join(timeout=STOP_SECONDS)
        if not self.indexer.is_alive() and not self.closed:
            self.closed = True
            self.kb.close()
