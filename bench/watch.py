"""Live-index speed: restart of `kb-qa serve --watch`, edit -> searchable latency, idle CPU.

    python bench/watch.py [--corpus uv] [--edits 30]

Runs the real server in a subprocess on a copy of a corpus. Each edit appends a unique
word to a file the way editors save (temp file + rename) and polls /api/search until
that word is found. Prints p50/p95 latency (target p95 < 1 s), restart-to-ready time on
an unchanged vault (target < 3 s, 0 chunks embedded) and the watcher's CPU use at idle.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpora import WORK, corpus_copy

from kb_qa.serving import free_port


def start(vault: Path, index: Path, port: int) -> tuple[subprocess.Popen[str], float, str]:
    t = time.perf_counter()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kb_qa.cli",
            "serve",
            str(vault),
            "--watch",
            "--port",
            str(port),
            "--index-dir",
            str(index),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "KBQA_RATE_LIMIT": "0"},  # the poll loop would trip the limiter
    )
    url = f"http://127.0.0.1:{port}/api/health"
    while True:
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            raise SystemExit(proc.stdout.read() if proc.stdout else "server died")
        time.sleep(0.05)
    return proc, time.perf_counter() - t, ""


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def stop(proc: subprocess.Popen[str]) -> str:
    proc.terminate()
    out, _ = proc.communicate(timeout=30)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", default="uv")
    parser.add_argument("--edits", type=int, default=30)
    args = parser.parse_args()
    vault = corpus_copy(args.corpus)
    index = WORK / f"{args.corpus}-watch-index"
    port = free_port()

    proc, first, _ = start(vault, index, port)  # indexes if needed
    stop(proc)
    proc, ready, _ = start(vault, index, port)
    base = f"http://127.0.0.1:{port}"
    files = sorted(vault.rglob("*.md"))
    files = [f for f in files if ".kb-qa" not in f.parts]
    rng = random.Random(7)
    latencies = []
    originals: dict[Path, str] = {}
    try:
        cpu0 = cpu_seconds(proc.pid)
        time.sleep(10)
        idle = (cpu_seconds(proc.pid) - cpu0) / 10
        for n in range(args.edits):
            path = rng.choice(files)
            originals.setdefault(path, path.read_text(encoding="utf-8"))
            word = f"zebraquartz{n}x{rng.randrange(10**6)}"
            text = path.read_text(encoding="utf-8") + f"\n\nEdited note: {word}.\n"
            tmp = path.with_name(f".{path.name}.swp")
            tmp.write_text(text, encoding="utf-8")
            t = time.perf_counter()
            os.replace(tmp, path)
            while True:
                hits = httpx.get(
                    f"{base}/api/search", params={"q": word, "k": 3}, timeout=10
                ).json()
                if any(word in h["text"] for h in hits["hits"]):
                    break
                if time.perf_counter() - t > 30:
                    raise SystemExit(f"edit {n} not searchable after 30 s")
                time.sleep(0.01)
            latencies.append(time.perf_counter() - t)
            time.sleep(0.2)
        health = httpx.get(f"{base}/api/health", timeout=5).json()
    finally:
        log = stop(proc)
        for path, text in originals.items():
            path.write_text(text, encoding="utf-8")
    restart_line = next((ln for ln in log.splitlines() if "Indexed" in ln), "")
    embedded = re.search(r"(\d+) chunks embedded", restart_line)
    latencies.sort()
    p50 = latencies[len(latencies) // 2]
    p95 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.95))]
    print(f"corpus {args.corpus}: {len(files)} files")
    print(f"first start (may index): {first:.2f} s")
    print(
        f"restart on unchanged vault: ready in {ready:.2f} s, "
        f"{embedded.group(1) if embedded else '?'} chunks re-embedded"
    )
    print(
        f"edit -> searchable over {len(latencies)} edits: p50 {p50 * 1000:.0f} ms, "
        f"p95 {p95 * 1000:.0f} ms, max {latencies[-1] * 1000:.0f} ms"
    )
    print(f"idle watcher CPU: {idle * 100:.2f}% of one core")
    print(f"freshness after edits: {health.get('freshness')}")


if __name__ == "__main__":
    main()
