"""What one parse time limit costs (kb_qa.ingest.deadline), paid two or three times a file.

    python bench/deadline_cost.py

Prints the microseconds one ``deadline`` around an empty body takes: its watchdog (one
thread for the process since 2026-12-05; before, one started per parse, ~100 µs).
"""

from __future__ import annotations

import argparse
import time

from kb_qa.ingest.deadline import deadline

N = 20_000


def main() -> None:
    started = time.perf_counter()
    for _ in range(N):
        with deadline(5, "nothing"):
            pass
    print(f"{(time.perf_counter() - started) / N * 1e6:.1f} µs per deadline ({N:,} in a row)")


if __name__ == "__main__":
    # No options: --help says what it measures instead of running it.
    argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    ).parse_args()
    main()
