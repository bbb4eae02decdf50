"""HTTP API speed: time to the first SSE events, /api/search throughput, server memory.

    python bench/api.py [VAULT] [--index-dir DIR] [--questions FILE.jsonl] [--n 50] [--rewrite]

Starts the real server (``kb-qa serve`` in a subprocess, rate limit off) over VAULT (default:
a copy of sample_site; it is indexed at startup, the index kept for the next run), with the
test LLM server answering instantly. Prints:
- p50/p95 time from sending POST /api/ask to the first ``status`` event (target p50 < 50 ms)
  and to the first ``delta`` event (target p50 < 150 ms): retrieval and prompt assembly
  included, with the LLM and in extractive mode;
- /api/search throughput (requests/s) and latency with 20 concurrent clients;
- the server's RSS (now and peak).

Questions come from FILE (JSONL with a "question" field; bench/questions/<name>.jsonl is used
when VAULT is a copy of one of those corpora), otherwise from the vault's headings.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from llm_server import LLMServer, Reply  # noqa: E402

from kb_qa.serve.serving import free_port  # noqa: E402

WORK = Path(os.environ.get("KBQA_BENCH_DIR", "/tmp/kbqa-bench"))
SEARCH_CLIENTS = 20
SEARCH_REQUESTS = 600
ANSWER = "The default is five attempts [1]. Delays grow exponentially [2], capped [1, 3]."


def default_vault() -> Path:
    vault = WORK / "sample_site"
    if not vault.exists():
        shutil.copytree(ROOT / "sample_site", vault, ignore=shutil.ignore_patterns(".kb-qa"))
    return vault


def questions_for(vault: Path, path: Path | None, n: int) -> list[str]:
    path = path or ROOT / "bench" / "questions" / f"{vault.name}.jsonl"
    if path.exists():
        lines = path.read_text(encoding="utf-8").splitlines()
        found = [json.loads(line)["question"] for line in lines if line.strip()]
    else:
        found = []
        for md in sorted(vault.rglob("*.md")):
            for line in md.read_text(encoding="utf-8", errors="replace").splitlines():
                if line.startswith("## "):
                    found.append(f"What does the documentation say about {line[3:].strip()}?")
    if not found:
        raise SystemExit(f"no questions for {vault}: pass --questions")
    return [found[i % len(found)] for i in range(n)]


def start_server(
    vault: Path,
    llm_url: str,
    model: str,
    embed_model: str,
    index_dir: Path | None,
    rewrite: bool = False,
) -> tuple[Any, str]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("KBQA_")}
    env |= {
        "KBQA_RATE_LIMIT": "0",
        "KBQA_MODEL": model,
        "KBQA_API_BASE": llm_url if model else "",
        "KBQA_EMBED_MODEL": embed_model,
        "OPENAI_API_KEY": "unused",
        "KBQA_REWRITE_QUERIES": "1" if rewrite else "0",
    }
    log = open(WORK / f"api-server-{port}.log", "w")  # closed in stop_server
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kb_qa.cli",
            "serve",
            str(vault),
            "--port",
            str(port),
            *(["--index-dir", str(index_dir)] if index_dir else []),
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    proc.log = log  # type: ignore[attr-defined]
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 1800  # a cold index of a big corpus takes minutes
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited; see {log.name}")
        try:
            health = httpx.get(url + "/api/health", timeout=1)
            # Served at once; indexed when its first index run (beside it) has ended.
            if health.status_code == 200 and (health.json()["first_index"] or {}).get("done", True):
                return proc, url
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise SystemExit("server did not start")


def stop_server(proc: Any) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
    proc.log.close()


def rss_mb(pid: int) -> tuple[float, float]:
    """(current, peak) resident memory of a process, MB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def first_events(client: httpx.Client, url: str, question: str) -> tuple[float, float]:
    """Milliseconds from sending the request to the first status and the first delta."""
    started = time.perf_counter()
    status = delta = 0.0
    with client.stream("POST", url + "/api/ask", json={"question": question}) as response:
        response.raise_for_status()
        for line in response.iter_lines():
            if not status and line == "event: status":
                status = (time.perf_counter() - started) * 1000
            elif line == "event: delta":
                delta = (time.perf_counter() - started) * 1000
                break
            elif line == "event: error":
                raise SystemExit("the server answered with an error event")
    return status, delta


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def bench_ask(url: str, questions: list[str], label: str) -> None:
    with httpx.Client(timeout=60) as client:
        for q in questions[:3]:  # warm: first-use costs are not what users feel each time
            first_events(client, url, q)
        results = [first_events(client, url, q) for q in questions]
    status = [r[0] for r in results]
    delta = [r[1] for r in results]
    print(
        f"{label:<11} first status p50 {statistics.median(status):6.1f} ms "
        f"(p95 {pct(status, 0.95):6.1f})   first delta p50 {statistics.median(delta):6.1f} ms "
        f"(p95 {pct(delta, 0.95):6.1f})   n={len(questions)}",
        flush=True,
    )


def search_throughput(
    urls: list[str], questions: list[str], clients: int = SEARCH_CLIENTS
) -> tuple[float, list[float]]:
    """(requests/s, latencies in ms) of SEARCH_REQUESTS /api/search requests from
    ``clients`` threads, spread round-robin over ``urls`` (as a load balancer would)."""
    latencies: list[float] = []
    lock = threading.Lock()
    counter = iter(range(SEARCH_REQUESTS))

    def client() -> None:
        with httpx.Client(timeout=60) as http:
            for i in counter:  # shared iterator: SEARCH_REQUESTS in all
                started = time.perf_counter()
                q = questions[i % len(questions)]
                response = http.get(urls[i % len(urls)] + "/api/search", params={"q": q, "k": 10})
                response.raise_for_status()
                with lock:
                    latencies.append((time.perf_counter() - started) * 1000)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return len(latencies) / (time.perf_counter() - started), latencies


def bench_search(url: str, questions: list[str]) -> None:
    rate, latencies = search_throughput([url], questions)
    print(
        f"/api/search {SEARCH_CLIENTS} clients: {rate:6.1f} requests/s, "
        f"latency p50 {statistics.median(latencies):.1f} ms p95 {pct(latencies, 0.95):.1f} ms "
        f"({len(latencies)} requests)",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("vault", nargs="?", type=Path, default=None)
    parser.add_argument("--questions", type=Path, default=None)
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--embed-model", default="minilm")
    parser.add_argument("--index-dir", type=Path, default=None, help="reuse this index")
    parser.add_argument(
        "--rewrite", action="store_true", help="also measure with query rewriting on"
    )
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    vault = (args.vault or default_vault()).resolve()
    questions = questions_for(vault, args.questions, args.n)
    print(f"vault {vault}, embed model {args.embed_model}, {len(questions)} questions")

    with LLMServer(Reply(text=ANSWER, chunk_size=8)) as llm:
        proc, url = start_server(vault, llm.url, "openai/test", args.embed_model, args.index_dir)
        try:
            health = httpx.get(url + "/api/health").json()
            print(f"index: {health['files']} files, {health['chunks']} chunks")
            print(f"server RSS at start {rss_mb(proc.pid)[0]:.0f} MB")
            bench_ask(url, questions, "with LLM")
            print(f"server RSS after answering {rss_mb(proc.pid)[0]:.0f} MB")
            bench_search(url, questions)
            now, peak = rss_mb(proc.pid)
            print(f"server RSS after searching {now:.0f} MB (peak {peak:.0f} MB)")
        finally:
            stop_server(proc)
        if args.rewrite:
            # The test LLM answers the rewrite call with the same canned text: three "queries".
            proc, url = start_server(
                vault, llm.url, "openai/test", args.embed_model, args.index_dir, rewrite=True
            )
            try:
                bench_ask(url, questions, "LLM+rewrite")
            finally:
                stop_server(proc)

    proc, url = start_server(vault, "", "", args.embed_model, args.index_dir)
    try:
        bench_ask(url, questions, "extractive")
        now, peak = rss_mb(proc.pid)
        print(f"server RSS {now:.0f} MB (peak {peak:.0f} MB), extractive mode (no litellm)")
    finally:
        stop_server(proc)


if __name__ == "__main__":
    main()
