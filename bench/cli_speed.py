"""Wall time of the short commands people type: `kb-qa search` and a no-change `kb-qa index`.

    python bench/cli_speed.py [--vault sample_site] [--runs 7]

Indexes the vault once (so every later run finds nothing to do), then runs each command
``runs`` times as a new process, the way a shell does, and prints the median and best wall
time, with the load average (run it on an idle machine; goals: search < 0.4 s, no-change
index < 0.5 s). The commands run with Python's bytecode cache on, as an installed kb-qa
does (pip compiles it at install): with PYTHONDONTWRITEBYTECODE set, as on some CI
machines, every run compiles kb-qa's ~90 modules again (+0.05-0.1 s).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def wall(args: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(args, check=True, capture_output=True, env=ENV)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--vault", type=Path, default=ROOT / "sample_site")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    cli = [sys.executable, "-m", "kb_qa.cli"]
    subprocess.run([*cli, "index", str(args.vault)], check=True, capture_output=True, env=ENV)
    commands = {
        "kb-qa search": [*cli, "search", "how do retries back off", "--vault", str(args.vault)],
        "kb-qa index (no change)": [*cli, "index", str(args.vault)],
        "python -c pass (the interpreter alone)": [sys.executable, "-c", "pass"],
    }
    for name, command in commands.items():
        times = sorted(wall(command) for _ in range(args.runs))
        print(
            f"{name:<40} median {statistics.median(times):.2f} s  best {times[0]:.2f} s  "
            f"({args.runs} runs)"
        )
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
