"""A server that runs for days: what requests, index runs and readers who leave must not leave
behind (open files, threads, connections), and how it stops with answers still streaming."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from api_helpers import indexed_sample

from kb_qa.kb.knowledge_base import KnowledgeBase

QUESTION = "How many times is a failing job attempted by default?"


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    kb = indexed_sample(tmp_path_factory.mktemp("long"))
    yield kb
    kb.close()


def open_files(name: str) -> int:
    """How many of this process's file descriptors are open on a file called ``name``."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += Path(os.readlink(f"/proc/self/fd/{fd}")).name == name
        except OSError:  # closed since it was listed
            pass
    return count


def test_threads_that_end_leave_no_manifest_connection_open(kb: KnowledgeBase) -> None:
    """The server's worker threads end after 10 s idle and new ones start with the next
    burst of readers; each thread opened its own manifest connection and none was closed
    until the server stopped: two more open files per thread, for days."""
    kb.search(QUESTION, 3)  # this thread's own connection
    for _ in range(10):  # ten bursts of four searches, each on threads that then end
        burst = [threading.Thread(target=kb.search, args=(QUESTION, 3)) for _ in range(4)]
        for thread in burst:
            thread.start()
        for thread in burst:
            thread.join(30)
    # This thread's and at most the last burst's (closed when the next thread needs one),
    # and up to a burst's more that SQLite keeps to reuse (it defers closing a file while
    # another connection holds a lock on it): 41 when none was closed.
    assert open_files("manifest.sqlite3") <= 10
