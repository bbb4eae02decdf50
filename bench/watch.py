"""Live-index speed: restart of `kb-qa serve --watch`, edit -> searchable latency, idle CPU.

    python bench/watch.py [--corpus uv] [--edits 30]

Runs the real server in a subprocess on a copy of a corpus. Each edit appends a unique
word to a file the way editors save (temp file + rename) and polls /api/search, filtered
to that page, until the word is found (a made-up word alone does not rank a chunk in a
corpus's top ten: the filter makes the poll measure freshness, not ranking). Meanwhile
``--clients`` readers poll /api/search with real questions. Prints p50/p95 latency (target
p95 < 1 s), every non-200 answer and timeout the readers and the poll saw (target 0: it
exits 1 on any), restart-to-ready time on an unchanged vault (target < 3 s, 0 chunks
embedded) and the watcher's CPU use at idle.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpora import QUESTIONS, WORK, corpus_copy

from kb_qa.serve.serving import free_port


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
            health = httpx.get(url, timeout=1)
            # Served at once; caught up when its first index run (beside it) has ended.
            if health.status_code == 200 and (health.json()["first_index"] or {}).get("done", True):
                break
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            raise SystemExit(proc.stdout.read() if proc.stdout else "server died")
        time.sleep(0.05)
    return proc, time.perf_counter() - t, ""


def poll(base: str, params: dict[str, str | int], outcomes: Counter[str]) -> list[dict]:
    """One /api/search; its outcome counted ("200", another status, or "timeout")."""
    try:
        response = httpx.get(f"{base}/api/search", params=params, timeout=10)
    except httpx.TimeoutException:
        outcomes["timeout"] += 1
        return []
    outcomes[str(response.status_code)] += 1
    return response.json()["hits"] if response.status_code == 200 else []


def read(base: str, corpus: str, seed: int, done: threading.Event, outcomes: Counter[str]) -> None:
    """A reader polling the corpus's own questions while the watcher writes."""
    path = QUESTIONS / f"{corpus}.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    questions = [json.loads(line)["question"] for line in lines] or ["how do I install it"]
    rng = random.Random(seed)
    while not done.is_set():
        poll(base, {"q": rng.choice(questions), "k": 10}, outcomes)


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
    parser.add_argument("--clients", type=int, default=4)
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
        stop_readers = threading.Event()
        outcomes: Counter[str] = Counter()
        readers = [
            threading.Thread(target=read, args=(base, args.corpus, i, stop_readers, outcomes))
            for i in range(args.clients)
        ]
        for reader in readers:
            reader.start()
        for n in range(args.edits):
            path = rng.choice(files)
            originals.setdefault(path, path.read_text(encoding="utf-8"))
            word = f"zebraquartz{n}x{rng.randrange(10**6)}"
            text = path.read_text(encoding="utf-8") + f"\n\nEdited note: {word}.\n"
            tmp = path.with_name(f".{path.name}.swp")
            tmp.write_text(text, encoding="utf-8")
            page = path.relative_to(vault).as_posix()
            t = time.perf_counter()
            os.replace(tmp, path)
            while True:
                hits = poll(base, {"q": word, "k": 3, "include": page}, outcomes)
                if any(word in h["text"] for h in hits):
                    break
                if time.perf_counter() - t > 30:
                    raise SystemExit(f"edit {n} not searchable after 30 s")
                time.sleep(0.01)
            latencies.append(time.perf_counter() - t)
            time.sleep(0.2)
        stop_readers.set()
        for reader in readers:
            reader.join()
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
    failed = sum(v for k, v in outcomes.items() if k != "200")
    print(
        f"searches while writing ({args.clients} readers + the poll): "
        f"{outcomes['200']} answered 200, {failed} failed {dict(outcomes)}; "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    if failed:
        raise SystemExit(f"{failed} searches failed or timed out while the watcher wrote")


if __name__ == "__main__":
    main()
