"""How long each stage of an index run took."""

from __future__ import annotations

import time


class Phases:
    """Records how long each stage of an index run took, into ``IndexReport.phases``."""

    def __init__(self, into: dict[str, float], started: float) -> None:
        self.into, self.last = into, started

    def done(self, name: str) -> None:
        now = time.perf_counter()
        self.into[name] = round(now - self.last, 3)
        self.last = now
