"""Wall time of the short commands people type: `kb-qa search` and a no-change `kb-qa index`.

    python bench/cli_speed.py [--vault sample_site] [--runs 7] [--index-dir DIR] [--ask]
    python bench/cli_speed.py --stop     # SIGTERM to exit of an idle `kb-qa serve`

Indexes the vault once (so every later run finds nothing to do), then runs each command
``runs`` times as a new process, the way a shell does, and prints the median and best wall
time and the largest peak RSS, with the load average. ``--ask`` adds `kb-qa ask`;
``--index-dir`` reads an index built elsewhere (of a big notes vault, say). Run it on an
idle machine; goals: search < 0.4 s, no-change index < 0.5 s. The commands run with Python's bytecode cache on, as an installed kb-qa
does (pip compiles it at install): with PYTHONDONTWRITEBYTECODE set, as on some CI
machines, every run compiles kb-qa's ~90 modules again (+0.05-0.1 s). ``--stop`` times
how long an idle `kb-qa serve` (a model configured, so litellm is loaded; one search made)
takes to exit after SIGTERM: the part of a stop that comes after the answers' grace
(`shutdown_timeout`), to keep under a supervisor's grace (Docker's 10 s).
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent


ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def wall(args: list[str]) -> tuple[float, float]:
    """Wall time (s) and peak RSS (MB) of one run of ``args``."""
    started = time.perf_counter()
    child = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    _pid, status, usage = os.wait4(child.pid, 0)
    if status:
        raise SystemExit(f"{' '.join(args)} failed ({status})")
    return time.perf_counter() - started, usage.ru_maxrss / 1024


def stop_time(cli: list[str], vault: list[str]) -> float:
    """Seconds from SIGTERM to the exit of an idle `kb-qa serve` that has answered a search."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = ["--model", "openai/none", "--api-base", "http://127.0.0.1:9/v1"]  # never called
    serve = [*cli, "serve", *vault, "--port", str(port), *model]
    child = subprocess.Popen(serve, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/api/ready", timeout=2).status_code == 200:
                break
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    httpx.get(url + "/api/search", params={"q": "how do retries back off"}, timeout=30)
    started = time.perf_counter()
    child.send_signal(signal.SIGTERM)
    if child.wait(60):
        raise SystemExit(f"kb-qa serve exited {child.returncode} on SIGTERM")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--vault", type=Path, default=ROOT / "sample_site")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--index-dir", type=Path, default=None)
    parser.add_argument("--ask", action="store_true", help="time `kb-qa ask` too")
    parser.add_argument("--stop", action="store_true", help="time an idle serve's SIGTERM")
    args = parser.parse_args()
    cli = [sys.executable, "-m", "kb_qa.cli"]
    where = ["--index-dir", str(args.index_dir)] if args.index_dir else []
    started = time.perf_counter()
    subprocess.run(
        [*cli, "index", str(args.vault), *where], check=True, capture_output=True, env=ENV
    )
    print(f"first kb-qa index (brings the index up to date) {time.perf_counter() - started:.2f} s")
    vault = ["--vault", str(args.vault), *where]
    commands = {
        "kb-qa search": [*cli, "search", "how do retries back off", *vault],
        "kb-qa index (no change)": [*cli, "index", str(args.vault), *where],
        "python -c pass (the interpreter alone)": [sys.executable, "-c", "pass"],
    }
    if args.stop:
        times = sorted(stop_time(cli, [str(args.vault), *where]) for _ in range(args.runs))
        print(
            f"kb-qa serve, SIGTERM to exit: median {statistics.median(times):.2f} s  "
            f"worst {times[-1]:.2f} s ({args.runs} runs); load average {os.getloadavg()[0]:.1f}"
        )
        return
    if args.ask:
        commands["kb-qa ask (extractive)"] = [*cli, "ask", "how do retries back off", *vault]
    for name, command in commands.items():
        runs = [wall(command) for _ in range(args.runs)]
        times = sorted(t for t, _ in runs)
        print(
            f"{name:<40} median {statistics.median(times):.2f} s  best {times[0]:.2f} s  "
            f"peak RSS {max(m for _, m in runs):.0f} MB ({args.runs} runs)",
            flush=True,
        )
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
