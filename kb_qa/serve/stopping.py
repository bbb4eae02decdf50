"""A server that is stopping: answers still streaming get ``shutdown_timeout`` seconds to
end, then end with a word to the reader instead of being cancelled.

uvicorn's graceful shutdown waits for open responses and, at its timeout, cancels them: the
reader's stream broke off without an ``error`` event, the log got a 50-line traceback for
a stop that was asked for, and the question log blamed the reader ("disconnected").
``Stopping.begin`` is called as the stop begins (from uvicorn's signal handler, or the
thread that stops an in-process server); ``Stopping.cut`` ends an answer at its deadline
with an ``error`` event of code ``stopping``. uvicorn's own timeout is set a second later
(``serving.uvicorn_options``), a backstop only.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator
from typing import Any

from kb_qa.answer.events import Error, Event

STOPPED = "The server is restarting and stopped this answer. Ask again in a moment."


class Stopping:
    """Whether the server is stopping, and since when."""

    def __init__(self, grace: float) -> None:
        self.grace = grace  # seconds an answer gets to end; 0: as long as it takes
        self.since: float | None = None
        self._event = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        """The loop the answers stream on (the app's lifespan calls it)."""
        self._loop = loop

    def begin(self) -> None:
        """The stop has begun. Safe from a signal handler and from another thread."""
        if self.since is None:
            self.since = time.monotonic()
        if self._loop is not None and not self._loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                self._loop.call_soon_threadsafe(self._event.set)

    def _left(self) -> float | None:
        """Seconds until answers are cut (None: never)."""
        if not self.grace or self.since is None:
            return None
        return max(0.0, self.since + self.grace - time.monotonic())

    async def cut(self, events: AsyncGenerator[Event, None]) -> AsyncGenerator[Event, None]:
        """``events``, ended by an ``error`` event (code ``stopping``) once the server has
        been stopping for ``grace`` seconds."""
        stop: asyncio.Future[Any] | None = None
        step: asyncio.Future[Event] | None = None
        try:
            while True:
                step = asyncio.ensure_future(events.__anext__())
                if not self._event.is_set():
                    stop = stop or asyncio.ensure_future(self._event.wait())
                    await asyncio.wait({step, stop}, return_when=asyncio.FIRST_COMPLETED)
                if not step.done():  # stopping: the answer's grace
                    await asyncio.wait({step}, timeout=self._left())
                if not step.done():
                    yield Error(STOPPED, "stopping")
                    return
                try:
                    event = step.result()
                except StopAsyncIteration:
                    return
                step = None
                yield event
        finally:
            await _cancelled(step, stop)
            await events.aclose()


async def _cancelled(*pending: asyncio.Future[Any] | None) -> None:
    """Each of ``pending`` that is not done, cancelled and waited for; one that is done, its
    outcome read: a reader that closed the stream right after ``done`` left the step that
    had found the answer's end (StopAsyncIteration) unread, and asyncio logged an ERROR
    "Task exception was never retrieved" for most such answers."""
    for future in pending:
        if future is None:
            continue
        if future.done():
            if not future.cancelled():
                future.exception()
            continue
        future.cancel()
        with contextlib.suppress(BaseException):
            await future


PING_SECONDS = 15.0  # the longest an answer's stream stays silent (a model still thinking)


async def pinged(
    events: AsyncGenerator[Event, None], every: float | None = None
) -> AsyncGenerator[Event | None, None]:
    """``events``, with ``None`` after each ``every`` seconds without one: where a stream
    sends a comment, so that it is never silent for long. A model that thinks for 60 s
    (``llm_timeout``) left the connection idle that long: a proxy's idle limit (nginx's
    proxy_read_timeout, 60 s) could cut it, and a reader's browser cannot tell a slow model
    from a connection that hangs."""
    every = PING_SECONDS if every is None else every
    step: asyncio.Future[Event] | None = None
    try:
        while True:
            step = step or asyncio.ensure_future(events.__anext__())
            done, _ = await asyncio.wait({step}, timeout=every)
            if not done:
                yield None
                continue
            try:
                event = step.result()
            except StopAsyncIteration:
                return
            step = None
            yield event
    finally:
        await _cancelled(step)
