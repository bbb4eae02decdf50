"""Holding a real index run part-way, as a cold embedding of a big site holds it for minutes."""

from __future__ import annotations

import threading


class Gate:
    """An index run's progress callback that holds the run after its first batch until
    opened, as a cold embedding of a big site holds it for minutes."""

    def __init__(self) -> None:
        self.opened = threading.Event()
        self.holding = threading.Event()
        self.calls: list[tuple[int, int]] = []

    def __call__(self, done: int, total: int) -> None:
        self.calls.append((done, total))
        if done:
            self.holding.set()
            assert self.opened.wait(60), "the test never opened the gate"
