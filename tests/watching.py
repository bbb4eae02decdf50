"""Waiting for a real watcher to catch up with a change on disk."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kb_qa.ingest.watch import Watcher
from kb_qa.kb.knowledge_base import KnowledgeBase

PAGES = {
    "alpha.md": "# Alpha\n\n## Boilers\n\nThe boiler pressure is 3 bar.\n",
    "notes/beta.md": "# Beta\n\n## Gardens\n\nTomatoes need full sun.\n",
}


@pytest.fixture
def watched(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> Iterator[tuple[Path, KnowledgeBase, Watcher]]:
    """A vault of ``PAGES``, its index, and a watcher that has caught up with it."""
    vault = make_vault(dict(PAGES))
    base = kb(vault)
    watcher = Watcher(base, debounce=0.1, retry_delay=0.2).start()
    assert watcher.wait_idle()
    yield vault, base, watcher
    watcher.stop()


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


class Watching:
    """A `kb-qa watch` process writing ``log``, given 60 s from its start."""

    def __init__(self, proc: subprocess.Popen[str], log: Path) -> None:
        self.proc, self.log = proc, log
        self.deadline = time.monotonic() + 60

    def check(self) -> None:
        """Fail, with the log, when the process ended or time is up."""
        assert time.monotonic() < self.deadline and self.proc.poll() is None, self.log.read_text()

    def logged(self, text: str) -> None:
        """Wait until the log holds ``text``."""
        while text not in self.log.read_text():
            self.check()
            time.sleep(0.1)


@contextlib.contextmanager
def watch_process(args: list[str], env: dict[str, str], log: Path) -> Iterator[Watching]:
    """`kb-qa watch ARGS` as a process writing ``log``, once it says it is watching;
    terminated at the end."""
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kb_qa.cli", "watch", *args],
            env=env, stdout=out, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
    watching = Watching(proc, log)
    try:
        watching.logged("watching")
        yield watching
    finally:
        proc.terminate()
        proc.wait(timeout=30)
