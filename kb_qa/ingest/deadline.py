"""A time limit on parsing untrusted text, in the thread that parses it.

Some inputs make a parser slow with the square of their size: Python-Markdown's link
patterns scan from every ``[`` to the end of its paragraph, the standard library's HTML
parser from every ``<a `` (10 KB of ``[`` took 11 s, 300 KB over 300 s). Such a file must not
stall an index run, nor keep the server from starting, so every parse of a file runs
under ``deadline``: when the thread has used ``seconds`` of CPU time (or five times that
of wall time, for a thread starved of the GIL), ``ParseTimeout`` is raised in it, between
two Python instructions, and the caller records the file as failed or falls back to
something smaller.

The exception is delivered with ``PyThreadState_SetAsyncExc`` (what a debugger uses to
interrupt a thread): threads cannot be killed in Python, and a worker process per file
would cost more than the parse. Parsers are pure Python here, so the exception arrives
within milliseconds; whatever state it interrupts is the parser's own, reset before each
use (``Markdown.reset``).
"""

from __future__ import annotations

import contextlib
import ctypes
import threading
import time
from collections.abc import Callable, Iterator

from kb_qa.errors import KbQaError

# A thread that gets no CPU (other threads hold the GIL) is stopped after this many times
# its CPU budget of wall time.
WALL_FACTOR = 5.0


class ParseTimeout(KbQaError):
    """Parsing one file took longer than the ``parse_timeout`` setting allows."""


class _Expired(BaseException):
    """Raised asynchronously in the parsing thread; one subclass per ``deadline`` so nested
    limits tell theirs apart. A BaseException, so ``except Exception`` in the parser's own
    code does not swallow it."""


def _raise_in(thread_id: int, exc: type[BaseException] | None) -> None:
    """Raise ``exc`` in the thread at its next instruction (``None``: clear a pending one)."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread_id), ctypes.py_object(exc) if exc is not None else None
    )


def _cpu_clock(thread_id: int) -> Callable[[], float]:
    """Seconds of CPU the thread has used, or wall seconds where that cannot be read."""
    try:
        clock = time.pthread_getcpuclockid(thread_id)
        time.clock_gettime(clock)
    except (AttributeError, OSError):
        return time.monotonic
    return lambda: time.clock_gettime(clock)


class _Limit:
    """One ``deadline`` being watched: its thread, its exception and its clocks."""

    def __init__(self, seconds: float, expired: type[BaseException]) -> None:
        self.target = threading.get_ident()
        self.expired = expired
        self.seconds = seconds
        self.cpu = _cpu_clock(self.target)
        self.cpu_start, self.wall_start = self.cpu(), time.monotonic()
        self.fired = False

    def over(self) -> bool:
        used = self.cpu() - self.cpu_start
        return used >= self.seconds or time.monotonic() - self.wall_start >= (
            self.seconds * WALL_FACTOR
        )


# One watchdog thread for every deadline of the process: a thread started per parse cost
# ~20% of a big vault's chunking. The condition's lock makes raising in a thread and that
# thread's leaving its deadline one or the other, never both.
_watched: set[_Limit] = set()
_changed = threading.Condition()
_watchdog: threading.Thread | None = None


def _watch() -> None:
    while True:
        with _changed:
            while not _watched:
                _changed.wait()
            step = min(min(0.05, limit.seconds / 10) for limit in _watched)
            _changed.wait(step)
            for limit in list(_watched):
                if not limit.fired and limit.over():
                    limit.fired = True
                    _raise_in(limit.target, limit.expired)


@contextlib.contextmanager
def deadline(seconds: float, what: str) -> Iterator[None]:
    """Run the ``with`` body in this thread for at most ``seconds`` of CPU time, else raise
    ``ParseTimeout`` naming ``what`` (``seconds`` <= 0: no limit)."""
    global _watchdog
    if seconds <= 0:
        yield
        return
    expired: type[_Expired] = type("Expired", (_Expired,), {})
    limit = _Limit(seconds, expired)
    with _changed:
        if _watchdog is None or not _watchdog.is_alive():
            _watchdog = threading.Thread(target=_watch, name="kbqa-parse-deadline", daemon=True)
            _watchdog.start()
        _watched.add(limit)
        _changed.notify()
    try:
        try:
            yield
        finally:
            with _changed:
                _watched.discard(limit)
                if limit.fired:
                    _raise_in(limit.target, None)  # finished just in time: drop the pending one
    except expired:
        with _changed:  # the exception may have arrived before the cleanup above ran
            _watched.discard(limit)
        raise ParseTimeout(
            f"{what} took longer than {seconds:g} s (the parse_timeout setting, KBQA_PARSE_TIMEOUT)"
        ) from None
