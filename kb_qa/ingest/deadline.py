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


@contextlib.contextmanager
def deadline(seconds: float, what: str) -> Iterator[None]:
    """Run the ``with`` body in this thread for at most ``seconds`` of CPU time, else raise
    ``ParseTimeout`` naming ``what`` (``seconds`` <= 0: no limit)."""
    if seconds <= 0:
        yield
        return
    target = threading.get_ident()
    expired = type("Expired", (_Expired,), {})
    stop = threading.Event()
    lock = threading.Lock()
    fired = False
    cpu = _cpu_clock(target)
    cpu_start, wall_start = cpu(), time.monotonic()

    def watch() -> None:
        nonlocal fired
        step = min(0.05, seconds / 10)
        while not stop.wait(step):
            used = cpu() - cpu_start
            if used >= seconds or time.monotonic() - wall_start >= seconds * WALL_FACTOR:
                with lock:
                    if not stop.is_set():
                        fired = True
                        _raise_in(target, expired)
                return

    watcher = threading.Thread(target=watch, name="kbqa-parse-deadline", daemon=True)
    watcher.start()
    try:
        try:
            yield
        finally:
            with lock:
                stop.set()
                if fired:
                    _raise_in(target, None)  # finished just in time: drop the pending one
    except expired:
        raise ParseTimeout(
            f"{what} took longer than {seconds:g} s (the parse_timeout setting, KBQA_PARSE_TIMEOUT)"
        ) from None
