"""Waiting for a real watcher to catch up with a change on disk."""

from __future__ import annotations

import time

from kb_qa.ingest.watch import Watcher


def settle(watcher: Watcher, since: float, timeout: float = 20.0) -> None:
    """Wait until the watcher has seen a change made after ``since`` and indexed it.

    ``wait_idle`` alone means nothing until the event has reached the observer, and on a
    busy machine that can take longer than any fixed sleep (watchdog holds a move's first
    half back while it waits for the second).
    """
    deadline = time.monotonic() + timeout
    while (watcher.freshness().last_change_seen or 0.0) < since:
        assert time.monotonic() < deadline, "the watcher never saw the change"
        time.sleep(0.02)
    assert watcher.wait_idle(timeout=timeout)
