"""Run the kb-qa API in a background thread (for ``mkdocs serve`` and tests)."""

from __future__ import annotations

import errno
import logging
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kb_qa.settings import Settings
    from kb_qa.types import IndexReport

log = logging.getLogger(__name__)


LOOPBACK = ("127.0.0.1", "localhost", "::1")


def preview_origins(dev_addr: str) -> tuple[str, ...]:
    """The origins a browser may load a local preview from (``mkdocs serve``, ``zensical
    serve``) at ``dev_addr`` (host:port): as given, and as localhost and 127.0.0.1."""
    host, _, port = dev_addr.rpartition(":")
    hosts = dict.fromkeys([host or "127.0.0.1", "localhost", "127.0.0.1"])
    return tuple(f"http://{h}:{port}" for h in hosts)


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


def uvicorn_options(settings: Settings) -> dict[str, Any]:
    """How uvicorn must treat forwarded headers: believe them only from configured proxies.

    uvicorn's default believes X-Forwarded-For from loopback, so anything on the machine (or
    a misconfigured proxy) could pick a new client address per request and never be limited.
    """
    allowed = ",".join(settings.forwarded_allow_ips)
    return {"proxy_headers": bool(allowed), "forwarded_allow_ips": allowed}


class PortInUse(OSError):
    """The port asked for is taken by another process."""

    def __init__(self, host: str, port: int) -> None:
        super().__init__(errno.EADDRINUSE, f"{host}:{port} is already in use")
        self.host, self.port = host, port


@dataclass
class BackgroundServer:
    """A uvicorn server running the kb-qa app on a loopback port in a daemon thread."""

    server: Any
    thread: threading.Thread
    url: str
    kb: Any
    report: IndexReport  # the index run made at start
    ready_seconds: float = 0.0  # from start() to the API accepting requests

    @classmethod
    def start(
        cls,
        vault: Path,
        host: str = "127.0.0.1",
        port: int = 0,
        progress: Callable[[int, int], None] | None = None,
        **settings: Any,
    ) -> BackgroundServer:
        """Index ``vault`` if needed, then serve it; returns once the server accepts requests.

        ``port`` 0 takes a free port; a given port that is taken raises :class:`PortInUse`
        before anything is indexed.
        """
        import uvicorn

        from kb_qa.kb import KnowledgeBase
        from kb_qa.server import create_app

        if port and port_in_use(host, port):
            raise PortInUse(host, port)
        started = time.perf_counter()
        kb = KnowledgeBase(vault, **settings)
        try:
            report = kb.index(progress=progress)
        except BaseException:
            kb.close()
            raise
        port = port or free_port(host)
        config = uvicorn.Config(
            create_app(kb),
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
        return cls(server, thread, url, kb, report, time.perf_counter() - started)

    def stop(self) -> None:
        """Ask uvicorn to exit and wait for it."""
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.kb.close()
