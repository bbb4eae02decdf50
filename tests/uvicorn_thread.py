"""A real uvicorn server on a free loopback port, in a background thread, for tests and benches.

with UvicornThread(create_app(kb)) as server:
    httpx.get(server.url + "/api/health")
"""

from __future__ import annotations

import socket
import threading
import time
from types import TracebackType
from typing import Any

import uvicorn

from kb_qa.kb.knowledge_base import KnowledgeBase


class UvicornThread:
    """Serve an ASGI app on 127.0.0.1 until the ``with`` block ends."""

    def __init__(self, app: Any, **config: Any) -> None:
        options = {"log_level": "warning", "lifespan": "on", "timeout_graceful_shutdown": 2}
        self.server = uvicorn.Server(uvicorn.Config(app, **(options | config)))
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        self._thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self._sock]}, name="uvicorn", daemon=True
        )

    def __enter__(self) -> UvicornThread:
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.server.should_exit = True
        self._thread.join(10)
        self._sock.close()


def serve_kb(kb: KnowledgeBase, **settings: Any) -> UvicornThread:
    """kb-qa's app for ``kb`` with ``settings`` changed, under the uvicorn limits
    `kb-qa serve` applies (``kb_qa.serve.serving.uvicorn_options``)."""
    from kb_qa.serve.app import create_app
    from kb_qa.serve.serving import uvicorn_options

    merged = kb.settings.replace(**settings)
    return UvicornThread(create_app(kb, merged), **uvicorn_options(merged))
